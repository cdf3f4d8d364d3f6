"""Conformance checks of curvature models (:class:`sqnopt.interfaces.CurvatureModel`).

Beyond the checks of every kind: the model's flags are bools and its declarations valid, the
kernel checks its dimensions, ``d = H g`` is a finite descent direction (``g'Hg > 0``) before
and after learning from secant pairs of a strongly convex quadratic, ``update_pair`` returns its
codes and never accepts a non-finite pair, inputs are left unmodified, and a short solve runs
through the Python loop and (for compiled kernels) the compiled loop with bit-identical iterates
and consistent pair counts.
"""

from __future__ import annotations

from typing import Any, get_args

import numpy as np

from sqnopt.interfaces import (
    BATCH_OBSERVED,
    CURVATURE_ERROR,
    PAIR_ACCEPTED,
    PAIR_RESET,
    PAIR_SKIPPED,
    CurvatureKernelLike,
    DirectionScale,
)
from sqnopt.testing._core import Check, Outputs, Setup, Suite, fail

__all__ = ["CurvatureSuite"]

_CODES = (PAIR_SKIPPED, PAIR_ACCEPTED, PAIR_RESET, CURVATURE_ERROR)
_FLAGS = ("needs_secant_pair", "needs_curvature_batch", "direction_is_gradient", "majorizes",
          "full_batch")


class CurvatureSuite(Suite):
    """The checks of one curvature model."""

    kind = "curvature"
    slot = "curvature"

    def protocol(self) -> type:
        return CurvatureKernelLike

    def compiled_base(self) -> type[Any]:
        from sqnopt.curvature import CurvatureKernel

        return CurvatureKernel

    def declared_flags(self, kernel: Any) -> list[tuple[str, Any, Any]]:
        m = self.component
        return [(flag, bool(getattr(m, flag)), bool(getattr(kernel, flag, False)))
                for flag in ("needs_secant_pair", "needs_curvature_batch",
                             "direction_is_gradient")]

    # ------------------------------------------------------------------ driving
    def _quadratic(self, p: int) -> np.ndarray:
        rng = np.random.default_rng(self.seed + 3)
        Q = rng.normal(size=(p, p))
        return np.asarray(Q @ Q.T / p + 0.5 * np.eye(p))

    def _spd_pairs(self, p: int, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
        rng = np.random.default_rng(self.seed + 3)
        Q = rng.normal(size=(p, p))
        A = Q @ Q.T / p + 0.5 * np.eye(p)
        return [(v, A @ v) for v in rng.normal(size=(count, p))]

    def _batch(self, rng: np.random.Generator, n_samples: int) -> np.ndarray:
        size = min(20, n_samples)
        return np.sort(rng.choice(n_samples, size=size, replace=False)).astype(np.intp)

    def drive(self, kernel: Any, setup: Setup, steps: range) -> Outputs:
        """Per step, in the driver's order: ``observe_batch`` (models that need curvature
        batches), ``direction``, ``update_pair`` with a secant pair of a strongly convex
        quadratic (models that need secant pairs), and the samples counted in
        ``extra_samples`` (collected and reset, as the driver does)."""
        p = setup.problem.n_params
        A = self._quadratic(p)
        out: Outputs = []
        m = self.component
        for j in steps:
            rng = np.random.default_rng([self.seed, 11, j])
            if m.needs_curvature_batch:
                w = 0.1 * rng.normal(size=p)
                code = kernel.observe_batch(setup.objective, w,
                                            self._batch(rng, setup.problem.n_samples))
                out.append((f"step {j} observe_batch", int(code)))
            g = rng.normal(size=p)
            d = np.zeros(p)
            kernel.direction(g, d)
            out.append((f"step {j} direction", d))
            if m.needs_secant_pair:
                v = rng.normal(size=p)
                out.append((f"step {j} update_pair", int(kernel.update_pair(v, A @ v))))
            extra = getattr(kernel, "extra_samples", None)
            if extra is not None:
                out.append((f"step {j} extra_samples", int(extra)))
                kernel.extra_samples = 0
        return out

    def kernel(self) -> tuple[Any, Any]:
        """A fresh kernel for the small problem (one curvature batch observed for models that
        need them, so that they have a direction), and the problem."""
        setup = self.setup()
        kernel = self.fresh(setup)
        if self.component.needs_curvature_batch:
            n = setup.problem.n_samples
            code = kernel.observe_batch(setup.objective, np.zeros(setup.problem.n_params),
                                        np.arange(min(20, n), dtype=np.intp))
            if code not in (PAIR_ACCEPTED, PAIR_SKIPPED, BATCH_OBSERVED):
                fail(f"observe_batch on a fresh kernel returned {code}")
        return kernel, setup.problem

    def _direction(self, kernel: Any, g: np.ndarray) -> np.ndarray:
        g_in = g.copy()
        out = np.full_like(g, np.nan)
        ret = kernel.direction(g, out)
        if ret is not None:
            fail(f"direction() must return None (write into out), returned {ret!r}")
        if not np.array_equal(g, g_in):
            fail("direction() modified its input gradient")
        if not np.all(np.isfinite(out)):
            fail(f"direction() left non-finite entries in out: {out}")
        return out

    def _assert_descent(self, kernel: Any, p: int, when: str) -> None:
        rng = np.random.default_rng(self.seed + 7)
        for _ in range(5):
            g = rng.normal(size=p)
            d = self._direction(kernel, g)
            if not float(g @ d) > 0.0:
                fail(f"{when}: d = H g is not a descent direction (g'd = {g @ d:.3g} <= 0)")

    # ------------------------------------------------------------------ checks
    def kind_checks(self) -> list[tuple[str, Check]]:
        return [
            ("check_direction_fresh", self.check_direction_fresh),
            ("check_secant_pairs_spd", self.check_secant_pairs_spd),
            ("check_nonfinite_pair_not_accepted", self.check_nonfinite_pair_not_accepted),
        ]

    def check_component_contract(self) -> str | None:
        super().check_component_contract()
        m = self.component
        for flag in _FLAGS:
            if not isinstance(getattr(m, flag), bool):
                fail(f"{flag} must be a bool class attribute, got {getattr(m, flag)!r}")
        if m.direction_scale not in get_args(DirectionScale):
            fail(f"direction_scale must be one of {get_args(DirectionScale)}, got "
                 f"{m.direction_scale!r}")
        per = m.batches_per_update
        if isinstance(per, bool) or not isinstance(per, (int, np.integer)) or per < 1:
            fail(f"batches_per_update must be an integer >= 1, got {per!r}")
        return None

    def kernel_contract(self, kernel: Any, setup: Setup) -> None:
        base = self.compiled_base()
        p = setup.problem.n_params
        if isinstance(kernel, base):
            if kernel.dim != p:
                fail(f"kernel.dim is {kernel.dim}, expected n_params={p}")
            bad = np.zeros(p + 1)
            try:
                kernel.direction(bad, bad)
            except ValueError:
                pass
            else:
                fail("direction() accepted vectors of the wrong length")
        if not isinstance(kernel.error_message(), str):
            fail("error_message() must return a str")
        if getattr(kernel, "direction_is_gradient", False):
            kernel, _ = self.kernel()
            g = np.random.default_rng(self.seed).normal(size=p)
            d = self._direction(kernel, g)
            if d.tobytes() != g.tobytes():
                fail("the kernel declares direction_is_gradient but direction(g) is not g")

    def check_direction_fresh(self) -> str | None:
        kernel, problem = self.kernel()
        self._assert_descent(kernel, problem.n_params, "fresh kernel")
        d = self._direction(kernel, np.zeros(problem.n_params))
        if np.any(d != 0.0):
            fail(f"H 0 must be 0, got {d}")
        return None

    def check_secant_pairs_spd(self) -> str | None:
        if not self.component.needs_secant_pair:
            return "needs no secant pairs: not run"
        kernel, problem = self.kernel()
        p = problem.n_params
        codes = []
        for v, r in self._spd_pairs(p, 2 * p + 3):
            v_in, r_in = v.copy(), r.copy()
            code = kernel.update_pair(v, r)
            if not isinstance(code, (int, np.integer)) or int(code) not in _CODES:
                fail(f"update_pair returned {code!r}; expected one of {_CODES}")
            if not (np.array_equal(v, v_in) and np.array_equal(r, r_in)):
                fail("update_pair modified its inputs")
            codes.append(int(code))
        if CURVATURE_ERROR in codes:
            fail("update_pair reported an error on valid pairs of a strongly convex quadratic")
        if PAIR_ACCEPTED not in codes:
            fail("update_pair accepted none of the pairs of a strongly convex quadratic "
                 f"(codes {codes})")
        self._assert_descent(kernel, p, "after secant pairs of an SPD quadratic")
        return None

    def check_nonfinite_pair_not_accepted(self) -> str | None:
        if not self.component.needs_secant_pair:
            return "needs no secant pairs: not run"
        kernel, problem = self.kernel()
        p = problem.n_params
        for v, r in self._spd_pairs(p, 3):
            kernel.update_pair(v, r)
        for bad in (np.nan, np.inf):
            v, r = self._spd_pairs(p, 1)[0]
            r[0] = bad
            code = int(kernel.update_pair(v, r))
            if code == PAIR_ACCEPTED:
                fail(f"update_pair accepted a pair containing {bad}")
            if code == CURVATURE_ERROR:
                return None  # the model stops the solve; nothing more to check
            self._direction(kernel, np.ones(p))
        return None

    def check_solver_paths(self) -> str | None:
        from sqnopt.schedules import Full
        from sqnopt.solver import Solver
        from sqnopt.steps import Constant

        obj = self.objective()
        X, y = self.raw_data()
        n_iter = 15
        m = self.component

        def run(path: str) -> tuple[list[np.ndarray], Any]:
            trace: dict[int, np.ndarray] = {}

            def record(info: Any) -> None:
                trace.setdefault(info.iteration, info.w.copy())

            solver = Solver(objective=obj, curvature=m, schedule=Full(),
                            step=Constant(0.05), sampling="shuffle", max_iter=n_iter,
                            report_every=1, random_state=self.seed, path=path,  # type: ignore[arg-type]
                            callback=record)
            result = solver.fit(X, y)
            return [trace[t] for t in sorted(trace)], result

        trace_py, res_py = run("python")
        if len(trace_py) != n_iter or not np.all(np.isfinite(res_py.w)):
            fail("the Python loop did not produce finite iterates")
        state = Solver(objective=obj).init_state(X, y)
        f0 = float(state.objective.value(np.zeros_like(res_py.w)))
        if not res_py.fun < f0:
            fail(f"{n_iter} full-batch steps of size 0.05 did not decrease F "
                 f"({f0:.6g} -> {res_py.fun:.6g})")
        n_pairs = res_py.n_pairs_accepted + res_py.n_pairs_skipped + res_py.n_resets
        if m.needs_secant_pair and n_pairs != res_py.n_iter:
            fail(f"pair counts ({n_pairs}) do not add up to the iterations ({res_py.n_iter})")
        if m.needs_curvature_batch and n_pairs > res_py.n_iter:
            fail(f"pair counts ({n_pairs}) exceed the curvature batches observed "
                 f"({res_py.n_iter})")
        if not (m.needs_secant_pair or m.needs_curvature_batch) and n_pairs != 0:
            fail("a model that observes neither secant pairs nor curvature batches reported "
                 "pair counts")
        kernel, _ = self.kernel()
        auto = Solver(objective=obj, curvature=m, schedule=Full(), step=Constant(0.05))
        if not (isinstance(kernel, self.compiled_base()) and auto.init_state(X, y).compiled):
            return "Python loop only (the kernel is not compiled)"
        trace_c, res_c = run("compiled")
        if not res_c.compiled:
            fail("path='compiled' did not run compiled")
        for t, (a, b) in enumerate(zip(trace_py, trace_c)):
            if not np.array_equal(a, b):
                fail(f"compiled and Python loops differ at iteration {t + 1}: "
                     f"max |diff| = {np.max(np.abs(a - b)):.3g}")
        if (res_c.n_pairs_accepted, res_c.n_pairs_skipped, res_c.n_resets) != (
                res_py.n_pairs_accepted, res_py.n_pairs_skipped, res_py.n_resets):
            fail("compiled and Python loops report different pair counts")
        return None
