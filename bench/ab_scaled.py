"""A/B of the scaled sparse iterate's per-iteration cost between two built checkouts.

    python bench/ab_scaled.py OLD_TREE NEW_TREE [--rounds 9]

Each tree must be built in place (``python setup.py build_ext --inplace``); make one for an older
commit with ``git worktree add /tmp/old <rev>`` (or ``git archive``). The contenders are the
Pegasos runs of ``bench/test_pegasos_sparse.py`` (hinge, lam = 1e-4, 1/(lam t), L2 ball, CSR with
20 nonzeros per row, ``path="scaled"``): k = 1 at 100 and 10^6 features (uniform and Zipf
columns), k = 1 averaged at 10^6 features, and k = 64 at 10^6 features (the prefetches within a
batch). Each runs in one process per tree, the trees alternate over the rounds, and each figure
is the minimum over 5 repeats in its process of the thread's CPU time per iteration. Prints
min / lower quartile / median over rounds (ns per iteration) and new/old of the minima, and the
per-round ratios new/old of the k = 1, 10^6-feature case.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _ab  # noqa: E402

CODE = r'''
import json, sys, time
sys.path.insert(0, "bench")
from test_pegasos_sparse import _problem
from sqnopt import Solver
cases = {"k=1 n=100": (100, "uniform", 1, False, 2_000_000),
         "k=1 n=1e6 uniform": (10**6, "uniform", 1, False, 1_000_000),
         "k=1 n=1e6 zipf": (10**6, "zipf", 1, False, 1_000_000),
         "k=1 n=1e6 averaged": (10**6, "uniform", 1, True, 1_000_000),
         "k=64 n=1e6": (10**6, "uniform", 64, False, 20_000)}
runs = {}
for name, (n, cols, k, avg, iters) in cases.items():
    X, y = _problem(n, cols)
    s = Solver.pegasos(1e-4, batch_size=k, average=avg, random_state=0, path="scaled",
                       sampling="uniform")
    st = s.init_state(X, y)
    assert type(st.loop).__name__ == "ScaledLoop"
    st.loop.run(1000, 0)
    runs[name] = (st.loop, iters)
best = {name: float("inf") for name in runs}
for _ in range(5):
    for name, (loop, iters) in runs.items():
        t = time.thread_time()
        loop.run(iters, 0)
        best[name] = min(best[name], (time.thread_time() - t) / iters * 1e9)
import sqnopt
print(json.dumps({"sqnopt": sqnopt.__file__, **best}))
'''


def main() -> None:
    a = _ab.parse(__doc__, rounds=9)
    res = _ab.interleave(a, CODE)
    _ab.table(res, "ns per iteration", width=22, quantiles=(4, 2), digits=1)
    key = "k=1 n=1e6 uniform"
    r = [n[key] / o[key] for o, n in zip(res["old"], res["new"])]
    print(f"new/old per round, {key}: " + ", ".join(f"{x:.3f}" for x in r))


if __name__ == "__main__":
    main()
