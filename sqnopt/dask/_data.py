"""The client's handle on training data partitioned across a Dask cluster: :class:`ChunkedData`.

``ChunkedData.from_dask(X, y)`` turns a ``dask.array`` (dense or with ``scipy.sparse`` chunks)
or a dask DataFrame into validated row blocks held by the workers (one
:class:`~sqnopt.dask._chunks.Chunk` per row block, in block order), and keeps only their futures,
their sizes and a label summary on the client. Its methods run the per-chunk work where the data
lives -- one task per worker, covering the chunks that worker holds -- and add the chunks'
partial sums on the client in chunk order, so that a result does not depend on the number of
workers or on where each chunk was computed; or they gather a few rows to the client.

Fault tolerance is Dask's: every chunk is a future computed from the input's task graph, and
every evaluation task carries its inputs (the iterate, the batch's row indices) in its own task
definition, so a task or chunk lost with a worker is recomputed from them by the scheduler.
"""

from __future__ import annotations

import math
import pickle
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from sqnopt.dask._chunks import (
    ChunkSpec,
    combine_sums,
    evaluate,
    gather_rows,
    make_chunk,
    summarize,
    variance_sums,
)

FloatArray = NDArray[np.float64]

__all__ = ["ChunkedData", "CommStats", "get_client"]

#: Evaluations between two refreshes of which worker holds which chunk (the grouping of chunks
#: into one task per worker; a stale grouping costs transfers, never correctness).
REGROUP_EVERY = 25


def get_client(client: Any = None) -> Any:
    """``client`` itself, or the active ``dask.distributed`` client; a clear error if none."""
    if client is not None:
        return client
    from distributed import get_client as _active

    try:
        return _active()
    except ValueError:
        raise ValueError(
            "sqnopt.dask needs a running dask.distributed client: start one first, e.g. "
            "`from distributed import Client; client = Client()` (a LocalCluster) or "
            "`Client('scheduler-address:8786')`") from None


@dataclass
class CommStats:
    """What travelled between the client and the workers (measured on the client: the bytes of
    the arrays each task carries and of the results it returns)."""

    round_trips: int = 0        #: client -> workers -> client waits
    tasks: int = 0              #: tasks submitted
    bytes_sent: int = 0         #: iterates, row indices and specs carried by tasks
    bytes_received: int = 0     #: partial sums and gathered rows returned to the client
    rows_gathered: int = 0      #: rows brought to the client (small batches)
    seconds: float = 0.0        #: wall time spent waiting for the cluster

    def as_dict(self) -> dict[str, float]:
        return {"round_trips": self.round_trips, "tasks": self.tasks,
                "bytes_sent": self.bytes_sent, "bytes_received": self.bytes_received,
                "rows_gathered": self.rows_gathered, "seconds": self.seconds}


def _nbytes(obj: Any) -> int:
    if obj is None:
        return 0
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if sp.issparse(obj):
        return int(obj.data.nbytes + obj.indices.nbytes + obj.indptr.nbytes)
    if isinstance(obj, (tuple, list)):
        return sum(_nbytes(o) for o in obj)
    if isinstance(obj, (int, float)):
        return 8
    return 0


def _is_dataframe(obj: Any) -> bool:
    mod = type(obj).__module__ or ""
    return mod.startswith("dask") and hasattr(obj, "to_dask_array")


def _dask_array(obj: Any, what: str) -> Any:
    """A dask array from a dask array, DataFrame or Series (with known partition lengths)."""
    import dask.array as da

    if _is_dataframe(obj):
        obj = obj.to_dask_array(lengths=True)
    if not isinstance(obj, da.Array):
        return None
    arr: Any = obj
    if any(math.isnan(c) for c in arr.chunks[0]):
        arr = arr.compute_chunk_sizes()
    return arr


def _row_blocks(obj: Any, sizes: tuple[int, ...], what: str) -> list[Any]:
    """Per row block of X: the matching block of ``y`` / ``sample_weight`` (a delayed block of
    a dask collection, or a slice of an in-memory array, which then travels once)."""
    n = sum(sizes)
    arr = _dask_array(obj, what)
    if arr is not None:
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        if arr.ndim != 1:
            raise ValueError(f"{what}: expected one value per sample (1-D), got shape "
                             f"{arr.shape}")
        if arr.shape[0] != n:
            raise ValueError(f"{what} has {arr.shape[0]} entries but X has {n} rows")
        if tuple(arr.chunks[0]) != tuple(sizes):
            arr = arr.rechunk((tuple(sizes),))
        return list(arr.to_delayed().ravel())
    a = np.asarray(obj)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a.ravel()
    if a.ndim != 1 or a.shape[0] != n:
        raise ValueError(f"{what} has shape {a.shape} but X has {n} rows. Pass one value per "
                         "row (a dask array chunked like X, a dask Series, or an array)")
    cuts = np.cumsum((0,) + tuple(sizes))
    return [a[cuts[i]:cuts[i + 1]] for i in range(len(sizes))]


@dataclass
class ChunkedData:
    """Training data held by the workers, as row blocks in a fixed order (see the module
    docstring). Build it with :meth:`from_dask`; call :meth:`release` when done (or let it be
    garbage collected: the futures then release the chunks)."""

    client: Any
    chunks: list[Any]                   #: futures of the Chunk objects, in row order
    offsets: NDArray[np.intp]           #: row offset of each chunk, plus the total at the end
    n_features: int                     #: columns of the design matrix as the kernels see it
    classes: NDArray[Any]               #: sorted labels of the whole data set
    counts: FloatArray                  #: samples per class
    weight_sums: FloatArray             #: sum of the raw sample weights per class
    sparse: bool
    nnz: int
    constant_column: bool
    stats: CommStats = field(default_factory=CommStats)
    _groups: list[tuple[str | None, list[int]]] = field(default_factory=list, repr=False)
    _since_regroup: int = 0

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_dask(cls, X: Any, y: Any, sample_weight: Any = None, *,
                  constant_column: bool = False, client: Any = None) -> ChunkedData:
        """Validate ``(X, y, sample_weight)`` into chunks held by the workers.

        ``X``: a 2-D ``dask.array`` (dense chunks, or ``scipy.sparse`` chunks) or a dask
        DataFrame of numeric columns; column blocks are joined, so each chunk holds whole rows.
        ``y`` and ``sample_weight``: dask arrays, Series or in-memory arrays, one value per row.
        ``constant_column`` appends a column of ones (a regularised intercept).
        """
        from dask.delayed import delayed

        client = get_client(client)
        Xa = _dask_array(X, "X")
        if Xa is None:
            raise TypeError(
                f"X must be a dask array or a dask DataFrame, got {type(X).__name__}. For "
                "in-memory data use sqnopt.SQNClassifier (or wrap it: "
                "dask.array.from_array(X, chunks=(rows_per_chunk, -1)))")
        if Xa.ndim != 2:
            raise ValueError(f"X: expected a 2-D array, got {Xa.ndim}-D with shape {Xa.shape}")
        if Xa.numblocks[1] > 1:
            Xa = Xa.rechunk({1: -1})
        sizes = tuple(int(c) for c in Xa.chunks[0])
        if sum(sizes) == 0 or Xa.shape[1] == 0:
            raise ValueError(f"X is empty (shape {Xa.shape}). Pass at least one sample and "
                             "one feature")
        xblocks = list(Xa.to_delayed()[:, 0])
        yblocks = _row_blocks(y, sizes, "y")
        wblocks = (_row_blocks(sample_weight, sizes, "sample_weight")
                   if sample_weight is not None else [None] * len(sizes))
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
        keep = [i for i, s in enumerate(sizes) if s > 0]   # empty blocks hold nothing
        make = delayed(make_chunk, pure=True)
        tasks = [make(j, int(starts[i]), xblocks[i], yblocks[i], wblocks[i], constant_column)
                 for j, i in enumerate(keep)]
        futures = client.compute(tasks)
        summaries = client.gather(client.map(summarize, futures, pure=False))
        summaries.sort(key=lambda s: s["index"])
        offsets = np.concatenate([[0], np.cumsum([s["n_rows"] for s in summaries])]
                                 ).astype(np.intp)
        n_cols = {s["n_cols"] for s in summaries}
        if len(n_cols) != 1:
            raise ValueError(f"X: the row blocks have different numbers of columns "
                             f"{sorted(n_cols)}")
        classes = np.unique(np.concatenate([s["classes"] for s in summaries]))
        counts = np.zeros(classes.shape[0])
        wsums = np.zeros(classes.shape[0])
        for s in summaries:
            pos = np.searchsorted(classes, s["classes"])
            counts[pos] += s["counts"]
            wsums[pos] += s["wsum"]
        return cls(client=client, chunks=list(futures), offsets=offsets,
                   n_features=n_cols.pop(), classes=classes, counts=counts,
                   weight_sums=wsums, sparse=all(s["sparse"] for s in summaries),
                   nnz=sum(s["nnz"] for s in summaries), constant_column=constant_column)

    @property
    def n_samples(self) -> int:
        return int(self.offsets[-1])

    @property
    def n_chunks(self) -> int:
        return len(self.chunks)

    def release(self) -> None:
        """Let the workers drop the chunks."""
        for f in self.chunks:
            f.release()
        self.chunks = []

    # ------------------------------------------------------------------ scheduling
    def _regroup(self) -> None:
        """Group chunks by the worker that holds them (one task per worker)."""
        who = self.client.who_has(self.chunks)
        groups: dict[str | None, list[int]] = {}
        for i, f in enumerate(self.chunks):
            holders = who.get(f.key) or ()
            groups.setdefault(holders[0] if holders else None, []).append(i)
        self._groups = list(groups.items())
        self._since_regroup = 0

    def _submit(self, fn: Any, per_chunk: list[Any] | None, *args: Any,
                chunks: list[int] | None = None) -> list[tuple[list[int], Any]]:
        """One task per worker group: ``fn([chunks], *args, [per-chunk args])``."""
        if not self._groups or self._since_regroup >= REGROUP_EVERY:
            self._regroup()
        self._since_regroup += 1
        wanted = None if chunks is None else set(chunks)
        out = []
        sent = sum(_nbytes(a) for a in args if isinstance(a, np.ndarray))
        for worker, members in self._groups:
            idx = members if wanted is None else [i for i in members if i in wanted]
            if not idx:
                continue
            extra = [per_chunk[i] for i in idx] if per_chunk is not None else [None] * len(idx)
            fut = self.client.submit(fn, [self.chunks[i] for i in idx], *args, extra,
                                     workers=None if worker is None else [worker],
                                     allow_other_workers=True, pure=False)
            out.append((idx, fut))
            self.stats.tasks += 1
            self.stats.bytes_sent += sent + sum(_nbytes(e) for e in extra)
        return out

    def _wait(self, submitted: list[tuple[list[int], Any]]) -> list[Any]:
        tic = time.perf_counter()
        results = self.client.gather([f for _, f in submitted])
        self.stats.seconds += time.perf_counter() - tic
        self.stats.round_trips += 1
        return list(results)

    # ------------------------------------------------------------------ evaluations
    def evaluate(self, spec: ChunkSpec, w: FloatArray, *, w2: FloatArray | None = None,
                 local: list[NDArray[Any] | None] | None = None,
                 mode: Literal["value", "gradient"] = "gradient"
                 ) -> tuple[float, FloatArray | None, FloatArray | None]:
        """Sums over the rows of every chunk (``local=None``) or of the given per-chunk row
        indices: ``(loss sum, gradient sum, gradient sum at w2)``, each added over the chunks
        in chunk order (so independent of the workers). ``mode="value"``: the weighted loss sum
        over all rows only."""
        chunks = None if local is None else [i for i, b in enumerate(local)
                                             if b is not None and len(b)]
        per_chunk = local if local is not None else None
        if local is not None:
            per_chunk = [None if b is None else _compact(b) for b in local]
        submitted = self._submit(_evaluate_task, per_chunk, self._spec_bytes(spec), w, w2,
                                 mode, chunks=chunks)
        parts: list[tuple[int, float, Any, Any]] = []
        for res in self._wait(submitted):
            parts.extend(res)
        parts.sort(key=lambda p: p[0])
        self.stats.bytes_received += sum(8 + _nbytes(p[2]) + _nbytes(p[3]) for p in parts)
        loss = 0.0
        for p in parts:
            loss += p[1]
        if mode == "value":
            return loss, None, None
        p_len = w.shape[0]
        grad = _add_in_order([p[2] for p in parts], p_len)
        grad2 = _add_in_order([p[3] for p in parts], p_len) if w2 is not None else None
        return loss, grad, grad2

    def variance(self, spec: ChunkSpec, w: FloatArray, g: FloatArray, *,
                 local: list[NDArray[Any] | None] | None = None, ortho: bool = False
                 ) -> tuple[int, float, float, float]:
        """Progressive batching's test sums over every row (``local=None``) or the given
        per-chunk rows: ``(n, mean, M, q)`` -- the count, mean and centred sum of squares of
        ``a_i = grad l_i(w)' g`` and, when ``ortho``, the sum ``q`` of the rows' squared
        loss-gradient norms (else 0). One round trip carrying ``w`` and ``g`` (and the row
        indices); each chunk returns four numbers, combined in chunk order
        (:func:`~sqnopt.dask._chunks.combine_sums`)."""
        chunks = None if local is None else [i for i, b in enumerate(local)
                                             if b is not None and len(b)]
        per_chunk = None if local is None else [None if b is None else _compact(b)
                                                for b in local]
        submitted = self._submit(_variance_task, per_chunk, self._spec_bytes(spec), w, g, ortho,
                                 chunks=chunks)
        parts: list[tuple[int, int, float, float, float]] = []
        for res in self._wait(submitted):
            parts.extend(res)
        parts.sort(key=lambda p: p[0])
        self.stats.bytes_received += 32 * len(parts)
        n, mean, m2 = combine_sums([(c, s, m) for _, c, s, m, _ in parts])
        q = 0.0
        for part in parts:
            q += part[4]
        return n, mean, m2, q

    def gather(self, spec: ChunkSpec, rows: NDArray[np.intp]) -> tuple[Any, FloatArray,
                                                                         FloatArray]:
        """The rows ``rows`` (global indices, any order, repeats allowed) brought to the client
        in that order: ``(X rows, encoded labels, weights)``."""
        split = self.split(rows)
        submitted = self._submit(_gather_task, [None if s is None else s[1] for s in split],
                                 self._spec_bytes(spec),
                                 chunks=[i for i, s in enumerate(split) if s is not None])
        blocks: dict[int, tuple[Any, FloatArray, FloatArray]] = {}
        for (idx, _), res in zip(submitted, self._wait(submitted)):
            for i, r in zip([i for i in idx if split[i] is not None], res):
                blocks[i] = r
        order = [i for i in range(self.n_chunks) if split[i] is not None]
        Xs = [blocks[i][0] for i in order]
        positions = np.concatenate([split[i][0] for i in order])   # type: ignore[index]
        perm = np.argsort(positions, kind="stable")
        if sp.issparse(Xs[0]):
            X = sp.vstack(Xs, format="csr")[perm]
        else:
            X = np.ascontiguousarray(np.concatenate(Xs)[perm])
        y = np.concatenate([blocks[i][1] for i in order])[perm]
        sw = np.concatenate([blocks[i][2] for i in order])[perm]
        self.stats.rows_gathered += int(rows.shape[0])
        self.stats.bytes_received += _nbytes(X) + y.nbytes + sw.nbytes
        return X, y, sw

    def split(self, rows: NDArray[np.intp]) -> list[tuple[NDArray[np.intp], NDArray[Any]] | None]:
        """Per chunk: ``(positions in rows, local row indices)`` of the rows it holds, in the
        order of ``rows``; ``None`` for chunks holding none."""
        owner = np.searchsorted(self.offsets, rows, side="right") - 1
        order = np.argsort(owner, kind="stable")
        bounds = np.searchsorted(owner[order], np.arange(self.n_chunks + 1))
        out: list[tuple[NDArray[np.intp], NDArray[Any]] | None] = []
        for c in range(self.n_chunks):
            pos = order[bounds[c]:bounds[c + 1]]
            if pos.shape[0] == 0:
                out.append(None)
            else:
                out.append((pos, _compact(rows[pos] - self.offsets[c])))
        return out

    def _spec_bytes(self, spec: ChunkSpec) -> ChunkSpec:
        self.stats.bytes_sent += len(pickle.dumps(spec))
        return spec


def _compact(local: NDArray[Any]) -> NDArray[Any]:
    """Local row indices as they travel: int32 (a chunk has fewer than 2**31 rows)."""
    return np.ascontiguousarray(local, dtype=np.int32)


def _add_in_order(parts: list[Any], n: int) -> FloatArray:
    """Add the chunks' gradient sums in chunk order (dense or ``(indices, values)``: adding the
    zeros a sparse part leaves out changes no bit)."""
    total = np.zeros(n)
    for p in parts:
        if p is None:
            continue
        if isinstance(p, tuple):
            total[p[0]] += p[1]
        else:
            total += p
    return total


def _evaluate_task(chunks: list[Any], spec: ChunkSpec, w: FloatArray, w2: FloatArray | None,
                   mode: Literal["value", "gradient"], per_chunk: list[Any]
                   ) -> list[tuple[int, float, Any, Any]]:
    return evaluate(chunks, spec, w, w2, per_chunk, mode)


def _variance_task(chunks: list[Any], spec: ChunkSpec, w: FloatArray, g: FloatArray,
                   ortho: bool, per_chunk: list[Any]
                   ) -> list[tuple[int, int, float, float, float]]:
    return variance_sums(chunks, spec, w, g, per_chunk, ortho)


def _gather_task(chunks: list[Any], spec: ChunkSpec, per_chunk: list[Any]
                 ) -> list[tuple[Any, FloatArray, FloatArray]]:
    return [gather_rows(c, spec, local) for c, local in zip(chunks, per_chunk)]
