"""Newton's method with the exact Hessian (``Newton``): the formed Hessian against finite
differences of the gradient, the compiled kernel against its NumPy twin iterate by iterate,
quadratic convergence, and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import curvature_twin_iterates, gaussian_classes

from sqnopt import (
    Armijo,
    Constant,
    CurvatureError,
    Full,
    IncompatibleComponentsError,
    Newton,
    Solver,
    Status,
)
from sqnopt.curvature.reference import NewtonNumPy
from sqnopt.datasets import make_boxes
from sqnopt.interfaces import BATCH_OBSERVED, CURVATURE_ERROR
from sqnopt.objectives import (
    BinaryLogistic,
    Hinge,
    LogLinear,
    LogLoss,
    Softmax,
    SquaredHinge,
)


def _data(multi: bool, n: int = 150, p: int = 6, seed: int = 1):
    return gaussian_classes(n, p, 3, seed) if multi else make_boxes(n, p, random_state=seed)


def _unsorted(X):
    """The same matrix as CSR whose rows list their entries in reverse column order."""
    A = sp.csr_matrix(X)
    data, ind = A.data.copy(), A.indices.copy()
    for i in range(A.shape[0]):
        lo, hi = A.indptr[i], A.indptr[i + 1]
        data[lo:hi], ind[lo:hi] = data[lo:hi][::-1], ind[lo:hi][::-1]
    B = sp.csr_matrix((data, ind, A.indptr.copy()), shape=A.shape)
    B.has_sorted_indices = False
    return B


@pytest.mark.parametrize("layout", ["dense", "dense32", "csr", "csr32", "csr_unsorted"])
@pytest.mark.parametrize("objective,multi", [(LogLoss(lam=0.1), False),
                                             (BinaryLogistic(lam=0.1), False),
                                             (SquaredHinge(lam=0.1), False),
                                             (Softmax(lam=0.1), True)])
def test_the_formed_hessian_is_the_finite_difference_of_the_gradient(objective, multi, layout):
    X, y = _data(multi)
    Xf = {"dense": X, "dense32": X.astype(np.float32), "csr": sp.csr_matrix(X),
          "csr32": sp.csr_matrix(X, dtype=np.float32), "csr_unsorted": _unsorted(X)}[layout]
    # softmax with an intercept is singular along its class shifts (tested below)
    state = Solver(objective, Newton(), fit_intercept=not multi).init_state(Xf, y)
    k, kern = state.objective, state.curvature
    rng = np.random.default_rng(2)
    w = 0.3 * rng.normal(size=k.n_params)
    batch = np.array([0, 3, 3, 17, 40, 77, 101, 149], dtype=np.intp)
    assert kern.observe_batch(k, w, batch) == BATCH_OBSERVED
    H = np.linalg.inv(kern.to_dense())        # the kernel's direction matrix is H^{-1}
    h = 1e-6
    fd = np.empty_like(H)
    gp, gm = np.zeros(k.n_params), np.zeros(k.n_params)
    for j, e in enumerate(np.eye(k.n_params)):
        k.gradient(w + h * e, batch, gp)
        k.gradient(w - h * e, batch, gm)
        fd[:, j] = (gp - gm) / (2 * h)
    np.testing.assert_allclose(H, fd, rtol=1e-5, atol=1e-7)
    assert kern.n_factorizations == 1 and kern.have_factor


@pytest.mark.parametrize("multi", [False, True])
def test_compiled_newton_matches_its_numpy_twin_iterate_by_iterate(multi):
    X, y = _data(multi, 300, 6, 5)
    objective = Softmax(lam=0.01) if multi else LogLoss(lam=0.01)
    a, ra, b, rb = curvature_twin_iterates(objective, Newton(), NewtonNumPy(), X, y)
    assert ra.compiled and not rb.compiled
    assert len(a) == 12
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert ra.n_curvature_samples == rb.n_curvature_samples == 12 * 40


@pytest.mark.parametrize("multi", [False, True])
def test_full_batch_newton_converges_quadratically(multi):
    X, y = _data(multi, 2000, 10, 6)
    X = sp.csr_matrix(X)
    objective = Softmax(lam=1e-3) if multi else LogLoss(lam=1e-3)
    ref = Solver(objective, "lbfgs", Full(), Armijo(), gtol=1e-13, max_iter=5000,
                 fit_intercept=True).fit(X, y)
    its: list[np.ndarray] = []
    res = Solver(objective, Newton(), Full(), Armijo(), curvature_schedule=Full(), gtol=1e-12,
                 max_iter=40, report_every=1, fit_intercept=True,
                 callback=lambda info: its.append(info.w.copy())).fit(X, y)
    assert res.status is Status.GTOL and res.fun == pytest.approx(ref.fun, rel=1e-12)
    assert res.n_iter <= 12
    # distances to the last iterate (the optimum: its value is the reference's to 1e-12 and
    # its gradient below 1e-12), while they are well above that iterate's own error
    err = [float(np.linalg.norm(w - res.w)) for w in its]
    tail = [(e0, e1) for e0, e1 in zip(err, err[1:]) if 1e-8 < e1 and e0 < 1e-1]
    assert len(tail) >= 1
    for e0, e1 in tail:     # e_{k+1} <= C e_k^2: quadratic, not a linear contraction
        assert e1 <= 10.0 * e0 * e0, (e0, e1)


def test_newton_refuses_objectives_without_the_dense_hessian_layout():
    with pytest.raises(IncompatibleComponentsError, match="dense_hessian|smooth"):
        Solver(Hinge(lam=0.1), Newton())
    with pytest.raises(IncompatibleComponentsError, match="dense_hessian"):
        Solver(LogLinear(n_outputs=3, lam=0.1), Newton())


def test_newton_refuses_more_parameters_than_its_bound():
    X = sp.random(50, 20_001, density=1e-3, format="csr", random_state=0)
    y = np.r_[np.ones(25), -np.ones(25)]
    with pytest.raises(MemoryError, match="lbfgs"):
        Solver(LogLoss(lam=0.1), Newton()).init_state(X, y)


def test_a_singular_hessian_is_a_curvature_error():
    # lam = 0 and a feature that is zero in every row: that row of the Hessian is zero
    X, y = make_boxes(40, 3, random_state=0)
    Xz = np.column_stack([X, np.zeros(40)])
    state = Solver(LogLoss(lam=0.0), Newton()).init_state(Xz, y)
    k, kern = state.objective, state.curvature
    assert kern.observe_batch(k, np.zeros(4), np.arange(40, dtype=np.intp)) == CURVATURE_ERROR
    assert "not positive definite" in kern.error_message() and not kern.have_factor
    # the cause it names: the zero column is parameter 3, unregularised, and the data do not
    # determine it
    assert "ending at parameter 3" in kern.error_message()
    assert "the data do not determine it" in kern.error_message()
    with pytest.raises(CurvatureError, match="not positive definite"):
        Solver(LogLoss(lam=0.0), Newton(), Full(), Armijo(), curvature_schedule=Full(),
               max_iter=5).fit(Xz, y)


def test_a_step_too_long_for_newton_is_named_as_the_cause():
    """lam = 1e-4 and a constant step of 1e6: the iterate lands where every margin is far out
    and the logistic loss is flat, and the unregularised intercept has no curvature left. The
    error says so (and which step took it there), not that lam = 0 or the data are at fault."""
    from sqnopt.datasets import load_a9a

    X, y = load_a9a("train")
    with pytest.raises(CurvatureError) as info:
        Solver(LogLoss(lam=1e-4), Newton(), Full(), Constant(1e6), curvature_schedule=Full(),
               fit_intercept=True, max_iter=5).fit(X, y)
    msg = str(info.value)
    assert "after steps of 1e+06 by constant(eps=1000000.0)" in msg
    assert "ending at the intercept" in msg and "the loss is flat at the iterate" in msg
    assert "steps too long for the direction (use a line search" in msg
    assert "lam = 0" not in msg


@pytest.mark.parametrize("lam", [0.0, 0.1])
def test_softmax_flat_directions_give_the_minimum_norm_newton_step(lam):
    # class shifts of the unregularised coordinates (the intercepts; all of them at lam = 0)
    # leave softmax unchanged: H is singular there, g orthogonal to it; d = pinv(H) g
    X, y = _data(True, 120, 4, 3)
    state = Solver(Softmax(lam=lam), Newton(), fit_intercept=True).init_state(X, y)
    k, kern = state.objective, state.curvature
    w = 0.2 * np.random.default_rng(0).normal(size=k.n_params)
    allb = np.arange(120, dtype=np.intp)
    assert kern.observe_batch(k, w, allb) == BATCH_OBSERVED
    H = np.column_stack([_hv(k, w, allb, e) for e in np.eye(k.n_params)])
    g = np.zeros(k.n_params)
    k.gradient(w, allb, g)
    d = kern.matvec(g)
    np.testing.assert_allclose(d, np.linalg.pinv(H, rcond=1e-10, hermitian=True) @ g,
                               rtol=1e-7, atol=1e-10)
    assert np.linalg.matrix_rank(H) == k.n_params - (5 if lam == 0 else 1)


def _hv(k, w, b, v):
    out = np.zeros(k.n_params)
    k.hessian_product(w, b, np.ascontiguousarray(v), out)
    return out


def test_margin_kernels_declare_the_score_hessian_factor_newton_fuses_on() -> None:
    """Newton forms a margin loss's factors from the scores of the rows it gathers when the
    objective kernel declares ``score_hessian_factor`` (a capability, not a kernel class):
    the twice-differentiable margin losses and binary logistic (a wrapper of one) do; the
    hinge (no second derivative) and softmax (K factors per sample) do not."""
    from sqnopt import BinaryLogistic, Hinge, LogLoss, Softmax, SquaredHinge
    from sqnopt.datasets import make_boxes

    X, y = make_boxes(60, 3, random_state=0)
    for objective, declared in ((LogLoss(lam=0.1), True), (SquaredHinge(lam=0.1), True),
                                (BinaryLogistic(lam=0.1), True), (Hinge(lam=0.1), False),
                                (Softmax(lam=0.1), False)):
        k = Solver(objective).init_state(X, y).objective
        assert k.score_hessian_factor is declared, objective
