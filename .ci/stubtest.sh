#!/usr/bin/env bash
# Check every compiled module's .pyi against the built extension (mypy.stubtest), using the
# installed package. Cython-generated helpers are allow-listed in stubtest-allowlist.txt.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$(mktemp -d)"
printf '[mypy]\nignore_missing_imports = True\n' > stubtest.ini
# Every compiled module needs its .pyi next to it: stubtest itself skips a module without stubs
# when its name is private (_loop, _bfgs, ...), so a missing stub would pass unnoticed.
# (sqnopt._cyutility, Cython's shared utility code, has an empty stub: none of it is our API.)
mods=$(python - <<'PY'
import pathlib, sys, sqnopt
root = pathlib.Path(sqnopt.__file__).parent
mods, missing = [], []
for so in sorted(root.rglob("*.so")) + sorted(root.rglob("*.pyd")):
    base = so.with_suffix("").with_suffix("")
    name = "sqnopt." + ".".join(base.relative_to(root).parts)
    mods.append(name)
    if not base.with_suffix(".pyi").exists():
        missing.append(name)
if missing:
    sys.exit("compiled modules without a .pyi stub: " + ", ".join(missing))
print(" ".join(mods))
PY
)
python -m mypy.stubtest --mypy-config-file stubtest.ini --allowlist "$ROOT/stubtest-allowlist.txt" \
  --ignore-disjoint-bases $mods
