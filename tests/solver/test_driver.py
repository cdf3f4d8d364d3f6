"""The one compiled driver and its iterate representations: the scaled sparse iterate is a
component of :class:`CompiledLoop` (``ScaledLoop`` only builds the driver with it), its
checkpoint state keeps the format older versions wrote, and the driver refuses what a
coefficient-form update cannot apply."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import Armijo, Fixed, Hinge, L2Ball, LogLoss, PegasosStep, Solver
from sqnopt.solver._iterate import IterateKernel
from sqnopt.solver._loop import CompiledLoop
from sqnopt.solver._scaled_loop import ScaledIterate, ScaledLoop


def _data() -> tuple[sp.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(0)
    X = sp.random(80, 30, density=0.2, random_state=1, format="csr")
    y = np.where(rng.random(80) < 0.5, -1.0, 1.0)
    return X, y


def _pegasos(**kw: object) -> Solver:
    return Solver(Hinge(lam=1e-2), "identity", Fixed(2), PegasosStep(), projection=L2Ball(),
                  average=True, random_state=0, **kw)  # type: ignore[arg-type]


def test_scaled_loop_is_the_driver_with_the_scaled_iterate() -> None:
    X, y = _data()
    loop = _pegasos().init_state(X, y).loop
    assert isinstance(loop, CompiledLoop) and isinstance(loop, ScaledLoop)
    assert isinstance(loop.iterate, ScaledIterate) and isinstance(loop.iterate, IterateKernel)
    assert loop.iterate.lookahead == 4          # batches drawn ahead for its prefetches
    dense = _pegasos(path="generic").init_state(X, y).loop
    assert type(dense) is CompiledLoop and dense.iterate is None


# The keys of the scaled loop's checkpoint state as earlier versions wrote them: a checkpoint
# saved before the loop became a component of the driver restores into it.
SCALED_KEYS = {"loop", "nf", "average", "vu", "scale", "sqnorm", "intercept", "avg_scale",
               "avg_intercept", "n_folds", "last_t", "last_samples", "last_n_avg"}
AHEAD_KEYS = {"drawn_upto", "exhausted_at", "ahead_samples", "pending_sizes", "pending"}


def test_scaled_state_keeps_its_checkpoint_format() -> None:
    X, y = _data()
    solver = _pegasos()
    state = solver.init_state(X, y)
    solver.run(state, max_iter=25)
    full = state.loop.get_state()
    assert set(full) == SCALED_KEYS | AHEAD_KEYS and full["loop"] == "scaled"
    assert full["pending_sizes"].shape == (0,)   # nothing drawn beyond the call's iterations
    assert set(state.loop.get_state(data_state=False)) == SCALED_KEYS
    assert full["last_t"] == 25 and full["nf"] == X.shape[1]


def test_driver_refuses_what_a_coefficient_update_cannot_apply() -> None:
    X, y = _data()
    st = Solver(LogLoss(lam=1e-3), "identity", Fixed(5), Armijo(), path="generic",
                random_state=0).init_state(X, y)
    with pytest.raises(ValueError, match="line search needs the dense iterate"):
        ScaledLoop(st.objective, st.schedule, st.step, None, st.sampler,  # type: ignore[arg-type]
                   st.w, None, st.counters, False, 0)
    with pytest.raises(ValueError, match="n_params"):
        IterateKernel(0)
    with pytest.raises(NotImplementedError):
        IterateKernel(3).get_state()


def test_a_curvature_model_and_its_kernel_declare_the_gradient_direction_alike() -> None:
    """The recipes read ``CurvatureModel.direction_is_gradient`` before any kernel exists and
    the driver reads the kernel's: a model whose kernel says otherwise is refused when the
    solver builds it, naming both declarations."""
    from dataclasses import dataclass

    from sqnopt import LBFGS, Identity

    @dataclass(frozen=True)
    class Understated(Identity):
        direction_is_gradient = False       # its IdentityKernel steps along the gradient
        name = "understated_identity"

    @dataclass(frozen=True)
    class Overstated(LBFGS):
        direction_is_gradient = True        # its L-BFGS kernel learns a matrix
        name = "overstated_lbfgs"

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    for model, said, does in ((Understated(), False, True), (Overstated(), True, False)):
        solver = Solver(objective=LogLoss(lam=1e-2), curvature=model, schedule=Fixed(4))
        with pytest.raises(TypeError, match=f"declares direction_is_gradient={said}, but the "
                                            rf"kernel .* declares {does}"):
            solver.fit(X, y)
    # the built-ins agree
    assert Identity.direction_is_gradient and not LBFGS.direction_is_gradient
    Solver(objective=LogLoss(lam=1e-2), curvature=Identity(), schedule=Fixed(4),
           max_epochs=1).fit(X, y)
