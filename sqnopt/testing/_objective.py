"""Conformance checks of objectives (:class:`sqnopt.interfaces.Objective`).

Beyond the checks of every kind:

* values and gradients: ``value``, ``full_gradient`` and the minibatch ``gradient`` agree with
  each other and with central finite differences along random directions, at random points and
  at extreme margins (scores of hundreds to tens of thousands, where a naive ``exp`` overflows),
  with and without an intercept; ``gradient`` is deterministic and leaves its inputs alone;
* capabilities against the methods that provide them: ``hessian_vector`` (``hess_size > 0``:
  Hessian-vector products against finite differences of the gradient, symmetric, and the
  Hessian's diagonal), ``dense_hessian`` (the layout Newton's method reads: the Hessian formed
  from the score-Hessian factors row by row equals the finite-difference Hessian),
  ``quadratic_bound`` (``bound(w, B)``: its mean is the batch gradient and its quadratic
  majorises the batch objective), ``linear_scores`` (``n_scores > 0``: the score derivatives
  and the rows' products give the gradient, ``rows_dot`` is the transpose of ``rows_axpy``,
  losses from given scores agree and their line derivatives match finite differences),
  ``margin`` (a sample's loss depends on ``w`` through ``x_i . w + b`` only), ``probabilistic``
  (``exp(-loss)`` over the possible labels of a sample sums to one), ``strongly_convex`` (``lam
  > 0``), the ``curvature_bound`` bounds the loss's curvature in the scores, and the
  ``start_curvature`` is that curvature at score 0 (``w = 0``) for every sample
  (``curvature_vanishes``: a bool);
  ``with_capability`` returns an objective that has the capability and the same ``lam``;
* the same values on dense float64 and float32 and on CSR (float64 with int32 and int64
  indices, float32) data of the same numbers;
* sample weights: integer weights are repetitions of rows (zero removes a row), and scaling
  every weight changes nothing;
* an intercept is the unregularised coefficient of a constant column.

The objective kernel is not part of a checkpoint (it is rebuilt on the data), so its state check
asks that it keep none: a used kernel behaves as a fresh one.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sqnopt.interfaces import (
    BINARY,
    DENSE_HESSIAN,
    HESSIAN_VECTOR,
    LINEAR_SCORES,
    MARGIN,
    MULTICLASS,
    REGRESSION,
    PROBABILISTIC,
    QUADRATIC_BOUND,
    SMOOTH,
    STRONGLY_CONVEX,
    Objective,
    ObjectiveKernelLike,
)
from sqnopt.testing._core import (
    Check,
    Outputs,
    Setup,
    Suite,
    allclose,
    fail,
    float32_exact,
    layouts,
    max_rel,
    output_difference,
    problem_of,
    sparsify,
)

__all__ = ["ObjectiveSuite"]

_VOCABULARY = (SMOOTH, STRONGLY_CONVEX, MARGIN, QUADRATIC_BOUND, BINARY, MULTICLASS, PROBABILISTIC,
               LINEAR_SCORES, HESSIAN_VECTOR, DENSE_HESSIAN, REGRESSION)
#: The label kinds an objective may declare (``sqnopt.data.LABEL_KINDS``).
_LABEL_KINDS = (BINARY, MULTICLASS, REGRESSION)
#: Largest score (about) at the extreme points, relative to the largest row norm.
_EXTREME = (2e3, 1e5)
_N = 120


def _reg_mask(setup: Setup) -> np.ndarray:
    """1 on the regularised coordinates, 0 on the intercepts (the last of each block)."""
    p = setup.problem
    mask = np.ones(p.n_params)
    if p.fit_intercept and p.dim == setup.data.dim:
        mask[p.dim - 1::p.dim] = 0.0
    return mask


class ObjectiveSuite(Suite):
    """The checks of one objective."""

    kind = "objective"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shape: tuple[int, int] | None = None

    def objective(self) -> Objective:
        comp: Objective = self.component
        return comp

    def protocol(self) -> type:
        return ObjectiveKernelLike

    def compiled_base(self) -> type[Any]:
        from sqnopt.objectives._base import ObjectiveKernel

        return ObjectiveKernel

    # ------------------------------------------------------------------ data
    def _make(self, K: int, p: int, n_samples: int = _N) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(self.seed)
        X: np.ndarray
        y: np.ndarray
        if self.component.label_kind == "binary":
            from sqnopt.datasets import make_boxes

            X, y = make_boxes(n_samples, p, random_state=self.seed)
        elif self.component.label_kind == "regression":
            # K = 0: targets of both signs; K = 1: counts (y >= 0, the Poisson loss's domain)
            X = rng.normal(size=(n_samples, p))
            s = X @ (rng.normal(size=p) / math.sqrt(p)) + 0.3
            y = (s + 0.5 * rng.normal(size=n_samples) if K == 0
                 else rng.poisson(np.exp(np.clip(s, -5.0, 3.0))).astype(np.float64))
        else:
            y = np.arange(n_samples) % K
            centers = rng.normal(size=(K, p))
            X = centers[y] + rng.normal(size=(n_samples, p))
        return sparsify(float32_exact(X), rng, 0.7), np.asarray(y)

    def shape(self) -> tuple[int, int]:
        """``(classes, features)`` of the synthetic data: the first of a few candidates the
        objective accepts (a log-linear model needs features stacked per output)."""
        if self._shape is None:
            from sqnopt.data import prepare

            if self.component.label_kind == "binary":
                candidates = [(2, self.n)]
            elif self.component.label_kind == "regression":
                candidates = [(0, self.n), (1, self.n)]
            else:
                candidates = [(3, self.n), (2, self.n), (3, 12), (2, 12), (4, 12), (5, 20)]
            problems = []
            for K, p in candidates:
                X, y = self._make(K, p)
                try:
                    data = prepare(X, y, label_kind=self.component.label_kind)
                    self.component.param_layout(data)
                    self.component.init(data)
                except (ValueError, TypeError) as exc:
                    problems.append(f"{K} classes x {p} features: {exc}")
                    continue
                self._shape = (K, p)
                break
            else:
                fail("the objective accepts none of the synthetic data sets ("
                     + "; ".join(problems) + "); pass data=(X, y)")
        return self._shape

    def raw_data(self, n_samples: int = _N, n_features: int | None = None
                 ) -> tuple[Any, Any]:
        if self._data is not None:
            return self._data
        K, p = self.shape()
        return self._make(K, p, n_samples)

    def dataset(self, X: Any, y: Any, *, fit_intercept: bool = False,
                sample_weight: Any = None, classes: Any = None) -> Any:
        from sqnopt.data import prepare

        if self.component.label_kind == "regression":
            classes = None   # real targets have no classes
        return prepare(X, y, label_kind=self.component.label_kind, fit_intercept=fit_intercept,
                       sample_weight=sample_weight, classes=classes)

    def setup_on(self, X: Any, y: Any, *, fit_intercept: bool = False,
                 sample_weight: Any = None, classes: Any = None) -> Setup:
        data = self.dataset(X, y, fit_intercept=fit_intercept, sample_weight=sample_weight,
                            classes=classes)
        return Setup(problem_of(self.component, data), data, self.component.init(data), X, y)

    def intercept_setup(self) -> Setup | str:
        """The setup with an intercept, or why the objective has none."""
        try:
            return self.setup(fit_intercept=True)
        except (ValueError, TypeError) as exc:
            return f"refuses fit_intercept=True ({exc})"

    def fresh(self, setup: Setup) -> Any:
        return self.component.init(setup.data)

    def points(self, setup: Setup) -> list[tuple[str, np.ndarray]]:
        """Random points and points of extreme margins (scores up to the objective's
        ``max_score`` where it declares one: beyond it the loss is not finite)."""
        p = setup.problem.n_params
        rng = np.random.default_rng([self.seed, 51])
        design = setup.data.design()
        sq = design.multiply(design).sum(axis=1) if hasattr(design, "multiply") else \
            np.sum(design * design, axis=1)
        row = float(np.sqrt(np.max(np.asarray(sq))))
        out = [("a random point", 0.5 * rng.normal(size=p)),
               ("another random point", 0.5 * rng.normal(size=p)),
               ("a point of larger scores", 3.0 * rng.normal(size=p))]
        limit = getattr(self.component, "max_score", None)
        for target in _EXTREME:
            if limit is not None:
                target = min(target, 0.5 * float(limit))
            w = rng.normal(size=p)
            w *= target / (row * float(np.linalg.norm(w)))
            out.append((f"a point of extreme margins (|w| |x| = {target:g})", w))
        return out

    def batch(self, setup: Setup, size: int = 10, salt: int = 0) -> np.ndarray:
        rng = np.random.default_rng([self.seed, 52, salt])
        return np.sort(rng.choice(setup.problem.n_samples, size=size, replace=False)
                       ).astype(np.intp)

    # ------------------------------------------------------------------ driving
    def drive(self, kernel: Any, setup: Setup, steps: range) -> Outputs:
        """Per step: a minibatch gradient, the value and the full gradient at a point."""
        p = setup.problem.n_params
        out: Outputs = []
        for j in steps:
            rng = np.random.default_rng([self.seed, 53, j])
            w = 0.5 * rng.normal(size=p)
            batch = np.asarray(rng.integers(0, setup.problem.n_samples, 8), dtype=np.intp)
            g, full = np.zeros(p), np.zeros(p)
            f = float(kernel.gradient(w, batch, g))
            out += [(f"step {j} f_B", f), (f"step {j} gradient", g),
                    (f"step {j} value", float(kernel.value(w)))]
            F = float(kernel.full_gradient(w, full))
            out += [(f"step {j} full_gradient value", F), (f"step {j} full_gradient", full)]
        return out

    def declared_flags(self, kernel: Any) -> list[tuple[str, Any, Any]]:
        caps = self.component.capabilities
        return [
            ("linear_scores (kernel: n_scores > 0)", LINEAR_SCORES in caps,
             int(getattr(kernel, "n_scores", 0)) > 0),
            ("hessian_vector (kernel: hess_size > 0)", HESSIAN_VECTOR in caps,
             int(getattr(kernel, "hess_size", 0)) > 0),
            ("lam", float(self.component.lam), float(kernel.lam)),
        ]

    # ------------------------------------------------------------------ checks
    def kind_checks(self) -> list[tuple[str, Check]]:
        return [
            ("check_value_and_gradient", self.check_value_and_gradient),
            ("check_capabilities", self.check_capabilities),
            ("check_layouts", self.check_layouts),
            ("check_sample_weights", self.check_sample_weights),
            ("check_intercept", self.check_intercept),
        ]

    def kernel_contract(self, kernel: Any, setup: Setup) -> None:
        m = self.component
        n_blocks, dim = m.param_layout(setup.data)
        if int(kernel.n_params) != n_blocks * dim:
            fail(f"kernel.n_params is {kernel.n_params}, param_layout gives {n_blocks} block(s) "
                 f"of {dim}")
        caps = m.capabilities
        if not (isinstance(caps, frozenset) and all(isinstance(c, str) for c in caps)):
            fail(f"capabilities must be a frozenset of str, got {caps!r}")
        if m.label_kind not in _LABEL_KINDS or m.label_kind not in caps:
            fail(f"label_kind {m.label_kind!r} must be one of {_LABEL_KINDS} and among the "
                 f"capabilities {sorted(caps)}")
        if STRONGLY_CONVEX in caps and not float(m.lam) > 0:
            fail(f"declares strongly_convex with lam = {m.lam!r}")
        bound = m.curvature_bound
        if bound is not None and not (isinstance(bound, (int, float)) and math.isfinite(bound)
                                      and bound > 0):
            fail(f"curvature_bound must be None or a finite number > 0, got {bound!r}")
        start = getattr(m, "start_curvature", None)
        if start is not None and not (isinstance(start, (int, float))
                                      and math.isfinite(start) and start > 0):
            fail(f"start_curvature must be None or a finite number > 0, got {start!r}")
        vanishes = getattr(m, "curvature_vanishes", False)
        if not isinstance(vanishes, (bool, np.bool_)):
            fail(f"curvature_vanishes must be True or False, got {vanishes!r}")
        for cap in _VOCABULARY:
            other = m.with_capability(cap)
            if other is None:
                if cap in caps:
                    fail(f"with_capability({cap!r}) is None although the objective has it")
                continue
            if not isinstance(other, Objective) or cap not in other.capabilities:
                fail(f"with_capability({cap!r}) returned {other!r:.60}, which does not provide "
                     f"{cap!r}")
            if float(other.lam) != float(m.lam):
                fail(f"with_capability({cap!r}) changed lam from {m.lam!r} to {other.lam!r}")
            if cap in caps and not other == m:
                fail(f"with_capability({cap!r}) of an objective that has it must be the "
                     f"objective itself, got {other.describe()}")

    def check_state_round_trip(self) -> str | None:
        """Objective kernels are not checkpointed (a restore rebuilds them on the data), and
        the driver reuses ``gradient(w, B)`` as a function of its arguments: a kernel used for
        a while must behave as a fresh one. A kernel with ``get_state`` also round-trips."""
        setup = self.setup()
        a = self.fresh(setup)
        self.drive(a, setup, range(5))
        probe = range(5, 10)
        diff = output_difference(self.drive(a, setup, probe),
                                 self.drive(self.fresh(setup), setup, probe))
        if diff is not None:
            fail(f"the objective kernel keeps state from one call to the next (a used kernel "
                 f"differs from a fresh one at {diff}); checkpoints do not save objective "
                 "kernels")
        if callable(getattr(a, "get_state", None)):
            return super().check_state_round_trip()
        return "keeps no state (a used kernel behaves as a fresh one)"

    # -- values and gradients
    def _fd_check(self, f: Any, grad: np.ndarray, w: np.ndarray, where: str) -> None:
        """Central differences of ``f`` along two random directions against ``grad``."""
        rng = np.random.default_rng([self.seed, 54])
        F = float(f(w))
        norm_g = float(np.linalg.norm(grad))
        for k in range(2):
            u = rng.normal(size=w.shape[0])
            u /= float(np.linalg.norm(u))
            h = 1e-6 * (1.0 + float(np.linalg.norm(w)))
            fd = (float(f(w + h * u)) - float(f(w - h * u))) / (2 * h)
            exact = float(grad @ u)
            tol = 1e-5 * (abs(exact) + norm_g) + 1e-12 * (abs(F) + 1.0) / h
            if not abs(fd - exact) <= tol:
                fail(f"{where}: the gradient disagrees with central differences along a random "
                     f"direction: g'u = {exact:.10g}, (f(w + hu) - f(w - hu)) / 2h = {fd:.10g} "
                     f"(h = {h:.3g})")

    def _check_point(self, kernel: Any, setup: Setup, label: str, w: np.ndarray) -> None:
        p = setup.problem.n_params
        N = setup.problem.n_samples
        where = f"{label}{' (with intercept)' if setup.data.fit_intercept else ''}"
        w_in = w.copy()
        F = float(kernel.value(w))
        if not math.isfinite(F):
            fail(f"{where}: F(w) = {F!r} is not finite")
        full = np.full(p, np.nan)
        F2 = float(kernel.full_gradient(w, full))
        if not np.all(np.isfinite(full)):
            fail(f"{where}: the full gradient is not finite")
        if not allclose(F2, F, 1e-12, 1e-300):
            fail(f"{where}: full_gradient returns F = {F2!r}, value gives {F!r}")
        everyone = np.arange(N, dtype=np.intp)
        g = np.full(p, np.nan)
        f_all = float(kernel.gradient(w, everyone, g))
        scale = float(np.max(np.abs(full))) + 1e-300
        if not (allclose(g, full, 1e-10, 1e-12 * scale) and allclose(f_all, F, 1e-10, 1e-300)):
            fail(f"{where}: the minibatch gradient over every sample differs from the full "
                 f"gradient ({max_rel(g, full)}; values {f_all!r} and {F!r})")
        self._fd_check(kernel.value, full, w, f"{where}, F")
        batch = self.batch(setup)
        b_in = batch.copy()
        gb = np.full(p, np.nan)
        fb = float(kernel.gradient(w, batch, gb))
        gb2 = np.full(p, np.nan)
        fb2 = float(kernel.gradient(w, batch, gb2))
        if gb.tobytes() != gb2.tobytes() or fb != fb2:
            fail(f"{where}: gradient(w, B) is not deterministic ({max_rel(gb2, gb)}): the driver "
                 "reuses it when the batch repeats")
        if not (np.array_equal(w, w_in) and np.array_equal(batch, b_in)):
            fail(f"{where}: a call modified w or the batch")

        def batch_value(x: np.ndarray) -> float:
            return float(kernel.gradient(x, batch, np.empty(p)))

        self._fd_check(batch_value, gb, w, f"{where}, f_B on a batch of {batch.shape[0]}")
        bv = getattr(kernel, "batch_value", None)
        if callable(bv) and not allclose(float(bv(w, batch)), fb, 1e-12, 1e-300):
            fail(f"{where}: batch_value(w, B) = {float(bv(w, batch))!r}, gradient returns {fb!r}")

    def check_value_and_gradient(self) -> str | None:
        setups = [self.setup()]
        with_b = self.intercept_setup()
        if isinstance(with_b, Setup):
            setups.append(with_b)
        for setup in setups:
            kernel = self.fresh(setup)
            for label, w in self.points(setup):
                try:
                    self._check_point(kernel, setup, label, w)
                except AssertionError:
                    raise
                except Exception as exc:
                    fail(f"at {label}{' (with intercept)' if setup.data.fit_intercept else ''}: "
                         f"{type(exc).__name__}: {exc}")
        K, p = self.shape() if self._data is None else (0, 0)
        note = f"{len(self.points(setups[0]))} points"
        if self._data is None:
            note += f", {K} classes x {p} features"
        return note if isinstance(with_b, Setup) else f"{note}; {with_b}"

    # -- capabilities
    def _fd_hessian(self, kernel: Any, w: np.ndarray, batch: np.ndarray) -> np.ndarray:
        """Columns of the batch Hessian by central differences of the gradient."""
        p = w.shape[0]
        H = np.zeros((p, p))
        h = 1e-6 * (1.0 + float(np.linalg.norm(w)))
        gp, gm = np.zeros(p), np.zeros(p)
        for j in range(p):
            e = np.zeros(p)
            e[j] = h
            kernel.gradient(w + e, batch, gp)
            kernel.gradient(w - e, batch, gm)
            H[:, j] = (gp - gm) / (2 * h)
        return H

    def _hessian_checks(self, kernel: Any, setup: Setup, w: np.ndarray, batch: np.ndarray,
                        H_fd: np.ndarray, caps: frozenset[str]) -> list[str]:
        notes = []
        p = w.shape[0]
        tol = 1e-5 * (float(np.max(np.abs(H_fd))) + 1e-300)
        if HESSIAN_VECTOR in caps:
            if not callable(getattr(kernel, "hessian_product", None)):
                fail("declares hessian_vector but its kernel has no hessian_product")
            rng = np.random.default_rng([self.seed, 55])
            cols = np.zeros((p, p))
            for j in range(p):
                e, col = np.zeros(p), np.zeros(p)
                e[j] = 1.0
                kernel.hessian_product(w, batch, e, col)
                cols[:, j] = col
            if not allclose(cols, H_fd, 1e-5, tol):
                fail(f"hessian_product disagrees with central differences of the gradient "
                     f"({max_rel(cols, H_fd)})")
            u, v = rng.normal(size=p), rng.normal(size=p)
            hu, hv = np.zeros(p), np.zeros(p)
            kernel.hessian_product(w, batch, u, hu)
            kernel.hessian_product(w, batch, v, hv)
            if not math.isclose(float(v @ hu), float(u @ hv), rel_tol=1e-10,
                                abs_tol=1e-12 * float(np.linalg.norm(hu) * np.linalg.norm(v))):
                fail(f"the Hessian-vector products are not symmetric: v'Hu = {v @ hu!r}, "
                     f"u'Hv = {u @ hv!r}")
            diag = getattr(kernel, "hessian_diagonal", None)
            if callable(diag):
                try:
                    dg = np.asarray(diag(w, batch))
                except TypeError:
                    notes.append("no Hessian diagonal")
                else:
                    if not allclose(dg, np.diag(cols), 1e-10, 1e-14 * tol / 1e-5):
                        fail(f"hessian_diagonal is not the diagonal of the Hessian-vector "
                             f"products ({max_rel(dg, np.diag(cols))})")
            notes.append("Hessian-vector products")
        if DENSE_HESSIAN in caps:
            notes.append(self._dense_hessian(kernel, setup, w, batch, H_fd))
        return notes

    def _dense_hessian(self, kernel: Any, setup: Setup, w: np.ndarray, batch: np.ndarray,
                       H_fd: np.ndarray) -> str:
        """The layout of ``dense_hessian``: ``K`` blocks of ``[x_i, 1]``-linear scores whose
        score Hessian comes from ``hess_size`` factors per sample (``g_i l''`` for a margin,
        ``g_i p`` for ``K`` classes: ``Sigma_i = diag(D) - D D' / sum(D)``)."""
        prob = setup.problem
        K = int(getattr(kernel, "hess_size", 0))
        B = prob.n_blocks
        factors = getattr(kernel, "hessian_factors", None)
        if not callable(factors):
            fail("declares dense_hessian but its kernel has no hessian_factors")
        if prob.dim != setup.data.dim or not (K == B or (K == 1 and B == 1)):
            fail(f"declares dense_hessian, but its layout is not K blocks of [x_i, 1]: "
                 f"hess_size = {K}, {B} block(s) of {prob.dim} (data.dim = {setup.data.dim})")
        D = np.asarray(factors(w, batch), dtype=np.float64).reshape(batch.shape[0], K)
        design = setup.data.design()
        rows = design[batch]
        rows = np.asarray(rows.toarray() if hasattr(rows, "toarray") else rows)
        dim = prob.dim
        H = np.zeros((prob.n_params, prob.n_params))
        for t in range(batch.shape[0]):
            x = rows[t]
            if K == 1:
                S = D[t].reshape(1, 1)
            else:
                g = float(D[t].sum())
                S = np.diag(D[t]) - (np.outer(D[t], D[t]) / g if g else 0.0)
            for k in range(B):
                for m in range(B):
                    H[k * dim:(k + 1) * dim, m * dim:(m + 1) * dim] += S[k, m] * np.outer(x, x)
        H /= batch.shape[0]
        H += np.diag(float(kernel.lam) * _reg_mask(setup))
        if not allclose(H, H_fd, 1e-5, 1e-5 * float(np.max(np.abs(H_fd)))):
            fail(f"declares dense_hessian, but the Hessian formed from hessian_factors in that "
                 f"layout is not the finite-difference Hessian ({max_rel(H, H_fd)})")
        return "dense Hessian layout"

    def _bound(self, kernel: Any, setup: Setup, w: np.ndarray, batch: np.ndarray) -> str:
        bound = getattr(kernel, "bound", None)
        if not callable(bound):
            fail("declares quadratic_bound but its kernel has no bound(w, batch)")
        p = w.shape[0]
        mu, S = bound(w, batch)
        S = np.asarray(S.toarray() if hasattr(S, "toarray") else S, dtype=np.float64)
        g = np.zeros(p)
        f0 = float(kernel.gradient(w, batch, g))
        reg = _reg_mask(setup)
        lam = float(kernel.lam)
        data_part = g - lam * reg * w
        if not allclose(mu, data_part, 1e-10, 1e-12 * float(np.max(np.abs(data_part)))):
            fail(f"bound(w, B)'s mean is not the batch gradient's data part "
                 f"({max_rel(mu, data_part)})")
        rng = np.random.default_rng([self.seed, 56])
        for scale in (0.01, 0.3, 3.0):
            for _ in range(3):
                d = scale * rng.normal(size=p)
                Sd = S.T @ d
                q = f0 + float(g @ d) + 0.5 * float(Sd @ Sd) + 0.5 * lam * float(reg @ (d * d))
                f = float(kernel.gradient(w + d, batch, np.zeros(p)))
                if f > q + 1e-10 * (abs(q) + 1.0):
                    fail(f"the quadratic bound does not majorise the batch objective: "
                         f"f_B(w + d) = {f!r} > {q!r} for |d| = {np.linalg.norm(d):.3g}")
        return "quadratic bound"

    def _linear_scores(self, kernel: Any, setup: Setup, w: np.ndarray, batch: np.ndarray
                       ) -> str:
        for method in ("score_derivatives", "rows_axpy"):
            if not callable(getattr(kernel, method, None)):
                fail(f"declares linear_scores but its kernel has no {method}")
        p = w.shape[0]
        K = int(getattr(kernel, "n_scores", 0))
        size = batch.shape[0]
        coef, total = kernel.score_derivatives(w, batch)
        coef = np.asarray(coef, dtype=np.float64)
        if coef.shape != (size, K):
            fail(f"score_derivatives returned coef of shape {coef.shape}, expected ({size}, {K})")
        g = np.zeros(p)
        fb = float(kernel.gradient(w, batch, g))
        reg = _reg_mask(setup)
        lam = float(kernel.lam)
        regv = 0.5 * lam * float(reg @ (w * w))
        if not allclose(float(total) / size + regv, fb, 1e-12, 1e-300):
            fail(f"score_derivatives' loss sum / |B| + the regulariser is "
                 f"{float(total) / size + regv!r}, the batch objective {fb!r}")
        out = np.zeros(p)
        kernel.rows_axpy(batch, coef, 1.0 / size, out)
        out += lam * reg * w
        if not allclose(out, g, 1e-10, 1e-12 * float(np.max(np.abs(g)))):
            fail(f"rows_axpy of the score derivatives (plus lam w_reg) is not the batch gradient "
                 f"({max_rel(out, g)})")
        notes = ["linear scores"]
        rgv = getattr(kernel, "reg_gradient_value", None)
        if callable(rgv):
            acc = np.zeros(p)
            val = float(rgv(w, acc))
            if not (allclose(acc, lam * reg * w, 1e-14, 1e-300) and allclose(val, regv, 1e-12,
                                                                               1e-300)):
                fail("reg_gradient_value is not (lam w_reg, lam/2 |w_reg|^2)")
        rng = np.random.default_rng([self.seed, 57])
        dot = getattr(kernel, "rows_dot", None)
        u = None
        if callable(dot):
            v = rng.normal(size=p)
            u = np.asarray(dot(batch, v), dtype=np.float64)
            if np.all(np.isnan(u)):
                u = None
            else:
                c = rng.normal(size=(size, K))
                back = np.zeros(p)
                kernel.rows_axpy(batch, c, 1.0, back)
                if u.shape != (size, K) or not math.isclose(
                        float(np.sum(u * c)), float(v @ back), rel_tol=1e-10,
                        abs_tol=1e-12 * float(np.linalg.norm(v) * np.linalg.norm(back))):
                    fail("rows_dot is not the transpose of rows_axpy")
                notes.append("rows_dot")
        sqn = getattr(kernel, "rows_sqnorm", None)
        if callable(sqn):
            q = np.asarray(sqn(batch, coef), dtype=np.float64)
            if not np.all(np.isnan(q)):
                ref = np.zeros(size)
                for t in range(size):
                    one = np.zeros(p)
                    kernel.rows_axpy(batch[t:t + 1], coef[t:t + 1], 1.0, one)
                    ref[t] = float(one @ one)
                if not allclose(q, ref, 1e-10, 1e-14 * float(np.max(ref) + 1e-300)):
                    fail(f"rows_sqnorm is not the squared norm of each sample's loss gradient "
                         f"({max_rel(q, ref)})")
                notes.append("rows_sqnorm")
        if getattr(kernel, "score_losses", False) and u is not None and dot is not None:
            z = np.asarray(dot(batch, w), dtype=np.float64)
            tot2, coef2 = kernel.scores_loss(batch, z)
            if not (allclose(tot2, total, 1e-12, 1e-300)
                    and allclose(coef2, coef, 1e-12, 1e-14 * float(np.max(np.abs(coef)))) ):
                fail("scores_loss at the scores of w differs from score_derivatives")
            a = 0.3
            d1, d2 = kernel.scores_line(batch, z, u, a)
            h = 1e-5

            def L(x: float) -> float:
                return float(kernel.scores_loss(batch, z - x * u)[0])

            fd1 = (L(a + h) - L(a - h)) / (2 * h)
            if not math.isclose(float(d1), fd1, rel_tol=1e-5, abs_tol=1e-7 * (abs(L(a)) + 1)):
                fail(f"scores_line's first derivative {float(d1)!r} disagrees with central "
                     f"differences of scores_loss ({fd1!r})")
            if math.isfinite(float(d2)):
                fd2 = (float(kernel.scores_line(batch, z, u, a + h)[0])
                       - float(kernel.scores_line(batch, z, u, a - h)[0])) / (2 * h)
                if not math.isclose(float(d2), fd2, rel_tol=1e-4,
                                    abs_tol=1e-6 * (abs(fd2) + abs(float(d1)) + 1)):
                    fail(f"scores_line's second derivative {float(d2)!r} disagrees with central "
                         f"differences of its first ({fd2!r})")
            notes.append("losses of given scores")
        return ", ".join(notes)

    def _margin(self, kernel: Any, setup: Setup, w: np.ndarray) -> str:
        """A sample's loss depends on ``w`` through its score ``x_i . w + b`` only: its
        gradient is along ``[x_i, 1]`` and a move orthogonal to that leaves the loss."""
        if self.component.label_kind != "binary" or setup.problem.n_blocks != 1 \
                or setup.problem.dim != setup.data.dim:
            fail("declares margin (binary loss of y (w.x + b)) but is not binary with one "
                 "block over [x, 1]")
        p = w.shape[0]
        design = setup.data.design()
        reg = _reg_mask(setup)
        lam = float(kernel.lam)
        rng = np.random.default_rng([self.seed, 58])
        for i in (0, 5, 17):
            x = design[i]
            x = np.asarray(x.toarray() if hasattr(x, "toarray") else x, dtype=np.float64).ravel()
            one = np.array([i], dtype=np.intp)
            g = np.zeros(p)
            f = float(kernel.gradient(w, one, g)) - 0.5 * lam * float(reg @ (w * w))
            data = g - lam * reg * w
            along = float(data @ x) / float(x @ x)
            if not allclose(data, along * x, 1e-10, 1e-12 * float(np.max(np.abs(data)))):
                fail(f"declares margin, but sample {i}'s loss gradient is not along [x_i, 1] "
                     f"({max_rel(data, along * x)})")
            d = np.asarray(rng.normal(size=p))
            d -= (float(d @ x) / float(x @ x)) * x
            w2 = w + d
            f2 = float(kernel.gradient(w2, one, np.zeros(p))) - 0.5 * lam * float(reg @ (w2 * w2))
            if not allclose(f2, f, 1e-9, 1e-12):
                fail(f"declares margin, but sample {i}'s loss changed ({f!r} -> {f2!r}) under a "
                     "move that keeps its score")
        return "margin"

    def _probabilistic(self, setup: Setup, w: np.ndarray) -> str:
        """``exp(-loss)`` over every label of a sample sums to one (a negative
        log-likelihood)."""
        X, y = setup.X, setup.y
        labels = np.unique(np.asarray(y))
        rows = [0, 3, 11]
        Xa = np.asarray(X.toarray() if hasattr(X, "toarray") else X)
        Xr = np.repeat(Xa[rows], labels.shape[0], axis=0)
        yr = np.tile(labels, len(rows))
        s = self.setup_on(Xr, yr, fit_intercept=setup.data.fit_intercept, classes=labels)
        kernel = s.objective
        reg = _reg_mask(s)
        lam = float(kernel.lam)
        regv = 0.5 * lam * float(reg @ (w * w))
        p = w.shape[0]
        for r in range(len(rows)):
            total = 0.0
            for k in range(labels.shape[0]):
                j = np.array([r * labels.shape[0] + k], dtype=np.intp)
                total += math.exp(-(float(kernel.gradient(w, j, np.zeros(p))) - regv))
            if not math.isclose(total, 1.0, rel_tol=1e-9):
                fail(f"declares probabilistic, but exp(-loss) over the {labels.shape[0]} labels "
                     f"of sample {rows[r]} sums to {total!r}, not 1")
        return "probabilities"

    def _sample_curvatures(self, kernel: Any, setup: Setup, w: np.ndarray, salt: int,
                           stride: int) -> list[tuple[int, float, float]] | None:
        """For every ``stride``-th sample ``i``: ``(i, v' Hess l_i(w) v, g_i |scores of v|^2)``
        along a random ``v`` (central differences of the single-sample gradient, the
        regulariser's part removed); ``None`` when the kernel gives no ``rows_dot``."""
        dot = getattr(kernel, "rows_dot", None)
        if not callable(dot):
            return None
        p = w.shape[0]
        reg = _reg_mask(setup)
        lam = float(kernel.lam)
        rng = np.random.default_rng([self.seed, salt])
        h = 1e-6 * (1.0 + float(np.linalg.norm(w)))
        out = []
        for i in range(0, setup.problem.n_samples, stride):
            one = np.array([i], dtype=np.intp)
            v = rng.normal(size=p)
            u = np.asarray(dot(one, v), dtype=np.float64)
            if np.any(np.isnan(u)):
                return None
            gp, gm = np.zeros(p), np.zeros(p)
            kernel.gradient(w + h * v, one, gp)
            kernel.gradient(w - h * v, one, gm)
            q = float(v @ (gp - gm)) / (2 * h) - lam * float(reg @ (v * v))
            out.append((i, q, float(setup.data.grad_weight[i]) * float(np.sum(u * u))))
        return out

    def _curvature_bound(self, kernel: Any, setup: Setup, w: np.ndarray) -> str:
        """``v' Hess l_i v <= curvature_bound * |scores of v|^2`` for single samples."""
        bound = float(self.component.curvature_bound)
        found = self._sample_curvatures(kernel, setup, w, 59, 7)
        if found is None:
            return "curvature bound not checked (no rows_dot)"
        worst = 0.0
        for i, q, scale in found:
            cap = bound * scale
            if q > cap * (1 + 1e-5) + 1e-8 * (abs(q) + 1):
                fail(f"curvature_bound = {bound} is not a bound: sample {i}'s loss has curvature "
                     f"{q:.6g} along v, above bound x |scores of v|^2 = {cap:.6g}")
            worst = max(worst, q / cap if cap > 0 else 0.0)
        return f"curvature bound (largest ratio {worst:.3g})"

    def _start_curvature(self, kernel: Any, setup: Setup) -> str:
        """At ``w = 0`` (every score 0), ``v' Hess l_i v = start_curvature * g_i * |scores of
        v|^2`` for single samples, whatever their targets."""
        c = float(self.component.start_curvature)
        found = self._sample_curvatures(kernel, setup, np.zeros(setup.problem.n_params), 61, 5)
        if found is None:
            return "start curvature not checked (no rows_dot)"
        for i, q, scale in found:
            want = c * scale
            if not abs(q - want) <= 1e-5 * (abs(want) + abs(q)) + 1e-8:
                fail(f"start_curvature = {c}: at w = 0 sample {i}'s loss has curvature {q:.6g} "
                     f"along v, not start_curvature x |scores of v|^2 = {want:.6g}")
        return "start curvature"

    def check_capabilities(self) -> str | None:
        caps = self.component.capabilities
        notes = []
        setup = self.setup()
        kernel = self.fresh(setup)
        batch = self.batch(setup, 12, salt=1)
        for _, w in self.points(setup)[:3]:
            if HESSIAN_VECTOR in caps or DENSE_HESSIAN in caps:
                H_fd = self._fd_hessian(kernel, w, batch)
                notes += self._hessian_checks(kernel, setup, w, batch, H_fd, caps)
            if QUADRATIC_BOUND in caps:
                notes.append(self._bound(kernel, setup, w, batch))
            if LINEAR_SCORES in caps:
                notes.append(self._linear_scores(kernel, setup, w, batch))
            if MARGIN in caps:
                notes.append(self._margin(kernel, setup, w))
            if PROBABILISTIC in caps:
                notes.append(self._probabilistic(setup, w))
            if self.component.curvature_bound is not None and SMOOTH in caps:
                notes.append(self._curvature_bound(kernel, setup, w))
        if getattr(self.component, "start_curvature", None) is not None and SMOOTH in caps:
            notes.append(self._start_curvature(kernel, setup))
        seen = list(dict.fromkeys(note.split(" (")[0] for note in notes))
        return ("checked: " + ", ".join(seen)) if seen else "no checkable capability"

    # -- layouts, weights, intercept
    def _evaluate(self, setup: Setup, w: np.ndarray, batch: np.ndarray) -> dict[str, Any]:
        p = w.shape[0]
        kernel = setup.objective
        full, g = np.zeros(p), np.zeros(p)
        F = float(kernel.full_gradient(w, full))
        f = float(kernel.gradient(w, batch, g))
        return {"F": F, "full gradient": full, "f_B": f, "minibatch gradient": g,
                "value": float(kernel.value(w))}

    def _compare(self, got: dict[str, Any], ref: dict[str, Any], what: str, rtol: float
                 ) -> None:
        for key in ref:
            scale = float(np.max(np.abs(ref[key]))) + 1e-300
            if not allclose(got[key], ref[key], rtol, 1e-13 * scale):
                fail(f"{what}: {key} differs ({max_rel(got[key], ref[key])})")

    def check_layouts(self) -> str | None:
        """Dense and CSR (int32 and int64 indices), float64 and float32 storage of the same
        numbers give the same values and gradients."""
        if self._data is not None:
            X, y = self._data
            X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
            X = float32_exact(X)
        else:
            X, y = self.raw_data()
        fit = isinstance(self.intercept_setup(), Setup)
        ref_setup = self.setup_on(X, y, fit_intercept=fit)
        batch = self.batch(ref_setup, 15, salt=2)
        points = self.points(ref_setup)
        refs = [self._evaluate(ref_setup, w, batch) for _, w in points]
        for name, Xl in layouts(X).items():
            s = self.setup_on(Xl, y, fit_intercept=fit)
            if s.problem.n_params != ref_setup.problem.n_params:
                fail(f"{name}: n_params {s.problem.n_params}, dense float64 "
                     f"{ref_setup.problem.n_params}")
            for (label, w), ref in zip(points, refs):
                self._compare(self._evaluate(s, w, batch), ref,
                              f"{name} against dense float64 at {label}", 1e-11)
        return f"{len(layouts(X))} layouts{' with intercept' if fit else ''}"

    def check_sample_weights(self) -> str | None:
        """Integer weights are repetitions of rows, a zero weight removes a row, and scaling
        every weight changes nothing."""
        X, y = self.raw_data()
        X = np.asarray(X.toarray() if hasattr(X, "toarray") else X)
        y = np.asarray(y)
        rng = np.random.default_rng([self.seed, 60])
        counts = np.asarray(rng.integers(0, 4, X.shape[0]))
        counts[[0, 1]] = (0, 3)
        regression = self.component.label_kind == "regression"
        present = np.unique(y[counts > 0])
        if not regression and present.shape[0] < np.unique(y).shape[0]:
            counts[[np.flatnonzero(y == c)[0] for c in np.unique(y)]] = 1
        classes = None if regression else np.unique(y)
        weighted = self.setup_on(X, y, sample_weight=counts.astype(np.float64), classes=classes)
        scaled = self.setup_on(X, y, sample_weight=7.5 * counts.astype(np.float64),
                               classes=classes)
        rep = np.repeat(np.arange(X.shape[0]), counts)
        repeated = self.setup_on(X[rep], y[rep], classes=classes)
        p = weighted.problem.n_params
        everyone = np.arange(X.shape[0], dtype=np.intp)
        for label, w in self.points(weighted)[:3]:
            full_w, full_r = np.zeros(p), np.zeros(p)
            Fw = float(weighted.objective.full_gradient(w, full_w))
            Fr = float(repeated.objective.full_gradient(w, full_r))
            scale = float(np.max(np.abs(full_r))) + 1e-300
            if not (allclose(Fw, Fr, 1e-11, 1e-300) and allclose(full_w, full_r, 1e-10,
                                                                  1e-13 * scale)):
                fail(f"at {label}: integer sample weights are not repetitions of the rows: "
                     f"F {Fw!r} against {Fr!r}, gradient {max_rel(full_w, full_r)}")
            full_s = np.zeros(p)
            Fs = float(scaled.objective.full_gradient(w, full_s))
            if not (allclose(Fs, Fw, 1e-12, 1e-300) and allclose(full_s, full_w, 1e-11,
                                                                  1e-13 * scale)):
                fail(f"at {label}: scaling every sample weight by 7.5 changed the objective "
                     f"({Fw!r} -> {Fs!r})")
            g = np.zeros(p)
            f = float(weighted.objective.gradient(w, everyone, g))
            if not (allclose(f, Fw, 1e-10, 1e-300) and allclose(g, full_w, 1e-10,
                                                                 1e-13 * scale)):
                fail(f"at {label}: with sample weights the minibatch gradient over every sample "
                     f"is not the full gradient ({max_rel(g, full_w)})")
        return None

    def check_intercept(self) -> str | None:
        """With ``fit_intercept`` the last coordinate of each block is the unregularised
        coefficient of a constant column: ``F_b(w) = F_col(w) - lam/2 sum_k b_k^2``."""
        with_b = self.intercept_setup()
        if not isinstance(with_b, Setup):
            return with_b
        if with_b.problem.dim != with_b.data.dim:
            return ("parameters are not blocks over the columns of X (param_layout): the "
                    "intercept is not compared with a constant column")
        X, y = with_b.X, with_b.y
        Xa = np.asarray(X.toarray() if hasattr(X, "toarray") else X)
        col = self.setup_on(np.hstack([Xa, np.ones((Xa.shape[0], 1))]), y)
        if col.problem.n_params != with_b.problem.n_params:
            return "a constant column changes the parameter layout: intercept not compared"
        mask = _reg_mask(with_b)
        lam = float(with_b.objective.lam)
        batch = self.batch(with_b, 15, salt=3)
        for label, w in self.points(with_b):
            b_part = (1.0 - mask) * w
            ref = self._evaluate(col, w, batch)
            got = self._evaluate(with_b, w, batch)
            shift = 0.5 * lam * float(b_part @ b_part)
            for key in ("F", "value", "f_B"):
                if not allclose(got[key] + shift, ref[key], 1e-11, 1e-300):
                    fail(f"at {label}: with an intercept {key} = {got[key]!r}, the constant "
                         f"column gives {ref[key]!r} (the intercept must be unregularised: "
                         f"they differ by lam/2 b^2 = {shift!r})")
            for key in ("full gradient", "minibatch gradient"):
                expect = ref[key] - lam * b_part
                scale = float(np.max(np.abs(expect))) + 1e-300
                if not allclose(got[key], expect, 1e-10, 1e-13 * scale):
                    fail(f"at {label}: with an intercept the {key} is not the constant column's "
                         f"minus lam b ({max_rel(got[key], expect)})")
        return None
