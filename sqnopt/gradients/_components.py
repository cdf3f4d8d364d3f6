"""Gradient-estimator components: the minibatch gradient, the variance-reduced SVRG and SAGA
estimates, progressive batching (the minibatch gradient on batches its variance tests size)
and overlapping batches (multi-batch L-BFGS's curvature pairs on the samples consecutive batches
share)."""

from __future__ import annotations

from dataclasses import dataclass

from sqnopt.gradients._base import MinibatchKernel
from sqnopt.gradients._overlap import OverlapBatchKernel
from sqnopt.gradients._progressive import ProgressiveBatchKernel
from sqnopt.gradients._saga import SAGAKernel
from sqnopt.gradients._svrg import SVRGKernel
from sqnopt.interfaces import LINEAR_SCORES, GradientEstimator, Problem

__all__ = ["SAGA", "SVRG", "Minibatch", "OverlapBatch", "ProgressiveBatch"]


@dataclass(frozen=True)
class Minibatch(GradientEstimator):
    """``g = s(w, B)``: the minibatch gradient (the papers' stochastic gradient; exact on full
    batches)."""

    name = "minibatch"
    partial_sums = "minibatch"
    plain = True

    def init(self, problem: Problem) -> MinibatchKernel:
        return MinibatchKernel(problem.n_params)


@dataclass(frozen=True)
class SVRG(GradientEstimator):
    r"""Stochastic variance-reduced gradient (Johnson & Zhang, NIPS 2013):

    .. math:: g = s(w, B) - s(\tilde w, B) + \nabla F(\tilde w)

    with the snapshot :math:`\tilde w` retaken every ``period`` batch samples (``None``: one
    pass over the data), each snapshot costing one full gradient. Unbiased; its variance
    vanishes as :math:`w` and :math:`\tilde w` approach the optimum, so a constant step converges
    linearly on strongly convex objectives, and secant pairs taken next to it are those of the
    minibatch gradient (the snapshot terms cancel) -- the SVRG + L-BFGS composition of Moritz,
    Nishihara & Jordan (AISTATS 2016). Works with every objective.
    """

    period: int | None = None
    name = "svrg"
    partial_sums = "snapshot"
    vanishing_variance = True

    def __post_init__(self) -> None:
        if self.period is not None and not (isinstance(self.period, int)
                                            and not isinstance(self.period, bool)
                                            and self.period >= 1):
            raise ValueError(f"SVRG: period must be None or an integer >= 1, got "
                             f"{self.period!r}")

    def memory_bytes(self, problem: Problem) -> int:
        # margin objectives: the snapshot's score derivatives and the data part of its gradient
        # (the lazy sparse iterate's table)
        table = (problem.n_samples * 2 + problem.n_params
                 if problem.n_blocks == 1 and LINEAR_SCORES in problem.capabilities else 0)
        return 8 * (3 * problem.n_params + table)

    def init(self, problem: Problem) -> SVRGKernel:
        return SVRGKernel(problem.n_params, 0 if self.period is None else int(self.period))


@dataclass(frozen=True)
class SAGA(GradientEstimator):
    r"""SAGA (Defazio, Bach & Lacoste-Julien, NIPS 2014) for objectives of linear scores:

    .. math:: g = \frac{1}{|B|}\sum_{i \in B} \nabla\ell_i(c_i(w) - t_i) + \frac{1}{N}\sum_j
              \nabla\ell_j(t_j) + \lambda w

    where :math:`t_i` are the score derivatives of sample :math:`i` at its last visit (one number
    per sample for margin losses, one per class for softmax: :math:`O(N)` memory, not
    :math:`O(N n)`) and each visit updates them. The table is filled by one pass at the start.
    Unbiased with vanishing variance: constant steps converge linearly. Requires the
    ``linear_scores`` capability; not with ``sampling="weighted"`` (the table would average the
    drawn samples, not the weighted ones).
    """

    name = "saga"
    requires = frozenset({LINEAR_SCORES})
    vanishing_variance = True

    def memory_bytes(self, problem: Problem) -> int:
        K = max(problem.n_blocks, 1)        # scores per sample (one per class for softmax)
        return 8 * (2 * problem.n_samples * K + problem.n_params)

    def init(self, problem: Problem) -> SAGAKernel:
        return SAGAKernel(problem.n_params)


@dataclass(frozen=True)
class ProgressiveBatch(GradientEstimator):
    r"""Progressive batching (Bollapragada, Byrd & Nocedal, "Adaptive sampling strategies for
    stochastic optimization", SIAM J. Optim. 2018; Bollapragada, Mudigere, Nocedal, Shi & Tang,
    ICML 2018): the minibatch gradient :math:`g = s(w, B)` on batches whose size the
    inner-product test and the orthogonality test choose. After each estimate on a batch of
    fewer than :math:`N` samples both are tested (sample variances, divisor :math:`|B| - 1`):

    .. math:: \frac{\operatorname{Var}_{i \in B}\left(\nabla F_i(w)^\top g\right)}{|B|}
              \le \theta^2 \lVert g \rVert^4, \qquad
              \frac{\operatorname{Var}_{i \in B}\left(\nabla F_i(w) - \frac{\nabla F_i(w)^\top
              g}{\lVert g\rVert^2}\, g\right)}{|B|} \le \nu^2 \lVert g \rVert^2;

    when one fails the following batches have the largest of
    :math:`\lceil \operatorname{Var} / (\theta^2 \lVert g\rVert^4) \rceil` and
    :math:`\lceil \operatorname{Var}_\perp / (\nu^2 \lVert g\rVert^2) \rceil` over the failed
    tests (never fewer than before, at most :math:`N`; the paper enlarges the current batch,
    here the new size applies from the next iteration). The inner-product test bounds the
    probability that :math:`-Hg` fails to be a descent direction for :math:`F`; the
    orthogonality test bounds the part of the sampling noise orthogonal to :math:`g`, which the
    first cannot see. As the iterates approach the optimum :math:`\lVert g \rVert` shrinks and
    the batch grows; the paper shows linear convergence on strongly convex problems when the
    (population) tests hold; on finite data the run ends as full-batch iterations. The batch
    schedule gives the floor (e.g. ``Fixed(b0)``, the first batch). For linear-score
    objectives :math:`\nabla F_i = \sum_k c_{ik}\, \partial\mathrm{score}_k(x_i)/\partial w +
    \lambda w_{\mathrm{reg}}`; the regulariser's common term drops out of both variances, so
    the tests cost one row product per sample (:math:`\nabla F_i^\top g`) and one row norm
    (:math:`\lVert\nabla F_i - \lambda w_{\mathrm{reg}}\rVert^2 = c_i^2\lVert x_i\rVert^2` for
    margin losses). Requires the ``linear_scores`` capability.

    ``nu`` is below 1, unlike the paper's :math:`\tan 80^\circ \approx 5.67`: the sample tests
    put :math:`g` in place of :math:`\nabla F`, and where the noise dominates a small batch,
    :math:`\lVert g\rVert^2 \approx \lVert\nabla F\rVert^2 + \operatorname{tr}\Sigma/|B|`
    (:math:`\Sigma` the per-sample gradients' covariance) contains it, so the orthogonality
    ratio :math:`\operatorname{Var}_\perp / (|B|\,\lVert g\rVert^2)` is at most about 1 and a
    test with :math:`\nu \ge 1` passes on pure noise; with :math:`\nu < 1` it asks for
    :math:`\lvert B\rvert / \nu^2` samples until :math:`\lVert\nabla F\rVert^2` is a share
    :math:`1 - \nu^2` of :math:`\lVert g\rVert^2`. Likewise the inner-product ratio is about one
    over the number of directions the noise spreads over, which on wide sparse data is tiny:
    there the inner-product test alone keeps a small batch whose steps fit the batch rather
    than the objective (``docs/report_growing_batches.md`` has the measurements). ``nu=None``: the
    inner-product test alone.
    """

    theta: float = 0.9
    nu: float | None = 0.5
    name = "progressive"
    partial_sums = "variance_test"
    requires = frozenset({LINEAR_SCORES})

    def __post_init__(self) -> None:
        if not (isinstance(self.theta, (int, float)) and not isinstance(self.theta, bool)
                and self.theta > 0):
            raise ValueError(f"ProgressiveBatch: theta must be a number > 0, got "
                             f"{self.theta!r}")
        if self.nu is not None and not (isinstance(self.nu, (int, float))
                                        and not isinstance(self.nu, bool) and self.nu > 0):
            raise ValueError(f"ProgressiveBatch: nu must be a number > 0, or None for the "
                             f"inner-product test alone; got {self.nu!r}")

    def memory_bytes(self, problem: Problem) -> int:
        K = max(problem.n_blocks, 1)        # scores per sample (one per class for softmax)
        return 8 * (2 * K + (self.nu is not None)) * problem.n_samples

    def init(self, problem: Problem) -> ProgressiveBatchKernel:
        return ProgressiveBatchKernel(problem.n_params, float(self.theta),
                                      0.0 if self.nu is None else float(self.nu))


@dataclass(frozen=True)
class OverlapBatch(GradientEstimator):
    r"""Overlapping batches for multi-batch L-BFGS (Berahas, Nocedal & Takac, "A multi-batch
    L-BFGS method for machine learning", NIPS 2016). Consecutive batches share samples: of each
    batch :math:`S_k` the last :math:`\lfloor \text{overlap}\cdot|S_k|\rfloor` samples (at
    least one) form :math:`O_k`, which replaces the first draws of :math:`S_{k+1}`. The estimate
    is the batch gradient :math:`g_k = \nabla F_{S_k}(w_k)`, and the curvature pair of the
    step :math:`w_k \to w_{k+1}` is

    .. math:: v_k = w_{k+1} - w_k, \qquad
              r_k = \nabla F_{O_k}(w_{k+1}) - \nabla F_{O_k}(w_k),

    a difference of gradients on the same samples (so it carries curvature, not sampling
    noise) that costs no extra gradient evaluation: both terms are partial sums of the two
    batch gradients (``overlap_pairs``: the estimator hands the pair to the driver, which forms
    none of its own). With whole-data batches the pairs are those of full-batch L-BFGS.
    Requires the ``linear_scores`` capability; ``overlap`` in (0, 0.5].
    """

    overlap: float = 0.25
    name = "overlap"
    requires = frozenset({LINEAR_SCORES})

    def __post_init__(self) -> None:
        if not (isinstance(self.overlap, (int, float)) and not isinstance(self.overlap, bool)
                and 0.0 < self.overlap <= 0.5):
            raise ValueError(f"OverlapBatch: overlap must be a number in (0, 0.5], got "
                             f"{self.overlap!r}")

    def memory_bytes(self, problem: Problem) -> int:
        K = max(problem.n_blocks, 1)        # scores per sample (one per class for softmax)
        return 8 * (6 * problem.n_params + (K + 1) * problem.n_samples)

    def init(self, problem: Problem) -> OverlapBatchKernel:
        return OverlapBatchKernel(problem.n_params, float(self.overlap))
