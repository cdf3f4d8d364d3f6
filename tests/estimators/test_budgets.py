"""Honest budgets: ``n_iter_`` counts the passes a fit made (``SQNClassifier(max_iter=10**12,
tol=None)`` returned after a second reporting ``n_iter_ == 10**12``: its Newton solve had reached
working precision after seven passes), and a budget the solver's counters cannot hold is refused
up front with a clear error instead of an overflow inside the run."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from sklearn.datasets import make_classification

from sqnopt import LogLoss, Solver, SQNClassifier


def _data() -> tuple[np.ndarray, np.ndarray]:
    return make_classification(400, 6, n_informative=4, random_state=0)


def _passes(clf: SQNClassifier, n: int) -> int:
    return max(math.ceil(r.n_samples / n - 1e-9) for r in clf._trainer.results_)


@pytest.mark.parametrize("max_iter", [10**12, 50])
def test_n_iter_counts_the_passes_made_when_a_deterministic_fit_ends_early(
        max_iter: int) -> None:
    X, y = _data()
    clf = SQNClassifier(max_iter=max_iter, tol=None).fit(X, y)
    res = clf._trainer.results_[0]
    assert res.status.value == "precision"          # nothing more to gain: it stopped
    assert clf.n_iter_ == _passes(clf, len(y)) < 50
    assert not clf.converged_                       # tol=None: no tolerance was tested


def test_n_iter_is_the_budget_when_the_budget_is_run() -> None:
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # a short stochastic budget: unconverged
        for max_iter, expect in ((3, 3), (2.5, 3)):
            clf = SQNClassifier(curvature="identity", max_iter=max_iter, tol=None,
                                random_state=0).fit(X, y)
            assert clf.n_iter_ == expect
            assert _passes(clf, len(y)) >= expect


@pytest.mark.parametrize("budget", [{"max_epochs": 1e300}, {"max_epochs": 3e16},
                                    {"max_iter": 2**63}, {"max_samples": 2**63 - 1}])
def test_a_budget_beyond_the_counters_is_refused(budget: dict[str, Any]) -> None:
    X, y = _data()
    y = np.where(y == 1, 1, -1)
    s = Solver(LogLoss(lam=1e-3), "lbfgs", random_state=0)
    st = s.init_state(X, y)
    s.run(st, max_iter=2)                           # counters already moved: the stop is
    with pytest.raises(ValueError, match="more .*than the solver can count"):
        s.run(st, **budget)                         # beyond 2**63 - 1 for each
    if "max_samples" not in budget:                 # (from 0, that one can be counted)
        with pytest.raises(ValueError, match="than the solver can count"):
            Solver(LogLoss(lam=1e-3), "lbfgs", **budget).fit(X, y)


def test_estimator_and_command_line_refuse_an_uncountable_budget(tmp_path: Any,
                                                                 capsys: Any) -> None:
    from sklearn.datasets import dump_svmlight_file

    from sqnopt.cli import main

    X, y = _data()
    with pytest.raises(ValueError, match=r"max_epochs=1e\+300 passes over 400 samples is more "
                                         r"than the solver can count"):
        SQNClassifier(max_iter=1e300, tol=None).fit(X, y)
    dump_svmlight_file(X, y, str(tmp_path / "d.svm"), zero_based=False)
    code = main(["train", str(tmp_path / "d.svm"), "--max-epochs", "1e300", "--tol", "none",
                 "--progress", "never", "--model", str(tmp_path / "m.npz"),
                 "--history", str(tmp_path / "h.json")])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "than the solver can count" in err, err
