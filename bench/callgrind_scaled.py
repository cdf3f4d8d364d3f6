"""Instructions per iteration of the scaled sparse iterate, counted by callgrind, in two built
checkouts (a noise-free complement to ``bench/ab_scaled.py`` on a loaded machine).

    python bench/callgrind_scaled.py OLD_TREE NEW_TREE [--iters 20000]

The contenders are ``bench/ab_scaled.py``'s Pegasos runs (``path="scaled"``, CSR with 20
nonzeros per row) at sizes valgrind runs in seconds: k = 1 at 100 and 10^5 features, k = 1
averaged at 10^5 features, k = 64 at 10^5 features. For each tree and case, two processes run
under ``valgrind --tool=callgrind`` (``PYTHONHASHSEED=0``); both build the problem and run
1000 iterations, the second then ``--iters`` more. The difference of the two processes' total
instruction counts divided by ``--iters`` is the cost of one iteration: everything the loop
executes (driver, representation, sampler, schedule, step), nothing of the set-up. Prints the
counts and new/old.
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
sys.path.insert(0, "bench")
from test_pegasos_sparse import _problem
from sqnopt import Solver
n, k, avg, iters = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1", int(sys.argv[4])
X, y = _problem(n, "uniform")
s = Solver.pegasos(1e-4, batch_size=k, average=avg, random_state=0, path="scaled",
                   sampling="uniform")
st = s.init_state(X, y)
assert type(st.loop).__name__ == "ScaledLoop"
st.loop.run(1000, 0)
if iters:
    st.loop.run(iters, 0)
'''

CASES = {"k=1 n=100": (100, 1, False), "k=1 n=1e5": (10**5, 1, False),
         "k=1 n=1e5 averaged": (10**5, 1, True), "k=64 n=1e5": (10**5, 64, False)}


def _count(root: str, n: int, k: int, avg: bool, iters: int) -> int:
    env = dict(os.environ, PYTHONPATH=root, OPENBLAS_NUM_THREADS="1", PYTHONHASHSEED="0")
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                            sys.executable, "-c", CODE, str(n), str(k), str(int(avg)),
                            str(iters)], cwd=root, env=env, capture_output=True, text=True,
                           check=True)
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
    print(f"{'case':22s} {'old':>10s} {'new':>10s} {'new/old':>8s}   instructions per iteration")
    for name, (n, k, avg) in CASES.items():
        per = {}
        for tag, root in roots.items():
            base = _count(root, n, k, avg, 0)
            per[tag] = (_count(root, n, k, avg, a.iters) - base) / a.iters
        print(f"{name:22s} {per['old']:10.1f} {per['new']:10.1f} {per['new'] / per['old']:8.3f}")


if __name__ == "__main__":
    main()
