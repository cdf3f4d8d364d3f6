"""Convergence figures in the style of the papers (needs ``pip install 'sqnopt[plot]'``).

* :func:`plot_histories`: objective vs samples processed (``Lt``), effective passes or time,
  one line per method, logarithmic axes (the RES and oLBFGS papers' Figs. 1-2, SQB's Fig. 1);
* :func:`plot_histograms`: distribution of a final value (objective, time to target, accuracy)
  over many realizations, one histogram per method (RES Fig. 3, oLBFGS Figs. 1-4);
* :func:`plot_binned_fractions`: fraction of samples per value bin, grouped bars per method
  (oLBFGS Figs. 6-7: predicted click-through rates).

(RES: Mokhtari & Ribeiro, "A quasi-Newton method for large scale support vector machines", 2014;
oLBFGS: Mokhtari & Ribeiro, "Global convergence of online limited memory BFGS", 2015; SQB:
Aravkin, Choromanska, Jebara & Kanevsky, "Semistochastic quadratic bound methods", 2014.)

Figures are built with :class:`matplotlib.figure.Figure` directly (no pyplot state, works
without a display); :func:`save_figure` writes them.
"""

from __future__ import annotations

import math
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

__all__ = ["figure_format", "plot_binned_fractions", "plot_histograms", "plot_histories",
           "save_figure"]


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


#: Beyond this many runs, or with labels longer than this, the legend goes beside the axes.
_LEGEND_INSIDE_MAX = 6
_LABEL_WIDTH = 32
_LINESTYLES = ("-", "--", "-.", ":")


def _wrap(label: str, width: int = _LABEL_WIDTH) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(label, width, break_on_hyphens=False)) or label


def _legend_columns(labels: Sequence[str], height_in: float) -> int:
    """Columns a beside-the-axes legend of ``labels`` (wrapped) needs to fit ``height_in``
    inches of x-small text (about 0.14 in per line, plus the gap between entries)."""
    lines = sum(label.count("\n") + 1.6 for label in labels)
    per_column = max(int((height_in - 0.3) / 0.14), 4)
    return max(1, int(math.ceil(lines / per_column)))


def _legend(fig: Any, ax: Any, labels: Sequence[str], own_figure: bool) -> None:
    """Inside the axes for a few short labels; beside them (wrapped, smaller, in as many
    columns as the height needs) for many or long ones, so that no label leaves the figure."""
    if not labels:
        return
    if len(labels) <= _LEGEND_INSIDE_MAX and max(map(len, labels)) <= _LABEL_WIDTH:
        ax.legend(fontsize="small")
        return
    ncol = _legend_columns(labels, fig.get_figheight())
    if own_figure:
        fig.legend(loc="outside right upper", fontsize="x-small", ncol=ncol)
    else:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="x-small", ncol=ncol,
                  borderaxespad=0.0)


def _plain_log_ticks(axis: Any, lo: float, hi: float) -> None:
    """A log axis spanning less than a decade gets plain numbers at its ticks (matplotlib would
    label only a few minor ticks, as ``6x10^-1``)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if not (lo > 0 and hi > 0) or hi / lo >= 10.0:
        return
    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 3.0, 5.0), numticks=12))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
    axis.set_minor_formatter(NullFormatter())


def plot_histories(histories: Mapping[str, HistoryLike] | Sequence[tuple[str, HistoryLike]], *,
                   x: XAxis = "samples", y: str = "objective", ax: Any = None,
                   logx: bool = True, logy: bool = True, subtract: float | None = None,
                   title: str | None = None, ylabel: str | None = None,
                   figsize: tuple[float, float] | None = None) -> Any:
    """Objective vs ``x``, one line per method, in the style of the papers' figures; returns
    the figure.

    * ``x``: samples processed ``Lt`` (RES, oLBFGS), effective passes (SQB),
      time or iterations; logarithmic axes unless ``logx`` / ``logy`` are false.
    * The starting point ``F(w_0)`` (at ``x = 0``) is kept on a logarithmic x axis: the axis is
      then linear between 0 and its first decade (``symlog``), so every run starts at its
      ``F(w_0)``.
    * Many runs or long labels: the legend moves beside the axes, with labels wrapped; more
      than ten runs also cycle line styles, so every line stays distinguishable.
    * ``subtract`` plots ``F - subtract`` (e.g. ``F*`` for the excess objective); values that a
      logarithmic axis cannot show (zero, negative, subnormal) are left out.
    """
    own = ax is None
    items = list(histories.items()) if isinstance(histories, Mapping) else list(histories)
    if not items:
        raise ValueError("plot_histories: no histories given")
    long_labels = max(len(str(label)) for label, _ in items) > _LABEL_WIDTH
    beside = len(items) > _LEGEND_INSIDE_MAX or long_labels
    if figsize is None:   # room for the legend beside the axes: about 2.4 in per column
        ncol = _legend_columns([_wrap(str(label)) for label, _ in items], 4.6) if beside else 0
        figsize = (5.8 + 2.4 * ncol, 4.6) if beside else (6.0, 4.2)
    series = []
    for label, h in items:
        xs, ys = _column(h, x), _column(h, y)
        if subtract is not None:
            ys = ys - subtract
        keep = np.isfinite(xs) & np.isfinite(ys)
        # log axes: positive normal floats only (matplotlib's log ticker overflows on
        # subnormal values such as 5e-324); x = 0 stays (F(w0)) on the symlog axis
        if logx:
            keep &= (xs >= _TINY) | (xs == 0)
        if logy:
            keep &= ys >= _TINY
        series.append((str(label), xs[keep], ys[keep]))
    if not any(xs.size for _, xs, _ in series):
        raise ValueError(f"plot_histories: nothing to plot: no history has a finite {y!r} at a "
                         f"finite {x!r}"
                         + (" (a logarithmic axis shows positive values only: pass "
                            "logy=False)" if logy else ""))
    fig, ax = _new_axes(ax, figsize)
    positive = np.concatenate([xs[xs > 0] for _, xs, _ in series] or [np.zeros(0)])
    has_zero = any(np.any(xs == 0) for _, xs, _ in series)
    symlog = logx and has_zero and positive.size > 0
    labels = []
    for k, (label, xs, ys) in enumerate(series):
        if logx and not symlog:
            xs, ys = xs[xs > 0], ys[xs > 0]
        style = _LINESTYLES[(k // 10) % len(_LINESTYLES)]
        marker = "o" if xs.size <= 60 else None
        text = _wrap(label) if len(items) > 1 or long_labels else label
        ax.plot(xs, ys, linestyle=style, marker=marker, markersize=2.5, linewidth=1.4,
                label=text)
        labels.append(text)
    if symlog:
        linthresh = float(10.0 ** np.floor(np.log10(positive.min())))
        ax.set_xscale("symlog", linthresh=linthresh, linscale=0.5)
        ax.set_xlim(left=0.0)
    elif logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
        finite = np.concatenate([ys for _, _, ys in series] or [np.zeros(0)])
        if finite.size:
            _plain_log_ticks(ax.yaxis, float(finite.min()), float(finite.max()))
    ax.set_xlabel(_XLABEL.get(x, x) + (" (0 = start, $F(w_0)$)" if symlog else ""))
    default_y = "objective $F(w_t)$" if subtract is None else "$F(w_t) - F^*$"
    ax.set_ylabel(ylabel or (default_y if y == "objective" else y))
    ax.grid(True, which="both", alpha=0.3)
    _legend(fig, ax, labels, own)
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
    bars (oLBFGS, eqs. 41-42 and Figs. 6-7); returns the figure."""
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


def figure_format(path: str | os.PathLike[str]) -> str:
    """The image format of ``path``, from its extension (PNG without one); a ``ValueError``
    naming the extensions matplotlib writes when it cannot write this one."""
    from matplotlib.backend_bases import FigureCanvasBase

    fmt = Path(path).suffix[1:].lower() or "png"
    supported = sorted(FigureCanvasBase.get_supported_filetypes())
    if fmt not in supported:
        raise ValueError(f"cannot write {str(path)!r}: the image format comes from the "
                         f"extension, and matplotlib writes no '.{fmt}' files; use one of "
                         f"{', '.join('.' + f for f in supported)} (e.g. .png, .pdf, .svg)")
    return fmt


def save_figure(fig: Any, path: str | os.PathLike[str], *, dpi: int = 130) -> Path:
    """Write ``fig`` (PNG, PDF, SVG or another format matplotlib writes, by extension; PNG
    without one); returns the path.

    Missing directories are created; the file is replaced atomically
    (:func:`sqnopt._files.atomic_write`)."""
    p = Path(path)
    fmt = figure_format(p)
    p.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(p) as fh:
        fig.savefig(fh, dpi=dpi, format=fmt)
    return p
