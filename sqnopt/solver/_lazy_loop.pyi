"""Type stub for the compiled module ``sqnopt.solver._lazy_loop``."""

from typing import Any, final

import numpy as np
from numpy.typing import NDArray

from sqnopt.gradients._base import GradientKernel
from sqnopt.objectives._base import MarginObjectiveKernel
from sqnopt.projections._base import ProjectionKernel
from sqnopt.schedules._base import ScheduleKernel
from sqnopt.solver._iterate import IterateKernel
from sqnopt.solver._loop import CompiledLoop, Counters
from sqnopt.solver._sampler import Sampler
from sqnopt.steps._base import StepKernel

@final
class LazyTableIterate(IterateKernel):
    """The iterate ``w = [s v, b]`` with SAGA's lazy coordinates."""

    def __init__(
        self,
        objective: MarginObjectiveKernel,
        gradient: GradientKernel,
        w: NDArray[np.float64],  # double[::1]
    ) -> None: ...
    @property
    def scale(self) -> float: ...
    @property
    def cum(self) -> float: ...
    @property
    def intercept(self) -> float: ...
    @property
    def pdot(self) -> float: ...
    @property
    def qnorm(self) -> float: ...
    @property
    def n_folds(self) -> int: ...

class LazyTableLoop(CompiledLoop):
    """The driver with the lazy SAGA iterate."""

    def __init__(
        self,
        objective: MarginObjectiveKernel,
        gradient: GradientKernel,
        schedule: ScheduleKernel,
        step: StepKernel,
        projection: ProjectionKernel | None,
        sampler: Sampler,
        w: NDArray[np.float64],  # double[::1]
        counters: Counters,
    ) -> None: ...
    @property
    def scale(self) -> float: ...
    @property
    def n_folds(self) -> int: ...

def lazy_loop_supported(gradient: Any, gradient_kernel: Any, average: bool) -> str: ...

LAZY_ENTRY_FRACTION: float

def lazy_entries_pay(n_samples: int, n_features: int, nnz: int, batch: int) -> bool: ...
def lazy_loop_pays(objective_kernel: Any, schedule_kernel: Any) -> bool: ...
