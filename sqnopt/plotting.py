"""Convergence figures in the style of the papers (needs ``pip install 'sqnopt[plot]'``).

* :func:`plot_histories`: objective vs samples processed (``Lt``), effective passes or time,
  one line per method, logarithmic axes (papers 000/003 Figs. 1-2, paper 004 Fig. 1);
* :func:`plot_histograms`: distribution of a final value (objective, time to target, accuracy)
  over many realizations, one histogram per method (paper 000 Fig. 3, paper 003 Figs. 1-4);
* :func:`plot_binned_fractions`: fraction of samples per value bin, grouped bars per method
  (paper 003 Figs. 6-7: predicted click-through rates).

Figures are built with :class:`matplotlib.figure.Figure` directly (no pyplot state, works
without a display); :func:`save_figure` writes them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Union

import numpy as np
from numpy.typing import ArrayLike

from sqnopt._files import atomic_write
from sqnopt.solver import History

HistoryLike = Union[History, Mapping[str, Sequence[float]]]
XAxis = Literal["samples", "effective_passes", "time", "iteration"]

_XLABEL = {
    "samples": "samples processed $Lt$",
    "effective_passes": "effective passes over the data",
    "time": "time (s)",
    "iteration": "iteration $t$",
}

_TINY = float(np.finfo(np.float64).tiny)

__all__ = ["plot_binned_fractions", "plot_histograms", "plot_histories", "save_figure"]


def _matplotlib() -> Any:
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - exercised only without matplotlib
        raise ImportError("plotting needs matplotlib: pip install 'sqnopt[plot]'") from exc
    del matplotlib
    return Figure


def _new_axes(ax: Any, figsize: tuple[float, float]) -> tuple[Any, Any]:
    if ax is not None:
        return ax.figure, ax
    Figure = _matplotlib()
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _column(h: HistoryLike, key: str) -> np.ndarray[Any, np.dtype[np.float64]]:
    if isinstance(h, History):
        return np.asarray(getattr(h, key), dtype=np.float64)
    if key not in h:
        raise KeyError(f"history has no {key!r} column (has {sorted(h)})")
    return np.asarray(h[key], dtype=np.float64)


def plot_histories(histories: Mapping[str, HistoryLike] | Sequence[tuple[str, HistoryLike]], *,
                   x: XAxis = "samples", y: str = "objective", ax: Any = None,
                   logx: bool = True, logy: bool = True, subtract: float | None = None,
                   title: str | None = None, ylabel: str | None = None,
                   figsize: tuple[float, float] = (6.0, 4.2)) -> Any:
    """Objective vs ``x``, one line per method; returns the figure.

    ``subtract`` plots ``F - subtract`` (e.g. ``F*`` for excess objective). With a log x axis
    the first point (x = 0) is dropped.
    """
    fig, ax = _new_axes(ax, figsize)
    items = list(histories.items()) if isinstance(histories, Mapping) else list(histories)
    if not items:
        raise ValueError("plot_histories: no histories given")
    for label, h in items:
        xs, ys = _column(h, x), _column(h, y)
        if subtract is not None:
            ys = ys - subtract
        keep = np.isfinite(xs) & np.isfinite(ys)
        # log axes: positive normal floats only (matplotlib's log ticker overflows on
        # subnormal values such as 5e-324)
        if logx:
            keep &= xs >= _TINY
        if logy:
            keep &= ys >= _TINY
        ax.plot(xs[keep], ys[keep], marker="o", markersize=2.5, linewidth=1.4, label=label)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(_XLABEL.get(x, x))
    default_y = "objective $F(w_t)$" if subtract is None else "$F(w_t) - F^*$"
    ax.set_ylabel(ylabel or (default_y if y == "objective" else y))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    if title:
        ax.set_title(title)
    return fig


def plot_histograms(values: Mapping[str, ArrayLike], *, bins: int = 30, ax: Any = None,
                    logx: bool = False, xlabel: str = "objective $F(w)$",
                    title: str | None = None, figsize: tuple[float, float] = (6.0, 4.2)) -> Any:
    """One histogram per method of values over realizations (shared bins; logarithmic bins
    when ``logx``); returns the figure."""
    fig, ax = _new_axes(ax, figsize)
    arrays = {k: np.asarray(v, dtype=np.float64).ravel() for k, v in values.items()}
    finite = [a[np.isfinite(a)] for a in arrays.values()]
    allv = np.concatenate(finite) if finite else np.zeros(0)
    if logx:
        allv = allv[allv > 0]
    if allv.size == 0:
        raise ValueError("plot_histograms: no finite values to plot")
    lo, hi = float(allv.min()), float(allv.max())
    if hi <= lo:
        hi = lo * 1.01 + 1e-12
    edges = np.geomspace(lo, hi, bins + 1) if logx else np.linspace(lo, hi, bins + 1)
    for label, a in arrays.items():
        a = a[np.isfinite(a)]
        ax.hist(a, bins=edges, histtype="stepfilled", alpha=0.45, label=label,
                edgecolor="black", linewidth=0.6)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("realizations")
    ax.grid(True, alpha=0.3)
    ax.legend()
    if title:
        ax.set_title(title)
    return fig


def plot_binned_fractions(values: Mapping[str, ArrayLike], *,
                          edges: ArrayLike = np.linspace(0.0, 1.0, 11), ax: Any = None,
                          xlabel: str = "predicted probability", title: str | None = None,
                          figsize: tuple[float, float] = (6.0, 4.2)) -> Any:
    """Fraction of each method's values falling in each bin ``[a, b]`` of ``edges``, as grouped
    bars (paper 003, eqs. 41-42 and Figs. 6-7); returns the figure."""
    fig, ax = _new_axes(ax, figsize)
    e = np.asarray(edges, dtype=np.float64)
    if e.ndim != 1 or e.size < 2 or np.any(np.diff(e) <= 0):
        raise ValueError("edges must be an increasing 1-D array of at least two values")
    n_methods = len(values)
    width = 0.8 / max(n_methods, 1)
    centers = np.arange(e.size - 1)
    for j, (label, v) in enumerate(values.items()):
        a = np.asarray(v, dtype=np.float64).ravel()
        counts, _ = np.histogram(a, bins=e)
        frac = counts / max(a.size, 1)
        ax.bar(centers + (j - (n_methods - 1) / 2) * width, frac, width=width, label=label,
               edgecolor="black", linewidth=0.5)
    ax.set_xticks(centers, [f"[{e[i]:.1f},{e[i + 1]:.1f}]" for i in range(e.size - 1)],
                  rotation=45, ha="right", fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction of samples")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    if title:
        ax.set_title(title)
    return fig


def save_figure(fig: Any, path: str | os.PathLike[str], *, dpi: int = 130) -> Path:
    """Write ``fig`` (PNG, PDF or SVG by extension; PNG without one); returns the path.

    Missing directories are created; the file is replaced atomically
    (:func:`sqnopt._files.atomic_write`)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fmt = p.suffix[1:].lower() or "png"
    with atomic_write(p) as fh:
        fig.savefig(fh, dpi=dpi, format=fmt)
    return p
