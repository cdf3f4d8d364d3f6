"""Validated training data: checks, label encoding, weights, and the compiled row view.

Everything the user passes in is left untouched: conversions copy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from sqnopt.data._rows import CSRRows32, CSRRows64, DenseRows32, DenseRows64, RowData

LabelKind = Literal["binary", "multiclass", "regression"]
#: The label kinds the data layer encodes (:func:`encode_labels`): classes (binary,
#: multiclass) or real-valued targets (regression).
LABEL_KINDS: tuple[LabelKind, ...] = ("binary", "multiclass", "regression")
FloatArray = NDArray[np.float64]
#: A validated design matrix: C-contiguous float32/float64 ndarray or canonical CSR matrix.
#: (scipy.sparse is untyped, so this is ``Any`` to the type checker.)
Matrix: TypeAlias = Any

__all__ = [
    "Dataset",
    "LabelKind",
    "check_matrix",
    "check_sparse_structure",
    "check_targets",
    "encode_labels",
    "check_sample_weight",
    "make_rows",
    "prepare",
]


@dataclass(frozen=True, eq=False)
class Dataset:
    """Training data after validation, shared by every component of one solve.

    Attributes
    ----------
    X : ndarray (C-contiguous) or CSR matrix, float32 or float64
        The design matrix as the kernels see it (a copy only where a conversion was needed).
    y : ndarray of float64
        Encoded labels: ``-1/+1`` (``classes[0]`` -> -1) for binary objectives, ``0..K-1`` for
        multiclass ones; the targets themselves (finite floats) for regression objectives.
    classes : ndarray
        The original label values, sorted; ``classes[k]`` is encoded as ``k`` (multiclass) or as
        ``-1``/``+1`` (binary). Empty for regression.
    sample_weight : ndarray of float64
        Weights ``c_i`` normalised to mean 1; the objective is ``sum c_i l_i / sum c_i``.
    grad_weight : ndarray of float64
        Weights used in minibatch gradients: ``sample_weight`` under uniform sampling, ones under
        importance sampling (sample ``i`` drawn with probability ``c_i / sum c``).
    weight_sum : float
        ``sum c_i`` of the weights as given (before normalisation).
    fit_intercept : bool
        Whether the last coordinate of each parameter block is an unregularised intercept.
    rows : RowData
        The compiled row view used by kernels.
    """

    X: Matrix
    y: FloatArray
    classes: NDArray[Any]
    sample_weight: FloatArray
    grad_weight: FloatArray
    weight_sum: float
    fit_intercept: bool
    label_kind: LabelKind
    importance_sampling: bool
    rows: RowData

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def dim(self) -> int:
        """Length of one parameter block: ``n_features`` (+1 with an intercept)."""
        return self.n_features + int(self.fit_intercept)

    @property
    def n_classes(self) -> int:
        return int(self.classes.shape[0])

    @property
    def is_sparse(self) -> bool:
        return bool(sp.issparse(self.X))

    def design(self) -> sp.csr_matrix | NDArray[np.float64]:
        """``X`` with a column of ones appended when fitting an intercept (float64; a copy)."""
        if self.is_sparse:
            Xs = sp.csr_matrix(self.X, dtype=np.float64)
            if self.fit_intercept:
                Xs = sp.hstack([Xs, np.ones((self.n_samples, 1))], format="csr")
            return Xs
        Xd = np.asarray(self.X, dtype=np.float64)
        if self.fit_intercept:
            Xd = np.hstack([Xd, np.ones((self.n_samples, 1))])
        return Xd


def _fail(what: str, problem: str, fix: str) -> ValueError:
    return ValueError(f"{what}: {problem}. {fix}")


_SPARSE_FIX = ("Build the matrix with scipy's constructors from valid indices, or check one "
               "with X.check_format(full_check=True)")


def _index_array(arr: Any, what: str, name: str) -> NDArray[Any]:
    a = np.asarray(arr)
    if a.ndim != 1 or a.dtype.kind not in "iu":
        raise _fail(name, f"the sparse {what} array is {a.ndim}-D of dtype {a.dtype}, not a 1-D "
                    "integer array", _SPARSE_FIX)
    return a


def _check_range(idx: NDArray[Any], bound: int, axis: str, name: str, shape: Any,
                 where: Any) -> None:
    """Every entry of ``idx`` in ``[0, bound)``; ``where(p)`` names the stored entry ``p``.

    One pass: read as unsigned integers of the same width, a negative index is larger than any
    valid one (two's complement), so ``max < bound`` checks both ends."""
    if idx.size == 0:
        return
    unsigned = idx.view(np.dtype(f"u{idx.dtype.itemsize}")) if idx.dtype.kind == "i" else idx
    if int(unsigned.max()) < bound:
        return
    bad = int(np.flatnonzero((idx < 0) | (idx >= bound))[0])
    value = int(idx[bad])
    if value < 0:
        problem = f"has a negative {axis} index {value} ({where(bad)})"
    else:
        problem = (f"has {axis} index {value} ({where(bad)}), out of range for {bound} "
                   f"{axis}s (shape {tuple(int(s) for s in shape)})")
    raise _fail(name, problem, _SPARSE_FIX)


def _check_compressed(X: Any, name: str) -> None:
    """CSR/CSC/BSR: ``indptr`` starts at 0, never decreases, ends within ``indices``/``data``,
    and every stored index is in range."""
    fmt = X.format
    n_rows, n_cols = (int(s) for s in X.shape)
    indptr = _index_array(X.indptr, "indptr", name)
    indices = _index_array(X.indices, "indices", name)
    data = np.asarray(X.data)
    block = (1, 1)
    if fmt == "bsr":
        block = tuple(int(b) for b in X.blocksize)  # type: ignore[assignment]
        if (block[0] < 1 or block[1] < 1 or n_rows % block[0] or n_cols % block[1]
                or data.ndim != 3 or tuple(data.shape[1:]) != block):
            raise _fail(name, f"the BSR blocks {tuple(data.shape[1:])} do not tile the shape "
                        f"{X.shape}", _SPARSE_FIX)
    major, minor = (n_rows // block[0], n_cols // block[1]) if fmt != "csc" else (n_cols, n_rows)
    what = {"csr": ("row", "column"), "csc": ("column", "row"), "bsr": ("block row",
                                                                        "block column")}[fmt]
    if indptr.shape[0] != major + 1:
        raise _fail(name, f"indptr has {indptr.shape[0]} entries but a {fmt.upper()} matrix of "
                    f"shape {X.shape} needs {major + 1} (one per {what[0]}, plus one)", _SPARSE_FIX)
    if data.shape[0] != indices.shape[0]:
        raise _fail(name, f"has {data.shape[0]} stored values but {indices.shape[0]} indices",
                    _SPARSE_FIX)
    if int(indptr[0]) != 0:
        raise _fail(name, f"indptr starts at {int(indptr[0])}, not 0", _SPARSE_FIX)
    if major and np.any(indptr[1:] < indptr[:-1]):
        k = int(np.flatnonzero(indptr[1:] < indptr[:-1])[0])
        raise _fail(name, f"indptr decreases at {what[0]} {k} (indptr[{k}] = {int(indptr[k])} > "
                    f"indptr[{k + 1}] = {int(indptr[k + 1])})", _SPARSE_FIX)
    nnz = int(indptr[-1])
    if nnz > indices.shape[0]:
        raise _fail(name, f"indptr ends at {nnz} but only {indices.shape[0]} indices are stored",
                    _SPARSE_FIX)

    def where(p: int) -> str:
        return f"{what[0]} {int(np.searchsorted(indptr, p, side='right') - 1)}"

    _check_range(indices[:nnz], minor, what[1], name, X.shape, where)


def check_sparse_structure(X: Any, *, name: str = "X") -> None:
    """Check the index structure of a SciPy sparse matrix or array before compiled code reads it.

    SciPy's constructors trust ``(data, indices, indptr)`` as given (the full check is opt-in),
    and its conversions, products and sqnopt's kernels index memory with those numbers: an
    out-of-range or negative index, or an ``indptr`` that decreases or runs past the stored
    entries, reads (or writes) outside the arrays -- a crash or a silently wrong result. This
    check costs a few vectorised passes over the index arrays (``O(nnz + n_rows)``, no copy) and
    raises ``ValueError`` naming the first bad entry; dense input and formats whose conversion
    is pure Python (DOK, which SciPy's COO constructor checks) pass through.

    Checked: CSR/CSC/BSR (``indptr`` length ``n_major + 1``, starts at 0, non-decreasing, ends
    within ``indices``; ``data`` and ``indices`` of equal length; every index in range), COO
    (coordinates in range, lengths equal), DIA (one offset per stored diagonal), LIL (each row's
    index and value lists of equal length; ranges are checked after conversion).
    """
    if not sp.issparse(X):
        return
    if X.ndim != 2:
        raise _fail(name, f"sparse input has {X.ndim} dimensions", "Pass a 2-D matrix")
    fmt = X.format
    if fmt in ("csr", "csc", "bsr"):
        _check_compressed(X, name)
    elif fmt == "coo":
        row = _index_array(X.row, "row", name)
        col = _index_array(X.col, "col", name)
        if not (row.shape[0] == col.shape[0] == np.asarray(X.data).shape[0]):
            raise _fail(name, f"COO arrays differ in length (row {row.shape[0]}, col "
                        f"{col.shape[0]}, data {np.asarray(X.data).shape[0]})", _SPARSE_FIX)
        _check_range(row, int(X.shape[0]), "row", name, X.shape, lambda p: f"entry {p}")
        _check_range(col, int(X.shape[1]), "column", name, X.shape, lambda p: f"entry {p}")
    elif fmt == "dia":
        data = np.asarray(X.data)
        offsets = _index_array(X.offsets, "offsets", name)
        if data.ndim != 2 or data.shape[0] != offsets.shape[0]:
            raise _fail(name, f"DIA data of shape {data.shape} does not hold one diagonal "
                        f"per offset ({offsets.shape[0]})", _SPARSE_FIX)
    elif fmt == "lil":
        rows, vals = np.asarray(X.rows, dtype=object), np.asarray(X.data, dtype=object)
        if rows.shape != (X.shape[0],) or vals.shape != rows.shape or any(
                not isinstance(r, list) or not isinstance(v, list) or len(r) != len(v)
                for r, v in zip(rows, vals)):
            raise _fail(name, "LIL rows and data lists do not match", _SPARSE_FIX)


#: Canonical CSR copies made by :func:`check_matrix`, with their (read-only) index arrays: such a
#: matrix passed back in (estimator -> Trainer -> Solver) is not checked a second time.
_CHECKED = "_sqnopt_checked_structure"


def _is_checked(X: Any) -> bool:
    mark = getattr(X, _CHECKED, None)
    return (mark is not None and X.format == "csr" and mark[0] is X.indices
            and mark[1] is X.indptr and mark[2] == X.shape and mark[3] is X.data
            and not X.indices.flags.writeable and not X.indptr.flags.writeable)


def check_matrix(X: Any, *, name: str = "X", fit: bool = False,
                 stats: dict[str, float] | None = None) -> Matrix:
    """Validate a design matrix; returns a C-contiguous float32/float64 array or a canonical CSR.

    Integer and boolean matrices are converted to float64 (a copy). Complex, object and string
    dtypes, NaN/inf entries, non-2-D input, empty input and a corrupt sparse index structure
    (:func:`check_sparse_structure`, run before any conversion) raise ``ValueError``
    (``TypeError`` for an unsupported type) naming the problem and the fix. With ``fit`` (data
    to be fitted) float64 values whose squares overflow -- the sum of the squares of the stored
    values must be finite -- raise too: every solver forms squares of the features (Hessians,
    bounds, step sizes from row norms, the objective's margins at iterates of the data's scale),
    and with ``|x| > 1.3e154`` these overflow, so a fit would stop at a meaningless "converged"
    point (:func:`_check_squares`). The same one pass over the values tests finiteness and the
    squares; float32 values cannot overflow when squared in float64.

    A float CSR input in canonical form (sorted indices, no duplicates) of a supported dtype is
    returned as a new matrix over read-only views of the same arrays (no copy: copying a large
    sparse matrix costs about a pass of a first-order solver); any other sparse input is copied
    into a new canonical CSR whose ``indices`` and ``indptr`` are read-only. Either result passed
    back in is returned as it is (its structure not checked again, not copied again), as a
    C-contiguous float array is.

    ``stats`` (with ``fit``): a dict that receives what the check computed on the way, so that
    the caller need not read the values again -- ``"sum_squares"``, the sum of the squares of
    the stored float64 values (absent for float32 values, whose check sums the values instead).
    It bounds every column's sum of squares, which the recipe's test of the Hessian's range
    (:func:`sqnopt.recipes.hessian_range`) needs.
    """
    if sp.issparse(X):
        if X.ndim != 2:
            raise _fail(name, f"sparse input has {X.ndim} dimensions", "Pass a 2-D matrix")
        dtype = _float_dtype(X.dtype, name)
        if X.shape[0] == 0 or X.shape[1] == 0:
            raise _fail(name, f"is empty (shape {X.shape})",
                        "Pass at least one sample and one feature")
        checked = _is_checked(X)
        if not checked:
            check_sparse_structure(X, name=name)
            csr = X.tocsr()  # returns X itself when already CSR; never modified below
            if csr is not X:  # a converted LIL/DOK/DIA: its ranges are checked here
                check_sparse_structure(csr, name=name)
        else:
            csr = X
        nnz = int(csr.indptr[-1])
        data = np.asarray(csr.data)[:nnz]
        if not (_squares_finite(data, stats) if fit else _all_finite(data)):
            if not np.all(np.isfinite(data)):
                bad = int(np.flatnonzero(~np.isfinite(data))[0])
                row = int(np.searchsorted(csr.indptr, bad, side="right") - 1)
                raise _fail(name, f"contains NaN or infinity (first at row {row}, column "
                            f"{int(csr.indices[bad])})",
                            "Impute or drop the non-finite entries before fitting")
            big = int(np.argmax(np.abs(data)))
            _check_squares(data, name, int(np.searchsorted(csr.indptr, big, side="right") - 1),
                           int(csr.indices[big]))
        if checked:  # our own canonical copy, passed on (Trainer -> Solver, one-vs-rest
            return X  # problems): shared read-only, as a dense array is, not copied again
        if (csr.format == "csr" and data.dtype == dtype and nnz == np.asarray(csr.data).shape[0]
                and csr.has_canonical_format):
            # Nothing to convert: read-only views of the caller's arrays (never written here;
            # the caller's arrays keep their own flags).
            # (SciPy's constructor, not checked_csr: it gives the index arrays one dtype)
            return _mark_checked(sp.csr_matrix(
                (_read_only(data), _read_only(np.asarray(csr.indices)),
                 _read_only(np.asarray(csr.indptr))), shape=csr.shape, copy=False))
        out = sp.csr_matrix((data.astype(dtype, copy=True), np.array(csr.indices[:nnz], copy=True),
                             np.array(csr.indptr, copy=True)), shape=csr.shape)
        if not out.has_canonical_format:
            out.sum_duplicates()  # operates on our copy
        out.indices.setflags(write=False)
        out.indptr.setflags(write=False)
        return _mark_checked(out)
    if isinstance(X, (str, bytes)) or X is None:
        raise TypeError(f"{name}: expected an array-like or a scipy.sparse matrix, got "
                        f"{type(X).__name__}")
    arr = np.asarray(X)
    if arr.dtype == object or arr.dtype.kind in "USVmM":
        raise TypeError(f"{name}: unsupported dtype {arr.dtype}. Convert to a numeric "
                        "(float32/float64) array, e.g. X.astype(np.float64)")
    if arr.ndim != 2:
        raise _fail(name, f"expected a 2-D array, got {arr.ndim}-D with shape {arr.shape}",
                    "Reshape your data: X.reshape(-1, 1) for a single feature or "
                    "X.reshape(1, -1) for a single sample")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise _fail(name, f"is empty (shape {arr.shape})", "Pass at least one sample and one feature")
    dtype = _float_dtype(arr.dtype, name)
    out_arr = np.ascontiguousarray(arr, dtype=dtype)
    if not (_squares_finite(out_arr.reshape(-1), stats) if fit else _all_finite(out_arr)):
        if not np.all(np.isfinite(out_arr)):
            r, c = np.argwhere(~np.isfinite(out_arr))[0]
            raise _fail(name, f"contains NaN or infinity (first at row {int(r)}, column "
                        f"{int(c)})", "Impute or drop the non-finite entries before fitting")
        r, c = np.unravel_index(int(np.argmax(np.abs(out_arr))), out_arr.shape)
        _check_squares(out_arr.reshape(-1), name, int(r), int(c))
    return out_arr


def checked_row_range(X: Matrix, start: int, stop: int) -> Matrix:
    """Rows ``start .. stop - 1`` of a matrix :func:`check_matrix` returned, without copying
    its values: a dense array's slice (a view), or for a canonical CSR a CSR over views of its
    values and column indices with its own ``indptr`` (``stop - start + 1`` entries), marked as
    checked -- the in-memory large-data fit walks its data in chunks of rows this way, every
    pass, where slicing copied every chunk."""
    if not sp.issparse(X):
        return X[start:stop]
    if not _is_checked(X):
        raise ValueError("checked_row_range needs a CSR matrix returned by check_matrix")
    indptr = np.asarray(X.indptr)
    lo, hi = int(indptr[start]), int(indptr[stop])
    return checked_csr(np.asarray(X.data)[lo:hi], X.indices[lo:hi],
                       indptr[start:stop + 1] - indptr.dtype.type(lo),
                       (stop - start, int(X.shape[1])))


def checked_csr(data: NDArray[Any], indices: NDArray[Any], indptr: NDArray[Any],
                shape: tuple[int, int]) -> Any:
    """A CSR matrix over read-only views of ``(data, indices, indptr)``, marked as checked:
    for arrays sqnopt took from a matrix :func:`check_matrix` returned (its rows, gathered or
    sliced), which are a valid canonical structure by construction, with the index dtypes of
    that matrix. SciPy's constructor would copy values and indices that are a small part of a
    larger array (its ``prune``), the copy a slice of rows exists to avoid: the arrays are set
    on an empty matrix instead."""
    out = sp.csr_matrix(shape, dtype=data.dtype)
    out.data, out.indices, out.indptr = _read_only(data), _read_only(indices), _read_only(indptr)
    return _mark_checked(out)


def _mark_checked(out: Any) -> Any:
    """Mark a canonical CSR matrix with read-only index arrays as checked (``_is_checked``)."""
    out.has_canonical_format = True
    setattr(out, _CHECKED, (out.indices, out.indptr, out.shape, out.data))
    return out


def _read_only(a: NDArray[Any]) -> NDArray[Any]:
    v = a.view()
    v.setflags(write=False)
    return v


def _all_finite(a: NDArray[Any]) -> bool:
    """Every entry finite: a finite sum proves it (NaN and +-inf propagate through addition),
    in one reduction pass without a boolean temporary; only an infinite sum (a non-finite
    entry, or an overflow) is checked entry by entry."""
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.add.reduce(a, axis=None)
    return bool(np.isfinite(total)) or bool(np.all(np.isfinite(a)))


def _squares_finite(a: NDArray[Any], stats: dict[str, float] | None = None) -> bool:
    """Every value finite and the sum of their squares too (one BLAS pass; for float32 values
    only finiteness: their squares cannot overflow float64). A finite sum of squares is stored
    in ``stats["sum_squares"]`` when ``stats`` is given."""
    if a.dtype != np.float64:
        return _all_finite(a)
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.dot(a, a))
    if not math.isfinite(total):
        return False
    if stats is not None:
        stats["sum_squares"] = total
    return True


def _check_squares(a: NDArray[Any], name: str, row: int, col: int) -> None:
    """Raise the error for finite values whose squares overflow (``row``, ``col``: where the
    largest is)."""
    top = float(np.max(np.abs(a)))
    what = ("their squares overflow float64" if top * top == math.inf else
            "the sum of their squares overflows float64")
    raise _fail(name, f"holds values too large to fit: up to {top:.3g} (row {row}, column {col});"
                f" {what}, and every solver forms squares of the features (curvature, step "
                "sizes, norms), so a fit would stop at a meaningless point",
                "Scale the features (e.g. scikit-learn's StandardScaler or MaxAbsScaler; "
                "--scale on the command line)")


def _float_dtype(dtype: np.dtype[Any], name: str) -> np.dtype[Any]:
    if dtype == np.float32 or dtype == np.float64:
        return dtype
    if dtype.kind in "biu" or dtype == np.float16:
        return np.dtype(np.float64)
    raise TypeError(f"{name}: unsupported dtype {dtype}. sqnopt computes in float32 or float64; "
                    "convert with X.astype(np.float64)")


def _two_values(arr: NDArray[Any]) -> NDArray[Any] | None:
    """The sorted two distinct values of a numeric label array that has exactly two, found by
    a min, a max and one comparison pass instead of the sort of ``np.unique``; None otherwise
    (the caller falls back)."""
    if arr.dtype.kind not in "biuf":
        return None
    lo, hi = arr.min(), arr.max()
    if lo == hi or not ((arr == lo) | (arr == hi)).all():
        return None
    return np.array([lo, hi], dtype=arr.dtype)


def encode_labels(y: ArrayLike, label_kind: LabelKind, *, n_samples: int | None = None,
                  classes: ArrayLike | None = None) -> tuple[FloatArray, NDArray[Any]]:
    """Map labels to ``-1/+1`` (binary) or ``0..K-1`` (multiclass); returns ``(encoded, classes)``.

    ``classes`` fixes the label set (as ``partial_fit`` needs); otherwise it is ``unique(y)``.
    Regression targets (``label_kind="regression"``) are checked to be finite real numbers and
    returned as float64, never re-encoded; their ``classes`` is empty (and ``classes`` must be
    ``None`` or empty).
    """
    if label_kind == "regression":
        if classes is not None and np.asarray(classes).size:
            raise ValueError("classes: a regression objective has real-valued targets, not "
                             "classes; pass classes=None")
        return check_targets(y, n_samples=n_samples), np.empty(0)
    if label_kind not in LABEL_KINDS:
        # an objective (a plugin's) declaring another kind of target, e.g. counts or real
        # values: encoding them as classes would fit a classifier to them without a word
        raise ValueError(f"the objective declares label_kind={label_kind!r}, but the data layer "
                         f"knows only {', '.join(map(repr, LABEL_KINDS))} labels; "
                         "use a classification objective, or declare one of these kinds")
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise _fail("y", f"expected a 1-D array of labels, got shape {arr.shape}",
                    "Pass one label per sample")
    if n_samples is not None and arr.shape[0] != n_samples:
        raise _fail("y", f"has {arr.shape[0]} labels but X has {n_samples} samples",
                    "Pass one label per row of X")
    if arr.shape[0] == 0:
        raise _fail("y", "is empty", "Pass at least one labelled sample")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise _fail("y", "contains NaN or infinity", "Drop the unlabelled samples")
    if arr.dtype.kind == "c" or arr.dtype.kind in "mM":
        raise TypeError(f"y: unsupported label dtype {arr.dtype}")
    if classes is None:
        cls = _two_values(arr)
        if cls is not None and label_kind == "multiclass":
            # two labels: their positions 0/1 from the one comparison, without a search
            return (arr == cls[1]).astype(np.float64), cls
        if cls is None:
            cls = np.unique(arr)
    else:
        cls = np.unique(np.asarray(classes))
        # membership test first (no sort of y); the unknown labels are sorted only to report
        known = np.isin(arr, cls)
        unknown = np.setdiff1d(np.unique(arr[~known]), cls) if not known.all() else cls[:0]
        if unknown.size:
            raise _fail("y", f"contains labels {unknown.tolist()[:5]} not in classes="
                        f"{cls.tolist()[:10]}", "Pass every label in `classes`")
    return _encode_known(arr, cls, label_kind)


def check_targets(y: ArrayLike, *, n_samples: int | None = None) -> FloatArray:
    """Real-valued regression targets checked -- one number per sample, finite -- as a new
    C-contiguous float64 array (booleans and integers are converted; strings, objects, complex
    numbers and dates are refused, naming the fix)."""
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise _fail("y", f"expected a 1-D array of targets, got shape {arr.shape}",
                    "Pass one target per sample (multi-output regression is not supported)")
    if arr.dtype.kind not in "biuf":
        raise _fail("y", f"regression targets must be real numbers, got dtype {arr.dtype}",
                    "Convert them with y.astype(np.float64), or use a classification loss "
                    "for class labels")
    if n_samples is not None and arr.shape[0] != n_samples:
        raise _fail("y", f"has {arr.shape[0]} targets but X has {n_samples} samples",
                    "Pass one target per row of X")
    if arr.shape[0] == 0:
        raise _fail("y", "is empty", "Pass at least one sample")
    out = np.array(arr, dtype=np.float64, order="C")
    if not _all_finite(out):
        bad = int(np.flatnonzero(~np.isfinite(out))[0])
        raise _fail("y", f"contains NaN or infinity (first at sample {bad})",
                    "Drop the samples without a finite target")
    return out


def _encode_known(arr: NDArray[Any], cls: NDArray[Any], label_kind: LabelKind
                  ) -> tuple[FloatArray, NDArray[Any]]:
    """:func:`encode_labels` of a 1-D label array whose labels are all among the sorted,
    distinct ``cls`` (regression: finite real targets, ``cls`` empty)."""
    if label_kind == "regression":
        return np.array(arr, dtype=np.float64, order="C").ravel(), np.empty(0)
    if label_kind == "binary":
        if cls.shape[0] != 2:
            what = "only one class" if cls.shape[0] == 1 else f"{cls.shape[0]} classes"
            raise _fail("y", f"has {what} ({cls.tolist()[:10]}); this objective is binary and needs "
                        "exactly two", "Use two classes, or a multiclass objective "
                        "(e.g. 'softmax') / one-vs-rest for more")
        enc = np.where(arr == cls[1], 1.0, -1.0)
    else:
        if cls.shape[0] < 2:
            raise _fail("y", f"has only one class ({cls.tolist()})",
                        "A classifier needs at least two classes")
        enc = np.searchsorted(cls, arr).astype(np.float64)
    return np.ascontiguousarray(enc, dtype=np.float64), cls


def sample_weight_array(sample_weight: ArrayLike, n_samples: int) -> FloatArray:
    """``sample_weight`` checked -- numbers, one per sample (or one for all), finite, >= 0 --
    as a new float64 array."""
    sw = np.asarray(sample_weight)
    if sw.ndim == 0:
        sw = np.full(n_samples, float(sw))
    if sw.dtype.kind not in "biuf":
        raise TypeError(f"sample_weight: unsupported dtype {sw.dtype}; pass numbers")
    sw = np.array(sw, dtype=np.float64)
    if sw.ndim != 1 or sw.shape[0] != n_samples:
        raise _fail("sample_weight", f"has shape {sw.shape} but X has {n_samples} samples",
                    "Pass one weight per sample")
    if not np.all(np.isfinite(sw)):
        raise _fail("sample_weight", "contains NaN or infinity", "Pass finite weights")
    if np.any(sw < 0):
        raise _fail("sample_weight", "contains negative weights", "Weights must be >= 0")
    return sw


def check_sample_weight(sample_weight: ArrayLike | None, n_samples: int) -> tuple[FloatArray, float]:
    """Validate weights; returns ``(weights normalised to mean 1, sum of the given weights)``."""
    if sample_weight is None:
        return np.ones(n_samples), float(n_samples)
    sw = sample_weight_array(sample_weight, n_samples)
    total = float(sw.sum())
    if total <= 0:
        raise _fail("sample_weight", "sums to zero", "Give at least one sample a positive weight")
    return np.ascontiguousarray(sw * (n_samples / total)), total


def make_rows(X: Matrix, y: FloatArray, sample_weight: FloatArray, grad_weight: FloatArray,
              fit_intercept: bool) -> RowData:
    """Build the compiled row view over validated arrays (see :func:`check_matrix`)."""
    if sp.issparse(X):
        csr = X
        if csr.nnz >= 2**31 or csr.shape[1] >= 2**31:
            raise ValueError("X: more than 2**31 stored entries or features is not supported")
        indices = np.ascontiguousarray(csr.indices, dtype=np.int32)
        indptr = np.ascontiguousarray(csr.indptr, dtype=np.intp)
        data = np.ascontiguousarray(csr.data)
        if data.dtype == np.float32:
            return CSRRows32(data, indices, indptr, csr.shape[1], y, sample_weight, grad_weight,
                             fit_intercept)
        return CSRRows64(data, indices, indptr, csr.shape[1], y, sample_weight, grad_weight,
                         fit_intercept)
    Xd: NDArray[Any] = np.asarray(X)
    if Xd.dtype == np.float32:
        return DenseRows32(Xd, y, sample_weight, grad_weight, fit_intercept)
    return DenseRows64(Xd, y, sample_weight, grad_weight, fit_intercept)


def prepare(X: Any, y: ArrayLike, *, sample_weight: ArrayLike | None = None,
            fit_intercept: bool = False, label_kind: LabelKind = "binary",
            classes: ArrayLike | None = None, importance_sampling: bool = False,
            validated: bool = False, matrix_checked: bool = False) -> Dataset:
    """Validate ``(X, y, sample_weight)`` and build the :class:`Dataset` the solver runs on.

    Parameters
    ----------
    importance_sampling : bool
        Realise sample weights by sampling ``i`` with probability ``c_i / sum c`` (the minibatch
        gradient then uses unit weights) instead of weighting each loss term.
    validated : bool
        The caller has checked the data already (the :class:`~sqnopt.training.Trainer`): ``X``
        is :func:`check_matrix`'s output (``fit=True``), ``y`` a 1-D array of ``X.shape[0]`` labels all among
        ``classes`` (sorted, distinct) and ``sample_weight`` a 1-D float64 array of as many
        finite weights ``>= 0`` with a positive sum. These checks are then not repeated; the
        arrays built are the same.
    matrix_checked : bool
        ``X`` alone is :func:`check_matrix`'s output (``fit=True``) for a matrix checked
        before (the solves of a regularization path on one ``X``): the matrix is not checked
        again; ``y`` and ``sample_weight`` are.
    """
    if validated:
        if classes is None or sample_weight is None:
            raise ValueError("prepare(validated=True) needs the classes and the sample weights")
        Xc = X
        n = int(Xc.shape[0])
        yc, cls = _encode_known(np.asarray(y), np.asarray(classes), label_kind)
        weights = np.asarray(sample_weight, dtype=np.float64)
        total = float(weights.sum())
        sw = np.ascontiguousarray(weights * (n / total))
    else:
        Xc = X if matrix_checked else check_matrix(X, fit=True)
        n = int(Xc.shape[0])
        yc, cls = encode_labels(y, label_kind, n_samples=n, classes=classes)
        sw, total = check_sample_weight(sample_weight, n)
    gw = np.ones(n) if importance_sampling else sw
    sw.setflags(write=False)
    yc.setflags(write=False)
    rows = make_rows(Xc, yc, sw, gw, fit_intercept)
    return Dataset(X=Xc, y=yc, classes=cls, sample_weight=sw, grad_weight=gw, weight_sum=total,
                   fit_intercept=fit_intercept, label_kind=label_kind,
                   importance_sampling=importance_sampling, rows=rows)
