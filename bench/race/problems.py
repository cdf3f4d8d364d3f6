"""The race's problems: data sets (real when present, generated always), the objective every
contender is measured on, and the tight reference solve that gives ``F*``.

Every problem is ``F(w) = alpha/2 ||w||^2 + mean_i loss_i(w)`` with no intercept, evaluated here
by one NumPy/SciPy implementation for every library, so the libraries are compared on exactly
the same function. Losses: ``logistic`` ``log(1 + exp(-y x.w))``, ``sqhinge``
``max(0, 1 - y x.w)^2``, ``hinge`` ``max(0, 1 - y x.w)``, ``softmax``
``logsumexp_k(x.w_k) - x.w_y`` (``K`` blocks of weights). ``l1_logistic`` is
``F(w) = alpha ||w||_1 + mean_i log(1 + exp(-y x.w))`` (scikit-learn's
``LogisticRegression(penalty="l1", C = 1/(alpha N))``): its ``F*`` comes from the better of a
tight newGLMNET solve (sqnopt's) and LIBLINEAR at tolerance 1e-10. The regression losses
``squared`` and ``poisson`` are those of :mod:`bench.race.regression`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from . import regression
from .regression import REGRESSION_LOSSES

FloatArray = NDArray[np.float64]

#: Curvature constant of each loss (bound on its second derivative in the margin), used to
#: scale step-size grids: ``L_i = c ||x_i||^2``.
LOSS_CURVATURE = {"logistic": 0.25, "sqhinge": 2.0, "hinge": 1.0, "softmax": 0.5,
                  "l1_logistic": 0.25}


def _one_blas_thread() -> Any:
    """sqnopt's own BLAS limit (:class:`sqnopt.solver._blas.blas_threads_limited`) at one
    thread, while the race evaluates a contender's iterate (never timed). With ``--cores`` > 1
    the peers get that many BLAS threads, and OpenBLAS's workers keep spinning for a while after
    a call they shared (until ``OPENBLAS_THREAD_TIMEOUT``), on the cores of whatever runs next:
    the race's own bookkeeping between two timed fits would otherwise slow the second one
    down."""
    from sqnopt.solver._blas import blas_threads_limited

    return blas_threads_limited(1)


@dataclass
class Problem:
    """One race problem: training data, a test set, the loss and ``alpha``."""

    dataset: str
    name: str                 # problem id within the dataset: "logistic", "logistic-hard", ...
    loss: str                 # logistic | sqhinge | hinge | softmax | squared | poisson
    alpha: float
    alpha_rule: str           # how alpha was chosen ("1/N", "1/(100 N)", "1e-4")
    X: Any
    y: FloatArray             # binary: -1/+1; softmax: 0..K-1
    X_test: Any
    y_test: FloatArray
    test_kind: str            # "test split" | "holdout 20 % (seed 0)" | ...
    description: str
    n_classes: int = 2
    points_per_pass: int = 8  # history points per pass for the traced contenders
    cap: float = 10.0         # seconds of solver time per contender and repeat (discovery run)
    f_star: float = math.nan
    reference: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.dataset}/{self.name}"

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_params(self) -> int:
        return self.d * (self.n_classes if self.loss == "softmax" else 1)

    @property
    def sparse(self) -> bool:
        return bool(sp.issparse(self.X))

    @property
    def nnz(self) -> int:
        return int(self.X.nnz) if self.sparse else int(self.X.size)

    def row_sqnorm_max(self) -> float:
        if self.sparse:
            return float(np.max(np.asarray(self.X.multiply(self.X).sum(axis=1))))
        return float(np.max(np.einsum("ij,ij->i", self.X, self.X)))

    def lipschitz(self) -> float:
        """``max_i c ||x_i||^2 + alpha``: the largest per-sample smoothness constant."""
        return LOSS_CURVATURE[self.loss] * self.row_sqnorm_max() + self.alpha

    def objective(self, w: Any) -> float:
        with _one_blas_thread():
            return objective(self.loss, self.alpha, self.X, self.y, w, self.n_classes)

    def excess(self, w: Any) -> float:
        return self.objective(w) / self.f_star - 1.0

    def accuracy(self, w: Any) -> float:
        with _one_blas_thread():
            return accuracy(self.loss, self.X_test, self.y_test, w, self.n_classes)

    def majority_accuracy(self) -> float | None:
        """The test accuracy of always predicting the most frequent test label (None for the
        regression losses): a classifier below it has learnt nothing a constant would not."""
        if self.loss in REGRESSION_LOSSES:
            return None
        _, counts = np.unique(np.asarray(self.y_test), return_counts=True)
        return float(counts.max() / counts.sum())

    def fingerprint(self) -> str:
        """A hash of the data, loss and alpha (the key of the ``F*`` cache)."""
        h = hashlib.sha256()
        h.update(f"{self.loss}|{self.alpha!r}|{self.X.shape}|{self.n_classes}".encode())
        if self.sparse:
            X = sp.csr_matrix(self.X)
            for a in (X.data, X.indices, X.indptr):
                h.update(np.ascontiguousarray(a).tobytes())
        else:
            h.update(np.ascontiguousarray(self.X).tobytes())
        h.update(np.ascontiguousarray(self.y).tobytes())
        return h.hexdigest()[:24]


# ---------------------------------------------------------------------------- the objective
def _blocks(w: Any, n_classes: int, d: int) -> FloatArray:
    W = np.asarray(w, dtype=np.float64)
    return W.reshape(n_classes, d)


def _softmax_parts(X: Any, y: FloatArray, W: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Scores ``S = X W'`` and probabilities ``P`` (row-wise softmax)."""
    S = np.asarray(X @ W.T)
    S = S - S.max(axis=1, keepdims=True)
    P = np.exp(S)
    P /= P.sum(axis=1, keepdims=True)
    return S, P


def objective(loss: str, alpha: float, X: Any, y: FloatArray, w: Any, n_classes: int = 2
              ) -> float:
    """``alpha/2 ||w||^2 + mean loss`` (see the module docstring)."""
    if loss in REGRESSION_LOSSES:
        return regression.objective(loss, alpha, X, y, w)
    if loss == "softmax":
        W = _blocks(w, n_classes, X.shape[1])
        S = np.asarray(X @ W.T)
        mx = S.max(axis=1)
        lse = mx + np.log(np.exp(S - mx[:, None]).sum(axis=1))
        data = float(np.mean(lse - S[np.arange(S.shape[0]), y.astype(np.intp)]))
        return data + 0.5 * alpha * float(np.vdot(W, W))
    wv = np.asarray(w, dtype=np.float64).ravel()
    m = y * np.asarray(X @ wv).ravel()
    if loss == "l1_logistic":
        return float(np.mean(np.logaddexp(0.0, -m))) + alpha * float(np.sum(np.abs(wv)))
    if loss == "logistic":
        data = float(np.mean(np.logaddexp(0.0, -m)))
    elif loss == "sqhinge":
        data = float(np.mean(np.maximum(0.0, 1.0 - m) ** 2))
    elif loss == "hinge":
        data = float(np.mean(np.maximum(0.0, 1.0 - m)))
    else:
        raise ValueError(f"unknown loss {loss!r}")
    return data + 0.5 * alpha * float(wv @ wv)


def accuracy(loss: str, X: Any, y: FloatArray, w: Any, n_classes: int = 2) -> float:
    """Test accuracy; for the regression losses the R^2 of the predictions."""
    if loss in REGRESSION_LOSSES:
        return regression.r2(loss, X, y, w)
    if loss == "softmax":
        W = _blocks(w, n_classes, X.shape[1])
        return float(np.mean(np.argmax(np.asarray(X @ W.T), axis=1) == y.astype(np.intp)))
    wv = np.asarray(w, dtype=np.float64).ravel()
    return float(np.mean(np.where(np.asarray(X @ wv).ravel() > 0, 1.0, -1.0) == y))


HessAt = Callable[[FloatArray], tuple[Callable[[FloatArray], FloatArray], FloatArray]]


def _grad_hessp(p: Problem) -> tuple[Callable[[FloatArray], tuple[float, FloatArray]], HessAt]:
    """``F`` with its gradient, and ``hess(w)``: the (generalized) Hessian-vector product at
    ``w`` (curvature weights computed once) and the Hessian's diagonal (a Jacobi
    preconditioner), for the smooth losses (the reference solve's Newton-CG)."""
    if p.loss in REGRESSION_LOSSES:
        return regression.grad_hessp(p.loss, p.alpha, p.X, p.y)
    X, y, a, n = p.X, p.y, p.alpha, p.n
    Xt = X.T.tocsr() if sp.issparse(X) else X.T
    Xsq_t = (X.multiply(X)).T.tocsr() if sp.issparse(X) else (X * X).T

    if p.loss == "softmax":
        K, d = p.n_classes, p.d
        Y = np.zeros((n, K))
        Y[np.arange(n), y.astype(np.intp)] = 1.0

        def fg(w: FloatArray) -> tuple[float, FloatArray]:
            W = w.reshape(K, d)
            S, P = _softmax_parts(X, y, W)
            f = float(np.mean(np.log(np.exp(S).sum(axis=1)) - S[np.arange(n), y.astype(np.intp)]))
            G = np.asarray(Xt @ (P - Y)).T / n + a * W
            return f + 0.5 * a * float(np.vdot(W, W)), G.ravel()

        def hess(w: FloatArray) -> tuple[Callable[[FloatArray], FloatArray], FloatArray]:
            _, P = _softmax_parts(X, y, w.reshape(K, d))

            def hp(v: FloatArray) -> FloatArray:
                V = v.reshape(K, d)
                U = np.asarray(X @ V.T)
                R = P * U - P * (P * U).sum(axis=1, keepdims=True)
                return (np.asarray(Xt @ R).T / n + a * V).ravel()
            diag = (np.asarray(Xsq_t @ (P * (1.0 - P))).T / n + a).ravel()
            return hp, diag

        return fg, hess

    def margins(w: FloatArray) -> FloatArray:
        return y * np.asarray(X @ w).ravel()

    if p.loss == "logistic":
        def fg(w: FloatArray) -> tuple[float, FloatArray]:
            m = margins(w)
            s = -y * _expit(-m)
            return (float(np.mean(np.logaddexp(0.0, -m))) + 0.5 * a * float(w @ w),
                    np.asarray(Xt @ s).ravel() / n + a * w)

        def hess(w: FloatArray) -> tuple[Callable[[FloatArray], FloatArray], FloatArray]:
            q = _expit(margins(w))
            D = q * (1.0 - q)
            return (lambda v: np.asarray(Xt @ (D * np.asarray(X @ v).ravel())).ravel() / n + a * v,
                    np.asarray(Xsq_t @ D).ravel() / n + a)

        return fg, hess
    if p.loss == "sqhinge":
        def fg(w: FloatArray) -> tuple[float, FloatArray]:
            r = np.maximum(0.0, 1.0 - margins(w))
            return (float(np.mean(r * r)) + 0.5 * a * float(w @ w),
                    np.asarray(Xt @ (-2.0 * y * r)).ravel() / n + a * w)

        def hess(w: FloatArray) -> tuple[Callable[[FloatArray], FloatArray], FloatArray]:
            act = (margins(w) < 1.0).astype(np.float64)
            return (lambda v: (2.0 * np.asarray(Xt @ (act * np.asarray(X @ v).ravel())).ravel()
                               / n + a * v),
                    2.0 * np.asarray(Xsq_t @ act).ravel() / n + a)

        return fg, hess
    raise ValueError(f"no smooth reference for loss {p.loss!r}")


def _expit(z: FloatArray) -> FloatArray:
    out: FloatArray = np.exp(-np.logaddexp(0.0, -z))
    return out


def newton_cg(p: Problem, *, rel_tol: float = 1e-12, max_iter: int = 200
              ) -> tuple[FloatArray, dict[str, Any]]:
    """Newton-CG (Jacobi-preconditioned CG) with a backtracking (Armijo) line search from
    ``w = 0``, stopped when
    ``||grad F||^2 / (2 alpha)`` -- an upper bound on ``F(w) - F*`` for an ``alpha``-strongly
    convex ``F`` -- falls below ``rel_tol * F(w)``, or when no step decreases ``F``."""
    from scipy.sparse.linalg import LinearOperator, cg

    fg, hess = _grad_hessp(p)
    w = np.zeros(p.n_params)
    f, g = fg(w)
    it = 0
    for it in range(1, max_iter + 1):
        gn = float(np.linalg.norm(g))
        if gn * gn / (2 * p.alpha) <= rel_tol * abs(f):
            break
        hp, diag = hess(w)
        op = LinearOperator((w.size, w.size), matvec=hp, dtype=np.float64)
        pre = LinearOperator((w.size, w.size), matvec=lambda v, dg=diag: v / dg,
                             dtype=np.float64)
        step, _ = cg(op, -g, rtol=min(0.1, math.sqrt(gn)), maxiter=max(200, 10 * w.size),
                     M=pre)
        slope = float(g @ step)
        if slope >= 0:
            step, slope = -g, -gn * gn
        t, accepted = 1.0, False
        while t > 1e-12:
            fn, gn_vec = fg(w + t * step)
            if fn <= f + 1e-4 * t * slope:
                accepted = True
                break
            t *= 0.5
        if not accepted:
            break
        w = w + t * step
        f, g = fn, gn_vec
    gn = float(np.linalg.norm(g))
    return w, {"method": "Newton-CG (this module)", "iterations": it, "grad_norm": gn,
               "excess_bound": gn * gn / (2 * p.alpha) / abs(f)}


def hinge_reference(p: Problem) -> tuple[FloatArray, dict[str, Any]]:
    """The hinge loss is not smooth: liblinear's dual coordinate descent
    (``LinearSVC(loss="hinge", dual=True)``, ``C = 1/(alpha N)``) at tolerance 1e-10. No
    certificate of accuracy (the duality gap is not exposed); ``F*`` is also lowered to the
    best value any contender reaches."""
    from sklearn.svm import LinearSVC

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svc = LinearSVC(loss="hinge", C=1.0 / (p.alpha * p.n), fit_intercept=False, dual=True,
                        tol=1e-10, max_iter=1_000_000).fit(p.X, p.y)
    return svc.coef_.ravel().copy(), {"method": "liblinear dual CD, tol 1e-10 (LinearSVC)",
                                      "iterations": int(np.max(svc.n_iter_))}


def l1_reference(p: Problem) -> tuple[FloatArray, dict[str, Any]]:
    """``l1_logistic``: the better (lower ``F``) of sqnopt's newGLMNET at pseudo-gradient
    tolerance 1e-12 and LIBLINEAR (``LogisticRegression(penalty="l1", solver="liblinear")``) at
    tolerance 1e-10; both kept in the record. ``max |pg|`` (the pseudo-gradient of ``F``, zero
    exactly at the minimisers) certifies the first."""
    from sklearn.linear_model import LogisticRegression

    from sqnopt import LogLoss
    from sqnopt.composite import solve_composite
    from sqnopt.penalties import L1

    res = solve_composite(LogLoss(lam=0.0), L1(p.alpha), p.X, p.y, method="newglmnet",
                          fit_intercept=False, tol=1e-12, max_iter=10_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = LogisticRegression(C=1.0 / (p.alpha * p.n), solver="liblinear",
                                fit_intercept=False, tol=1e-10, max_iter=100_000,
                                **sk_l1_keywords()).fit(p.X, p.y)
    ours, theirs = res.coef[0], sk.coef_.ravel().copy()
    f_ours, f_theirs = p.objective(ours), p.objective(theirs)
    best = ours if f_ours <= f_theirs else theirs
    return best, {"method": "min(sqnopt newGLMNET tol 1e-12, liblinear tol 1e-10)",
                  "iterations": res.n_iter, "pg_max": res.pg_max,
                  "f_newglmnet": f_ours, "f_liblinear": f_theirs,
                  "nnz_newglmnet": int(np.count_nonzero(ours)),
                  "nnz_liblinear": int(np.count_nonzero(theirs))}


def sk_l1_keywords() -> dict[str, Any]:
    """``LogisticRegression``'s keywords of the L1 penalty: ``l1_ratio=1`` from scikit-learn
    1.8 (which deprecates ``penalty``), else ``penalty="l1"``."""
    import inspect

    from sklearn.linear_model import LogisticRegression

    if inspect.signature(LogisticRegression).parameters["penalty"].default == "deprecated":
        return {"l1_ratio": 1.0}
    return {"penalty": "l1"}


def cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sqnopt-race" / "fstar.json"


def recorded_references(paths: list[Path]) -> list[dict[str, Any]]:
    """The problems of earlier race records (files, or directories searched for
    ``race-*.json``), each with its reference: what :func:`reference` can take instead of a
    solve when the ``F*`` cache lacks a problem (a fresh machine: LIBLINEAR's part of the L1
    reference on criteo takes long)."""
    files: list[Path] = []
    for path in paths:
        files += sorted(path.rglob("race-*.json")) if path.is_dir() else [path]
    out: list[dict[str, Any]] = []
    for f in files:
        for q in json.loads(f.read_text()).get("problems", []):
            if q.get("reference") and q.get("f_star_reference") is not None:
                out.append(dict(q, record_path=str(f)))
    return out


def _same_problem(p: Problem, q: dict[str, Any], key: str) -> bool:
    """Record entry ``q`` describes problem ``p``: its data's fingerprint where the record
    holds one, else the key, loss, ``alpha`` (exactly), shape and stored values."""
    if q.get("fingerprint") is not None:
        return bool(q["fingerprint"] == key)
    return (q.get("key") == p.key and q.get("loss") == p.loss and q.get("alpha") == p.alpha
            and q.get("n_train") == p.n and q.get("n_features") == p.d
            and q.get("nnz") == p.nnz)


def reference(p: Problem, cache: Path | None,
              recorded: list[dict[str, Any]] | None = None) -> None:
    """Set ``p.f_star`` and ``p.reference`` from the cache, else from a recorded reference of
    the same problem (``recorded``: :func:`recorded_references`), else a reference solve;
    the last two are stored in the cache."""
    key = p.fingerprint()
    store: dict[str, Any] = {}
    if cache is not None and cache.exists():
        try:
            store = json.loads(cache.read_text())
        except (OSError, ValueError):
            store = {}
    if key in store:
        p.reference = dict(store[key], cached=True)
        p.f_star = float(p.reference["f_star"])
        return
    q = next((q for q in recorded or [] if _same_problem(p, q, key)), None)
    if q is not None:
        info = {k: v for k, v in q["reference"].items() if k != "cached"}
        info.update(f_star=float(q["f_star_reference"]), from_record=q["record_path"])
        p.reference = dict(info, cached=False)
        p.f_star = info["f_star"]
        if cache is not None:
            store[key] = info
            _write_cache(cache, store)
        return
    tic = time.perf_counter()
    w, info = (hinge_reference(p) if p.loss == "hinge" else
               l1_reference(p) if p.loss == "l1_logistic" else newton_cg(p))
    info.update(f_star=p.objective(w), test_accuracy=p.accuracy(w),
                seconds=time.perf_counter() - tic, problem=p.key)
    p.reference = dict(info, cached=False)
    p.f_star = float(info["f_star"])
    if cache is not None:
        store[key] = info
        _write_cache(cache, store)


def _write_cache(cache: Path, store: dict[str, Any]) -> None:
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(".tmp")
    tmp.write_text(json.dumps(store, indent=1))
    tmp.replace(cache)


# ---------------------------------------------------------------------------- data sets
def datasets_dir(explicit: str | None = None) -> Path | None:
    """``--datasets-dir``, else ``$SQNOPT_DATASETS``, else the first ``shared/datasets`` above
    the checkout; None when there is none (the race then runs on the shipped and generated
    data only)."""
    for cand in (explicit, os.environ.get("SQNOPT_DATASETS")):
        if cand:
            return Path(cand)
    for parent in Path(__file__).resolve().parents:
        c = parent / "shared" / "datasets"
        if c.is_dir():
            return c
    return None


def _svm(path: Path, n_features: int | None = None) -> tuple[Any, FloatArray]:
    from sqnopt.datasets import load_svmlight

    X, y = load_svmlight(path, n_features=n_features)
    return sp.csr_matrix(X, dtype=np.float64), y


def _holdout(X: Any, y: FloatArray, strat: FloatArray | None = None
             ) -> tuple[Any, FloatArray, Any, FloatArray]:
    from sklearn.model_selection import train_test_split

    idx = np.arange(X.shape[0])
    tr, te = train_test_split(idx, test_size=0.2, random_state=0,
                              stratify=y if strat is None else strat)
    tr.sort()
    te.sort()
    return X[tr], y[tr], X[te], y[te]


def _binary(y: FloatArray, positive: Callable[[FloatArray], NDArray[np.bool_]]) -> FloatArray:
    return np.where(positive(y), 1.0, -1.0)


def _csr(X: Any) -> Any:
    """Canonical float64 CSR with 32-bit indices (what every library here accepts without a
    conversion: scikit-learn's SAG/SGD and lightning reject 64-bit indices)."""
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    X.sort_indices()
    X.indices = X.indices.astype(np.int32, copy=False)
    X.indptr = X.indptr.astype(np.int32, copy=False)
    return X


@dataclass(frozen=True)
class DataSet:
    """A named loader returning ``(X, y, X_test, y_test, test_kind, description, n_classes)``
    and the problems to pose on it."""

    name: str
    problems: tuple[str, ...]
    load: Callable[[Path | None], tuple[Any, ...]]
    needs_files: tuple[str, ...] = ()
    quick: bool = False
    points_per_pass: int = 8
    cap: float = 10.0


def _load_a9a(_: Path | None) -> tuple[Any, ...]:
    from sqnopt.datasets import load_a9a

    X, y = load_a9a("train")
    Xt, yt = load_a9a("test")
    return (_csr(X), y, _csr(Xt), yt, "test split (a9a.t)",
            "UCI Adult, LIBSVM a9a (shipped with sqnopt), 123 binary features", 2)


def _load_w8a(root: Path | None) -> tuple[Any, ...]:
    assert root is not None
    X, y = _svm(root / "w8a.xz", 300)
    Xt, yt = _svm(root / "w8a.t.xz", 300)
    return X, y, Xt, yt, "test split (w8a.t)", "LIBSVM w8a (web page keywords), 300 features", 2


def _load_mushrooms(root: Path | None) -> tuple[Any, ...]:
    assert root is not None
    X, y = _svm(root / "mushrooms.xz", 112)
    y = _binary(y, lambda v: v == 2)
    Xtr, ytr, Xte, yte = _holdout(X, y)
    return (Xtr, ytr, Xte, yte, "holdout 20 % (stratified, seed 0)",
            "UCI Mushroom, LIBSVM mushrooms (label 2 -> +1), 112 binary features", 2)


def _load_dna(root: Path | None) -> tuple[Any, ...]:
    assert root is not None
    X, y = _svm(root / "dna.scale.xz", 180)
    Xt, yt = _svm(root / "dna.scale.t.xz", 180)
    return (X, y - 1.0, Xt, yt - 1.0, "test split (dna.scale.t)",
            "Statlog DNA, LIBSVM dna.scale, 180 features, 3 classes", 3)


def _load_news20(root: Path | None) -> tuple[Any, ...]:
    """Binary: newsgroups 1-10 -> -1, 11-20 -> +1 (a fixed, balanced split of the label set);
    80/20 split stratified on the 20 groups (seed 0); TF-IDF with sublinear tf and unit-norm
    rows, idf from the training part (as RCV1 is distributed; paper 001's stand-in)."""
    from sklearn.feature_extraction.text import TfidfTransformer

    assert root is not None
    X, labels = _svm(root / "news20.xz")
    y = _binary(labels, lambda v: v >= 11)
    Xtr, ytr, Xte, yte = _holdout(X, y, strat=labels)
    tf = TfidfTransformer(sublinear_tf=True).fit(Xtr)
    return (_csr(tf.transform(Xtr)), ytr, _csr(tf.transform(Xte)), yte,
            "holdout 20 % (stratified on the 20 groups, seed 0)",
            "20 Newsgroups, LIBSVM news20: groups 11-20 vs 1-10, TF-IDF (sublinear tf, unit-norm "
            "rows), 62061 features", 2)


def _load_fashion(root: Path | None) -> tuple[Any, ...]:
    import gzip

    assert root is not None
    d = root / "fashion-mnist"

    def idx(name: str) -> NDArray[np.uint8]:
        with gzip.open(d / name, "rb") as f:
            raw = f.read()
        ndim = raw[3]
        dims = [int.from_bytes(raw[4 + 4 * k: 8 + 4 * k], "big") for k in range(ndim)]
        return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)

    X = idx("train-images-idx3-ubyte.gz").reshape(60000, -1).astype(np.float64) / 255.0
    Xt = idx("t10k-images-idx3-ubyte.gz").reshape(10000, -1).astype(np.float64) / 255.0
    y = idx("train-labels-idx1-ubyte.gz").astype(np.float64)
    yt = idx("t10k-labels-idx1-ubyte.gz").astype(np.float64)
    return (np.ascontiguousarray(X), y, np.ascontiguousarray(Xt), yt, "test split (t10k)",
            "Fashion-MNIST, 28x28 pixels / 255 (dense), 10 classes", 10)


def _load_criteo(root: Path | None) -> tuple[Any, ...]:
    """The 10 000-row Criteo sample: first 8000 rows train, last 2000 test (time order);
    sqnopt's Criteo featurizer (13 count fields one-hot by log bin, 26 categorical fields
    hashed into 1024 bags each), fitted on nothing (hashing needs no fit)."""
    from sqnopt.datasets import criteo_featurizer, read_criteo

    assert root is not None
    table, label = read_criteo(root / "criteo_dac_train_head10k.tsv.xz")
    feats = criteo_featurizer(n_bags=2**10)
    X = _csr(feats.fit(table).transform(table))
    y = np.where(np.asarray(label) > 0, 1.0, -1.0)
    cut = 8000
    return (X[:cut], y[:cut], X[cut:], y[cut:], "last 2000 rows (time order)",
            f"Criteo display-ads sample, one-hot + hashed ({X.shape[1]} binary features)", 2)


def _load_boxes(_: Path | None) -> tuple[Any, ...]:
    from sqnopt.datasets import make_boxes

    X, y = make_boxes(20_000, 100, random_state=0)
    Xt, yt = make_boxes(10_000, 100, random_state=1)
    return (X, y, Xt, yt, "generated test set (seed 1)",
            "generated: overlapping boxes of papers 000/003 (make_boxes, n = 100, dense)", 2)


DATASETS: dict[str, DataSet] = {d.name: d for d in (
    DataSet("a9a", ("logistic", "logistic-hard", "sqhinge", "l1_logistic"), _load_a9a,
            quick=True),
    DataSet("w8a", ("logistic", "logistic-hard", "l1_logistic"), _load_w8a,
            ("w8a.xz", "w8a.t.xz")),
    DataSet("mushrooms", ("logistic",), _load_mushrooms, ("mushrooms.xz",)),
    DataSet("dna", ("softmax",), _load_dna, ("dna.scale.xz", "dna.scale.t.xz")),
    DataSet("news20", ("logistic", "logistic-1e-6", "hinge", "l1_logistic"), _load_news20,
            ("news20.xz",), cap=15.0),
    DataSet("fashion-mnist", ("softmax",), _load_fashion,
            ("fashion-mnist/train-images-idx3-ubyte.gz",), points_per_pass=2, cap=30.0),
    DataSet("criteo", ("logistic", "logistic-hard", "l1_logistic"), _load_criteo,
            ("criteo_dac_train_head10k.tsv.xz",)),
    DataSet("boxes", ("sqhinge",), _load_boxes, quick=True),
    # regression (bench/race/regression.py)
    DataSet("diabetes", ("ridge",), regression.load_diabetes),
    DataSet("regression-dense", ("ridge", "poisson"), regression.load_regression_dense),
    DataSet("regression-sparse", ("ridge", "poisson"), regression.load_regression_sparse,
            cap=15.0),
)}

#: problem id -> (loss, alpha rule name, alpha as a function of N)
PROBLEM_KINDS: dict[str, tuple[str, str, Callable[[int], float]]] = {
    "logistic": ("logistic", "1/N", lambda n: 1.0 / n),
    "logistic-hard": ("logistic", "1/(100 N)", lambda n: 1.0 / (100 * n)),
    "logistic-1e-6": ("logistic", "1e-6", lambda n: 1e-6),
    "sqhinge": ("sqhinge", "1/N", lambda n: 1.0 / n),
    "softmax": ("softmax", "1/N", lambda n: 1.0 / n),
    "softmax-hard": ("softmax", "1/(100 N)", lambda n: 1.0 / (100 * n)),
    "hinge": ("hinge", "1e-4", lambda n: 1e-4),
    # L1: alpha = 1/N is scikit-learn's C = 1 (its default)
    "l1_logistic": ("l1_logistic", "1/N", lambda n: 1.0 / n),
    "ridge": ("squared", "1/N", lambda n: 1.0 / n),
    "poisson": ("poisson", "1/N", lambda n: 1.0 / n),
}


def load_problems(names: list[str], kinds: list[str] | None, root: Path | None, *,
                  quick: bool, skipped: list[str]) -> Iterator[Problem]:
    """The problems of the selected data sets (those whose files are missing are skipped with
    a line in ``skipped``), one data set loaded at a time."""
    for name in names:
        ds = DATASETS[name]
        missing = [f for f in ds.needs_files if root is None or not (root / f).exists()]
        if missing:
            where = "no datasets directory" if root is None else str(root)
            skipped.append(f"data set {name}: skipped, {', '.join(missing)} not found ({where})")
            continue
        chosen = [k for k in ds.problems if kinds is None or k in kinds]
        if quick and kinds is None:
            chosen = chosen[:1]
        if not chosen:
            continue
        X, y, Xt, yt, test_kind, desc, k = ds.load(root)
        if sp.issparse(X):
            X, Xt = _csr(X), _csr(Xt)
        for kind in chosen:
            loss, rule, rule_fn = PROBLEM_KINDS[kind]
            # a generated regression set draws its targets by loss: {loss: (y, y_test)}
            yk, ytk = y[loss] if isinstance(y, dict) else (y, yt)
            yield Problem(dataset=name, name=kind, loss=loss, alpha=rule_fn(X.shape[0]),
                          alpha_rule=rule, X=X, y=np.asarray(yk, dtype=np.float64), X_test=Xt,
                          y_test=np.asarray(ytk, dtype=np.float64), test_kind=test_kind,
                          description=desc, n_classes=k, points_per_pass=ds.points_per_pass,
                          cap=ds.cap)
