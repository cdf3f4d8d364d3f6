#!/usr/bin/env bash
# Check every compiled module's .pyi against the built extension (mypy.stubtest), using the
# installed package. Cython-generated helpers are allow-listed in stubtest-allowlist.txt.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$(mktemp -d)"
printf '[mypy]\nignore_missing_imports = True\n' > stubtest.ini
mods=$(python - <<'PY'
import pathlib, sqnopt
root = pathlib.Path(sqnopt.__file__).parent
mods = sorted("sqnopt." + ".".join(p.relative_to(root).with_suffix("").with_suffix("").parts)
              for p in root.rglob("*.so"))
print(" ".join(mods))
PY
)
python -m mypy.stubtest --mypy-config-file stubtest.ini --allowlist "$ROOT/stubtest-allowlist.txt" \
  --ignore-disjoint-bases $mods
