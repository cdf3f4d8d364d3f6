"""Conformance checks of step rules (:class:`sqnopt.interfaces.StepRule`).

Beyond the checks of every kind: ``step_size(t)`` is a positive finite number that depends on
``t`` only (the same whatever the order of the calls and whichever kernel makes them), and a
line search (``line_search``) returns a step ``eps > 0`` with ``w_next = w - eps d``, the batch
objective and gradient at ``w_next``, sufficient decrease ``f(w_next) <= f(w) - c eps g'd`` with
``c = 1e-4`` (Armijo's condition with the customary constant; Nocedal & Wright 2006, Sec. 3.1)
on a convex quadratic along Newton, gradient and badly scaled directions, and refuses an ascent
direction (``g'd < 0``: no step is accepted, NaN).
"""

from __future__ import annotations

import math
from typing import Any, get_args

import numpy as np

from sqnopt.interfaces import SMOOTH, STRONGLY_CONVEX, DirectionScale, StepKernelLike
from sqnopt.testing._core import (
    Check,
    Outputs,
    Setup,
    Suite,
    allclose,
    copy_tree,
    fail,
    first_difference,
    max_rel,
)

__all__ = ["StepSuite"]

#: The sufficient-decrease constant every line search must meet on a convex quadratic.
SUFFICIENT_DECREASE = 1e-4
#: Iterations at which ``step_size`` is asked.
_TS = (*range(60), 99, 1000, 123_456, 10**7)


class _Quadratic:
    """``f(w) = 1/2 w'Aw - b'w`` as an objective kernel (the batch is ignored)."""

    lam = 0.0

    def __init__(self, A: np.ndarray, b: np.ndarray) -> None:
        self.A, self.b = A, b

    @property
    def n_params(self) -> int:
        return int(self.b.shape[0])

    def gradient(self, w: np.ndarray, batch: Any, out: np.ndarray) -> float:
        Aw = self.A @ w
        out[:] = Aw - self.b
        return float(0.5 * w @ Aw - self.b @ w)

    def value(self, w: np.ndarray) -> float:
        return float(0.5 * w @ (self.A @ w) - self.b @ w)

    def full_gradient(self, w: np.ndarray, out: np.ndarray) -> float:
        return self.gradient(w, None, out)


class StepSuite(Suite):
    """The checks of one step rule."""

    kind = "step"
    slot = "step"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._chains: dict[int, list[tuple[np.ndarray, float, np.ndarray, np.ndarray]]] = {}

    def protocol(self) -> type:
        return StepKernelLike

    def fresh(self, setup: Setup) -> Any:
        """A new kernel as the solver builds one: ``init_on_data(problem, data)`` (which is
        ``init`` unless the rule computes its step from the data)."""
        build = getattr(self.component, "init_on_data", None)
        if callable(build):
            return build(setup.problem, setup.data)
        return self.component.init(setup.problem)

    def compiled_base(self) -> type[Any]:
        from sqnopt.steps._base import StepKernel

        return StepKernel

    def declared_flags(self, kernel: Any) -> list[tuple[str, Any, Any]]:
        return [("line_search", bool(self.component.line_search),
                 bool(getattr(kernel, "line_search", False)))]

    # ------------------------------------------------------------------ driving
    def _batch(self, setup: Setup) -> np.ndarray:
        return np.arange(min(60, setup.problem.n_samples), dtype=np.intp)

    def _chain(self, setup: Setup, upto: int) -> list[tuple[np.ndarray, float, np.ndarray,
                                                             np.ndarray]]:
        """The line search's inputs ``(w, f, g, d)`` of steps ``0..upto-1``: a descent on the
        batch objective whose step ``j`` starts where a fresh kernel's search of step ``j - 1``
        ended (so a kernel that keeps what it learnt at the accepted point -- cached scores --
        meets that point again), along the gradient scaled by 1, 8, 1/8 in turn."""
        key = id(setup)
        chain = self._chains.setdefault(key, [])
        if len(chain) >= upto:
            return chain
        obj = setup.objective
        p = setup.problem.n_params
        batch = self._batch(setup)
        scratch = self.fresh(setup)
        w = 0.2 * np.random.default_rng([self.seed, 31]).normal(size=p)
        g = np.zeros(p)
        f = float(obj.gradient(w, batch, g))
        for j in range(upto):
            d = g * (1.0, 8.0, 0.125)[j % 3]
            if j >= len(chain):
                chain.append((w.copy(), f, g.copy(), d.copy()))
            w_next, g_next = np.zeros(p), np.zeros(p)
            eps, f_next, _ = scratch.search(obj, w, batch, f, g, d, w_next, g_next)
            if math.isfinite(eps):
                w, f, g = w_next, float(f_next), g_next
            else:                   # no step: go on from a nearby point
                w = w + 0.01 * np.random.default_rng([self.seed, 32, j]).normal(size=p)
                g = np.zeros(p)
                f = float(obj.gradient(w, batch, g))
        return chain

    def _point(self, setup: Setup, t: int) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
        """The inputs ``(w, f, g, d)`` a point step sees at step ``t`` of the drive: a point
        of a seeded walk (step ``t`` near step ``t - 1``, as iterates are), the batch
        objective and gradient there, the gradient scaled by 1, 2, 1/2 in turn."""
        p = setup.problem.n_params
        rng = np.random.default_rng([self.seed, 35])
        w = 0.2 * rng.normal(size=p)
        for _ in range(t):
            w = w + 0.02 * rng.normal(size=p)
        g = np.zeros(p)
        f = float(setup.objective.gradient(w, self._batch(setup), g))
        return w, f, g, g * (1.0, 2.0, 0.5)[t % 3]

    def drive(self, kernel: Any, setup: Setup, steps: range) -> Outputs:
        """Per step ``t``: ``step_size(t)``; for a point step ``step_at`` at the drive's point
        of step ``t`` (:meth:`_point`); for a line search the search of the chain's step ``t``
        (:meth:`_chain`) on the objective's batch: ``(eps, f_next, evaluations)``, ``w_next``
        and ``g_next``."""
        out: Outputs = []
        search = bool(getattr(kernel, "line_search", False))
        point = bool(getattr(kernel, "uses_point", False))
        chain = self._chain(setup, steps.stop) if search else []
        p = setup.problem.n_params
        for t in steps:
            out.append((f"step {t} step_size", float(kernel.step_size(t))))
            if point:
                w, f, g, d = self._point(setup, t)
                out.append((f"step {t} step_at", float(kernel.step_at(t, f, w, g, d))))
            if search:
                w, f, g, d = chain[t]
                w_next, g_next = np.zeros(p), np.zeros(p)
                eps, f_next, evals = kernel.search(setup.objective, w, self._batch(setup), f, g,
                                                   d, w_next, g_next)
                out += [(f"step {t} eps", float(eps)), (f"step {t} f_next", float(f_next)),
                        (f"step {t} evaluations", int(evals)), (f"step {t} w_next", w_next),
                        (f"step {t} g_next", g_next)]
        return out

    # ------------------------------------------------------------------ checks
    def kind_checks(self) -> list[tuple[str, Check]]:
        checks: list[tuple[str, Check]] = [("check_step_sizes", self.check_step_sizes)]
        if self.component.line_search:
            checks.append(("check_line_search", self.check_line_search))
        if self.component.uses_point:
            checks.append(("check_step_at", self.check_step_at))
        return checks

    def check_component_contract(self) -> str | None:
        super().check_component_contract()
        m = self.component
        if not isinstance(m.line_search, bool):
            fail(f"line_search must be a bool class attribute, got {m.line_search!r}")
        if not isinstance(m.uses_point, bool):
            fail(f"uses_point must be a bool class attribute, got {m.uses_point!r}")
        scales = m.direction_scales
        if not (isinstance(scales, frozenset) and scales
                and scales <= frozenset(get_args(DirectionScale))):
            fail(f"direction_scales must be a non-empty frozenset of {get_args(DirectionScale)}, "
                 f"got {scales!r}")
        return None

    def kernel_contract(self, kernel: Any, setup: Setup) -> None:
        if getattr(kernel, "line_search", False) and not callable(getattr(kernel, "search",
                                                                          None)):
            fail("the kernel declares line_search but has no search()")
        if bool(getattr(kernel, "uses_point", False)) != self.component.uses_point:
            fail(f"the component declares uses_point={self.component.uses_point}, its kernel "
                 f"{bool(getattr(kernel, 'uses_point', False))}")
        if self.component.uses_point and not callable(getattr(kernel, "step_at", None)):
            fail("the kernel declares uses_point but has no step_at()")

    def check_step_sizes(self) -> str | None:
        """Positive finite steps, a function of ``t`` alone."""
        setup = self.setup()
        forward = self.fresh(setup)
        sizes = []
        for t in _TS:
            eps = forward.step_size(t)
            if isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer,
                                                             np.floating)):
                fail(f"step_size({t}) returned {eps!r}, not a number")
            if not (math.isfinite(float(eps)) and float(eps) > 0):
                fail(f"step_size({t}) = {float(eps)!r}: steps must be finite and > 0")
            sizes.append(float(eps))
        backward = self.fresh(setup)
        again = {t: float(backward.step_size(t)) for t in reversed(_TS)}
        repeat = [float(forward.step_size(t)) for t in _TS]
        for t, eps, eps_rep in zip(_TS, sizes, repeat):
            if again[t] != eps or eps_rep != eps:
                fail(f"step_size({t}) is not a function of t: {eps!r} in order, "
                     f"{again[t]!r} from a fresh kernel asked in reverse, {eps_rep!r} asked "
                     "again")
        return f"eps_0 = {sizes[0]:.4g}, eps_{_TS[-1]} = {sizes[-1]:.4g}"

    def check_step_at(self) -> str | None:
        """A step that uses the point: a finite step >= 0 along descent directions of the
        objective's batches, the inputs unchanged, and the same step asked again from the same
        state: a function of the point and ``t`` -- or, for a kernel that declares state
        (``get_state`` not empty: a Barzilai-Borwein step keeps the last point and gradient),
        of the point, ``t`` and that state (asked again after ``set_state`` of the state it
        had, it returns the same step and moves to the same state)."""
        setup = self.setup()
        obj = setup.objective
        p, N = setup.problem.n_params, setup.problem.n_samples
        kernel = self.fresh(setup)
        get = getattr(kernel, "get_state", None)
        stateful = callable(get) and bool(get())
        rng = np.random.default_rng([self.seed, 34])
        steps = []
        for t in _TS:
            w = rng.normal(size=p) * 0.3
            batch = rng.integers(0, N, size=min(N, 8)).astype(np.intp)
            g = np.zeros(p)
            f = float(obj.gradient(w, batch, g))
            for d in (g.copy(), g * rng.uniform(0.5, 2.0, size=p)):   # gradient, preconditioned
                ins = (w.copy(), g.copy(), d.copy())
                before = copy_tree(kernel.get_state()) if stateful else None
                eps = kernel.step_at(t, f, w, g, d)
                if not all(np.array_equal(a, b) for a, b in zip(ins, (w, g, d))):
                    fail(f"step_at({t}, ...) modified w, g or d")
                if isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer,
                                                                 np.floating)):
                    fail(f"step_at({t}, ...) returned {eps!r}, not a number")
                if not (math.isfinite(float(eps)) and float(eps) >= 0):
                    fail(f"step_at({t}, ...) = {float(eps)!r} along a descent direction at a "
                         "finite point: steps must be finite and >= 0")
                if before is not None:
                    after = copy_tree(kernel.get_state())
                    kernel.set_state(copy_tree(before))
                    if float(kernel.step_at(t, f, w, g, d)) != float(eps):
                        fail(f"step_at({t}, ...) is not a function of its arguments and the "
                             "kernel's declared state")
                    diff = first_difference(kernel.get_state(), after, "state")
                    if diff is not None:
                        fail(f"step_at({t}, ...) from the same state and arguments leaves "
                             f"another state ({diff})")
                elif float(kernel.step_at(t, f, w, g, d)) != float(eps):
                    fail(f"step_at({t}, ...) is not a function of its arguments (a kernel whose "
                         "step depends on earlier calls declares that state: get_state)")
                steps.append(float(eps))
        return f"steps in [{min(steps):.4g}, {max(steps):.4g}]"

    def _quadratic(self, p: int) -> _Quadratic:
        rng = np.random.default_rng([self.seed, 33])
        Q = rng.normal(size=(p, p))
        A = Q @ Q.T / p + np.diag(np.linspace(0.1, 10.0, p))
        return _Quadratic(A, rng.normal(size=p))

    def _one_search(self, kernel: Any, obj: Any, w: np.ndarray, batch: np.ndarray,
                    d: np.ndarray, what: str) -> tuple[float, np.ndarray]:
        p = w.shape[0]
        g = np.zeros(p)
        f0 = float(obj.gradient(w, batch, g))
        w_next, g_next = np.full(p, np.nan), np.full(p, np.nan)
        ins = (w.copy(), g.copy(), d.copy(), batch.copy())
        eps, f_next, evals = kernel.search(obj, w, batch, f0, g, d, w_next, g_next)
        if not all(np.array_equal(a, b) for a, b in zip(ins, (w, g, d, batch))):
            fail(f"{what}: search() modified w, g, d or the batch")
        if isinstance(evals, bool) or not isinstance(evals, (int, np.integer)) or evals < 0:
            fail(f"{what}: search() reported {evals!r} evaluations")
        if not math.isfinite(float(eps)):
            return float(eps), w_next
        eps = float(eps)
        gd = float(g @ d)
        if not eps > 0:
            fail(f"{what}: search() accepted the step {eps!r}; steps must be > 0")
        if evals < 1:
            fail(f"{what}: search() accepted a step without evaluating the objective")
        if not allclose(w_next, w - eps * d, 1e-13, 1e-14 * float(np.max(np.abs(w)) + 1)):
            fail(f"{what}: w_next is not w - eps d ({max_rel(w_next, w - eps * d)})")
        g_ref = np.zeros(p)
        f_ref = float(obj.gradient(w_next, batch, g_ref))
        if not allclose(f_next, f_ref, 1e-12, 1e-300):
            fail(f"{what}: f_next = {float(f_next)!r}, the batch objective at w_next is {f_ref!r}")
        if not allclose(g_next, g_ref, 1e-10, 1e-12 * float(np.max(np.abs(g_ref)))):
            fail(f"{what}: g_next is not the batch gradient at w_next ({max_rel(g_next, g_ref)})")
        if not float(f_next) <= f0 - SUFFICIENT_DECREASE * eps * gd + 1e-14 * abs(f0):
            fail(f"{what}: the step eps = {eps:.6g} does not decrease the objective enough: "
                 f"f(w - eps d) = {float(f_next)!r} > f(w) - {SUFFICIENT_DECREASE} eps g'd = "
                 f"{f0 - SUFFICIENT_DECREASE * eps * gd!r}")
        return eps, w_next

    def check_line_search(self) -> str | None:
        """Sufficient decrease on a convex quadratic along Newton, gradient and badly scaled
        directions, NaN for an ascent direction; then the same properties on the objective's
        batch, along the chain of :meth:`drive`."""
        setup = self.setup()
        p = setup.problem.n_params
        quad = self._quadratic(p)
        batch = self._batch(setup)
        rng = np.random.default_rng([self.seed, 34])
        kernel = self.fresh(setup)
        steps: list[float] = []
        beyond = sorted(frozenset(self.component.requires) - {SMOOTH, STRONGLY_CONVEX})
        for j in range(0 if beyond else 3):
            w = rng.normal(size=p)
            g = quad.A @ w - quad.b
            for what, d in (("Newton direction", np.linalg.solve(quad.A, g)),
                            ("gradient direction", g), ("gradient x 40", 40.0 * g),
                            ("gradient / 1000", 1e-3 * g)):
                eps, _ = self._one_search(kernel, quad, w, batch, d, f"quadratic, {what}")
                if not math.isfinite(eps):
                    fail(f"quadratic, {what}: no step accepted along a descent direction of a "
                         "convex quadratic")
                steps.append(eps)
            eps, _ = self._one_search(kernel, quad, w, batch, -g, "quadratic, ascent direction")
            if math.isfinite(eps):
                fail(f"accepted the step {eps:.6g} along an ascent direction (g'd < 0)")
        kernel = self.fresh(setup)
        on = self.objective().describe()
        for t, (w, _, g, d) in enumerate(self._chain(setup, 6)):
            self._one_search(kernel, setup.objective, w, batch, d, f"{on}, chain step {t}")
        if beyond:
            return (f"requires {beyond}, which a quadratic does not provide: sufficient decrease "
                    f"checked on {on}")
        return f"steps on the quadratic from {min(steps):.3g} to {max(steps):.3g}"
