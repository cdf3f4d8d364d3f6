"""Composite objectives ``F(w) = f(w) + P(w)``: the solve and its result."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sqnopt.curvature._lbfgs import LBFGSKernel
from sqnopt.interfaces import QUADRATIC, SMOOTH, Objective, Penalty, Problem
from sqnopt.objectives._base import ObjectiveKernel
from sqnopt.penalties._base import PenaltyKernel
from sqnopt.penalties._components import PenaltySpec, resolve_penalty
from sqnopt.solver._blas import one_blas_thread

if TYPE_CHECKING:
    from sqnopt.composite._glmnet import QuadraticModel

FloatArray = NDArray[np.float64]

__all__ = ["CompositeResult", "composite_problem", "gram_newglmnet", "newglmnet", "owlqn",
           "solve_composite", "sweep_seed"]

#: The stop reasons of the compiled loops, by status code.
STATUS = ("max_iter", "gtol", "ftol", "precision", "nonfinite")
CompositeStatus = Literal["max_iter", "gtol", "ftol", "precision", "nonfinite"]


@dataclass(frozen=True)
class CompositeResult:
    """The outcome of a composite solve.

    ``w`` is the flat parameter vector (``n_blocks`` blocks of ``n_features`` weights then the
    intercept when fitted); ``coef`` and ``intercept`` its parts. ``fun`` is ``F(w)``,
    ``objective`` the value after each iteration (the start first), ``pg_max`` the largest
    entry of the pseudo-gradient at ``w`` (0 exactly at a minimiser), ``nnz`` the nonzero
    weights of ``coef`` (exact zeros: the L1 term's sparsity). ``n_evaluations`` counts the
    value-and-gradient passes (OWL-QN) or the coordinate sweeps, the exact models' search
    steps and the face CG's products (newGLMNET); ``method`` names the method that ran."""

    w: FloatArray
    coef: FloatArray
    intercept: FloatArray
    fun: float
    n_iter: int
    n_evaluations: int
    status: CompositeStatus
    pg_max: float
    objective: FloatArray
    wall_time: float
    method: str

    @property
    def converged(self) -> bool:
        """Stopped by a tolerance (``gtol``, ``ftol``) or at working precision."""
        return self.status in ("gtol", "ftol", "precision")

    @property
    def nnz(self) -> int:
        return int(np.count_nonzero(self.coef))


def with_lam(objective: Objective, lam: float) -> Objective:
    """``objective`` with its L2 weight ``lam`` replaced (a dataclass's ``replace``)."""
    if float(getattr(objective, "lam", 0.0)) == lam:
        return objective
    if not hasattr(objective, "__dataclass_fields__"):
        raise TypeError(f"{objective.describe()} is not a dataclass with a lam field: the "
                        "composite solvers set the objective's lam to the penalty's L2 part")
    replace: Any = dataclasses.replace
    out: Objective = replace(objective, lam=lam)
    return out


def choose_composite_method(kernel: ObjectiveKernel) -> Literal["owlqn", "newglmnet"]:
    """``"newglmnet"`` for a loss of one linear score with second derivatives (binary margin
    losses, regression losses: its model is the exact Hessian, formed from one weight per
    sample), else ``"owlqn"`` (softmax and other multi-score losses)."""
    if (kernel.n_blocks == 1 and kernel.n_scores == 1 and kernel.score_losses
            and kernel.score_hessian_factor):
        return "newglmnet"
    return "owlqn"


def composite_problem(objective: Objective, penalty: Penalty, data: Any
                      ) -> tuple[Objective, ObjectiveKernel, PenaltyKernel, Problem]:
    """The smooth objective (its ``lam`` plus the penalty's L2 part), its compiled kernel on the
    prepared ``data``, the penalty's kernel and the :class:`Problem` they share."""
    if SMOOTH not in objective.capabilities:
        raise ValueError(f"{objective.describe()} is not smooth: the composite solvers need "
                         "the gradient of a differentiable loss (use logloss, squared_hinge, "
                         "or a regression loss)")
    lam = float(getattr(objective, "lam", 0.0)) + penalty.l2_strength
    smooth = with_lam(objective, lam)
    kernel = smooth.init(data)
    if not isinstance(kernel, ObjectiveKernel):
        raise TypeError(f"{objective.describe()} has no compiled kernel: the composite solvers "
                        "run compiled objectives only")
    n_blocks, dim = smooth.param_layout(data)
    problem = Problem(n_samples=data.n_samples, n_features=data.n_features, dim=dim,
                      n_blocks=n_blocks, n_params=n_blocks * dim, lam=lam,
                      fit_intercept=data.fit_intercept, capabilities=smooth.capabilities,
                      curvature_bound=smooth.curvature_bound,
                      start_curvature=smooth.start_curvature)
    pen = penalty.init(problem)
    if not isinstance(pen, PenaltyKernel):
        raise TypeError(f"{penalty.describe()} has no compiled kernel (a PenaltyKernel): the "
                        "composite solvers run compiled penalties only")
    return smooth, kernel, pen, problem


def owlqn(objective: ObjectiveKernel, penalty: PenaltyKernel, w0: ArrayLike | None = None, *,
          memory: int = 10, tol: float = 1e-6, ftol: float = 0.0, max_iter: int = 1000,
          max_search: int = 40, c1: float = 1e-4, record_iterates: int = 0
          ) -> tuple[FloatArray, int, str, float, int, float, FloatArray, FloatArray | None]:
    """OWL-QN on bound kernels (see :mod:`sqnopt.composite._owlqn` for the algorithm).

    Returns ``(w, n_iter, status, F, evaluations, max |pg|, objective trace, iterates)``;
    ``iterates`` holds the first ``record_iterates`` iterates (``None`` when 0)."""
    from sqnopt.composite._owlqn import owlqn_run

    n = objective.n_params
    w = np.zeros(n) if w0 is None else np.array(w0, dtype=np.float64).ravel()
    if w.shape[0] != n:
        raise ValueError(f"w0 has {w.shape[0]} entries, expected {n}")
    if not (isinstance(memory, int) and memory >= 1):
        raise ValueError(f"memory must be an int >= 1, got {memory!r}")
    trace = np.full(max_iter + 1, np.nan)
    iterates = np.zeros((record_iterates, n)) if record_iterates > 0 else None
    lbfgs = LBFGSKernel(n, memory)
    k, code, f, evals, gmax = owlqn_run(objective, penalty, lbfgs, w, int(max_iter), float(tol),
                                        float(ftol), int(max_search), float(c1), trace, iterates)
    return (w, k, STATUS[code], f, evals, gmax, trace[: k + 1].copy(),
            None if iterates is None else iterates[: min(k + 1, record_iterates)].copy())


Columns = tuple[NDArray[np.intp], NDArray[np.intp], FloatArray, bool]


def _columns(X: Any, n_features: int) -> Columns:
    """``X`` by columns, newGLMNET's layout: ``(indptr, indices, values, dense)``. Sparse
    ``X``: CSC with ``intp`` indices and float64 values. Dense ``X``: every entry, column
    after column (Fortran order: ``X`` itself when it is already so stored in float64, else
    one copy), ``indptr[j] = j N`` and no indices -- a sparse copy of dense data would store
    an index beside every value and cost a conversion several times the solve's passes."""
    import scipy.sparse as sp

    if sp.issparse(X):
        Xc = sp.csc_matrix(X, dtype=np.float64)
        if Xc.shape[1] != n_features:
            raise ValueError(f"X has {Xc.shape[1]} columns, the objective {n_features} "
                             "features")
        return (np.ascontiguousarray(Xc.indptr, dtype=np.intp),
                np.ascontiguousarray(Xc.indices, dtype=np.intp),
                np.ascontiguousarray(Xc.data, dtype=np.float64), False)
    Xd = np.asfortranarray(X, dtype=np.float64)
    if Xd.ndim != 2 or Xd.shape[1] != n_features:
        raise ValueError(f"X has shape {Xd.shape}, the objective {n_features} features")
    N = Xd.shape[0]
    return (np.arange(n_features + 1, dtype=np.intp) * N, np.zeros(0, dtype=np.intp),
            Xd.ravel(order="F"), True)


def _pair_work(X: Any, intercept: bool) -> float:
    """``sum_i m_i (m_i + 1) / 2`` over the rows of ``X``, ``m_i`` a row's stored entries
    (with the intercept's one): the multiply-adds of forming ``X'DX`` row by row."""
    import scipy.sparse as sp

    if sp.issparse(X):
        # a CSC matrix's indices are its rows: counted in place, no COO copy
        m = (np.diff(X.indptr) if X.format == "csr" else
             np.bincount(X.indices if X.format == "csc" else X.tocoo().row,
                         minlength=X.shape[0])).astype(np.float64)
    else:
        m = np.full(X.shape[0], float(X.shape[1]))
    m = m + (1.0 if intercept else 0.0)
    return float(np.sum(m * (m + 1.0)) / 2.0)


#: the most parameters whose model ``newglmnet(model="auto")`` forms and solves exactly (its
#: Hessian: ``n^2`` doubles, 8 MB at this size)
DENSE_MODEL_MAX = 1024

ModelSolve = Literal["auto", "cd", "dense", "subset"]


#: the exact model's factorisation may cost up to this many sweeps over the stored values
#: (``k^3 / 3`` multiply-adds for ``k`` coordinates against a sweep's one per stored value):
#: beyond, its models cost more than the outer iterations they save
MODEL_PASSES = 128

#: forming the exact model from the rows may cost up to this many sweeps: it is formed anew
#: at every outer iteration, and on dense rows of many features (``N n^2 / 2`` multiply-adds
#: against a sweep's ``N n``) it would cost more than the few sweeps coordinate descent needs
#: on well-conditioned data; one-hot and other sparse rows stay far below it
FORM_PASSES = 16

#: the pair loop's multiply-adds that one of BLAS's costs: on dense rows the whole model's
#: matrix is formed by ``dsyrk`` (the Newton kernel's Level-3 form of the loop), which runs
#: at several times the loop's speed -- dense rows of up to a few hundred features afford it
BLAS_PAIRS = 8


def _affordable(nnz: int, n_rows: int | None = None, n_params: int | None = None) -> int:
    """The most coordinates whose exact model costs at most :data:`MODEL_PASSES` sweeps to
    factorise (``k^3 / 3``) and, given the rows and parameters, :data:`FORM_PASSES` to form
    from the rows, whose entries in a set of ``k`` coordinates number about ``k rho`` each
    (``rho`` the data's density): ``N (k rho)^2 / 2`` multiply-adds -- on dense rows the
    formation, not the factorisation, is what limits the set."""
    k = (3.0 * MODEL_PASSES * max(nnz, 1)) ** (1.0 / 3.0)
    if n_rows and n_params:
        density = max(nnz, 1) / (n_rows * n_params)
        k = min(k, (2.0 * FORM_PASSES * max(nnz, 1) / n_rows) ** 0.5 / min(density, 1.0))
    return int(k)


def dense_model(n_params: int, model: ModelSolve = "auto", nnz: int | None = None,
                pairs: float | None = None, blas: bool = False) -> bool:
    """Whether newGLMNET solves its quadratic model exactly on the explicit Hessian of all
    the parameters (``"dense"``) rather than by coordinate descent on the data (``"cd"``, the
    paper's) or exactly on its working set when that is small (``"subset"``): ``"auto"``
    takes the whole dense model up to :data:`DENSE_MODEL_MAX` parameters and the working set's
    above, each while its factorisation costs at most :data:`MODEL_PASSES` sweeps over the
    ``nnz`` stored values (``None``: not limited), and while forming ``H``, ``pairs``
    multiply-adds (one per pair of entries of a row, :func:`_pair_work`), costs at most
    :data:`FORM_PASSES` sweeps (every outer iteration forms it anew: on dense rows of many
    features it costs ``n / 2`` sweeps, where coordinate descent on well-conditioned data
    needs a few; ``blas``: dense rows, formed by BLAS, each pair costing
    ``1 / BLAS_PAIRS``). There the feature-sign search costs a few ``n^2`` products, while
    coordinate descent needs many sweeps over the data when the columns are nearly collinear
    (one-hot groups), each model then solved loosely -- many more outer iterations."""
    if model not in ("auto", "cd", "dense", "subset"):
        raise ValueError(f"unknown model solve {model!r}; known: 'auto', 'cd', 'dense', "
                         "'subset'")
    work = None if pairs is None else pairs / (BLAS_PAIRS if blas else 1.0)
    affordable = nnz is None or (n_params <= _affordable(nnz) and
                                 (work is None or work <= FORM_PASSES * max(nnz, 1)))
    return model == "dense" or (model == "auto" and n_params <= DENSE_MODEL_MAX and affordable)


def subset_model(n_params: int, model: ModelSolve = "auto", nnz: int | None = None,
                 pairs: float | None = None, n_rows: int | None = None,
                 blas: bool = False) -> int:
    """The largest working set newGLMNET solves exactly (0: none) when it does not form the
    whole Hessian: the nonzero weights and the zeros that violate optimality, up to
    :data:`DENSE_MODEL_MAX` of them and as many as :data:`MODEL_PASSES` affords -- an L1
    solution is sparse, so on wide data its model lives on a few columns."""
    if dense_model(n_params, model, nnz, pairs, blas) or model == "cd":
        return 0
    return DENSE_MODEL_MAX if nnz is None else \
        min(DENSE_MODEL_MAX, _affordable(nnz, n_rows, n_params))


def sweep_seed(random_state: Any) -> int:
    """The starting state of newGLMNET's sweep-order generator (a nonzero 64-bit integer) from
    a ``random_state`` (scikit-learn's forms: an int, a ``SeedSequence``, a ``BitGenerator``,
    a ``Generator`` or a ``RandomState``, whose draw advances it); ``None`` gives 0, the
    compiled loop's fixed default -- the solve stays deterministic either way."""
    from sqnopt.solver._build import make_bit_generator

    if random_state is None:
        return 0
    state = int(np.random.Generator(make_bit_generator(random_state)).integers(
        1, 2**64 - 1, dtype=np.uint64, endpoint=True))
    return state


def newglmnet(objective: ObjectiveKernel, penalty: PenaltyKernel, X: Any,
              w0: ArrayLike | None = None, *, tol: float = 1e-6, max_iter: int = 1000,
              max_inner: int = 1000, eta: float = 1.0, shrink: bool = True,
              model: ModelSolve = "auto", dense_after: int | None = None,
              record_iterates: int = 0, columns: Columns | None = None, seed: int = 0,
              pair_floor: float | None = None
              ) -> tuple[FloatArray, int, str, float, float, int, FloatArray, FloatArray | None]:
    """newGLMNET on a bound one-score objective kernel and ``X`` (the rows the kernel was
    built on, any layout: a CSC copy is made); see :mod:`sqnopt.composite._glmnet`.
    ``model`` chooses how each outer iteration's quadratic model is minimised (see
    :func:`dense_model`), exactly from the first outer iteration after one whose coordinate
    descent took more than ``dense_after`` sweeps (``None``: 0 from a nonzero ``w0`` -- a
    warm start, near its solution, where the exact model pays at once -- else 1).
    ``columns``: ``X``'s CSC arrays from :func:`_columns`, when the caller has them; ``seed``:
    the sweep order's generator's state (:func:`sweep_seed`; 0 the fixed default);
    ``pair_floor``: the exact models' rows of negligible curvature (``None``: the compiled
    loop's ``PAIR_FLOOR``; 0: every row's pairs formed).

    Returns ``(w, n_iter, status, F, max |pg|, sweeps, model steps and CG products, objective
    trace, iterates)``."""
    from sqnopt.composite._glmnet import glmnet_run
    from sqnopt.curvature._newton import NewtonKernel

    n, nf = objective.n_params, penalty.n_reg
    if objective.n_blocks != 1 or objective.n_scores != 1 or not objective.score_losses \
            or not objective.score_hessian_factor:
        raise ValueError("newglmnet needs a loss of one linear score with second derivatives "
                         "(binary margin losses, regression losses); use method='owlqn'")
    indptr, indices, values, dense_columns = _columns(X, nf) if columns is None else columns
    w = np.zeros(n) if w0 is None else np.array(w0, dtype=np.float64).ravel()
    if dense_after is None:
        dense_after = 0 if np.any(w != 0.0) else 1
    if w.shape[0] != n:
        raise ValueError(f"w0 has {w.shape[0]} entries, expected {n}")
    N = objective.data.n_samples
    if np.any(w[:nf] != 0.0):       # the scores X w + b (X as given: CSR or dense rows)
        scores = np.ascontiguousarray(np.asarray(X @ w[:nf]).ravel(), dtype=np.float64)
    else:
        scores = np.zeros(N)
    if scores.shape[0] != N:
        raise ValueError(f"X has {scores.shape[0]} rows, the objective {N}")
    if n == nf + 1:
        scores += w[nf]
    trace = np.full(max_iter + 1, np.nan)
    iterates = np.zeros((record_iterates, n)) if record_iterates > 0 else None
    nnz = int(values.shape[0]) + (N if n == nf + 1 else 0)
    pairs = _pair_work(X, n == nf + 1)
    dense_columns = bool(dense_columns)
    dense = NewtonKernel(n, N, 1) if dense_model(n, model, nnz, pairs, dense_columns) else None
    k, code, f, gmax, sweeps = glmnet_run(objective, penalty, indptr, indices, values,
                                          np.arange(N, dtype=np.intp), w, scores, int(max_iter),
                                          float(tol), int(max_inner), float(eta), 30,
                                          bool(shrink), trace, iterates, dense,
                                          int(dense_after),
                                          subset_model(n, model, nnz, pairs, N, dense_columns),
                                          dense_columns=dense_columns, seed=int(seed),
                                          pair_floor=-1.0 if pair_floor is None
                                          else float(pair_floor))
    return (w, k, STATUS[code], f, gmax, sweeps, trace[: k + 1].copy(),
            None if iterates is None else iterates[: min(k + 1, record_iterates)].copy())


@dataclass(frozen=True)
class Gram:
    """A quadratic objective's data term formed once: ``f(w) = (1/2) w'Hw - c'w + yy / 2 +
    (lam/2) ||w_reg||^2`` with ``H = X~'CX~ / N``, ``c = X~'Cy / N``, ``yy = y'Cy / N``
    (``X~``: ``X`` with a column of ones for an intercept, ``C``: the sample weights normalised
    to mean 1), for the data it was formed on (``y``, ``weights``, ``intercept``: a cache
    entry's identity, with ``X`` itself), and the exact model's scratch."""

    H: FloatArray
    c: FloatArray
    yy: float
    y: FloatArray
    weights: FloatArray
    intercept: bool
    model: QuadraticModel
    #: the matrix, vector and ``yy`` are finite (checked once, when formed: the data layer
    #: bounds the features' squares, not the targets'; a solve on a matrix that is not runs
    #: on the rows instead)
    finite: bool


def gram_applies(smooth: Objective, data: Any) -> bool:
    """Whether a regularization path forms the Gram matrix of a solve (:func:`gram_newglmnet`):
    a quadratic loss (``f``'s Hessian the same everywhere) on dense rows, at least as many
    rows as parameters and at most :data:`DENSE_MODEL_MAX` parameters (the matrix: ``n^2``
    doubles). Its formation, ``N n^2 / 2`` multiply-adds by BLAS, costs about as much as the
    passes of a few cold fits and is then shared by every ``alpha`` of the path, whose solves
    make no pass over the rows (``lasso_path``'s ``precompute`` rule: rows outnumber the
    features)."""
    n = data.n_features + int(data.fit_intercept)
    return (QUADRATIC in smooth.capabilities and not data.is_sparse
            and n <= DENSE_MODEL_MAX and data.n_samples >= n)


def form_gram(data: Any) -> Gram:
    """The :class:`Gram` of prepared dense ``data``: one BLAS product of the rows (scaled by
    the square roots of the weights when they are not all equal), the intercept's row and
    column from the weighted column sums."""
    from sqnopt.composite._glmnet import QuadraticModel

    X = np.asarray(data.X, dtype=np.float64)
    N, nf = X.shape
    y = np.asarray(data.y, dtype=np.float64)
    sw = np.asarray(data.sample_weight, dtype=np.float64)
    v = sw / N
    n = nf + int(data.fit_intercept)
    H = np.empty((n, n))
    c = np.empty(n)
    if N and np.all(sw == sw[0]):
        H[:nf, :nf] = X.T @ X
        H[:nf, :nf] *= v[0]
    else:
        Xs = X * np.sqrt(v)[:, None]
        H[:nf, :nf] = Xs.T @ Xs
    c[:nf] = X.T @ (v * y)
    if data.fit_intercept:
        H[:nf, nf] = H[nf, :nf] = X.T @ v
        H[nf, nf] = float(np.sum(v))
        c[nf] = float(v @ y)
    yy = float(v @ (y * y))
    return Gram(H=H, c=c, yy=yy, y=y, weights=sw, intercept=bool(data.fit_intercept),
                model=QuadraticModel(n),
                finite=bool(np.isfinite(H).all() and np.isfinite(c).all()
                            and math.isfinite(yy)))


def _cached_gram(cache: dict[str, Any], data: Any) -> Gram:
    """The cache's :class:`Gram` when it was formed on this data (the caller has checked that
    the cache holds this ``X``), else a new one, kept there."""
    gram = cache.get("gram")
    if not (isinstance(gram, Gram) and gram.intercept == bool(data.fit_intercept)
            and np.array_equal(gram.y, data.y) and np.array_equal(gram.weights,
                                                                  data.sample_weight)):
        gram = cache["gram"] = form_gram(data)
    return gram


def _product(H: FloatArray, w: FloatArray) -> FloatArray:
    """``H w`` for a symmetric ``H``: from the rows of ``w``'s nonzeros when they are few (an
    L1 solution's support), else the whole product."""
    nz = np.flatnonzero(w)
    if 4 * nz.shape[0] < w.shape[0]:
        out: FloatArray = w[nz] @ H[nz]
        return out
    full: FloatArray = H @ w
    return full


def gram_newglmnet(gram: Gram, lam: float, penalty: PenaltyKernel,
                   w0: ArrayLike | None = None, *, tol: float = 1e-6, max_iter: int = 1000
                   ) -> tuple[FloatArray, int, str, float, float, int, FloatArray] | None:
    r"""newGLMNET's outer loop on a quadratic ``f`` whose data term is formed (:class:`Gram`):
    at ``w``, the gradient ``g = Hw - c + lam w_reg`` and ``F(w)`` from the matrix (no pass
    over the rows; the L1 term and the pseudo-gradient from the ``penalty`` kernel), then the
    exact model -- ``f`` itself, damped by ``nu + rho`` on its
    diagonal (:class:`~sqnopt.composite._glmnet.QuadraticModel`) -- solved to a largest
    violation of ``MODEL_TOLERANCE`` times the pseudo-gradient's, its minimiser the next
    iterate: the damped model majorises ``F``, so no line search is needed, and the damping's
    bias is removed by the next outer iterations (an iterative refinement: one or two on
    well-conditioned data). Stops as :func:`newglmnet` does: the largest pseudo-gradient entry
    at most ``tol`` (``gtol``), ``max_iter`` outer iterations, or ``F`` no longer decreasing
    (``precision``).

    Returns ``(w, n_iter, status, F, max |pg|, search steps, objective trace)``, or ``None``
    when the feature-sign search stops short (a dependent column: the caller solves on the
    rows instead)."""
    from sqnopt.composite._glmnet import MODEL_TOLERANCE

    H, c = gram.H, gram.c
    n = H.shape[0]
    nf, l1 = int(penalty.n_reg), float(penalty.l1)
    w = np.zeros(n) if w0 is None else np.array(w0, dtype=np.float64).ravel()
    if w.shape[0] != n:
        raise ValueError(f"w0 has {w.shape[0]} entries, expected {n}")
    u = np.empty(n)
    pg = np.empty(n)
    trace: list[float] = []
    steps, k = 0, 0
    f_prev, w_prev = math.inf, w
    status = "max_iter"
    while True:
        Hw = _product(H, w)
        reg = w[:nf]
        f = (0.5 * float(w @ Hw) - float(c @ w) + 0.5 * gram.yy + 0.5 * lam * float(reg @ reg)
             + float(penalty.l1_value(w)))
        if not math.isfinite(f):
            status = "nonfinite"
            gmax = math.inf
            break
        # the damped model majorises F: no decrease is rounding at the minimiser (a rise:
        # back to the last iterate)
        stalled = k > 0 and not f < f_prev
        if stalled and f > f_prev:
            w, f = w_prev, f_prev
            Hw = _product(H, w)
        g = Hw - c
        g[:nf] += lam * w[:nf]
        penalty.pseudo_gradient(w, g, pg)
        gmax = float(np.max(np.abs(pg)))
        if stalled:
            status = "gtol" if gmax <= tol else "precision"
            break
        trace.append(f)
        if gmax <= tol:
            status = "gtol"
            break
        if k >= max_iter:
            status = "max_iter"
            break
        code, st = gram.model.solve(H, g, w, u, nf, l1, lam, MODEL_TOLERANCE * gmax)
        steps += st
        if code != 0:
            return None
        f_prev, w_prev = f, w
        w = u.copy()
        k += 1
    return w, k, status, f, gmax, steps, np.asarray(trace)


@one_blas_thread
def solve_composite(objective: Objective | str | tuple[str, Mapping[str, Any]],
                    penalty: PenaltySpec, X: Any, y: ArrayLike, *,
                    method: Literal["auto", "owlqn", "newglmnet"] = "auto",
                    fit_intercept: bool = True,
                    sample_weight: ArrayLike | None = None, w0: ArrayLike | None = None,
                    tol: float = 1e-6, ftol: float = 0.0, max_iter: int = 1000,
                    memory: int = 10, column_cache: dict[str, Any] | None = None,
                    gram: bool = False, n_jobs: int | None = None,
                    random_state: Any = None) -> CompositeResult:
    r"""Minimise ``F(w) = f(w) + P(w)``: the smooth ``objective`` plus the ``penalty``
    (``"l1"``, ``"l2"``, ``"elasticnet"``, ``(name, params)`` or a
    :class:`~sqnopt.interfaces.Penalty`), on dense or CSR data, full batch and deterministic.
    An objective instance keeps its own ``lam`` (an L2 term added to the penalty's); a name
    or ``(name, params)`` is built with ``lam=0`` unless ``params`` give one.

    ``method="owlqn"``: orthant-wise L-BFGS (Andrew & Gao, ICML 2007), for every smooth
    objective; ``"newglmnet"``: proximal Newton with coordinate descent on the exact quadratic
    model (Yuan, Ho & Lin, JMLR 2012), for losses of one linear score (binary margin losses,
    regression losses); ``"auto"``: newGLMNET where it applies, else OWL-QN (see
    :func:`choose_composite_method`). Stops once the largest entry of the pseudo-gradient is at
    most ``tol`` (the composite analogue of scikit-learn's ``lbfgs`` test on the gradient), at
    working precision or after ``max_iter`` iterations (OWL-QN also on a relative decrease
    below ``ftol``). Zeros of the result are exact zeros.

    ``column_cache``: a dict the caller keeps across solves on the very same ``X`` object,
    unchanged between them (the fits of a regularization path): newGLMNET's column copy of
    ``X`` is made once and kept there, with ``X`` itself (a solve on another object makes a
    new copy), and ``X`` is checked once. ``gram`` (with a cache): for a quadratic loss on
    dense rows (:func:`gram_applies`), the solves share the matrix ``X'CX / N`` formed once
    (:func:`gram_newglmnet`), with no pass over the rows per solve -- worth it over the many
    solves of a path, not for one.

    ``n_jobs``: the threads of the passes over the data (scikit-learn's meaning, see
    :mod:`sqnopt._jobs`): the objective's full-batch passes (OWL-QN, newGLMNET's line search
    and exact models) split their rows, newGLMNET's gradient its columns; each output is
    summed in the same order on every thread count, so the result does not depend on it.

    ``random_state``: seeds newGLMNET's sweep order (coordinate descent visits the model's
    coordinates in a random order each sweep, as LIBLINEAR's): the same seed gives the same
    result; ``None`` a fixed default order. OWL-QN draws nothing.
    """
    from sqnopt._jobs import effective_n_jobs
    from sqnopt.data import prepare
    from sqnopt.solver._build import resolve_component

    if method not in ("auto", "owlqn", "newglmnet"):
        raise ValueError(f"unknown composite method {method!r}; known: 'auto', 'owlqn', "
                         "'newglmnet'")
    if isinstance(objective, str):
        objective = (objective, {})
    if isinstance(objective, tuple) and len(objective) == 2:     # a name: no L2 unless given
        objective = (objective[0], {"lam": 0.0, **dict(objective[1])})
    obj: Objective = resolve_component("objective", objective, Objective)
    pen = resolve_penalty(penalty)
    if not (isinstance(tol, (int, float)) and tol >= 0 and math.isfinite(tol)):
        raise ValueError(f"tol must be a finite number >= 0, got {tol!r}")
    if not (isinstance(max_iter, int) and max_iter >= 0):
        raise ValueError(f"max_iter must be an int >= 0, got {max_iter!r}")
    threads = effective_n_jobs(n_jobs)
    checked = None
    if column_cache is not None:
        if column_cache.get("X") is not X:
            column_cache.clear()
            column_cache["X"] = X
        checked = column_cache.get("checked")   # X as check_matrix returned it, once checked
    data = prepare(X if checked is None else checked, y, sample_weight=sample_weight,
                   fit_intercept=bool(fit_intercept), label_kind=obj.label_kind,
                   matrix_checked=checked is not None)
    if column_cache is not None:
        column_cache["checked"] = data.X
    data.rows.set_threads(threads)
    smooth, kernel, pen_k, problem = composite_problem(obj, pen, data)
    chosen = choose_composite_method(kernel) if method == "auto" else method
    start = time.perf_counter()
    if chosen == "newglmnet":
        columns = None
        out = None
        if column_cache is not None:
            if gram and gram_applies(smooth, data):
                # a path's solves of a quadratic on dense rows: the Gram matrix formed once
                formed = _cached_gram(column_cache, data)
                if formed.finite:
                    out = gram_newglmnet(formed, float(kernel.lam), pen_k, w0, tol=tol,
                                         max_iter=max_iter)
            if out is None:
                if "columns" not in column_cache:
                    column_cache["columns"] = _columns(X, problem.n_features)
                columns = column_cache["columns"]
        if out is not None:
            w, k, status, f, gmax, evals, trace = out
        else:
            w, k, status, f, gmax, evals, trace, _ = newglmnet(
                kernel, pen_k, X, w0, tol=tol, max_iter=max_iter, columns=columns,
                seed=sweep_seed(random_state))
    else:
        w, k, status, f, evals, gmax, trace, _ = owlqn(kernel, pen_k, w0, memory=memory,
                                                       tol=tol, ftol=ftol, max_iter=max_iter)
    wall = time.perf_counter() - start
    blocks = w.reshape(problem.n_blocks, problem.dim)
    coef = blocks[:, : problem.n_features].copy()
    intercept = (blocks[:, problem.n_features].copy() if problem.fit_intercept
                 else np.zeros(problem.n_blocks))
    return CompositeResult(w=w, coef=coef, intercept=intercept, fun=f, n_iter=k,
                           n_evaluations=evals, status=status,  # type: ignore[arg-type]
                           pg_max=gmax, objective=trace, wall_time=wall, method=chosen)
