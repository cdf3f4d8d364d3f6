"""A/B of the kernels whose vector calls go through ``sqnopt/_vec.pxd`` between two built checkouts.

    python bench/ab_vector_layer.py OLD_TREE NEW_TREE [--rounds 5] [--iterates]

Each tree must be built in place (``python setup.py build_ext --inplace``; the calibration unit
also needs ``bench/native``, which ``python bench/native/build.py`` builds); make one for an older
commit with ``git worktree add /tmp/old <rev>``. The contenders are the code paths where an axpy
is a call of the vector layer: the L-BFGS product ``B v`` (the damped update), the RES directions
(Cholesky and eigen forms, ``+ Gamma g``), SQB's bound plus a CG or LSQR solve (dense binary
logistic, sparse softmax), the scaled loop on dense and on sparse rows, and the benchmarks'
calibration workload (``bench/native/_baseline.pyx``, the unit of every normalised figure). Each
runs in one process per tree, the trees alternate over the rounds, and each figure is the minimum
over 5 repeats in its process (the contenders interleaved). Prints min / median over rounds in
microseconds per call and new/old of the minima.

``--iterates`` instead prints, per tree, a SHA-256 of the iterates of solver runs through the
same kernels (float64 and float32 rows, 40 iterations each), whether the trees agree bit for
bit, and the largest relative distance between their iterates ``w_t`` over the run; then the same
for the final coefficients of whole ``Trainer`` fits with the defaults' recipes (and their
iteration counts).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _ab  # noqa: E402

SETUP = r'''
import json, sys, time
import numpy as np, scipy.sparse as sp
from sqnopt import BinaryLogistic, Decaying, Fixed, Hinge, L2Ball, Softmax, Solver
from sqnopt.data import prepare
rng = np.random.default_rng(0)
'''

TIMING = SETUP + r'''
from sqnopt.curvature import QuadraticBoundKernel
from sqnopt.curvature._bfgs import BFGSKernel
from sqnopt.curvature._lbfgs import LBFGSKernel
from sqnopt.curvature._res_eig import RESEigKernel
sys.path.insert(0, "bench")
from native import load
fns = {}
fns["calibration workload"] = (load("_baseline").calibration_workload, 1)
def secant(k, n):
    for _ in range(12):
        v = rng.normal(size=n)
        k.update_pair(v, v * (1 + rng.random(n)))
for n in (100, 1000):
    k = LBFGSKernel(n, memory=10); secant(k, n); v = rng.normal(size=n)
    fns[f"lbfgs B v n={n}"] = (lambda k=k, v=v: k.hessian_vector(v), 200)
    for name, k in (("res cholesky", BFGSKernel(n, delta=1e-3, Gamma=1e-4, cholesky=True)),
                    ("res eig", RESEigKernel(n))):
        secant(k, n); g = rng.normal(size=n); d = np.empty(n)
        fns[f"{name} direction n={n}"] = (lambda k=k, g=g, d=d: k.direction(g, d), 200)
Xd = rng.normal(size=(4000, 200)); yb = np.where(rng.random(4000) > 0.5, 1.0, -1.0)
kb = BinaryLogistic(lam=1e-3).init(prepare(Xd, yb))
cols = rng.integers(0, 20000, size=(4000, 50))
Xs = sp.csr_matrix((rng.random(200000), cols.ravel(), np.arange(0, 200001, 50)),
                   shape=(4000, 20000))
Xs.sum_duplicates()
ys = rng.integers(0, 10, 4000); ys[:10] = np.arange(10)
ks = Softmax(lam=1e-3).init(prepare(Xs, ys, label_kind="multiclass"))
for kname, k in (("binary dense d=200", kb), ("softmax sparse K=10", ks)):
    for solver in ("cg", "lsqr"):
        c = QuadraticBoundKernel(k.n_params, 1e-3, 10, 0.0, solver)
        w = rng.normal(size=k.n_params) * 0.01; g = rng.normal(size=k.n_params)
        d = np.empty_like(g); B = rng.integers(0, 4000, size=400).astype(np.intp)
        def step(c=c, k=k, w=w, B=B, g=g, d=d):
            c.observe_batch(k, w, B)
            c.direction(g, d)
        fns[f"sqb {solver} |S|=400 {kname}"] = (step, 5)
for n in (100, 1000):
    X = rng.normal(size=(2000, n)); y = np.where(rng.random(2000) > 0.5, 1.0, -1.0)
    s = Solver(Hinge(1e-4), "identity", Fixed(1), Decaying(0.1, 10), path="scaled",
               max_iter=20000, random_state=0, monitor=None, report_every=10**9)
    fns[f"scaled loop dense n={n} 2e4 it"] = (lambda s=s, X=X, y=y: s.fit(X, y), 1)
cols = rng.integers(0, 100000, size=(20000, 50))
Xq = sp.csr_matrix((rng.random(10**6), cols.ravel(), np.arange(0, 10**6 + 1, 50)),
                   shape=(20000, 100000))
Xq.sum_duplicates()
yq = np.where(rng.random(20000) > 0.5, 1.0, -1.0)
for avg in (False, True):
    s = Solver(Hinge(1e-4), "identity", Fixed(1), Decaying(0.1, 10), path="scaled",
               projection=L2Ball(), average=avg, max_iter=200000, random_state=0, monitor=None,
               report_every=10**9)
    fns[f"scaled loop sparse {'avg' if avg else 'last'} 2e5 it"] = (
        lambda s=s: s.fit(Xq, yq), 1)
best = {key: float("inf") for key in fns}
for f, reps in fns.values():
    f()
for _ in range(5):
    for key, (f, reps) in fns.items():
        t = time.perf_counter()
        for _ in range(reps):
            f()
        best[key] = min(best[key], (time.perf_counter() - t) / reps * 1e6)
print(json.dumps(best))
'''

ITERATES = SETUP + r'''
import hashlib
from sqnopt import Constant, FullBFGS, LBFGS, Linear, LogLoss, RegularizedBFGS, SquaredHinge
from sqnopt.curvature import QuadraticBound
X64 = rng.normal(size=(400, 30)); yb = np.where(X64[:, 0] + 0.5 * rng.normal(size=400) > 0, 1., -1.)
Xs = sp.random(500, 300, density=0.05, random_state=2, format="csr")
ys = np.where(rng.random(500) > 0.5, 1.0, -1.0)
out = {}
def run(name, *args, X, y, **kw):
    its = []
    Solver(*args, random_state=3, monitor=None, max_iter=40, report_every=1,
           callback=lambda info: its.append(info.w.copy()), **kw).fit(X, y)
    out[name] = {"sha": hashlib.sha256(np.ascontiguousarray(its).tobytes()).hexdigest()[:16],
                 "w": np.asarray(its).tolist()}
for X, tag in ((X64, "f64"), (X64.astype(np.float32), "f32")):
    run("lbfgs damped " + tag, SquaredHinge(1e-3),  # min_curvature: pairs damped, B v runs
        LBFGS(5, min_curvature=50.0, on_bad_pair="damp"), Fixed(10),
        Constant(0.1), X=X, y=yb)
    run("obfgs " + tag, LogLoss(1e-3), FullBFGS(), Fixed(10), Constant(0.1), X=X, y=yb)
    for m in ("cholesky", "eig"):
        run(f"res {m} " + tag, LogLoss(1e-3), RegularizedBFGS(method=m), Fixed(10),
            Constant(0.1), X=X, y=yb)
    for s in ("cg", "lsqr"):
        run(f"sqb {s} " + tag, "binary_logistic", QuadraticBound(inner_iter=4, solver=s),
            Linear(5, 1.5), Constant(0.5), X=X, y=yb, curvature_schedule=Linear(8, 1.0, cap=60))
    run("scaled loop dense " + tag, Hinge(1e-3), "identity", Fixed(8), Decaying(0.1, 10), X=X,
        y=yb, path="scaled", projection=L2Ball(), average=True)
for X, tag in ((Xs, "f64"), (Xs.astype(np.float32), "f32")):
    run("scaled loop sparse " + tag, Hinge(1e-3), "identity", Fixed(8), Decaying(0.1, 10), X=X,
        y=ys, projection=L2Ball(), average=True)
# whole fits with the defaults' recipes (tol=1e-6): the final coefficients and iteration counts
import warnings
from sqnopt.datasets import make_boxes
from sqnopt.training import Trainer
warnings.simplefilter("ignore")
Xb, yb2 = make_boxes(2000, 50, random_state=0)
for curv in ("lbfgs", "quadratic_bound", "regularized_bfgs", "full_bfgs"):
    t = Trainer("logloss", curvature=curv, random_state=0, tol=1e-6)
    coef = np.ravel(t.fit(Xb, yb2).coef)
    out[f"fit {curv}"] = {"sha": hashlib.sha256(coef.tobytes()).hexdigest()[:16],
                          "w": [coef.tolist()], "t": int(t.t_)}
print(json.dumps(out))
'''


def main() -> None:
    a = _ab.parse(__doc__, rounds=5, extra=lambda ap: ap.add_argument(
        "--iterates", action="store_true", help="compare iterate fingerprints instead of timing"))
    if a.iterates:
        fp = {tag: _ab.child(ITERATES, root) for tag, root in (("old", a.old), ("new", a.new))}
        print(f"{'run':24s} {'old':16s} {'new':16s} {'':9s} max_t |w_new - w_old| / |w_old|")
        for key, old in fp["old"].items():
            new = fp["new"][key]
            same = "same" if old["sha"] == new["sha"] else "DIFFERENT"
            wo, wn = np.asarray(old["w"]), np.asarray(new["w"])
            drift = float(np.max(np.linalg.norm(wn - wo, axis=1)
                                 / np.maximum(np.linalg.norm(wo, axis=1), 1e-300)))
            its = f"  iterations {old['t']} / {new['t']}" if "t" in old else ""
            print(f"{key:24s} {old['sha']} {new['sha']} {same:9s} {drift:.2e}{its}")
        return
    _ab.table(_ab.interleave(a, TIMING), "us per call", width=36, digits=1)


if __name__ == "__main__":
    main()
