"""A/B of the driver's per-iteration cost between two built checkouts (before / after a change).

    python bench/ab_core.py OLD_TREE NEW_TREE [--rounds 5] [--short]

Each tree must be built in place (``python setup.py build_ext --inplace``); make one for an older
commit with ``git worktree add /tmp/old <rev>``. The contenders of ``bench/test_core.py``
(compiled, bare, python loop; n = 100 with the rows in L3 and in L2, n = 1000) run in one process
per tree, the trees alternate over the rounds, and each figure is the minimum of 5 repeats in its
process. Prints min / median over rounds (µs per iteration) and python-loop/compiled per round.
``--short`` times only compiled and bare at n = 100 with the rows in L3 (a round takes seconds, so
20 or more rounds fit where the noise of this VM needs them) and adds the lower quartile.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CODE = r'''
import json, sys
sys.path.insert(0, "bench")
from test_core import ITERS, _per_iter, _runner
out = {}
short = sys.argv[1] == "short"
for n, ns in ((100, 10000),) if short else ((100, 10000), (100, 1000), (1000, 10000)):
    for k in ("compiled", "bare") if short else ("compiled", "bare", "python"):
        if ns == 1000 and k == "python":
            continue
        fn = _runner(n, k, n_samples=ns)
        fn()
        out[f"{k} n={n} N={ns}"] = _per_iter(fn, ITERS[k], repeats=5) * 1e6
print(json.dumps(out))
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--short", action="store_true",
                    help="only compiled and bare at n = 100, rows in L3")
    a = ap.parse_args()
    trees = {"old": os.path.abspath(a.old), "new": os.path.abspath(a.new)}
    res: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for _ in range(a.rounds):
        for tag, root in trees.items():
            env = dict(os.environ, PYTHONPATH=root, OPENBLAS_NUM_THREADS="1")
            p = subprocess.run([sys.executable, "-c", CODE, "short" if a.short else "full"],
                               cwd=root, env=env,
                               capture_output=True, text=True, check=True)
            res[tag].append(json.loads(p.stdout.strip().splitlines()[-1]))
    print(f"{'case':24s} {'old min / q1 / median':>26s} {'new min / q1 / median':>26s}"
          "  (us per iteration)")
    for key in res["old"][0]:
        o = sorted(d[key] for d in res["old"])
        nw = sorted(d[key] for d in res["new"])
        print(f"{key:24s} {o[0]:8.3f} / {o[len(o) // 4]:6.3f} / {o[len(o) // 2]:6.3f} "
              f"{nw[0]:8.3f} / {nw[len(nw) // 4]:6.3f} / {nw[len(nw) // 2]:6.3f}")
    if a.short:
        return
    for tag in trees:
        r = [d["python n=100 N=10000"] / d["compiled n=100 N=10000"] for d in res[tag]]
        print(f"{tag} python-loop/compiled per round: " + ", ".join(f"{x:.1f}" for x in r))


if __name__ == "__main__":
    main()
