"""``bench/huber_scale.py`` runs end to end on a small generated set: every contender reads the
file and fits, the record holds each one's time and held-out losses, and the default's fit
(which starts at the targets' weighted median) lands its intercept near the targets' offset."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import huber_scale  # bench/huber_scale.py (bench/ is on pytest's pythonpath)


# the fit from 0 on wide sparse rows: truncated Newton's first direction meets a Hessian with no
# curvature along the intercept (every residual beyond epsilon) and stops with this warning --
# what the default's start at the median avoids
@pytest.mark.filterwarnings("ignore::sqnopt.SQNConvergenceWarning")
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # SGD, 3000 rows
def test_the_huber_scale_benchmark_runs(tmp_path: Path) -> None:
    pytest.importorskip("sklearn")
    out = tmp_path / "record.json"
    assert huber_scale.main(["--rows", "3000", "--offset", "500", "--from-zero",
                             "--record", str(out)]) == 0
    results = {r["contender"]: r for r in json.loads(out.read_text())["results"]}
    assert set(results) == {"SQNRegressor(loss='huber')", "SQNRegressor(loss='huber'), from 0",
                            "sklearn SGDRegressor(loss='huber')"}
    for r in results.values():
        assert r["seconds"] > 0 and math.isfinite(r["heldout_huber"]), r
    default = results["SQNRegressor(loss='huber')"]
    assert abs(default["intercept"] - 500) < 50 and default["heldout_mae"] < 50
