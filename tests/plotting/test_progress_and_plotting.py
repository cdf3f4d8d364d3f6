"""The progress bar (a Solver callback) and the matplotlib figures."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sqnopt import Solver
from sqnopt.datasets import make_boxes
from sqnopt.progress import ProgressBar
from sqnopt.solver import History


class _TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_never_draws_when_disabled() -> None:
    out = _TTY()
    bar = ProgressBar(total=100, stream=out, enabled=False, delay=0.0, show_final=True)
    assert not bar.enabled
    bar.update(50)
    bar.close()
    assert out.getvalue() == ""


def test_progress_bar_on_a_terminal_shows_rate_eta_and_objective(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TERM", raising=False)
    out = _TTY()
    bar = ProgressBar(total=1000, stream=out, delay=0.0, label="train")
    assert bar.mode == "terminal"
    bar.set_objective(0.123456)
    bar.update(250, force=True)
    text = out.getvalue()
    assert text.startswith("\r") and "train:" in text and "25%" in text
    assert "250/1.00k" in text and "samples/s" in text and "F=0.12346" in text
    assert "<" in text                                   # tqdm's elapsed<remaining (the ETA)
    bar.update(1000)
    bar.close()
    final = out.getvalue().rsplit("\r", 1)[1]
    assert final.endswith("\n") and "100%" in final


def test_progress_bar_without_a_total_shows_count_and_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TERM", raising=False)
    out = _TTY()
    bar = ProgressBar(stream=out, delay=0.0)
    bar.update(5000, force=True)
    bar.close()
    assert "5.00k samples" in out.getvalue() and "%" not in out.getvalue()


def test_progress_bar_in_a_log_writes_plain_lines() -> None:
    out = io.StringIO()                                  # not a terminal: a log file, CI
    bar = ProgressBar(total=100, stream=out, delay=0.0, log_interval=0.0)
    assert bar.mode == "log" and bar.enabled
    for n in (10, 50, 100):
        bar.update(n)
    bar.close()
    text = out.getvalue()
    assert "\r" not in text and text.endswith("\n")
    lines = text.splitlines()
    assert len(lines) >= 3 and "100%" in lines[-1] and all(line.strip() for line in lines)


def test_progress_bar_in_a_notebook_uses_tqdm_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    bar = ProgressBar(total=10, stream=io.StringIO(), enabled=None, delay=0.0)
    assert bar.mode == "notebook"      # tqdm.auto: the widget in Jupyter, the text bar elsewhere
    bar.close()


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
    assert "100%" in out2.getvalue() and out2.getvalue().endswith("\n")  # ... unless asked


def test_progress_bar_as_solver_callback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TERM", raising=False)
    X, y = make_boxes(500, 4, random_state=0)
    out = _TTY()
    bar = ProgressBar(total=5000, stream=out, delay=0.0)
    res = Solver("logloss", max_samples=5000, report_every=100, callback=bar,
                 random_state=0).fit(X, y)
    bar.close()
    assert res.n_samples == 5000 and bar.samples == 5000
    assert "100%" in out.getvalue() and "F~" in out.getvalue()   # minibatch-objective estimate


def test_trainer_verbose_draws_and_verbose_zero_is_silent(monkeypatch: pytest.MonkeyPatch) -> None:
    import functools
    import sys

    import sqnopt.training
    from sqnopt.training import Trainer

    monkeypatch.delenv("TERM", raising=False)
    monkeypatch.setattr(sqnopt.training, "ProgressBar",
                        functools.partial(ProgressBar, delay=0.0))   # draw even a short run
    X, y = make_boxes(300, 3, random_state=0)
    for verbose, drawn in ((0, False), (1, True)):
        err = _TTY()
        monkeypatch.setattr(sys, "stderr", err)
        Trainer(verbose=verbose, random_state=0).fit(X, y)
        assert ("samples" in err.getvalue()) is drawn, err.getvalue()


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
    # the start F(w0) at x = 0 stays: the x axis is linear up to its first decade (symlog)
    assert ax.get_xscale() == "symlog" and ax.get_yscale() == "log"
    assert [line.get_label() for line in ax.get_lines()] == ["oLBFGS", "SGD"]
    first = ax.get_lines()[0]
    assert len(first.get_xdata()) == 4 and first.get_xdata()[0] == 0
    assert first.get_ydata()[0] == 1.0                       # F(w0)
    assert ax.get_xlim()[0] == 0.0
    out = plotting.save_figure(fig, tmp_path / "sub" / "conv.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    later = {k: v[1:] for k, v in _history(1.0).as_dict().items()}   # no x = 0: plain log
    assert plotting.plot_histories({"a": later}).axes[0].get_xscale() == "log"
    fig2 = plotting.plot_histories([("a", _history(1.0))], x="time", logx=False, subtract=0.0)
    assert fig2.axes[0].get_xscale() == "linear"
    with pytest.raises(ValueError):
        plotting.plot_histories({})
    with pytest.raises(KeyError, match="no 'samples'"):
        plotting.plot_histories({"a": {"objective": [1.0]}})


def test_plot_histories_legend_fits_many_runs_and_long_labels(plotting: Any,
                                                              tmp_path: Path) -> None:
    runs = {f"run {k}: quadratic_bound(inner_iter=5, solver='cg') | geometric(b1=100, "
            f"rate=1.5) | constant(eps=1.0)": _history(1.0 + k) for k in range(14)}
    fig = plotting.plot_histories(runs)
    ax = fig.axes[0]
    assert ax.get_legend() is None and len(fig.legends) == 1    # beside the axes, not on them
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert len(texts) == 14 and all(max(map(len, t.split("\n"))) <= 32 for t in texts)
    assert {line.get_linestyle() for line in ax.get_lines()} == {"-", "--"}  # > 10 runs
    path = plotting.save_figure(fig, tmp_path / "many.png")
    fig.canvas.draw()
    legend_box = fig.legends[0].get_window_extent()
    assert legend_box.x1 <= fig.bbox.x1 + 1 and legend_box.y0 >= fig.bbox.y0 - 1  # inside
    assert path.stat().st_size > 0
    few = plotting.plot_histories({"a": _history(1.0), "b": _history(2.0)})
    assert few.axes[0].get_legend() is not None and not few.legends


def test_plot_histories_narrow_log_range_has_plain_tick_labels(plotting: Any) -> None:
    h = {"iteration": [0, 1, 2], "samples": [0, 10, 100], "effective_passes": [0, 1, 2],
         "time": [0, 1, 2], "objective": [0.69, 0.4, 0.33]}
    fig = plotting.plot_histories({"a": h})
    fig.canvas.draw()
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels() if t.get_text()]
    assert labels and all("times" not in t and "^" not in t for t in labels), labels


def test_plot_histories_with_nothing_to_show_is_an_error(plotting: Any) -> None:
    """A history whose objective is NaN throughout (or not positive, on a log axis) used to
    give an empty plot without a word."""
    h = _history(1.0).as_dict()
    h["objective"] = [float("nan")] * 4
    with pytest.raises(ValueError, match="nothing to plot: no history has a finite 'objective'"):
        plotting.plot_histories({"a": h})
    h["objective"] = [0.0, -1.0, 0.0, -2.0]
    with pytest.raises(ValueError, match="logy=False"):
        plotting.plot_histories({"a": h})
    assert len(plotting.plot_histories({"a": h}, logy=False).axes[0].get_lines()[0]
               .get_xdata()) == 4


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
