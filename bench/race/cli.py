"""Command line of the race.

    python -m bench.race                       # everything present, 3 rounds; ~1-2 h on 2 cores
    python -m bench.race --quick --out /tmp/r  # smoke run: shipped a9a + generated data, < 5 min
    python -m bench.race --datasets a9a w8a --problems logistic --contenders "sklearn lbfgs" ...
    python -m bench.race --render bench/results/race/race-<stamp>.json   # table + plots again

Writes, under ``--out`` (default ``bench/results/race``): the record ``race-<stamp>.json``
(< 100 kB), the table ``race.md`` and the figures ``plots/<dataset>-<problem>.png``; a full run
(not ``--quick``, no selection flags) also renders the table into ``docs/race.md`` (``--docs``
overrides, ``--docs none`` skips).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import _runinfo

from . import contenders as C
from . import core, plots, report
from .problems import (DATASETS, PROBLEM_KINDS, cache_path, datasets_dir, load_problems,
                       recorded_references, reference)
from .runner import Settings, finish_problem, run_problem

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "bench" / "results" / "race"
DEFAULT_DOCS = ROOT / "docs" / "race.md"
QUICK_DATASETS = [n for n, d in DATASETS.items() if d.quick]


def _versions() -> dict[str, str]:
    return _runinfo.versions()


def _machine() -> dict[str, Any]:
    return _runinfo.machine()


def _load() -> str:
    return _runinfo.load()


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.race",
                                 description="Race sqnopt against its peers: time to a target "
                                             "relative excess on every data set present.")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: the shipped a9a and generated data, first problem of each, "
                         "1 round, short caps (< 5 min on 2 cores)")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"directory of the record, table and plots (default {DEFAULT_OUT})")
    ap.add_argument("--docs", default=None,
                    help="Markdown file to render the table into (default: docs/race.md for a "
                         "full unselected run, none otherwise, also with --render); 'none' "
                         "skips")
    ap.add_argument("--datasets", nargs="+", choices=list(DATASETS), default=None)
    ap.add_argument("--problems", nargs="+", choices=list(PROBLEM_KINDS), default=None)
    ap.add_argument("--contenders", nargs="+", default=None, metavar="NAME",
                    help="contender names as in the table (quote names with spaces)")
    ap.add_argument("--repeats", type=int, default=None, help="rounds (best of; default 3)")
    ap.add_argument("--cap-scale", type=float, default=None,
                    help="multiply every problem's time cap (default 1; --quick 0.15)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cores", type=int, default=1,
                    help="threads every contender may use: BLAS and OpenMP of the peers (set "
                    "before NumPy loads) and sqnopt's n_jobs (default 1)")
    ap.add_argument("--datasets-dir", default=None,
                    help="the shared datasets (default: $SQNOPT_DATASETS or ../shared/datasets)")
    ap.add_argument("--fstar-cache", default=None,
                    help=f"F* cache (default {cache_path()}); 'none' disables")
    ap.add_argument("--fstar-from", nargs="+", type=Path, default=None, metavar="RECORD",
                    help="race records (or directories of them) whose reference values stand "
                         "in for the reference solve of a problem the F* cache lacks (the "
                         "same data, loss and alpha); stored in the cache")
    ap.add_argument("--no-duel", action="store_true", help="skip the Pegasos duel")
    ap.add_argument("--duel-only", action="store_true",
                    help="only the Pegasos duel on news20 (printed; with --update, written)")
    ap.add_argument("--update", type=Path, default=None, metavar="RECORD",
                    help="with --duel-only: replace RECORD's duel section by this measurement "
                         "(stamped with its own date, commit and machine load) and render the "
                         "record's table again (into docs/race.md unless --docs none)")
    ap.add_argument("--no-floors", action="store_true", help="skip the per-iteration floors")
    ap.add_argument("--list", action="store_true", help="list data sets and contenders")
    ap.add_argument("--render", type=Path, default=None, metavar="RECORD",
                    help="only render the table and plots of an existing record")
    return ap.parse_args(argv)


def write_outputs(record: dict[str, Any], out: Path, docs: Path | None) -> None:
    """Table and plots from the (compact) record: ``out/race.md`` and ``out/plots``; the
    same table into ``docs`` with links to those plots."""
    plot_dir = out / "plots"
    plots.draw_all(record, plot_dir)
    (out / "race.md").write_text(report.render(record, "plots"))
    if docs is not None:
        rel = os.path.relpath(plot_dir, docs.parent)
        docs.write_text(report.render(record, rel))


def duel_only(args: argparse.Namespace) -> int:
    from .duel import pegasos_duel

    cache = None if (args.fstar_cache or "").lower() == "none" else Path(
        args.fstar_cache or cache_path())
    skipped: list[str] = []
    for p in load_problems(["news20"], ["hinge"], datasets_dir(args.datasets_dir), quick=False,
                           skipped=skipped):
        reference(p, cache)
        print(f"== Pegasos vs SGDClassifier, 10 epochs on {p.key} (F* = {p.f_star:.8g})")
        load_start = _load()
        duel = pegasos_duel(p, repeats=args.repeats or 7)
        if args.update is not None:
            record = json.loads(args.update.read_text())
            duel["measured"] = {
                "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "command": "python -m bench.race " + " ".join(sys.argv[1:]),
                "sqnopt": _versions()["sqnopt"], "load": f"{load_start} -> {_load()}"}
            record["pegasos_duel"] = core._rounded(duel, 4)    # as compact_record stores it
            args.update.write_text(json.dumps(record, separators=(",", ":"), allow_nan=False)
                                   + "\n")
            docs = None if (args.docs or "").lower() == "none" else Path(
                args.docs or DEFAULT_DOCS).resolve()
            out = args.out.resolve() if args.out else args.update.resolve().parent
            write_outputs(record, out, docs)
            print(f"updated the duel of {args.update}; rendered {out / 'race.md'}"
                  + (f" and {docs}" if docs else ""))
    for line in skipped:
        print(line)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    out = (args.out or DEFAULT_OUT).resolve()
    if args.list:
        for n, d in DATASETS.items():
            print(f"data set {n}: problems {', '.join(d.problems)}"
                  + (" (quick)" if d.quick else ""))
        for c in C.CONTENDERS:
            print(f"contender {c.name!r} ({c.library}, {c.kind}): {', '.join(c.losses)}")
        return 0
    selected = any(x is not None for x in (args.datasets, args.problems, args.contenders))
    if args.docs is None:
        docs = None if (args.quick or selected or args.render is not None) else DEFAULT_DOCS
    else:
        docs = None if args.docs.lower() == "none" else Path(args.docs).resolve()
    if args.render is not None:
        record = json.loads(args.render.read_text())
        out.mkdir(parents=True, exist_ok=True)
        write_outputs(record, out, docs)
        print(f"rendered {out / 'race.md'}" + (f" and {docs}" if docs else ""))
        return 0

    if args.update is not None and not args.duel_only:
        raise SystemExit("--update goes with --duel-only")
    if args.duel_only:
        return duel_only(args)
    t_start = time.perf_counter()
    if args.cores < 1:
        raise SystemExit("--cores must be >= 1")
    settings = Settings(repeats=args.repeats or (1 if args.quick else 3), seed=args.seed,
                        cap_scale=args.cap_scale or (0.15 if args.quick else 1.0),
                        n_jobs=args.cores)
    C.N_JOBS[0] = args.cores
    if args.quick:
        settings.pilot_cap = 0.5
    names = args.datasets or (QUICK_DATASETS if args.quick else list(DATASETS))
    cache = None if (args.fstar_cache or "").lower() == "none" else Path(
        args.fstar_cache or cache_path())
    sel = C.select(args.contenders)
    skipped = list(sel.skipped)
    for line in sel.skipped:
        print(line)
    root = datasets_dir(args.datasets_dir)
    record: dict[str, Any] = {
        "schema": 1, "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python -m bench.race " + " ".join(sys.argv[1:] if argv is None else argv),
        "quick": bool(args.quick), "seed": args.seed, "machine": _machine(),
        "versions": _versions(),
        "config": {"repeats": settings.repeats, "cap_scale": settings.cap_scale,
                   "cores": args.cores,
                   "stop_excess": settings.stop_excess, "max_passes": settings.max_passes,
                   "pilot_passes": settings.pilot_passes, "pilot_cap": settings.pilot_cap,
                   "targets": list(core.TARGETS), "datasets": names,
                   "problems": args.problems, "contenders": args.contenders,
                   "datasets_dir": str(root) if root else None},
        "problems": [],
    }
    recorded = recorded_references(args.fstar_from) if args.fstar_from else None
    hinge_problem = None
    try:
        for p in load_problems(names, args.problems, root, quick=args.quick, skipped=skipped):
            tic = time.perf_counter()
            reference(p, cache, recorded)
            how = ("cached" if p.reference.get("cached") else "from a record"
                   if p.reference.get("from_record") else "solved")
            print(f"\n== {p.key}: N = {p.n}, d = {p.d}, alpha = {p.alpha:.3g}, F* = "
                  f"{p.f_star:.10g} ({how} {time.perf_counter() - tic:.1f} s)", flush=True)
            outcomes = run_problem(p, sel.contenders, settings, skipped)
            entry = finish_problem(p, outcomes)
            record["problems"].append(entry)
            for k, r in entry["ratios"].items():
                print(f"  sqnopt / best peer to {k}: {report._ratio_cell(r)}")
            print(f"  ({time.perf_counter() - tic:.0f} s)", flush=True)
            if p.loss == "hinge" and p.dataset == "news20":
                hinge_problem = p
    finally:
        C.vw_cleanup()
    if not args.no_duel:
        if hinge_problem is None:
            skipped.append("Pegasos duel: skipped, needs the news20 hinge problem (news20 "
                           "present and selected)")
        else:
            print("\n== Pegasos vs SGDClassifier, 10 epochs on news20 (hinge)")
            from .duel import pegasos_duel

            record["pegasos_duel"] = pegasos_duel(hinge_problem)
    if not args.no_floors:
        print("\n== per-iteration floors")
        from .floors import measure

        record["floors"] = measure(quick=args.quick)
    record["skipped"] = skipped
    record["contender_table"] = {c.name: {"library": c.library, "kind": c.kind,
                                          "passes": c.passes_kind, "note": c.note}
                                 for c in sel.contenders}
    record["machine"]["load_end"] = _load()
    record["wall_seconds"] = round(time.perf_counter() - t_start, 1)
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%MZ")
    name = f"race-{stamp}{'-quick' if args.quick else ''}.json"
    record["record_file"] = os.path.relpath(out / name, ROOT) if out.is_relative_to(ROOT) \
        else name
    out.mkdir(parents=True, exist_ok=True)
    try:
        text, points = core.compact_record(record)
    except ValueError:
        # never lose a run to the size limit: keep the whole record beside, then fail
        (out / f"{name}.uncompacted").write_text(json.dumps(record, default=float))
        print(f"the compact record did not fit; the whole record is in "
              f"{out / (name + '.uncompacted')}", file=sys.stderr)
        raise

    (out / name).write_text(text + "\n")
    compact = json.loads(text)
    write_outputs(compact, out, docs)
    print(f"\nwrote {out / name} ({len(text.encode()) / 1e3:.1f} kB, {points} points per curve), "
          f"{out / 'race.md'}, {out / 'plots'}" + (f" and {docs}" if docs else "")
          + f"; {record['wall_seconds']:.0f} s")
    for line in skipped:
        print(line)
    return 0
