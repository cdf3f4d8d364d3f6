"""Type stub for the compiled module ``sqnopt.projections._mirror``."""

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sqnopt.projections._base import ProjectionKernel

class MirrorMapKernel(ProjectionKernel):
    def __init__(self, n_params: int, block: int, n_reg: int) -> None: ...
    def start(self, w0: ArrayLike) -> None: ...
    @property
    def theta(self) -> NDArray[np.float64]: ...

class LazyProjectionKernel(MirrorMapKernel):
    def __init__(
        self, n_params: int, block: int, n_reg: int, inner: ProjectionKernel | None
    ) -> None: ...
    @property
    def inner(self) -> ProjectionKernel | None: ...

class ExpGradPMKernel(MirrorMapKernel):
    def __init__(self, n_params: int, block: int, n_reg: int, radius: float) -> None: ...
    @property
    def radius(self) -> float: ...
