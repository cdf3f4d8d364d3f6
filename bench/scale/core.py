"""The scale benchmark's pure logic: summaries of a run, examples and time to a held-out target,
the samples-to-target ratios of paper 003's claim, downsampling and the compact record. No
solver, data or plotting library is imported here (``tests/bench/test_scale.py`` runs it
without them).

A *curve* is one contender's run on one data set: parallel lists ``time`` (seconds counted:
reading, parsing and training, held-out evaluation excluded), ``examples`` (training examples
processed), ``loss`` (held-out log loss), ``accuracy`` and ``auc``, in the order the run
produced them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from race.core import round_sig, spread_in_log

#: Held-out targets: within this relative margin of the lowest held-out loss of the run.
TARGETS: tuple[float, ...] = (0.01, 0.005)
#: Records above this many bytes are re-encoded with fewer points per curve.
RECORD_LIMIT = 100_000
CURVE_KEYS = ("time", "examples", "loss", "accuracy", "auc")
#: Significant digits kept per curve key in the compact record.
DIGITS = {"time": 4, "examples": 4, "loss": 5, "accuracy": 4, "auc": 4}

__all__ = ["CURVE_KEYS", "RECORD_LIMIT", "TARGETS", "best_loss", "compact_record",
           "downsample", "finish_size", "first_below", "ratio_rows", "summarize", "targets_of"]


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def summarize(curve: Mapping[str, Sequence[float]]) -> dict[str, Any]:
    """The run's last point (``final``), its lowest held-out loss and its throughput (examples
    processed per second counted, at the last point)."""
    n = len(curve.get("time", []))
    if not n:
        return {"final": None, "best_loss": None, "examples_per_second": None}
    final = {k: curve[k][-1] for k in CURVE_KEYS if k in curve}
    losses = [x for x in curve["loss"] if _finite(x)]
    t, e = final["time"], final["examples"]
    return {"final": final, "best_loss": min(losses) if losses else None,
            "examples_per_second": e / t if _finite(t) and t > 0 else None}


def best_loss(contenders: Mapping[str, Mapping[str, Any]]) -> float | None:
    """The lowest held-out loss any contender reached on the data set."""
    seen = [x for c in contenders.values() for x in c.get("curve", {}).get("loss", [])
            if _finite(x)]
    return min(seen) if seen else None


def first_below(xs: Sequence[float], losses: Sequence[float], level: float) -> float | None:
    """The ``x`` at which ``losses`` first comes down to ``level``, or None.

    Between the last point above and the first at or below it, ``log x`` is interpolated
    linearly in the loss (the runs' points are spaced evenly in log examples); a non-finite loss
    before the crossing (a diverged point) gives the crossing point itself."""
    if len(xs) != len(losses):
        raise ValueError(f"xs has {len(xs)} points, losses {len(losses)}")
    for k, x in enumerate(losses):
        if not (_finite(x) and x <= level):
            continue
        if k == 0:
            return float(xs[0])
        l0, x0, x1 = losses[k - 1], float(xs[k - 1]), float(xs[k])
        if not _finite(l0) or l0 <= x:
            return x1
        frac = min(max((l0 - level) / (l0 - x), 0.0), 1.0)
        if x0 > 0 and x1 > 0:
            return math.exp(math.log(x0) + frac * (math.log(x1) - math.log(x0)))
        return x0 + frac * (x1 - x0)
    return None


def targets_of(curve: Mapping[str, Sequence[float]], best: float,
               targets: Sequence[float] = TARGETS) -> dict[str, dict[str, float | None]]:
    """Examples and time at which the held-out loss first comes within ``rel`` of ``best``
    (``loss <= best (1 + rel)``), for each ``rel`` in ``targets``, read along the run (the
    points in the order it produced them; :func:`first_below`); None: not reached."""
    if not best > 0:
        raise ValueError(f"best must be > 0, got {best}")
    losses = [float(x) if _finite(x) else math.inf for x in curve.get("loss", [])]
    out: dict[str, dict[str, float | None]] = {}
    for rel in targets:
        out[f"{rel:g}"] = {axis: first_below(curve[axis], losses, best * (1 + rel))
                           if losses else None for axis in ("examples", "time")}
    return out


def finish_size(contenders: dict[str, dict[str, Any]],
                table: Mapping[str, Mapping[str, Any]],
                targets: Sequence[float] = TARGETS) -> dict[str, Any]:
    """Summaries and targets of every contender of one data set (in place), and the data set's
    best held-out loss and samples-to-target ratios (:func:`ratio_rows`; ``table``: the
    contenders' roles)."""
    best = best_loss(contenders)
    for c in contenders.values():
        curve = c.get("curve")
        if curve and curve.get("time"):
            c.update(summarize(curve))
            if best is not None:
                c["to_target"] = targets_of(curve, best, targets)
    return {"best_loss": best, "ratios": ratio_rows(contenders, table, best, targets)}


#: The matched-level target of :func:`ratio_rows`: each stochastic quasi-Newton contender's
#: own lowest held-out loss plus this margin.
OWN_MARGIN = 0.01


def ratio_rows(contenders: Mapping[str, Mapping[str, Any]],
               table: Mapping[str, Mapping[str, Any]], best: float | None,
               targets: Sequence[float] = TARGETS) -> list[dict[str, Any]]:
    """Paper 003's claim: for each stochastic quasi-Newton contender (role ``sqn``) and each
    held-out loss *level*, the examples it processed until its held-out loss first came down to
    the level, over those of the contender of role ``sgd`` (and of role ``vw``) that needed the
    fewest. Levels: ``best (1 + rel)`` for ``rel`` in ``targets`` (``best``: the lowest held-out
    loss of the run), and the contender's own lowest loss plus :data:`OWN_MARGIN` (a level it
    reaches, where the run-wide targets may be out of its reach).

    When no peer of a role reached the level, the ratio is an upper bound (``bound=True``): the
    examples that peer processed in all, by which it had not reached it. Read from whole curves
    (the runner's, before downsampling)."""
    def examples_to(c: Mapping[str, Any], level: float) -> float | None:
        cv = c.get("curve") or {}
        if not cv.get("examples"):
            return None
        losses = [float(x) if _finite(x) else math.inf for x in cv["loss"]]
        return first_below(cv["examples"], losses, level)

    def total(c: Mapping[str, Any]) -> float:
        ex = [x for x in (c.get("curve") or {}).get("examples", []) if _finite(x)]
        return max(ex) if ex else 0.0

    by_role: dict[str, list[str]] = {}
    for name, c in contenders.items():
        role = table.get(name, {}).get("role")
        if role and c.get("curve"):
            by_role.setdefault(role, []).append(name)
    rows = []
    for name in by_role.get("sqn", []):
        c = contenders[name]
        own = [x for x in c["curve"]["loss"] if _finite(x)]
        levels = [(f"best + {rel:.1%}", best * (1 + rel)) for rel in targets if best]
        if own:
            levels.append((f"own best + {OWN_MARGIN:.0%}", min(own) * (1 + OWN_MARGIN)))
        for label, level in levels:
            ours = examples_to(c, level)
            row: dict[str, Any] = {"name": name, "target": label, "level": level,
                                   "examples": ours}
            for role in ("sgd", "vw"):
                peers = by_role.get(role, [])
                reached = [(ex, p) for p in peers
                           if (ex := examples_to(contenders[p], level)) is not None]
                if ours is None or not peers:
                    row[role] = None
                elif reached:
                    ex, p = min(reached)
                    row[role] = {"peer": p, "examples": ex, "ratio": ours / ex,
                                 "bound": False}
                else:
                    most = max(peers, key=lambda p: total(contenders[p]))
                    ex = total(contenders[most])
                    row[role] = {"peer": most, "examples": ex,
                                 "ratio": ours / ex if ex > 0 else None, "bound": True}
            rows.append(row)
    return rows


# ---------------------------------------------------------------------------- the record
def downsample(curve: Mapping[str, Sequence[float]], max_points: int,
               targets: Sequence[float] = TARGETS, best: float | None = None) -> list[int]:
    """Indices of the points to keep (sorted): the first and last point, the lowest loss, the
    first crossing of each target (when ``best`` is given), then points spread evenly in log
    examples up to ``max_points`` in all."""
    n = len(curve["time"])
    if n <= max_points:
        return list(range(n))
    if max_points < 2:
        raise ValueError("max_points must be >= 2")
    keep = {0, n - 1}
    losses = curve["loss"]
    finite = [k for k in range(n) if _finite(losses[k])]
    if finite:
        keep.add(min(finite, key=lambda k: losses[k]))
    if best is not None and best > 0:
        for rel in targets:
            hit = next((k for k in finite if losses[k] <= best * (1 + rel)), None)
            if hit is not None:
                keep.add(hit)
                if hit > 0:
                    keep.add(hit - 1)
    return spread_in_log(curve["examples"], keep, max_points, floor=1.0)


def _round_tree(obj: Any, digits: int = 4) -> Any:
    if isinstance(obj, dict):
        return {k: _round_tree(v, digits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_round_tree(v, digits) for v in obj]
    return round_sig(obj, digits)


def _compact_curve(curve: Mapping[str, Sequence[float]], max_points: int,
                   best: float | None) -> dict[str, list[Any]]:
    idx = downsample(curve, max_points, best=best)
    return {k: [round_sig(float(curve[k][i]), DIGITS[k]) for i in idx]
            for k in CURVE_KEYS if k in curve}


def compact_record(record: Mapping[str, Any], limit: int = RECORD_LIMIT) -> tuple[str, int]:
    """The record as compact JSON below ``limit`` bytes: curves downsampled (fewer points per
    curve until it fits; loss to 5 significant digits, the rest to 4), other floats to 4
    significant digits except the held-out and Bayes losses (6). Returns the text and the
    points per curve used; raises if even 6 points per curve do not fit."""
    base = json.loads(json.dumps(record, default=float))
    for points in (64, 48, 32, 24, 16, 12, 8, 6):
        out = dict(base)
        sizes = []
        for size in base.get("sizes", []):
            best = size.get("best_loss")
            cs = {}
            for name, c in size.get("contenders", {}).items():
                c2 = {k: _round_tree(v) for k, v in c.items() if k != "curve"}
                if c.get("curve"):
                    c2["curve"] = _compact_curve(c["curve"], points, best)
                cs[name] = c2
            s2 = {k: _round_tree(v, 6) if k in ("best_loss", "data") else _round_tree(v)
                  for k, v in size.items() if k != "contenders"}
            s2["contenders"] = cs
            sizes.append(s2)
        out["sizes"] = sizes
        out = {k: (v if k == "sizes" else _round_tree(v)) for k, v in out.items()}
        text = json.dumps(out, separators=(",", ":"), allow_nan=False)
        if len(text.encode()) < limit:
            return text, points
    raise ValueError(f"the record does not fit in {limit} bytes even with 6 points per curve")


def fmt_seconds(t: float | None) -> str:
    if t is None or not _finite(t):
        return "-"
    if t < 1.0:
        return f"{t * 1e3:.3g} ms"
    return f"{t:.3g} s"


def fmt_count(x: float | None) -> str:
    """``1.2e6`` style for counts of examples (3 significant digits)."""
    if x is None or not _finite(x):
        return "-"
    if x < 1e4:
        return f"{x:.0f}"
    m, e = f"{x:.2e}".split("e")
    return f"{float(m):g}e{int(e)}"


def fmt_bytes(b: float | None) -> str:
    if b is None or not _finite(b) or b <= 0:
        return "-"
    return f"{b / 2**20:.0f} MB" if b < 2**30 else f"{b / 2**30:.2f} GB"
