"""Conformance checks for third-party (and built-in) components.

``check_curvature_model(model)`` runs every check on a curvature model and raises
``AssertionError`` naming the first one that fails; ``curvature_model_checks(model)`` returns the
checks as ``(name, callable)`` pairs so a test suite can parametrize over them::

    import pytest
    from sqnopt.testing import curvature_model_checks

    @pytest.mark.parametrize("name, check", curvature_model_checks(MyModel()))
    def test_my_model(name, check):
        check()

The checks cover the contract of :class:`sqnopt.interfaces.CurvatureModel` and its kernel
(:class:`sqnopt.interfaces.CurvatureKernelLike`): component immutability and pickling, kernel
flags and dimension checks, a finite descent direction ``g'Hg > 0`` before and after learning from
secant pairs of a strongly convex quadratic, return codes of ``update_pair`` (a NaN pair is never
accepted), inputs left unmodified, capability requirements enforced when the ``Solver`` is built,
and a short solve through the Python loop and (for compiled kernels) the compiled loop with
bit-identical iterates and consistent pair counts.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from sqnopt.interfaces import (
    BATCH_OBSERVED,
    CURVATURE_ERROR,
    PAIR_ACCEPTED,
    PAIR_RESET,
    PAIR_SKIPPED,
    CurvatureKernelLike,
    CurvatureModel,
    Objective,
    Problem,
)

__all__ = ["check_curvature_model", "curvature_model_checks"]

Check = Callable[[], None]
_CODES = (PAIR_SKIPPED, PAIR_ACCEPTED, PAIR_RESET, CURVATURE_ERROR)


def check_curvature_model(model: CurvatureModel | str, *, objective: Objective | None = None,
                          n_features: int = 6, random_state: int = 0) -> None:
    """Run every conformance check on ``model`` (an instance or a registered name).

    Parameters
    ----------
    model
        The curvature model to check.
    objective
        The objective used by the solver checks; by default the first registered objective that
        provides every capability the model ``requires`` (``logloss`` when it qualifies).
    n_features
        Dimension of the small synthetic problems.
    random_state
        Seed of the synthetic data, pairs and batches.

    Raises
    ------
    AssertionError
        With the name of the failed check and what went wrong.
    """
    for name, check in curvature_model_checks(model, objective=objective, n_features=n_features,
                                              random_state=random_state):
        try:
            check()
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from exc


def curvature_model_checks(model: CurvatureModel | str, *, objective: Objective | None = None,
                           n_features: int = 6, random_state: int = 0
                           ) -> list[tuple[str, Check]]:
    """The conformance checks of ``model`` as ``(name, zero-argument callable)`` pairs."""
    from sqnopt.solver import resolve_component

    m: CurvatureModel = resolve_component("curvature", model, CurvatureModel)
    ctx = _Context(m, objective, n_features, random_state)
    checks: list[tuple[str, Check]] = [
        ("check_component_contract", ctx.check_component_contract),
        ("check_kernel_contract", ctx.check_kernel_contract),
        ("check_direction_fresh", ctx.check_direction_fresh),
        ("check_secant_pairs_spd", ctx.check_secant_pairs_spd),
        ("check_nonfinite_pair_not_accepted", ctx.check_nonfinite_pair_not_accepted),
        ("check_requires_enforced", ctx.check_requires_enforced),
        ("check_solver_paths", ctx.check_solver_paths),
    ]
    label = m.describe()
    return [(f"{name}[{label}]", fn) for name, fn in checks]


def _fail(msg: str) -> NoReturn:
    raise AssertionError(msg)


class _Context:
    """Shared state (model, objective, data) of one model's checks."""

    def __init__(self, model: CurvatureModel, objective: Objective | None, n_features: int,
                 random_state: int) -> None:
        self.model = model
        self.n = int(n_features)
        self.seed = int(random_state)
        self._objective = objective

    # ------------------------------------------------------------------ helpers
    def objective(self) -> Objective:
        if self._objective is not None:
            return self._objective
        from sqnopt.registry import get_registry

        reg = get_registry()
        names = reg.names("objective")
        names.sort(key=lambda s: (s != "logloss", s))
        for name in names:
            try:
                obj = reg.create("objective", name)
            except Exception:
                continue
            if isinstance(obj, Objective) and self.model.requires <= obj.capabilities:
                self._objective = obj
                return obj
        _fail(f"no registered objective provides {sorted(self.model.requires)}; pass objective=")

    def data(self, n_samples: int = 120) -> tuple[Any, Any]:
        obj = self.objective()
        rng = np.random.default_rng(self.seed)
        if obj.label_kind == "binary":
            from sqnopt.datasets import make_boxes

            return make_boxes(n_samples, self.n, random_state=self.seed)
        y = np.arange(n_samples) % 3
        centers = rng.normal(size=(3, self.n))
        return centers[y] + rng.normal(size=(n_samples, self.n)), y

    def problem(self) -> Problem:
        obj = self.objective()
        n_blocks = obj.n_blocks(2 if obj.label_kind == "binary" else 3)
        return Problem(n_samples=120, n_features=self.n, dim=self.n, n_blocks=n_blocks,
                       n_params=n_blocks * self.n, lam=float(getattr(obj, "lam", 0.0)),
                       fit_intercept=False, capabilities=obj.capabilities,
                       curvature_bound=obj.curvature_bound)

    def kernel(self) -> tuple[Any, Problem]:
        problem = self.problem()
        kernel = self.model.init(problem)
        bind = getattr(kernel, "bind", None)
        if self.model.needs_curvature_batch or callable(bind):
            from sqnopt.data import prepare

            obj = self.objective()
            X, y = self.data()
            data = prepare(X, y, label_kind=obj.label_kind)
            okernel = obj.init(data)
            if callable(bind):   # as the solver does when a solve starts
                bind(okernel)
        if self.model.needs_curvature_batch:
            code = kernel.observe_batch(okernel, np.zeros(problem.n_params),
                                        np.arange(min(20, problem.n_samples), dtype=np.intp))
            if code not in (PAIR_ACCEPTED, PAIR_SKIPPED, BATCH_OBSERVED):
                _fail(f"observe_batch on a fresh kernel returned {code}")
        return kernel, problem

    def _direction(self, kernel: Any, g: np.ndarray) -> np.ndarray:
        g_in = g.copy()
        out = np.full_like(g, np.nan)
        ret = kernel.direction(g, out)
        if ret is not None:
            _fail(f"direction() must return None (write into out), returned {ret!r}")
        if not np.array_equal(g, g_in):
            _fail("direction() modified its input gradient")
        if not np.all(np.isfinite(out)):
            _fail(f"direction() left non-finite entries in out: {out}")
        return out

    def _assert_descent(self, kernel: Any, p: int, when: str) -> None:
        rng = np.random.default_rng(self.seed + 7)
        for _ in range(5):
            g = rng.normal(size=p)
            d = self._direction(kernel, g)
            if not float(g @ d) > 0.0:
                _fail(f"{when}: d = H g is not a descent direction (g'd = {g @ d:.3g} <= 0)")

    # ------------------------------------------------------------------ checks
    def check_component_contract(self) -> None:
        m: Any = self.model    # third-party objects: check at run time what the types promise
        if not isinstance(m, CurvatureModel):
            _fail(f"{type(m).__name__} is not a sqnopt.interfaces.CurvatureModel")
        if m.kind != "curvature":
            _fail(f"kind must be 'curvature', got {m.kind!r}")
        if not (isinstance(m.requires, frozenset) and all(isinstance(c, str) for c in m.requires)):
            _fail(f"requires must be a frozenset of capability strings, got {m.requires!r}")
        for flag in ("needs_secant_pair", "needs_curvature_batch"):
            if not isinstance(getattr(m, flag), bool):
                _fail(f"{flag} must be a bool class attribute")
        if not isinstance(m.params(), dict) or not isinstance(m.describe(), str):
            _fail("params() must return a dict and describe() a str")
        fields = list(getattr(m, "__dataclass_fields__", {}))
        if fields:
            try:
                setattr(m, fields[0], getattr(m, fields[0]))
            except dataclasses.FrozenInstanceError:
                pass
            else:
                _fail("components must be immutable (use @dataclass(frozen=True))")
        clone = pickle.loads(pickle.dumps(m))
        if type(clone) is not type(m) or clone.params() != m.params():
            _fail("a pickle round trip must give an equal component")
        if copy.deepcopy(m).params() != m.params():
            _fail("copy.deepcopy must give an equal component")

    def check_kernel_contract(self) -> None:
        from sqnopt.curvature import CurvatureKernel

        kernel, problem = self.kernel()
        if not isinstance(kernel, CurvatureKernelLike):
            _fail(f"init() returned {type(kernel).__name__}, which does not implement "
                  "sqnopt.interfaces.CurvatureKernelLike")
        for flag in ("needs_secant_pair", "needs_curvature_batch"):
            if bool(getattr(kernel, flag)) != bool(getattr(self.model, flag)):
                _fail(f"kernel.{flag} ({getattr(kernel, flag)}) differs from the model's")
        if isinstance(kernel, CurvatureKernel):
            if kernel.dim != problem.n_params:
                _fail(f"kernel.dim is {kernel.dim}, expected n_params={problem.n_params}")
            bad = np.zeros(problem.n_params + 1)
            try:
                kernel.direction(bad, bad)
            except ValueError:
                pass
            else:
                _fail("direction() accepted vectors of the wrong length")
        if not isinstance(kernel.error_message(), str):
            _fail("error_message() must return a str")

    def check_direction_fresh(self) -> None:
        kernel, problem = self.kernel()
        self._assert_descent(kernel, problem.n_params, "fresh kernel")
        d = self._direction(kernel, np.zeros(problem.n_params))
        if np.any(d != 0.0):
            _fail(f"H 0 must be 0, got {d}")

    def _spd_pairs(self, p: int, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
        rng = np.random.default_rng(self.seed + 3)
        Q = rng.normal(size=(p, p))
        A = Q @ Q.T / p + 0.5 * np.eye(p)
        return [(v, A @ v) for v in rng.normal(size=(count, p))]

    def check_secant_pairs_spd(self) -> None:
        if not self.model.needs_secant_pair:
            return
        kernel, problem = self.kernel()
        p = problem.n_params
        codes = []
        for v, r in self._spd_pairs(p, 2 * p + 3):
            v_in, r_in = v.copy(), r.copy()
            code = kernel.update_pair(v, r)
            if not isinstance(code, (int, np.integer)) or int(code) not in _CODES:
                _fail(f"update_pair returned {code!r}; expected one of {_CODES}")
            if not (np.array_equal(v, v_in) and np.array_equal(r, r_in)):
                _fail("update_pair modified its inputs")
            codes.append(int(code))
        if CURVATURE_ERROR in codes:
            _fail("update_pair reported an error on valid pairs of a strongly convex quadratic")
        if PAIR_ACCEPTED not in codes:
            _fail("update_pair accepted none of the pairs of a strongly convex quadratic "
                  f"(codes {codes})")
        self._assert_descent(kernel, p, "after secant pairs of an SPD quadratic")

    def check_nonfinite_pair_not_accepted(self) -> None:
        if not self.model.needs_secant_pair:
            return
        kernel, problem = self.kernel()
        p = problem.n_params
        for v, r in self._spd_pairs(p, 3):
            kernel.update_pair(v, r)
        for bad in (np.nan, np.inf):
            v, r = self._spd_pairs(p, 1)[0]
            r[0] = bad
            code = int(kernel.update_pair(v, r))
            if code == PAIR_ACCEPTED:
                _fail(f"update_pair accepted a pair containing {bad}")
            if code == CURVATURE_ERROR:
                return  # the model stops the solve; nothing more to check
            self._direction(kernel, np.ones(p))

    def check_requires_enforced(self) -> None:
        if not self.model.requires:
            return
        from sqnopt.registry import get_registry
        from sqnopt.solver import IncompatibleComponentsError, Solver

        reg = get_registry()
        for name in reg.names("objective"):
            try:
                obj = reg.create("objective", name)
            except Exception:
                continue
            if isinstance(obj, Objective) and not self.model.requires <= obj.capabilities:
                try:
                    Solver(objective=obj, curvature=self.model)
                except IncompatibleComponentsError:
                    return
                _fail(f"Solver accepted objective {obj.describe()} although the model requires "
                      f"{sorted(self.model.requires)}")

    def check_solver_paths(self) -> None:
        from sqnopt.curvature import CurvatureKernel
        from sqnopt.schedules import Full
        from sqnopt.solver import Solver
        from sqnopt.steps import Constant

        obj = self.objective()
        X, y = self.data()
        n_iter = 15

        def run(path: str) -> tuple[list[np.ndarray], Any]:
            trace: dict[int, np.ndarray] = {}

            def record(info: Any) -> None:
                trace.setdefault(info.iteration, info.w.copy())

            solver = Solver(objective=obj, curvature=self.model, schedule=Full(),
                            step=Constant(0.05), sampling="shuffle", max_iter=n_iter,
                            report_every=1, random_state=self.seed, path=path,  # type: ignore[arg-type]
                            callback=record)
            result = solver.fit(X, y)
            return [trace[t] for t in sorted(trace)], result

        trace_py, res_py = run("python")
        if len(trace_py) != n_iter or not np.all(np.isfinite(res_py.w)):
            _fail("the Python loop did not produce finite iterates")
        state = Solver(objective=obj).init_state(X, y)
        f0 = float(state.objective.value(np.zeros_like(res_py.w)))
        if not res_py.fun < f0:
            _fail(f"{n_iter} full-batch steps of size 0.05 did not decrease F "
                  f"({f0:.6g} -> {res_py.fun:.6g})")
        n_pairs = res_py.n_pairs_accepted + res_py.n_pairs_skipped + res_py.n_resets
        if self.model.needs_secant_pair and n_pairs != res_py.n_iter:
            _fail(f"pair counts ({n_pairs}) do not add up to the iterations ({res_py.n_iter})")
        if self.model.needs_curvature_batch and n_pairs > res_py.n_iter:
            _fail(f"pair counts ({n_pairs}) exceed the curvature batches observed "
                  f"({res_py.n_iter})")
        if not (self.model.needs_secant_pair or self.model.needs_curvature_batch) \
                and n_pairs != 0:
            _fail("a model that observes neither secant pairs nor curvature batches reported "
                  "pair counts")
        kernel, _ = self.kernel()
        auto = Solver(objective=obj, curvature=self.model, schedule=Full(), step=Constant(0.05))
        if isinstance(kernel, CurvatureKernel) and auto.init_state(X, y).compiled:
            trace_c, res_c = run("compiled")
            if not res_c.compiled:
                _fail("path='compiled' did not run compiled")
            for t, (a, b) in enumerate(zip(trace_py, trace_c)):
                if not np.array_equal(a, b):
                    _fail(f"compiled and Python loops differ at iteration {t + 1}: "
                          f"max |diff| = {np.max(np.abs(a - b)):.3g}")
            if (res_c.n_pairs_accepted, res_c.n_pairs_skipped, res_c.n_resets) != (
                    res_py.n_pairs_accepted, res_py.n_pairs_skipped, res_py.n_resets):
                _fail("compiled and Python loops report different pair counts")
