"""``bench/parallel_passes.py`` runs (its smoke mode) and reports identical results for every
thread count; the speed-ups themselves are measured by the benchmark, not asserted here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def test_passes_and_fits_smoke_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sklearn")
    from parallel_passes import main

    record = tmp_path / "r.json"
    assert main(["--quick", "--threads", "1", "2", "--record", str(record)]) == 0
    out = capsys.readouterr().out
    assert "goal: full-batch pass on ctr1e6" in out and "load average" in out
    rec = json.loads(record.read_text())
    assert rec["passes"][0]["identical"] is True
    assert rec["fits"][0]["identical_coef"] is True
    assert rec["passes"][0]["blocks"]["loss+gradient"] > 1      # the pass does split
    assert len(record.read_bytes()) < 20_000


def test_break_even_smoke_run(capsys: pytest.CaptureFixture[str]) -> None:
    from parallel_passes import main

    assert main(["--break-even", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "round trip beyond the work" in out and "| sparse (10) | gradient | 16000 |" in out
