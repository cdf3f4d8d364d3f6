"""scikit-learn's estimator conformance suite for ``SQNRegressor`` with each regression loss at
the defaults (``curvature="auto"``), and with a stochastic curvature model (``"identity"``: SGD /
SAGA on small data) that runs a fixed budget."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("sklearn")

from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from sqnopt.estimators import SQNRegressor  # noqa: E402
from sqnopt.estimators._classifier import SQNConvergenceWarning  # noqa: E402

#: As for the classifier (tests/estimators/test_estimator_checks.py): a stochastic solver's
#: zero / integer sample weights equal removing / repeating rows only in expectation.
STOCHASTIC_XFAIL = {
    name: ("stochastic solver: a zero / integer sample weight equals removing / repeating the "
           "sample only in expectation over the minibatch draws, not to rtol 1e-7 (as for "
           "scikit-learn's SGDRegressor)")
    for name in ("check_sample_weight_equivalence_on_dense_data",
                 "check_sample_weight_equivalence_on_sparse_data")}

ESTIMATORS = [
    SQNRegressor(loss="squared_error", tol=1e-10),
    SQNRegressor(loss="huber", tol=1e-10),
    SQNRegressor(loss="poisson", tol=1e-10),
    SQNRegressor(loss="squared_error", curvature="identity", tol=None, max_iter=30,
                 random_state=0),
]


def _expected_failed_checks(est: SQNRegressor) -> dict[str, str]:
    return STOCHASTIC_XFAIL if est.curvature == "identity" else {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_regressor(estimator: SQNRegressor, check: object) -> None:
    # toy data of the checks (20 samples, features centred at 100): a convergence warning
    # there is an honest outcome, not the subject of the checks
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SQNConvergenceWarning)
        check(estimator)  # type: ignore[operator]
