"""Type stub for the compiled module ``sqnopt.solver._adaptive_loop``."""

from typing import Any, final

import numpy as np
from numpy.typing import NDArray

from sqnopt.curvature._base import CurvatureKernel
from sqnopt.objectives._base import ObjectiveKernel
from sqnopt.schedules._base import ScheduleKernel
from sqnopt.solver._iterate import IterateKernel
from sqnopt.solver._loop import CompiledLoop, Counters
from sqnopt.solver._sampler import Sampler
from sqnopt.steps._base import StepKernel

@final
class AdaptiveIterate(IterateKernel):
    """AdaGrad's composite iterate, just in time on sparse rows."""

    def __init__(
        self,
        objective: ObjectiveKernel,
        curvature: CurvatureKernel,
        w: NDArray[np.float64],  # double[::1]
    ) -> None: ...
    @property
    def clock(self) -> float: ...
    @property
    def eta(self) -> float: ...
    @property
    def n_catchups(self) -> int: ...
    @property
    def n_blocks(self) -> int: ...
    step_scale: float
    def mix(self, other: AdaptiveIterate, n_threads: int = 1) -> None: ...

class AdaptiveLoop(CompiledLoop):
    """The driver with the adaptive iterate."""

    def __init__(
        self,
        objective: ObjectiveKernel,
        curvature: CurvatureKernel,
        schedule: ScheduleKernel,
        step: StepKernel,
        sampler: Sampler,
        w: NDArray[np.float64],  # double[::1]
        counters: Counters,
        previous: CompiledLoop | None = None,
    ) -> None: ...
    @property
    def clock(self) -> float: ...
    @property
    def eta(self) -> float: ...
    @property
    def n_catchups(self) -> int: ...
    @property
    def step_scale(self) -> float: ...
    @step_scale.setter
    def step_scale(self, value: float) -> None: ...
    def mix(self, other: AdaptiveLoop, n_threads: int = 1) -> None: ...

def adaptive_loop_supported(
    objective: Any, objective_kernel: Any, curvature: Any, curvature_kernel: Any,
    gradient_kernel: Any,
) -> str: ...
