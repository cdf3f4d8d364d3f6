"""Type stub for the compiled module ``sqnopt.curvature._adagrad``."""

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sqnopt.curvature._base import CurvatureKernel

class AdaGradKernel(CurvatureKernel):
    def __init__(
        self,
        dim: int,
        delta: float,
        initial_accumulator: float,
        composite: bool = False,
        lam: float = 0.0,
        block: int = 0,
        intercept: bool = False,
        l1: float = 0.0,
        ftrl: bool = False,
    ) -> None: ...
    ftrl_t: float
    ftrl_eta: float
    @property
    def ftrl_proximal(self) -> bool: ...
    @property
    def dual(self) -> NDArray[np.float64]: ...
    @property
    def delta(self) -> float: ...
    @property
    def lam(self) -> float: ...
    @property
    def l1(self) -> float: ...
    @property
    def block(self) -> int: ...
    @property
    def intercept(self) -> bool: ...
    @property
    def accumulator(self) -> NDArray[np.float64]: ...
    @property
    def regularized(self) -> NDArray[np.float64]: ...
    def matvec(self, g: ArrayLike) -> NDArray[np.float64]: ...
    def to_dense(self) -> NDArray[np.float64]: ...
