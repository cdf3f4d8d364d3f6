"""Type stub for the compiled module ``sqnopt.kernel._pegasos``."""

from typing import final

import numpy as np
from numpy.typing import NDArray

from sqnopt.objectives._base import MarginObjectiveKernel
from sqnopt.projections._base import ProjectionKernel
from sqnopt.schedules._base import ScheduleKernel
from sqnopt.solver._iterate import IterateKernel
from sqnopt.solver._loop import CompiledLoop, Counters
from sqnopt.solver._sampler import Sampler
from sqnopt.steps._base import StepKernel

class MercerKernel:
    def __call__(self, dot: float, sq_i: float, sq_j: float) -> float: ...

class LinearMercer(MercerKernel): ...

class RBFMercer(MercerKernel):
    def __init__(self, gamma: float) -> None: ...
    @property
    def gamma(self) -> float: ...

class PolyMercer(MercerKernel):
    def __init__(self, gamma: float, coef0: float, degree: int) -> None: ...
    @property
    def gamma(self) -> float: ...
    @property
    def coef0(self) -> float: ...
    @property
    def degree(self) -> int: ...

@final
class KernelIterate(IterateKernel):
    def __init__(
        self,
        objective: MarginObjectiveKernel,
        row_sqnorms: NDArray[np.float64],  # const double[::1]
        kernel: MercerKernel,
        fit_intercept: bool,
    ) -> None: ...
    @property
    def support(self) -> NDArray[np.intp]: ...
    @property
    def coefficients(self) -> NDArray[np.float64]: ...
    @property
    def n_sv(self) -> int: ...
    @property
    def scale(self) -> float: ...
    @property
    def intercept(self) -> float: ...
    @property
    def n_kernel_evals(self) -> int: ...

class KernelLoop(CompiledLoop):
    def __init__(
        self,
        objective: MarginObjectiveKernel,
        iterate: KernelIterate,
        schedule: ScheduleKernel,
        step: StepKernel,
        projection: ProjectionKernel | None,
        sampler: Sampler,
        counters: Counters,
    ) -> None: ...
    @property
    def representation(self) -> KernelIterate: ...
