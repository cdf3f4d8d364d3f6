"""Gradient-estimator components: the minibatch gradient, the variance-reduced SVRG and SAGA
estimates, and progressive batching (the minibatch gradient on batches its variance test
sizes)."""

from __future__ import annotations

from dataclasses import dataclass

from sqnopt.gradients._base import MinibatchKernel
from sqnopt.gradients._progressive import ProgressiveBatchKernel
from sqnopt.gradients._saga import SAGAKernel
from sqnopt.gradients._svrg import SVRGKernel
from sqnopt.interfaces import LINEAR_SCORES, GradientEstimator, Problem

__all__ = ["SAGA", "SVRG", "Minibatch", "ProgressiveBatch"]


@dataclass(frozen=True)
class Minibatch(GradientEstimator):
    """``g = s(w, B)``: the minibatch gradient (the papers' stochastic gradient; exact on full
    batches)."""

    name = "minibatch"
    partial_sums = "minibatch"

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

    def __post_init__(self) -> None:
        if self.period is not None and not (isinstance(self.period, int)
                                            and not isinstance(self.period, bool)
                                            and self.period >= 1):
            raise ValueError(f"SVRG: period must be None or an integer >= 1, got "
                             f"{self.period!r}")

    def memory_bytes(self, problem: Problem) -> int:
        return 8 * 3 * problem.n_params

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

    def memory_bytes(self, problem: Problem) -> int:
        K = max(problem.n_blocks, 1)        # scores per sample (one per class for softmax)
        return 8 * (2 * problem.n_samples * K + problem.n_params)

    def init(self, problem: Problem) -> SAGAKernel:
        return SAGAKernel(problem.n_params)


@dataclass(frozen=True)
class ProgressiveBatch(GradientEstimator):
    r"""Progressive batching (Bollapragada, Mudigere, Nocedal, Shi & Tang, ICML 2018): the
    minibatch gradient :math:`g = s(w, B)` on batches whose size the inner-product test
    chooses. After each estimate on a batch of fewer than :math:`N` samples,

    .. math:: \frac{\operatorname{Var}_{i \in B}\left(\nabla F_i(w)^\top g\right)}{|B|}
              \le \theta^2 \lVert g \rVert^4

    is tested (sample variance, divisor :math:`|B| - 1`); when it fails the following batches
    have :math:`\lceil \operatorname{Var} / (\theta^2 \lVert g\rVert^4) \rceil` samples
    (never fewer than before, at most :math:`N`; the paper enlarges the current batch, here the
    new size applies from the next iteration). The test bounds the probability that
    :math:`-Hg` fails to be a descent direction for :math:`F`; as the iterates approach the
    optimum :math:`\lVert g \rVert` shrinks and the batch grows, and the paper shows linear
    convergence on strongly convex problems when the (population) test holds; on finite data
    the run ends as full-batch iterations. The batch schedule gives the floor (e.g. ``Fixed(b0)``, the first
    batch). For linear-score objectives :math:`\nabla F_i^\top g = \sum_k c_{ik}\,
    \mathrm{score}_k(x_i; g)` up to the regulariser's common shift, so the test costs one row
    product per sample. Requires the ``linear_scores`` capability. The test is the paper's
    inner-product test; its orthogonality test (the "augmented" one) is not applied.
    """

    theta: float = 0.9
    name = "progressive"
    partial_sums = "variance_test"
    requires = frozenset({LINEAR_SCORES})

    def __post_init__(self) -> None:
        if not (isinstance(self.theta, (int, float)) and not isinstance(self.theta, bool)
                and self.theta > 0):
            raise ValueError(f"ProgressiveBatch: theta must be a number > 0, got "
                             f"{self.theta!r}")

    def memory_bytes(self, problem: Problem) -> int:
        K = max(problem.n_blocks, 1)        # scores per sample (one per class for softmax)
        return 8 * 2 * problem.n_samples * K

    def init(self, problem: Problem) -> ProgressiveBatchKernel:
        return ProgressiveBatchKernel(problem.n_params, float(self.theta))
