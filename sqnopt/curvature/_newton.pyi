"""Type stub for the compiled module ``sqnopt.curvature._newton``."""

from sqnopt.curvature._base import CurvatureKernel

class NewtonKernel(CurvatureKernel):
    def __init__(self, dim: int, n_samples: int, hess_size: int) -> None: ...
    @property
    def have_factor(self) -> bool: ...
    @property
    def n_factorizations(self) -> int: ...
