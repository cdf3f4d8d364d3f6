"""Bring the result files already in ``bench/results`` to the form the scripts now write
(``bench/_results.py``): JSON compact with floats at 10 significant digits, paper 003's
per-realization runs as columns, PNGs as palette images. The numbers the docs quote are kept
(10 digits is more than any of them shows); the figures are the same pixels, quantised.

    python bench/trim_results.py [--dry-run]

Prints each file's size before and after.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import dumps, quantize_png, to_columns  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def trim_json(path: Path) -> str:
    obj = json.loads(path.read_text())
    if isinstance(obj, dict) and isinstance(obj.get("runs"), list) and path.name.startswith(
            "paper003_olbfgs_svm"):
        obj["runs_columns"] = to_columns(obj.pop("runs"))
    return dumps(obj)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args()
    total = [0, 0]
    for path in sorted(RESULTS.iterdir()):
        if path.suffix == ".json":
            new = trim_json(path).encode()
        elif path.suffix == ".png":
            new = quantize_png(path.read_bytes())
        else:
            continue
        old = path.stat().st_size
        if len(new) >= old:
            print(f"{path.name:48s} {old / 1e3:8.1f} kB (kept)")
            total[0] += old
            total[1] += old
            continue
        print(f"{path.name:48s} {old / 1e3:8.1f} kB -> {len(new) / 1e3:7.1f} kB")
        total[0] += old
        total[1] += len(new)
        if not args.dry_run:
            path.write_bytes(new)
    print(f"{'total':48s} {total[0] / 1e6:8.2f} MB -> {total[1] / 1e6:6.2f} MB")


if __name__ == "__main__":
    main()
