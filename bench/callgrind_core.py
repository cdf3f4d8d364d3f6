"""Instructions per iteration of the generic compiled driver, counted by callgrind, in two built
checkouts (a noise-free complement to ``bench/ab_core.py`` on a loaded machine).

    python bench/callgrind_core.py OLD_TREE NEW_TREE [--iters 20000]

The contenders are ``bench/test_core.py``'s compiled runs (paper 003's synthetic SVM, squared
hinge, minibatches of 5, ``Decaying(2e-2, 100)``, the dense iterate) at n = 100 and n = 1000,
and minibatch L-BFGS on the same problem at n = 100 (secant pairs: two gradients per
iteration). For each tree and
case, two processes run under ``valgrind --tool=callgrind`` (``PYTHONHASHSEED=0``); both build
the problem and run 1000 iterations, the second then ``--iters`` more. The difference of the
two processes' total instruction counts divided by ``--iters`` is the cost of one iteration:
everything the loop executes (driver, kernels, sampler, schedule, step), nothing of the set-up.
Prints the counts and new/old.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

CODE = r'''
import sys
from sqnopt import LBFGS, Decaying, Fixed, Identity, Solver, SquaredHinge
from sqnopt.datasets import make_boxes
n, case, iters = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
X, y = make_boxes(10000, n, random_state=0)
curvature = LBFGS() if case == "lbfgs" else Identity()
solver = Solver(SquaredHinge(lam=1e-4), curvature, Fixed(5), Decaying(2e-2, 100), random_state=0,
                path="generic")
state = solver.init_state(X, y)
assert type(state.loop).__name__ == "CompiledLoop"
state.loop.run(1000, 0)
if iters:
    state.loop.run(iters, 0)
'''

CASES = {"sgd n=100": (100, "sgd"), "sgd n=1000": (1000, "sgd"),
         "lbfgs n=100": (100, "lbfgs")}


def _count(root: str, n: int, case: str, iters: int) -> int:
    env = dict(os.environ, PYTHONPATH=root, OPENBLAS_NUM_THREADS="1", PYTHONHASHSEED="0")
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                            sys.executable, "-c", CODE, str(n), case, str(iters)], cwd=root,
                           env=env, capture_output=True, text=True, check=True)
        m = re.search(r"Collected : (\d+)", p.stderr)
        if m is None:
            raise SystemExit(p.stderr[-2000:])
        return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--iters", type=int, default=20000)
    a = ap.parse_args()
    roots = {"old": os.path.abspath(a.old), "new": os.path.abspath(a.new)}
    print(f"{'case':14s} {'old':>10s} {'new':>10s} {'new/old':>8s}   instructions per iteration")
    for name, (n, case) in CASES.items():
        per = {}
        for tag, root in roots.items():
            base = _count(root, n, case, 0)
            per[tag] = (_count(root, n, case, a.iters) - base) / a.iters
        print(f"{name:14s} {per['old']:10.1f} {per['new']:10.1f} {per['new'] / per['old']:8.3f}")


if __name__ == "__main__":
    main()
