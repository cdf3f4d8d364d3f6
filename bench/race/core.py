"""The race's pure logic: curves, time to target, best of repeats, downsampling, the compact
record and the ratios. No solver, dataset or plotting library is imported here, so the tests
(``tests/bench/test_race.py``) run it without any of them.

A *curve* is one contender's run on one problem: parallel lists ``time`` (seconds, evaluation
excluded), ``passes`` (effective passes over the training set) and ``excess`` (the relative excess
``(F(w) - F*) / F*`` of the iterate observed there), ordered as the run produced them.
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

#: Relative-excess targets of the table.
TARGETS: tuple[float, ...] = (1e-2, 1e-4, 1e-6)
#: Excess values are floored here before taking logs (an iterate can reach F* to rounding).
EXCESS_FLOOR = 1e-16
#: Records above this many bytes are re-encoded with fewer points per curve.
RECORD_LIMIT = 100_000

__all__ = [
    "EXCESS_FLOOR",
    "RECORD_LIMIT",
    "TARGETS",
    "best_of",
    "compact_record",
    "downsample",
    "expand_record",
    "fmt_ratio",
    "fmt_time",
    "headline_ratios",
    "round_sig",
    "summarize_curve",
    "to_target",
]


def _finite(x: float) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def to_target(xs: Sequence[float], excess: Sequence[float], target: float) -> float | None:
    """The ``x`` (time or passes) at which ``excess`` first reaches ``target``, or None.

    Between the last point above the target and the first point at or below it, ``log excess``
    is interpolated linearly in ``x`` (a curve observed at a few points, e.g. a ``max_iter``
    sweep, then gets an estimate between two budgets instead of the coarse upper bound). A
    non-finite excess before the crossing (a diverged point) gives the crossing point itself.
    Non-monotone curves count their *first* crossing.
    """
    if len(xs) != len(excess):
        raise ValueError(f"xs has {len(xs)} points, excess {len(excess)}")
    if not target > 0:
        raise ValueError(f"target must be > 0, got {target}")
    for k, e in enumerate(excess):
        if not (_finite(e) and e <= target):
            continue
        if k == 0:
            return float(xs[0])
        e0, x0, x1 = excess[k - 1], float(xs[k - 1]), float(xs[k])
        if not _finite(e0) or e0 <= target:
            return x1
        lo = math.log(max(e, EXCESS_FLOOR))
        hi = math.log(e0)
        frac = (hi - math.log(target)) / (hi - lo) if hi > lo else 1.0
        return x0 + min(max(frac, 0.0), 1.0) * (x1 - x0)
    return None


def best_of(curves: Sequence[Mapping[str, Sequence[float]]]) -> dict[str, Any]:
    """Point-wise minimum time over repeats of the same run.

    The repeats replay the same budgets with the same seed, so point ``k`` of every repeat is
    the same iterate; its time is the minimum over the repeats (best of ``len(curves)``).
    ``passes`` and ``excess`` come from the first repeat. ``deterministic`` says whether every
    repeat produced the same excess values (to 1e-9 relative); the curves are cut to the
    shortest repeat.
    """
    if not curves:
        raise ValueError("best_of needs at least one curve")
    n = min(len(c["time"]) for c in curves)
    first = curves[0]
    times = [min(float(c["time"][k]) for c in curves) for k in range(n)]
    same = all(len(c["excess"]) == len(first["excess"]) for c in curves) and all(
        _close(float(a), float(b)) for c in curves[1:] for a, b in zip(c["excess"],
                                                                       first["excess"]))
    return {"time": times, "passes": [float(p) for p in first["passes"][:n]],
            "excess": [float(e) for e in first["excess"][:n]], "deterministic": same,
            "repeats": len(curves)}


def _close(a: float, b: float) -> bool:
    if not (_finite(a) and _finite(b)):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-12)


def summarize_curve(curve: Mapping[str, Sequence[float]],
                    targets: Sequence[float] = TARGETS) -> dict[str, Any]:
    """Time and passes to each target (None: not reached), and the last excess.

    Each axis is read in its own order (points sorted by time, resp. by passes; stable): the
    points of a ``max_iter`` sweep are independent fits, and a fit with a larger budget can
    take less time than a smaller one (e.g. a solver that stops on its own criterion), so
    "the time to reach the target" is read off the points in time order."""
    t, p, e = curve["time"], curve["passes"], curve["excess"]

    def along(xs: Sequence[float], tg: float) -> float | None:
        order = sorted(range(len(xs)), key=lambda k: xs[k])
        return to_target([xs[k] for k in order], [e[k] for k in order], tg)

    return {
        "time_to": {f"{tg:g}": along(t, tg) for tg in targets},
        "passes_to": {f"{tg:g}": along(p, tg) for tg in targets},
        "final_excess": float(e[-1]) if e else math.nan,
        "time_spent": float(max(t)) if t else 0.0,
    }


def downsample(curve: Mapping[str, Sequence[float]], max_points: int,
               targets: Sequence[float] = TARGETS) -> list[int]:
    """Indices of the points to keep (sorted): always the first and last point and the first
    crossing of each target, then points spread evenly in log time up to ``max_points`` in
    all (the times to target themselves are stored exactly beside the curve)."""
    n = len(curve["time"])
    if n <= max_points:
        return list(range(n))
    if max_points < 2:
        raise ValueError("max_points must be >= 2")
    keep = {0, n - 1}
    e = curve["excess"]
    for tg in targets:
        for k, x in enumerate(e):
            if _finite(x) and x <= tg:
                keep.add(k)
                break
    return spread_in_log(curve["time"], keep, max_points, floor=1e-9)


def spread_in_log(xs: Sequence[float], keep: set[int], max_points: int,
                  floor: float) -> list[int]:
    """``keep`` (indices into ``xs``) filled up to ``max_points`` indices with the points
    nearest to levels spread evenly over ``log max(x, floor)``; sorted. (The downsampling of
    the race's and the scale benchmark's curves alike.)"""
    n = len(xs)
    keep = set(keep)
    logx = [math.log(max(float(x), floor)) for x in xs]
    order = sorted(range(n), key=lambda k: logx[k])
    sorted_x = [logx[k] for k in order]
    lo, hi = sorted_x[0], sorted_x[-1]
    slots = max_points - len(keep)
    for j in range(max(slots, 0)):
        if len(keep) >= max_points:
            break
        g = lo + (hi - lo) * (j + 0.5) / slots
        pos = bisect.bisect_left(sorted_x, g)
        cands = [order[q] for q in (pos - 1, pos, pos + 1) if 0 <= q < n]
        free = [k for k in cands if k not in keep]
        if free:
            keep.add(min(free, key=lambda k: abs(logx[k] - g)))
    return sorted(keep)


def round_sig(x: Any, digits: int = 3) -> Any:
    """``x`` rounded to ``digits`` significant digits (non-finite floats become None, which
    JSON can hold); other values unchanged."""
    if isinstance(x, bool) or not isinstance(x, float):
        return x
    if not math.isfinite(x):
        return None
    return float(f"{x:.{digits}g}")


#: Values kept at full precision in the compact record (the optimum and the problem's alpha).
EXACT_KEYS = frozenset({"f_star", "f_star_reference", "alpha", "lam"})


def _rounded(obj: Any, digits: int, key: str = "") -> Any:
    """Floats to ``digits`` significant digits, the values of :data:`EXACT_KEYS` untouched."""
    if key in EXACT_KEYS:
        return obj
    if isinstance(obj, dict):
        return {k: _rounded(v, digits, k) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_rounded(v, digits, key) for v in obj]
    return round_sig(obj, digits)


def _log10s(xs: Sequence[float | None]) -> list[float | None]:
    """``log10`` to 2 decimals (a 0.5 % step); 0 and negative values (an excess of 0, passes at
    the start) become the floor ``log10(EXCESS_FLOOR)``, non-finite ones None."""
    out: list[float | None] = []
    for x in xs:
        if x is None or not _finite(x):
            out.append(None)
        else:
            out.append(round(math.log10(max(float(x), EXCESS_FLOOR)), 2))
    return out


def _unlog(xs: Sequence[float | None], *, zero_floor: bool) -> list[float]:
    out = []
    for v in xs:
        if v is None:
            out.append(math.nan)
        elif zero_floor and v <= math.log10(EXCESS_FLOOR):
            out.append(0.0)
        else:
            out.append(10.0 ** v)
    return out


def _compact_entry(c: dict[str, Any], keys: list[str], max_points: int) -> dict[str, Any]:
    """One contender: the curve downsampled and stored as ``log10`` values (``t``, ``p``,
    ``e``: time, passes, excess), the times and passes to target as lists in the order of the
    record's ``config.targets``; what the record holds elsewhere is dropped (the library is in
    ``contender_table``, the repeats in ``config``, the time spent is the curve's)."""
    out = {k: v for k, v in c.items() if k not in ("library", "repeats", "time_spent")}
    curve = c.get("curve")
    if curve and curve.get("time"):
        idx = downsample(curve, max_points)
        out["curve"] = {k[0]: _log10s([curve[k][i] for i in idx])
                        for k in ("time", "passes", "excess")}
    for k in ("time_to", "passes_to"):
        if isinstance(c.get(k), Mapping):
            out[k] = [c[k].get(t) for t in keys]
    return out


def expand_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """The compact record's curves and target lists back as ``{time, passes, excess}`` and
    ``{target: value}`` (what :mod:`report` and :mod:`plots` read); idempotent."""
    out = json.loads(json.dumps(record))
    keys = [f"{t:g}" for t in out.get("config", {}).get("targets", TARGETS)]
    table = out.get("contender_table", {})
    for prob in out.get("problems", []):
        for name, c in prob.get("contenders", {}).items():
            if "library" not in c and name in table:
                c["library"] = table[name]["library"]
            cv = c.get("curve")
            if cv and "t" in cv:
                c["curve"] = {"time": _unlog(cv["t"], zero_floor=False),
                              "passes": _unlog(cv["p"], zero_floor=True),
                              "excess": _unlog(cv["e"], zero_floor=True)}
            for k in ("time_to", "passes_to"):
                if isinstance(c.get(k), list):
                    c[k] = dict(zip(keys, c[k]))
        if "ratios" not in prob:
            prob["ratios"] = headline_ratios(prob.get("contenders", {}),
                                             [float(k) for k in keys])
    return out


def compact_record(record: Mapping[str, Any], limit: int = RECORD_LIMIT) -> tuple[str, int]:
    """The record as compact JSON below ``limit`` bytes: curves downsampled (fewer points per
    curve until it fits) and stored as ``log10`` to 2 decimals; other floats to 4 significant
    digits (``F*`` and ``alpha`` exactly); each contender's library is in the record's
    ``contender_table`` only and the ratios are recomputed from the entries when read. Returns the text and the points per curve used;
    raises if even 4 points per curve do not fit. :func:`expand_record` reads it back."""
    base = json.loads(json.dumps(record, default=float))
    keys = [f"{t:g}" for t in base.get("config", {}).get("targets", TARGETS)]
    for points in (48, 32, 24, 16, 12, 8, 6, 4):
        out = dict(base)
        out["problems"] = [dict({k: v for k, v in p.items() if k != "ratios"},
                                contenders={n: _compact_entry(c, keys, points)
                                            for n, c in p.get("contenders", {}).items()})
                           for p in base.get("problems", [])]
        text = json.dumps(_rounded(out, 4), separators=(",", ":"), allow_nan=False)
        if len(text.encode()) < limit:
            return text, points
    raise ValueError(f"the record does not fit in {limit} bytes even with 4 points per curve")


def fmt_time(t: float | None) -> str:
    """Seconds for a table cell: ``-`` when not reached."""
    if t is None or not _finite(t):
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.3g} µs"
    if t < 1.0:
        return f"{t * 1e3:.3g} ms"
    return f"{t:.3g} s"


def fmt_ratio(r: float | None) -> str:
    return "-" if r is None or not _finite(r) else f"{r:.2f}×"


def headline_ratios(contenders: Mapping[str, Mapping[str, Any]],
                    targets: Sequence[float] = TARGETS) -> dict[str, dict[str, Any]]:
    """Per target: the fastest sqnopt contender and the fastest peer to reach it, and the ratio
    of their times (``< 1``: sqnopt is faster). Contenders are the record's summaries (keys
    ``library`` and ``time_to``)."""
    out: dict[str, dict[str, Any]] = {}
    for tg in targets:
        key = f"{tg:g}"
        best: dict[bool, tuple[float, str] | None] = {True: None, False: None}
        for name, c in contenders.items():
            t = c.get("time_to", {}).get(key)
            if t is None or not _finite(t):
                continue
            ours = c.get("library") == "sqnopt"
            cur = best[ours]
            if cur is None or t < cur[0]:
                best[ours] = (float(t), name)
        ours_b, peer_b = best[True], best[False]
        out[key] = {
            "sqnopt": None if ours_b is None else {"name": ours_b[1], "time": ours_b[0]},
            "peer": None if peer_b is None else {"name": peer_b[1], "time": peer_b[0]},
            "ratio": (ours_b[0] / peer_b[0]) if (ours_b and peer_b and peer_b[0] > 0) else None,
        }
    return out
