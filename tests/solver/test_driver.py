"""The compiled loops' carried state: the scaled sparse loop's checkpoint state keeps the
format checkpoints were written in, so a restructured loop still reads them."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from sqnopt import Fixed, Hinge, L2Ball, PegasosStep, Solver


def _data() -> tuple[sp.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(0)
    X = sp.random(80, 30, density=0.2, random_state=1, format="csr")
    y = np.where(rng.random(80) < 0.5, -1.0, 1.0)
    return X, y


def _pegasos(**kw: object) -> Solver:
    return Solver(Hinge(lam=1e-2), "identity", Fixed(2), PegasosStep(), projection=L2Ball(),
                  average=True, random_state=0, **kw)  # type: ignore[arg-type]


# The keys of the scaled loop's checkpoint state as checkpoints hold them.
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
