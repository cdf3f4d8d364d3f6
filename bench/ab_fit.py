"""A/B of whole ``SQNClassifier()`` fits at their defaults between two built checkouts, on the
race's problems, plus one pass of ``F(w)`` (the gather of every row's score) for scale.

    OPENBLAS_NUM_THREADS=1 python bench/ab_fit.py OLD_TREE NEW_TREE [--rounds 5] \
        [--problems a9a:logistic news20:logistic news20:logistic-1e-6 ...]

Each tree must be built in place (``python setup.py build_ext --inplace``); make one for an older
commit with ``git worktree add /tmp/old <rev>``. Per problem (data and ``alpha`` from
``bench/race``, no intercept) one process per tree and round times, in CPU time of the thread
(best of 5 repeats in the process, after one untimed fit): ``objective.value(w)`` at a fixed
``w`` and ``SQNClassifier(loss, alpha, fit_intercept=False).fit`` with everything else at its
default (``tol`` included, so the fit stops where a user's would). The trees alternate over the
rounds. Prints min / median over rounds in ms and new/old of the minima, then per problem the
two trees' iteration counts and the largest relative difference of their coefficients.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _ab  # noqa: E402

CODE = _ab.RACE_PRELUDE + r'''
from sqnopt import Solver, SQNClassifier
from sqnopt.objectives import LogLoss, Softmax

out, info = {"sqnopt": sqnopt.__file__}, {}
for spec in sys.argv[1].split(","):
    name, kind = spec.split(":")
    p = next(load_problems([name], [kind], datasets_dir(), quick=False, skipped=[]))
    obj = Softmax(lam=p.alpha) if p.loss == "softmax" else LogLoss(lam=p.alpha)
    k = Solver(obj, fit_intercept=False).init_state(p.X, p.y).objective
    w = np.random.default_rng(0).normal(size=k.n_params) * 0.1
    out[f"{spec} F(w)"] = best(lambda: k.value(w), 5)
    est = SQNClassifier(loss="logloss" if p.loss == "softmax" else "binary_logistic",
                        alpha=p.alpha, fit_intercept=False, random_state=0)

    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(p.X, p.y)
    fit()
    info[spec] = [int(est.n_iter_), est.coef_.ravel().tolist()]
    out[f"{spec} fit"] = best(fit, 5)
out["info"] = info
print(json.dumps(out))
'''


def main() -> None:
    def extra(ap):  # type: ignore[no-untyped-def]
        ap.add_argument("--problems", nargs="+",
                        default=["a9a:logistic", "w8a:logistic", "mushrooms:logistic",
                                 "dna:softmax", "news20:logistic", "criteo:logistic",
                                 "news20:logistic-1e-6"])
    a = _ab.parse(__doc__, rounds=5, extra=extra)
    _ab.use_shared_datasets()
    res = _ab.interleave(a, CODE, ",".join(a.problems))
    info = {tag: res[tag][0].pop("info") for tag in res}
    for tag in res:
        for d in res[tag][1:]:
            d.pop("info")
    _ab.table(res, "ms, CPU time", width=32, quantiles=(2,), digits=2)
    for spec in a.problems:
        (it_o, c_o), (it_n, c_n) = info["old"][spec], info["new"][spec]
        co, cn = np.asarray(c_o), np.asarray(c_n)
        rel = float(np.max(np.abs(cn - co)) / max(float(np.max(np.abs(co))), 1e-300))
        print(f"{spec:32s} iterations old {it_o} new {it_n}; coefficients differ by at most "
              f"{rel:.2g} of the largest")


if __name__ == "__main__":
    main()
