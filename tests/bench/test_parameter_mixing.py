"""bench/parameter_mixing.py runs end to end on small data: one fit on all the rows and the
average of the shards' fits, each scored on held-out rows; the regime's thresholds restored."""

from __future__ import annotations

import json
import math
from pathlib import Path

import parameter_mixing

from sqnopt import recipes


def test_quick_run_writes_both_losses(tmp_path: Path) -> None:
    before = recipes.LARGE_ROWS, recipes.LARGE_NNZ
    out = tmp_path / "mixing.json"
    assert parameter_mixing.main(["--quick", "--passes", "1", "--shards", "2",
                                  "--record", str(out)]) == 0
    assert (recipes.LARGE_ROWS, recipes.LARGE_NNZ) == before
    record = json.loads(out.read_text())
    (row,) = record["results"]
    assert row["passes"] == 1
    for part in (row["all_rows"], row["shards_2"]):
        assert math.isfinite(part["loss"]) and 0.0 < part["loss"] < math.log(2.0)
    assert len(row["shards_2"]["seconds"]) == 2
    assert record["command"].endswith("--record " + str(out))
