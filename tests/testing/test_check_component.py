"""``sqnopt.testing.check_component``: its interface (kinds, names, report, errors) and, for
every check, a component that breaks what the check checks and fails it by name -- so that no
check is one that cannot fail."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from sqnopt import (
    L2Ball,
    LogLoss,
    Solver,
)
from sqnopt.curvature.reference import IdentityKernelNumPy, IdentityNumPy, LBFGSNumPy
from sqnopt.data import Dataset
from sqnopt.gradients.reference import MinibatchNumPy, _MinibatchKernelNumPy
from sqnopt.interfaces import (
    HESSIAN_VECTOR,
    LINEAR_SCORES,
    PAIR_ACCEPTED,
    PAIR_RESET,
    PAIR_SKIPPED,
    PROBABILISTIC,
    STRONGLY_CONVEX,
    BatchSchedule,
    CurvatureModel,
    GradientEstimator,
    Problem,
    Projection,
    StepRule,
)
from sqnopt.objectives.reference import (
    LogLossNumPy,
    MarginKernelNumPy,
    SquaredHingeNumPy,
    logistic_dloss_dmargin,
    logistic_loss,
)
from sqnopt.projections.reference import L2BallNumPy, _L2BallKernel, _reg_view
from sqnopt.registry import get_registry, register_plugin, reset_registry
from sqnopt.schedules.reference import FixedNumPy
from sqnopt.steps.reference import ArmijoNumPy, ConstantNumPy, _Armijo
from sqnopt.testing import (
    ConformanceError,
    ConformanceReport,
    check_component,
    check_curvature_model,
    component_checks,
    component_kind,
    curvature_model_checks,
)


def run_check(component: Any, check: str, **options: Any) -> str | None:
    """Run the check named ``check`` alone."""
    for name, fn in component_checks(component, **options):
        if name.split("[", 1)[0] == check:
            return fn()
    raise LookupError(f"{component!r} has no check {check}")


def fails(component: Any, check: str, match: str = "", **options: Any) -> ConformanceError:
    with pytest.raises(ConformanceError, match=match) as info:
        run_check(component, check, **options)
    assert info.value.check == check
    assert info.value.component == component.describe()
    return info.value


# ---------------------------------------------------------------------------- the interface
@pytest.mark.parametrize("kind", ["objective", "curvature", "gradient", "step", "schedule",
                                  "projection"])
def test_kind_comes_from_the_interface(kind: str) -> None:
    reg = get_registry()
    for name in reg.names(kind):  # type: ignore[arg-type]
        assert component_kind(reg.create(kind, name)) == kind  # type: ignore[arg-type]


def test_not_a_component() -> None:
    with pytest.raises(TypeError, match="implements none"):
        component_kind(object())
    with pytest.raises(TypeError, match="implements none"):
        check_component(3.5)


def test_names_and_ambiguous_names() -> None:
    report = check_component("fixed", kind="schedule")
    assert report.kind == "schedule" and "check_batch_sizes" in report.passed
    with pytest.raises(ValueError, match="curvature and gradient"):
        component_checks("sgd")            # identity's alias and the minibatch gradient's
    names = [name for name, _ in component_checks(("sgd", {}), kind="gradient")]
    assert names[0] == "check_component_contract[minibatch()]"
    with pytest.raises(TypeError, match="is a step component, not a curvature"):
        check_curvature_model(ConstantNumPy())


def test_report() -> None:
    report = check_component(IdentityNumPy())
    assert isinstance(report, ConformanceReport)
    assert report.component == "identity_numpy()" and report.kind == "curvature"
    assert report.passed[0] == "check_component_contract" and len(set(report.passed)) == len(
        report.passed)
    assert report.notes["check_state_round_trip"].startswith("no declared state")
    assert "identity_numpy()" in str(report) and "checks passed" in str(report)


def test_checks_are_named_for_parametrization() -> None:
    for comp in (LogLoss(), LBFGSNumPy(), MinibatchNumPy(), ConstantNumPy(), FixedNumPy(),
                 L2Ball(1.0)):
        names = [name for name, _ in component_checks(comp)]
        assert len(names) == len(set(names)) >= 7
        assert all(n.startswith("check_") and n.endswith(f"[{comp.describe()}]") for n in names)


def test_curvature_entry_points_still_work() -> None:
    check_curvature_model("lbfgs")
    assert [n for n, _ in curvature_model_checks(LBFGSNumPy())] == [
        n for n, _ in component_checks(LBFGSNumPy())]


def test_error_names_check_component_and_difference() -> None:
    err = fails(NegativeStep(), "check_step_sizes", "finite and > 0")
    assert isinstance(err, AssertionError)
    assert str(err).startswith("check_step_sizes[negative_step()]: step_size(0) = -0.1")


# ---------------------------------------------------------------------------- configuration
@dataclass
class MutableStep(StepRule):
    eps: float = 0.1
    name = "mutable_step"

    def init(self, problem: Problem) -> Any:
        return ConstantNumPy(self.eps).init(problem)


class PlainStep(StepRule):
    """Not a dataclass: copies are not equal."""

    name = "plain_step"

    def init(self, problem: Problem) -> Any:
        return ConstantNumPy(0.1).init(problem)


@dataclass(frozen=True)
class MislabelledStep(StepRule):
    name = "mislabelled"
    kind = "schedule"  # type: ignore[assignment]

    def init(self, problem: Problem) -> Any:
        return ConstantNumPy(0.1).init(problem)


@dataclass(frozen=True)
class TwoNames(StepRule):
    """Registered; its params() name a setting its constructor does not take."""

    eps: float = 0.1
    name = "two_names"

    def params(self) -> dict[str, Any]:
        return {"eps": self.eps, "epsilon": self.eps}

    def init(self, problem: Problem) -> Any:
        return ConstantNumPy(self.eps).init(problem)


class _TwoNamesPlugin:
    from sqnopt import hookimpl

    @hookimpl
    def sqnopt_register_step_rules(self, register: Any) -> None:
        register("two_names", TwoNames)


@pytest.fixture
def fresh_registry() -> Iterator[None]:
    reset_registry()
    yield
    reset_registry()


def test_configuration_breaks(fresh_registry: None) -> None:
    fails(MutableStep(), "check_component_contract", "can be assigned")
    fails(PlainStep(), "check_component_contract", "does not compare equal")
    fails(MislabelledStep(), "check_component_contract", "its kind is 'schedule'")
    register_plugin(_TwoNamesPlugin(), name="two-names")
    fails(TwoNames(), "check_registry_round_trip", "bad parameters")
    assert "not registered" in str(run_check(ConstantNumPy(), "check_registry_round_trip"))


def test_registered_builtin_round_trips() -> None:
    assert run_check(LogLoss(lam=0.5), "check_registry_round_trip") is None


# ---------------------------------------------------------------------------- kernels and flags
@dataclass(frozen=True)
class NoKernel(StepRule):
    name = "no_kernel"

    def init(self, problem: Problem) -> Any:
        return object()


@dataclass(frozen=True)
class SaysLineSearch(StepRule):
    name = "says_line_search"
    line_search = True

    def init(self, problem: Problem) -> Any:
        return _Armijo(1.0, 1e-4, 0.5, 30, line_search=False)


@dataclass(frozen=True)
class SaysBatchGradient(GradientEstimator):
    """A component-level declaration the kernel does not share (the generic rule)."""

    name = "says_batch_gradient"
    batch_gradient = True
    plain = True            # what its kernel declares (only batch_gradient disagrees)

    def init(self, problem: Problem) -> Any:
        return _MinibatchKernelNumPy(problem.n_params)


@dataclass(frozen=True)
class SilentPlain(GradientEstimator):
    """The minibatch gradient without the component's ``plain`` declaration (the recipes
    would treat it as a variance-reduced estimate)."""

    name = "silent_plain"

    def init(self, problem: Problem) -> Any:
        return _MinibatchKernelNumPy(problem.n_params)


class _ClaimsCompiledKernel(IdentityKernelNumPy):
    compiled = True


@dataclass(frozen=True)
class ClaimsCompiled(CurvatureModel):
    """A Python kernel that declares ``compiled`` (the solver would build the compiled loop)."""

    name = "claims_compiled"

    def init(self, problem: Problem) -> Any:
        return _ClaimsCompiledKernel()


def test_kernel_and_flag_breaks() -> None:
    fails(NoKernel(), "check_kernel_contract", "neither subclasses StepKernel")
    fails(ClaimsCompiled(), "check_kernel_contract",
          "declares compiled but does not subclass CurvatureKernel")
    fails(SaysLineSearch(), "check_declared_flags", "line_search=True")
    fails(SaysBatchGradient(), "check_declared_flags", "batch_gradient=True")
    fails(SilentPlain(), "check_declared_flags", "plain=False, its kernel .* plain=True")


# ---------------------------------------------------------------------------- state
class _GammaKernel(IdentityKernelNumPy):
    """``d = gamma g``, gamma from the newest pair (Barzilai-Borwein)."""

    needs_secant_pair = True

    def __init__(self) -> None:
        self.gamma = np.ones(1)

    def direction(self, grad: Any, out: Any) -> None:
        out[:] = self.gamma[0] * grad

    def update_pair(self, v: Any, r: Any) -> int:
        if not (np.all(np.isfinite(v)) and np.all(np.isfinite(r))):
            self.gamma[0] = 1.0
            return PAIR_RESET
        if not float(v @ r) > 0:
            return PAIR_SKIPPED
        self.gamma[0] = float(v @ r) / float(r @ r)
        return PAIR_ACCEPTED


class _DropsGamma(_GammaKernel):
    def get_state(self) -> dict[str, Any]:
        return {}

    def set_state(self, state: dict[str, Any]) -> None:
        pass


class _LendsGamma(_GammaKernel):
    def get_state(self) -> dict[str, Any]:
        return {"gamma": self.gamma}                      # its own buffer, not a copy

    def set_state(self, state: dict[str, Any]) -> None:
        self.gamma[:] = state["gamma"]


class _SavesGamma(_GammaKernel):
    def get_state(self) -> dict[str, Any]:
        return {"gamma": self.gamma.copy()}


class _PicklesGamma(_GammaKernel):
    def get_state(self) -> dict[str, Any]:
        return {"gamma": [self.gamma.copy(), {1, 2}]}     # a set has no file form

    def set_state(self, state: dict[str, Any]) -> None:
        self.gamma[:] = state["gamma"][0]


class _UnpicklableGamma(_GammaKernel):
    def __init__(self) -> None:
        super().__init__()
        self.rule = lambda v, r: float(v @ r) / float(r @ r)     # no pickle for a lambda


class _KeepsGamma(_GammaKernel):
    def get_state(self) -> dict[str, Any]:
        return {"gamma": self.gamma.copy()}

    def set_state(self, state: dict[str, Any]) -> None:
        self.gamma[:] = state["gamma"]


def _gamma_model(kernel: type, label: str) -> CurvatureModel:
    @dataclass(frozen=True)
    class Model(CurvatureModel):
        name = label
        needs_secant_pair = True

        def init(self, problem: Problem) -> Any:
            return kernel()

    Model.__qualname__ = Model.__name__ = f"Gamma_{label}"
    globals()[Model.__name__] = Model         # picklable by name
    return Model()


def test_state_breaks() -> None:
    fails(_gamma_model(_DropsGamma, "drops"), "check_state_round_trip", "silently drops state")
    fails(_gamma_model(_LendsGamma, "lends"), "check_state_round_trip", "not copies")
    fails(_gamma_model(_SavesGamma, "half"), "check_state_round_trip",
          "get_state without set_state")
    fails(_gamma_model(_PicklesGamma, "pickles"), "check_state_round_trip",
          "does not fit a checkpoint file")
    note = run_check(_gamma_model(_KeepsGamma, "keeps"), "check_state_round_trip")
    assert note is not None and "round-trips exactly" in note
    # no get_state/set_state: a copy continues exactly; reported, or failed when strict
    note = run_check(_gamma_model(_GammaKernel, "undeclared"), "check_state_round_trip")
    assert note is not None and note.startswith("no declared state: the kernel keeps state")
    fails(_gamma_model(_GammaKernel, "undeclared"), "check_state_round_trip",
          "no declared state", strict_state=True)
    fails(_gamma_model(_UnpicklableGamma, "unpicklable"), "check_state_round_trip",
          "does not pickle")
    assert "none observed" in str(run_check(IdentityNumPy(), "check_state_round_trip",
                                            strict_state=True))


# ---------------------------------------------------------------------------- memory
@dataclass(frozen=True)
class Declares(MinibatchNumPy):
    amount: Any = 0
    name = "declares"

    def memory_bytes(self, problem: Problem) -> Any:
        return self.amount


class _DenseKernel(IdentityKernelNumPy):
    def __init__(self, n: int) -> None:
        self.H = np.eye(n)


@dataclass(frozen=True)
class DenseUndeclared(CurvatureModel):
    """Holds an n x n matrix, declares the default 8 n bytes."""

    name = "dense_undeclared"

    def init(self, problem: Problem) -> Any:
        return _DenseKernel(problem.n_params)


def test_memory_breaks() -> None:
    fails(Declares(10**15), "check_memory_declaration", "refuses problems that fit")
    fails(Declares(-5), "check_memory_declaration", "negative")
    fails(Declares(2.5), "check_memory_declaration", "not an integer")
    fails(Declares(math.inf), "check_memory_declaration", "not an integer")
    fails(DenseUndeclared(), "check_memory_declaration", "relies on the declaration")
    assert "declares 0 bytes" in str(run_check(Declares(0), "check_memory_declaration"))


# ---------------------------------------------------------------------------- objectives
class _ScaledGradient(MarginKernelNumPy):
    def gradient(self, w: Any, batch: Any, out: Any) -> float:
        f = super().gradient(w, batch, out)
        out *= 1.01
        return f

    def full_gradient(self, w: Any, out: Any) -> float:
        f = super().full_gradient(w, out)
        out *= 1.01
        return f


@dataclass(frozen=True)
class ScaledGradient(LogLossNumPy):
    name = "scaled_gradient"

    def init(self, data: Dataset) -> MarginKernelNumPy:
        return _ScaledGradient(data, self.lam, logistic_loss, logistic_dloss_dmargin)


def _naive_loss(m: Any) -> Any:
    return np.log(1.0 + np.exp(-m))


def _naive_dloss(m: Any) -> Any:
    return -1.0 / (1.0 + np.exp(m))


@dataclass(frozen=True)
class NaiveLogistic(LogLossNumPy):
    """``log(1 + exp(-m))`` as written: overflows at margins below -709."""

    name = "naive_logistic"

    def init(self, data: Dataset) -> MarginKernelNumPy:
        return MarginKernelNumPy(data, self.lam, _naive_loss, _naive_dloss)


@dataclass(frozen=True)
class IgnoresWeights(LogLossNumPy):
    name = "ignores_weights"

    def init(self, data: Dataset) -> MarginKernelNumPy:
        ones = np.ones(data.n_samples)
        plain = dataclasses.replace(data, sample_weight=ones, grad_weight=ones)
        return MarginKernelNumPy(plain, self.lam, logistic_loss, logistic_dloss_dmargin)


@dataclass(frozen=True)
class RegularisesIntercept(LogLossNumPy):
    name = "regularises_intercept"

    def init(self, data: Dataset) -> MarginKernelNumPy:
        kernel = MarginKernelNumPy(data, self.lam, logistic_loss, logistic_dloss_dmargin)
        kernel._reg[:] = 1.0
        return kernel


@dataclass(frozen=True)
class Float32Lossy(LogLossNumPy):
    """Rounds float32 data to float16."""

    name = "float32_lossy"

    def init(self, data: Dataset) -> MarginKernelNumPy:
        kernel = MarginKernelNumPy(data, self.lam, logistic_loss, logistic_dloss_dmargin)
        if data.X.dtype == np.float32:
            X = kernel._X
            kernel._X = (X.astype(np.float16).astype(np.float64) if isinstance(X, np.ndarray)
                         else X.astype(np.float16).astype(np.float64))
        return kernel


class _WrongHessian(MarginKernelNumPy):
    hess_size = 1

    def hessian_product(self, w: Any, batch: Any, v: Any, out: Any) -> None:
        Xb = self._X[batch]
        m = self.data.y[batch] * np.asarray(Xb @ w).ravel()
        e = np.exp(-np.abs(m))
        d2 = 2.0 * e / (1.0 + e) ** 2                    # twice l''
        out[:] = np.asarray(Xb.T @ (d2 * np.asarray(Xb @ v).ravel())).ravel() / len(batch) \
            + self.lam * self._reg * v


@dataclass(frozen=True)
class WrongHessian(LogLossNumPy):
    name = "wrong_hessian"

    @property
    def capabilities(self) -> frozenset[str]:
        return super().capabilities | {HESSIAN_VECTOR}

    def init(self, data: Dataset) -> MarginKernelNumPy:
        return _WrongHessian(data, self.lam, logistic_loss, logistic_dloss_dmargin)


@dataclass(frozen=True)
class NotProbabilistic(SquaredHingeNumPy):
    name = "not_probabilistic"

    @property
    def capabilities(self) -> frozenset[str]:
        return super().capabilities | {PROBABILISTIC}


@dataclass(frozen=True)
class TightBound(LogLoss):
    """The logistic loss's l'' reaches 1/4, not 1/10."""

    name = "tight_bound"
    curvature_bound = 0.1


@dataclass(frozen=True)
class WrongStartCurvature(LogLoss):
    """The logistic loss's l''(0) is 1/4 for every label, not 1/2."""

    name = "wrong_start_curvature"
    start_curvature = 0.5


@dataclass(frozen=True)
class HidesScores(LogLoss):
    name = "hides_scores"

    @property
    def capabilities(self) -> frozenset[str]:
        return super().capabilities - {LINEAR_SCORES}


@dataclass(frozen=True)
class ClaimsStrongConvexity(LogLossNumPy):
    name = "claims_strong_convexity"

    @property
    def capabilities(self) -> frozenset[str]:
        return super().capabilities | {STRONGLY_CONVEX}


class _Remembers(MarginKernelNumPy):
    calls = 0

    def value(self, w: Any) -> float:
        self.calls += 1
        return super().value(w) + 1e-3 * (self.calls > 7)


@dataclass(frozen=True)
class Remembers(LogLossNumPy):
    name = "remembers"

    def init(self, data: Dataset) -> MarginKernelNumPy:
        return _Remembers(data, self.lam, logistic_loss, logistic_dloss_dmargin)


def test_objective_breaks() -> None:
    fails(ScaledGradient(), "check_value_and_gradient", "central differences")
    fails(NaiveLogistic(), "check_value_and_gradient", "extreme margins")
    fails(IgnoresWeights(), "check_sample_weights", "repetitions")
    fails(RegularisesIntercept(), "check_intercept", "unregularised")
    fails(Float32Lossy(), "check_layouts", "dense float32 against dense float64")
    fails(WrongHessian(), "check_capabilities", "hessian_product disagrees")
    fails(NotProbabilistic(), "check_capabilities", "sums to")
    fails(TightBound(), "check_capabilities", "not a bound")
    fails(WrongStartCurvature(), "check_capabilities", "not start_curvature")
    fails(HidesScores(), "check_declared_flags", "linear_scores")
    fails(ClaimsStrongConvexity(lam=0.0), "check_kernel_contract", "strongly_convex")
    fails(Remembers(), "check_state_round_trip", "keeps state")


# ---------------------------------------------------------------------------- gradient estimators
class _Biased(_MinibatchKernelNumPy):
    def estimate(self, objective: Any, w: Any, batch: Any, out: Any,
                 plain: Any = None) -> tuple[float, int]:
        f, extra = super().estimate(objective, w, batch, out, plain)
        out += 1e-3
        return f, extra


@dataclass(frozen=True)
class Biased(GradientEstimator):
    name = "biased"

    def init(self, problem: Problem) -> Any:
        return _Biased(problem.n_params)


class _ZeroPlain(_MinibatchKernelNumPy):
    plain = False

    def estimate(self, objective: Any, w: Any, batch: Any, out: Any,
                 plain: Any = None) -> tuple[float, int]:
        f, extra = super().estimate(objective, w, batch, out, None)
        if plain is not None:
            plain[:] = 0.0
        return f, extra


@dataclass(frozen=True)
class ZeroPlain(GradientEstimator):
    name = "zero_plain"

    def init(self, problem: Problem) -> Any:
        return _ZeroPlain(problem.n_params)


@dataclass(frozen=True)
class FakeVarianceReduction(MinibatchNumPy):
    name = "fake_variance_reduction"
    vanishing_variance = True


def test_gradient_breaks() -> None:
    fails(Biased(), "check_full_batch", "not the full gradient")
    fails(Biased(), "check_estimates", "not s\\(w, B\\) bit for bit")
    fails(ZeroPlain(), "check_estimates", "plain is not the minibatch gradient")
    fails(FakeVarianceReduction(), "check_snapshot_estimate", "vanishing_variance")


# ---------------------------------------------------------------------------- step rules
class _Negative:
    def step_size(self, t: int) -> float:
        return -0.1


@dataclass(frozen=True)
class NegativeStep(StepRule):
    name = "negative_step"

    def init(self, problem: Problem) -> Any:
        return _Negative()


class _Counting:
    def __init__(self) -> None:
        self.calls = 0

    def step_size(self, t: int) -> float:
        self.calls += 1
        return 1.0 / self.calls


@dataclass(frozen=True)
class CountingStep(StepRule):
    name = "counting_step"

    def init(self, problem: Problem) -> Any:
        return _Counting()


class _Greedy(_Armijo):
    def search(self, objective: Any, w: Any, batch: Any, f0: float, g: Any, d: Any,
               w_next: Any, g_next: Any) -> tuple[float, float, int]:
        np.subtract(w, self.eps0 * d, out=w_next)
        return self.eps0, float(objective.gradient(w_next, batch, g_next)), 1


@dataclass(frozen=True)
class GreedySearch(ArmijoNumPy):
    """Takes its first trial whatever it gives."""

    name = "greedy_search"

    def init(self, problem: Problem) -> Any:
        return _Greedy(self.eps0, self.c1, self.shrink, self.max_backtracks)


def test_step_breaks() -> None:
    fails(NegativeStep(), "check_step_sizes", "finite and > 0")
    fails(CountingStep(), "check_step_sizes", "not a function of t")
    fails(GreedySearch(), "check_line_search", "ascent direction|decrease")


# ---------------------------------------------------------------------------- schedules
class _Sizes:
    def __init__(self, n: int, fn: Any) -> None:
        self.n, self.fn = n, fn

    def batch_size(self, k: int) -> Any:
        return self.fn(k, self.n)


def _schedule(label: str, fn: Any, monotone: bool = False) -> BatchSchedule:
    @dataclass(frozen=True)
    class Schedule(BatchSchedule):
        name = label
        nondecreasing = monotone

        def init(self, problem: Problem) -> Any:
            return _Sizes(problem.n_samples, fn)

    Schedule.__qualname__ = Schedule.__name__ = f"Schedule_{label}"
    globals()[Schedule.__name__] = Schedule
    return Schedule()


def _zero(k: int, n: int) -> int:
    return 0 if k == 50 else 1


def _too_big(k: int, n: int) -> int:
    return n + 1


def _float(k: int, n: int) -> float:
    return 1.0


def _cyclic(k: int, n: int) -> int:
    return 1 + k % min(n, 3)


def test_schedule_breaks() -> None:
    fails(_schedule("zero", _zero), "check_batch_sizes", "batch_size\\(50\\) = 0")
    fails(_schedule("too_big", _too_big), "check_batch_sizes", "integers in \\[1, 1\\]")
    fails(_schedule("float", _float), "check_batch_sizes", "1.0")
    fails(_schedule("cyclic", _cyclic, monotone=True), "check_batch_sizes", "shrinks")
    assert run_check(_schedule("cyclic_undeclared", _cyclic), "check_batch_sizes")


# ---------------------------------------------------------------------------- projections
@dataclass
class _Shrink:
    problem: Problem

    def project(self, w: Any) -> None:
        _reg_view(self.problem, w)[...] *= 0.9


@dataclass
class _Everything(_L2BallKernel):
    def project(self, w: Any) -> None:
        norm = float(np.linalg.norm(w))
        if norm > self.radius:
            w *= self.radius / norm


@dataclass
class _ScaledL1(_L2BallKernel):
    """Feasible and idempotent, but not the nearest point of the l1 ball."""

    def project(self, w: Any) -> None:
        reg = _reg_view(self.problem, w)
        size = float(np.abs(reg).sum())
        if size > self.radius:
            reg *= self.radius / size


@dataclass
class _WrongRadius(_L2BallKernel):
    ball_radius: float = 2.0


def _projection(label: str, kernel: Any, **attrs: Any) -> Projection:
    @dataclass(frozen=True)
    class Proj(Projection):
        name = label

        def init(self, problem: Problem) -> Any:
            return kernel(problem) if kernel is _Shrink else kernel(problem, 1.0)

    for key, value in attrs.items():
        setattr(Proj, key, value)
    Proj.__qualname__ = Proj.__name__ = f"Proj_{label}"
    globals()[Proj.__name__] = Proj
    return Proj()


def test_projection_breaks() -> None:
    fails(_projection("shrink", _Shrink), "check_projection", "idempotent")
    fails(_projection("everything", _Everything), "check_projection", "intercept")
    fails(_projection("scaled_l1", _ScaledL1), "check_projection", "nearest feasible point")
    fails(_projection("wrong_radius", _WrongRadius), "check_projection", "ball_radius = 2.0")
    fails(_projection("not_euclidean_ball", _WrongRadius, euclidean=False),
          "check_kernel_contract", "euclidean = False")
    fails(_projection("unbounded", _Shrink, bounds_iterate=True), "check_projection",
          "bounds_iterate")
    assert run_check(L2BallNumPy(1.0), "check_projection")


# ---------------------------------------------------------------------------- solver paths
def test_solver_paths_run() -> None:
    note = run_check(LogLoss(), "check_solver_paths")
    assert note is not None and "agree" in note
    assert "Python loop" in str(run_check(LogLossNumPy(), "check_solver_paths"))
    Solver(objective=LogLoss())          # the suite leaves the registry as it found it
