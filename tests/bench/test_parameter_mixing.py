"""bench/parameter_mixing.py runs end to end on small data, in both modes: the sequential
recipe, the recipe's mixing and emulated shards (iterative), and one fit on all the rows
against the average of the shards' fits (one-shot), each scored on held-out rows; every
setting it changes is restored."""

from __future__ import annotations

import json
import math
from pathlib import Path

import parameter_mixing

from sqnopt import recipes
from sqnopt.training import _streaming, _trainer


def _settings() -> tuple[object, ...]:
    return (recipes.LARGE_ROWS, recipes.LARGE_NNZ, recipes.MIX_MIN_ROWS,
            recipes.MIX_MIN_VALUES_PER_PARAM, _streaming.IN_MEMORY_CHUNK,
            _trainer._ChunkedRun.chunk)


def _loss_ok(part: dict[str, object]) -> bool:
    loss = part["loss"]
    return isinstance(loss, float) and math.isfinite(loss) and 0.0 < loss < math.log(2.0)


def test_quick_iterative_run(tmp_path: Path) -> None:
    before = _settings()
    out = tmp_path / "mixing.json"
    assert parameter_mixing.main(["--quick", "--passes", "2", "--shards", "2", "3",
                                  "--record", str(out)]) == 0
    assert _settings() == before
    record = json.loads(out.read_text())
    assert record["mode"] == "iterative"
    (row,) = record["results"]
    for key in ("sequential", "recipe", "emulated_2", "emulated_3"):
        assert _loss_ok(row[key]), key
    # the emulation of two shards is the recipe's mixing, to rounding
    assert math.isclose(row["emulated_2"]["loss"], row["recipe"]["loss"], rel_tol=1e-3)
    assert row["recipe"]["loss"] != row["sequential"]["loss"]     # the recipe mixed
    assert record["command"].endswith("--record " + str(out))


def test_quick_one_shot_run(tmp_path: Path) -> None:
    before = _settings()
    out = tmp_path / "mixing.json"
    assert parameter_mixing.main(["--quick", "--mode", "one-shot", "--passes", "1",
                                  "--shards", "2", "--record", str(out)]) == 0
    assert _settings() == before
    record = json.loads(out.read_text())
    (row,) = record["results"]
    assert row["passes"] == 1
    for part in (row["all_rows"], row["shards_2"]):
        assert _loss_ok(part)
    assert len(row["shards_2"]["seconds"]) == 2
