"""Type stub for the compiled module ``sqnopt.curvature._secant``."""

import numpy as np
from numpy.typing import NDArray

from sqnopt.curvature._base import CurvatureKernel

class SecantKernel(CurvatureKernel):
    """Base of the compiled BFGS-family kernels (safeguards, counters, ``B v``)."""

    def __init__(
        self,
        dim: int,
        min_curvature: float = 0.0,
        damp: bool = False,
        damping: float = 0.2,
        reset_on_nonfinite: bool = True,
    ) -> None: ...
    @property
    def min_curvature(self) -> float: ...
    @property
    def damp(self) -> bool: ...
    @property
    def damping(self) -> float: ...
    @property
    def reset_on_nonfinite(self) -> bool: ...
    @property
    def n_damped(self) -> int: ...
    @property
    def n_updates(self) -> int: ...
    def reset(self) -> None: ...
    def hessian_vector(
        self,
        v: NDArray[np.float64],  # const double[::1]
    ) -> NDArray[np.float64]: ...
