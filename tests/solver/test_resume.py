"""Exact checkpoint/resume: a solve checkpointed at any iteration, pickled, and restored into a
fresh solver continues bit-for-bit like the uninterrupted solve.

Every component registered by sqnopt's built-in plugins is covered (the lists come from the
registry, so a new registration is tested without touching this file), on dense and sparse data
(the sparse identity runs go through the scaled O(nnz) loop), in the compiled and the Python
loop, with checkpoints at iteration 0, mid-epoch, after curvature refreshes and resets, after an
SVRG snapshot and between the batches of a line search's full-batch phase. "The same" means
``np.array_equal`` on every array and ``==`` on every number of the final state (iterate,
average, counters, history, monitor, every kernel's state) and of the result; only the clocks
differ.
"""

from __future__ import annotations

import contextlib
import math
import pickle
import warnings
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import (
    Armijo,
    Constant,
    Decaying,
    Fixed,
    L1Ball,
    Linear,
    LogLinear,
    LogLoss,
    Softmax,
    Solver,
    SquaredHinge,
)
from sqnopt.checkpoint import Checkpoint, CheckpointError, read_checkpoint_file
from sqnopt.datasets import make_boxes
from sqnopt.interfaces import MULTICLASS, SOLVER_KINDS, Objective
from sqnopt.registry import DEFAULT_PLUGINS, get_registry
from sqnopt.solver._checkpoint import _Bound

REG = get_registry()
#: Settings under which a component's state becomes non-trivial within a few dozen iterations.
STRESS: dict[tuple[str, str], dict[str, Any]] = {
    ("curvature", "lbfgs"): {"memory": 3},                      # the ring buffer wraps
    ("curvature", "regularized_bfgs"): {"method": "eig", "refresh_every": 4},  # refreshes
    ("gradient", "svrg"): {"period": 40},                       # snapshots every 8 batches
    ("projection", "l1ball"): {"radius": 0.3},
    ("projection", "eg_pm"): {"radius": 2.0},
    ("projection", "lazy_projection"): {"inner": L1Ball(0.3)},  # inner pivot generator
    ("schedule", "linear"): {"b1": 2, "gamma": 4.0},            # reaches N = 120 mid-run
    ("schedule", "geometric"): {"b1": 2, "rate": 1.2},
    ("objective", "loglinear"): {"n_outputs": 3},
}


def builtin(kind: str) -> list[str]:
    """The names sqnopt's own plugins register for ``kind`` (third-party plugins check
    themselves with sqnopt.testing)."""
    return [e.name for e in REG.entries(kind) if e.source in DEFAULT_PLUGINS]  # type: ignore[arg-type]


def component(kind: str, name: str) -> Any:
    return REG.create(kind, name, **STRESS.get((kind, name), {}))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- data
def binary_data(sparse: bool = False, n: int = 120, seed: int = 0) -> tuple[Any, Any]:
    X, y = make_boxes(n, 6, random_state=seed)
    if sparse:
        rng = np.random.default_rng(seed)
        X = sp.csr_matrix(X * (rng.random(X.shape) < 0.6))
    return X, y


def multiclass_data(sparse: bool = False, n: int = 120, seed: int = 0) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = rng.normal(size=(3, 6))[y] + rng.normal(size=(n, 6))
    if sparse:
        X = sp.csr_matrix(X * (rng.random(X.shape) < 0.6))
    return X, y.astype(float)


def loglinear_data(sparse: bool = False, n: int = 120, seed: int = 0) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3 * 4))
    y = np.argmax(X.reshape(n, 3, 4).sum(axis=2) + rng.normal(size=(n, 3)), axis=1)
    return (sp.csr_matrix(X) if sparse else X), y.astype(float)


def data_for(objective: Objective, sparse: bool, seed: int = 0) -> tuple[Any, Any]:
    if isinstance(objective, LogLinear):
        return loglinear_data(sparse, seed=seed)
    if objective.label_kind == "multiclass":
        return multiclass_data(sparse, seed=seed)
    if objective.label_kind == "regression":    # targets >= 0: every regression loss's domain
        X, y = binary_data(sparse, seed=seed)
        return X, np.where(np.asarray(y) == np.max(y), 2.5, 0.5)
    return binary_data(sparse, seed=seed)


def objective_for(requires: frozenset[str]) -> Objective:
    """LogLoss, or its form / the first built-in objective that provides ``requires``."""
    obj: Objective = LogLoss(lam=1e-3)
    for cap in sorted(requires - obj.capabilities):
        alt = obj.with_capability(cap)
        if alt is None:
            break
        obj = alt
    if requires <= obj.capabilities:
        return obj
    for name in builtin("objective"):
        cand = REG.create("objective", name, lam=1e-3)
        if requires <= cand.capabilities and cand.label_kind == "binary":
            return cand  # type: ignore[return-value]
    raise AssertionError(f"no built-in objective provides {sorted(requires)}")


def solver_factory(kind: str, name: str, **settings: Any) -> tuple[Any, Objective]:
    """A zero-argument Solver factory exercising the component ``kind``/``name``."""
    comp = component(kind, name)
    parts: dict[str, Any] = {"curvature": "identity", "schedule": Fixed(5), "projection": None,
                             "gradient": "minibatch"}
    parts[kind] = comp
    if kind == "objective":
        objective = comp
    else:
        objective = objective_for(comp.requires)
        if kind == "step" and name == "pegasos":
            objective = SquaredHinge(lam=1e-2)
    steps = [parts.pop("step")] if kind == "step" else [Decaying(0.05, 20), Constant(0.05),
                                                          Armijo()]
    parts.pop("objective", None)
    kw = {"random_state": 3, "report_every": 4, "history_every": 5, "record_grad_norm": True,
          **settings}
    last: Exception | None = None
    for step in steps:
        try:
            Solver(objective, step=step, **parts, **kw)
        except ValueError as exc:     # IncompatibleComponentsError: try the next step rule
            last = exc
            continue
        return (lambda: Solver(objective, step=step, **parts, **kw)), objective
    raise AssertionError(f"no step rule works with {kind} {name}: {last}")


# ---------------------------------------------------------------------------- comparison
def same(a: Any, b: Any, where: str = "state") -> None:
    """Assert ``a`` and ``b`` are the same, bit for bit (NaN equal to NaN)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), f"{where}: keys {set(a) ^ set(b)}"
        for k in a:
            same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple, deque)):
        assert isinstance(b, (list, tuple, deque)) and len(a) == len(b), f"{where}: lengths differ"
        for i, (x, z) in enumerate(zip(a, b)):
            same(x, z, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype, where
        eq = np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        assert eq, f"{where}: max |diff| {np.max(np.abs(a - b)) if a.size else 0}"
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), f"{where}: {a} != {b}"
    elif isinstance(a, _Bound) or a is None or isinstance(a, (bool, int, float, str)):
        assert a == b and type(a) is type(b), f"{where}: {a!r} != {b!r}"
    else:                                         # a deep-copied pure-Python kernel
        assert type(a) is type(b), where
        same(vars(a), vars(b), f"{where}<{type(a).__name__}>")


def comparable(state: Any) -> dict[str, Any]:
    """A state's checkpoint without the clocks."""
    st = dict(state.checkpoint().state)
    st.pop("elapsed")
    st.pop("eval_time")
    st["history"] = {k: v for k, v in st["history"].items() if k != "time"}
    return st


RESULT_FIELDS = ("fun", "status", "message", "n_iter", "n_samples", "n_curvature_samples",
                 "n_secant_samples", "n_reused_samples", "n_search_samples",
                 "n_estimator_samples", "n_grad_evals", "n_pairs_accepted", "n_pairs_skipped",
                 "n_resets", "grad_norm", "compiled", "components", "memory_bytes")


def same_result(a: Any, b: Any) -> None:
    same(np.asarray(a.w), np.asarray(b.w), "result.w")
    for f in RESULT_FIELDS:
        same(getattr(a, f), getattr(b, f), f"result.{f}")
    for f in ("iteration", "samples", "effective_passes", "objective", "grad_norm"):
        same(getattr(a.history, f), getattr(b.history, f), f"result.history.{f}")


def resume_matches(make: Any, X: Any, y: Any, k: int, m: int, *, sample_weight: Any = None,
                   via: str = "pickle", chunks: int = 1, after_init: Any = None
                   ) -> tuple[Any, Any]:
    """Run ``k`` iterations (in ``chunks`` calls), checkpoint, restore into a new solver, run
    ``m`` more; assert it matches running the same calls uninterrupted. Returns the results.
    ``after_init(solver, state)`` runs right after ``init_state`` in both."""
    def start(s: Any) -> Any:
        st = s.init_state(X, y, sample_weight)
        if after_init is not None:
            after_init(s, st)
        for j in range(chunks):
            n = k // chunks + (1 if j < k % chunks else 0)
            if n:
                s.run(st, max_iter=n)
        return st

    ref_solver = make()
    ref = start(ref_solver)
    ref_res = ref_solver.run(ref, max_iter=m)

    first = make()
    st = start(first)
    ck = st.checkpoint()
    if via == "pickle":
        ck = pickle.loads(pickle.dumps(ck))
    elif via == "file":
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory() as d:
            ck.save(Path(d) / "ck.npz")
            ck = read_checkpoint_file(Path(d) / "ck.npz")
    del st, first
    solver = make()
    resumed = solver.restore(ck, X, y, sample_weight)
    res = solver.run(resumed, max_iter=m)
    same_result(ref_res, res)
    same(comparable(ref), comparable(resumed))
    assert resumed.compiled == ref.compiled and type(resumed.loop) is type(ref.loop)
    return ref_res, res


# ---------------------------------------------------------------------------- every component
#: the driver's slots (a penalty is a composite solver's, with no driver state to resume)
CASES = [(kind, name) for kind in SOLVER_KINDS for name in builtin(kind)]


def test_every_kind_has_builtin_components() -> None:
    assert {kind for kind, _ in CASES} == set(SOLVER_KINDS)


@pytest.mark.parametrize("k", [0, 17])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("kind, name", CASES)
def test_every_registered_component_resumes_exactly(kind: str, name: str, sparse: bool,
                                                    k: int) -> None:
    make, objective = solver_factory(kind, name)
    X, y = data_for(objective, sparse)
    resume_matches(make, X, y, k, 23)


@pytest.mark.parametrize("name", builtin("curvature"))
def test_every_curvature_model_resumes_exactly_in_the_python_loop(name: str) -> None:
    make, objective = solver_factory("curvature", name, path="python")
    X, y = data_for(objective, False)
    ref, res = resume_matches(make, X, y, 13, 20)
    assert not res.compiled


@pytest.mark.parametrize("name", builtin("curvature"))
def test_every_curvature_model_resumes_across_chunked_runs(name: str) -> None:
    """Checkpoints after several run() calls (the monitor, history and loop carry-over of a
    solve that already returned to Python more than once)."""
    make, objective = solver_factory("curvature", name)
    X, y = data_for(objective, False)
    resume_matches(make, X, y, 31, 19, chunks=3)


# ---------------------------------------------------------------------------- specific states
def test_lbfgs_after_memory_reset_and_ring_wrap() -> None:
    """on_nonfinite='reset' with a pair that overflows: a reset mid-run, then checkpoints. (The
    pair is fed to the kernel between two runs: data whose gradients overflow -- a row of
    1e200 -- is refused before a fit.)"""
    X, y = binary_data()
    make = lambda: Solver(LogLoss(lam=1e-3), ("lbfgs", {"memory": 2}), Fixed(4),  # noqa: E731
                          Constant(1e-3), random_state=1, report_every=5, monitor=None)

    def overflowing_pair(s: Any, st: Any) -> None:
        s.run(st, max_iter=5)
        assert st.curvature.count == 2
        huge = np.full(st.w.shape, 1e200)           # r'r overflows
        st.curvature.update_pair(huge, huge)
        assert st.curvature.count == 0              # the memory was reset

    for k in (3, 11, 29):
        resume_matches(make, X, y, k, 17, after_init=overflowing_pair)


@pytest.mark.parametrize("method", ["eig", "cholesky", "inverse"])
def test_res_forms_resume_after_refreshes(method: str) -> None:
    kw = {"refresh_every": 3} if method == "eig" else {}
    delta = 0.0 if method == "inverse" else 1e-3
    make = lambda: Solver(SquaredHinge(lam=1e-3),  # noqa: E731
                          ("regularized_bfgs", {"method": method, "delta": delta, **kw}),
                          Fixed(5), Decaying(0.05, 20), random_state=0, report_every=7)
    X, y = binary_data()
    for k in (2, 9, 16):
        resume_matches(make, X, y, k, 14)


def test_bound_resumes_after_growing_curvature_batches_and_exact_solves() -> None:
    X, y = multiclass_data(sparse=True)
    for solver_name in ("lsqr", "cg", "exact"):
        make = lambda s=solver_name: Solver(  # noqa: E731
            Softmax(lam=1e-2), ("quadratic_bound", {"solver": s}), Linear(3, 5.0),
            Constant(1.0), curvature_schedule=Fixed(20), sampling="subset", random_state=2,
            report_every=3)
        resume_matches(make, X, y, 8, 9)


def test_svrg_resumes_right_after_a_snapshot() -> None:
    X, y = binary_data()
    make = lambda: Solver(LogLoss(lam=1e-3), "lbfgs", Fixed(10), Constant(0.2),  # noqa: E731
                          gradient=("svrg", {"period": 30}), random_state=0, report_every=3)
    for k in (3, 4, 6):                 # snapshots at estimates 1, 4, 7: before and after
        resume_matches(make, X, y, k, 10)


@pytest.mark.parametrize("sampling", ["uniform", "shuffle", "subset", "weighted", "sequence"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_every_sampler_resumes_mid_epoch(sampling: str, sparse: bool) -> None:
    X, y = binary_data(sparse)
    w = np.linspace(0.5, 2.0, len(y))
    kw: dict[str, Any] = {"sampling": sampling}
    if sampling == "sequence":
        kw = {"batch_sequence": np.random.default_rng(0).integers(0, len(y), 7 * 60)}
    make = lambda: Solver(LogLoss(lam=1e-3), "identity", Fixed(7), Decaying(0.1, 10),  # noqa: E731
                          random_state=5, report_every=6, average=True, **kw)
    for k in (0, 5, 19):                 # 5 x 7 = 35 samples: mid-epoch of 120
        resume_matches(make, X, y, k, 21, sample_weight=w if sampling == "weighted" else None)


@pytest.mark.parametrize("path", ["scaled", "generic", "python"])
@pytest.mark.parametrize("average", [False, True, 9])
def test_scaled_sparse_loop_resumes_exactly(path: str, average: Any) -> None:
    """Sparse identity solves run in the scaled loop (w = a v, lazy average); Pegasos' first
    step folds the scale; the L2 ball rescales it."""
    X, y = binary_data(sparse=True)
    make = lambda: Solver(SquaredHinge(lam=0.1), "identity", Fixed(3), "pegasos",  # noqa: E731
                          projection="l2ball", average=average, path=path, random_state=4,
                          report_every=5, fit_intercept="regularized")
    for k in (0, 1, 14):
        ref, res = resume_matches(make, X, y, k, 22)
    state = make().init_state(X, y)
    assert type(state.loop).__name__ == {"scaled": "ScaledLoop", "generic": "CompiledLoop",
                                         "python": "PythonLoop"}[path]


@pytest.mark.parametrize("fit_intercept", [True, "regularized"])
def test_full_batch_line_search_resumes_with_gradient_reuse_and_ftol(fit_intercept: Any) -> None:
    """Growing batches reach the whole data set: the loop reuses the secant gradient as the
    next iteration's and tests ftol against the previous full-batch objective -- both carry
    over a checkpoint between two run() calls."""
    X, y = binary_data()
    make = lambda: Solver(LogLoss(lam=1e-3), "lbfgs", Linear(40, 40.0), Armijo(),  # noqa: E731
                          random_state=0, ftol=1e-300, gtol=1e-300, report_every=3,
                          fit_intercept=fit_intercept)
    for k in (2, 4, 9):
        ref, res = resume_matches(make, X, y, k, 8)
        assert res.n_reused_samples > 0


@pytest.mark.parametrize("via", ["pickle", "file"])
@pytest.mark.parametrize("multiclass", [False, True], ids=["logistic", "softmax"])
def test_full_batch_newton_with_the_score_line_search_resumes_exactly(multiclass: bool,
                                                                       via: str) -> None:
    """The recipe's full-batch Newton step keeps the scores of its last point between searches;
    the checkpoint carries them, so the restored solve takes the same steps bit for bit."""
    from sqnopt import Full, Newton, ScoreLine

    X, y = multiclass_data() if multiclass else binary_data()
    obj = Softmax(lam=1e-3) if multiclass else LogLoss(lam=1e-3)
    make = lambda: Solver(obj, Newton(), Full(), ScoreLine(), random_state=3,  # noqa: E731
                          history_every=1)
    for k in (1, 3):
        resume_matches(make, X, y, k, 4, via=via)


@pytest.mark.parametrize("forcing", [0.25, "relative", "eisenstat_walker"])
def test_preconditioned_truncated_newton_resumes_exactly(forcing: Any) -> None:
    """The preconditioner is formed again from the restored factors; the adaptive forcing
    rules' norms are in the checkpoint."""
    from sqnopt import Full, ScoreLine, TruncatedNewton

    X, y = binary_data()
    model = TruncatedNewton(preconditioner="diagonal", forcing=forcing)
    make = lambda: Solver(LogLoss(lam=1e-3), model, Full(), ScoreLine(),  # noqa: E731
                          curvature_schedule=Full(), random_state=3, history_every=1)
    for k in (1, 3):
        resume_matches(make, X, y, k, 4, via="file")


def test_score_line_restored_on_other_rows_gathers_their_scores() -> None:
    """Restored onto other rows of the same shape (continuing as rebind), the saved scores
    are not those of the rows: the first search gathers them (and its step is the one of a
    search without a cache)."""
    from sqnopt import Full, Newton, ScoreLine

    X, y = binary_data(seed=0)
    X2, y2 = binary_data(seed=1)
    solver = Solver(LogLoss(lam=1e-3), Newton(), Full(), ScoreLine(), random_state=3)
    st = solver.init_state(X, y)
    solver.run(st, max_iter=2)
    ck = st.checkpoint()
    restored = Solver(LogLoss(lam=1e-3), Newton(), Full(), ScoreLine(),
                      random_state=3).restore(ck, X2, y2, new_data=True)
    gathers = restored.step.n_score_gathers
    fresh = Solver(LogLoss(lam=1e-3), Newton(), Full(), ScoreLine(),
                   random_state=3).restore(ck, X2, y2, new_data=True)
    fresh.step.set_state({})
    a = Solver(LogLoss(lam=1e-3), Newton(), Full(), ScoreLine(), random_state=3).run(
        restored, max_iter=1)
    b = Solver(LogLoss(lam=1e-3), Newton(), Full(), ScoreLine(), random_state=3).run(
        fresh, max_iter=1)
    assert restored.step.n_score_gathers == gathers + 1
    np.testing.assert_array_equal(a.w, b.w)


def test_resume_is_independent_of_how_the_runs_are_split() -> None:
    """A checkpointed and resumed solve takes the iterates of one uninterrupted run(k + m)."""
    X, y = binary_data(sparse=True)
    for curvature in ("identity", "lbfgs", "adagrad"):
        def make(c: str = curvature) -> Solver:
            return Solver(LogLoss(lam=1e-3), c, Fixed(5), Decaying(0.05, 20), random_state=1,
                          average=True)
        one = make()
        st = one.init_state(X, y)
        whole = one.run(st, max_iter=40)
        part = make()
        s1 = part.init_state(X, y)
        part.run(s1, max_iter=15)
        s2 = make().restore(pickle.loads(pickle.dumps(s1.checkpoint())), X, y)
        res = make().run(s2, max_iter=25)
        same(np.asarray(whole.w), np.asarray(res.w))
        assert (whole.n_iter, whole.n_samples) == (res.n_iter, res.n_samples)


def test_pure_python_kernels_are_copied_and_rebound_to_the_data() -> None:
    """Kernels without get_state (the NumPy reference twins) are deep-copied with their
    references to the objective replaced; after restore they point to the new state's."""
    from sqnopt.curvature.reference import LBFGSNumPy, NewtonCGNumPy
    from sqnopt.gradients.reference import SVRGNumPy

    X, y = binary_data()
    for curvature, gradient in ((LBFGSNumPy(memory=3), "minibatch"),
                                (NewtonCGNumPy(), SVRGNumPy(period=30)),
                                ("lbfgs", SVRGNumPy(period=30))):
        make = lambda c=curvature, g=gradient: Solver(  # noqa: E731
            LogLoss(lam=1e-3), c, Fixed(6), Decaying(0.05, 20), gradient=g,
            curvature_schedule=Fixed(20) if c.__class__.__name__ == "NewtonCGNumPy" else None,
            random_state=0, report_every=4)
        resume_matches(make, X, y, 11, 9)
        s = make()
        st = s.init_state(X, y)
        s.run(st, max_iter=5)
        ck = pickle.loads(pickle.dumps(st.checkpoint()))
        restored = make().restore(ck, X, y)
        assert not restored.compiled
        assert restored.loop.curv is restored.curvature and restored.loop.est is restored.gradient
        for kernel in (restored.curvature, restored.gradient):
            for value in getattr(kernel, "__dict__", {}).values():
                assert not isinstance(value, _Bound) and value is not st.objective
        held = getattr(restored.curvature, "objective", None)
        assert held is None or held is restored.objective


# ---------------------------------------------------------------------------- kernels
def test_kernel_state_round_trip_continues_identically() -> None:
    """Kernel level: get_state / set_state on a fresh kernel, then the same pairs and
    directions give the same outputs (BFGS with pending deferred terms, RES between refreshes,
    L-BFGS with a wrapped ring, AdaGrad)."""
    from sqnopt.curvature._adagrad import AdaGradKernel
    from sqnopt.curvature._bfgs import BFGSKernel
    from sqnopt.curvature._lbfgs import LBFGSKernel
    from sqnopt.curvature._res_eig import RESEigKernel

    n = 12
    rng = np.random.default_rng(0)
    A = rng.normal(size=(n, n))
    A = A @ A.T / n + np.eye(n)
    makers = [lambda: BFGSKernel(n, fused=True, merge_every=4),
              lambda: BFGSKernel(n, delta=1e-3, cholesky=True, damp=True, auto_scale=True),
              lambda: BFGSKernel(n, damp=True, min_curvature=0.5),
              lambda: RESEigKernel(n, refresh_every=3, auto_scale=True),
              lambda: LBFGSKernel(n, memory=3, damp=True, min_curvature=0.2),
              lambda: AdaGradKernel(n, 1e-8, 0.1)]
    for make in makers:
        a = make()
        vs = rng.normal(size=(30, n))
        gs = rng.normal(size=(30, n))

        def step(k: Any, i: int) -> np.ndarray:
            out = np.empty(n)
            k.direction(gs[i], out)
            if k.needs_secant_pair:
                r = A @ vs[i] if i % 5 else -vs[i]        # every fifth pair is bad
                k.update_pair(vs[i], r)
            return out

        for i in range(11):
            step(a, i)
        b = make()
        b.set_state(pickle.loads(pickle.dumps(a.get_state())))
        for i in range(11, 30):
            same(step(a, i), step(b, i), f"{type(a).__name__} step {i}")
        same(a.get_state(), b.get_state())


def test_kernel_set_state_names_the_field_that_does_not_fit() -> None:
    from sqnopt.curvature._lbfgs import LBFGSKernel

    state = LBFGSKernel(5, memory=3).get_state()
    with pytest.raises(CheckpointError, match="'V'.*shape"):
        LBFGSKernel(6, memory=3).set_state(state)
    del state["rho"]
    with pytest.raises(CheckpointError, match="no field 'rho'"):
        LBFGSKernel(5, memory=3).set_state(state)


# ---------------------------------------------------------------------------- refusals
def test_restoring_onto_other_data_or_another_solver_fails_clearly() -> None:
    X, y = binary_data()
    make = lambda **kw: Solver(LogLoss(lam=1e-3), ("lbfgs", kw or {}), Fixed(5),  # noqa: E731
                               random_state=0)
    s = make()
    st = s.init_state(X, y)
    s.run(st, max_iter=7)
    ck = st.checkpoint()
    with pytest.raises(CheckpointError, match="other data.*digest"):
        make().restore(ck, X + 1e-9, y)
    y2 = y.copy()
    y2[-1] = -y2[-1]
    with pytest.raises(CheckpointError, match="other data"):
        make().restore(ck, X, y2)
    with pytest.raises(CheckpointError, match="other data.*n_samples"):
        make().restore(ck, X[:-1], y[:-1])
    with pytest.raises(CheckpointError, match="other data.*sparse"):
        make().restore(ck, sp.csr_matrix(X), y)
    with pytest.raises(CheckpointError, match="another solver.*curvature"):
        make(memory=4).restore(ck, X, y)
    with pytest.raises(CheckpointError, match="another solver.*sampling"):
        Solver(LogLoss(lam=1e-3), "lbfgs", Fixed(5), sampling="shuffle").restore(ck, X, y)
    with pytest.raises(CheckpointError, match="data_state=False"):
        make().restore(st.checkpoint(data_state=False), X, y)
    with pytest.raises(TypeError, match="Checkpoint"):
        make().restore(ck.state, X, y)  # type: ignore[arg-type]
    # budgets, tolerances and reporting may differ
    other = Solver(LogLoss(lam=1e-3), "lbfgs", Fixed(5), max_iter=3, report_every=2, gtol=1e-3)
    assert other.run(other.restore(ck, X, y)).n_iter == 10


def test_a_solver_state_does_not_pickle_but_points_to_the_checkpoint() -> None:
    X, y = binary_data()
    st = Solver(random_state=0).init_state(X, y)
    with pytest.raises(TypeError, match="checkpoint"):
        pickle.dumps(st)


# ---------------------------------------------------------------------------- files
def test_checkpoint_files_round_trip_exactly(tmp_path: Any) -> None:
    for curvature in ("regularized_bfgs", "quadratic_bound", "newton_cg", "newton"):
        make, objective = solver_factory("curvature", curvature)
        X, y = data_for(objective, True)
        resume_matches(make, X, y, 12, 9, via="file")


def test_checkpoint_file_with_a_python_kernel_is_refused_with_advice(tmp_path: Any) -> None:
    from sqnopt.curvature.reference import LBFGSNumPy

    X, y = binary_data()
    st = Solver(curvature=LBFGSNumPy(), random_state=0).init_state(X, y)
    with pytest.raises(CheckpointError, match="get_state"):
        st.checkpoint().save(tmp_path / "ck.npz")
    assert not (tmp_path / "ck.npz").exists()


def test_damaged_or_foreign_checkpoint_files_give_one_clear_error(tmp_path: Any) -> None:
    X, y = binary_data()
    s = Solver(curvature="lbfgs", random_state=0)
    st = s.init_state(X, y)
    s.run(st, max_iter=5)
    good = tmp_path / "ck.npz"
    st.checkpoint().save(good)
    raw = good.read_bytes()
    (tmp_path / "empty.npz").write_bytes(b"")
    (tmp_path / "trunc.npz").write_bytes(raw[: len(raw) // 2])
    flipped = bytearray(raw)
    flipped[len(raw) // 3] ^= 0xFF
    (tmp_path / "flip.npz").write_bytes(bytes(flipped))
    (tmp_path / "text.npz").write_text("hello")
    np.savez(tmp_path / "model.npz", meta=np.array('{"format": "sqnopt.LinearModel"}'))
    np.savez(tmp_path / "obj.npz", meta=np.array("{}"), a0=np.array([object()], dtype=object))
    for name in ("empty", "trunc", "flip", "text", "model", "obj"):
        with pytest.raises(CheckpointError, match=f"checkpoint file .*{name}.npz"):
            read_checkpoint_file(tmp_path / f"{name}.npz")
    with pytest.raises(FileNotFoundError):
        read_checkpoint_file(tmp_path / "missing.npz")
    assert isinstance(Checkpoint.load(good), Checkpoint)


# ---------------------------------------------------------------------------- new data
@pytest.mark.parametrize("kind, name", [c for c in CASES if c[0] != "objective"]
                         + [("objective", "softmax")])
def test_restore_on_new_data_continues_as_rebind(kind: str, name: str) -> None:
    """Checkpoint without the data-bound state, restore on the next batch: the same as
    Solver.rebind of the live state (what partial_fit after unpickling relies on)."""
    make, objective = solver_factory(kind, name)
    X1, y1 = data_for(objective, False, seed=0)
    X2, y2 = data_for(objective, False, seed=1)
    X2, y2 = X2[:70], y2[:70]
    if objective.label_kind == "multiclass":
        y2[:3] = [0, 1, 2]

    a = make()
    sa = a.init_state(X1, y1)
    a.run(sa, max_iter=15)
    a.rebind(sa, X2, y2)
    ra = a.run(sa, max_iter=12)

    b = make()
    sb = b.init_state(X1, y1)
    b.run(sb, max_iter=15)
    ck = pickle.loads(pickle.dumps(sb.checkpoint(data_state=False)))
    c = make()
    sc = c.restore(ck, X2, y2, new_data=True)
    rc = c.run(sc, max_iter=12)
    same_result(ra, rc)
    ref, got = comparable(sa), comparable(sc)
    if kind == "gradient" and name == "svrg":   # a diagnostic of the kernel, not of the solve
        ref["kernels"]["gradient"]["state"].pop("n_snapshots")
        got["kernels"]["gradient"]["state"].pop("n_snapshots")
    same(ref, got)


def test_restore_on_new_data_checks_the_features() -> None:
    X, y = binary_data()
    s = Solver(random_state=0)
    st = s.init_state(X, y)
    ck = st.checkpoint(data_state=False)
    with pytest.raises(CheckpointError, match="features"):
        s.restore(ck, X[:, :4], y, new_data=True)


def test_multiclass_objective_capability_is_covered() -> None:
    """The generic builder above reaches a multiclass objective for every multiclass kind."""
    assert any(REG.create("objective", n).label_kind == "multiclass"  # type: ignore[arg-type]
               for n in builtin("objective"))
    assert LogLoss().with_capability(MULTICLASS) is not None


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_kernel_pegasos_loop_resumes_exactly(kernel: str) -> None:
    """The driver with the kernel expansion (sqnopt.kernel) keeps the coefficients, the
    support, the scale and its position between run() calls; the loop's get_state / set_state
    with the counters and the sampler's state carry them to a new loop."""
    from sqnopt.data import make_rows
    from sqnopt.kernel._estimator import _row_sqnorms
    from sqnopt.kernel._pegasos import KernelIterate, KernelLoop, LinearMercer, RBFMercer
    from sqnopt.objectives._margin import HingeKernel
    from sqnopt.projections._base import L2BallKernel
    from sqnopt.schedules._base import FixedKernel
    from sqnopt.solver._loop import Counters
    from sqnopt.solver._sampler import UniformSampler
    from sqnopt.steps._base import PegasosStepKernel

    X, y = binary_data(sparse=True)
    n = X.shape[0]
    rows = make_rows(X, y, np.ones(n), np.ones(n), False)

    def loop(seed: int) -> tuple[KernelLoop, Counters, UniformSampler]:
        mercer = RBFMercer(0.5) if kernel == "rbf" else LinearMercer()
        obj = HingeKernel(rows, 1e-2)
        counters = Counters()
        sampler = UniformSampler(n, np.random.PCG64(seed))
        it = KernelIterate(obj, _row_sqnorms(X), mercer, True)
        ball = L2BallKernel(obj.n_params, obj.n_params, obj.n_params, 10.0)
        return (KernelLoop(obj, it, FixedKernel(n, 4), PegasosStepKernel(1e-2), ball, sampler,
                           counters), counters, sampler)

    ref, ref_c, _ = loop(0)
    ref.run(15, 0)
    ref.run(30, 0)
    a, a_c, a_s = loop(0)
    a.run(15, 0)
    saved = pickle.loads(pickle.dumps((a.get_state(), a_c, a_s.get_state(),
                                       a_s.bit_generator.state)))
    b, b_c, b_s = loop(99)                # another seed: the stream comes from the checkpoint
    for k, v in saved[1].as_dict().items():
        setattr(b_c, k, v)
    b_s.bit_generator.state = saved[3]
    b_s.set_state(saved[2])
    b.set_state(saved[0])
    b.run(30, 0)
    same(ref.get_state(), b.get_state())
    same(ref.representation.coefficients, b.representation.coefficients)
    assert ref.representation.n_sv > 0 and ref_c.t == b_c.t == 45
    # the representation has no dense iterate to rebuild from: counters edited from outside
    # are an error, not a silent restart
    b_c.t = 7
    with pytest.raises(CheckpointError, match="no dense iterate"):
        b.run(1, 0)


# ---------------------------------------------------------------------------- Trainer, estimator
def same_trainers(a: Any, b: Any) -> None:
    same(a.model_.coef, b.model_.coef, "coef")
    same(a.model_.intercept, b.model_.intercept, "intercept")
    assert (a.t_, a.n_iter_) == (b.t_, b.n_iter_)
    assert len(a.results_) == len(b.results_)
    for ra, rb in zip(a.results_, b.results_):
        same_result(ra, rb)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """The fits below end unconverged or below the majority on purpose (small budgets)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


TRAINER_CASES = [("logloss", "auto", False), ("logloss", "lbfgs", True),
                 ("logloss", "identity", True), ("logloss", "adagrad", False),
                 ("logloss", "regularized_bfgs", False), ("logloss", "quadratic_bound", True),
                 ("logloss", "newton_cg", False), ("squared_hinge", "full_bfgs", False),
                 ("hinge", "identity", True)]


@pytest.mark.parametrize("multiclass", [False, True], ids=["binary", "3 classes"])
@pytest.mark.parametrize("loss, curvature, sparse", TRAINER_CASES)
def test_trainer_partial_fit_pickled_between_batches_continues_exactly(
        loss: str, curvature: str, sparse: bool, multiclass: bool) -> None:
    from sqnopt.training import Trainer

    X, y = multiclass_data(sparse, n=240) if multiclass else binary_data(sparse, n=240)
    classes = np.unique(y)
    batches = [slice(0, 90), slice(90, 170), slice(170, 240)]
    with quiet():
        a = Trainer(loss, curvature=curvature, random_state=7, average=curvature == "identity")
        b = Trainer(loss, curvature=curvature, random_state=7, average=curvature == "identity")
        for t in (a, b):
            t.partial_fit(X[batches[0]], y[batches[0]], classes=classes)
        for sl in batches[1:]:
            b = pickle.loads(pickle.dumps(b))
            for t in (a, b):
                t.partial_fit(X[sl], y[sl])
    same_trainers(a, b)
    assert a.t_ > 0


def test_trainer_pickled_after_fit_continues_with_partial_fit_and_warm_start() -> None:
    from sqnopt.training import Trainer

    X, y = binary_data(n=240)
    with quiet():
        for curvature in ("lbfgs", "identity"):
            a = Trainer(curvature=curvature, random_state=1, max_epochs=3, warm_start=True)
            a.fit(X[:160], y[:160])
            b = pickle.loads(pickle.dumps(a))
            a2 = pickle.loads(pickle.dumps(a))
            a.partial_fit(X[160:], y[160:])
            b.partial_fit(X[160:], y[160:])
            same_trainers(a, b)
            a2.fit(X, y)                       # warm start from the pickled coefficients
            c = Trainer(curvature=curvature, random_state=1, max_epochs=3, warm_start=True)
            c.fit(X[:160], y[:160])
            c.fit(X, y)
            same_trainers(a2, c)


def test_estimator_partial_fit_pickled_between_batches_continues_exactly() -> None:
    from sqnopt import SQNClassifier

    X, y = multiclass_data(True, n=240)
    a = SQNClassifier(curvature="lbfgs", random_state=3)
    b = SQNClassifier(curvature="lbfgs", random_state=3)
    for est in (a, b):
        est.partial_fit(X[:120], y[:120], classes=[0.0, 1.0, 2.0])
    b = pickle.loads(pickle.dumps(b))
    for est in (a, b):
        est.partial_fit(X[120:], y[120:])
    same(a.coef_, b.coef_)
    same(a.intercept_, b.intercept_)
    assert a.t_ == b.t_


@pytest.mark.parametrize("loss, curvature, multiclass",
                         [("logloss", "lbfgs", False), ("logloss", "identity", False),
                          ("hinge", "identity", True), ("squared_hinge", "lbfgs", True),
                          ("logloss", "quadratic_bound", False)])
def test_trainer_fit_resumed_from_a_checkpoint_ends_with_the_uninterrupted_model(
        loss: str, curvature: str, multiclass: bool, tmp_path: Any) -> None:
    """A fit checkpointed every pass, stopped early by a smaller budget and resumed (through a
    checkpoint file) with the full one ends exactly where the uninterrupted fit ends; the same
    for a resume from each intermediate checkpoint."""
    from sqnopt.training import Trainer

    X, y = multiclass_data(n=150) if multiclass else binary_data(n=150)
    kw = dict(curvature=curvature, random_state=2, tol=1e-9, n_iter_no_change=50)
    with quiet():
        plain = Trainer(loss, max_epochs=6, **kw)
        plain.fit(X, y)
        full_cks: list[Checkpoint] = []
        full = Trainer(loss, max_epochs=6, **kw)
        full.fit(X, y, checkpoint=full_cks.append, checkpoint_every=1.5)
        same(plain.model_.coef, full.model_.coef)   # checkpointing changes no iterate
        first_cks: list[Checkpoint] = []
        Trainer(loss, max_epochs=2, **kw).fit(X, y, checkpoint=first_cks.append)
        path = tmp_path / "fit.ckpt.npz"
        first_cks[-1].save(path)
        resumed = Trainer(loss, max_epochs=6, **kw)
        resumed.fit(X, y, resume=Checkpoint.load(path))
        same(plain.model_.coef, resumed.model_.coef)
        same(plain.model_.intercept, resumed.model_.intercept)
        assert (plain.t_, plain.n_iter_) == (resumed.t_, resumed.n_iter_)
        for ra, rb in zip(plain.results_, resumed.results_):
            assert (ra.n_iter, ra.n_samples, ra.status, ra.fun) == \
                (rb.n_iter, rb.n_samples, rb.status, rb.fun)
        for ck in full_cks[:-1]:                    # resume from every intermediate point
            again = Trainer(loss, max_epochs=6, **kw)
            again.fit(X, y, resume=pickle.loads(pickle.dumps(ck)), checkpoint=lambda c: None,
                      checkpoint_every=1.5)
            same_trainers(full, again)
        done = Trainer(loss, max_epochs=6, **kw)    # the final checkpoint: nothing left to run
        done.fit(X, y, resume=full_cks[-1])
        same_trainers(full, done)
    assert len(full_cks) >= 3


def test_trainer_resume_refuses_other_data_or_settings() -> None:
    from sqnopt.training import Trainer

    X, y = binary_data()
    cks: list[Checkpoint] = []
    with quiet():
        Trainer(curvature="lbfgs", random_state=0, max_epochs=1).fit(X, y, checkpoint=cks.append)
        with pytest.raises(CheckpointError, match="other data"):
            Trainer(curvature="lbfgs", random_state=0).fit(X[:-1], y[:-1], resume=cks[-1])
        with pytest.raises(CheckpointError, match="other settings.*alpha"):
            Trainer(curvature="lbfgs", random_state=0, alpha=1e-3).fit(X, y, resume=cks[-1])
        with pytest.raises(CheckpointError, match="other settings.*random_state"):
            Trainer(curvature="lbfgs", random_state=1).fit(X, y, resume=cks[-1])
        with pytest.raises(ValueError, match="checkpoint_every"):
            Trainer().fit(X, y, checkpoint=cks.append, checkpoint_every=0)
        s = Solver(random_state=0)
        with pytest.raises(CheckpointError, match="not of a Trainer"):
            Trainer().fit(X, y, resume=s.init_state(X, y).checkpoint())
        with pytest.raises(CheckpointError, match="not of a solve"):
            s.restore(cks[-1], X, y)


# ---------------------------------------------------------------------------- command line
def _svmlight(tmp_path: Any, multiclass: bool, name: str = "data.svm", n: int = 200) -> str:
    from sklearn.datasets import dump_svmlight_file

    X, y = multiclass_data(n=n) if multiclass else binary_data(n=n)
    path = tmp_path / name
    dump_svmlight_file(X, y, str(path), zero_based=False)
    return str(path)


def _train(capsys: Any, tmp_path: Any, data: str, tag: str, *extra: str) -> tuple[int, str]:
    from sqnopt.cli import main

    code = main(["train", data, "--progress", "never", "--model", str(tmp_path / f"{tag}.npz"),
                 "--history", str(tmp_path / f"{tag}.json"), *extra])
    err = capsys.readouterr().err
    return code, err


@pytest.mark.parametrize("settings, multiclass",
                         [(("--curvature", "lbfgs"), False),             # full-batch phase
                          (("--loss", "hinge", "--n-iter-no-change", "50"), True)],  # SGD, ovr
                         ids=["lbfgs", "hinge-ovr"])
def test_cli_train_interrupted_then_resumed_writes_the_uninterrupted_model(
        capsys: Any, tmp_path: Any, monkeypatch: Any, settings: tuple[str, ...],
        multiclass: bool) -> None:
    """``sqnopt train --checkpoint`` killed (Ctrl-C) after its second checkpoint, then run again
    with ``--resume``, writes the model the uninterrupted run writes; so does a run stopped by a
    smaller ``--max-epochs`` and extended by a resumed one."""
    from sqnopt.model import LinearModel

    data = _svmlight(tmp_path, multiclass)
    common = ("--tol", "1e-9", "--max-epochs", "5", *settings)
    code, err = _train(capsys, tmp_path, data, "full", *common)
    assert code == 0, err
    full = LinearModel.load(tmp_path / "full.npz")

    ckpt = str(tmp_path / "run.ckpt.npz")
    real_save = Checkpoint.save
    saved: list[int] = []

    def save_then_interrupt(self: Checkpoint, path: Any) -> Any:
        out = real_save(self, path)
        saved.append(1)
        if len(saved) == 2:
            raise KeyboardInterrupt
        return out

    monkeypatch.setattr(Checkpoint, "save", save_then_interrupt)
    code, err = _train(capsys, tmp_path, data, "killed", *common, "--checkpoint", ckpt)
    monkeypatch.undo()
    assert code == 130 and "interrupted" in err
    assert not (tmp_path / "killed.npz").exists()
    code, err = _train(capsys, tmp_path, data, "resumed", *common, "--resume", ckpt,
                       "--checkpoint", ckpt)
    assert code == 0, err
    resumed = LinearModel.load(tmp_path / "resumed.npz")
    assert np.array_equal(full.coef, resumed.coef)
    assert np.array_equal(full.intercept, resumed.intercept)

    short = (*common[:2], "--max-epochs", "2", *settings)      # a smaller budget, extended
    code, err = _train(capsys, tmp_path, data, "short", *short, "--checkpoint", ckpt,
                       "--checkpoint-every", "0.5")
    assert code == 0, err
    code, err = _train(capsys, tmp_path, data, "extended", *common, "--resume", ckpt)
    assert code == 0, err
    extended = LinearModel.load(tmp_path / "extended.npz")
    assert np.array_equal(full.coef, extended.coef)
    assert not np.array_equal(full.coef, LinearModel.load(tmp_path / "short.npz").coef)


def test_cli_checkpoint_and_resume_errors_are_one_line_before_any_work(
        capsys: Any, tmp_path: Any) -> None:
    data = _svmlight(tmp_path, False)
    other = _svmlight(tmp_path, False, "other.svm", n=150)
    ckpt = str(tmp_path / "c.npz")
    code, err = _train(capsys, tmp_path, data, "m", "--max-epochs", "1", "--checkpoint", ckpt)
    assert code == 0, err

    def fails(*extra: str, data: str = data) -> str:
        code, err = _train(capsys, tmp_path, data, "m2", *extra)
        assert code == 1, err
        assert err.count("\n") == 1 and err.startswith("sqnopt: error:"), err
        assert not (tmp_path / "m2.npz").exists()
        return err

    assert "other settings" in fails("--resume", ckpt, "--alpha", "0.01") and "alpha" in \
        fails("--resume", ckpt, "--alpha", "0.01")
    assert "other settings" in fails("--resume", ckpt, "--seed", "3")
    assert "other data" in fails("--resume", ckpt, data=other)
    damaged = tmp_path / "damaged.npz"
    damaged.write_bytes(Path(ckpt).read_bytes()[:200])
    assert "damaged.npz" in fails("--resume", str(damaged))
    assert "does not exist" in fails("--resume", str(tmp_path / "none.npz"))
    assert "--chunk-size" in fails("--checkpoint", ckpt, "--chunk-size", "50")
    assert "--chunk-size" in fails("--resume", ckpt, "--chunk-size", "50")
    assert "needs --checkpoint" in fails("--checkpoint-every", "2")
    assert "same file" in fails("--checkpoint", str(tmp_path / "m2.npz"))
    assert "directory" in fails("--checkpoint", str(tmp_path))
    assert "positive number" in _usage_error(capsys, data, "--checkpoint-every", "0")


def _usage_error(capsys: Any, *argv: str) -> str:
    from sqnopt.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["train", *argv])
    assert exc.value.code == 2
    return str(capsys.readouterr().err)


def test_trainer_pickled_by_an_older_version_refuses_partial_fit_and_says_to_refit() -> None:
    """Pickles of sqnopt before exact resume held ``_snapshots`` (iterate, counters, stream but
    no curvature memory); continuing them would silently be inexact."""
    from sqnopt.training import Trainer

    X, y = binary_data()
    t = Trainer(curvature="lbfgs", random_state=0)
    t.partial_fit(X[:60], y[:60], classes=[-1.0, 1.0])
    d = t.__getstate__()
    d.pop("_checkpoints")
    d["_snapshots"] = [{"w": np.zeros(7)}]
    old = Trainer.__new__(Trainer)
    old.__setstate__(d)
    np.testing.assert_array_equal(old.model_.coef, t.model_.coef)   # the model still predicts
    with pytest.raises(ValueError, match="older sqnopt.*fit it again"):
        old.partial_fit(X[60:], y[60:])
