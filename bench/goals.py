"""The measured status of the speed goals (the estimators' defaults against scikit-learn, the best
composition against the peers, the same with two cores for every contender, the L1 and
regression defaults against scikit-learn, quasi-Newton against variance reduction, a fit's fixed
cost, Pegasos against ``SGDClassifier``), rendered from committed benchmark records into
``docs/goals.md`` (do not edit that page by hand: rerun this command).

    python bench/goals.py                      # the default records below -> docs/goals.md
    python bench/goals.py --races R1.json R2.json --overhead O.json --out /tmp/goals.md

Each goal is read from the records, never typed in: the race records (``python -m bench.race``:
time and effective passes of every contender to relative excess 1e-2, 1e-4, 1e-6; the Pegasos
duel when the record has one) and the estimator-overhead record
(``bench/estimator_overhead.py --record``). A problem present in several race records is read
from the newest, unless no contender reached even 1e-2 there (a time cap too short to measure
anything) and an older record measured it. A goal whose measurement is missing says so instead
of a verdict. Records of races run with ``--cores 2`` (every contender given both cores) serve
the two-core goals only, the others every other goal.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: the records the committed page is rendered from (the newest of each directory)
DEFAULT_RACE_DIRS = ("results/race", "results/race_defaults_fashion", "results/race_news20_1e-6",
                     "results/race_defaults_head", "results/race_goals",
                     "results/race_cores2_all_peers",
                     "results/race_cores2_news20_1e-6", "results/race_cores2_fashion",
                     "results/defaults_check_485b1df/l2",
                     "results/defaults_check_485b1df/l1",
                     "results/defaults_check_485b1df/regression",
                     "results/defaults_check_97f27d1/cores2")
DEFAULT_OVERHEAD = "results/estimator_overhead.json"
#: directories of one race per seed (``seed*/race-*.json``, the newest of each): the L1 problems,
#: whose solvers on both sides visit coordinates in a random order (liblinear's and newGLMNET's
#: coordinate descent), judged by the median over the seeds
DEFAULT_SEED_DIRS = ("results/defaults_check_1619e33/l1_seeds",)

#: goal 1: SQNClassifier() at its defaults against these scikit-learn solvers
SKLEARN_SOLVERS = ("sklearn lbfgs", "sklearn liblinear", "sklearn newton-cholesky", "sklearn saga")
#: the data sets and problems goal 1 names (L2-logistic, softmax for the multiclass sets)
GOAL_PROBLEMS = ("a9a/logistic", "w8a/logistic", "news20/logistic", "mushrooms/logistic",
                 "dna/softmax", "fashion-mnist/softmax", "criteo/logistic")
#: the ill-conditioned problem of goal 3 and the variance-reduced methods it compares against
HARD_PROBLEM = "news20/logistic-1e-6"
VR_METHODS = ("sqnopt SAGA", "sqnopt SVRG")
QN_MARKERS = ("L-BFGS", "SQNClassifier", "BFGS", "RES", "SQB", "Newton")
TARGETS = (1e-2, 1e-4, 1e-6)
#: the L1 and regression problems whose defaults are held to scikit-learn's fastest solver
SPARSE_REGRESSION_PROBLEMS = ("a9a/l1_logistic", "w8a/l1_logistic", "news20/l1_logistic",
                              "criteo/l1_logistic", "diabetes/ridge", "regression-dense/ridge",
                              "regression-dense/poisson", "regression-sparse/ridge",
                              "regression-sparse/poisson")


def newest(paths: Iterable[Path]) -> Path | None:
    files = sorted(p for p in paths if p.suffix == ".json")
    return files[-1] if files else None


def _cores(rec: dict[str, Any]) -> int:
    return int(rec.get("config", {}).get("cores", 1))


def load_races(files: list[Path], cores: int = 1
               ) -> tuple[dict[str, tuple[dict[str, Any], dict[str, Any]]],
                          tuple[dict[str, Any], dict[str, Any]] | None]:
    """Problem key -> (problem, its record) over the records run with ``cores`` cores, the
    newest record winning, except that a problem on which no contender reached even the first
    target (its time cap too short to measure anything, as the full race's cap is on
    fashion-mnist) does not replace an older record that measured it; and the newest duel."""
    problems: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    duel: tuple[dict[str, Any], dict[str, Any]] | None = None
    for f in sorted(files, key=lambda f: json.loads(f.read_text())["created"]):
        rec = json.loads(f.read_text())
        if _cores(rec) != cores:
            continue
        rec["record_path"] = str(f)       # where it was read (its record_file: a bare name)
        for p in rec["problems"]:
            if p["key"] in problems and not _measured(p) and _measured(problems[p["key"]][0]):
                continue
            problems[p["key"]] = (p, rec)
        if rec.get("pegasos_duel"):
            duel = (rec["pegasos_duel"], rec)
    return problems, duel


def _measured(p: dict[str, Any]) -> bool:
    """Some contender reached the first target on problem ``p``."""
    return any(c.get("time_to", [None])[0] is not None for c in p["contenders"].values())


def _fmt_t(t: float | None) -> str:
    if t is None or not math.isfinite(t):
        return "-"
    return f"{t * 1e3:.3g} ms" if t < 1 else f"{t:.3g} s"


def _library(rec: dict[str, Any], name: str) -> str:
    return str(rec.get("contender_table", {}).get(name, {}).get("library", ""))


def _best(p: dict[str, Any], names: Iterable[str], i: int) -> tuple[str | None, float | None]:
    best: tuple[str | None, float | None] = (None, None)
    for n in names:
        c = p["contenders"].get(n)
        t = None if c is None or "time_to" not in c else c["time_to"][i]   # a failed run: none
        if t is not None and (best[1] is None or t < best[1]):
            best = (n, t)
    return best


def _rel(path: Path | str) -> str:
    """``path`` relative to the repository when it is inside it."""
    p = Path(path)
    try:
        return p.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return p.as_posix()


def _src(rec: dict[str, Any]) -> str:
    return f"`{_rel(rec.get('record_path', rec['record_file']))}`"


def _judge(t: float | None, tp: float | None, limit: float) -> tuple[str, str, bool | None]:
    """Ratio cell, verdict cell and verdict of ours ``t`` against the peer's ``tp`` (times to a
    target, ``None``: not reached): met when ``t / tp <= limit`` or only we reached it, not
    met when only the peer did, not measured when neither did."""
    if t is None and tp is None:
        return "-", "not measured", None
    if t is None:
        return "-", "**not met**", False
    if tp is None:
        return "-", "met", True
    ok = t / tp <= limit
    return f"{t / tp:.2f}×", "met" if ok else "**not met**", ok


def goal_defaults(problems: dict[str, Any]) -> tuple[list[str], int, int]:
    return goal_versus(problems, GOAL_PROBLEMS, 1.0, peers=SKLEARN_SOLVERS,
                       peer_title="fastest of " + ", ".join(
                           s.removeprefix("sklearn ") for s in SKLEARN_SOLVERS))


def _defaults_and_peer(p: dict[str, Any], rec: dict[str, Any],
                       peers: Iterable[str] | None = None
                       ) -> tuple[list[str], tuple[str | None, float | None],
                                  tuple[str | None, float | None]]:
    """Problem ``p`` of record ``rec``: the sqnopt estimators at their defaults (the sqnopt
    contenders whose names start with ``SQN``), the fastest of them to 1e-4 and the fastest of
    ``peers`` (``None``: every scikit-learn contender of the record), each ``(name, time)``."""
    names = [n for n in p["contenders"] if _library(rec, n) == "sqnopt" and n.startswith("SQN")]
    others = list(peers) if peers is not None else \
        [n for n in p["contenders"] if _library(rec, n) == "scikit-learn"]
    return names, _best(p, names, 1), _best(p, others, 1)


def goal_versus(problems: dict[str, Any], keys: Iterable[str], limit: float,
                peers: Iterable[str] | None = None,
                peer_title: str = "fastest scikit-learn solver") -> tuple[list[str], int, int]:
    """The sqnopt estimator at its defaults (the record's sqnopt contenders whose names start
    with ``SQN``) to 1e-4 against the fastest of ``peers`` (``None``: every scikit-learn
    contender of the record), held to ``limit``; every named problem gets a row, measured or
    not."""
    rows = [f"| problem | sqnopt's defaults to 1e-4 | {peer_title} | ratio | goal ≤ {limit:g} | "
            "record |", "|---|---|---|---|---|---|"]
    met = total = 0
    for key in keys:
        if key not in problems:
            rows.append(f"| {key} | not measured (absent from the records) | | | - | |")
            continue
        p, rec = problems[key]
        names, (n1, t1), (n2, t2) = _defaults_and_peer(p, rec, peers)
        ratio, verdict, ok = _judge(t1, t2, limit)
        if ok is None:
            verdict = "not measured: no contender reached 1e-4 within the time cap"
            if names:
                verdict += "".join(f" ({n} last excess {p['contenders'][n]['final_excess']:.2g})"
                                   for n in names)
        else:
            total += 1
            met += ok
        ours_cell = ("not reached" if n1 is None else f"{n1} {_fmt_t(t1)}") if names else \
            "not raced"
        peer_cell = "none reached it" if n2 is None else f"{n2} {_fmt_t(t2)}"
        rows.append(f"| {key} | {ours_cell} | {peer_cell} | {ratio} | {verdict} | {_src(rec)} |")
    return rows, met, total


def goal_half(problems: dict[str, Any], list_absent: bool = False
              ) -> tuple[list[str], int, int]:
    rows = ["| problem | best sqnopt to 1e-6 | best peer in the record | ratio | goal ≤ 0.5 | "
            "peers raced |", "|---|---|---|---|---|---|"]
    met = total = 0
    for key in GOAL_PROBLEMS + (HARD_PROBLEM,):
        if key not in problems:
            if list_absent:
                rows.append(f"| {key} | not measured (absent from the records) | | | - | |")
            continue
        p, rec = problems[key]
        names = list(p["contenders"])
        ours = [n for n in names if _library(rec, n) == "sqnopt"]
        peers = [n for n in names if _library(rec, n) not in ("sqnopt", "")]
        n1, t1 = _best(p, ours, 2)
        n2, t2 = _best(p, peers, 2)
        libs = sorted({_library(rec, n) for n in peers})
        ratio, verdict, ok = _judge(t1, t2, 0.5)
        if ok is None:
            verdict = "not measured: neither reached 1e-6"
        else:
            total += 1
            met += ok
        ours_cell = "none reached it" if n1 is None else f"{n1} {_fmt_t(t1)}"
        peer_cell = "none reached it" if n2 is None else f"{n2} {_fmt_t(t2)}"
        rows.append(f"| {key} | {ours_cell} | {peer_cell} | {ratio} | {verdict} | "
                    f"{', '.join(libs)} |")
    return rows, met, total


def goal_passes(problems: dict[str, Any]) -> tuple[list[str], bool | None]:
    if HARD_PROBLEM not in problems:
        return [f"Not measured: no record has {HARD_PROBLEM}."], None
    p, rec = problems[HARD_PROBLEM]
    rows = [f"{p['description']}; α = {p['alpha']:g}. Record {_src(rec)}.", "",
            "| contender | passes to 1e-2 | passes to 1e-4 | passes to 1e-6 | last excess |",
            "|---|---|---|---|---|"]
    qn_best: float | None = None
    vr_best: float | None = None
    vr_floor = 0.0          # passes a variance-reduced method made without reaching 1e-6
    for n, c in sorted(p["contenders"].items(), key=lambda kv: (kv[1]["passes_to"][2] is None,
                                                                 kv[1]["passes_to"][2] or 0)):
        if _library(rec, n) != "sqnopt":
            continue
        ps = c["passes_to"]
        last = c.get("curve", {}).get("p", [])
        made = 10 ** last[-1] if last else math.nan
        cells = [("-" if v is None else f"{v:.3g}") for v in ps]
        if ps[2] is None and math.isfinite(made):
            cells[2] = f"not reached in {made:.3g}"
        rows.append(f"| {n} | {' | '.join(cells)} | {c['final_excess']:.2g} |")
        if n in VR_METHODS:
            if ps[2] is not None:
                vr_best = ps[2] if vr_best is None else min(vr_best, ps[2])
            elif math.isfinite(made):
                vr_floor = max(vr_floor, made)
        elif any(m in n for m in QN_MARKERS) and ps[2] is not None:
            qn_best = ps[2] if qn_best is None else min(qn_best, ps[2])
    if qn_best is None:
        return rows, False
    ok = (vr_best is None and qn_best < vr_floor) or (vr_best is not None and qn_best < vr_best)
    return rows, ok


def overhead_rows(path: Path | None) -> tuple[list[str], bool | None]:
    if path is None or not path.exists():
        return ["Not recorded: run `OPENBLAS_NUM_THREADS=1 python bench/estimator_overhead.py "
                "--record bench/results/estimator_overhead.json`."], None
    rec = json.loads(path.read_text())
    rows = [f"`{rec['command']}` ({rec['created']}; record `{_rel(path)}`)",
            "", "| fit | best time per fit | / SGDClassifier |", "|---|---|---|"]
    base = rec["rows"][rec["baseline"]]
    for name, t in rec["rows"].items():
        rows.append(f"| {name} | {t * 1e6:.0f} µs | {t / base:.2f}× |")
    ratio = rec["rows"][rec["goal_row"]] / base
    floor = [t / base for n, t in rec["rows"].items()
             if n.startswith(("floor", "scikit-learn's validation"))]
    rows += ["", f"Goal row: {rec['goal_row']}, {ratio:.2f}× `SGDClassifier`"
             + (f"; scikit-learn's input validation alone is {floor[0]:.2f}×." if floor else ".")]
    return rows, ratio <= 0.5


def duel_rows(duel: tuple[dict[str, Any], dict[str, Any]] | None) -> tuple[list[str], bool | None]:
    if duel is None:
        return ["Not measured: no race record has a Pegasos duel."], None
    d, rec = duel
    cs = d["contenders"]
    base = cs[d["baseline"]]["time"]
    rows = [f"{d['data']}; λ = {d['lam']:g}, best of {d['repeats']}. Record {_src(rec)}.", "",
            "| contender | 10 epochs | fixed per fit | per epoch | / SGDClassifier | excess |",
            "|---|---|---|---|---|---|"]
    for name, c in cs.items():
        rows.append(f"| {name} | {_fmt_t(c['time'])} | {_fmt_t(c['fixed'])} | "
                    f"{_fmt_t(c['per_epoch'])} | {c['time'] / base:.3f} | {c['excess']:.4f} |")
    ours = cs["sqnopt Pegasos"]
    ok = ours["time"] < base and ours["excess"] <= cs[d["baseline"]]["excess"] * 1.05
    return rows, ok


def load_seed_races(dirs: Iterable[Path]) -> list[dict[str, Any]]:
    """The newest race record of each ``seed*`` directory under ``dirs``, with its path."""
    recs = []
    for d in dirs:
        for sub in sorted(Path(d).glob("seed*")):
            f = newest(sub.glob("race-*.json"))
            if f is not None:
                rec = json.loads(f.read_text())
                rec["record_path"] = str(f)
                recs.append(rec)
    return recs


def _seed_files(recs: list[dict[str, Any]]) -> str:
    return ", ".join(f"`{_rel(r['record_path'])}`" for r in recs) or "none"


def _seed_list(recs: list[dict[str, Any]]) -> str:
    return ", ".join(str(r.get("seed")) for r in sorted(recs, key=lambda r: int(r.get("seed", 0))))


def goal_seeds(recs: list[dict[str, Any]], limit: float = 1.0
               ) -> tuple[list[str], int, int]:
    """Per problem of the seed records: sqnopt's defaults to 1e-4 against the fastest
    scikit-learn solver in each seed's race, and the verdict on the median ratio."""
    rows = ["| problem | ratio to the fastest scikit-learn solver, by seed | median | "
            f"goal ≤ {limit:g} (median) |", "|---|---|---|---|"]
    keys = list(dict.fromkeys(p["key"] for r in recs for p in r["problems"]))
    met = total = 0
    for key in keys:
        cells, ratios = [], []
        for rec in sorted(recs, key=lambda r: int(r.get("seed", 0))):
            p = next((q for q in rec["problems"] if q["key"] == key), None)
            if p is None:
                continue
            _, (_, t1), (n2, t2) = _defaults_and_peer(p, rec)
            if t1 is None or t2 is None:
                cells.append(f"{rec.get('seed')}: -")
                continue
            ratios.append(t1 / t2)
            cells.append(f"{rec.get('seed')}: {t1 / t2:.2f}× ({_fmt_t(t1)} vs "
                         f"{(n2 or '').removeprefix('sklearn ')} {_fmt_t(t2)})")
        if not ratios:
            rows.append(f"| {key} | {'; '.join(cells)} | - | not measured |")
            continue
        med = statistics.median(ratios)
        ok = med <= limit
        total += 1
        met += ok
        rows.append(f"| {key} | {'; '.join(cells)} | {med:.2f}× | "
                    f"{'met' if ok else '**not met**'} |")
    return rows, met, total


def _verdict(ok: bool | None) -> str:
    return "not measured" if ok is None else ("**met**" if ok else "**not met**")


def render(races: list[Path], overhead: Path | None,
           seed_dirs: Iterable[Path] = ()) -> str:
    problems, duel = load_races(races)
    seeds = load_seed_races(seed_dirs)
    q1, qm1, qn1 = goal_seeds(seeds)
    two, _ = load_races(races, cores=2)
    g1, m1, n1 = goal_defaults(problems)
    g2, m2, n2 = goal_half(problems)
    c1, cm1, cn1 = goal_half(two, list_absent=True)
    c2, cm2, cn2 = goal_versus(two, GOAL_PROBLEMS + (HARD_PROBLEM,), 0.5)
    s1, sm1, sn1 = goal_versus(problems, SPARSE_REGRESSION_PROBLEMS, 1.0)
    g3, ok3 = goal_passes(problems)
    g4, ok4 = overhead_rows(overhead)
    g5, ok5 = duel_rows(duel)
    files = ", ".join(f"`{_rel(f)}`" for f in races)
    out = [
        "# Speed goals: where they stand",
        "",
        "Generated by `python bench/goals.py` from the committed benchmark records (do not edit "
        "by hand: rerun the command, and the benchmarks that wrote the records). Race records "
        f"read: {files}; each problem from the newest record that measured it (one where some "
        "contender reached 1e-2). The tables and plots of each run are beside its record "
        "(`race.md`); "
        "the methods and the machine are in [the race's report](report_race.md) and "
        "[overhead](report_overhead.md).",
        "",
        "| goal | status |",
        "|---|---|",
        f"| `SQNClassifier()` at its defaults reaches 1e-4 relative excess no later than the "
        f"fastest of scikit-learn's lbfgs, liblinear, newton-cholesky, saga | met on {m1} of "
        f"{n1} measured problems ({len(GOAL_PROBLEMS)} named; below) |",
        f"| the best sqnopt composition reaches 1e-6 in ≤ 0.5× the best peer's time | met on "
        f"{m2} of {n2} measured problems |",
        f"| every contender given two cores: the best sqnopt composition reaches 1e-6 in ≤ 0.5× "
        f"the best peer's time | met on {cm1} of {cn1} measured problems |",
        f"| every contender given two cores: sqnopt's defaults reach 1e-4 in ≤ 0.5× the fastest "
        f"scikit-learn solver's time | met on {cm2} of {cn2} measured problems "
        f"({len(GOAL_PROBLEMS) + 1} named) |",
        f"| L1-logistic and regression: sqnopt's defaults reach 1e-4 no later than the fastest "
        f"scikit-learn solver | met on {sm1} of {sn1} measured problems "
        f"({len(SPARSE_REGRESSION_PROBLEMS)} named) |",
        f"| the same for L1-logistic over race seeds {_seed_list(seeds)} (the median ratio) | "
        f"met on {qm1} of {qn1} measured problems |",
        f"| quasi-Newton needs fewer effective passes to 1e-6 than sqnopt's SAGA/SVRG on news20 "
        f"at α = 1e-6 | {_verdict(ok3)} |",
        f"| an estimator fit's fixed cost ≤ 0.5× `SGDClassifier`'s | {_verdict(ok4)} |",
        f"| `Solver.pegasos` 10 epochs on news20 faster than `SGDClassifier`, objective no "
        f"worse | {_verdict(ok5)} |",
        "",
        "## `SQNClassifier()` to 1e-4 against scikit-learn",
        "",
        *g1,
        "",
        "## The best sqnopt composition to 1e-6 against the best peer",
        "",
        "Peers are the non-sqnopt contenders of the record the problem comes from.",
        "",
        *g2,
        "",
        "## With two cores for every contender",
        "",
        "Races run with `--cores 2`: sqnopt's estimators with `n_jobs=2`, scikit-learn's "
        "solvers with two BLAS threads, Vowpal Wabbit with its own threads "
        "([the data-parallel report](report_data_parallel.md)).",
        "",
        "The best sqnopt composition to 1e-6 against the best peer:",
        "",
        *c1,
        "",
        "`SQNClassifier()` to 1e-4 against the fastest scikit-learn solver:",
        "",
        *c2,
        "",
        "## L1-logistic and regression at the defaults",
        "",
        "`SQNClassifier(penalty='l1')` and `SQNRegressor()` to 1e-4 against the fastest "
        "scikit-learn solver of the same problem (liblinear and SAGA for L1; `Ridge`'s and "
        "`PoissonRegressor`'s solvers for regression), one core.",
        "",
        *s1,
        "",
        "Both L1 solvers are randomised -- liblinear's and newGLMNET's coordinate descent visit "
        "the coordinates in a random order, seeded by the race's `--seed` (`random_state`) -- "
        "and their times to 1e-4 vary with the seed. The same race, one run per seed "
        f"({_seed_files(seeds)}):",
        "",
        *q1,
        "",
        "## Quasi-Newton against variance reduction alone, ill-conditioned",
        "",
        *g3,
        "",
        "## An estimator fit's fixed cost",
        "",
        *g4,
        "",
        "## Pegasos against `SGDClassifier`",
        "",
        *g5,
        "",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--races", nargs="+", type=Path, default=None,
                    help="race records (default: the newest of each of "
                         + ", ".join(f"bench/{d}" for d in DEFAULT_RACE_DIRS) + ")")
    ap.add_argument("--overhead", type=Path, default=HERE / DEFAULT_OVERHEAD)
    ap.add_argument("--seed-dirs", nargs="+", type=Path, default=None,
                    help="directories of one race per seed, seed*/race-*.json (default: "
                         + ", ".join(f"bench/{d}" for d in DEFAULT_SEED_DIRS) + ")")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "goals.md")
    args = ap.parse_args(argv)
    races = args.races
    if races is None:
        races = [f for d in DEFAULT_RACE_DIRS
                 if (f := newest((HERE / d).glob("race-*.json"))) is not None]
    races = [Path(r).resolve() for r in races]
    seed_dirs = args.seed_dirs if args.seed_dirs is not None else \
        [HERE / d for d in DEFAULT_SEED_DIRS]
    text = render(races, args.overhead.resolve(), [Path(d).resolve() for d in seed_dirs])
    args.out.write_text(text)
    print(f"wrote {args.out} from {len(races)} race record(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
