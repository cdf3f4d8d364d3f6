"""Type stub for the compiled module ``sqnopt.composite._owlqn``."""

import numpy as np
from numpy.typing import NDArray

from sqnopt.curvature._lbfgs import LBFGSKernel
from sqnopt.objectives._base import ObjectiveKernel
from sqnopt.penalties._base import PenaltyKernel

OWLQN_MAX_ITER: int
OWLQN_GTOL: int
OWLQN_FTOL: int
OWLQN_PRECISION: int
OWLQN_NONFINITE: int

def owlqn_run(
    objective: ObjectiveKernel,
    penalty: PenaltyKernel,
    memory: LBFGSKernel,
    w: NDArray[np.float64],
    max_iter: int,
    tol: float,
    ftol: float = 0.0,
    max_search: int = 40,
    c1: float = 1e-4,
    trace: NDArray[np.float64] | None = None,
    iterates: NDArray[np.float64] | None = None,
) -> tuple[int, int, float, int, float]: ...
