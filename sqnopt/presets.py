"""Named compositions: one-liners for Pegasos and its first-order peers, full-batch L-BFGS, and
SQB.

Every preset returns an ordinary :class:`~sqnopt.Solver` built from registered components
(nothing here is a special kernel); ``solver.objective``, ``solver.step`` ... show the
composition, and any other :class:`~sqnopt.Solver` keyword (budgets, ``random_state``,
``history_every``, ``callback`` ...) passes through.

=============== ===================================================================================
preset          composition
=============== ===================================================================================
``pegasos``     hinge(lam) + identity + ``Fixed(k)`` + ``PegasosStep`` (``1/(lam t)``) + ``L2Ball``
                (radius ``1/sqrt(lam)``); last iterate or averaged (Shalev-Shwartz et al. 2007)
``sgd``         identity + ``Fixed(k)`` + ``InverseSqrt`` (``eps0/sqrt(t)``), optional projection
``asgd``        ``sgd`` with Polyak-Ruppert averaging
``adagrad``     ``AdaGrad`` curvature + ``Constant(eta)`` (Duchi, Hazan & Singer 2011)
``smd``         ``LazyProjection(inner)`` mirror map + ``InverseSqrt`` (stochastic mirror descent)
``seg_pm``      ``ExpGradPM(radius)`` mirror map + ``InverseSqrt`` (exponentiated gradient +-)
``gd``          ``Full`` batches + ``Constant(eps)`` (full-batch (sub)gradient descent)
``pgd``         ``gd`` + projection (``L1Ball(radius)`` unless given)
``lbfgs``       ``LBFGS(memory)`` + ``Full`` batches + ``Wolfe()`` line search (full-batch L-BFGS, no
                step to tune; the secant gradient is reused, one pass per line-search trial)
``sqb``         ``QuadraticBound`` (CG) + ``Geometric(100, 1.5)`` gradient batches + ``Fixed(1000)``
                bound batches + ``Constant(1)`` + subset sampling (the estimators' SQB recipe)
``saga``        ``SAGA`` gradient table + identity + ``Fixed(b)`` + ``Constant(eta)``, or unless ``eta``
                is given the step ``LipschitzStep`` computes from the data (Defazio et al. 2014)
``svrg``        ``SVRG`` snapshots + identity + ``Fixed(b)`` + the step of ``saga``, shuffled epochs
``svrg_lbfgs``  ``SVRG`` + ``HessianLBFGS`` (Hessian-vector pairs on window averages, capped
                initial scaling) + ``Fixed(64)`` + ``Constant(eta)`` (Moritz, Nishihara & Jordan 2016)
=============== ===================================================================================

``progressive_lbfgs``: ``ProgressiveBatch(theta, nu)`` (batches sized by the inner-product and
orthogonality tests) + ``LBFGS(memory)`` + ``Fixed(b0)`` floor + ``Armijo()`` on the batch +
subset sampling (Bollapragada, Mudigere, Nocedal, Shi & Tang 2018).

``multibatch_lbfgs``: ``OverlapBatch(overlap)`` (consecutive batches share samples, curvature
pairs from them) + ``LBFGS(memory)`` + ``Geometric(b0, growth)`` + ``Armijo()`` on the batch +
subset sampling (Berahas, Nocedal & Takac 2016).

The names are also accepted by :meth:`sqnopt.Solver.preset`.
"""

from __future__ import annotations

from typing import Any, Literal, Callable

from sqnopt.curvature import LBFGS, AdaGrad, Identity, QuadraticBound
from sqnopt.interfaces import Objective, Projection, StepRule
from sqnopt.projections import ExpGradPM, L1Ball, L2Ball, LazyProjection
from sqnopt.registry import get_registry
from sqnopt.registry._registry import hookimpl
from sqnopt.registry.hookspecs import RegisterFn
from sqnopt.schedules import Fixed, Full, Geometric
from sqnopt.solver import Solver
from sqnopt.steps import Constant, InverseSqrt, LipschitzStep, PegasosStep, Wolfe

__all__ = [
    "PRESETS",
    "adagrad",
    "asgd",
    "gd",
    "lbfgs",
    "make",
    "multibatch_lbfgs",
    "pegasos",
    "pgd",
    "progressive_lbfgs",
    "seg_pm",
    "sgd",
    "smd",
    "sqb",
]

ObjectiveSpec = Any  # an Objective instance or a registered objective name


def _objective(objective: ObjectiveSpec, lam: float | None) -> Objective:
    if isinstance(objective, Objective):
        if lam is not None and float(lam) != float(objective.lam):
            raise ValueError(f"lam={lam} conflicts with objective {objective.describe()}; give "
                             "lam in the objective or pass the objective by name")
        return objective
    if isinstance(objective, str):
        obj = get_registry().create("objective", objective, **({} if lam is None else {"lam": lam}))
        assert isinstance(obj, Objective)
        return obj
    raise TypeError(f"objective must be an Objective or a registered name, got "
                    f"{type(objective).__name__}")


def pegasos(lam: float = 1e-4, *, batch_size: int = 1, average: bool | int = False,
            project: bool = True, radius: float | None = None,
            fit_intercept: bool | Literal["regularized"] = False,
            **solver_kwargs: Any) -> Solver:
    r"""Pegasos (Shalev-Shwartz, Singer & Srebro 2007, Fig. 1 / 2): the hinge-loss SVM by
    stochastic subgradient steps ``1/(lam t)``, each projected onto the ball of radius
    ``1/sqrt(lam)`` that holds the optimum.

    It is the composition
    ``Solver(Hinge(lam), Identity(), Fixed(batch_size), PegasosStep(), projection=L2Ball(radius))``

    i.e. ``w_{t+1/2} = (1 - 1/t) w_t + (1/(lam t k)) sum_{i in A_t^+} y_i x_i`` and the projection
    onto ``{||w|| <= 1/sqrt(lam)}``. On sparse data it runs in the O(nnz) scaled loop.

    The batches ``A_t`` are drawn without replacement, a fresh permutation each pass
    (``sampling="shuffle"``, random reshuffling): every example is used once per pass, where the
    paper's i.i.d. draws leave about ``1/e`` of them out of any given pass, and reshuffled
    stochastic steps reach a lower objective in the same number of passes (Gürbüzbalaban,
    Ozdaglar & Parrilo 2021, "Why random reshuffling beats stochastic gradient descent").
    ``sampling="uniform"`` gives the paper's i.i.d. draws.

    Parameters
    ----------
    lam
        Regularisation ``lambda`` of ``F(w) = lam/2 ||w||^2 + mean hinge``.
    batch_size
        ``k``, examples per iteration.
    average
        Output the average of the iterates (``True``) or of those after iteration ``average``;
        ``False`` outputs the last iterate, as the paper does.
    project
        Apply the projection (the 2011 journal version makes it optional).
    radius
        Ball radius; ``None`` means ``1/sqrt(lam)``.
    fit_intercept
        ``"regularized"``: the paper's bias as a constant feature, regularised and projected
        with the weights. ``True`` (an unregularised intercept) is refused: it would take the
        step ``1/(lam t)`` too, ``1/lam`` at first, with nothing to pull it back.
    """
    solver_kwargs.setdefault("sampling", "shuffle")
    return Solver(objective=_objective("hinge", lam), curvature=Identity(),
                  schedule=Fixed(batch_size), step=PegasosStep(),
                  projection=L2Ball(radius) if project else None, average=average,
                  fit_intercept=fit_intercept, **solver_kwargs)


def sgd(lam: float | None = 1e-4, *, objective: ObjectiveSpec = "hinge", eps0: float = 1.0,
        batch_size: int = 1, average: bool | int = False, projection: Projection | None = None,
        **solver_kwargs: Any) -> Solver:
    """Stochastic (sub)gradient descent with ``eps_t = eps0 / sqrt(t + 1)`` (the SGD of the Pegasos course notes, "On Pegasos and first order optimizers")."""
    return Solver(objective=_objective(objective, lam), curvature=Identity(),
                  schedule=Fixed(batch_size), step=InverseSqrt(eps0=eps0),
                  projection=projection, average=average, **solver_kwargs)


def asgd(lam: float | None = 1e-4, *, objective: ObjectiveSpec = "hinge", eps0: float = 1.0,
         batch_size: int = 1, average: bool | int = True, projection: Projection | None = None,
         **solver_kwargs: Any) -> Solver:
    """Averaged SGD (Polyak-Ruppert): :func:`sgd` with ``average=True``."""
    return sgd(lam, objective=objective, eps0=eps0, batch_size=batch_size, average=average,
               projection=projection, **solver_kwargs)


def adagrad(lam: float | None = 1e-4, *, objective: ObjectiveSpec = "hinge", eta: float = 1.0,
            delta: float = 1e-8, initial_accumulator: float = 0.0, batch_size: int = 1,
            average: bool | int = False, projection: Projection | None = None,
            **solver_kwargs: Any) -> Solver:
    """Diagonal AdaGrad with the constant step ``eta`` (Duchi, Hazan & Singer 2011)."""
    return Solver(objective=_objective(objective, lam),
                  curvature=AdaGrad(delta=delta, initial_accumulator=initial_accumulator),
                  schedule=Fixed(batch_size), step=Constant(eps=eta), projection=projection,
                  average=average, **solver_kwargs)


def smd(lam: float | None = 1e-4, *, objective: ObjectiveSpec = "hinge", eps0: float = 1.0,
        radius: float = 10.0, inner: Projection | None = None, batch_size: int = 1,
        average: bool | int = False, **solver_kwargs: Any) -> Solver:
    """Stochastic mirror descent, Euclidean and lazy: ``theta -= eps_t g``, ``w = P(theta)``
    with ``P`` the l1 ball of ``radius`` unless ``inner`` is given (the Pegasos course notes, Sec. 3.2)."""
    return Solver(objective=_objective(objective, lam), curvature=Identity(),
                  schedule=Fixed(batch_size), step=InverseSqrt(eps0=eps0),
                  projection=LazyProjection(inner=inner if inner is not None else L1Ball(radius)),
                  average=average, **solver_kwargs)


def seg_pm(lam: float | None = 1e-4, *, objective: ObjectiveSpec = "hinge", eps0: float = 1.0,
           radius: float = 10.0, batch_size: int = 1, average: bool | int = False,
           **solver_kwargs: Any) -> Solver:
    """Stochastic exponentiated gradient +- on the l1 ball of ``radius`` (the Pegasos course notes)."""
    return Solver(objective=_objective(objective, lam), curvature=Identity(),
                  schedule=Fixed(batch_size), step=InverseSqrt(eps0=eps0),
                  projection=ExpGradPM(radius=radius), average=average, **solver_kwargs)


def gd(lam: float | None = 1e-4, *, objective: ObjectiveSpec = "hinge", eps: float = 0.1,
       step: StepRule | None = None, projection: Projection | None = None,
       **solver_kwargs: Any) -> Solver:
    """Full-batch (sub)gradient descent: ``Full`` schedule, ``Constant(eps)`` unless ``step`` is
    given (e.g. ``PegasosStep()`` for the ``1/(lam t)`` step of the Pegasos course notes' GD). Every batch is
    the whole training set: the samplers answer a request for ``N`` indices with the full batch."""
    return Solver(objective=_objective(objective, lam), curvature=Identity(), schedule=Full(),
                  step=step if step is not None else Constant(eps=eps), projection=projection,
                  **solver_kwargs)


def pgd(lam: float | None = 1e-4, *, objective: ObjectiveSpec = "hinge", eps: float = 0.1,
        radius: float = 10.0, step: StepRule | None = None,
        projection: Projection | None = None, **solver_kwargs: Any) -> Solver:
    """Projected full-batch gradient descent (``L1Ball(radius)`` unless ``projection``)."""
    return gd(lam, objective=objective, eps=eps, step=step,
              projection=projection if projection is not None else L1Ball(radius),
              **solver_kwargs)


def lbfgs(lam: float | None = 1e-4, *, objective: ObjectiveSpec = "logloss", memory: int = 10,
          step: StepRule | None = None, **solver_kwargs: Any) -> Solver:
    """Full-batch L-BFGS: ``LBFGS(memory)`` directions on ``Full`` batches with the strong-Wolfe
    line search ``Wolfe()`` unless ``step`` is given (Nocedal & Wright 2006, Alg. 7.5 with
    Algs. 3.5-3.6): its curvature condition keeps every secant pair (``v'r > 0``) and lets a
    step longer than 1 be taken. Each iteration costs one pass per line-search trial (the
    accepted trial's gradient is the secant pair's and the next iteration's). Unless given: ``gtol=1e-8``
    checked every iteration (``report_every=1``: a full pass dwarfs the return to Python) and,
    with no other budget, ``max_iter=1000``. See ``docs/curvature.md``, "Full batch"."""
    solver_kwargs.setdefault("gtol", 1e-8)
    solver_kwargs.setdefault("report_every", 1)
    if not any(k in solver_kwargs for k in ("max_iter", "max_samples", "max_epochs", "max_time")):
        solver_kwargs["max_iter"] = 1000
    return Solver(objective=_objective(objective, lam), curvature=LBFGS(memory=memory),
                  schedule=Full(), step=step if step is not None else Wolfe(), **solver_kwargs)


def sqb(lam: float | None = 1e-4, *, objective: ObjectiveSpec = "softmax", inner_iter: int = 5,
        **solver_kwargs: Any) -> Solver:
    """Semistochastic quadratic bound method (Aravkin, Choromanska, Jebara & Kanevsky 2014) with
    the recipe the estimators use for ``curvature="quadratic_bound"`` (:mod:`sqnopt.recipes`):
    the CG inner solve, gradient batches ``Geometric(100, 1.5)`` of distinct samples growing to
    the whole data set, a ``Fixed(1000)`` bound batch and the majoriser's constant step 1;
    ``objective`` is ``"softmax"``, ``"binary_logistic"`` or another objective with the
    ``quadratic_bound`` capability. The paper uses ``lam = 1/N``. See ``docs/sqb.md``."""
    from sqnopt import recipes

    model = QuadraticBound(inner_iter=inner_iter, solver="cg")
    solver_kwargs.setdefault("sampling", "subset")
    return Solver(objective=_objective(objective, lam), curvature=model,
                  schedule=Geometric(b1=float(recipes.BOUND_B1), rate=recipes.BOUND_RATE),
                  step=Constant(1.0), curvature_schedule=Fixed(recipes.BOUND_BATCH),
                  **solver_kwargs)


def _variance_reduced_step(eta: float | None, batch_size: int) -> StepRule:
    """``Constant(eta)``, or with ``eta=None`` the step the estimators' recipe takes for a
    variance-reduced gradient, computed from the data when the solve starts:
    ``1/(3 L_max)`` for single samples, ``1/L_max`` for batches (:class:`LipschitzStep`)."""
    from sqnopt.recipes import variance_reduced_factor

    if eta is not None:
        return Constant(eps=eta)
    return LipschitzStep(factor=variance_reduced_factor(batch_size))


def saga(lam: float | None = 1e-4, *, eta: float | None = None,
         objective: ObjectiveSpec = "logloss", batch_size: int = 1,
         **solver_kwargs: Any) -> Solver:
    """SAGA (Defazio, Bach & Lacoste-Julien 2014): the table of per-sample gradients makes the
    gradient estimate's variance vanish at the optimum, so a constant step converges linearly
    on a strongly convex smooth sum. The step is ``eta`` if given, else computed from the data
    when the solve starts as the estimators' recipe computes it (:class:`LipschitzStep`): their
    proof's ``1/(3 L_max)`` for single samples (``L_max`` the largest per-sample smoothness
    constant), ``1/L_max`` for batches."""
    from sqnopt.gradients import SAGA

    solver_kwargs.setdefault("sampling", "uniform")
    return Solver(objective=_objective(objective, lam), curvature=Identity(),
                  schedule=Fixed(batch_size), step=_variance_reduced_step(eta, batch_size),
                  gradient=SAGA(), **solver_kwargs)


def svrg(lam: float | None = 1e-4, *, eta: float | None = None,
         objective: ObjectiveSpec = "logloss", batch_size: int = 1,
         **solver_kwargs: Any) -> Solver:
    """SVRG (Johnson & Zhang 2013): a full gradient at a snapshot every pass corrects the
    minibatch gradients; epochs of shuffled samples. The constant step is ``eta`` if given,
    else computed from the data as for :func:`saga` (Johnson & Zhang's analysis takes about
    ``1/(10 L_max)``; pass ``eta`` for another step)."""
    from sqnopt.gradients import SVRG

    solver_kwargs.setdefault("sampling", "shuffle")
    return Solver(objective=_objective(objective, lam), curvature=Identity(),
                  schedule=Fixed(batch_size), step=_variance_reduced_step(eta, batch_size),
                  gradient=SVRG(), **solver_kwargs)


#: ``kappa`` of :func:`svrg_lbfgs`'s cap on the initial scaling: plain steps of at most
#: ``kappa b / L_S`` along the directions no curvature pair spans
SVRG_LBFGS_KAPPA = 0.25


def svrg_lbfgs(lam: float | None = 1e-4, *, eta: float = 0.003,
               objective: ObjectiveSpec = "logloss", batch_size: int = 64,
               hessian_batch: int | None = None, memory: int = 10, update_every: int = 10,
               max_scale: float | None | Literal["auto"] = "auto",
               **solver_kwargs: Any) -> Solver:
    r"""Stochastic L-BFGS with variance reduction (Moritz, Nishihara & Jordan 2016, Alg. 1):
    SVRG gradients, L-BFGS directions from Hessian-vector pairs and a constant step.

    SVRG gradients on batches of ``batch_size``, ``HessianLBFGS(memory, update_every)``
    directions whose pairs are Hessian-vector products on ``hessian_batch`` samples per
    iteration (``2 * batch_size`` unless given; ``update_every`` of them per pair), constant
    step ``eta``:

    .. math:: w_{t+1} = w_t - \eta H_t g_t, \qquad H_{t,0} = \gamma_t I, \qquad
              \gamma_t = \min\Big(\frac{v^\top r}{r^\top r},\;
              \frac{\kappa\, b}{\eta\, L_S}\Big).

    Along the directions the pairs measured, ``H_t`` is Newton-scaled and ``eta`` is a
    fraction of a Newton step (no data scale in it: the default 0.003 is used on every data
    set); along the others ``H_t`` is ``gamma_t I``. The papers' ``gamma_t = v'r / r'r`` is the
    inverse curvature along the newest pair, which on an ill-conditioned problem is one of the
    flattest directions the iterates move in, so those plain steps ``eta gamma_t`` grew past
    what the ``b``-sample SVRG gradient tolerates and the run diverged or stalled with ``eta``
    fixed. ``max_scale="auto"`` caps them at ``kappa b / L_S`` (``kappa = 1/4``,
    ``SVRG_LBFGS_KAPPA``; ``L_S`` the largest per-sample curvature in the window's Hessian
    sample, :class:`~sqnopt.curvature.HessianLBFGS`): ``max_scale = kappa b / eta``. A number
    sets ``max_scale`` itself; ``None`` drops the cap (the papers' method).
    ``docs/report_growing_batches.md`` has the measurements."""
    from sqnopt.curvature import HessianLBFGS
    from sqnopt.gradients import SVRG

    if max_scale == "auto":
        if not (isinstance(eta, (int, float)) and eta > 0):
            raise ValueError(f"svrg_lbfgs: eta must be a number > 0, got {eta!r}")
        max_scale = SVRG_LBFGS_KAPPA * batch_size / float(eta)
    solver_kwargs.setdefault("sampling", "shuffle")
    hb = hessian_batch if hessian_batch is not None else 2 * batch_size
    return Solver(objective=_objective(objective, lam),
                  curvature=HessianLBFGS(memory=memory, update_every=update_every,
                                         max_scale=max_scale),
                  schedule=Fixed(batch_size), step=Constant(eps=eta), gradient=SVRG(),
                  curvature_schedule=Fixed(hb), **solver_kwargs)


def _growing_batch_defaults(solver_kwargs: dict[str, Any]) -> None:
    """The settings shared by the quasi-Newton presets whose batches grow to the whole data set
    (:func:`progressive_lbfgs`, :func:`multibatch_lbfgs`), unless given: batches of distinct
    samples, ``gtol=1e-8`` (tested for free on full batches), ``report_every=100`` and, with no
    other budget, ``max_iter=1000`` (as :func:`lbfgs`)."""
    solver_kwargs.setdefault("sampling", "subset")
    solver_kwargs.setdefault("gtol", 1e-8)
    solver_kwargs.setdefault("report_every", 100)
    if not any(k in solver_kwargs for k in ("max_iter", "max_samples", "max_epochs", "max_time")):
        solver_kwargs["max_iter"] = 1000


def progressive_lbfgs(lam: float | None = 1e-4, *, objective: ObjectiveSpec = "logloss",
                      batch_size: int = 512, theta: float = 0.2, nu: float | None = 0.5,
                      memory: int = 10, step: StepRule | None = None,
                      **solver_kwargs: Any) -> Solver:
    r"""Progressive-batching L-BFGS (Bollapragada, Mudigere, Nocedal, Shi & Tang 2018): L-BFGS
    with Armijo steps on batches that sample-variance tests grow to the whole data set.

    "A progressive batching L-BFGS method for machine learning", ICML 2018:

    .. math:: w_{k+1} = w_k - \alpha_k H_k g_k, \qquad g_k = \frac{1}{|B_k|}\sum_{i \in B_k}
              \nabla F_i(w_k),

    with :math:`H_k` the L-BFGS matrix (``LBFGS(memory)``), :math:`\alpha_k` the stochastic
    Armijo step -- the first of :math:`1, \tfrac12, \tfrac14, \dots` with
    :math:`F_{B_k}(w_k - \alpha H_k g_k) \le F_{B_k}(w_k) - c_1 \alpha\, g_k^\top H_k g_k`
    (``Armijo()``, :math:`c_1 = 10^{-4}`) -- and :math:`|B_k|` grown by the inner-product and
    orthogonality tests (:class:`~sqnopt.gradients.ProgressiveBatch`, Bollapragada, Byrd &
    Nocedal 2018): when
    :math:`\operatorname{Var}_{i \in B_k}(\nabla F_i^\top g_k) / |B_k| > \theta^2
    \lVert g_k \rVert^4` or the variance of the parts of :math:`\nabla F_i` orthogonal to
    :math:`g_k` exceeds :math:`\nu^2 |B_k| \lVert g_k\rVert^2`, the next batches have the
    size that satisfies the failed tests, starting from ``batch_size`` (the paper's
    :math:`|S_0|`), drawn as subsets of distinct samples. The curvature pair of each step is
    :math:`(w_{k+1} - w_k,\; \nabla F_{B_k}(w_{k+1}) - \nabla F_{B_k}(w_k))` on the same
    batch -- the second gradient is the one the line search evaluated at the accepted point, so
    it costs nothing more -- rather than the paper's overlap of consecutive batches (Berahas,
    Nocedal & Takac 2016), which is the :func:`multibatch_lbfgs` composition. The
    batch grows geometrically as :math:`g_k` shrinks, so on strongly convex problems the method
    converges linearly and ends as full-batch L-BFGS with Armijo steps (where the line search's
    gradient is reused as the next iteration's: one pass per trial). ``objective`` must have
    the ``linear_scores`` capability (logistic, squared hinge, softmax).

    ``theta`` (0.2) and ``nu`` (0.5) are smaller than the paper's 0.9 and
    :math:`\tan 80^\circ`: the sample tests put the batch gradient in place of
    :math:`\nabla F`, and where sampling noise dominates a small batch
    (:math:`\lVert g\rVert^2 \approx \lVert\nabla F\rVert^2 + \operatorname{tr}\Sigma/|B|`,
    :math:`\Sigma` the per-sample gradients' covariance) the inner-product ratio is about one
    over the number of directions the noise spreads over and the orthogonality ratio at most
    about 1, so with the paper's values both pass on noise and the batch stops growing. On wide
    sparse data (the race's news20: 62061 features) the inner-product test kept passing at
    every ``theta`` measured (0.2 to 0.9) and only the orthogonality test with ``nu < 1`` grows
    the batch
    (``nu=None`` drops it; ``docs/report_growing_batches.md`` has the measurements of both
    parameters).

    Unless given: ``gtol=1e-8`` (tested for free on full batches, at report points before),
    ``report_every=100`` and, with no other budget, ``max_iter=1000`` (as :func:`lbfgs`).
    """
    from sqnopt.gradients import ProgressiveBatch
    from sqnopt.steps import Armijo

    _growing_batch_defaults(solver_kwargs)
    return Solver(objective=_objective(objective, lam), curvature=LBFGS(memory=memory),
                  schedule=Fixed(batch_size), step=step if step is not None else Armijo(),
                  gradient=ProgressiveBatch(theta=theta, nu=nu), **solver_kwargs)


def multibatch_lbfgs(lam: float | None = 1e-4, *, objective: ObjectiveSpec = "logloss",
                     batch_size: int = 512, growth: float = 2.0, overlap: float = 0.5,
                     memory: int = 10, step: StepRule | None = None,
                     **solver_kwargs: Any) -> Solver:
    r"""Multi-batch L-BFGS (Berahas, Nocedal & Takac 2016): L-BFGS on growing batches, each
    sharing samples with the next, on which the curvature pairs are taken.

    "A multi-batch L-BFGS method for machine learning", NIPS 2016:

    .. math:: w_{k+1} = w_k - \alpha_k H_k \nabla F_{S_k}(w_k), \qquad
              (v_k, r_k) = \big(w_{k+1} - w_k,\; \nabla F_{O_k}(w_{k+1}) -
              \nabla F_{O_k}(w_k)\big),

    with :math:`H_k` the L-BFGS matrix (``LBFGS(memory)``) and consecutive batches
    :math:`S_k, S_{k+1}` sharing the samples :math:`O_k` (:class:`~sqnopt.gradients.OverlapBatch`:
    a share ``overlap`` of each batch is kept for the next), so each curvature pair is a
    difference of gradients on the same samples and both gradients are parts of the batch
    gradients already computed: a pair costs no gradient evaluation. Batches of distinct
    samples grow as ``Geometric(batch_size, growth)`` (the schedule; pass ``schedule=`` for
    another, e.g. ``Fixed(b)`` as in the paper) to the whole data set, where the pairs are those
    of full-batch L-BFGS; the step is the Armijo search on the batch (``Armijo()``, first trial
    1) unless ``step`` is given (the paper uses a constant step). ``growth`` 2 and ``overlap``
    0.5 had the fewest passes to 1e-6 in the worst case over growth 1.1 to 2 and overlap 0.25,
    0.5 on the race's logistic problems (a sweep of both; figures and its command in
    ``docs/report_growing_batches.md``): on these sets the batch is best grown to the whole data set
    within a few iterations. ``objective`` must have the ``linear_scores`` capability.

    Unless given: ``gtol=1e-8`` (tested for free on full batches, at report points before),
    ``report_every=100`` and, with no other budget, ``max_iter=1000`` (as :func:`lbfgs`).
    """
    from sqnopt.gradients import OverlapBatch
    from sqnopt.steps import Armijo

    _growing_batch_defaults(solver_kwargs)
    schedule = solver_kwargs.pop("schedule", None)
    if schedule is None:
        schedule = Geometric(b1=float(batch_size), rate=float(growth))
    return Solver(objective=_objective(objective, lam), curvature=LBFGS(memory=memory),
                  schedule=schedule, step=step if step is not None else Armijo(),
                  gradient=OverlapBatch(overlap=overlap), **solver_kwargs)


#: Preset name -> factory returning a :class:`~sqnopt.Solver`.
PRESETS: dict[str, Callable[..., Solver]] = {
    "adagrad": adagrad,
    "asgd": asgd,
    "gd": gd,
    "lbfgs": lbfgs,
    "multibatch_lbfgs": multibatch_lbfgs,
    "pegasos": pegasos,
    "pgd": pgd,
    "progressive_lbfgs": progressive_lbfgs,
    "saga": saga,
    "seg_pm": seg_pm,
    "sgd": sgd,
    "smd": smd,
    "sqb": sqb,
    "svrg": svrg,
    "svrg_lbfgs": svrg_lbfgs,
}


def make(name: str, **kwargs: Any) -> Solver:
    """The solver of preset ``name`` (the built-ins above, or one a plugin registered) with
    ``kwargs``."""
    return Solver.preset(name, **kwargs)


@hookimpl
def sqnopt_register_presets(register: RegisterFn) -> None:
    """The built-in presets, registered through the same hook as a plugin's."""
    for name, factory in PRESETS.items():
        register(name, factory)
