"""Type stub for the compiled module ``sqnopt.curvature._lbfgs``."""

import numpy as np
from numpy.typing import NDArray

from sqnopt.curvature._secant import SecantKernel

class LBFGSKernel(SecantKernel):
    """oLBFGS: two-loop recursion over a ring buffer of the last ``memory`` pairs."""

    def __init__(
        self,
        dim: int,
        memory: int = 10,
        gamma0: float = 1.0,
        min_curvature: float = 0.0,
        damp: bool = False,
        damping: float = 0.2,
        reset_on_nonfinite: bool = True,
    ) -> None: ...
    @property
    def memory(self) -> int: ...
    @property
    def count(self) -> int: ...
    @property
    def gamma(self) -> float: ...
    @property
    def gamma0(self) -> float: ...
    def pairs(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]: ...
