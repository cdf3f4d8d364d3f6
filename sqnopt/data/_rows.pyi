"""Type stub for the compiled module ``sqnopt.data._rows``."""

import numpy as np
from numpy.typing import NDArray

def _row_hints(
    ahead: int | None = None, rest_ahead: int | None = None
) -> tuple[int, int]: ...
def _ordered_hints(
    min_bytes: int | None = None, min_dim: int | None = None, min_row_bytes: int | None = None
) -> tuple[int, int, int]: ...

class RowData:
    """Row access over a design matrix (dense C-contiguous or CSR; float32 or float64)."""

    def __init__(self, *args: object, **kwargs: object) -> None: ...  # abstract: raises TypeError

    @property
    def n_samples(self) -> int: ...
    @property
    def n_features(self) -> int: ...
    @property
    def dim(self) -> int: ...
    @property
    def has_intercept(self) -> bool: ...
    @property
    def nnz(self) -> int: ...
    @property
    def stored_bytes(self) -> int: ...
    @property
    def is_sparse(self) -> bool: ...
    @property
    def dtype(self) -> np.dtype[np.floating]: ...
    @property
    def n_threads(self) -> int: ...
    def set_threads(self, n_threads: int) -> None: ...
    @property
    def labels(self) -> NDArray[np.float64]: ...
    @property
    def sample_weights(self) -> NDArray[np.float64]: ...
    @property
    def grad_weights(self) -> NDArray[np.float64]: ...
    def dot(self, i: int, w: NDArray[np.float64]) -> float: ...  # const double[::1] w
    def axpy(self, i: int, alpha: float, out: NDArray[np.float64]) -> None: ...  # double[::1] out
    def sqnorm(self, i: int) -> float: ...

class DenseRows64(RowData):
    def __init__(
        self,
        X: NDArray[np.float64],  # const double[:, ::1]
        y: NDArray[np.float64],
        sample_weight: NDArray[np.float64],
        grad_weight: NDArray[np.float64],
        has_intercept: bool,
    ) -> None: ...

class DenseRows32(RowData):
    def __init__(
        self,
        X: NDArray[np.float32],  # const float[:, ::1]
        y: NDArray[np.float64],
        sample_weight: NDArray[np.float64],
        grad_weight: NDArray[np.float64],
        has_intercept: bool,
    ) -> None: ...

class CSRRows64(RowData):
    def __init__(
        self,
        data: NDArray[np.float64],  # const double[::1]
        indices: NDArray[np.int32],  # const int[::1]
        indptr: NDArray[np.intp],  # const Py_ssize_t[::1]
        n_features: int,
        y: NDArray[np.float64],
        sample_weight: NDArray[np.float64],
        grad_weight: NDArray[np.float64],
        has_intercept: bool,
    ) -> None: ...

class CSRRows32(RowData):
    def __init__(
        self,
        data: NDArray[np.float32],  # const float[::1]
        indices: NDArray[np.int32],
        indptr: NDArray[np.intp],
        n_features: int,
        y: NDArray[np.float64],
        sample_weight: NDArray[np.float64],
        grad_weight: NDArray[np.float64],
        has_intercept: bool,
    ) -> None: ...

def csr_scores(X: object, coef_t: NDArray[np.float64],  # const double[:, ::1] coef_t
               n_threads: int = 1) -> NDArray[np.float64]: ...
def csr_row_sqnorms(indptr: NDArray[np.intp],
                    values: NDArray[np.float32] | NDArray[np.float64]) -> NDArray[np.float64]: ...
def csr_column_max_abs(indices: NDArray[np.int32] | NDArray[np.int64],
                       values: NDArray[np.float32] | NDArray[np.float64],
                       n_columns: int) -> NDArray[np.float64]: ...
def copy_segments(src: NDArray[np.generic], dst: NDArray[np.generic],
                  starts: NDArray[np.intp], lengths: NDArray[np.intp],
                  offsets: NDArray[np.intp]) -> None: ...
