"""Type stub for the compiled module ``sqnopt.projections._base``."""

import numpy as np
from numpy.typing import NDArray

class ProjectionKernel:
    """Compiled projection (base class: no constraint)."""

    def __init__(self, n_params: int, block: int, n_reg: int) -> None: ...
    @property
    def n_params(self) -> int: ...
    @property
    def block(self) -> int: ...
    @property
    def n_reg(self) -> int: ...
    def project(self, w: NDArray[np.float64]) -> None: ...  # double[::1] w, in place

class L2BallKernel(ProjectionKernel):
    def __init__(self, n_params: int, block: int, n_reg: int, radius: float) -> None: ...
    @property
    def radius(self) -> float: ...
