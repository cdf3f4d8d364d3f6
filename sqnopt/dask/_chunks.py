"""What a worker holds and computes: one row block ("chunk") of the training data and the
per-chunk work of a distributed solve.

A chunk keeps the validated design matrix of its rows (dense C-contiguous or canonical CSR,
float32 or float64, exactly as :func:`sqnopt.data.check_matrix` returns it), the raw labels and
the raw sample weights. A solve sees the chunk through a :class:`ChunkSpec` (the objective with
``lam = 0``, how labels are encoded, the global weight normalisation): the first task that asks
builds the compiled row view (:func:`sqnopt.data.make_rows`) and the objective kernel on the
worker and keeps them on the chunk object, so every later evaluation of that solve reuses them.
Row views hold raw pointers and are never pickled: a chunk that moves to another worker (or is
recomputed after a worker died) travels as its arrays and rebuilds its kernels there.

Nothing here talks to the scheduler; the client side (:mod:`sqnopt.dask._data`) submits these
functions. The numbers a chunk returns are sums over its rows (loss sum, gradient sum), so that
the client can add them in chunk order: the result does not depend on which worker computed
which chunk, nor on how many workers there are.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from sqnopt._jobs import effective_n_jobs
from sqnopt.data import Dataset, check_matrix, encode_labels, make_rows
from sqnopt.interfaces import Objective, ObjectiveKernelLike

FloatArray = NDArray[np.float64]
LabelMode = Literal["binary", "ovr", "multiclass"]

__all__ = ["Chunk", "ChunkSpec", "Partial", "combine_sums", "combine_variance", "inner_product_sums",
           "make_chunk", "orthogonal_variance"]

#: A chunk's contribution: ``(chunk index, loss sum, gradient sum)``; the gradient sum is dense
#: (float64, ``n_params``) or ``(indices, values)`` when fewer than a third of its entries are
#: nonzero (sparse data: a chunk's rows touch few features), which adds up to the same bits.
Partial = tuple[int, float, Any]


@dataclass(frozen=True)
class ChunkSpec:
    """How one solve sees every chunk: the objective (with ``lam = 0``: the regulariser is the
    client's), the label encoding and the weight normalisation of the whole data set.

    ``weight_scale`` is ``N / sum_i c_i`` over all chunks (``c_i`` the sample weight times the
    class weight), so that the weights of all chunks together have mean 1, as
    :func:`sqnopt.data.check_sample_weight` normalises them on one machine.
    """

    objective: Objective
    mode: LabelMode
    classes: tuple[Any, ...]           #: all labels of the data set, sorted
    positive: Any = None               #: the class of a one-vs-rest sub-problem
    class_weight: tuple[float, ...] | None = None   #: aligned with ``classes``
    weight_scale: float = 1.0
    fit_intercept: bool = False        #: an unregularised intercept in the row view
    #: threads of each chunk's compiled passes on its worker (``n_jobs`` resolved there:
    #: ``-1`` is the worker's cores). Not part of ``key``: it changes no result.
    n_jobs: int | None = None
    key: str = dataclasses.field(default="", compare=False)

    def __post_init__(self) -> None:
        key = (f"{self.objective.describe()}|{self.mode}|{self.classes!r}|{self.positive!r}|"
               f"{self.class_weight!r}|{self.weight_scale!r}|{self.fit_intercept}")
        object.__setattr__(self, "key", key)

    def encode(self, labels: NDArray[Any]) -> tuple[FloatArray, NDArray[Any]]:
        """The labels as the objective sees them, and its classes."""
        classes = np.asarray(self.classes)
        if self.mode == "ovr":
            sub = np.where(labels == self.positive, 1.0, -1.0)
            return encode_labels(sub, "binary", classes=np.array([-1.0, 1.0]))
        kind: Literal["binary", "multiclass"] = "binary" if self.mode == "binary" else "multiclass"
        return encode_labels(labels, kind, classes=classes)

    def weights(self, labels: NDArray[Any], raw: FloatArray | None) -> FloatArray:
        """``c_i * weight_scale``: sample weight times class weight, normalised globally."""
        w = np.ones(labels.shape[0]) if raw is None else np.asarray(raw, dtype=np.float64)
        if self.class_weight is not None:
            cw = np.asarray(self.class_weight, dtype=np.float64)
            w = w * cw[np.searchsorted(np.asarray(self.classes), labels)]
        out: FloatArray = np.ascontiguousarray(w * self.weight_scale)
        return out


class _View:
    """A chunk as one solve sees it: encoded labels, weights, the objective kernel."""

    def __init__(self, chunk: Chunk, spec: ChunkSpec) -> None:
        y, classes = spec.encode(chunk.labels)
        sw = spec.weights(chunk.labels, chunk.weights)
        y.setflags(write=False)
        sw.setflags(write=False)
        self.y = y
        self.sample_weight = sw
        self.classes = classes
        self.kernel = _kernel(spec.objective, chunk.X, y, classes, sw, spec)
        self.everyone = np.arange(chunk.n_rows, dtype=np.intp)
        self.threads = 1

    def set_threads(self, n_jobs: int | None) -> None:
        """The threads of the kernel's passes (when it is a compiled one over row views)."""
        threads = effective_n_jobs(n_jobs)
        if threads != self.threads:
            rows = getattr(self.kernel, "data", None)
            if rows is not None and hasattr(rows, "set_threads"):
                rows.set_threads(threads)
            self.threads = threads


def _kernel(objective: Objective, X: Any, y: FloatArray, classes: NDArray[Any],
            sw: FloatArray, spec: ChunkSpec) -> ObjectiveKernelLike:
    """The objective bound to validated rows with the given (globally normalised) weights."""
    rows = make_rows(X, y, sw, sw, spec.fit_intercept)
    kind: Literal["binary", "multiclass"] = ("multiclass" if spec.mode == "multiclass"
                                             else "binary")
    data = Dataset(X=X, y=y, classes=classes, sample_weight=sw, grad_weight=sw,
                   weight_sum=float(np.sum(sw)), fit_intercept=spec.fit_intercept,
                   label_kind=kind, importance_sampling=False, rows=rows)
    return objective.init(data)


class Chunk:
    """One row block of the training data, held by a worker (see the module docstring)."""

    def __init__(self, index: int, start: int, X: Any, labels: NDArray[Any],
                 weights: FloatArray | None) -> None:
        self.index = index
        self.start = start
        self.X = X
        self.labels = labels
        self.weights = weights
        self._views: dict[str, _View] = {}

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_views"] = {}            # compiled row views are rebuilt where the chunk lands
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def view(self, spec: ChunkSpec) -> _View:
        v = self._views.get(spec.key)
        if v is None:
            v = self._views[spec.key] = _View(self, spec)
        v.set_threads(spec.n_jobs)
        return v

    def summary(self) -> dict[str, Any]:
        """What the client needs to set a solve up: sizes, labels and their weight sums."""
        classes, inverse, counts = np.unique(self.labels, return_inverse=True,
                                             return_counts=True)
        w = np.ones(self.n_rows) if self.weights is None else self.weights
        wsum = np.bincount(inverse.ravel(), weights=w, minlength=classes.shape[0])
        nnz = int(self.X.nnz) if sp.issparse(self.X) else int(self.X.size)
        return {"index": self.index, "n_rows": self.n_rows, "n_cols": int(self.X.shape[1]),
                "classes": classes, "counts": counts.astype(np.float64), "wsum": wsum,
                "nnz": nnz, "sparse": bool(sp.issparse(self.X)), "dtype": str(self.X.dtype)}


def _where(index: int, start: int, exc: Exception) -> Exception:
    msg = f"chunk {index} (rows {start} and on): {exc}"
    return type(exc)(msg) if isinstance(exc, (ValueError, TypeError)) else exc


def make_chunk(index: int, start: int, X: Any, labels: Any, weights: Any,
               constant_column: bool) -> Chunk:
    """Validate one row block on the worker: ``X`` through :func:`sqnopt.data.check_matrix`
    (plus a column of ones for a regularised intercept), labels one per row, weights finite and
    non-negative. Errors name the chunk and its first row."""
    try:
        if sp.issparse(X):
            X = sp.csr_matrix(X)
        Xc = check_matrix(X, fit=True)
        n = int(Xc.shape[0])
        if constant_column:
            if sp.issparse(Xc):
                ones = sp.csr_matrix(np.ones((n, 1), dtype=Xc.dtype))
                Xc = check_matrix(sp.hstack([Xc, ones], format="csr", dtype=Xc.dtype))
            else:
                Xc = np.hstack([Xc, np.ones((n, 1), dtype=Xc.dtype)])
        y = np.asarray(labels)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        if y.ndim != 1 or y.shape[0] != n:
            raise ValueError(f"y has shape {y.shape} but X has {n} rows here. Pass one label "
                             "per row, chunked like the rows of X")
        if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinity. Drop the unlabelled samples")
        if y.dtype.kind in "cmMO" and y.dtype != object:
            raise TypeError(f"y: unsupported label dtype {y.dtype}")
        w: FloatArray | None = None
        if weights is not None:
            wa = np.asarray(weights)
            if wa.dtype.kind not in "biuf":
                raise TypeError(f"sample_weight: unsupported dtype {wa.dtype}; pass numbers")
            w = np.ascontiguousarray(wa, dtype=np.float64).ravel()
            if w.shape[0] != n:
                raise ValueError(f"sample_weight has {w.shape[0]} entries but X has {n} rows "
                                 "here. Pass one weight per row, chunked like X")
            if not np.all(np.isfinite(w)) or np.any(w < 0):
                raise ValueError("sample_weight must be finite and >= 0")
        return Chunk(index, start, Xc, y, w)
    except (ValueError, TypeError) as exc:
        raise _where(index, start, exc) from None


def summarize(chunk: Chunk) -> dict[str, Any]:
    return chunk.summary()


# ---- per-chunk evaluations (called on workers, one task per worker's group of chunks) -------

def _pack(vec: FloatArray) -> Any:
    """A gradient sum as it travels: dense, or its nonzeros when they are few."""
    nz = np.flatnonzero(vec)
    if 3 * nz.shape[0] < vec.shape[0]:
        idx = nz.astype(np.int32) if vec.shape[0] < 2**31 else nz
        return idx, vec[nz]
    return vec


def evaluate(chunks: list[Chunk], spec: ChunkSpec, w: FloatArray,
             w2: FloatArray | None, batches: list[NDArray[Any] | None],
             mode: Literal["value", "gradient"]) -> list[tuple[int, float, Any, Any]]:
    """Per chunk: the loss sum over its rows of the batch (``None``: every row) and, for
    ``mode="gradient"``, the gradient sum (and the one at ``w2`` too, when given: SVRG's pair
    on one batch in one task). Sums are the kernel's batch means times the batch size; the
    kernel's own regulariser is zero."""
    out: list[tuple[int, float, Any, Any]] = []
    for chunk, local in zip(chunks, batches):
        view = chunk.view(spec)
        k = view.kernel
        if mode == "value":
            out.append((chunk.index, float(k.value(w)) * chunk.n_rows, None, None))
            continue
        idx = view.everyone if local is None else np.asarray(local, dtype=np.intp)
        size = float(idx.shape[0])
        if size == 0:
            continue
        g = np.empty(k.n_params)
        f = float(k.gradient(w, idx, g)) * size
        g *= size
        g2: Any = None
        if w2 is not None:
            g2v = np.empty(k.n_params)
            k.gradient(w2, idx, g2v)
            g2v *= size
            g2 = _pack(g2v)
        out.append((chunk.index, f, _pack(g), g2))
    return out


def inner_product_sums(coef: FloatArray, dots: FloatArray) -> tuple[int, float, float]:
    r"""``(n, sum_i a_i, sum_i (a_i - mean)^2)`` of ``a_i = sum_k coef_ik dots_ik`` over the
    rows of one block: with ``coef`` the score derivatives of the rows at ``w`` and ``dots``
    their scores of ``g``, ``a_i = grad l_i(w)' g`` (the loss part of
    :math:`\nabla F_i^\top g`; the regulariser shifts every ``a_i`` alike). The centred sum of
    squares is taken about the block's own mean (two passes), so that combining the blocks
    (:func:`combine_variance`) needs no difference of large sums."""
    a = np.einsum("ik,ik->i", coef, dots)
    n = int(a.shape[0])
    if n == 0:
        return 0, 0.0, 0.0
    total = float(np.sum(a))
    dev = a - total / n
    return n, total, float(np.dot(dev, dev))


def combine_sums(parts: list[tuple[int, float, float]]) -> tuple[int, float, float]:
    r"""``(n, mean, M)`` of the union of blocks -- count, mean and centred sum of squares --
    from each block's ``(n_c, s_c, M_c)`` (count, sum, centred sum of squares;
    :func:`inner_product_sums`), added in block order by the pairwise formula of Chan, Golub &
    LeVeque (1979):

    .. math:: M = \sum_c M_c + \sum_c n_c (s_c / n_c - \bar a)^2, \qquad
              \bar a = \frac{1}{n}\sum_c s_c.

    This is exactly the centred sum of squares of the concatenated values (expand
    :math:`\sum_{i \in c} (a_i - \bar a)^2 = M_c + n_c(\bar a_c - \bar a)^2`); unlike
    :math:`\sum a_i^2 - (\sum a_i)^2 / n` it does not lose the variance to cancellation when it
    is small against the squared mean -- the regime where the batch stops growing."""
    n = sum(p[0] for p in parts)
    if n < 1:
        return 0, float("nan"), float("nan")
    total = 0.0
    for p in parts:
        total += p[1]
    mean = total / n
    m2 = 0.0
    for c, s, m in parts:
        if c:
            d = s / c - mean
            m2 += m + c * d * d
    return n, mean, m2


def combine_variance(parts: list[tuple[int, float, float]]) -> float:
    """The sample variance (divisor ``n - 1``) of the union of blocks (:func:`combine_sums`);
    NaN for fewer than two values."""
    n, _, m2 = combine_sums(parts)
    return m2 / (n - 1) if n >= 2 else float("nan")


def orthogonal_variance(n: int, m2: float, q: float, dd: float, gg: float) -> float:
    r"""The orthogonality test's sample variance (Bollapragada, Byrd & Nocedal 2018) of the
    parts of the per-sample loss gradients :math:`d_i` orthogonal to :math:`g`:

    .. math:: \operatorname{Var}_\perp = \frac{\sum_i \lVert d_i\rVert^2 - n \lVert\bar d
              \rVert^2 - M / \lVert g\rVert^2}{n - 1},

    from ``q`` :math:`= \sum_i \lVert d_i\rVert^2`, ``dd`` :math:`= \lVert \bar d\rVert^2`
    (the batch mean's), ``gg`` :math:`= \lVert g\rVert^2` and ``m2`` :math:`= M`, the centred sum of
    squares of :math:`a_i = d_i^\top g` (:func:`combine_sums`): the compiled estimator's
    :math:`\sum_i (\lVert d_i\rVert^2 - a_i^2/\lVert g\rVert^2) - n(\lVert\bar d\rVert^2 -
    \bar a^2/\lVert g\rVert^2)` with :math:`\sum_i a_i^2 - n \bar a^2 = M`. For :math:`g = 0`
    every gradient is orthogonal to it: :math:`\sum_i \lVert d_i\rVert^2 / (n - 1)`, as there."""
    if gg > 0.0:
        return (q - n * dd - m2 / gg) / (n - 1)
    return q / (n - 1)


def variance_sums(chunks: list[Chunk], spec: ChunkSpec, w: FloatArray, g: FloatArray,
                  batches: list[NDArray[Any] | None], ortho: bool = False
                  ) -> list[tuple[int, int, float, float, float]]:
    """Per chunk, for progressive batching's tests: ``(chunk index,`` the
    :func:`inner_product_sums` of its rows of the batch, and, when ``ortho``, the sum of the
    rows' squared loss-gradient norms (the objective kernel's ``rows_sqnorm``; else 0) ``)`` at
    the iterate ``w`` and the batch gradient ``g`` (one pass of score derivatives at ``w`` and
    one row product with ``g``; the worker keeps nothing between tasks, so a chunk recomputed
    elsewhere gives the same sums)."""
    out: list[tuple[int, int, float, float, float]] = []
    for chunk, local in zip(chunks, batches):
        view = chunk.view(spec)
        k: Any = view.kernel            # linear_scores: score_derivatives, rows_dot, rows_sqnorm
        idx = view.everyone if local is None else np.asarray(local, dtype=np.intp)
        if idx.shape[0] == 0:
            continue
        coef, _ = k.score_derivatives(w, idx)
        coef = np.asarray(coef)
        q = float(np.sum(np.asarray(k.rows_sqnorm(idx, coef)))) if ortho else 0.0
        out.append((chunk.index, *inner_product_sums(coef, np.asarray(k.rows_dot(idx, g))), q))
    return out


def gather_rows(chunk: Chunk, spec: ChunkSpec, local: NDArray[Any]
                ) -> tuple[Any, FloatArray, FloatArray]:
    """The rows ``local`` of a chunk as one solve sees them: ``(X rows, y, weights)``."""
    view = chunk.view(spec)
    idx = np.asarray(local, dtype=np.intp)
    X = chunk.X[idx]
    return X, view.y[idx], view.sample_weight[idx]


def local_kernel(objective: Objective, spec: ChunkSpec, X: Any, y: FloatArray,
                 sw: FloatArray) -> ObjectiveKernelLike:
    """The objective (with its own ``lam``) bound to rows gathered on the client, encoded and
    weighted as :func:`gather_rows` returned them."""
    classes = np.array([-1.0, 1.0]) if spec.mode == "ovr" else np.asarray(spec.classes)
    return _kernel(objective, check_matrix(X), y, classes, sw, spec)
