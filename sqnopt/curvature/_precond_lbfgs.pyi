"""Type stub for the compiled module ``sqnopt.curvature._precond_lbfgs``."""

from typing import Any

import numpy as np
from numpy.typing import NDArray

from sqnopt.curvature._lbfgs import LBFGSKernel

class BoundLBFGSKernel(LBFGSKernel):
    """L-BFGS whose two-loop recursion starts from ``gamma_t M^{-1}`` (Böhning's bound)."""

    def __init__(
        self,
        block: int,
        n_blocks: int,
        bound: float,
        memory: int = 10,
        gamma0: float = 1.0,
        min_curvature: float = 0.0,
        reset_on_nonfinite: bool = True,
        rows: int = 0,
    ) -> None: ...
    @property
    def block(self) -> int: ...
    @property
    def n_blocks(self) -> int: ...
    @property
    def bound(self) -> float: ...
    @property
    def has_bound(self) -> bool: ...
    @property
    def n_rows(self) -> int: ...
    @property
    def max_rows(self) -> int: ...
    @property
    def sparse_pairs(self) -> bool: ...
    def bind(self, objective: Any) -> None: ...
    def factor(self) -> NDArray[np.float64]: ...
    def precondition(self, x: NDArray[np.float64]) -> NDArray[np.float64]: ...
