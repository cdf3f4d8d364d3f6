"""A/B of a Pegasos fit's cost on news20 between two built checkouts (before / after a change).

    python bench/ab_pegasos.py OLD_TREE NEW_TREE [--rounds 7]

Each tree must be built in place; make one for an older commit with
``git worktree add /tmp/old <rev>``. The data is the race's news20 hinge problem (loaded by this
checkout's ``bench/race``). In one process per tree, alternating trees over the rounds: the
time of ``Solver.pegasos(lam).init_state(X, y)``, of complete ``fit`` calls of 0, 1 and 10
epochs (``Solver.pegasos(lam, max_epochs=k).fit(X, y)``), and, as a same-process baseline,
``SGDClassifier(loss="hinge", ..., max_iter=10, tol=None)``; each the minimum of 9 repeats in
its process. Prints min / median over rounds (ms) and the 10-epoch ratio to SGDClassifier.
"""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import _ab  # noqa: E402

CODE = r'''
import gc, json, sys, time, warnings
sys.path.insert(0, sys.argv[1])
from race.problems import datasets_dir, load_problems
import sqnopt
from sqnopt import Solver
from sklearn.linear_model import SGDClassifier
p = next(load_problems(["news20"], ["hinge"], datasets_dir(), quick=False, skipped=[]))
X, y, lam = p.X, p.y, p.alpha

def best(f, k=9):
    f()
    b = 1e9
    for _ in range(k):
        gc.collect()
        t = time.perf_counter(); f(); b = min(b, time.perf_counter() - t)
    return b * 1e3

def sgd():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        SGDClassifier(loss="hinge", alpha=lam, learning_rate="optimal", max_iter=10, tol=None,
                      fit_intercept=False, random_state=0).fit(X, y)

out = {"sqnopt": sqnopt.__file__,
       "init_state": best(lambda: Solver.pegasos(lam, random_state=0).init_state(X, y))}
for k in (0, 1, 10):
    out[f"fit {k} epochs"] = best(lambda: Solver.pegasos(lam, max_epochs=k,
                                                         random_state=0).fit(X, y))
out["SGDClassifier 10 epochs"] = best(sgd)
print(json.dumps(out))
'''


def main() -> None:
    a = _ab.parse(__doc__, rounds=7)
    res = _ab.interleave(a, CODE, str(BENCH))
    _ab.table(res, "ms")
    for tag in res:
        r = [d["fit 10 epochs"] / d["SGDClassifier 10 epochs"] for d in res[tag]]
        print(f"{tag}: Pegasos / SGDClassifier, 10 epochs, per round: "
              + ", ".join(f"{x:.3f}" for x in r))


if __name__ == "__main__":
    main()
