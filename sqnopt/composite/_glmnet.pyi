"""Type stub for the compiled module ``sqnopt.composite._glmnet``."""

import numpy as np
from numpy.typing import NDArray

from sqnopt.curvature._newton import NewtonKernel
from sqnopt.objectives._base import ObjectiveKernel
from sqnopt.penalties._base import PenaltyKernel

GLMNET_MAX_ITER: int
GLMNET_GTOL: int
GLMNET_PRECISION: int
GLMNET_NONFINITE: int
MODEL_TOLERANCE: float
PAIR_FLOOR_DEFAULT: float
DEFAULT_SEED: int

class QuadraticModel:
    n: int
    def __init__(self, n: int) -> None: ...
    def solve(
        self,
        H: NDArray[np.float64],
        g: NDArray[np.float64],
        w: NDArray[np.float64],
        u: NDArray[np.float64],
        nf: int,
        l1: float,
        lam: float,
        eps: float,
    ) -> tuple[int, int]: ...

def glmnet_run(
    objective: ObjectiveKernel,
    penalty: PenaltyKernel,
    indptr: NDArray[np.intp],
    indices: NDArray[np.intp],
    values: NDArray[np.float64],
    rows: NDArray[np.intp],
    w: NDArray[np.float64],
    scores: NDArray[np.float64],
    max_iter: int,
    tol: float,
    max_inner: int = 1000,
    eta: float = 1.0,
    max_search: int = 30,
    shrink: bool = True,
    trace: NDArray[np.float64] | None = None,
    iterates: NDArray[np.float64] | None = None,
    dense: NewtonKernel | None = None,
    dense_after: int = 1,
    subset_max: int = 0,
    dense_columns: bool = False,
    seed: int = 0,
    pair_floor: float = ...,
) -> tuple[int, int, float, float, int]: ...

def _pair_floor_policy(floor: float | None = None) -> float: ...
def _face_cg_policy(
    after: int | None = None,
    every: int | None = None,
    steps: int | None = None,
    tol: float | None = None,
) -> tuple[int, int, int, float]: ...
