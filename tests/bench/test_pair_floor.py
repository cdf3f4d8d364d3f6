"""``bench/pair_floor.py`` runs end to end on its generated problem: both variants reach every
target, the record holds their iterations, seconds and excess traces, and on the nearly
separable rows some of the formation's pairs lie under the floor (the rule has work to skip)."""

from __future__ import annotations

import json
from pathlib import Path

import pair_floor  # bench/pair_floor.py (bench/ is on pytest's pythonpath)


def test_the_pair_floor_benchmark_runs(tmp_path: Path) -> None:
    out = tmp_path / "record.json"
    assert pair_floor.main(["--problems", "generated", "--rounds", "1",
                            "--record", str(out)]) == 0
    rec = json.loads(out.read_text())
    (row,) = rec["problems"]
    assert row["problem"] == "generated"
    for variant in ("floor", "every pair"):
        its = row["iterations"][variant]
        assert all(isinstance(its[t], int) and its[t] >= 1 for t in ("0.01", "0.0001", "1e-06"))
        assert set(row["seconds"][variant]) == {"0.01", "0.0001", "1e-06"}
        assert row["excess"][variant][-1] <= 1e-6
    n = len(row["excess"]["floor"])
    assert len(row["pairs_under_floor"]) == len(row["rows_under_floor"]) == n
    assert max(row["pairs_under_floor"]) > 0.0
