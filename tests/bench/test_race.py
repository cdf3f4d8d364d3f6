"""The race's pure logic (bench/race): time to target, best of repeats, downsampling, the
record's size, the Markdown table, the contender table, the shared objective; and one tiny
end-to-end race on generated data. No shared data set is needed."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from race import contenders as C
from race import core, report
from race.problems import Problem, objective


# ---------------------------------------------------------------------------- time to target
def test_to_target_interpolates_log_excess_linearly_in_x() -> None:
    # 1e-1 at x = 2, 1e-3 at x = 3: 1e-2 is half-way in log excess
    assert core.to_target([1, 2, 3, 4], [1.0, 1e-1, 1e-3, 1e-5], 1e-2) == pytest.approx(2.5)
    # a quarter of the way: log10 goes -1 -> -5 between x = 10 and x = 20; -2 is 1/4 of it
    assert core.to_target([10, 20], [1e-1, 1e-5], 1e-2) == pytest.approx(12.5)


def test_to_target_edge_cases() -> None:
    assert core.to_target([0.5, 1.0], [1e-3, 1e-4], 1e-2) == 0.5        # reached at the start
    assert core.to_target([1.0, 2.0], [1.0, 0.5], 1e-2) is None          # never reached
    assert core.to_target([], [], 1e-2) is None
    # first crossing of a non-monotone curve, not a later one
    assert core.to_target([1, 2, 3, 4], [1.0, 1e-3, 1.0, 1e-6], 1e-2) == pytest.approx(
        1 + (0 - (-2)) / (0 - (-3)))
    # a diverged (non-finite) point before the crossing: the crossing point itself
    assert core.to_target([1, 2], [math.inf, 1e-3], 1e-2) == 2.0
    assert core.to_target([1, 2], [math.nan, 1e-3], 1e-2) == 2.0
    # exactly at the target, and an excess of 0 (the best contender defines F*)
    assert core.to_target([1, 2], [1.0, 1e-2], 1e-2) == 2.0
    assert 1.0 < core.to_target([1, 2], [1.0, 0.0], 1e-2) < 2.0  # type: ignore[operator]
    with pytest.raises(ValueError, match="points"):
        core.to_target([1, 2], [1.0], 1e-2)
    with pytest.raises(ValueError, match="target"):
        core.to_target([1], [1.0], 0.0)


def test_summary_reads_each_axis_in_its_own_order() -> None:
    # a max_iter sweep whose larger budget stopped on its own and took less time
    curve = {"time": [0.10, 0.30, 0.20], "passes": [1.0, 2.0, 4.0],
             "excess": [1e-1, 1e-3, 1e-7]}
    s = core.summarize_curve(curve)
    # in time order: 0.10 (1e-1), 0.20 (1e-7): 1e-2 is 1/6 of the way in log excess
    assert s["time_to"]["0.01"] == pytest.approx(0.10 + 0.10 / 6)
    assert s["time_to"]["1e-06"] == pytest.approx(0.10 + 0.10 * 5 / 6)
    assert s["passes_to"]["0.0001"] == pytest.approx(2.0 + 2.0 / 4)
    assert s["final_excess"] == 1e-7 and s["time_spent"] == 0.30


def test_best_of_takes_the_pointwise_minimum_time() -> None:
    a = {"time": [1.0, 2.0, 3.0], "passes": [0, 1, 2], "excess": [1.0, 0.1, 0.01]}
    b = {"time": [0.5, 2.5, 2.0], "passes": [0, 1, 2], "excess": [1.0, 0.1, 0.01]}
    best = core.best_of([a, b])
    assert best["time"] == [0.5, 2.0, 2.0]
    assert best["deterministic"] and best["repeats"] == 2
    c = dict(b, excess=[1.0, 0.2, 0.01])
    assert not core.best_of([a, c])["deterministic"]
    short = {k: v[:2] for k, v in b.items()}
    assert len(core.best_of([a, short])["time"]) == 2
    with pytest.raises(ValueError):
        core.best_of([])


def _curve(n: int, rng: np.random.Generator) -> dict[str, list[float]]:
    t = np.cumsum(rng.uniform(1e-4, 1e-2, n))
    e = np.exp(-np.linspace(0, 20, n)) * rng.uniform(0.5, 2.0, n)
    return {"time": t.tolist(), "passes": np.linspace(0, 50, n).tolist(), "excess": e.tolist()}


@pytest.mark.parametrize("seed", range(5))
def test_downsampling_keeps_ends_and_crossings_spread_in_log_time(seed: int) -> None:
    curve = _curve(2000, np.random.default_rng(seed))
    idx = core.downsample(curve, 20)
    assert idx == sorted(set(idx)) and idx[0] == 0 and idx[-1] == 1999
    assert 15 <= len(idx) <= 20
    for tg in core.TARGETS:
        first = next(k for k, e in enumerate(curve["excess"]) if e <= tg)
        assert first in idx
    # spread in log time: no decade of the run's time is left without a point
    logt = np.log10([curve["time"][i] for i in idx])
    assert np.max(np.diff(logt)) < 0.5 * (logt[-1] - logt[0])
    assert core.downsample({k: v[:5] for k, v in curve.items()}, 20) == list(range(5))


# ---------------------------------------------------------------------------- the record
def _record(n_problems: int, n_contenders: int, n_points: int) -> dict[str, Any]:
    """A record shaped as the race writes it (``runner.finish_problem`` entries)."""
    rng = np.random.default_rng(0)
    problems = []
    for i in range(n_problems):
        cs = {}
        for j in range(n_contenders):
            cv = _curve(n_points, rng)
            cs[f"contender {j}"] = {"library": "sqnopt" if j % 3 == 0 else "peer",
                                    "params": {}, "status": "target", "curve": cv,
                                    "test_accuracy": 0.912345, "repeats": 3,
                                    **core.summarize_curve(cv)}
            if j % 3 == 0:
                cs[f"contender {j}"].update(params={"eps0": 0.123456}, tuning={"eps0": [
                    [0.1, 0.01], [0.3, 0.02], [1.0, 0.03], [3.0, 0.2], [10.0, None]]})
        problems.append({"key": f"d{i}/logistic", "dataset": f"d{i}", "problem": "logistic",
                         "loss": "logistic", "alpha": 1 / 3e4, "alpha_rule": "1/N",
                         "description": "synthetic", "n_train": 30000, "n_test": 1000,
                         "n_features": 100, "n_classes": 2, "n_params": 100, "nnz": 10**6,
                         "sparse": True, "test_kind": "test split", "f_star": 0.3123456789012,
                         "f_star_lowered": False, "reference": {"test_accuracy": 0.9},
                         "cap": 10.0, "contenders": cs, "ratios": core.headline_ratios(cs)})
    table = {f"contender {j}": {"library": "sqnopt" if j % 3 == 0 else "peer", "kind": "trace",
                                "passes": "passes", "note": ""} for j in range(n_contenders)}
    return {"schema": 1, "created": "now", "command": "python -m bench.race", "machine": {},
            "versions": {}, "config": {"repeats": 3, "targets": list(core.TARGETS)},
            "problems": problems, "skipped": [], "contender_table": table}


def test_the_record_of_a_large_run_stays_below_100_kB() -> None:
    # 14 problems x 15 applicable contenders (the full race has about 190 curves)
    rec = _record(14, 15, 1500)
    assert len(json.dumps(rec).encode()) > 10 * core.RECORD_LIMIT     # before: megabytes
    text, points = core.compact_record(rec)
    assert len(text.encode()) < core.RECORD_LIMIT
    back = json.loads(text)
    assert back["problems"][0]["f_star"] == 0.3123456789012            # kept exactly
    enc = back["problems"][0]["contenders"]["contender 0"]["curve"]
    assert all(len(str(x)) <= 5 for x in enc["e"])                      # log10, 2 decimals
    full = core.expand_record(back)
    assert core.expand_record(full) == full                             # idempotent
    c0 = full["problems"][0]["contenders"]["contender 0"]
    orig = rec["problems"][0]["contenders"]["contender 0"]
    assert points >= 12 and 12 <= len(c0["curve"]["time"]) <= points
    assert c0["time_to"] == pytest.approx(orig["time_to"], rel=1e-3)    # 4 digits
    assert c0["library"] == "sqnopt"                                    # from the table
    for k, r in rec["problems"][0]["ratios"].items():
        back_r = full["problems"][0]["ratios"][k]
        assert back_r["sqnopt"]["name"] == r["sqnopt"]["name"]
        assert back_r["ratio"] == pytest.approx(r["ratio"], rel=1e-3)
    for k in ("time", "excess"):     # every kept point within 1.2 % (10^0.005) of one
        for x in c0["curve"][k]:
            assert min(abs(x / y - 1) for y in orig["curve"][k] if y > 0) < 1.2e-2
    small = core.compact_record(_record(1, 2, 50))
    assert small[1] == 48 and json.loads(small[0])["problems"][0]["contenders"]
    with pytest.raises(ValueError, match="does not fit"):
        core.compact_record(rec, limit=2000)


def test_headline_ratio_compares_the_fastest_of_each_side() -> None:
    cs = {"ours A": {"library": "sqnopt", "time_to": {"0.01": 2.0, "0.0001": None}},
          "ours B": {"library": "sqnopt", "time_to": {"0.01": 1.0, "0.0001": None}},
          "peer": {"library": "scikit-learn", "time_to": {"0.01": 4.0, "0.0001": 3.0}}}
    r = core.headline_ratios(cs, targets=(1e-2, 1e-4))
    assert r["0.01"]["ratio"] == pytest.approx(0.25)
    assert r["0.01"]["sqnopt"]["name"] == "ours B"
    assert r["0.0001"]["ratio"] is None and r["0.0001"]["peer"]["name"] == "peer"


def test_table_rendering() -> None:
    rec = _record(2, 4, 100)
    p0 = rec["problems"][0]
    p0["contenders"]["contender 1"]["time_to"]["1e-06"] = None
    p0["contenders"]["broken"] = {"library": "peer", "params": {}, "status": "",
                                  "error": "ValueError: boom"}
    rec["contender_table"]["broken"] = {"library": "peer", "kind": "sweep", "passes": "passes",
                                        "note": ""}
    p0["ratios"] = core.headline_ratios(p0["contenders"])
    md = report.render(json.loads(core.compact_record(rec)[0]), "plots")
    assert md.startswith("# The race")
    assert "| d0 / logistic | **" in md                                 # headline row
    assert "![d0 — logistic (α = 1/N)](plots/d0-logistic.png)" in md
    table = [ln for ln in md.splitlines() if ln.startswith("| **contender 0**")]
    assert len(table) == 2                                               # one row per problem
    assert "| broken |" in md and "ValueError: boom" in md
    row = next(ln for ln in md.splitlines() if ln.startswith("| contender 1 |"))
    assert row.split(" | ")[3] == "-"                                   # 1e-6 not reached
    assert report.render(rec, None).count("![") == 0
    # every data row has as many cells as the header
    for block in md.split("\n\n"):
        rows = [ln for ln in block.splitlines() if ln.startswith("|")]
        if rows:
            assert len({ln.count(" | ") for ln in rows if not ln.startswith("|---")}) == 1


def test_duel_section_says_when_it_was_measured_apart() -> None:
    """``--duel-only --update`` re-measures the duel into an existing record: the section says
    when, by which command and at which sqnopt; a duel from the run itself says nothing more."""
    entry = {"call": "f()", "time": 0.02, "time_1_epoch": 0.005, "per_epoch": 0.0017,
             "fixed": 0.0033, "excess": 0.03}
    duel: dict[str, Any] = {"data": "d", "lam": 1e-4, "f_star": 0.13, "repeats": 7,
                            "objective_seeds": [0, 1], "baseline": "peer",
                            "contenders": {"ours": dict(entry, time=0.018), "peer": entry}}
    md = report.render_duel(duel)
    assert "**0.90×**" in md and "Measured apart" not in md
    duel["measured"] = {"created": "2026-01-01 00:00 UTC", "sqnopt": "0.1 (abc)",
                        "command": "python -m bench.race --duel-only --update r.json",
                        "load": "0.1 -> 0.2"}
    md = report.render_duel(duel)
    assert "Measured apart from the rest of this record, 2026-01-01 00:00 UTC, by " \
           "`python -m bench.race --duel-only --update r.json` (sqnopt 0.1 (abc)" in md


def test_formatting() -> None:
    assert core.fmt_time(None) == "-" and core.fmt_time(math.nan) == "-"
    assert core.fmt_time(2.5e-5) == "25 µs"
    assert core.fmt_time(2.9e-7) == "0.29 µs"
    assert core.fmt_time(0.0123) == "12.3 ms"
    assert core.fmt_time(3.21) == "3.21 s"
    assert core.fmt_ratio(0.456) == "0.46×" and core.fmt_ratio(None) == "-"
    assert core.round_sig(0.000123456) == 0.000123 and core.round_sig(math.inf) is None


def test_plot_of_a_record(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from race import plots

    rec = json.loads(core.compact_record(_record(1, 3, 100))[0])
    paths = plots.draw_all(rec, tmp_path)
    assert [p.name for p in paths] == ["d0-logistic.png"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------------------- contenders
def test_contender_table_is_well_formed() -> None:
    names = [c.name for c in C.CONTENDERS]
    assert len(names) == len(set(names))
    for c in C.CONTENDERS:
        assert c.kind in ("trace", "sweep", "online")
        assert set(c.losses) <= {"logistic", "sqhinge", "hinge", "softmax", "l1_logistic",
                                 "squared", "poisson"}
        assert c.passes_kind in ("passes", "iterations")
    # one-vs-rest solvers are never entered for the multinomial problem
    for c in C.CONTENDERS:
        if c.library in ("lightning", "vowpalwabbit", "river") or "SGDClassifier" in c.name \
                or "liblinear" in c.name:
            assert "softmax" not in c.losses, c.name


def test_missing_components_and_modules_are_skipped_with_a_line() -> None:
    absent = C.Contender("sqnopt imaginary", "sqnopt", ("logistic",), "trace",
                         C.preset_trace("no_such_preset_x"),
                         available=C.preset_available("no_such_preset_x"))
    assert "no_such_preset_x" in (absent.missing() or "")
    present = C.Contender("sqnopt lbfgs", "sqnopt", ("logistic",), "trace", C.lbfgs_trace,
                          available=C.preset_available("lbfgs"))
    assert present.missing() is None
    nomod = C.Contender("x", "y", ("logistic",), "sweep", C.sk_sgd, module="no_such_module_x")
    assert "no_such_module_x is not installed" in (nomod.missing() or "")
    with pytest.raises(SystemExit, match="unknown contenders"):
        C.select(["no such contender"])


# ---------------------------------------------------------------------------- one objective
def _problem(loss: str, rng: np.random.Generator, k: int = 2) -> Problem:
    X = rng.normal(size=(300, 7))
    y = rng.integers(0, k, 300).astype(float) if loss == "softmax" else np.where(
        rng.random(300) < 0.5, -1.0, 1.0)
    return Problem(dataset="tiny", name=loss, loss=loss, alpha=1 / 300, alpha_rule="1/N", X=X,
                   y=y, X_test=X, y_test=y, test_kind="train", description="tiny",
                   n_classes=k, cap=2.0)


@pytest.mark.parametrize("loss", ["logistic", "sqhinge", "hinge", "softmax"])
def test_the_shared_objective_equals_sqnopts(loss: str) -> None:
    """The race evaluates every library with its own F; sqnopt's objective must be the same
    function (otherwise the excess of the sqnopt curves, read from result.history, would not
    compare)."""
    from sqnopt import Hinge, LogLoss, Softmax, Solver, SquaredHinge

    rng = np.random.default_rng(3)
    p = _problem(loss, rng, k=3 if loss == "softmax" else 2)
    obj = {"logistic": LogLoss, "sqhinge": SquaredHinge, "hinge": Hinge,
           "softmax": Softmax}[loss](lam=p.alpha)
    res = Solver(obj, "identity", ("fixed", {"size": 10}), ("constant", {"eps": 0.05}),
                 max_epochs=2, random_state=0).fit(p.X, p.y)
    assert objective(loss, p.alpha, p.X, p.y, res.w, p.n_classes) == pytest.approx(res.fun,
                                                                                  rel=1e-12)


def test_a_tiny_race_end_to_end() -> None:
    """Reference solve, a traced sqnopt contender and a swept scikit-learn one, 2 rounds."""
    pytest.importorskip("sklearn")
    from race.problems import reference
    from race.runner import Settings, finish_problem, run_problem

    p = _problem("logistic", np.random.default_rng(0))
    reference(p, None)
    assert p.reference["excess_bound"] < 1e-12
    chosen = [C.by_name()["sqnopt L-BFGS (full batch)"], C.by_name()["sklearn lbfgs"],
              C.by_name()["sqnopt SGD"]]
    skipped: list[str] = []
    s = Settings(repeats=2, log=lambda _: None, pilot_cap=0.2, max_passes=30)
    entry = finish_problem(p, run_problem(p, chosen, s, skipped))
    cs = entry["contenders"]
    assert set(cs) == {c.name for c in chosen}
    for name in ("sqnopt L-BFGS (full batch)", "sklearn lbfgs"):
        c = cs[name]
        assert c["repeats"] == 2 and c.get("deterministic", True), name
        assert c["time_to"]["1e-06"] is not None, name
        assert c["time_to"]["0.01"] <= c["time_to"]["1e-06"]
    assert cs["sqnopt SGD"]["params"]["eps0"] > 0 and len(cs["sqnopt SGD"]["tuning"]["eps0"]) == 5
    assert cs["sqnopt L-BFGS (full batch)"]["objective_check"] < 1e-12
    assert entry["ratios"]["1e-06"]["ratio"] is not None


def test_a_recorded_reference_stands_in_for_the_solve(tmp_path: Path) -> None:
    """``--fstar-from``: a problem the cache lacks takes the reference of a record's entry for
    the same data (by fingerprint; by key, alpha, shape and stored values in records without
    one), and the cache keeps it; another alpha is solved."""
    pytest.importorskip("sklearn")
    from race.problems import recorded_references, reference

    p = _problem("logistic", np.random.default_rng(0))
    reference(p, None)
    entry = {"key": p.key, "loss": p.loss, "alpha": p.alpha, "n_train": p.n, "n_features": p.d,
             "nnz": p.nnz, "reference": dict(p.reference, f_star=p.f_star + 1.0),
             "f_star_reference": p.f_star + 1.0}      # a value no solve would give
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "race-1.json").write_text(json.dumps(
        {"problems": [dict(entry, fingerprint=p.fingerprint())]}))
    (tmp_path / "race-legacy.json").write_text(json.dumps({"problems": [entry]}))
    for source in (tmp_path / "a", tmp_path / "race-legacy.json"):
        cache = tmp_path / f"cache-{source.name}.json"
        q = _problem("logistic", np.random.default_rng(0))
        reference(q, cache, recorded_references([source]))
        assert q.f_star == p.f_star + 1.0 and q.reference["from_record"].endswith(".json")
        assert not q.reference["cached"]
        r = _problem("logistic", np.random.default_rng(0))
        reference(r, cache)                                 # now from the cache alone
        assert r.reference["cached"] and r.f_star == p.f_star + 1.0
    other = _problem("logistic", np.random.default_rng(0))
    other.alpha *= 2.0
    reference(other, None, recorded_references([tmp_path / "race-legacy.json"]))
    assert "from_record" not in other.reference and other.f_star != p.f_star + 1.0
    changed = _problem("logistic", np.random.default_rng(1))   # other data, same shape
    reference(changed, None, recorded_references([tmp_path / "a"]))
    assert "from_record" not in changed.reference


def test_the_l1_problem_and_its_tiny_race() -> None:
    """``l1_logistic``: the shared objective is sqnopt's composite one; the reference is the
    better of newGLMNET and liblinear; the L1 contenders reach 1e-6."""
    pytest.importorskip("sklearn")
    from race.problems import reference
    from race.runner import Settings, finish_problem, run_problem

    from sqnopt import LogLoss
    from sqnopt.composite import solve_composite
    from sqnopt.penalties import L1

    p = _problem("logistic", np.random.default_rng(4))
    p.loss = p.name = "l1_logistic"
    p.alpha = 0.02
    res = solve_composite(LogLoss(lam=0.0), L1(p.alpha), p.X, p.y, fit_intercept=False,
                          max_iter=5)
    assert objective("l1_logistic", p.alpha, p.X, p.y, res.coef[0]) == pytest.approx(
        res.fun, rel=1e-12)
    reference(p, None)
    assert p.reference["f_star"] <= min(p.reference["f_newglmnet"],
                                        p.reference["f_liblinear"])
    assert p.reference["pg_max"] <= 1e-10 and 0 < p.reference["nnz_newglmnet"] < 7
    chosen = [C.by_name()["SQNClassifier(penalty='l1')"], C.by_name()["sklearn liblinear L1"]]
    s = Settings(repeats=2, log=lambda _: None, pilot_cap=0.2, max_passes=30)
    entry = finish_problem(p, run_problem(p, chosen, s, []))
    for name in entry["contenders"]:
        assert entry["contenders"][name]["time_to"]["1e-06"] is not None, name


def test_cores_reach_sqnopt_and_the_report() -> None:
    """``--cores N``: sqnopt's contenders run with ``n_jobs=N`` (traced solvers and the
    estimator) and the report says what every contender was given."""
    pytest.importorskip("sklearn")
    from race.problems import reference
    from race.runner import Settings, finish_problem, run_problem

    rec = _record(1, 2, 50)
    rec["config"]["cores"] = 2
    md = report.render(json.loads(core.compact_record(rec)[0]), None)
    assert "`n_jobs=2`" in md and "`OPENBLAS_NUM_THREADS=2`" in md
    rec["config"]["cores"] = 1
    assert "single-threaded BLAS" in report.render(json.loads(core.compact_record(rec)[0]),
                                                   None)
    p = _problem("logistic", np.random.default_rng(0))
    reference(p, None)
    chosen = [C.by_name()["sqnopt L-BFGS (full batch)"], C.by_name()["SQNClassifier()"]]
    C.N_JOBS[0] = 2
    try:
        entry = finish_problem(p, run_problem(p, chosen, Settings(
            repeats=1, log=lambda _: None, pilot_cap=0.2, max_passes=30, n_jobs=2), []))
    finally:
        C.N_JOBS[0] = 1
    for name in ("sqnopt L-BFGS (full batch)", "SQNClassifier()"):
        assert entry["contenders"][name]["time_to"]["1e-06"] is not None, name


# ---------------------------------------------------------------------------- regression
def _regression_problem(loss: str, rng: np.random.Generator) -> Problem:
    from race.regression import linear_targets

    X = np.hstack([rng.normal(size=(400, 6)), np.ones((400, 1))])
    y, _ = linear_targets(X, X, loss, 0, 0.5 if loss == "poisson" else 1.0)
    return Problem(dataset="tiny", name=loss, loss=loss, alpha=1 / 400, alpha_rule="1/N", X=X,
                   y=y, X_test=X, y_test=y, test_kind="train", description="tiny",
                   n_classes=1, cap=2.0)


@pytest.mark.parametrize("loss", ["squared", "poisson"])
def test_the_regression_objective_is_sqnopts_up_to_a_constant(loss: str) -> None:
    """The race's ridge objective is SQNRegressor's squared error; its Poisson objective is
    sqnopt's ``exp(s) - y s`` plus the constant ``mean(y log y - y)`` (the half deviance, so
    that F* > 0): the same function of ``w`` up to that constant."""
    from scipy.special import xlogy

    from sqnopt import SQNRegressor

    p = _regression_problem(loss, np.random.default_rng(4))
    # a named curvature: the driver's fit, whose result carries sqnopt's own F (the default
    # ridge fit solves the normal equations directly and keeps no solver result)
    est = SQNRegressor(loss="squared_error" if loss == "squared" else "poisson",
                       alpha=p.alpha, fit_intercept=False, max_iter=3, tol=None,
                       curvature="lbfgs").fit(p.X, p.y)
    w = est.coef_
    const = 0.0 if loss == "squared" else float(np.mean(xlogy(p.y, p.y) - p.y))
    s = p.X @ w
    base = (0.5 * np.mean((s - p.y) ** 2) if loss == "squared"
            else np.mean(np.exp(s) - p.y * s)) + 0.5 * p.alpha * float(w @ w)
    assert objective(loss, p.alpha, p.X, p.y, w) == pytest.approx(base + const, rel=1e-12)
    assert float(est._trainer.results_[0].fun) == pytest.approx(base, rel=1e-10)


@pytest.mark.parametrize("loss, peer", [("squared", "sklearn Ridge cholesky"),
                                        ("poisson", "sklearn PoissonRegressor lbfgs")])
def test_a_tiny_regression_race_end_to_end(loss: str, peer: str) -> None:
    """Reference solve of a regression problem, SQNRegressor() and a scikit-learn peer reach
    1e-6 relative excess; the ratio of the headline is theirs."""
    pytest.importorskip("sklearn")
    from race.problems import reference
    from race.runner import Settings, finish_problem, run_problem

    p = _regression_problem(loss, np.random.default_rng(0))
    reference(p, None)
    assert p.f_star > 0 and p.reference["excess_bound"] < 1e-12
    chosen = [C.by_name()["SQNRegressor()"], C.by_name()[peer]]
    s = Settings(repeats=1, log=lambda _: None, pilot_cap=0.2, max_passes=30)
    entry = finish_problem(p, run_problem(p, chosen, s, []))
    for name in (c.name for c in chosen):
        assert entry["contenders"][name]["time_to"]["1e-06"] is not None, name
        assert entry["contenders"][name]["test_accuracy"] > 0.3     # R^2
    assert entry["ratios"]["1e-06"]["ratio"] is not None
