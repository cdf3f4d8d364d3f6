"""Type stub for the compiled module ``sqnopt._baseline`` (benchmark baselines)."""

import numpy as np
from numpy.typing import NDArray

def bare_sgd_squared_hinge(
    X: NDArray[np.float64],  # const double[:, ::1]
    y: NDArray[np.float64],  # const double[::1]
    w: NDArray[np.float64],  # double[::1], updated in place
    batch_size: int,
    eps0: float,
    T0: float,
    lam: float,
    n_iter: int,
    bit_generator: np.random.BitGenerator,
) -> float: ...
def bare_sparse_pegasos(
    indptr: NDArray[np.int32],  # const int[::1]
    indices: NDArray[np.int32],  # const int[::1]
    data: NDArray[np.float64],  # const double[::1]
    y: NDArray[np.float64],  # const double[::1]
    rowsq: NDArray[np.float64],  # const double[::1]
    v: NDArray[np.float64],  # double[::1], updated in place
    lam: float,
    t_start: int,
    n_iter: int,
    bit_generator: np.random.BitGenerator,
) -> float: ...
def calibration_workload(repeats: int = 200) -> float: ...
def bare_adagrad_composite(
    indptr: NDArray[np.intp],  # const Py_ssize_t[::1]
    indices: NDArray[np.int32],  # const int[::1]
    data: NDArray[np.float64],  # const double[::1]
    y: NDArray[np.float64],  # const double[::1]
    order: NDArray[np.intp],  # const Py_ssize_t[::1]
    w: NDArray[np.float64],  # double[::1], updated in place
    G: NDArray[np.float64],  # double[::1], updated in place
    last: NDArray[np.float64],  # double[::1], updated in place
    intercept: NDArray[np.float64],  # double[::1], updated in place
    t0: float,
    eta: float,
    lam: float,
    delta: float,
) -> tuple[float, float]: ...
