"""Type stub for the compiled module ``sqnopt.curvature._res_eig``."""

import numpy as np
from numpy.typing import NDArray

from sqnopt.curvature._secant import SecantKernel

MAX_DIM: int
"""The largest dimension the eig form accepts (LAPACK's 32-bit workspace index)."""

def default_refresh_every(dim: int) -> int: ...

class RESEigKernel(SecantKernel):
    """RES with ``B`` held as an eigendecomposition plus the pairs since (Woodbury solves)."""

    def __init__(
        self,
        dim: int,
        delta: float = 1e-3,
        Gamma: float = 1e-4,
        init_scale: float = 1.0,
        min_curvature: float = 0.0,
        damp: bool = False,
        damping: float = 0.2,
        reset_on_nonfinite: bool = True,
        auto_scale: bool = False,
        refresh_every: int | None = None,
        residual_tol: float = 1e-10,
    ) -> None: ...
    @property
    def delta(self) -> float: ...
    @property
    def Gamma(self) -> float: ...
    @property
    def init_scale(self) -> float: ...
    @property
    def auto_scale(self) -> bool: ...
    @property
    def refresh_every(self) -> int: ...
    @property
    def n_refreshes(self) -> int: ...
    @property
    def n_residual_refreshes(self) -> int: ...
    @property
    def residual_tol(self) -> float: ...
    @property
    def last_residual(self) -> float: ...
    @property
    def shift(self) -> float: ...
    @property
    def n_pending(self) -> int: ...
    def hessian(self) -> NDArray[np.float64]: ...
    def inverse_hessian(self) -> NDArray[np.float64]: ...
