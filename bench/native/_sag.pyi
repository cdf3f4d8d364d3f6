"""Type stub for the compiled module ``sqnopt._sag`` (SAG benchmark baseline)."""

import numpy as np
from numpy.typing import NDArray

from sqnopt.objectives._base import MarginObjectiveKernel
from sqnopt.solver._sampler import Sampler

class SAGRunner:
    """Stochastic average gradient for margin losses (one sample per iteration)."""

    def __init__(
        self,
        objective: MarginObjectiveKernel,
        sampler: Sampler,
        w: NDArray[np.float64],  # double[::1], updated in place
        eps0: float,
        T0: float,
    ) -> None: ...
    @property
    def t(self) -> int: ...
    @property
    def n_seen(self) -> int: ...
    @property
    def eps0(self) -> float: ...
    @property
    def T0(self) -> float: ...
    def run(
        self,
        n_iter: int,
        trace: NDArray[np.float64] | None = None,  # double[:, ::1]
        trace_every: int = 0,
    ) -> int: ...
