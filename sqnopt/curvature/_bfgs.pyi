"""Type stub for the compiled module ``sqnopt.curvature._bfgs``."""

import numpy as np
from numpy.typing import NDArray

from sqnopt.curvature._secant import SecantKernel

FUSED_MIN_DIM_BY_VARIANT: dict[str, int]
"""``FUSED_MIN_DIM`` for each vector-kernel variant (``sqnopt._simd_info.simd_variant()``)."""
FUSED_MIN_DIM: int
"""From this dimension on, the inverse form uses the fused one-pass update kernel (the value
for the vector-kernel variant in use)."""
OWN_CHOLESKY_MAX_DIM: int
"""Up to this dimension, the Cholesky form factors with its own panel kernel (beyond: LAPACK)."""

def default_merge_every(dim: int) -> int: ...
def _cholesky_upper(a: NDArray[np.float64], own: bool = True) -> tuple[int, NDArray[np.float64]]: ...

class BFGSKernel(SecantKernel):
    """Full-matrix online BFGS / RES (inverse form for delta = 0, Cholesky form otherwise)."""

    def __init__(
        self,
        dim: int,
        delta: float = 0.0,
        Gamma: float = 0.0,
        init_scale: float = 1.0,
        cholesky: bool = False,
        min_curvature: float = 0.0,
        damp: bool = False,
        damping: float = 0.2,
        reset_on_nonfinite: bool = True,
        auto_scale: bool = False,
        merge_every: int | None = None,
        fused: bool | None = None,
        own_cholesky: bool | None = None,
    ) -> None: ...
    @property
    def delta(self) -> float: ...
    @property
    def Gamma(self) -> float: ...
    @property
    def init_scale(self) -> float: ...
    @property
    def cholesky(self) -> bool: ...
    @property
    def auto_scale(self) -> bool: ...
    @property
    def merge_every(self) -> int: ...
    @property
    def fused(self) -> bool: ...
    @property
    def own_cholesky(self) -> bool: ...
    @property
    def trace_H(self) -> float: ...
    @property
    def n_pending(self) -> int: ...
    def _set_defer_limit(self, limit: float) -> None: ...
    def hessian(self) -> NDArray[np.float64]: ...
    def inverse_hessian(self) -> NDArray[np.float64]: ...
