r"""Ridge regression's one Newton step, taken directly: the normal equations.

For the squared error the objective of :class:`~sqnopt.estimators.SQNRegressor`,

.. math:: F(w, b) = \frac{\lambda}{2}\|w\|^2 + \frac{1}{\sum_i c_i}\sum_i c_i
          \frac{(x_i \cdot w + b - y_i)^2}{2},

is a quadratic, and where ``curvature="auto"`` picks Newton's method for it
(:func:`sqnopt.recipes.default_curvature`: the Hessian costs at most a few passes over rows in
memory) the driver's whole solve is one Newton step from zero -- the Hessian formed and
factored, the step solving the quadratic exactly. Here that step is taken without the driver:
with ``v = c / sum(c)``, the weighted means ``x_bar = X'v`` and ``y_bar = v'y`` centre the
rows (the intercept, unregularised, is then ``y_bar - x_bar . w``), and ``w`` solves

.. math:: (X_c' V X_c + \lambda I)\, w = X_c' V (y - \bar y)

by Cholesky (LAPACK's ``posv``), ``X_c = X - 1 \bar x'`` -- what scikit-learn's
``Ridge(solver="cholesky")`` computes. The same minimiser as the driver's Newton step, for a
fraction of the work around it: a small fit is mostly the driver's Python set-up (the
recipe, the solver, its state and result), which the step itself does not need.

Only the estimator's defaults take it (the loss ``"squared_error"``, an L2 or no penalty,
``curvature``, ``gradient``, ``schedule``, ``step`` and ``sampling`` ``"auto"``, no projection,
averaging, callback, progress output or history, early stopping ``"auto"`` or off, rows in
memory, dense and not so many that the large-data recipe takes them, and ``alpha > 0``); any
other setting, and a system LAPACK finds not positive definite, runs the driver, which
reports what it meets.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from numpy.typing import NDArray

from sqnopt.estimators._composite import CompositeFit
from sqnopt.model import LinearModel
from sqnopt.solver._blas import one_blas_thread

FloatArray = NDArray[np.float64]

__all__ = ["EXACT_PATH", "EXACT_REASON", "exact_ridge"]

#: ``fit_path_`` of a fit that took the step directly, and why (``fit_path_reason_``)
EXACT_PATH = "normal equations"
EXACT_REASON = ("squared error with an L2 penalty on dense rows whose Hessian costs a few "
                "passes: curvature='auto' solves it by one Newton step, taken directly "
                "(the normal equations, by Cholesky)")

#: the estimator's settings the direct step honours, at these values only
_AUTO = ("curvature", "gradient", "schedule", "step", "sampling")


def _at_defaults(est: Any) -> bool:
    return (isinstance(est.loss, str) and est.loss == "squared_error"
            and all(isinstance(getattr(est, k, "auto"), str) and getattr(est, k, "auto") == "auto"
                    for k in _AUTO)
            and est.projection is None and not est.average and est.callback is None
            and not est.verbose and est.history_every is None
            and (est.early_stopping is False or est.early_stopping == "auto"))


@one_blas_thread
def exact_ridge(est: Any, X: Any, y: Any, sample_weight: Any) -> CompositeFit | None:
    """The fit of ``est`` (an :class:`~sqnopt.estimators.SQNRegressor` whose ``X``, ``y`` its
    ``_validate`` returned) by the normal equations, or ``None`` when the driver runs
    instead (see the module docstring). The data are checked as the driver checks them
    (:func:`sqnopt.data.check_matrix`, :func:`sqnopt.data.check_targets`, the sample
    weights), the settings as its :func:`~sqnopt.training._setup.check_settings` does; BLAS on
    one thread, as in the driver's fits."""
    if not _at_defaults(est) or sp.issparse(X) or not isinstance(X, np.ndarray):
        return None
    from sqnopt.curvature import Newton
    from sqnopt.data import check_matrix, check_targets
    from sqnopt.objectives import SquaredError
    from sqnopt.recipes import default_curvature
    from sqnopt.training._setup import check_settings, loss_objective, streaming_regime
    from sqnopt.training._weights import regression_weights

    trainer = est._get_trainer(keep=False)
    check_settings(trainer)
    objective = loss_objective(trainer)
    lam = float(objective.lam)
    if not (type(objective) is SquaredError and lam > 0):
        return None
    stats: dict[str, float] = {}
    Xc = check_matrix(X, fit=True, stats=stats)
    if streaming_regime(trainer, Xc, "memory"):
        return None
    choice = default_curvature(objective, Xc, 1, sum_squares=stats.get("sum_squares"))
    if not isinstance(choice, Newton):
        return None
    N = Xc.shape[0]
    yarr = check_targets(y, n_samples=N)
    weights = regression_weights(sample_weight, N, None)
    start = time.perf_counter()
    solved = _solve(np.asarray(Xc, dtype=np.float64), yarr, weights / float(np.sum(weights)),
                    lam, bool(est.fit_intercept))
    if solved is None:
        return None
    coef, intercept = solved
    model = LinearModel(coef=coef[None, :], intercept=np.array([intercept]), classes=np.empty(0),
                        strategy="regression", loss=objective.name, probabilistic=False,
                        info={"objective": objective.describe(), "method": EXACT_PATH,
                              "fit_intercept": bool(est.fit_intercept), "strategy": "regression",
                              "wall_time": time.perf_counter() - start},
                        link=objective.link)
    return CompositeFit(model_=model, converged_=est.tol is not None, n_iter_=1)


def _solve(X: FloatArray, y: FloatArray, v: FloatArray, lam: float,
           intercept: bool) -> tuple[FloatArray, float] | None:
    """``(w, b)`` minimising ``lam/2 |w|^2 + sum_i v_i (x_i . w + b - y_i)^2 / 2`` (``v``
    summing to 1; ``b = 0`` without ``intercept``), or ``None`` when the system is not
    numerically positive definite or the solution not finite."""
    if intercept:
        xm = v @ X
        ym = float(v @ y)
        Xc = X - xm
        r = y - ym
    else:
        xm, ym, Xc, r = None, 0.0, X, y
    Xv = Xc * v[:, None]
    H = Xv.T @ Xc
    H.flat[:: H.shape[0] + 1] += lam
    rhs = Xv.T @ r
    try:
        w = sla.solve(H, rhs, assume_a="pos", check_finite=False, overwrite_a=True,
                      overwrite_b=True)
    except (np.linalg.LinAlgError, sla.LinAlgError, ValueError):
        return None
    w = np.asarray(w, dtype=np.float64)
    b = ym - float(xm @ w) if xm is not None else 0.0
    if not (np.all(np.isfinite(w)) and np.isfinite(b)):
        return None
    return w, b
