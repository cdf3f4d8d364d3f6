"""One figure per data set: held-out log loss against seconds counted and against examples
processed (log x axes), drawn from the compact record so that any committed record can be
redrawn."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .core import TARGETS
from .report import plot_name

MARK = ("o", "s", "^", "v", "D")
#: Line styles per library: sqnopt solid, peers dashed / dotted.
STYLE = {"sqnopt": "-", "scikit-learn": "--", "vowpalwabbit": ":"}


def draw(size: Mapping[str, Any], path: Path, table: Mapping[str, Mapping[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from _results import save_png

    fig, axes = plt.subplots(1, 2, figsize=(13, 5.0), sharey=True)
    ours, peers = plt.get_cmap("tab10"), plt.get_cmap("Dark2")
    n_ours = n_peers = 0
    lows, highs = [], []
    for name, c in size.get("contenders", {}).items():
        cv = c.get("curve") or {}
        pts = [(t, e, x) for t, e, x in zip(cv.get("time", []), cv.get("examples", []),
                                            cv.get("loss", []))
               if x is not None and math.isfinite(x) and t and t > 0]
        if not pts:
            continue
        t, e, loss = zip(*pts)
        lows.append(min(loss))
        highs.append(loss[0])
        lib = table.get(name, {}).get("library", "")
        if lib == "sqnopt":
            color, marker, n_ours = ours(n_ours % 10), MARK[n_ours // 10 % 5], n_ours + 1
        else:
            color, marker, n_peers = peers(n_peers % 8), MARK[n_peers // 8 % 5], n_peers + 1
        style = STYLE.get(lib, "--")
        kw: dict[str, Any] = dict(ls=style, color=color, lw=2.0 if style == "-" else 1.3,
                                  marker=marker, ms=3.5 if len(t) > 1 else 7, label=name)
        axes[0].plot(t, loss, **kw)
        ex = [(a, b) for a, b in zip(e, loss) if a and a > 0]
        if ex:
            axes[1].plot(*zip(*ex), **kw)
    bayes = (size.get("data") or {}).get("bayes_log_loss_test")
    best = size.get("best_loss")
    if lows:
        lo = min(lows + ([bayes] if bayes else []))
        # the interesting range: up to somewhat above the median contender's lowest loss
        # (a contender far above it, e.g. a diverging start, leaves the axes)
        mid = sorted(lows)[len(lows) // 2]
        hi = min(max(highs), max(lo + 2.5 * (mid - lo), 1.02 * mid))
        pad = 0.04 * (hi - lo) if hi > lo else 0.01
        for ax in axes:
            ax.set_ylim(lo - pad, hi + pad)
    for ax, xlabel in zip(axes, ("seconds counted (reading, parsing, training; evaluation "
                                 "excluded)", "training examples processed")):
        ax.set_xscale("log")
        ax.set_xlabel(xlabel, fontsize=9)
        if bayes:
            ax.axhline(bayes, color="0.3", lw=1.0, ls="-.")
        if best:
            for tg in TARGETS:
                ax.axhline(best * (1 + tg), color="0.6", lw=0.8, ls=":")
        ax.grid(True, which="major", alpha=0.3)
    axes[0].set_ylabel("held-out log loss" + ("   (dash-dot: Bayes; dotted: best + 1 %, "
                                              "+ 0.5 %)" if bayes else "   (dotted: best + "
                                                                      "1 %, + 0.5 %)"),
                       fontsize=9)
    d = size.get("data") or {}
    fig.suptitle(f"{size['name']}: N = {d.get('n_train', 0):,}, d = {d.get('n_features', 0):,}, "
                 f"α = 1/N — solid: sqnopt, dashed: scikit-learn, dotted: Vowpal Wabbit",
                 fontsize=11)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", fontsize=7.5, frameon=False)
    fig.tight_layout(rect=(0, 0, 0.72, 0.95))
    path.parent.mkdir(parents=True, exist_ok=True)
    save_png(fig, path, dpi=80, colors=64)
    plt.close(fig)


def draw_all(record: Mapping[str, Any], out_dir: Path) -> list[Path]:
    paths = []
    for size in record.get("sizes", []):
        path = out_dir / plot_name(size)
        draw(size, path, record.get("contender_table", {}))
        paths.append(path)
    return paths
