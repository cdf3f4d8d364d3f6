"""Type stub for the compiled module ``sqnopt.solver._loop``."""

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sqnopt.curvature._base import CurvatureKernel
from sqnopt.gradients._base import GradientKernel
from sqnopt.objectives._base import ObjectiveKernel
from sqnopt.projections._base import ProjectionKernel
from sqnopt.schedules._base import ScheduleKernel
from sqnopt.solver._iterate import IterateKernel
from sqnopt.solver._sampler import Sampler
from sqnopt.solver._stages import Plan
from sqnopt.steps._base import StepKernel

EXIT_CODES: dict[str, int]
STAGE_CODES: dict[str, tuple[int, dict[str, int]]]

class Counters:
    """Cost accounting of one solve."""

    t: int
    n_samples: int
    n_curvature_samples: int
    n_secant_samples: int
    n_reused_samples: int
    n_search_samples: int
    n_estimator_samples: int
    n_grad_evals: int
    n_pairs_accepted: int
    n_pairs_skipped: int
    n_resets: int
    n_avg: int
    last_step: float
    last_loss: float
    loss_sum: float
    n_loss: int
    last_gnorm: float
    prog_loss: float
    prog_weight: float
    def __init__(self) -> None: ...
    def as_dict(self) -> dict[str, Any]: ...
    @property
    def progressive_loss(self) -> float: ...

class CompiledLoop:
    @property
    def loop_kind(self) -> str: ...
    @property
    def tests_full_batch(self) -> bool: ...
    @property
    def lazy_iterate(self) -> bool: ...
    def __init__(
        self,
        objective: ObjectiveKernel,
        curvature: CurvatureKernel,
        schedule: ScheduleKernel,
        curvature_schedule: ScheduleKernel | None,
        step: StepKernel,
        projection: ProjectionKernel | None,
        sampler: Sampler,
        w: NDArray[np.float64],
        w_next: NDArray[np.float64],
        grad: NDArray[np.float64],
        grad_next: NDArray[np.float64],
        direction: NDArray[np.float64],
        v: NDArray[np.float64],
        r: NDArray[np.float64],
        w_avg: NDArray[np.float64] | None,
        batch: NDArray[np.intp],
        curvature_batch: NDArray[np.intp],
        counters: Counters,
        average: bool,
        avg_start: int,
        gradient: GradientKernel | None = None,
    ) -> None: ...
    gtol: float
    ftol: float
    @property
    def counters(self) -> Counters: ...
    @property
    def iterate(self) -> IterateKernel | None: ...
    @property
    def stage_plan(self) -> Plan: ...
    def start_trace(self, capacity: int) -> None: ...
    def stop_trace(self) -> NDArray[np.float64]: ...
    def run(self, n_iter: int, max_samples: int) -> int: ...
    def known_objective(self, objective: object) -> float: ...
    def sync(self) -> None: ...
    def reload(self) -> None: ...
    def get_state(self, *, data_state: bool = True) -> dict[str, Any]: ...
    def set_state(self, state: dict[str, Any], *, new_data: bool = False) -> None: ...

def restore_generic_loop_state(
    state: dict[str, Any],
    new_data: bool,
    prev_batch: NDArray[np.intp],
    g_next: NDArray[np.float64],
    w_saved: NDArray[np.float64],
    w: NDArray[np.float64],
    gradient: Callable[[NDArray[np.intp], NDArray[np.float64]], float],
    owner: object,
    path: str,
) -> tuple[int, bool, float, float, bool] | None: ...
def generic_loop_state(
    have_next: bool,
    prev_size: int,
    prev_batch: NDArray[np.intp],
    loss_next: float,
    g_next: NDArray[np.float64],
    w_saved: NDArray[np.float64],
    prev_full_loss: float,
    w: NDArray[np.float64],
    next_plain: bool,
) -> dict[str, Any]: ...
