"""Type stub for the compiled module ``sqnopt.steps._wolfe``."""

from typing import Any

import numpy as np
from numpy.typing import NDArray

from sqnopt.steps._base import StepKernel

class WolfeKernel(StepKernel):
    def __init__(self, eps0: float, c1: float, c2: float, expand: float,
                 max_evals: int) -> None: ...
    @property
    def eps0(self) -> float: ...
    @property
    def c1(self) -> float: ...
    @property
    def c2(self) -> float: ...
    @property
    def expand(self) -> float: ...
    @property
    def max_evals(self) -> int: ...
    def search(self, objective: Any, w: NDArray[np.float64], batch: NDArray[np.intp], f0: float,
               g: NDArray[np.float64], d: NDArray[np.float64], w_next: NDArray[np.float64],
               g_next: NDArray[np.float64]) -> tuple[float, float, int]: ...
