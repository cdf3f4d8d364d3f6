"""The progress bar (a Solver callback) and the matplotlib figures."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sqnopt import Solver
from sqnopt.datasets import make_boxes
from sqnopt.progress import ProgressBar, format_count, format_seconds
from sqnopt.solver import History


class _TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_is_off_when_not_a_terminal() -> None:
    out = io.StringIO()
    bar = ProgressBar(total=100, stream=out, delay=0.0, min_interval=0.0, show_final=True)
    assert not bar.enabled
    bar.update(50)
    bar.close()
    assert out.getvalue() == ""


def test_progress_bar_on_a_terminal_shows_samples_objective_and_eta(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TERM", raising=False)
    out = _TTY()
    bar = ProgressBar(total=1000, stream=out, delay=0.0, min_interval=0.0)
    assert bar.enabled
    bar.set_objective(0.123456)
    bar.update(250)
    text = out.getvalue()
    assert text.startswith("\r") and "25%" in text and "250/1k samples" in text
    assert "F=0.1235" in text and "ETA" in text
    bar.close()
    final = out.getvalue().rsplit("\r", 1)[1]
    assert final.endswith("\n") and "ETA" not in final


def test_progress_bar_waits_for_long_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TERM", raising=False)
    out = _TTY()
    bar = ProgressBar(total=10, stream=out, delay=3600.0)
    bar.update(5)
    bar.close()
    assert out.getvalue() == ""                     # a short run stays quiet
    out2 = _TTY()
    bar2 = ProgressBar(total=10, stream=out2, delay=3600.0, show_final=True)
    bar2.update(10)
    bar2.close()
    assert "100%" in out2.getvalue()               # ... unless asked for a final line


def test_progress_bar_as_solver_callback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TERM", raising=False)
    X, y = make_boxes(500, 4, random_state=0)
    out = _TTY()
    bar = ProgressBar(total=5000, stream=out, delay=0.0, min_interval=0.0)
    res = Solver("logloss", max_samples=5000, report_every=100, callback=bar,
                 random_state=0).fit(X, y)
    bar.close()
    assert res.n_samples == 5000 and bar.samples == 5000
    assert "100%" in out.getvalue() and "F~" in out.getvalue()   # minibatch-objective estimate


def test_formatting_helpers() -> None:
    assert format_count(999) == "999" and format_count(1234567) == "1.23M"
    assert format_seconds(3.25) == "3.2s" and format_seconds(75) == "1:15"
    assert format_seconds(3725) == "1:02:05" and format_seconds(float("nan")) == "?"


# ---------------------------------------------------------------- plotting
@pytest.fixture
def plotting() -> object:
    pytest.importorskip("matplotlib")
    import sqnopt.plotting

    return sqnopt.plotting


def _history(scale: float) -> History:
    it = np.array([0, 10, 100, 1000])
    return History(iteration=it, samples=5 * it, effective_passes=5 * it / 1e3,
                   time=it * 1e-4, objective=scale / (1 + it), grad_norm=np.full(4, np.nan))


def test_plot_histories_log_axes_one_line_per_method(plotting: Any, tmp_path: Path) -> None:
    fig = plotting.plot_histories({"oLBFGS": _history(1.0), "SGD": _history(3.0).as_dict()})
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert [line.get_label() for line in ax.get_lines()] == ["oLBFGS", "SGD"]
    assert len(ax.get_lines()[0].get_xdata()) == 3           # x = 0 dropped on a log axis
    out = plotting.save_figure(fig, tmp_path / "sub" / "conv.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    fig2 = plotting.plot_histories([("a", _history(1.0))], x="time", logx=False, subtract=0.0)
    assert fig2.axes[0].get_xscale() == "linear"
    with pytest.raises(ValueError):
        plotting.plot_histories({})
    with pytest.raises(KeyError, match="no 'samples'"):
        plotting.plot_histories({"a": {"objective": [1.0]}})


def test_plot_histograms_and_binned_fractions(plotting: Any, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    fig = plotting.plot_histograms({"RES": rng.lognormal(-10, 0.2, 200),
                                    "SGD": rng.lognormal(-4, 0.2, 200)}, logx=True)
    assert fig.axes[0].get_xscale() == "log"
    plotting.save_figure(fig, tmp_path / "h.png")
    fig = plotting.plot_binned_fractions({"a": [0.05, 0.95, 0.97], "b": [0.5]})
    heights = [p.get_height() for p in fig.axes[0].patches]
    assert len(heights) == 20 and sum(heights) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        plotting.plot_binned_fractions({"a": [0.1]}, edges=[1.0, 0.0])
