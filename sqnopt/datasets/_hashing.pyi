"""Type stub for the compiled module ``sqnopt.datasets._hashing`` (CRC-32 hash bags)."""

from typing import Any

import numpy as np
from numpy.typing import NDArray

def hash_bags(
    data: Any,  # const unsigned char[::1]: the strings' bytes
    offsets: NDArray[np.int64],  # const int64_t[::1], one more than the strings
    prefix_crc: int,
    n_bags: int,
    out: NDArray[np.int64],  # int64_t[::1]
) -> None: ...
