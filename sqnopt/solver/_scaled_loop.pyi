"""Type stub for the compiled module ``sqnopt.solver._scaled_loop``."""

from typing import Any

import numpy as np
from numpy.typing import NDArray

from sqnopt.objectives._base import MarginObjectiveKernel
from sqnopt.projections._base import ProjectionKernel
from sqnopt.schedules._base import ScheduleKernel
from sqnopt.solver._loop import Counters
from sqnopt.solver._sampler import Sampler
from sqnopt.steps._base import StepKernel

class ScaledLoop:
    """Sparse first-order loop in scaled form ``w_reg = a * v``."""

    loop_kind: str
    tests_full_batch: bool
    lazy_iterate: bool

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
        previous: ScaledLoop | None = None,
    ) -> None: ...
    @property
    def counters(self) -> Counters: ...
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
    def run(self, n_iter: int, max_samples: int) -> int: ...
    def sync(self) -> None: ...
    def reload(self) -> None: ...
    def get_state(self, *, data_state: bool = True) -> dict[str, Any]: ...
    def set_state(self, state: dict[str, Any], *, new_data: bool = False) -> None: ...

def scaled_loop_supported(
    objective: Any,
    objective_kernel: Any,
    curvature: Any,
    curvature_kernel: Any,
    projection_kernel: Any,
) -> str: ...
