"""Curvature-model components."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Literal

from sqnopt.curvature._bfgs import BFGSKernel
from sqnopt.curvature._hessian_lbfgs import HessianLBFGSKernel
from sqnopt.curvature._identity import IdentityKernel
from sqnopt.curvature._lbfgs import LBFGSKernel
from sqnopt.curvature._newton import NewtonKernel
from sqnopt.curvature._newton_cg import NewtonCGKernel
from sqnopt.curvature._precond_lbfgs import BoundLBFGSKernel
from sqnopt.curvature._res_eig import MAX_DIM as EIG_MAX_DIM
from sqnopt.curvature._res_eig import RESEigKernel
from sqnopt.interfaces import (
    DENSE_HESSIAN,
    HESSIAN_VECTOR,
    SMOOTH,
    CurvatureModel,
    Problem,
)

_SAFEGUARDS = ("min_curvature", "on_bad_pair", "damping", "on_nonfinite")
# Newton's method refuses more parameters than this: its n x n Hessian (8 n^2 bytes: 800 MB at
# the bound) and the n^3 / 3 flops of each factorisation.
NEWTON_MAX_PARAMS = 10_000
# From this many parameters on, RegularizedBFGS(method="auto") with delta > 0 uses the
# eigendecomposition + Woodbury form instead of a Cholesky factorisation per iteration: the
# crossover measured in docs/curvature.md, "RES".
EIG_MIN_DIM = 250
#: L-BFGS memory of the progressive recipe: the default 10 of the component, raised up to
#: LBFGS_MAX_MEMORY while the two-loop recursion costs at most a quarter of a gradient pass
#: (:func:`lbfgs_memory`); measured in docs/report_full_batch.md ("Truncated Newton and the
#: L-BFGS memory at the defaults").
LBFGS_MIN_MEMORY = 10
LBFGS_MAX_MEMORY = 30
#: ``BoundLBFGS(rows="auto")``: the rows of the sample its matrix is formed from, per entry of
#: a parameter block (measured on Poisson regression: docs/report_race.md, "A sampled
#: Hessian preconditions Poisson's L-BFGS").
SAMPLED_BOUND_ROWS_PER_PARAM = 20
BadPairRule = Literal["skip", "damp"]
NonfiniteRule = Literal["reset", "error"]


def lbfgs_memory(X: Any) -> int:
    r"""The L-BFGS memory ``m`` of the progressive recipe: the largest in
    ``[LBFGS_MIN_MEMORY, LBFGS_MAX_MEMORY]`` whose two-loop recursion (``4 m n`` multiply-adds
    for ``n = K (p + 1)`` parameters) costs at most a quarter of a full gradient pass
    (``2 K nnz``: the scores and the gradient's scatter), i.e. ``m <= nnz / (8 (p + 1))``,
    whatever the number of classes ``K``. More pairs model more of the Hessian's spectrum, so
    the deterministic phase needs fewer iterations (Nocedal & Wright 2006, Sec. 7.2: ``m``
    between 3 and 20 is common, larger for ill-conditioned problems); where the data are dense
    relative to the parameters that costs next to nothing, while on hashed sparse data (a few
    entries per row among many columns) the recursion would cost more than the pass and the
    memory stays 10. ``nnz`` is the number of stored entries of a sparse matrix (or of data
    described by its shape and ``nnz``, as the Dask estimator's), else ``N p``."""
    n_rows, p = X.shape
    nnz = float(X.nnz) if hasattr(X, "nnz") else float(n_rows) * float(p)
    m = int(nnz // (8.0 * (p + 1)))
    return int(min(max(m, LBFGS_MIN_MEMORY), LBFGS_MAX_MEMORY))


@dataclass(frozen=True)
class Identity(CurvatureModel):
    """``H = I``: the direction is the stochastic gradient itself (SGD)."""

    name = "identity"
    direction_is_gradient = True

    def memory_bytes(self, problem: Problem) -> int:
        return 0

    def init(self, problem: Problem) -> IdentityKernel:
        return IdentityKernel(problem.n_params)


def _check_number(owner: str, name: str, value: object, *, low: float, strict: bool,
                  high: float | None = None) -> None:
    ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
          and math.isfinite(value) and (value > low if strict else value >= low)
          and (high is None or value < high))
    if not ok:
        bound = f"> {low}" if strict else f">= {low}"
        if high is not None:
            bound += f" and < {high}"
        raise ValueError(f"{owner}: {name} must be a finite number {bound}, got {value!r}")


def _check_init_scale(owner: str, value: object, delta: float) -> None:
    if value == "auto":
        return
    if not (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value > delta):
        raise ValueError(f"{owner}: init_scale must be 'auto' or a finite number > {delta} "
                         f"(B_0 = init_scale I must exceed delta I), got {value!r}")


@dataclass(frozen=True)
class _SecantModel(CurvatureModel):
    """Safeguard options shared by the BFGS family (keyword-only).

    Parameters
    ----------
    min_curvature
        ``eps >= 0``: a pair is *bad* when ``v'r <= eps ||v||^2`` (RES: ``v'r~`` with
        ``r~ = r - delta v``). The default 0 only catches pairs that break the update's
        requirement ``v'r > 0``, which never happens when the papers' assumptions hold (strongly
        convex sample functions: ``v'r >= m ||v||^2``), so it does not change their algorithms.
    on_bad_pair
        ``"skip"`` (default): leave the memory unchanged (counted in ``n_pairs_skipped``).
        ``"damp"``: Powell damping: if ``v'r < damping * v'Bv``, replace
        ``r <- theta r + (1 - theta) B v`` with ``theta`` chosen so that ``v'r = damping * v'Bv``
        (Nocedal & Wright 2006, Procedure 18.2; the kernel's ``n_damped`` counts these), then
        learn from the pair (counted as accepted). A pair with ``v = 0`` is always skipped.
    damping
        Powell's constant ``sigma`` in (0, 1); default 0.2.
    on_nonfinite
        ``"reset"`` (default): a pair with NaN/inf entries (or a numerical breakdown of the
        matrix) restarts the memory from its initial state (counted in ``n_resets``).
        ``"error"``: stop the solve with a :class:`~sqnopt.CurvatureError`.
    """

    min_curvature: float = field(default=0.0, kw_only=True)
    on_bad_pair: BadPairRule = field(default="skip", kw_only=True)
    damping: float = field(default=0.2, kw_only=True)
    on_nonfinite: NonfiniteRule = field(default="reset", kw_only=True)

    needs_secant_pair = True
    requires = frozenset({SMOOTH})
    direction_scale = "newton"

    def __post_init__(self) -> None:
        owner = type(self).__name__
        _check_number(owner, "min_curvature", self.min_curvature, low=0.0, strict=False)
        _check_number(owner, "damping", self.damping, low=0.0, strict=True, high=1.0)
        if self.on_bad_pair not in ("skip", "damp"):
            raise ValueError(f"{owner}: on_bad_pair must be 'skip' or 'damp', "
                             f"got {self.on_bad_pair!r}")
        if self.on_nonfinite not in ("reset", "error"):
            raise ValueError(f"{owner}: on_nonfinite must be 'reset' or 'error', "
                             f"got {self.on_nonfinite!r}")

    def params(self) -> dict[str, object]:
        """The model's own settings first, then the safeguard options."""
        p = super().params()
        own = {k: v for k, v in p.items() if k not in _SAFEGUARDS}
        return own | {k: p[k] for k in _SAFEGUARDS}

    def _safeguards(self) -> dict[str, object]:
        return {"min_curvature": float(self.min_curvature), "damp": self.on_bad_pair == "damp",
                "damping": float(self.damping),
                "reset_on_nonfinite": self.on_nonfinite == "reset"}


@dataclass(frozen=True)
class LBFGS(_SecantModel):
    r"""Online limited-memory BFGS (oLBFGS; Mokhtari & Ribeiro, JMLR 2015, Algorithms 1-2).

    ``d_t = H_t g`` by the two-loop recursion over the last ``memory`` secant pairs, with
    ``H_{t,0} = gamma_t I``, ``gamma_t = v'r / r'r`` of the newest pair (paper eq. 19) and
    ``gamma_0``  before the first one. ``O(memory * n)`` per iteration, no allocation.

    Parameters
    ----------
    memory
        ``tau``, the number of pairs kept (paper: 10).
    gamma0
        ``gamma_0`` (paper: 1).

    The safeguard options are described in the class docs of the BFGS family
    (``min_curvature``, ``on_bad_pair``, ``damping``, ``on_nonfinite``; keyword-only). With
    ``on_bad_pair="damp"`` the ``B v`` of Powell damping is the inverse of the two-loop matrix,
    formed by unrolling the direct update (Nocedal & Wright 2006, Sec. 7.2) in ``O(tau^2 n)``,
    only for damped pairs.
    """

    memory: int = 10
    gamma0: float = 1.0
    name = "lbfgs"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (isinstance(self.memory, int) and not isinstance(self.memory, bool)
                and self.memory >= 1):
            raise ValueError(f"LBFGS: memory must be an integer >= 1, got {self.memory!r}")
        _check_number("LBFGS", "gamma0", self.gamma0, low=0.0, strict=True)

    def memory_bytes(self, problem: Problem) -> int:
        return 8 * problem.n_params * (2 * self.memory + 1)

    def tuned(self, lam: float, X: Any, *, auto_schedule: bool) -> LBFGS:
        """Named without parameters and in its growing-batch recipe (the schedule left to the
        recipe too), the model keeps :func:`lbfgs_memory` pairs: more where its two-loop
        recursion is cheap next to a pass. Variants that draw curvature batches
        (:class:`HessianLBFGS`) or were given a memory keep theirs."""
        if auto_schedule and not self.needs_curvature_batch and self.memory == LBFGS.memory:
            return dataclasses.replace(self, memory=lbfgs_memory(X))
        return self

    def init(self, problem: Problem) -> LBFGSKernel:
        return LBFGSKernel(problem.n_params, self.memory, float(self.gamma0),
                           **self._safeguards())  # type: ignore[arg-type]


@dataclass(frozen=True)
class BoundLBFGS(LBFGS):
    r"""L-BFGS preconditioned by Böhning's bound: the two-loop recursion starts from
    :math:`H_{t,0} = \gamma_t M^{-1}` instead of :math:`\gamma_t I`.

    For a loss of linear scores with curvature at most ``c`` in the scores (logistic
    ``1/4``, Böhning & Lindsay 1988; softmax ``1/2``: :math:`\operatorname{diag}(p) - pp^\top
    \preceq \tfrac12 (I_K - 11^\top/K) \preceq \tfrac12 I_K`, Böhning 1992, "Multinomial
    logistic regression algorithm", Ann. Inst. Statist. Math. 44) the Hessian is bounded at
    every ``w`` by the fixed matrix

    .. math:: M = I_K \otimes M_1, \qquad
              M_1 = c\, X^\top S X / \textstyle\sum_i s_i + \lambda D,

    ``X`` the rows ``[x_i, 1]`` (intercept column when fitted), ``S`` the sample weights, ``D``
    the regulariser's diagonal. ``M_1`` is formed once when the solve starts (``N dim^2``
    multiply-adds by BLAS ``dsyrk``) and factored by Cholesky (``dim^3/3``); each direction
    applies :math:`M^{-1}` to the ``K`` blocks (``2 dim^2 K``). The scale
    :math:`\gamma_t = v^\top r / r^\top M^{-1} r` of the newest pair is Nocedal & Wright's
    (2006, eq. 7.20) in the metric of ``M`` (``gamma0`` before the first pair: the majoriser's
    step, which decreases ``F``). ``M`` removes what the features' correlations and uncentred
    scale do to the spectrum (dense pixels), the pairs learn the rest.

    Where it pays: few features (``dim^2`` memory, the bound's ``N dim^2`` cost next to the
    passes it saves); :func:`sqnopt.recipes.default_curvature` picks it by that cost.

    **A sample of the rows.** With ``rows = m`` (fewer than the ``N`` rows) ``M_1`` is formed
    from a systematic sample of ``m`` rows, every ``N/m``-th (the same rows on every start and
    restore), at ``m/N`` of the cost: an estimate of the matrix rather than a bound. For a loss
    without a curvature bound whose curvature at score 0 is the same for every target
    (:attr:`~sqnopt.interfaces.Objective.start_curvature`: Poisson's ``exp(0) = 1``), ``c`` is
    that curvature and ``M`` estimates the Hessian at ``w = 0``, where the solves start -- a
    sampled Hessian as in subsampled Newton methods (Byrd, Chin, Neveitt & Nocedal 2011, "On the
    use of stochastic Hessian information in optimization methods for machine learning", SIAM
    J. Optim. 21), here formed once and corrected by the pairs and ``gamma_t``. The default
    takes it so for such losses (``rows="auto"``: ``SAMPLED_BOUND_ROWS_PER_PARAM`` rows per
    entry of a parameter block).

    Parameters
    ----------
    memory, gamma0
        As for :class:`LBFGS`.
    bound
        ``c``, the loss's curvature bound; ``"auto"`` (default): the objective's
        :attr:`~sqnopt.interfaces.Objective.curvature_bound`, or where it declares none its
        :attr:`~sqnopt.interfaces.Objective.start_curvature`.
    rows
        The rows ``M_1`` is formed from: ``None`` (default) every row; an integer ``m >= 1`` a
        systematic sample of ``m`` rows when there are more; ``"auto"``
        ``SAMPLED_BOUND_ROWS_PER_PARAM`` times the parameter block's length.

    The safeguards are :class:`LBFGS`'s except ``on_bad_pair``, which must be ``"skip"`` (no
    Powell damping). Requires the ``dense_hessian`` layout (``K`` blocks of ``[x_i, 1]``-linear
    scores). ``M_1`` is positive definite when ``lam > 0`` (an unregularised intercept
    included); with ``lam = 0`` and linearly dependent features the solve stops with
    ``numpy.linalg.LinAlgError`` when it starts.
    """

    bound: float | Literal["auto"] = "auto"
    rows: int | Literal["auto"] | None = None
    name = "bound_lbfgs"
    requires = frozenset({SMOOTH, DENSE_HESSIAN})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.bound != "auto":
            _check_number("BoundLBFGS", "bound", self.bound, low=0.0, strict=True)
        r = self.rows
        if not (r is None or r == "auto"
                or (isinstance(r, int) and not isinstance(r, bool) and r >= 1)):
            raise ValueError(f"BoundLBFGS: rows must be None (every row), 'auto' or an integer "
                             f">= 1, got {r!r}")
        if self.on_bad_pair != "skip":
            raise ValueError("BoundLBFGS: on_bad_pair must be 'skip' (Powell damping needs B v "
                             "of the two-loop matrix, not formed with a preconditioner); use "
                             "LBFGS(on_bad_pair='damp')")

    def resolved_bound(self, problem: Problem) -> float:
        """``c``: the ``bound`` given, or the objective's curvature bound, or its curvature at
        score 0 where it declares no bound."""
        if self.bound != "auto":
            return float(self.bound)
        for c in (problem.curvature_bound, problem.start_curvature):
            if c is not None and c > 0:
                return float(c)
        raise ValueError(f"curvature model {self.describe()} needs the objective's curvature "
                         "bound or its curvature at score 0 (a smooth loss declares "
                         "curvature_bound or start_curvature); pass BoundLBFGS(bound=c) with c "
                         ">= the loss's second derivative")

    def resolved_rows(self, problem: Problem) -> int:
        """The sample's size (0: every row): ``rows``, with ``"auto"`` resolved to
        ``SAMPLED_BOUND_ROWS_PER_PARAM * dim``; 0 when that covers the data set."""
        if self.rows is None:
            return 0
        m = (SAMPLED_BOUND_ROWS_PER_PARAM * problem.dim if self.rows == "auto"
             else int(self.rows))
        return 0 if m >= problem.n_samples else m

    def memory_bytes(self, problem: Problem) -> int:
        return super().memory_bytes(problem) + 8 * (problem.n_params + problem.dim
                                                    * (problem.dim + 256))

    def init(self, problem: Problem) -> BoundLBFGSKernel:
        sg = self._safeguards()
        return BoundLBFGSKernel(problem.dim, max(problem.n_blocks, 1),
                                self.resolved_bound(problem), self.memory, float(self.gamma0),
                                float(sg["min_curvature"]),  # type: ignore[arg-type]
                                bool(sg["reset_on_nonfinite"]), self.resolved_rows(problem))


@dataclass(frozen=True)
class HessianLBFGS(LBFGS):
    r"""L-BFGS whose curvature pairs are Hessian-vector products at averaged iterates, not
    gradient differences: the stochastic quasi-Newton method SQN (Byrd, Hansen, Nocedal &
    Singer, SIAM J. Optim. 2016); with ``gradient=SVRG()`` the linearly convergent stochastic
    L-BFGS of Moritz, Nishihara & Jordan (AISTATS 2016).

    Every ``update_every`` iterations the model forms ``v = wbar_j - wbar_{j-1}`` from the
    averages of consecutive windows of iterates and ``r = Hess F_S(wbar_j) v`` on the Hessian
    sample ``S`` (the union of the window's curvature batches: ``curvature_schedule`` gives the
    samples drawn per iteration), and stores the pair in an L-BFGS memory of ``memory`` pairs.
    The pairs are free of the minibatch gradient's noise, so small gradient batches can use
    them; their cost is two passes over ``S`` per window (counted in ``n_curvature_samples``).
    Requires the ``hessian_vector`` capability (logistic, squared hinge, softmax).

    Parameters
    ----------
    memory, gamma0
        As for :class:`LBFGS`.
    update_every
        ``L``, iterations per curvature pair (the papers: 10-20).
    max_scale
        A cap on the initial scaling: ``gamma_t = min(v'r / r'r, max_scale / L_S)`` with
        ``L_S`` the largest per-sample curvature ``g_i l''_i ||x_i||^2 + lam`` of the Hessian
        samples so far, each at its window's average (margin objectives; ``None``: no cap, the
        papers' ``v'r / r'r``).
        ``H_{t,0} = gamma_t I`` scales every direction the stored pairs do not span, so with a
        constant step ``eta`` those directions take plain gradient steps of ``eta gamma_t``;
        ``max_scale = kappa b / eta`` keeps them within ``kappa b / L_max``, the size at which
        SVRG's ``b``-sample steps stay stable, however flat the newest pair's direction. The
        ``svrg_lbfgs`` preset sets it (``docs/curvature.md``).
    """

    update_every: int = 10
    max_scale: float | None = None
    name = "hessian_lbfgs"
    needs_secant_pair = False
    needs_curvature_batch = True
    requires = frozenset({SMOOTH, HESSIAN_VECTOR})

    @property
    def batches_per_update(self) -> int:
        return self.update_every

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (isinstance(self.update_every, int) and not isinstance(self.update_every, bool)
                and self.update_every >= 1):
            raise ValueError(f"HessianLBFGS: update_every must be an integer >= 1, got "
                             f"{self.update_every!r}")
        if self.on_bad_pair != "skip":
            raise ValueError("HessianLBFGS: on_bad_pair must be 'skip' (a Hessian-vector pair "
                             "of a convex objective has v'r >= 0; damping is for secant pairs)")
        if self.max_scale is not None:
            _check_number("HessianLBFGS", "max_scale", self.max_scale, low=0.0, strict=True)

    def memory_bytes(self, problem: Problem) -> int:
        K = max(problem.n_blocks, 1)
        return 8 * (problem.n_params * (2 * self.memory + 6) + problem.n_samples * (K + 1))

    def init(self, problem: Problem) -> HessianLBFGSKernel:
        sg = self._safeguards()
        return HessianLBFGSKernel(problem.n_params, problem.n_samples, max(problem.n_blocks, 1),
                                  self.memory, self.update_every, float(self.gamma0),
                                  float(sg["min_curvature"]),  # type: ignore[arg-type]
                                  bool(sg["reset_on_nonfinite"]),
                                  0.0 if self.max_scale is None else float(self.max_scale))


@dataclass(frozen=True)
class FullBFGS(_SecantModel):
    r"""Online BFGS (oBFGS): the full inverse-Hessian approximation, ``O(n^2)`` per iteration.

    ``d_t = H_t g`` with the BFGS inverse update
    ``H+ = (I - rho v r') H (I - rho r v') + rho v v'``, ``rho = 1/v'r``
    (Nocedal & Wright 2006, eq. 6.17; Mokhtari & Ribeiro 2015, eq. 6), from
    ``H_0 = I / init_scale``. Equal to ``RegularizedBFGS(delta=0, Gamma=0)``.

    Parameters
    ----------
    init_scale
        ``B_0 = init_scale * I`` (default 1), or ``"auto"``: start from ``B_0 = I`` and, at the
        first accepted pair, rescale to ``B_0 = (r'r / v'r) I`` before updating (Nocedal &
        Wright 2006, eq. 6.20) -- the full-matrix analogue of oLBFGS's ``gamma_t``.
    """

    init_scale: float | Literal["auto"] = 1.0
    name = "full_bfgs"

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_init_scale("FullBFGS", self.init_scale, 0.0)

    def memory_bytes(self, problem: Problem) -> int:
        return 8 * problem.n_params * (problem.n_params + 4)

    def init(self, problem: Problem) -> BFGSKernel:
        auto = self.init_scale == "auto"
        b0 = 1.0 if auto else float(self.init_scale)
        return BFGSKernel(problem.n_params, 0.0, 0.0, b0, False, auto_scale=auto,
                          **self._safeguards())  # type: ignore[arg-type]


@dataclass(frozen=True)
class RegularizedBFGS(_SecantModel):
    r"""Regularized stochastic BFGS (RES; Mokhtari & Ribeiro, ICASSP 2014, Algorithm 1).

    Direction ``d_t = (B_t^{-1} + Gamma I) g``; with ``r~ = r - delta v``,

    .. math:: B_{t+1} = B_t + \frac{\tilde r \tilde r^\top}{v^\top \tilde r}
              - \frac{B_t v v^\top B_t}{v^\top B_t v} + \delta I,
              \qquad B_0 = \text{init\_scale}\, I \succ \delta I,

    so ``B_t >= delta I`` and ``Gamma I <= B_t^{-1} + Gamma I <= (Gamma + 1/delta) I``
    (paper eq. 14). ``delta = Gamma = 0`` is online BFGS (:class:`FullBFGS`).

    Parameters
    ----------
    delta, Gamma
        Regularisation constants (paper: ``delta = 1e-3``, ``Gamma = 1e-4``).
    init_scale
        ``B_0 = init_scale * I``; must exceed ``delta`` (default 1). ``"auto"``: ``B_0 = I`` until
        the first accepted pair, then ``B_0 = (r'r / v'r) I`` before the first update (Nocedal &
        Wright 2006, eq. 6.20; it exceeds ``delta`` whenever ``v'r~ > 0``).
    method
        ``"cholesky"``: keep ``B`` and factor it with LAPACK each iteration (``n^3/3`` flops, the
        published ``O(n^3)``; ``+ delta I`` is a full-rank change with no exact low-rank inverse
        update). ``"eig"``: keep ``B = Q (Lambda + p delta I + A A' - C C') Q'`` (an
        eigendecomposition plus the ``p`` pairs since) and solve it exactly by Woodbury: two
        products with ``Q`` and an ``n (2p)^2`` Gram matrix per iteration, a new
        eigendecomposition every ``refresh_every`` accepted pairs (``O(n^3)``, amortised); equal
        to ``"cholesky"`` up to rounding, with a residual check on every solve, and faster from
        n ~ 250 (docs/curvature.md). ``"inverse"`` (``delta = 0`` only): the
        ``O(n^2)`` BFGS inverse update. ``"auto"`` (default): ``"inverse"`` when ``delta = 0``,
        else ``"eig"`` from ``EIG_MIN_DIM`` parameters on (up to LAPACK's limit,
        ``EIG_MAX_DIM``) and ``"cholesky"`` otherwise.
    refresh_every
        ``method="eig"`` (or ``"auto"`` when it picks it): accepted pairs between
        eigendecompositions (default about ``1.5 n^(2/3)``).
    """

    delta: float = 1e-3
    Gamma: float = 1e-4
    init_scale: float | Literal["auto"] = 1.0
    method: Literal["auto", "inverse", "cholesky", "eig"] = "auto"
    refresh_every: int | None = None
    name = "regularized_bfgs"

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_number("RegularizedBFGS", "delta", self.delta, low=0.0, strict=False)
        _check_number("RegularizedBFGS", "Gamma", self.Gamma, low=0.0, strict=False)
        _check_init_scale("RegularizedBFGS", self.init_scale, float(self.delta))
        if self.init_scale == "auto" and not 1.0 > self.delta:
            raise ValueError("RegularizedBFGS: init_scale='auto' starts from B_0 = I, which needs "
                             f"delta < 1; got delta={self.delta!r}")
        if self.method not in ("auto", "inverse", "cholesky", "eig"):
            raise ValueError(f"RegularizedBFGS: method must be 'auto', 'inverse', 'cholesky' or "
                             f"'eig', got {self.method!r}")
        if self.refresh_every is not None:
            if self.method not in ("eig", "auto"):
                raise ValueError("RegularizedBFGS: refresh_every applies to method='eig' (or "
                                 f"'auto') only, got method={self.method!r}")
            if not (isinstance(self.refresh_every, int) and not isinstance(self.refresh_every, bool)
                    and self.refresh_every >= 1):
                raise ValueError("RegularizedBFGS: refresh_every must be an integer >= 1, got "
                                 f"{self.refresh_every!r}")
        if self.method == "inverse" and self.delta != 0:
            raise ValueError("RegularizedBFGS: method='inverse' needs delta=0 (the + delta I "
                             "term has no exact low-rank inverse update); use 'auto'")

    def tuned(self, lam: float, X: Any, *, auto_schedule: bool) -> RegularizedBFGS:
        """Named without parameters, ``delta = min(delta, lam / 2)``: RES (Mokhtari & Ribeiro
        2014) assumes its regulariser ``delta`` below the smallest Hessian eigenvalue of the
        sample functions (their Assumption 1), here ``lam``; the default ``delta = 1e-3`` is the
        paper's for ``lam = 1e-3``. With ``delta > lam`` the model overstates the curvature of
        the flat directions and crawls along them (on a 20-sample set with ``lam = 1e-4`` the
        gradient stalled at 5e-3 after 1000 full-batch iterations)."""
        return dataclasses.replace(self, delta=lam / 2) if self.delta > lam / 2 else self

    def resolved_method(self, n_params: int) -> Literal["inverse", "cholesky", "eig"]:
        """The form ``method`` stands for at this number of parameters."""
        if self.method != "auto":
            return self.method
        if self.delta == 0:
            return "inverse"
        return "eig" if EIG_MIN_DIM <= n_params <= EIG_MAX_DIM else "cholesky"

    def memory_bytes(self, problem: Problem) -> int:
        n = problem.n_params
        per_matrix = 4 if self.resolved_method(n) == "eig" else 2
        return 8 * n * (per_matrix * n + 8)

    def init(self, problem: Problem) -> BFGSKernel | RESEigKernel:
        auto = self.init_scale == "auto"
        b0 = 1.0 if auto else float(self.init_scale)
        method = self.resolved_method(problem.n_params)
        if method == "eig":
            return RESEigKernel(problem.n_params, float(self.delta), float(self.Gamma), b0,
                                auto_scale=auto, refresh_every=self.refresh_every,
                                **self._safeguards())  # type: ignore[arg-type]
        return BFGSKernel(problem.n_params, float(self.delta), float(self.Gamma), b0,
                          method == "cholesky", auto_scale=auto,
                          **self._safeguards())  # type: ignore[arg-type]


# NewtonCGKernel's codes of the adaptive forcing rules
_FORCING_RULES = {"relative": -1.0, "eisenstat_walker": -2.0}


def _forcing_code(forcing: float | str | None) -> float:
    if forcing is None:
        return 0.0
    if isinstance(forcing, str):
        return _FORCING_RULES[forcing]
    return float(forcing)


@dataclass(frozen=True)
class NewtonCG(CurvatureModel):
    r"""Subsampled Newton-CG: ``d`` solves :math:`\nabla^2 F_S(w)\, d = g` inexactly by conjugate
    gradients, with :math:`S` the curvature batch the driver draws each iteration (Byrd, Chin,
    Neveitt & Nocedal, SIAM J. Optim. 2011).

    Each CG iteration is one Hessian-vector product on :math:`S` (two passes over its rows,
    counted in ``n_curvature_samples``); CG stops at the relative residual ``forcing``
    (``None``: :math:`\min(0.5, \sqrt{\|g\|})`, the forcing sequence of truncated Newton
    methods, Nocedal & Wright 2006, Alg. 7.1) or after ``max_iter`` products. A Newton-scaled
    direction: the step 1 is natural, and the recipe searches along it on growing gradient
    batches. Requires the ``hessian_vector`` capability (logistic, squared hinge, softmax).

    Parameters
    ----------
    max_iter
        CG iterations (Hessian-vector products) per direction.
    forcing
        Relative residual at which CG stops; ``None`` for the forcing sequence above;
        ``"relative"`` for :math:`\eta_k = \min(0.5, \sqrt{\|g_k\| / \|g_0\|})` (the same
        sequence, invariant to the scale of the objective); ``"eisenstat_walker"`` for
        Eisenstat & Walker's choice 2 (SIAM J. Sci. Comput. 1996), :math:`\eta_0 = 0.5`,
        :math:`\eta_k = 0.9 (\|g_k\| / \|g_{k-1}\|)^2` safeguarded by
        :math:`\max(\eta_k, 0.9 \eta_{k-1}^2)` when :math:`0.9 \eta_{k-1}^2 > 0.1`, at most
        0.5.
    preconditioner
        ``"diagonal"``: preconditioned CG (Nocedal & Wright 2006, Alg. 5.3) with the diagonal
        :math:`M = a\,\operatorname{diag}(\nabla^2 F_S(w)) + (1 - a)\lambda`, the Jacobi
        preconditioner mixed with the regulariser's Hessian (Hsia, Chiang & Lin, ACML 2018),
        formed once per batch (one pass over its stored entries) where the objective provides
        the diagonal (margin losses; softmax keeps plain CG); CG then stops at the relative
        residual in the :math:`M^{-1}` norm. ``None``: plain CG.
    diagonal_weight
        The weight :math:`a` in ``[0, 1]`` of the diagonal in :math:`M` (``1``: plain Jacobi;
        Hsia et al. recommend ``0.01``).
    gtol_stop
        ``True``: CG also stops once the largest absolute entry of its residual
        :math:`r = g - H d` is at most half the run's gradient tolerance (``gtol``, which the
        driver hands the kernel as ``run_gtol``). On a quadratic objective whose Hessian is the
        curvature batch's (the whole data set), :math:`r` is the gradient at the next iterate
        :math:`w - d`, so the run's own test then holds after this one direction, where a
        relative ``forcing`` either stops short of it (another outer iteration, its
        gradient pass and a new Krylov space) or runs past it; so while the run has a
        ``gtol`` the forcing is not used (``max_iter`` still caps the products). The half
        leaves room for the rounding that separates the recurrence's residual from the
        gradient the driver computes. Elsewhere :math:`r` is the gradient of the Newton model
        only, and the run's test decides as before. :func:`sqnopt.recipes.quadratic_cg` sets
        it.
    """

    max_iter: int = 20
    forcing: float | Literal["relative", "eisenstat_walker"] | None = None
    preconditioner: Literal["diagonal"] | None = None
    diagonal_weight: float = 0.01
    gtol_stop: bool = False
    name = "newton_cg"
    needs_curvature_batch = True
    requires = frozenset({HESSIAN_VECTOR})
    direction_scale = "newton"

    def __post_init__(self) -> None:
        if not (isinstance(self.max_iter, int) and not isinstance(self.max_iter, bool)
                and self.max_iter >= 1):
            raise ValueError(f"{type(self).__name__}: max_iter must be an integer >= 1, got "
                             f"{self.max_iter!r}")
        if isinstance(self.forcing, str):
            if self.forcing not in _FORCING_RULES:
                raise ValueError(f"{type(self).__name__}: forcing must be a number in (0, 1), "
                                 f"None, 'relative' or 'eisenstat_walker', got {self.forcing!r}")
        elif self.forcing is not None:
            _check_number(type(self).__name__, "forcing", self.forcing, low=0.0, strict=True, high=1.0)
        if self.preconditioner not in (None, "diagonal"):
            raise ValueError(f"{type(self).__name__}: preconditioner must be 'diagonal' or None, "
                             f"got {self.preconditioner!r}")
        _check_number(type(self).__name__, "diagonal_weight", self.diagonal_weight, low=0.0,
                      strict=False)
        if self.diagonal_weight > 1.0:
            raise ValueError(f"{type(self).__name__}: diagonal_weight must be in [0, 1], got "
                             f"{self.diagonal_weight!r}")
        if not isinstance(self.gtol_stop, bool):
            raise TypeError(f"{type(self).__name__}: gtol_stop must be True or False, got "
                            f"{self.gtol_stop!r}")

    def memory_bytes(self, problem: Problem) -> int:
        K = max(problem.n_blocks, 1)
        return 8 * (3 * problem.n_params + problem.n_samples * (K + 1))

    def init(self, problem: Problem) -> NewtonCGKernel:
        return NewtonCGKernel(problem.n_params, problem.n_samples, max(problem.n_blocks, 1),
                              int(self.max_iter),
                              _forcing_code(self.forcing),
                              float(self.diagonal_weight) if self.preconditioner else -1.0,
                              bool(self.gtol_stop))


@dataclass(frozen=True)
class TruncatedNewton(NewtonCG):
    r"""Truncated Newton: Newton-CG on the whole data set, each direction
    :math:`\nabla^2 F(w)\, d \approx g` solved by conjugate gradients from Hessian-vector
    products of the full objective.

    The kernel is :class:`NewtonCG`'s; the model declares ``full_batch``, so the recipe runs it
    deterministically from the first iteration (gradient and curvature batch the whole data
    set, an ``Armijo()`` line search from the unit step): the line-search truncated Newton
    method (Dembo, Eisenstat & Steihaug 1982; Nash 2000; Nocedal & Wright 2006, Alg. 7.1), the
    outer method scikit-learn calls ``newton-cg``. Per outer iteration the loss's second
    derivatives at the scores, :math:`D = \ell''(m)` (for softmax
    :math:`\operatorname{diag}(p) - p p^\top` from the probabilities), are computed once, and
    every CG iteration is one product :math:`X^\top (D (X v)) / N + \lambda v`: one sparse
    ``X v`` and one ``X^T u``, about the cost of a gradient without the exponentials. CG stops
    at the relative residual ``forcing`` (``None``: :math:`\min(0.5, \sqrt{\|g\|})`,
    superlinear near the optimum) or after ``max_iter`` products.

    Unlike L-BFGS, whose iteration count grows with the conditioning of the problem, the outer
    iterations of Newton's method do not depend on it (affine invariance), and CG needs few
    products where the Hessian's spectrum is clustered -- the case of many rare sparse features
    with a small ``lam`` (hashed one-hot data), where :func:`sqnopt.recipes.default_curvature`
    picks it. Requires the ``hessian_vector`` capability.

    Parameters
    ----------
    max_iter
        CG iterations (Hessian-vector products) per direction.
    forcing
        Relative residual at which CG stops; ``None`` for the forcing sequence above. The
        default is a fixed ``0.25``: the sequence above depends on the scale of the gradient,
        and with a small ``lam`` (gradients small from the start) it asks CG for accurate
        solves far from the optimum, each costing many products. ``"relative"`` and
        ``"eisenstat_walker"``: the adaptive rules of :class:`NewtonCG`.
    preconditioner, diagonal_weight
        As for :class:`NewtonCG`: ``"diagonal"`` preconditions CG by
        :math:`a\,\operatorname{diag}(\nabla^2 F(w)) + (1 - a)\lambda` (Hsia, Chiang & Lin,
        ACML 2018). Off by default: on sparse binary data it did not cut the passes to a
        tight tolerance on every set measured (the benchmark report).
    """

    max_iter: int = 50
    forcing: float | Literal["relative", "eisenstat_walker"] | None = 0.25
    name = "truncated_newton"
    full_batch = True
    requires = frozenset({SMOOTH, HESSIAN_VECTOR})


@dataclass(frozen=True)
class Newton(CurvatureModel):
    r"""Newton's method: ``d = H^{-1} g`` with the exact Hessian of the objective on the
    curvature batch, formed and factored by Cholesky (LAPACK) at every iterate.

    .. math:: H = \frac{1}{|S|}\sum_{i \in S} J_i^\top \Sigma_i J_i + \lambda I_{\text{reg}}

    with :math:`\Sigma_i` the score Hessian of sample :math:`i` (``l''(m_i)`` for a margin loss,
    :math:`\operatorname{diag}(p_i) - p_i p_i^\top` for softmax) and :math:`J_i` its scores'
    Jacobian. Forming it costs :math:`\sum_i K^2 \mathrm{nnz}_i^2 / 2` multiply-adds,
    factoring it :math:`n^3/3` for :math:`n` parameters, with :math:`O(n^2)` memory; each
    direction is two triangular solves. With the whole data set as the batch (the recipe) and a
    line search this is the classical damped Newton method, quadratically convergent near the
    optimum of a strongly convex objective (Nocedal & Wright 2006, Sec. 3.3 and Thm. 3.5), the
    solver scikit-learn calls ``newton-cholesky``. The formation and the factorisation are
    counted as one pass over the batch (``n_curvature_samples``).

    Requires the ``dense_hessian`` capability (logistic, squared hinge, binary logistic,
    softmax) and at most ``NEWTON_MAX_PARAMS`` parameters (``MemoryError`` beyond: use
    ``"lbfgs"``). A Hessian that is not positive definite (``lam = 0`` on separable data)
    stops the solve with a :class:`~sqnopt.CurvatureError`.
    """

    name = "newton"
    needs_curvature_batch = True
    full_batch = True
    requires = frozenset({SMOOTH, DENSE_HESSIAN})
    direction_scale = "newton"

    def memory_bytes(self, problem: Problem) -> int:
        K = max(problem.n_blocks, 1)
        return 8 * (problem.n_params * (problem.n_params + 4) + problem.n_samples * K + K * K)

    def init(self, problem: Problem) -> NewtonKernel:
        if problem.n_params > NEWTON_MAX_PARAMS:
            raise MemoryError(
                f"curvature model {self.describe()} forms the dense {problem.n_params} x "
                f"{problem.n_params} Hessian ({8 * problem.n_params ** 2 / 2**30:.3g} GiB) and "
                f"factors it at every iterate; it is limited to {NEWTON_MAX_PARAMS} parameters. "
                "Use curvature='lbfgs' (limited memory, O(memory x n)) or 'newton_cg' "
                "(Hessian-vector products).")
        return NewtonKernel(problem.n_params, problem.n_samples, max(problem.n_blocks, 1))
