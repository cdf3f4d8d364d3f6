"""scikit-learn's estimator conformance suite for every estimator x loss x registered curvature.

The curvature models are whatever the registry holds when the tests run (identity now; the BFGS
family and plugins as they are registered). A (loss, curvature) pair the framework rejects
(e.g. a non-smooth loss with a model that needs secant pairs) is not an estimator one can build,
so it is left out of the parametrization; ``test_incompatible_pairs_are_rejected`` checks that
the rejection is the framework's own error.
"""

from __future__ import annotations

import pytest

pytest.importorskip("sklearn")

from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from sqnopt.estimators import SQNClassifier  # noqa: E402
from sqnopt.interfaces import CurvatureModel, Objective  # noqa: E402
from sqnopt.registry import get_registry  # noqa: E402
from sqnopt.solver import IncompatibleComponentsError, Solver  # noqa: E402
from sqnopt.solver._solver import resolve_component  # noqa: E402

#: Checks expected to fail, with the reason (scikit-learn reports them as xfail).
EXPECTED_FAILED_CHECKS = {
    "check_sample_weight_equivalence_on_dense_data": (
        "stochastic solver: a zero / integer sample weight equals removing / repeating the "
        "sample only in expectation over the minibatch draws (rows are drawn by index, so "
        "repeated rows change the random stream), not to rtol 1e-7; the same holds for "
        "scikit-learn's SGDClassifier"),
    "check_sample_weight_equivalence_on_sparse_data": (
        "stochastic solver: see check_sample_weight_equivalence_on_dense_data"),
}

#: scikit-learn checks of what the *algorithm* reaches rather than of the estimator's API. For a
#: curvature model from a third-party plugin they are xfailed (non-strict: a pass is reported as
#: XPASS); every API check still applies to it.
THIRD_PARTY_QUALITY_CHECKS = {
    "check_class_weight_classifiers": (
        "accuracy on noisy blobs with class weights 1000 vs 1e-4 (at least 87 % predicted as the "
        "heavy class): an outcome of the plugin's algorithm, not of the estimator API. The example "
        "plugin (Barzilai-Borwein scaling, plugins/sqnopt-bbscale) ends at 52-56 %: its step "
        "scale follows the heavy class's curvature and the fit stops near w = 0"),
}

LOSSES = ("logloss", "binary_logistic", "squared_hinge", "hinge")

#: Secant-pair (BFGS-family) models run with a curvature safeguard. Their defaults are the
#: papers' algorithms (only pairs with v'r <= 0 are skipped), which on these 2-feature toy sets
#: with lam = 1e-4 take pairs whose only curvature is lam (no margin violator in the batch):
#: gamma_t = v'r / r'r = 1 / lam = 1e4 in oLBFGS, and oBFGS's H grows to match, and the next
#: noisy gradient is amplified 1e4-fold -- the instability RES was designed against (Mokhtari &
#: Ribeiro 2014, Fig. 4). Skipping pairs with v'r <= 1e-2 |v|^2 (docs/curvature.md) is what a
#: user should do on such data; the check then tests the estimator, not the papers' defaults.
SECANT_SAFEGUARD = {"min_curvature": 1e-2}


def _compatible(loss: str, curvature: str) -> bool:
    objective = resolve_component("objective", loss, Objective)
    model = resolve_component("curvature", curvature, CurvatureModel)
    try:
        Solver(objective, model)
    except IncompatibleComponentsError:
        return False
    return True


def _curvature_spec(name: str) -> str | tuple[str, dict[str, float]]:
    model = resolve_component("curvature", name, CurvatureModel)
    if model.needs_secant_pair and "min_curvature" in model.params():
        return (name, SECANT_SAFEGUARD)
    return name


def _estimators() -> list[SQNClassifier]:
    out = []
    for curvature in get_registry().names("curvature"):
        for loss in LOSSES:
            if _compatible(loss, curvature):
                out.append(SQNClassifier(loss=loss, curvature=_curvature_spec(curvature),
                                         random_state=0))
    return out


ESTIMATORS = _estimators()


def test_every_registered_curvature_model_is_exercised() -> None:
    names = set(get_registry().names("curvature"))
    covered = {est.curvature if isinstance(est.curvature, str) else est.curvature[0]
               for est in ESTIMATORS}
    assert names == covered, f"curvature models without a compatible loss: {names - covered}"


def test_incompatible_pairs_are_rejected() -> None:
    for curvature in get_registry().names("curvature"):
        for loss in LOSSES:
            if not _compatible(loss, curvature):
                import numpy as np

                est = SQNClassifier(loss=loss, curvature=curvature)
                with pytest.raises(IncompatibleComponentsError):
                    est.fit(np.eye(4), [0, 1, 0, 1])


def _expected_failed_checks(est: SQNClassifier) -> dict[str, str]:
    """SQB's automatic batches (gradients from 100 samples, the bound on 1000) cover the whole
    of scikit-learn's small check sets, and a batch of size N is the data set itself: the run is
    deterministic full-batch, so the sample-weight equivalence must hold (it is not xfailed).
    A model registered by a plugin other than sqnopt's own also gets THIRD_PARTY_QUALITY_CHECKS
    (only visible with such a plugin installed, e.g. ``pip install ./plugins/sqnopt-bbscale``)."""
    curvature = est.curvature if isinstance(est.curvature, str) else est.curvature[0]
    third_party = not get_registry().get("curvature", curvature).source.startswith("sqnopt.")
    extra = THIRD_PARTY_QUALITY_CHECKS if third_party else {}
    if resolve_component("curvature", curvature, CurvatureModel).needs_curvature_batch:
        return dict(extra)
    return EXPECTED_FAILED_CHECKS | extra


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator: SQNClassifier, check: object) -> None:
    check(estimator)  # type: ignore[operator]
