"""Proximal AdaGrad for L1 / elastic net, in both forms: step by step (composite mirror
descent, ``AdaGrad(composite=True, l1=...)``) and FTRL-Proximal (``ftrl=True``, the large-data
recipe's). The compiled kernel against its NumPy twin (bit for bit on the dense step), the
just-in-time iterate (lazy: untouched coordinates are brought up to date when read) against
the twin's eager steps and against the same rows stored dense (every coordinate updated every
step), exact zeros, and the closed form of one step."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import Constant, Fixed, LogLoss, Solver
from sqnopt.curvature import AdaGrad, AdaGradKernel
from sqnopt.curvature.reference import AdaGradNumPy
from sqnopt.objectives import Softmax
from sqnopt.objectives.reference import LogLossNumPy, SoftmaxNumPy
from sqnopt.solver._adaptive_loop import AdaptiveLoop
from sqnopt.solver._loop import CompiledLoop
from sqnopt.solver._pyloop import PythonLoop

#: (lam, l1): the lasso (lam = 0: the record keeps per-step thresholds) and the elastic net
PENALTIES = [(0.0, 0.02), (0.01, 0.02)]
#: the step-by-step form and FTRL-Proximal
FORMS = [False, True]


def _data(kind: str, N: int = 150, n: int = 60, seed: int = 0) -> tuple[Any, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = sp.random(N, n, density=0.08, random_state=seed, format="csr",
                  data_rvs=lambda k: rng.normal(size=k))
    y = (rng.integers(0, 3, size=N).astype(float) if kind == "softmax"
         else np.where(rng.random(N) < 0.4, 1.0, -1.0))
    return X, y


def _objectives(kind: str, lam: float) -> tuple[Any, Any]:
    if kind == "softmax":
        return Softmax(lam=lam), SoftmaxNumPy(lam=lam)
    return LogLoss(lam=lam), LogLossNumPy(lam=lam)


def _iterates(objective: Any, curvature: Any, X: Any, y: Any, seq: np.ndarray, *,
              size: int = 1, path: str = "auto", eps: float = 0.5,
              fit_intercept: bool = True) -> tuple[np.ndarray, Any]:
    ws: list[np.ndarray] = []
    solver = Solver(objective=objective, curvature=curvature, schedule=Fixed(size),
                    step=Constant(eps), fit_intercept=fit_intercept, batch_sequence=seq,
                    max_iter=len(seq) // size, report_every=1, path=path,  # type: ignore[arg-type]
                    callback=lambda info: ws.append(np.array(info.w)))
    state = solver.init_state(X, y)
    solver.run(state)
    return np.array(ws), state


@pytest.mark.parametrize("kind", ["logloss", "softmax"])
@pytest.mark.parametrize("lam, l1", PENALTIES)
@pytest.mark.parametrize("ftrl", FORMS)
def test_compiled_step_and_numpy_twin_identical(kind: str, lam: float, l1: float,
                                                ftrl: bool) -> None:
    """The dense proximal step: the compiled kernel in the compiled and the Python loops, and
    the NumPy twin kernel, give the same bits at every iterate."""
    X, y = _data(kind)
    seq = np.random.default_rng(2).integers(0, X.shape[0], size=300)
    compiled, _ = _objectives(kind, lam)
    curv = AdaGrad(composite=True, l1=l1, ftrl=ftrl)
    w1, s1 = _iterates(compiled, curv, X, y, seq, path="generic")
    w2, _ = _iterates(compiled, curv, X, y, seq, path="python")
    w3, s3 = _iterates(compiled, AdaGradNumPy(composite=True, l1=l1, ftrl=ftrl), X, y, seq)
    assert type(s1.loop) is CompiledLoop and isinstance(s3.loop, PythonLoop)
    np.testing.assert_array_equal(w1, w2)
    np.testing.assert_array_equal(w1, w3)
    assert np.count_nonzero(w1[-1] == 0.0) > 0      # the L1 term made zeros


@pytest.mark.parametrize("kind", ["logloss", "softmax"])
@pytest.mark.parametrize("lam, l1", PENALTIES)
@pytest.mark.parametrize("size", [1, 4])
@pytest.mark.parametrize("ftrl", FORMS)
def test_lazy_iterate_matches_eager_twin(kind: str, lam: float, l1: float, size: int,
                                         ftrl: bool) -> None:
    """The just-in-time iterate on CSR rows (untouched coordinates shrink in one closed form
    when next read) against the NumPy twin's eager steps (every coordinate, every step): the
    same iterates to rounding, and the same exact zeros."""
    X, y = _data(kind)
    seq = np.random.default_rng(1).integers(0, X.shape[0], size=400)
    compiled, twin = _objectives(kind, lam)
    w1, s1 = _iterates(compiled, AdaGrad(composite=True, l1=l1, ftrl=ftrl), X, y, seq,
                       size=size)
    w2, s2 = _iterates(twin, AdaGradNumPy(composite=True, l1=l1, ftrl=ftrl), X, y, seq,
                       size=size)
    assert isinstance(s1.loop, AdaptiveLoop) and isinstance(s2.loop, PythonLoop)
    np.testing.assert_allclose(w1, w2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(s1.curvature.accumulator, s2.curvature.accumulator, rtol=1e-12)
    # a value the lazy form zeroes is zeroed by the eager steps too (away from the threshold)
    assert np.array_equal(w1[-1] == 0.0, w2[-1] == 0.0)
    assert 0 < np.count_nonzero(w1[-1]) < w1.shape[1]


@pytest.mark.parametrize("lam, l1", PENALTIES)
@pytest.mark.parametrize("ftrl", FORMS)
def test_lazy_equals_eager_on_dense_storage(lam: float, l1: float, ftrl: bool) -> None:
    """The same rows as CSR (lazy: untouched coordinates wait) and dense (eager: every
    coordinate is updated at every step, its gradient 0 where the row is 0)."""
    X, y = _data("logloss")
    seq = np.random.default_rng(3).integers(0, X.shape[0], size=600)
    obj = LogLoss(lam=lam)
    curv = AdaGrad(composite=True, l1=l1, ftrl=ftrl)
    w_lazy, s1 = _iterates(obj, curv, X, y, seq)
    w_eager, s2 = _iterates(obj, curv, X.toarray(), y, seq)
    assert isinstance(s1.loop, AdaptiveLoop) and isinstance(s2.loop, AdaptiveLoop)
    np.testing.assert_allclose(w_lazy, w_eager, rtol=0, atol=1e-12)
    assert np.array_equal(w_lazy[-1] == 0.0, w_eager[-1] == 0.0)


def test_long_untouched_stretch_reaches_exact_zero() -> None:
    """A feature set by the first row and never read again shrinks to an exact zero by the
    closed form (lam = 0: ``eta l1 / s`` per step; lam > 0: the affine recursion), as many
    eager steps do."""
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0]]))
    y = np.array([1.0, -1.0])
    seq = np.array([0] + [1] * 3000)
    for lam in (0.0, 1e-3):
        obj = LogLoss(lam=lam)
        w_lazy, _ = _iterates(obj, AdaGrad(composite=True, l1=1e-3), X, y, seq,
                              fit_intercept=False)
        w_eager, _ = _iterates(obj, AdaGrad(composite=True, l1=1e-3), X.toarray(), y, seq,
                               fit_intercept=False)
        assert w_lazy[0, 0] > 0.0
        k = int(np.argmax(w_eager[:, 0] == 0.0))
        assert k > 10 and w_eager[k, 0] == 0.0 and np.all(w_lazy[k:, 0] == 0.0)
        np.testing.assert_allclose(w_lazy[:, 0], w_eager[:, 0], rtol=0, atol=1e-12)


def test_kernel_step_is_the_soft_thresholded_closed_form() -> None:
    """One compiled step against the formula written out, with the intercept unpenalised."""
    k = AdaGradKernel(4, 1e-8, 0.0, True, 0.1, 2, True, 0.3)
    w = np.array([0.5, 1.0, -0.2, 0.4])
    grad = np.array([0.05, 0.3, 2.0, -0.1])       # the loss gradient plus lam w_reg
    eps = 0.5
    out = np.empty(4)
    k.composite_update(w, grad, eps, out)
    lam_j = np.array([0.1, 0.0, 0.1, 0.0])
    l1_j = np.array([0.3, 0.0, 0.3, 0.0])
    gl = grad - lam_j * w
    s = 1e-8 + np.abs(gl)
    z = s * w - eps * gl
    want = np.sign(z) * np.maximum(np.abs(z) - eps * l1_j, 0.0) / (s + eps * lam_j)
    np.testing.assert_allclose(out, want, rtol=1e-15, atol=0)
    assert out[0] == 0.0 and np.signbit(out[0]) is np.False_   # exact, non-negative zero
    np.testing.assert_array_equal(k.accumulator, gl * gl)


def test_l1_needs_the_composite_form() -> None:
    with pytest.raises(ValueError, match="composite=True"):
        AdaGrad(l1=0.1)
    with pytest.raises(ValueError, match="l1 must be"):
        AdaGrad(composite=True, l1=-1.0)
    assert AdaGrad(composite=True).describe() == AdaGrad(composite=True, l1=0.0).describe()
    assert "l1" in AdaGrad(composite=True, l1=0.5).describe()


def test_ftrl_kernel_step_is_the_closed_form() -> None:
    """Two FTRL-Proximal steps of the compiled kernel against McMahan et al.'s Algorithm 1
    written out (the first step centres the dual sums at the start)."""
    k = AdaGradKernel(4, 1e-3, 0.0, True, 0.1, 2, True, 1.5, True)
    w0 = np.array([0.5, 1.0, -0.2, 0.4])
    lam_j = np.array([0.1, 0.0, 0.1, 0.0])
    l1_j = np.array([1.5, 0.0, 1.5, 0.0])
    eps = 0.5
    z = -(1e-3 / eps) * w0
    G = np.zeros(4)
    w = w0
    for t, gloss in enumerate([np.array([0.05, 0.3, 2.0, -0.1]),
                               np.array([-1.0, 0.2, 0.1, 0.4])], start=1):
        out = np.empty(4)
        assert k.composite_update(w, gloss + lam_j * w, eps, out) == 0
        s_old = 1e-3 + np.sqrt(G)
        G = G + gloss * gloss
        s_new = 1e-3 + np.sqrt(G)
        z = z + gloss - (s_new - s_old) / eps * w
        want = np.where(np.abs(z) <= t * l1_j, 0.0,
                        -(z - np.sign(z) * t * l1_j) / (s_new / eps + t * lam_j))
        np.testing.assert_allclose(out, want, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(k.dual, z, rtol=1e-13, atol=1e-15)
        w = out
    assert k.ftrl_t == 2.0 and k.ftrl_eta == eps
    assert np.count_nonzero(w[[0, 2]] == 0.0) >= 1     # a penalised coordinate at exact 0


def test_ftrl_is_far_sparser_than_the_step_by_step_form() -> None:
    """On sparse rows, per-example soft thresholding leaves most weights off zero (each
    example's gradient kicks its coordinates off), while FTRL-Proximal zeroes those whose
    averaged evidence is within l1 (McMahan 2011): at the same penalty its model has far fewer
    nonzeros and no worse a training objective."""
    rng = np.random.default_rng(0)
    N, n = 3000, 150
    X = sp.random(N, n, density=0.05, random_state=1, format="csr",
                  data_rvs=lambda k: rng.normal(size=k))
    wt = np.zeros(n)
    wt[:15] = 2 * rng.normal(size=15)
    y = np.where(rng.random(N) < 1 / (1 + np.exp(-(X @ wt))), 1.0, -1.0)
    l1 = 1e-2
    seq = np.concatenate([np.random.default_rng(s).permutation(N) for s in range(3)])

    def final(ftrl: bool) -> tuple[float, int]:
        solver = Solver(objective=LogLoss(lam=0.0), curvature=AdaGrad(composite=True, l1=l1,
                                                                       ftrl=ftrl),
                        schedule=Fixed(1), step=Constant(0.25), batch_sequence=seq,
                        max_iter=len(seq), fit_intercept=True)
        w = np.asarray(solver.fit(X, y).w)   # [coef, intercept]
        m = y * (X @ w[:-1] + w[-1])
        return float(np.mean(np.logaddexp(0, -m)) + l1 * np.abs(w[:-1]).sum()), \
            int(np.count_nonzero(w[:-1]))

    f_step, nnz_step = final(False)
    f_ftrl, nnz_ftrl = final(True)
    assert nnz_ftrl < 0.5 * nnz_step
    assert f_ftrl <= f_step


@pytest.mark.parametrize("ftrl", FORMS)
def test_both_forms_pass_the_conformance_checks(ftrl: bool) -> None:
    """``sqnopt.testing``'s checks of a curvature model: declared flags (the kernel declares
    the FTRL-Proximal form as ``ftrl_proximal``), state round trip (the dual sums included)."""
    from sqnopt.testing import check_component

    check_component(AdaGrad(composite=True, l1=0.1, ftrl=ftrl))
