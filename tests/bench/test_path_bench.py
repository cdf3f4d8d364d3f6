"""``bench/path.py`` runs end to end on small data: the dense least-squares contenders (the
Gram path, the same path on the rows, cold fits, scikit-learn's path functions and
cross-validation) and the logistic ones with ``--cv``, writing a record of every contender."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import path as path_bench  # bench/path.py (bench/ is on pytest's pythonpath)


@pytest.mark.parametrize("penalty", ["l1", "elasticnet"])
def test_least_squares_paths_and_their_cross_validation_run(tmp_path: Path,
                                                            penalty: str) -> None:
    out = tmp_path / "record.json"
    assert path_bench.main(["--datasets", "lasso-300x20", "--penalty", penalty,
                            "--n-alphas", "4", "--cv", "2", "--record", str(out)]) == 0
    record = json.loads(out.read_text())
    seconds = record["datasets"][0]["seconds"]
    name = "lasso_path" if penalty == "l1" else "enet_path"
    assert {"sqnopt path", "sqnopt path on the rows", "sqnopt cold", f"sklearn {name}",
            "cv: sqnopt PathCV, 2 folds"} <= set(seconds)
    assert all(v > 0 for v in seconds.values())


def test_logistic_paths_run_with_cross_validation(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from sklearn.datasets import make_classification

    X, y = make_classification(300, 8, random_state=0)
    monkeypatch.setattr(path_bench, "_load", lambda name: (X, y))
    out = tmp_path / "record.json"
    assert path_bench.main(["--datasets", "small", "--penalty", "l2", "--n-alphas", "3",
                            "--cv", "2", "--record", str(out)]) == 0
    seconds = json.loads(out.read_text())["datasets"][0]["seconds"]
    assert {"sqnopt path", "cv: sqnopt PathCV, 2 folds",
            "cv: sklearn LogisticRegressionCV lbfgs, 2 folds"} <= set(seconds)
