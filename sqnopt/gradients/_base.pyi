"""Type stub for the compiled module ``sqnopt.gradients._base``."""

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sqnopt.objectives._base import ObjectiveKernel

class GradientKernel:
    """Base of compiled gradient-estimator kernels."""

    def __init__(self, dim: int) -> None: ...
    @property
    def dim(self) -> int: ...
    @property
    def plain(self) -> bool: ...
    def bind(self, objective: ObjectiveKernel) -> None: ...
    def estimate(self, objective: ObjectiveKernel, w: NDArray[np.float64], batch: ArrayLike,
                 out: NDArray[np.float64],
                 plain: NDArray[np.float64] | None = None) -> tuple[float, int]: ...

class MinibatchKernel(GradientKernel): ...
