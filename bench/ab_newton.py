"""A/B of Newton's method (``curvature="newton"``, the default on few features) between two built
checkouts: the Hessian's formation and factorisation, and whole fits.

    OPENBLAS_NUM_THREADS=1 python bench/ab_newton.py OLD_TREE NEW_TREE [--rounds 5] \
        [--datasets a9a w8a mushrooms dna] [--iters 1 9]

Each tree must be built in place (``python setup.py build_ext --inplace``); make one for an older
commit with ``git worktree add /tmp/old <rev>``. Per race data set (``alpha = 1/N``, logistic, no
intercept; softmax on dna; data from ``bench/race``) one process per tree and round times, in CPU time of the
thread (best of 7 repeats in the process): ``observe_batch`` of the Newton kernel on the whole
data set at a fixed ``w`` (the Hessian formed and factored), one full gradient (a pass, for
scale), and ``SQNClassifier(alpha, fit_intercept=False, tol=None, max_iter=k)`` fits for each
``k`` of ``--iters`` at its defaults (Newton's method on these sets). The trees alternate over the
rounds. Prints min / median over rounds in ms and new/old of the minima, then whether the two
trees' Cholesky factors and fitted coefficients are the same to the bit (SHA-256 of their bytes).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _ab  # noqa: E402

CODE = _ab.RACE_PRELUDE + r'''
import hashlib
from sqnopt import Newton, Solver, SQNClassifier
from sqnopt.objectives import LogLoss, Softmax

def digest(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]

out, bits = {"sqnopt": sqnopt.__file__}, {}
names, iters = sys.argv[1].split(","), [int(k) for k in sys.argv[2].split(",")]
for p in load_problems(names, ["logistic", "softmax"], datasets_dir(), quick=False, skipped=[]):
    X, y = p.X, p.y
    obj = Softmax(lam=p.alpha) if p.loss == "softmax" else LogLoss(lam=p.alpha)
    st = Solver(obj, Newton(), fit_intercept=False).init_state(X, y)
    k, kern = st.objective, st.curvature
    w = np.random.default_rng(0).normal(size=k.n_params) * 0.1
    g = np.zeros(k.n_params)
    allb = np.arange(X.shape[0], dtype=np.intp)
    out[f"{p.dataset} hessian"] = best(lambda: kern.observe_batch(k, w, allb))
    bits[f"{p.dataset} factor"] = digest(kern.get_state()["factor"])
    out[f"{p.dataset} gradient"] = best(lambda: k.full_gradient(w, g))
    for it in iters:
        def fit(it=it):
            est = SQNClassifier(alpha=p.alpha, fit_intercept=False, tol=None, max_iter=it,
                                random_state=0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, y)
            return est
        bits[f"{p.dataset} coef@{it}"] = digest(fit().coef_)
        out[f"{p.dataset} fit max_iter={it}"] = best(fit, 5)
out["bits"] = bits
print(json.dumps(out))
'''


def main() -> None:
    def extra(ap):  # type: ignore[no-untyped-def]
        ap.add_argument("--datasets", nargs="+", default=["a9a", "w8a", "mushrooms", "dna"])
        ap.add_argument("--iters", nargs="+", type=int, default=[1, 9])
    a = _ab.parse(__doc__, rounds=5, extra=extra)
    _ab.use_shared_datasets()
    res = _ab.interleave(a, CODE, ",".join(a.datasets), ",".join(map(str, a.iters)))
    bits = {tag: [d.pop("bits") for d in res[tag]] for tag in res}
    _ab.table(res, "ms, CPU time", width=30, quantiles=(2,), digits=2)
    for key in bits["old"][0]:
        same = all(b[key] == bits["old"][0][key] for tag in bits for b in bits[tag])
        print(f"{key:30s} {'identical bits' if same else 'DIFFERENT'} in both trees")


if __name__ == "__main__":
    main()
