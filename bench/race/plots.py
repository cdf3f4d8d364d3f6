"""One figure per problem (relative excess vs time and vs passes, log axes), drawn from the
compact record so that any committed record can be redrawn."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .core import TARGETS, expand_record
from .report import plot_name, problem_title

#: Lowest relative excess drawn (below it the curves are flat at the floor).
FLOOR = 1e-10
MARK = ("o", "s", "^", "v")
#: Line styles per library: sqnopt solid, peers dashed / dotted.
STYLE = {"sqnopt": "-", "scikit-learn": "--", "lightning": "-.", "vowpalwabbit": ":",
         "river": ":"}


def draw(problem: Mapping[str, Any], path: Path,
         table: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """``table``: the record's contender table (kind and passes of each contender)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), sharey=True)
    ours, peers = plt.get_cmap("tab10"), plt.get_cmap("Dark2")
    n_ours = n_peers = 0
    entries = [(n, c) for n, c in problem["contenders"].items()
               if c.get("curve") and c["curve"].get("time")]
    top = 1.0
    table = table or {}
    for name, c in entries:
        info = table.get(name, {})
        cv = c["curve"]
        # excess 0 (the contender that defines F*) is drawn at the floor of the axis
        pts = [(t, p, max(e, FLOOR)) for t, p, e in zip(cv["time"], cv["passes"], cv["excess"])
               if math.isfinite(e) and math.isfinite(t) and t > 0]
        if not pts:
            continue
        t, p, e = zip(*pts)
        top = max(top, min(e[0], 1e6))
        if c["library"] == "sqnopt":
            color, marker, n_ours = ours(n_ours % 10), MARK[n_ours // 10 % 4], n_ours + 1
        else:
            color, marker, n_peers = peers(n_peers % 8), MARK[n_peers // 8 % 4], n_peers + 1
        style = STYLE.get(c["library"], "--")
        kw: dict[str, Any] = dict(ls=style, color=color, lw=2.0 if style == "-" else 1.2,
                                  marker=None if info.get("kind") == "trace" else marker,
                                  ms=3, label=name + (" (it)" if info.get("passes") == "iterations"
                                                      else ""))
        axes[0].plot(t, e, **kw)
        pp = [(a, b) for a, b in zip(p, e) if a and a > 0]
        if pp:
            axes[1].plot(*zip(*pp), **kw)
    for ax, xlabel in zip(axes, ("seconds (evaluation excluded)",
                                 "effective passes (it: solver iterations)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylim(FLOOR / 2, top * 3)
        for tg in TARGETS:
            ax.axhline(tg, color="0.55", lw=0.8, ls=":")
        ax.grid(True, which="major", alpha=0.3)
    axes[0].set_ylabel("(F − F*) / F*   (values below 1e-10 drawn at 1e-10)")
    fig.suptitle(f"{problem_title(problem)}: N = {problem['n_train']}, d = "
                 f"{problem['n_features']}, α = {problem['alpha']:.2g} — solid: sqnopt, "
                 "dashed/dotted: peers", fontsize=11)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 0.79, 0.95))
    path.parent.mkdir(parents=True, exist_ok=True)
    save_small_png(fig, path)
    plt.close(fig)


def save_small_png(fig: Any, path: Path, dpi: int = 80, colors: int = 64) -> None:
    """A PNG of a few tens of kB: rendered at ``dpi``, quantised to a ``colors``-entry palette
    (the figures are committed with every full run)."""
    from _results import save_png

    save_png(fig, path, dpi=dpi, colors=colors)


def draw_all(record: Mapping[str, Any], out_dir: Path) -> list[Path]:
    paths = []
    record = expand_record(record)
    for p in record.get("problems", []):
        path = out_dir / plot_name(p)
        draw(p, path, record.get("contender_table"))
        paths.append(path)
    return paths
