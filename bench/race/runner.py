"""Running the contenders on one problem: tuning pilots, a discovery run, replays for best-of-R
timing (contenders interleaved within each round), and the per-contender summary."""

from __future__ import annotations

import gc
import math
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import core
from .contenders import Contender
from .problems import Problem


@dataclass
class Settings:
    repeats: int = 3
    seed: int = 0
    stop_excess: float = 5e-7          # discovery runs stop below this (under the last target)
    max_passes: float = 1000.0         # traced runs: at most this many passes
    pilot_passes: float = 1.0          # tuning: each grid value runs this many passes ...
    pilot_cap: float = 2.0             # ... or this many seconds
    cap_scale: float = 1.0             # multiplies each problem's time cap
    n_jobs: int = 1                    # sqnopt contenders' threads (--cores)
    log: Callable[[str], None] = print


@dataclass
class Outcome:
    """One contender's runs on one problem."""

    contender: Contender
    params: dict[str, Any] = field(default_factory=dict)
    tuning: list[dict[str, Any]] = field(default_factory=list)
    curves: list[dict[str, list[float]]] = field(default_factory=list)
    plan: Any = None
    w: Any = None
    status: str = ""
    error: str | None = None
    objective_check: float | None = None
    wall: float = 0.0


# ---------------------------------------------------------------------------- one run
def history_points(report: int, limit: int, per_decade: int = 16) -> list[int]:
    """Iterations at which a traced run evaluates ``F``: multiples of ``report`` (where the
    callback reads the clock), spaced evenly in log scale (``per_decade`` per factor 10), from
    ``report`` up to ``limit``. Evaluating at every report point would cost more than the run
    itself for the fast first-order methods."""
    k_max = max(1, -(-limit // report))
    ks = sorted({int(round(10 ** (j / per_decade)))
                 for j in range(int(math.log10(k_max) * per_decade) + 2)})
    return [k * report for k in ks if k <= k_max] + [0]


def _trace(c: Contender, p: Problem, params: dict[str, Any], s: Settings, *,
           cap: float | None, max_passes: float | None, n_iter: int | None, stop: bool
           ) -> tuple[dict[str, list[float]], Any, dict[str, Any]]:
    """One traced sqnopt run. The objective and effective passes of each point come from
    ``result.history`` (recorded at :func:`history_points`); its time is the wall clock of the
    run read in the callback at that point, less the solver's evaluation time so far
    (``state.eval_time``) and the callback's own time -- so the Python work between compiled
    chunks counts, evaluation does not -- plus the time of ``init_state``."""
    report = 1 if c.batch is None else max(1, p.n // (c.batch * p.points_per_pass))
    passes = max_passes if max_passes is not None else s.max_passes
    # full-batch and growing-batch runs (batch None) make at most one iteration per pass
    limit = n_iter if n_iter is not None else (
        int(passes) + 1 if c.batch is None else int(passes * p.n / c.batch) + report)
    history = history_points(report, limit)
    stop_value = p.f_star * (1.0 + s.stop_excess)
    marks: dict[int, float] = {}
    clock = {"start": 0.0, "callbacks": 0.0}
    holder: dict[str, Any] = {}

    def callback(info: Any) -> bool:
        tic = time.perf_counter()
        marks[int(info.iteration)] = (tic - clock["start"] - clock["callbacks"]
                                      - float(getattr(holder["state"], "eval_time", 0.0)))
        halt = bool(stop and info.objective is not None and info.objective <= stop_value)
        clock["callbacks"] += time.perf_counter() - tic
        return halt

    kw: dict[str, Any] = dict(history_every=history, report_every=report, random_state=s.seed,
                              callback=callback)
    if s.n_jobs != 1:
        kw["n_jobs"] = s.n_jobs
    if n_iter is not None:
        kw["max_iter"] = int(n_iter)
    else:
        kw["max_epochs"] = float(passes)
        if cap is not None:
            kw["max_time"] = float(cap)
    solver = c.build(p, params, **kw)
    gc.collect()
    tic = time.perf_counter()
    state = solver.init_state(p.X, p.y)
    setup = time.perf_counter() - tic
    holder["state"] = state
    info: dict[str, Any] = {"setup": setup}
    clock["start"] = time.perf_counter()
    with warnings.catch_warnings():   # a diverged run ends with Status.DIVERGED, recorded
        warnings.simplefilter("ignore")
        res = solver.run(state)
    info["status"] = str(getattr(res.status, "value", res.status))
    wall = time.perf_counter() - clock["start"]
    end = wall - clock["callbacks"] - float(getattr(state, "eval_time", res.eval_time))
    h = res.history
    its = [int(t) for t in h.iteration]
    times = []
    for k, it in enumerate(its):
        if k == len(its) - 1:
            times.append(setup + max(end, marks.get(it, 0.0)))   # the final record
        elif it in marks:
            times.append(setup + marks[it])
        else:                                                     # the start (iteration 0)
            times.append(setup + (0.0 if it == its[0] else float(h.time[k])))
    info["overhead"] = end - float(res.wall_time)  # Python between chunks, beyond the loop
    curve = {"time": times,
             "passes": np.asarray(h.effective_passes).tolist(),
             "excess": (np.asarray(h.objective) / p.f_star - 1.0).tolist()}
    ours = p.objective(res.w)
    if len(h):
        info["objective_check"] = abs(ours - float(h.objective[-1])) / max(abs(ours), 1e-300)
    info["n_iter"] = int(res.n_iter)
    return curve, np.asarray(res.w), info


def _budgets(max_budget: int, min_budget: int = 1) -> list[int]:
    out, b = [], min_budget
    while b <= max_budget:
        out.append(b)
        b = b + 1 if b < 4 else int(round(b * 1.5))
    return out


def _sweep(c: Contender, p: Problem, params: dict[str, Any], s: Settings, *,
           cap: float | None, budgets: list[int] | None
           ) -> tuple[dict[str, list[float]], Any, dict[str, Any]]:
    discovering = budgets is None
    todo = _budgets(c.max_budget, c.min_budget) if budgets is None else budgets
    curve: dict[str, list[float]] = {"time": [], "passes": [], "excess": []}
    done: list[int] = []
    spent, w, status = 0.0, None, "budget"
    for k, b in enumerate(todo):
        fit, extract = c.build(p, params, b, s.seed)
        gc.collect()
        tic = time.perf_counter()
        fit()
        dt = time.perf_counter() - tic
        w, passes, n_iter = extract()
        e = p.excess(w)
        curve["time"].append(dt)
        curve["passes"].append(float(passes))
        curve["excess"].append(e)
        done.append(b)
        spent += dt
        if not discovering:
            continue
        if not math.isfinite(e):
            status = "diverged"
            break
        if e <= s.stop_excess:
            status = "target"
            break
        if n_iter < b:
            status = "converged (its own stop)"
            break
        nxt = todo[k + 1] if k + 1 < len(todo) else None
        if cap is not None and (spent >= cap or (nxt is not None and dt * nxt / b > cap)):
            status = "time cap"
            break
    return curve, w, {"status": status, "budgets": done}


def _online(c: Contender, p: Problem, params: dict[str, Any], s: Settings, *,
            cap: float | None, passes: int | None
            ) -> tuple[dict[str, list[float]], Any, dict[str, Any]]:
    learner = c.build(p, params, s.seed)
    curve: dict[str, list[float]] = {"time": [], "passes": [], "excess": []}
    spent, k, status = 0.0, 0, "budget"
    limit = passes if passes is not None else int(s.max_passes)
    while k < limit:
        gc.collect()
        tic = time.perf_counter()
        learner.learn_pass()
        spent += time.perf_counter() - tic
        k += 1
        w = learner.weights()
        e = p.excess(w)
        curve["time"].append(spent)
        curve["passes"].append(float(k))
        curve["excess"].append(e)
        if passes is None:
            if e <= s.stop_excess:
                status = "target"
                break
            if cap is not None and spent * (k + 1) / k > cap:
                status = "time cap"
                break
    return curve, learner.weights(), {"status": status, "passes": k}


def run_once(c: Contender, p: Problem, params: dict[str, Any], s: Settings, plan: Any,
             cap: float | None) -> tuple[dict[str, list[float]], Any, dict[str, Any]]:
    """Discovery (``plan is None``: budgets found under the time cap) or a replay of ``plan``."""
    if c.kind == "trace":
        return _trace(c, p, params, s, cap=cap, max_passes=None,
                      n_iter=None if plan is None else plan, stop=plan is None)
    if c.kind == "sweep":
        return _sweep(c, p, params, s, cap=cap, budgets=plan)
    return _online(c, p, params, s, cap=cap, passes=plan)


def _plan(c: Contender, info: dict[str, Any]) -> Any:
    if c.kind == "trace":
        return info["n_iter"]
    if c.kind == "sweep":
        return info["budgets"]
    return info["passes"]


# ---------------------------------------------------------------------------- tuning
def tune(c: Contender, p: Problem, s: Settings) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Pilot runs over the contender's grid (``pilot_passes`` passes or ``pilot_cap`` seconds
    each; sweeps: a ``max_iter = pilot_passes`` fit); the value with the lowest objective at the
    end wins. Pilot time is not counted in the race."""
    assert c.grid is not None
    trials: list[dict[str, Any]] = []
    for params in c.grid(p):
        try:
            if c.kind == "trace":
                curve, _, info = _trace(c, p, params, s, cap=s.pilot_cap,
                                        max_passes=s.pilot_passes, n_iter=None, stop=False)
                e = curve["excess"][-1] if curve["excess"] else math.inf
                if info.get("status") == "diverged":
                    e = math.inf
            else:
                fit, extract = c.build(p, params, max(1, int(s.pilot_passes)), s.seed)
                fit()
                e = p.excess(extract()[0])
        except Exception as exc:  # a grid value that fails is just a bad value
            e = math.inf
            params = dict(params, error=f"{type(exc).__name__}: {exc}"[:120])
        trials.append({"params": dict(params), "excess": e if math.isfinite(e) else None})
    ok = [t for t in trials if t["excess"] is not None and "error" not in t["params"]]
    if not ok:
        return dict(c.grid(p)[0]), trials
    best = min(ok, key=lambda t: t["excess"])
    return dict(best["params"]), trials


def warm_up(c: Contender, p: Problem, s: Settings) -> None:
    """One short untimed run (imports, first-call set-up, first touch of the data), so the
    first timed fit does not pay it; tuning pilots do this for the contenders with a grid."""
    try:
        if c.kind == "trace":
            _trace(c, p, {}, s, cap=None, max_passes=None, n_iter=1, stop=False)
        elif c.kind == "sweep":
            fit, extract = c.build(p, {}, c.min_budget, s.seed)
            fit()
            extract()
        else:
            c.build(p, {}, s.seed)
    except Exception:
        pass   # the timed run reports the failure


# ---------------------------------------------------------------------------- one problem
def run_problem(p: Problem, contenders: list[Contender], s: Settings,
                skipped: list[str]) -> list[Outcome]:
    """Every applicable contender on ``p``: pilots, then ``s.repeats`` rounds (the first
    discovers each contender's budget under the problem's time cap, the others replay it),
    contenders interleaved within a round, the order rotated between rounds."""
    cap = p.cap * s.cap_scale
    outcomes: list[Outcome] = []
    for c in contenders:
        why = c.skip_reason(p)
        if why == "loss":
            continue
        if why:
            skipped.append(f"{c.name} on {p.key}: skipped, {why}")
            continue
        outcomes.append(Outcome(contender=c))
    for o in outcomes:
        if o.contender.grid is not None:
            o.params, o.tuning = tune(o.contender, p, s)
        else:
            warm_up(o.contender, p, s)
    for r in range(s.repeats):
        k = r % max(1, len(outcomes))
        for o in outcomes[k:] + outcomes[:k]:
            if o.error is not None:
                continue
            c = o.contender
            tic = time.perf_counter()
            try:
                curve, w, info = run_once(c, p, o.params, s, o.plan if r else None,
                                          None if r else cap)
            except Exception as exc:
                o.error = f"{type(exc).__name__}: {exc}"
                s.log(f"  {c.name}: failed: {o.error}")
                s.log("".join(traceback.format_exception(exc, limit=-3)).rstrip())
                continue
            o.wall += time.perf_counter() - tic
            o.curves.append(curve)
            if r == 0:
                o.plan = _plan(c, info)
                o.w = w
                o.status = info.get("status", "")
                o.objective_check = info.get("objective_check")
                tt = core.summarize_curve(curve)["time_to"]
                s.log(f"  {c.name:32s} {o.status:24s} "
                      + "  ".join(f"{t}: {core.fmt_time(v):>9s}" for t, v in tt.items()))
    return outcomes


def finish_problem(p: Problem, outcomes: list[Outcome]) -> dict[str, Any]:
    """The record entry of ``p``: ``F*`` (lowered to the best value any contender reached, if
    one went below the reference), each contender's best-of curve and summary, the ratios."""
    f_ref = p.f_star
    seen = [e for o in outcomes for cv in o.curves[:1] for e in cv["excess"] if math.isfinite(e)]
    lowest = min(seen, default=0.0)
    # a contender below the reference by more than rounding lowers F*; rounding-level
    # differences (|excess| <= 1e-12) are left, and shown as 0 excess
    shift = lowest if lowest < -1e-12 else 0.0
    f_star = f_ref * (1.0 + shift)
    entries: dict[str, Any] = {}
    for o in outcomes:
        c = o.contender
        entry: dict[str, Any] = {"library": c.library, "params": o.params, "status": o.status}
        if o.tuning:   # {param: [[value, excess after the pilot], ...]}
            key = next(iter(o.tuning[0]["params"]))
            entry["tuning"] = {key: [[t["params"].get(key), t["excess"]] for t in o.tuning]}
        if o.error is not None:
            entry["error"] = o.error[:300]
        if o.curves:
            curves = [{k: [max((1.0 + e) * f_ref / f_star - 1.0, 0.0) if math.isfinite(e) else e
                           for e in v] if k == "excess" else v
                       for k, v in cv.items()} for cv in o.curves]
            best = core.best_of(curves)
            entry["curve"] = {k: best[k] for k in ("time", "passes", "excess")}
            entry["repeats"] = best["repeats"]
            if not best["deterministic"]:
                entry["deterministic"] = False
            summary = core.summarize_curve(best)
            entry.update({k: summary[k] for k in ("time_to", "passes_to", "final_excess",
                                                  "time_spent")})
            entry["test_accuracy"] = p.accuracy(o.w) if o.w is not None else None
            if o.objective_check is not None:
                entry["objective_check"] = o.objective_check
        entries[c.name] = entry
    return {
        "key": p.key, "dataset": p.dataset, "problem": p.name, "loss": p.loss,
        "alpha": p.alpha, "alpha_rule": p.alpha_rule, "description": p.description,
        "n_train": p.n, "n_test": int(p.X_test.shape[0]), "n_features": p.d,
        "n_classes": p.n_classes, "n_params": p.n_params, "nnz": p.nnz, "sparse": p.sparse,
        "fingerprint": p.fingerprint(),
        "test_kind": p.test_kind, "majority_accuracy": p.majority_accuracy(),
        "f_star": f_star, "f_star_reference": f_ref,
        "f_star_lowered": shift < 0, "reference": p.reference, "cap": p.cap,
        "contenders": entries, "ratios": core.headline_ratios(entries),
    }
