"""Type stub for the compiled module ``sqnopt.projections._l1ball``."""

from sqnopt.projections._base import ProjectionKernel

class L1BallKernel(ProjectionKernel):
    def __init__(self, n_params: int, block: int, n_reg: int, radius: float) -> None: ...
    @property
    def radius(self) -> float: ...
