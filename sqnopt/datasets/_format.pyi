"""Type stub for the compiled module ``sqnopt.datasets._format``."""

import numpy as np
from numpy.typing import NDArray

def format_rows(
    indptr: NDArray[np.int64],  # const long long[::1]
    indices: NDArray[np.int64],  # const long long[::1]
    data: NDArray[np.float64],  # const double[::1]
    labels: NDArray[np.float64],  # const double[::1]
    index_offset: int,  # long long
    separator: bytes,
) -> bytes: ...
