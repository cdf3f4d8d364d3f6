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

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _ab  # noqa: E402

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
    a = _ab.parse(__doc__, rounds=5, extra=lambda ap: ap.add_argument(
        "--short", action="store_true", help="only compiled and bare at n = 100, rows in L3"))
    res = _ab.interleave(a, CODE, "short" if a.short else "full")
    _ab.table(res, "us per iteration", width=24, quantiles=(4, 2), digits=3)
    if a.short:
        return
    for tag in res:
        r = [d["python n=100 N=10000"] / d["compiled n=100 N=10000"] for d in res[tag]]
        print(f"{tag} python-loop/compiled per round: " + ", ".join(f"{x:.1f}" for x in r))


if __name__ == "__main__":
    main()
