r"""The distributed objective and the components that let sqnopt's own driver run on it.

:class:`DistributedObjective` is an ordinary (pure-Python) sqnopt objective: wrapped around a
built-in objective and a :class:`~sqnopt.dask.ChunkedData`, its kernel answers the driver's
calls -- ``gradient(w, batch)``, ``value(w)``, ``full_gradient(w)`` -- by computing

.. math:: F_B(w) = \frac{\lambda}{2}\|w_{reg}\|^2 + \frac{1}{|B|}\sum_{i \in B} c_i \ell_i(w),
   \qquad \nabla F_B(w) = \lambda w_{reg} + \frac{1}{|B|}\sum_{i\in B} c_i \nabla\ell_i(w)

from the chunks' partial sums (each worker runs the compiled kernel of the objective with
``lam = 0`` on its chunks; the client adds the chunks' sums in chunk order and adds the
regulariser with a kernel of the same objective). So :class:`sqnopt.Solver` -- its Python loop,
the compiled L-BFGS memory, the Armijo search, the batch schedules, the samplers, the tolerances,
the divergence monitor and the result -- drives a distributed solve unchanged, and with the same
seed it draws the same batches as a solve of the concatenated data on one machine.

Where a batch is evaluated:

* the whole data set (full-batch iterations, full objective, SVRG snapshots, progressive
  batches grown to ``N``): on the workers;
  only ``w`` (one copy per worker) and the chunks' sums (``n_params`` numbers per chunk, or their
  nonzeros) travel;
* a batch of more than ``local_batch`` samples: on the workers; ``w`` and the batch's row
  indices (4 bytes per sample) travel;
* a batch of at most ``local_batch`` samples: its rows are brought to the client once and
  evaluated there, with the objective's kernel on those rows (the same arithmetic as on one
  machine); the rows stay cached while the driver reuses the batch (line-search trials, the
  secant pair's second gradient, the next full-batch iteration's gradient).

Components the driver cannot use on a Python objective have client-side counterparts here,
chosen by what the gradient estimator declares
(:attr:`~sqnopt.interfaces.GradientEstimator.partial_sums`), not by its type: SVRG's
``"snapshot"`` form (:class:`DistributedSVRG`: the snapshot's full gradient on the workers, the
batch's two gradients in one round trip), progressive batching's ``"variance_test"``
(:class:`DistributedProgressiveBatch`: the batch gradient, then, in a second round trip
carrying it, each chunk's count, sum and centred sum of squares of ``grad l_i(w)' g`` and the
sum of its rows' squared gradient norms, from which the client forms the tests' variances), and curvature models that draw their own
batches, such as SQB's quadratic bound (:class:`GatheredCurvature`: the curvature batch's rows
are brought to the client and the compiled model works on them).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import math
from collections import OrderedDict
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from sqnopt._jobs import check_n_jobs
from sqnopt.dask._chunks import (
    ChunkSpec,
    LabelMode,
    combine_sums,
    inner_product_sums,
    orthogonal_variance,
    local_kernel,
)
from sqnopt.dask._data import ChunkedData
from sqnopt.data import Dataset, prepare
from sqnopt.interfaces import (
    LINEAR_SCORES,
    CurvatureModel,
    GradientEstimator,
    Objective,
    ObjectiveKernelLike,
    Problem,
)

FloatArray = NDArray[np.float64]
IndexArray = NDArray[np.intp]

__all__ = ["DistributedObjective", "DistributedObjectiveKernel", "DistributedProgressiveBatch",
           "DistributedSVRG", "GatheredCurvature", "LOCAL_BATCH", "distributed_gradient",
           "lam_zero", "runs_distributed"]

#: Default largest batch whose rows are brought to the client instead of evaluated on the
#: workers.
LOCAL_BATCH = 10_000


def lam_zero(objective: Objective) -> Objective:
    """The same objective without regulariser (the workers' part of a distributed solve)."""
    if float(objective.lam) == 0.0:
        return objective
    fields = getattr(objective, "__dataclass_fields__", None)
    if not fields or "lam" not in fields:
        raise TypeError(f"objective {objective.describe()} cannot be distributed: sqnopt.dask "
                        "needs an objective dataclass with a `lam` field (every built-in is "
                        "one), so that the workers can evaluate its loss without the "
                        "regulariser")
    replace: Any = dataclasses.replace
    out: Objective = replace(objective, lam=0.0)
    return out


class DistributedObjective(Objective):
    """``objective`` evaluated on the chunks of ``data`` (see the module docstring).

    Parameters
    ----------
    objective
        A built-in (or any dataclass) objective; its capabilities, label kind and curvature
        bound are this objective's.
    data
        The chunks.
    labels
        How the chunks' labels enter: ``"binary"`` (two classes, ``classes[1]`` positive),
        ``"multiclass"`` or ``"ovr"`` (``positive`` against the rest).
    positive, class_weight
        The positive class of a one-vs-rest sub-problem; weights per class of
        ``data.classes`` (multiplying the sample weights).
    local_batch
        Largest batch evaluated on the client from gathered rows.
    n_jobs
        Threads of each chunk's compiled passes on its worker (``n_jobs`` as scikit-learn
        means it, resolved on the worker: ``-1`` is that worker's cores). A worker that runs
        several chunk tasks at once shares one pool of threads among them: a task that finds
        it busy runs on its own thread. The results do not depend on it.
    """

    name = "distributed"
    base: Objective

    def __init__(self, objective: Objective, data: ChunkedData, *,
                 labels: LabelMode | None = None, positive: Any = None,
                 class_weight: ArrayLike | None = None, local_batch: int = LOCAL_BATCH,
                 n_jobs: int | None = None) -> None:
        if isinstance(objective, DistributedObjective):
            objective = objective.base
        if objective.label_kind == "regression":
            raise ValueError(regression_refused(objective.name,
                                                "DistributedObjective evaluates classes"))
        self.base = objective
        self.data = data
        self.lam = float(objective.lam)
        self.labels: LabelMode = labels or ("multiclass" if objective.label_kind == "multiclass"
                                            else "binary")
        self.positive = positive
        self.class_weight = (None if class_weight is None else
                             tuple(float(c) for c in np.asarray(class_weight, dtype=np.float64)))
        if not (isinstance(local_batch, (int, np.integer)) and local_batch >= 0):
            raise ValueError(f"local_batch must be an integer >= 0, got {local_batch!r}")
        self.local_batch = int(local_batch)
        self.n_jobs = check_n_jobs(n_jobs)
        # the class attributes the solver and the recipes read, as the base objective's
        setattr(self, "label_kind", objective.label_kind)
        setattr(self, "curvature_bound", objective.curvature_bound)

    @property
    def capabilities(self) -> frozenset[str]:
        return self.base.capabilities

    def with_capability(self, capability: str) -> Objective | None:
        alt = self.base.with_capability(capability)
        if alt is None or alt is self.base:
            return None if alt is None else self
        return DistributedObjective(alt, self.data, labels=self.labels, positive=self.positive,
                                    class_weight=self.class_weight, local_batch=self.local_batch,
                                    n_jobs=self.n_jobs)

    def n_blocks(self, n_classes: int) -> int:
        return self.base.n_blocks(n_classes)

    def param_layout(self, data: Dataset) -> tuple[int, int]:
        return self.base.param_layout(data)

    def params(self) -> dict[str, Any]:
        return {"objective": self.base, "local_batch": self.local_batch, "n_jobs": self.n_jobs}

    def describe(self) -> str:
        return f"distributed({self.base.describe()}, {self.data.n_chunks} chunks)"

    def weight_scale(self) -> float:
        """``N / sum_i c_i``: the global normalisation of the weights (mean 1)."""
        d = self.data
        sums = d.weight_sums
        if self.class_weight is not None:
            sums = sums * np.asarray(self.class_weight)
        total = float(np.sum(sums))
        if not total > 0:
            raise ValueError("sample_weight: all weights are zero (after class_weight). Give at "
                             "least one sample a positive weight")
        return d.n_samples / total

    def spec(self, objective: Objective, fit_intercept: bool) -> ChunkSpec:
        return ChunkSpec(objective=objective, mode=self.labels,
                         classes=tuple(self.data.classes.tolist()), positive=self.positive,
                         class_weight=self.class_weight, weight_scale=self.weight_scale(),
                         fit_intercept=fit_intercept, n_jobs=self.n_jobs)

    def placeholder(self) -> tuple[Any, NDArray[Any], NDArray[Any]]:
        """``(X, y, classes)`` that stand for the data in :meth:`sqnopt.Solver.init_state`: an
        all-zero sparse matrix of the data's shape and labels of the right kind. The driver
        only needs the data's sizes (its sampler and batch buffers are ``O(N)`` on the client);
        the kernel this objective builds ignores the values."""
        d = self.data
        cols = d.n_features - int(d.constant_column)
        X = sp.csr_matrix((d.n_samples, cols))
        if self.labels == "ovr":
            classes: NDArray[Any] = np.array([-1.0, 1.0])
        else:
            classes = d.classes
        y = np.full(d.n_samples, classes[0])
        return X, y, classes

    def stand_in(self, fit_intercept: bool) -> Dataset:
        """The :class:`~sqnopt.data.Dataset` a solver would prepare from :meth:`placeholder`
        (the design's columns, the label kind and classes): what :meth:`init` needs to build a
        kernel outside a solver."""
        Xp, yp, classes = self.placeholder()
        cols = self.data.n_features
        return prepare(sp.csr_matrix((self.data.n_samples, cols)), yp,
                       fit_intercept=fit_intercept, label_kind=self.label_kind, classes=classes)

    def init(self, data: Dataset) -> DistributedObjectiveKernel:
        if data.n_samples != self.data.n_samples or data.n_features != self.data.n_features:
            raise ValueError(
                f"DistributedObjective: the solver's data has shape ({data.n_samples}, "
                f"{data.n_features}) but the chunks hold ({self.data.n_samples}, "
                f"{self.data.n_features}); initialise the solver with placeholder()")
        return DistributedObjectiveKernel(self, data)


class DistributedObjectiveKernel:
    """The kernel of :class:`DistributedObjective` (implements
    :class:`~sqnopt.interfaces.ObjectiveKernelLike`)."""

    def __init__(self, owner: DistributedObjective, data: Dataset) -> None:
        self.owner = owner
        self.source = owner.data
        n_blocks, dim = owner.base.param_layout(data)
        self._n_params = n_blocks * dim
        self._lam = float(owner.base.lam)
        self.fit_intercept = bool(data.fit_intercept)
        self.spec = owner.spec(lam_zero(owner.base), self.fit_intercept)
        self.local_spec = self.spec    # rows gathered for the client: same encoding
        self.n_samples = self.source.n_samples
        self.everyone = np.arange(self.n_samples, dtype=np.intp)
        # the regulariser (lam/2 ||w_reg||^2, lam w_reg) with the objective's own kernel on a
        # one-row stand-in with the solve's layout: the same arithmetic as on one machine
        cls = data.classes
        stand_in = prepare(sp.csr_matrix((1, data.n_features)), cls[:1],
                           fit_intercept=self.fit_intercept, label_kind=data.label_kind,
                           classes=cls)
        self._reg: Any = owner.base.init(stand_in)
        if self._reg.n_params != self._n_params:
            raise ValueError(f"{owner.base.describe()}: cannot be distributed (its parameter "
                             "layout depends on the data)")
        self._local: OrderedDict[bytes, ObjectiveKernelLike] = OrderedDict()

    @property
    def n_params(self) -> int:
        return self._n_params

    @property
    def lam(self) -> float:
        return self._lam

    # ---- the protocol ----------------------------------------------------------------------
    def gradient(self, w: FloatArray, batch: IndexArray, out: FloatArray) -> float:
        batch = np.asarray(batch, dtype=np.intp)
        size = int(batch.shape[0])
        if size < 1:
            raise ValueError("batch must contain at least one index")
        if self._is_whole(batch):
            return self._finish(*self.source.evaluate(self.spec, w)[:2], size, w, out)
        if size <= self.owner.local_batch:
            return float(self.local_kernel(batch).gradient(w, self._arange(size), out))
        local = [None if s is None else s[1] for s in self.source.split(batch)]
        return self._finish(*self.source.evaluate(self.spec, w, local=local)[:2], size, w, out)

    def gradient_pair(self, w: FloatArray, w2: FloatArray, batch: IndexArray, out: FloatArray,
                      out2: FloatArray) -> float:
        """``s(w, B)`` into ``out`` and ``s(w2, B)`` into ``out2`` in one round trip; returns
        ``f_B(w)``."""
        batch = np.asarray(batch, dtype=np.intp)
        size = int(batch.shape[0])
        if size <= self.owner.local_batch and not self._is_whole(batch):
            k = self.local_kernel(batch)
            f = float(k.gradient(w, self._arange(size), out))
            k.gradient(w2, self._arange(size), out2)
            return f
        local = None if self._is_whole(batch) else [
            None if s is None else s[1] for s in self.source.split(batch)]
        loss, g, g2 = self.source.evaluate(self.spec, w, w2=w2, local=local)
        assert g2 is not None
        self._finish(0.0, g2, size, w2, out2)
        return self._finish(loss, g, size, w, out)

    def gradient_variance(self, w: FloatArray, batch: IndexArray, out: FloatArray,
                          test: bool, ortho: bool = False) -> tuple[float, float, float]:
        """``s(w, B)`` into ``out``; returns ``f_B(w)`` and, when ``test``, progressive
        batching's two sample variances over ``B`` with ``g = out``: of ``a_i = grad l_i(w)' g``
        (the inner-product test) and, when ``ortho``, of the parts of the loss gradients
        orthogonal to ``g`` (the orthogonality test; :func:`~sqnopt.dask._chunks.
        orthogonal_variance`). NaN for a variance not asked for.

        On the workers (a batch of more than ``local_batch`` samples, or the whole data set):
        two round trips, since the second needs ``g`` -- the batch gradient as
        :meth:`gradient`, then each chunk's count, sum and centred sum of squares of the
        ``a_i`` and the sum of its rows' squared gradient norms over its rows of the batch
        (:meth:`ChunkedData.variance`), combined exactly
        (:func:`~sqnopt.dask._chunks.combine_sums`). On the client (a gathered batch): the
        compiled progressive estimator's operations on the gathered rows -- score derivatives,
        ``rows_axpy``, the regulariser, ``rows_dot``, ``rows_sqnorm`` -- in its order."""
        nan = float("nan")
        batch = np.asarray(batch, dtype=np.intp)
        size = int(batch.shape[0])
        if size < 1:
            raise ValueError("batch must contain at least one index")
        whole = self._is_whole(batch)
        if size <= self.owner.local_batch and not whole:
            k: Any = self.local_kernel(batch)   # linear_scores: the score methods below
            rows = self._arange(size)
            coef, total = k.score_derivatives(w, rows)
            coef = np.asarray(coef)
            out[:] = 0.0
            k.rows_axpy(rows, coef, 1.0 / size, out)
            dd = float(np.dot(out, out))          # ||mean d_i||^2, before the regulariser
            f = float(total) * (1.0 / size) + float(k.reg_gradient_value(w, out))
            if not test:
                return f, nan, nan
            n, mean, m2 = combine_sums([inner_product_sums(coef,
                                                           np.asarray(k.rows_dot(rows, out)))])
            q = float(np.sum(np.asarray(k.rows_sqnorm(rows, coef)))) if ortho else 0.0
        else:
            local = None if whole else [None if s is None else s[1]
                                        for s in self.source.split(batch)]
            loss, grad = self.source.evaluate(self.spec, w, local=local)[:2]
            assert grad is not None
            np.multiply(grad, 1.0 / size, out=out)
            dd = float(np.dot(out, out))
            f = float(loss) * (1.0 / size) + float(self._reg.reg_gradient_value(w, out))
            if not test:
                return f, nan, nan
            n, mean, m2, q = self.source.variance(self.spec, w, out, local=local, ortho=ortho)
        var = m2 / (n - 1) if n >= 2 else nan
        if not ortho:
            return f, var, nan
        return f, var, orthogonal_variance(n, m2, q, dd, float(np.dot(out, out)))

    def value(self, w: FloatArray) -> float:
        loss = self.source.evaluate(self.spec, w, mode="value")[0]
        scratch = np.zeros(self._n_params)
        return loss / self.n_samples + float(self._reg.reg_gradient_value(w, scratch))

    def reg_value(self, w: FloatArray) -> float:
        """``lam/2 ||w_reg||^2`` (the objective's own kernel on the stand-in)."""
        return float(self._reg.reg_value(w))

    def full_gradient(self, w: FloatArray, out: FloatArray) -> float:
        return self._finish(*self.source.evaluate(self.spec, w)[:2], self.n_samples, w, out)

    # ---- helpers ---------------------------------------------------------------------------
    def _finish(self, loss: float, grad: FloatArray | None, size: int, w: FloatArray,
                out: FloatArray) -> float:
        """``out = grad / |B| + lam w_reg``; returns ``loss / |B| + lam/2 ||w_reg||^2`` (the
        order of operations of the compiled kernels)."""
        assert grad is not None
        inv = 1.0 / size
        np.multiply(grad, inv, out=out)
        return loss * inv + float(self._reg.reg_gradient_value(w, out))

    def _is_whole(self, batch: IndexArray) -> bool:
        return bool(batch.shape[0] == self.n_samples and batch[0] == 0
                    and batch[-1] == self.n_samples - 1
                    and np.array_equal(batch, self.everyone))

    @staticmethod
    def _arange(n: int) -> IndexArray:
        return np.arange(n, dtype=np.intp)

    def local_kernel(self, batch: IndexArray) -> ObjectiveKernelLike:
        """The solve's objective (with its own ``lam``) bound to the rows of ``batch`` brought
        to the client, in batch order; the last few are cached (the driver evaluates one batch
        several times: line-search trials, the secant pair, SQB's bound and its gradient)."""
        obj = self.owner.base
        key = hashlib.sha1(np.ascontiguousarray(batch).tobytes()).digest()
        k = self._local.get(key)
        if k is not None:
            self._local.move_to_end(key)
            return k
        X, y, sw = self.source.gather(self.local_spec, np.asarray(batch, dtype=np.intp))
        k = local_kernel(obj, self.local_spec, X, y, sw)
        self._local[key] = k
        while len(self._local) > 3:
            self._local.popitem(last=False)
        return k


# ---- SVRG with a distributed snapshot -------------------------------------------------------

class _DistributedSVRGKernel:
    """SVRG's estimate ``s(w, B) - s(w~, B) + grad F(w~)`` (Johnson & Zhang 2013) with the same
    operations, in the same order, as :class:`sqnopt.gradients.SVRG`'s compiled kernel; the
    snapshot's full gradient runs on the workers and the batch's two gradients come back from
    one round trip."""

    plain = False

    def __init__(self, dim: int, period: int) -> None:
        self.dim = dim
        self.period = period
        self.snapshot = np.zeros(dim)
        self.mu = np.zeros(dim)
        self.tmp = np.zeros(dim)
        self.since = 0
        self.have = False
        self.n_snapshots = 0

    def bind(self, objective: Any) -> None:
        if not isinstance(objective, DistributedObjectiveKernel):
            raise TypeError("DistributedSVRG works with a DistributedObjective")
        if objective.n_params != self.dim:
            raise ValueError(f"the objective has {objective.n_params} parameters, the gradient "
                             f"estimator {self.dim}")
        self.have, self.since = False, 0

    def estimate(self, objective: Any, w: FloatArray, batch: Any, out: FloatArray,
                 plain: FloatArray | None = None) -> tuple[float, int]:
        b = np.asarray(batch, dtype=np.intp)
        n = int(objective.n_samples)
        period = self.period or n
        extra = 0
        if not self.have or self.since >= period:
            self.snapshot[:] = w
            objective.full_gradient(self.snapshot, self.mu)
            extra += n
            self.since, self.have = 0, True
            self.n_snapshots += 1
        f = float(objective.gradient_pair(w, self.snapshot, b, out, self.tmp))
        if plain is not None:
            plain[:] = out
        extra += int(b.shape[0])
        out += self.mu - self.tmp
        self.since += int(b.shape[0])
        return f, extra


@dataclasses.dataclass(frozen=True)
class DistributedSVRG(GradientEstimator):
    """:class:`sqnopt.gradients.SVRG` for a :class:`DistributedObjective` (same estimate, same
    iterates): the snapshot's full gradient is computed where the data lives."""

    period: int | None = None
    name = "svrg_distributed"
    partial_sums = "snapshot"

    def memory_bytes(self, problem: Problem) -> int:
        return 8 * 3 * problem.n_params

    def init(self, problem: Problem) -> _DistributedSVRGKernel:
        return _DistributedSVRGKernel(problem.n_params, int(self.period or 0))


# ---- progressive batching with the test's sums on the workers -------------------------------

class _DistributedProgressiveKernel:
    """Progressive batching's estimate ``s(w, B)``, inner-product and orthogonality tests
    (Bollapragada, Byrd & Nocedal 2018; Bollapragada et al. 2018) with the operations of
    :class:`sqnopt.gradients.ProgressiveBatch`'s compiled kernel, its batch gradient and the
    tests' variances computed where the batch's rows are
    (:meth:`DistributedObjectiveKernel.gradient_variance`)."""

    plain = False
    batch_gradient = True          # the estimate is s(w, B): the driver reuses secant gradients
    sizes_batches = True           # batch_size() decides the next batch's size

    def __init__(self, dim: int, theta: float, nu: float | None = None) -> None:
        if not theta > 0.0:
            raise ValueError("theta must be > 0")
        if nu is not None and not nu > 0.0:
            raise ValueError("nu must be > 0, or None for the inner-product test alone")
        self.dim = dim
        self.theta = float(theta)
        self.nu = 0.0 if nu is None else float(nu)
        self.n_samples = 0
        self.size = 0
        self.n_tests = 0
        self.n_increases = 0
        self.last_ratio = float("nan")
        self.last_ortho_ratio = float("nan")

    def bind(self, objective: Any) -> None:
        if not isinstance(objective, DistributedObjectiveKernel):
            raise TypeError("DistributedProgressiveBatch works with a DistributedObjective")
        if objective.n_params != self.dim:
            raise ValueError(f"the objective has {objective.n_params} parameters, the gradient "
                             f"estimator {self.dim}")
        if LINEAR_SCORES not in objective.owner.base.capabilities:
            raise TypeError(f"progressive batching needs per-sample score derivatives "
                            f"(linear_scores); {objective.owner.base.describe()} has none")
        self.n_samples = int(objective.n_samples)
        self.size = self.n_tests = self.n_increases = 0
        self.last_ratio = self.last_ortho_ratio = float("nan")

    def batch_size(self, scheduled: int) -> int:
        b = max(int(scheduled), self.size)
        return min(b, self.n_samples) if self.n_samples > 0 else b

    def estimate(self, objective: Any, w: FloatArray, batch: Any, out: FloatArray,
                 plain: FloatArray | None = None) -> tuple[float, int]:
        b = np.asarray(batch, dtype=np.intp)
        size, N = int(b.shape[0]), self.n_samples
        test = 2 <= size < N
        ortho = self.nu > 0.0
        f, var, perp = objective.gradient_variance(w, b, out, test, ortho)
        if plain is not None:
            plain[:] = out
        if not test:
            return f, 0
        gg = float(np.dot(out, out))
        th2 = self.theta * self.theta
        self.n_tests += 1
        self.last_ratio = _ratio(var, size * th2 * gg * gg)
        need = 0.0
        fail = var > size * th2 * gg * gg          # the test fails (also for g = 0, Var > 0)
        if fail:
            need = _ratio(var, th2 * gg * gg)
        if ortho:
            nu2 = self.nu * self.nu
            self.last_ortho_ratio = _ratio(perp, size * nu2 * gg)
            if perp > size * nu2 * gg:
                fail = True
                need = max(need, _ratio(perp, nu2 * gg))
        if fail:
            new = N if need >= N else int(math.ceil(need))
            if new > self.size:
                self.size = new
                self.n_increases += 1
        return f, size

    def get_state(self) -> dict[str, Any]:
        """The size the test asked for and its counts (the compiled kernel's fields)."""
        return {"n_samples": self.n_samples, "size": self.size, "n_tests": self.n_tests,
                "n_increases": self.n_increases, "last_ratio": self.last_ratio,
                "last_ortho_ratio": self.last_ortho_ratio}

    def set_state(self, state: dict[str, Any]) -> None:
        from sqnopt.checkpoint import CheckpointError, state_value

        n = state_value(state, "n_samples", int, self)
        if n != self.n_samples:
            raise CheckpointError(f"{type(self).__name__}: the checkpoint is for {n} samples "
                                  f"(field 'n_samples'), this kernel is bound to {self.n_samples}:"
                                  " the checkpoint is of other data")
        size = state_value(state, "size", int, self)
        if not 0 <= size <= self.n_samples:
            raise CheckpointError(f"{type(self).__name__}: checkpoint field 'size'={size} is "
                                  f"outside [0, {self.n_samples}]")
        self.size = size
        self.n_tests = state_value(state, "n_tests", int, self, lo=0)
        self.n_increases = state_value(state, "n_increases", int, self, lo=0)
        self.last_ratio = state_value(state, "last_ratio", float, self, finite=False)
        self.last_ortho_ratio = (state_value(state, "last_ortho_ratio", float, self,
                                             finite=False)
                                 if "last_ortho_ratio" in state else float("nan"))


def _ratio(a: float, b: float) -> float:
    """``a / b`` as IEEE division (the compiled kernel's): ``inf`` or NaN for ``b = 0``."""
    if b != 0.0:
        return a / b
    return math.nan if a == 0.0 or math.isnan(a) else math.copysign(math.inf, a)


@dataclasses.dataclass(frozen=True)
class DistributedProgressiveBatch(GradientEstimator):
    """:class:`sqnopt.gradients.ProgressiveBatch` for a :class:`DistributedObjective` (same
    estimate, same test, the same batch sizes up to rounding): a batch larger than
    ``local_batch`` -- in the end the whole data set -- is evaluated on the workers, its
    variance test taking a second round trip with the batch gradient; smaller batches are
    gathered to the client."""

    theta: float = 0.9
    nu: float | None = 0.5
    name = "progressive_distributed"
    requires = frozenset({LINEAR_SCORES})
    partial_sums = "variance_test"

    def init(self, problem: Problem) -> _DistributedProgressiveKernel:
        return _DistributedProgressiveKernel(problem.n_params, float(self.theta),
                                             None if self.nu is None else float(self.nu))


# ---- curvature batches gathered to the client ------------------------------------------------

class _GatheredKernel:
    """A compiled curvature kernel that draws its own batches, fed with the batch's rows
    brought to the client (bound models keep per-sample factors of their batch)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.needs_secant_pair = bool(inner.needs_secant_pair)
        self.needs_curvature_batch = bool(inner.needs_curvature_batch)

    @property
    def extra_samples(self) -> int:
        return int(getattr(self.inner, "extra_samples", 0) or 0)

    @extra_samples.setter
    def extra_samples(self, value: int) -> None:
        if hasattr(self.inner, "extra_samples"):
            self.inner.extra_samples = value

    def direction(self, grad: FloatArray, out: FloatArray) -> None:
        self.inner.direction(grad, out)

    def update_pair(self, v: FloatArray, r: FloatArray) -> int:
        return int(self.inner.update_pair(v, r))

    def observe_batch(self, objective: Any, w: FloatArray, batch: IndexArray) -> int:
        if not isinstance(objective, DistributedObjectiveKernel):
            return int(self.inner.observe_batch(objective, w, batch))
        k = objective.local_kernel(np.asarray(batch, dtype=np.intp))
        return int(self.inner.observe_batch(k, w, np.arange(len(batch), dtype=np.intp)))

    def error_message(self) -> str:
        return str(self.inner.error_message())


class GatheredCurvature(CurvatureModel):
    """``curvature`` (a model with ``needs_curvature_batch``, such as SQB's
    :class:`~sqnopt.curvature.QuadraticBound`) for a :class:`DistributedObjective`: each
    curvature batch's rows come to the client, where the compiled model builds its curvature
    from them, as it would on one machine."""

    name = "gathered"

    def __init__(self, curvature: CurvatureModel) -> None:
        self.base = curvature
        for attr in ("needs_secant_pair", "needs_curvature_batch", "direction_is_gradient",
                     "direction_scale", "majorizes", "requires"):
            setattr(self, attr, getattr(curvature, attr))

    def params(self) -> dict[str, Any]:
        return {"curvature": self.base}

    def describe(self) -> str:
        return self.base.describe()

    def memory_bytes(self, problem: Problem) -> int:
        return self.base.memory_bytes(problem)

    def init(self, problem: Problem) -> _GatheredKernel:
        return _GatheredKernel(self.base.init(problem))


#: The estimators' forms (:attr:`~sqnopt.interfaces.GradientEstimator.partial_sums`) whose runs
#: evaluate the whole data set whatever the batch schedule: SVRG's snapshots (full gradients)
#: and progressive batching's batches (grown by the test towards ``N``).
WHOLE_DATA_FORMS: frozenset[str] = frozenset({"snapshot", "variance_test"})


def runs_distributed(gradient: GradientEstimator, full_batch_phase: bool) -> bool:
    """Whether a composition is worth running on the workers: its estimate is made of sums over
    row blocks (:attr:`~sqnopt.interfaces.GradientEstimator.partial_sums`) and either its
    batches grow to the whole data set or its estimator evaluates the whole data set."""
    form = gradient.partial_sums
    return form is not None and (full_batch_phase or form in WHOLE_DATA_FORMS)


def distributed_gradient(gradient: GradientEstimator) -> GradientEstimator:
    """The counterpart of ``gradient`` for a :class:`DistributedObjective`, chosen by the form
    the estimator declares (``partial_sums``), with its parameters: the minibatch gradient
    itself, :class:`DistributedSVRG` (``period``) or :class:`DistributedProgressiveBatch`
    (``theta``, ``nu``)."""
    form = gradient.partial_sums
    if form == "minibatch":
        return gradient
    if form == "snapshot":
        return DistributedSVRG(period=getattr(gradient, "period", None))
    if form == "variance_test":
        nu = getattr(gradient, "nu", None)
        return DistributedProgressiveBatch(theta=float(getattr(gradient, "theta")),
                                           nu=None if nu is None else float(nu))
    raise ValueError(f"gradient {gradient.describe()} does not declare how its estimate is made "
                     "of sums over row blocks (partial_sums): it keeps per-sample state, as "
                     "SAGA's table updated by every step -- a sequential method. Use "
                     "gradient='svrg' or 'progressive' (their large batches run on the "
                     "workers) or stream the chunks with partial_fit")


def _uses_own_batches(curvature: CurvatureModel) -> bool:
    return bool(curvature.needs_curvature_batch)


def distribute(solver: Any, objective: DistributedObjective) -> Any:
    """A copy of ``solver`` whose objective is ``objective`` and whose components that need a
    compiled objective kernel (SVRG, curvature models with their own batches) are replaced by
    their counterparts here; every other setting is kept."""
    s = copy.copy(solver)
    s.objective = objective
    s.path = "python"        # the driver's Python loop: the objective kernel is not compiled
    s.gradient = distributed_gradient(solver.gradient)
    if _uses_own_batches(solver.curvature) and not isinstance(solver.curvature,
                                                               GatheredCurvature):
        s.curvature = GatheredCurvature(solver.curvature)
    if solver.sampling == "weighted":
        raise ValueError("sampling='weighted' draws samples by their weights on the client, "
                         "which does not hold them; use weighted losses (the default "
                         "sampling) with sqnopt.dask")
    return s


def regression_refused(loss: str, what: str) -> str:
    """The error for a regression loss on a Dask cluster: the distributed data summarise
    their labels as classes (the counts and weights per class of every chunk), which
    real-valued targets are not."""
    return (f"{what}; the loss {loss} fits real-valued targets, which sqnopt.dask does not "
            "fit (its data are summarised by class). Fit sqnopt.SQNRegressor on the data in "
            "memory, or on a stream of them larger than memory: SQNRegressor(loss=...).fit("
            "stream_svmlight(path, label_kind='regression'))")


def solve(solver: Any, X: Any, y: Any, sample_weight: Any = None, *,
          w0: ArrayLike | None = None, local_batch: int = LOCAL_BATCH,
          labels: Literal["binary", "multiclass"] | None = None, client: Any = None,
          data: ChunkedData | None = None, **run_limits: Any) -> Any:
    """``solver.fit(X, y, sample_weight)`` on a Dask cluster: ``X`` a dask array (dense or
    ``scipy.sparse`` chunks) or DataFrame, ``y`` / ``sample_weight`` one value per row.

    The solver's components run unchanged on the client; its objective is evaluated on the
    workers (:class:`DistributedObjective`). With the same ``random_state`` the solve draws the
    same batches as ``solver.fit`` on the concatenated rows, and its iterates agree up to the
    rounding of adding the chunks' sums in chunk order. Returns the
    :class:`~sqnopt.SolveResult`; ``run_limits`` override the solver's budgets for this run.
    """
    if solver.objective.label_kind == "regression":
        raise ValueError(regression_refused(solver.objective.name,
                                            "sqnopt.dask.solve fits classes"))
    own = data is None
    chunked = data if data is not None else ChunkedData.from_dask(
        X, y, sample_weight, constant_column=solver.fit_intercept == "regularized",
        client=client)
    try:
        dobj = DistributedObjective(solver.objective, chunked, labels=labels,
                                    local_batch=local_batch)
        s = distribute(solver, dobj)
        Xp, yp, classes = dobj.placeholder()
        state = s.init_state(Xp, yp, classes=classes, w0=w0)
        return s.run(state, **run_limits)
    finally:
        if own:
            chunked.release()

