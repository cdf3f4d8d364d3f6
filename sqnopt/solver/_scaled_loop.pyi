"""Type stub for the compiled module ``sqnopt.solver._scaled_loop``."""

from typing import Any, final

import numpy as np
from numpy.typing import NDArray

from sqnopt.data._rows import RowData
from sqnopt.objectives._base import MarginObjectiveKernel
from sqnopt.projections._base import ProjectionKernel
from sqnopt.schedules._base import ScheduleKernel
from sqnopt.solver._iterate import IterateKernel
from sqnopt.solver._loop import CompiledLoop, Counters
from sqnopt.solver._sampler import Sampler
from sqnopt.steps._base import StepKernel

@final
class ScaledIterate(IterateKernel):
    """The scaled sparse iterate ``w_reg = a * v`` with the lazy average."""

    def __init__(
        self,
        objective: MarginObjectiveKernel,
        w: NDArray[np.float64],  # double[::1]
        w_avg: NDArray[np.float64] | None,  # double[::1]
        average: bool,
    ) -> None: ...
    @property
    def scale(self) -> float: ...
    @property
    def intercept(self) -> float: ...
    @property
    def avg_scale(self) -> float: ...
    @property
    def avg_intercept(self) -> float: ...
    @property
    def n_folds(self) -> int: ...

class ScaledLoop(CompiledLoop):
    """The driver with the scaled sparse iterate."""

    def __init__(
        self,
        objective: MarginObjectiveKernel,
        schedule: ScheduleKernel,
        step: StepKernel,
        projection: ProjectionKernel | None,
        sampler: Sampler,
        w: NDArray[np.float64],  # double[::1]
        w_avg: NDArray[np.float64] | None,  # double[::1]
        counters: Counters,
        average: bool,
        avg_start: int,
        previous: CompiledLoop | None = None,
    ) -> None: ...
    @property
    def scale(self) -> float: ...
    @property
    def sqnorm(self) -> float: ...
    @property
    def intercept(self) -> float: ...
    @property
    def avg_scale(self) -> float: ...
    @property
    def avg_intercept(self) -> float: ...
    @property
    def n_folds(self) -> int: ...

def _row_sqnorms(data: RowData) -> NDArray[np.float64]: ...
def scaled_loop_supported(
    objective: Any,
    objective_kernel: Any,
    curvature: Any,
    curvature_kernel: Any,
    projection_kernel: Any,
) -> str: ...
