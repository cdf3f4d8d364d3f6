"""Type stub for the compiled module ``sqnopt._parallel`` (deterministic parallel passes)."""

from typing import Any

import numpy as np
from numpy.typing import NDArray

DEFAULT_POLICY: dict[str, float]
MAX_THREADS: int

def block_policy() -> dict[str, float]: ...
def _set_block_policy(
    min_block_work: float | None = None,
    reduce_ratio: float | None = None,
    max_vector_bytes: float | None = None,
    max_blocks: int | None = None,
) -> dict[str, Any]: ...
def may_split(n_rows: int, entries_per_row: float, n_outputs: int) -> bool: ...
def plan(size: int, row_work: float, n_vec: int = 0) -> int: ...
def threads_available() -> bool: ...
def pool_size() -> int: ...
def fork_join_seconds(n_threads: int, task_seconds: float = 20e-6,
                      repeats: int = 500) -> float: ...
def _which_threads(n_threads: int, n_tasks: int,
                   task_seconds: float) -> NDArray[np.intc]: ...
def _fold_for_tests(out: NDArray[np.float64], partials: NDArray[np.float64],
                    n_threads: int) -> None: ...  # double[::1] out
