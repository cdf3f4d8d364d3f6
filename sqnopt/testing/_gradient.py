"""Conformance checks of gradient estimators (:class:`sqnopt.interfaces.GradientEstimator`).

Beyond the checks of every kind: each estimate reports the minibatch objective ``f_B(w)`` and
(when asked) the plain minibatch gradient ``s(w, B)`` of the objective, leaves its inputs
alone, and does not depend on whether the plain gradient was asked for; an estimator whose
kernel declares ``plain`` or ``batch_gradient`` (the driver may use ``s(w, B)`` in its place)
estimates exactly ``s(w, B)``, and one declaring ``partial_sums`` ``"minibatch"`` or
``"variance_test"`` estimates ``s(w, B)``; a full-batch estimate is the full gradient; a
variance-reduced estimator (``vanishing_variance``) estimates the full gradient at its
snapshot whatever the batch; the batch sizes an estimator chooses (``sizes_batches``) lie in
``[1, n]``; overlapping batches (``overlap_pairs``) share samples and give the curvature pair of
the step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sqnopt.interfaces import GradientKernelLike
from sqnopt.testing._core import Check, Outputs, Setup, Suite, allclose, fail, max_rel

__all__ = ["GradientSuite"]

_RTOL = 1e-10
#: The capabilities a gradient kernel declares (``sqnopt/gradients/_base.pxd``).
_KERNEL_FLAGS = ("plain", "batch_gradient", "sizes_batches", "overlap_pairs", "score_table",
                 "table_frozen")


def _flag(kernel: Any, name: str) -> bool:
    return bool(getattr(kernel, name, False))


class GradientSuite(Suite):
    """The checks of one gradient estimator."""

    kind = "gradient"
    slot = "gradient"

    def protocol(self) -> type:
        return GradientKernelLike

    def declared_flags(self, kernel: Any) -> list[tuple[str, Any, Any]]:
        """The kernel capabilities the driver reads (with a default of False) that the
        component declares too."""
        m = type(self.component)
        return [(flag, bool(getattr(m, flag)), _flag(kernel, flag))
                for flag in _KERNEL_FLAGS if hasattr(m, flag)]

    def compiled_base(self) -> type[Any]:
        from sqnopt.gradients._base import GradientKernel

        return GradientKernel

    # ------------------------------------------------------------------ driving
    def _point(self, rng: np.random.Generator, p: int) -> np.ndarray:
        return np.asarray(0.3 * rng.normal(size=p))

    def _batch(self, rng: np.random.Generator, n_samples: int, size: int) -> np.ndarray:
        size = max(1, min(int(size), n_samples))
        return np.asarray(rng.integers(0, n_samples, size), dtype=np.intp)

    def drive(self, kernel: Any, setup: Setup, steps: range) -> Outputs:
        """Per step, as the driver does: the batch size (estimators that size batches), the
        batch drawn and arranged (overlapping batches), the estimate with the plain gradient,
        and the curvature pair (overlapping batches). Batches grow by two samples a step (a
        shrinking batch is :meth:`check_batch_decisions`' case)."""
        p, N = setup.problem.n_params, setup.problem.n_samples
        out: Outputs = []
        for j in steps:
            rng = np.random.default_rng([self.seed, 21, j])
            size = 4 + 2 * j                 # growing, as the built-in schedules' batches
            if _flag(kernel, "sizes_batches"):
                size = int(kernel.batch_size(size))
                out.append((f"step {j} batch_size", size))
            batch = self._batch(rng, N, size)
            if _flag(kernel, "overlap_pairs"):
                batch = np.asarray(kernel.arrange(batch), dtype=np.intp)
                out.append((f"step {j} arrange", batch.copy()))
            w = self._point(rng, p)
            g, plain = np.zeros(p), np.zeros(p)
            f, extra = kernel.estimate(setup.objective, w, batch, g, plain)
            out += [(f"step {j} f_B", float(f)), (f"step {j} extra", int(extra)),
                    (f"step {j} estimate", g), (f"step {j} plain", plain)]
            if _flag(kernel, "overlap_pairs"):
                v, r = np.zeros(p), np.zeros(p)
                has = bool(kernel.pair(w, v, r))
                out += [(f"step {j} pair", has), (f"step {j} v", v), (f"step {j} r", r)]
        return out

    # ------------------------------------------------------------------ checks
    def kind_checks(self) -> list[tuple[str, Check]]:
        checks: list[tuple[str, Check]] = [
            ("check_estimates", self.check_estimates),
            ("check_full_batch", self.check_full_batch),
        ]
        if self.component.vanishing_variance:
            checks.append(("check_snapshot_estimate", self.check_snapshot_estimate))
        checks.append(("check_batch_decisions", self.check_batch_decisions))
        return checks

    def kernel_contract(self, kernel: Any, setup: Setup) -> None:
        m = self.component
        if m.partial_sums not in (None, "minibatch", "snapshot", "variance_test"):
            fail(f"partial_sums must be None, 'minibatch', 'snapshot' or 'variance_test', got "
                 f"{m.partial_sums!r}")
        if not isinstance(m.vanishing_variance, bool):
            fail(f"vanishing_variance must be a bool class attribute, got "
                 f"{m.vanishing_variance!r}")
        if _flag(kernel, "table_frozen") and not _flag(kernel, "score_table"):
            fail("the kernel declares table_frozen without score_table")
        if _flag(kernel, "score_table") and not int(getattr(setup.objective, "n_scores", 0)) > 0:
            fail("the kernel declares score_table on an objective kernel without linear scores "
                 "(n_scores = 0)")
        for flag, methods in (("sizes_batches", ("batch_size",)),
                              ("overlap_pairs", ("arrange", "pair", "reused"))):
            if _flag(kernel, flag):
                missing = [m for m in methods if not callable(getattr(kernel, m, None))]
                if missing:
                    fail(f"the kernel declares {flag} but has no {', '.join(missing)}")

    def check_estimates(self) -> str | None:
        """``(f_B(w), extra)`` and the plain gradient are the objective's; the estimate is
        finite, the same with or without ``plain``, and exactly ``s(w, B)`` where declared."""
        setup = self.setup()
        obj = setup.objective
        p, N = setup.problem.n_params, setup.problem.n_samples
        k1, k2 = self.fresh(setup), self.fresh(setup)
        exact = _flag(k1, "plain")
        minibatch = (self.component.partial_sums in ("minibatch", "variance_test")
                     or _flag(k1, "batch_gradient"))
        for j, size in enumerate((1, 3, 3, 8, 20, 29)):
            rng = np.random.default_rng([self.seed, 22, j])
            w = self._point(rng, p)
            batch = self._batch(rng, N, size)
            if _flag(k1, "overlap_pairs"):
                batch = np.asarray(k1.arrange(batch), dtype=np.intp)
                k2.arrange(batch.copy())
            w_in, b_in = w.copy(), batch.copy()
            g, plain = np.zeros(p), np.zeros(p)
            f, extra = k1.estimate(obj, w, batch, g, plain)
            if not (np.array_equal(w, w_in) and np.array_equal(batch, b_in)):
                fail("estimate() modified its inputs w or batch")
            g2 = np.zeros(p)
            f2, extra2 = k2.estimate(obj, w, batch, g2)
            if g2.tobytes() != g.tobytes() or float(f2) != float(f) or int(extra2) != int(extra):
                fail(f"estimate {j + 1}: the estimate differs with and without plain= "
                     f"({max_rel(g2, g)}): the driver asks for the plain gradient only with "
                     "secant models")
            s = np.zeros(p)
            fs = float(obj.gradient(w, batch, s))
            if isinstance(extra, bool) or not isinstance(extra, (int, np.integer)) or extra < 0:
                fail(f"estimate() returned extra={extra!r}: samples touched beyond the batch "
                     "(an integer >= 0)")
            if not np.all(np.isfinite(g)):
                fail(f"estimate {j + 1} is not finite")
            scale = float(np.max(np.abs(s))) + 1e-300
            if not allclose(plain, s, _RTOL, 1e-12 * scale):
                fail(f"estimate {j + 1}: plain is not the minibatch gradient s(w, B) "
                     f"({max_rel(plain, s)})")
            if not allclose(f, fs, _RTOL, 1e-300):
                fail(f"estimate {j + 1}: returned f_B(w) = {float(f)!r}, the objective's "
                     f"minibatch value is {fs!r}")
            if exact and (g.tobytes() != s.tobytes() or float(f) != fs):
                fail(f"estimate {j + 1}: the kernel declares plain (the driver calls the "
                     f"objective in its place) but the estimate is not s(w, B) bit for bit "
                     f"({max_rel(g, s)})")
            if minibatch and not allclose(g, s, _RTOL, 1e-12 * scale):
                fail(f"estimate {j + 1}: the estimator declares the minibatch gradient "
                     f"(partial_sums={self.component.partial_sums!r}, batch_gradient="
                     f"{_flag(k1, 'batch_gradient')}), but the estimate differs "
                     f"({max_rel(g, s)})")
            if _flag(k1, "overlap_pairs"):
                k1.pair(w, np.zeros(p), np.zeros(p))
                k2.pair(w, np.zeros(p), np.zeros(p))
        return None

    def check_full_batch(self) -> str | None:
        """An estimate on the whole data set is the full gradient (and ``f_B`` is ``F``)."""
        setup = self.setup()
        obj = setup.objective
        p, N = setup.problem.n_params, setup.problem.n_samples
        kernel = self.fresh(setup)
        everyone = np.arange(N, dtype=np.intp)
        for j in range(3):
            w = self._point(np.random.default_rng([self.seed, 23, j]), p)
            g, full = np.zeros(p), np.zeros(p)
            f, _ = kernel.estimate(obj, w, everyone, g)
            F = float(obj.full_gradient(w, full))
            if not allclose(g, full, _RTOL, 1e-12 * float(np.max(np.abs(full)))):
                fail(f"full-batch estimate {j + 1} is not the full gradient ({max_rel(g, full)})")
            if not allclose(f, F, _RTOL, 1e-300):
                fail(f"full-batch estimate {j + 1} reports f_B = {float(f)!r}, F(w) = {F!r}")
            if _flag(kernel, "overlap_pairs"):
                kernel.pair(w, np.zeros(p), np.zeros(p))
        return None

    def check_snapshot_estimate(self) -> str | None:
        """``vanishing_variance``: after an estimate at ``w`` (which takes the snapshot, or
        fills the table, there), every estimate at ``w`` is the full gradient, whatever the
        batch: the variance vanishes at the snapshot."""
        setup = self.setup()
        obj = setup.objective
        p, N = setup.problem.n_params, setup.problem.n_samples
        kernel = self.fresh(setup)
        rng = np.random.default_rng([self.seed, 24])
        w = self._point(rng, p)
        full = np.zeros(p)
        obj.full_gradient(w, full)
        scale = float(np.max(np.abs(full)))
        for j in range(4):
            g = np.zeros(p)
            kernel.estimate(obj, w, self._batch(rng, N, int(rng.integers(1, 10))), g)
            if j and not allclose(g, full, 1e-9, 1e-12 * scale):
                fail(f"declares vanishing_variance, but estimate {j + 1} at the snapshot point is "
                     f"not the full gradient ({max_rel(g, full)})")
        return None

    def check_batch_decisions(self) -> str | None:
        """Estimators that size batches return sizes in ``[1, n]``; overlapping batches keep
        their size and indices, share samples with the previous batch (unless a shrunk batch
        has no room beside the kept samples), and give the pair
        ``v = w_{k+1} - w_k`` and a finite ``r`` with ``v'r >= 0`` on a convex objective, also
        when the schedule shrinks the batch."""
        setup = self.setup()
        obj = setup.objective
        p, N = setup.problem.n_params, setup.problem.n_samples
        kernel = self.fresh(setup)
        notes = []
        if _flag(kernel, "sizes_batches"):
            rng = np.random.default_rng([self.seed, 25])
            for j in range(6):
                w = self._point(rng, p)
                kernel.estimate(obj, w, self._batch(rng, N, 10), np.zeros(p))
                for scheduled in (1, 5, N):
                    b = kernel.batch_size(scheduled)
                    if isinstance(b, bool) or not isinstance(b, (int, np.integer)) \
                            or not 1 <= b <= N:
                        fail(f"batch_size({scheduled}) returned {b!r}, not an integer in "
                             f"[1, {N}]")
            notes.append("sizes its batches")
        elif callable(getattr(kernel, "batch_size", None)):
            for scheduled in (1, 5, N):
                if kernel.batch_size(scheduled) != scheduled:
                    fail(f"the kernel does not declare sizes_batches, but batch_size"
                         f"({scheduled}) returns {kernel.batch_size(scheduled)}")
        if _flag(kernel, "overlap_pairs"):
            kernel = self.fresh(setup)
            rng = np.random.default_rng([self.seed, 26])
            prev: np.ndarray | None = None
            w_prev: np.ndarray | None = None
            for j, size in enumerate((12, 12, 2, 12, 12)):     # a schedule may shrink batches
                drawn = self._batch(rng, N, size)
                drawn_in = drawn.copy()
                batch = np.asarray(kernel.arrange(drawn), dtype=np.intp)
                if not np.array_equal(drawn, drawn_in):
                    fail("arrange() modified the drawn batch (it returns the arranged copy)")
                if batch.shape != drawn.shape or batch.min() < 0 or batch.max() >= N:
                    fail(f"arrange() returned {batch!r} for a batch of {drawn.shape[0]} indices "
                         f"in [0, {N})")
                # a batch smaller than the previous one may have no room beside the samples
                # kept from it: then the kernel may leave it as drawn (and evaluate the kept
                # samples on their own); the pair is checked below either way
                if prev is not None and not np.intersect1d(prev, batch).size \
                        and batch.shape[0] >= prev.shape[0]:
                    fail("declares overlap_pairs, but the arranged batch shares no sample with "
                         "the previous one")
                w = self._point(rng, p)
                kernel.estimate(obj, w, batch, np.zeros(p))
                v, r = np.zeros(p), np.zeros(p)
                has = kernel.pair(w, v, r)
                if w_prev is not None:
                    if not has:
                        fail(f"batch {j + 1}: pair() gave no curvature pair after two "
                             "overlapping batches")
                    if not allclose(v, w - w_prev, 1e-12, 1e-15):
                        fail(f"batch {j + 1}: the pair's v is not w_k+1 - w_k "
                             f"({max_rel(v, w - w_prev)})")
                    if not np.all(np.isfinite(r)):
                        fail(f"batch {j + 1} (of {batch.shape[0]} samples after one of "
                             f"{prev.shape[0] if prev is not None else 0}): the pair's r is not "
                             "finite")
                    if float(v @ r) < -1e-12 * float(np.linalg.norm(v) * np.linalg.norm(r)):
                        fail(f"batch {j + 1}: the pair has v'r = {float(v @ r):.3g} < 0 on a "
                             "convex objective")
                prev, w_prev = batch, w
            notes.append("overlapping batches")
        return ", ".join(notes) if notes else None
