"""One iteration, written once: the stage list of sqnopt.solver._stages, the plan that picks each
stage's variant from its provider's declarations, and the compiled loop verified stage by stage
against the Python loop that runs the list (the same stages, in the same order, with the same
values to the bit) for every composition kind."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from sqnopt import (
    SAGA,
    SVRG,
    AdaGrad,
    Armijo,
    BinaryLogistic,
    Constant,
    Decaying,
    Fixed,
    Full,
    Geometric,
    HessianLBFGS,
    Identity,
    L2Ball,
    LBFGS,
    Linear,
    LogLoss,
    OverlapBatch,
    ProgressiveBatch,
    QuadraticBound,
    Solver,
    SquaredHinge,
    Wolfe,
)
from sqnopt.solver._loop import STAGE_CODES
from sqnopt.solver._stages import (
    IDLE,
    STAGE_NAMES,
    STAGES,
    check_compiled,
    plan,
)
from sqnopt.steps import Polyak

from conftest import as_format

# Every composition kind of the generic driver: each non-idle (stage, variant) is run by one at
# least (test_the_compositions_cover_every_stage_variant).
COMPOSITIONS: dict[str, dict[str, Any]] = {
    "sgd": dict(curvature=Identity(), schedule=Fixed(4), step=Decaying(0.5, 10)),
    "projected_averaged": dict(curvature=Identity(), schedule=Linear(2, 0.5, 7),
                               step=Decaying(0.5, 10), projection=L2Ball(2.0), average=5,
                               fit_intercept=True),
    "olbfgs": dict(curvature=LBFGS(5), schedule=Fixed(8), step=Decaying(0.3, 20)),
    "full_batch_lbfgs_tolerances": dict(curvature=LBFGS(5), schedule=Full(), step=Constant(0.5),
                                        gtol=1e-12, ftol=1e-14),
    "full_batch_gtol_stop": dict(curvature=Identity(), schedule=Full(), step=Constant(0.5),
                                 gtol=0.05),
    "armijo_lbfgs": dict(curvature=LBFGS(5), schedule=Full(), step=Armijo(), gtol=1e-12),
    # the default recipe's growing batches: each extends the last (the gradient reused for its
    # rows), then the whole set (the rows outside the last batch evaluated)
    "growing_armijo_lbfgs": dict(curvature=LBFGS(5), schedule=Geometric(b1=10, rate=2.0),
                                 step=Armijo(), sampling="subset", gtol=1e-12),
    "wolfe_identity": dict(curvature=Identity(), schedule=Fixed(10), step=Wolfe()),
    "polyak": dict(curvature=Identity(), schedule=Fixed(6), step=Polyak(eps_max=0.5)),
    "sqb": dict(objective=BinaryLogistic(lam=1e-2), curvature=QuadraticBound(),
                schedule=Fixed(10), step=Constant(0.5), curvature_schedule=Fixed(20)),
    "hessian_lbfgs": dict(curvature=HessianLBFGS(5, update_every=3), schedule=Fixed(10),
                          step=Decaying(0.3, 20), curvature_schedule=Fixed(20)),
    "svrg": dict(curvature=Identity(), schedule=Fixed(5), step=Constant(0.1), gradient=SVRG(20)),
    "svrg_lbfgs": dict(curvature=LBFGS(5), schedule=Fixed(5), step=Constant(0.1),
                       gradient=SVRG(20)),
    "saga_polyak": dict(curvature=Identity(), schedule=Fixed(5), step=Polyak(eps_max=0.1),
                        gradient=SAGA()),
    "progressive_lbfgs": dict(curvature=LBFGS(5), schedule=Fixed(4), step=Constant(0.3),
                              gradient=ProgressiveBatch()),
    "overlap_lbfgs": dict(curvature=LBFGS(5), schedule=Fixed(12), step=Constant(0.3),
                          gradient=OverlapBatch(0.5)),
    "adagrad_composite": dict(curvature=AdaGrad(composite=True), schedule=Fixed(5),
                              step=Constant(0.3)),
}
ITERS = 25


def _loop(kind: str, path: str, X: Any, y: np.ndarray) -> Any:
    kw = dict(COMPOSITIONS[kind])
    gtol, ftol = kw.pop("gtol", None), kw.pop("ftol", None)
    objective = kw.pop("objective", SquaredHinge(lam=1e-3) if kind == "sgd" else LogLoss(lam=1e-2))
    state = Solver(objective, random_state=4, path=path, **kw).init_state(X, y)
    loop = state.loop
    loop.gtol, loop.ftol = float(gtol or 0.0), float(ftol or 0.0)     # as the solver sets them
    return state


@pytest.mark.parametrize("kind", list(COMPOSITIONS))
def test_compiled_loop_runs_the_stage_list_as_the_python_loop(boxes, kind):
    """Both loops record a stage trace; the compiled one must visit the stages of the plan in
    the list's order and agree with the Python loop on every value of every stage."""
    X, y = boxes
    states = [_loop(kind, path, X, y) for path in ("generic", "python")]
    compiled, python = (state.loop for state in states)
    assert type(compiled).__name__ == "CompiledLoop" and type(python).__name__ == "PythonLoop"
    traces = []
    for state in states:
        state.loop.start_trace(ITERS * len(STAGE_NAMES))
        status = state.loop.run(ITERS, 0)
        traces.append((status, state.loop.stop_trace(), np.array(state.w)))
    (sa, a, wa), (sb, b, wb) = traces
    assert sa == sb
    the_plan = compiled.stage_plan
    assert the_plan == python.stage_plan
    active = [(STAGE_NAMES.index(s), the_plan.codes[STAGE_NAMES.index(s)])
              for s in the_plan.active]
    # the stages of each iteration: the plan's, in the list's order (the last one may stop)
    for t in np.unique(a[:, 0]):
        rows = [(int(s), int(v)) for s, v in a[a[:, 0] == t][:, 1:3]]
        assert rows == active[:len(rows)], (t, rows, active)
    assert a.shape[0] >= len(active)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(wa, wb)


def test_the_compositions_cover_every_stage_variant(boxes):
    X, y = boxes
    seen = set()
    for kind in COMPOSITIONS:
        p = _loop(kind, "generic", X, y).loop.stage_plan
        seen |= {(name, p[name]) for name in p.active}
    want = {(name, v) for name, variants in STAGES for v in variants if (name, v) not in IDLE}
    assert want - seen == set()


def test_the_sparse_generic_loop_runs_the_stage_list_as_the_python_loop(boxes):
    X, y = boxes
    Xs = as_format(X, "csr", np.float32)
    traces = []
    for path in ("generic", "python"):
        loop = _loop("olbfgs", path, Xs, y).loop
        loop.start_trace(ITERS * len(STAGE_NAMES))
        loop.run(ITERS, 0)
        traces.append(loop.stop_trace())
    np.testing.assert_array_equal(*traces)


def test_each_stage_variant_comes_from_its_provider():
    """The plan reads each stage's provider: the estimator's declarations pick the size, draw,
    gradient and estimator-pair variants, the model's the direction and pairs, the step's the
    step, and a later reader of the plain gradient makes the estimator fill it."""
    class Est:
        plain = False
        batch_gradient = False
        sizes_batches = True
        overlap_pairs = False

    class Model:
        needs_secant_pair = True
        needs_curvature_batch = False
        direction_is_gradient = False
        composite_step = False

    class Step:
        line_search = False
        uses_point = False

    class Sampler:
        whole_at_n = True

    p = plan(curvature=Model(), step=Step(), projection=None, sampler=Sampler(), gradient=Est())
    assert (p["size"], p["gradient"], p["secant_pair"], p["advance"]) == (
        "estimator", "estimate_with_plain", "evaluate", "swap")
    Model.needs_secant_pair = False
    p = plan(curvature=Model(), step=Step(), projection=None, sampler=Sampler(), gradient=Est())
    assert (p["gradient"], p["secant_pair"]) == ("estimate", "none")
    p = plan(curvature=Model(), step=Step(), projection=None, sampler=Sampler(), gradient=Est(),
             tolerances=True)
    assert (p["gradient"], p["full_batch_test"]) == ("estimate_with_plain", "test")
    Step.line_search = True
    p = plan(curvature=Model(), step=Step(), projection=None, sampler=Sampler(), gradient=None)
    assert (p["step"], p["update"], p["advance"]) == ("search", "searched", "keep")
    assert "update" not in p.active
    assert "update: " not in p.describe() and "step: search (step rule)" in p.describe()


def test_the_compiled_stage_codes_are_checked_against_the_list():
    check_compiled(STAGE_CODES)
    broken = dict(STAGE_CODES)
    broken["step"] = (broken["step"][0], {"time": 0, "search": 1, "point": 2})
    with pytest.raises(ImportError, match="stage codes"):
        check_compiled(broken)
    swapped = dict(STAGE_CODES)
    swapped["step"], swapped["update"] = ((STAGE_CODES["update"][0], STAGE_CODES["step"][1]),
                                          (STAGE_CODES["step"][0], STAGE_CODES["update"][1]))
    with pytest.raises(ImportError):
        check_compiled(swapped)


def test_a_trace_too_small_is_an_error(boxes):
    X, y = boxes
    for path in ("generic", "python"):
        loop = _loop("sgd", path, X, y).loop
        loop.start_trace(3)
        loop.run(5, 0)
        with pytest.raises(ValueError, match="overflowed"):
            loop.stop_trace()
        with pytest.raises(ValueError, match="no trace"):
            loop.stop_trace()
