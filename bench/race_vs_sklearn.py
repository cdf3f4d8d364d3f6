"""One contender of race records against the fastest scikit-learn solver of the same run: time to
each target relative excess and the ratio, per problem, one column pair per record (repeats of
the same race side by side)::

    python bench/race_vs_sklearn.py bench/results/race_newton/race-*.json \
        [--contender "SQNClassifier()"]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path


def _fmt(t: float) -> str:
    return "-" if not math.isfinite(t) else f"{1e3 * t:.3g} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", nargs="+", type=Path)
    ap.add_argument("--contender", default="SQNClassifier()")
    args = ap.parse_args()
    runs = [json.loads(p.read_text()) for p in args.records]
    targets = runs[0]["config"].get("targets", [1e-2, 1e-4, 1e-6])
    head = ["problem"] + [f"{p.stem}: to {t:g}" for p in args.records for t in targets[1:]]
    print("| " + " | ".join(head) + " |")
    print("|---" * len(head) + "|")
    keys = [p["key"] for p in runs[0]["problems"]]
    for key in keys:
        row = [key]
        for run in runs:
            prob = next(p for p in run["problems"] if p["key"] == key)
            cs = prob["contenders"]
            mine = cs.get(args.contender)
            for j in range(1, len(targets)):
                peers = {n: c["time_to"][j] for n, c in cs.items()
                         if n.startswith("sklearn") and c["time_to"][j] is not None}
                if mine is None or mine["time_to"][j] is None or not peers:
                    row.append("-")
                    continue
                best = min(peers, key=lambda n: peers[n])
                t, tb = float(mine["time_to"][j]), float(peers[best])
                row.append(f"{_fmt(t)} / {_fmt(tb)} ({best[8:]}): **{t / tb:.2f}×**")
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
