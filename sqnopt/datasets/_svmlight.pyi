"""Type stub for the compiled module ``sqnopt.datasets._svmlight`` (the svmlight line parser)."""

from typing import Any

import numpy as np
from numpy.typing import NDArray

DONE: int
LIMIT: int
GROW: int
SLOW: int

def parse_lines(
    buf: Any,  # const unsigned char[::1]: bytes, bytearray, memoryview, mmap
    start: int,
    stop: int,
    labels: NDArray[np.float64],  # double[::1]
    indptr: NDArray[np.int64],  # int64_t[::1], len(labels) + 1
    indices: NDArray[np.int32],  # int32_t[::1]
    data: NDArray[np.float32] | NDArray[np.float64],  # floating[::1], len(indices)
    row: int,
    nnz: int,
    row_limit: int,
) -> tuple[int, int, int, int, int]: ...
def find_row(buf: Any, start: int, stop: int, row: int) -> tuple[int, int, int, int]: ...
