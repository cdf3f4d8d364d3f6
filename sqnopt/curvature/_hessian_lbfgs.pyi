"""Type stub for the compiled module ``sqnopt.curvature._hessian_lbfgs``."""

from sqnopt.curvature._lbfgs import LBFGSKernel

class HessianLBFGSKernel(LBFGSKernel):
    def __init__(self, dim: int, n_samples: int, hess_size: int, memory: int = ...,
                 update_every: int = ..., gamma0: float = ..., min_curvature: float = ...,
                 reset_on_nonfinite: bool = ...) -> None: ...
    @property
    def update_every(self) -> int: ...
    @property
    def n_windows(self) -> int: ...
