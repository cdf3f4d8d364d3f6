"""Command line of the scale benchmark.

    nice python -m bench.scale                          # 10^6, 10^7 and criteo; hours on 2 cores
    python -m bench.scale --quick --out /tmp/s          # smoke run: tiny sizes, < 2 min
    nice python -m bench.scale --sizes 1e6 --contenders VW "SGDClassifier.partial_fit"
    nice python -m bench.scale --sizes 1e8 --formats svm vw   # opt-in: ~45 GB of files
    python -m bench.scale --render bench/results/scale/scale-<stamp>.json  # table + plots again

Generates each data set once into ``--data-dir`` (default ``~/.cache/sqnopt-scale`` or
``$SQNOPT_SCALE_DATA``), runs every contender in its own process on it and writes, under
``--out`` (default ``bench/results/scale``): the record ``scale-<stamp>.json`` (< 100 kB), the
report ``scale.md`` and the figures ``plots/<size>.png``; a full run (not ``--quick``, no
selection flags) also renders the report into ``docs/scale.md`` (``--docs`` overrides,
``--docs none`` skips).
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
from .data import (
    DEFAULT_SIZES,
    FORMATS,
    QUICK_SIZES,
    SPECS,
    binary_available,
    default_data_dir,
    prepare,
    summary,
)
from .runner import Settings, run_contender

ROOT = _runinfo.ROOT
DEFAULT_OUT = ROOT / "bench" / "results" / "scale"
DEFAULT_DOCS = ROOT / "docs" / "scale.md"


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.scale",
                                 description="Held-out log loss against wall time and examples "
                                             "processed on large generated CTR streams, each "
                                             "contender reading the file itself.")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: a 20,000-row generated set (and the Criteo sample when "
                         "present), the quick contenders, short caps (< 2 min on 2 cores)")
    ap.add_argument("--sizes", nargs="+", choices=list(SPECS), default=None,
                    help=f"data sets (default {' '.join(DEFAULT_SIZES)}; 1e8 is opt-in)")
    ap.add_argument("--contenders", nargs="+", default=None, metavar="NAME",
                    help="contender names as in the table (quote names with spaces)")
    ap.add_argument("--formats", nargs="+", choices=FORMATS, default=None,
                    help="training files to write (default: all this environment can write; "
                         "contenders needing another are skipped)")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help=f"cache of the generated files (default {default_data_dir()})")
    ap.add_argument("--datasets-dir", default=None,
                    help="the shared datasets, for the Criteo sample (default: "
                         "$SQNOPT_DATASETS or ../shared/datasets)")
    ap.add_argument("--chunk-rows", type=int, default=None,
                    help="rows per chunk of the streaming contenders (default 100000; "
                         "--quick 2000)")
    ap.add_argument("--cap", type=float, default=None,
                    help="seconds counted per contender and data set (default per data set: "
                         "900 at 10^6, 1800 at 10^7, 3600 at 10^8, 120 on Criteo, 20 --quick)")
    ap.add_argument("--memory-budget", type=float, default=None, metavar="GB",
                    help="skip in-memory contenders whose data would need more (default: half "
                         "the machine's memory)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None,
                    help=f"directory of the record, report and plots (default {DEFAULT_OUT})")
    ap.add_argument("--docs", default=None,
                    help="Markdown file to render the report into (default: docs/scale.md for a "
                         "full unselected run, none otherwise); 'none' skips")
    ap.add_argument("--list", action="store_true", help="list the data sets and contenders")
    ap.add_argument("--render", type=Path, nargs="+", default=None, metavar="RECORD",
                    help="only render the report and plots of existing records (several: their "
                         "data sets in one report, in the order given)")
    return ap.parse_args(argv)


def upgrade(record: dict[str, Any]) -> dict[str, Any]:
    """A record written before the samples-to-target ratios were stored with each data set
    gets them computed from its (compact) curves, marked ``ratios_from_compact``: exact when
    no curve was downsampled (all had at most the record's points per curve)."""
    table = record.get("contender_table", {})
    for size in record.get("sizes", []):
        if "ratios" not in size:
            size["ratios"] = core.ratio_rows(size.get("contenders", {}), table,
                                             size.get("best_loss"))
            size["ratios_from_compact"] = True
    return record


def merge_records(records: list[dict[str, Any]]) -> dict[str, Any]:
    """One record holding the data sets of several runs (each data set keeps its own
    contenders and loads): the first record's header, the commands and record files of all,
    the contender tables and skipped lists joined. A data set in two records is an error."""
    if len(records) == 1:
        return records[0]
    out = dict(records[0])
    names = [sz["name"] for r in records for sz in r.get("sizes", [])]
    if len(set(names)) != len(names):
        raise SystemExit(f"--render: a data set appears in more than one record ({names})")
    out["sizes"] = [sz for r in records for sz in r.get("sizes", [])]
    out["command"] = "` and `".join(r.get("command", "") for r in records)
    out["record_file"] = ", ".join(r.get("record_file", "") for r in records)
    out["skipped"] = [line for r in records for line in r.get("skipped", [])]
    out["contender_table"] = {k: v for r in records
                              for k, v in r.get("contender_table", {}).items()}
    out["wall_seconds"] = sum(float(r.get("wall_seconds", 0.0)) for r in records)
    return out


def write_outputs(record: dict[str, Any], out: Path, docs: Path | None) -> None:
    """Report and plots from the (compact) record: ``out/scale.md`` and ``out/plots``; the
    same report into ``docs`` with links to those plots."""
    record = upgrade(record)
    plot_dir = out / "plots"
    plots.draw_all(record, plot_dir)
    (out / "scale.md").write_text(report.render(record, "plots"))
    if docs is not None:
        docs.write_text(report.render(record, os.path.relpath(plot_dir, docs.parent)))


def memory_needed(manifest: dict[str, Any]) -> float:
    """Bytes an in-memory contender needs for the training set, roughly: the CSR matrix (12
    bytes a stored value) three times (the reader's arrays, the validated copy, the solver's
    rows), and a few vectors of the rows' length."""
    return 3.0 * 12 * manifest["nnz_train"] + 32.0 * manifest["n_train"]


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    out = (args.out or DEFAULT_OUT).resolve()
    if args.list:
        for s in SPECS.values():
            print(f"data set {s.name}: {s.n_train} + {s.n_test} rows, {s.description}")
        for c in C.CONTENDERS:
            print(f"contender {c.name!r} ({c.library}; reads {', '.join(c.formats)}"
                  + (", in memory" if c.in_memory else "") + f"): {c.note}")
        return 0
    selected = any(x is not None for x in (args.sizes, args.contenders))
    if args.docs is None:
        docs = None if (args.quick or selected or args.render is not None) else DEFAULT_DOCS
    else:
        docs = None if args.docs.lower() == "none" else Path(args.docs).resolve()
    if args.render is not None:
        record = merge_records([json.loads(r.read_text()) for r in args.render])
        out.mkdir(parents=True, exist_ok=True)
        write_outputs(record, out, docs)
        print(f"rendered {out / 'scale.md'}" + (f" and {docs}" if docs else ""))
        return 0
        return 0

    t_start = time.perf_counter()
    from race.problems import datasets_dir

    settings = Settings(seed=args.seed,
                        chunk_rows=args.chunk_rows or (2000 if args.quick else 100_000),
                        slack=60.0 if args.quick else 120.0)
    budget = (args.memory_budget * 2**30 if args.memory_budget is not None
              else _half_memory())
    sizes = args.sizes or list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    formats = tuple(args.formats or FORMATS)
    if "parquet" in formats and not _has("pyarrow"):
        formats = tuple(f for f in formats if f != "parquet")
        print("no Parquet files: pyarrow is not installed")
    if "bin" in formats and not binary_available():
        formats = tuple(f for f in formats if f != "bin")
        print("no binary chunk files: this sqnopt has no sqnopt.datasets.write_binary")
    data_dir = (args.data_dir or default_data_dir()).resolve()
    root = datasets_dir(args.datasets_dir)
    sel = C.select(args.contenders, quick=args.quick)
    skipped = list(sel.skipped)
    for line in sel.skipped:
        print(line)
    record: dict[str, Any] = {
        "schema": 1, "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python -m bench.scale " + " ".join(sys.argv[1:] if argv is None else argv),
        "quick": bool(args.quick), "seed": args.seed, "machine": _runinfo.machine(),
        "versions": _runinfo.versions(),
        "config": {"sizes": sizes, "contenders": args.contenders, "formats": list(formats),
                   "chunk_rows": settings.chunk_rows, "cap": args.cap,
                   "slack": settings.slack, "alpha_rule": "1/N",
                   "targets": list(core.TARGETS), "memory_budget": budget,
                   "nice": os.nice(0)},
        "sizes": [],
    }
    for name in sizes:
        spec = SPECS[name]
        try:
            prepared = prepare(spec, data_dir, formats, datasets_dir=root)
        except FileNotFoundError as exc:
            skipped.append(f"data set {name}: skipped, {exc}")
            print(skipped[-1])
            continue
        m = prepared.manifest
        settings.cap = args.cap or spec.cap
        print(f"\n== {name}: N = {m['n_train']:,}, d = {m['n_features']:,}, "
              f"{m['nnz_train']:,} stored values, {m['positive_rate_train']:.1%} positives"
              + (f", Bayes log loss (held out) {m['bayes_log_loss_test']:.5f}"
                 if m.get("bayes_log_loss_test") else "") + f"  [load {_runinfo.load()}]",
              flush=True)
        entries: dict[str, Any] = {}
        for c in sel.contenders:
            lacking = [f for f in c.formats if not prepared.has(f)]
            if lacking:
                skipped.append(f"{c.name} on {name}: skipped, no {'/'.join(lacking)} file "
                               "(--formats)")
                continue
            if c.in_memory and memory_needed(m) > budget:
                skipped.append(f"{c.name} on {name}: skipped, the training set needs about "
                               f"{memory_needed(m) / 2**30:.0f} GB in memory (budget "
                               f"{budget / 2**30:.0f} GB)")
                continue
            load = _runinfo.load()
            entry = run_contender(c, prepared, settings)
            entry["load"] = load
            entries[c.name] = entry
            fin = core.summarize(entry.get("curve", {}))
            f = fin["final"] or {}
            print(f"  {c.name:56s} {entry['status']:9s} {core.fmt_seconds(f.get('time')):>9s} "
                  f"loss {f.get('loss', float('nan')):.5f}  "
                  f"{core.fmt_count(fin['examples_per_second'])}/s  "
                  f"RSS {core.fmt_bytes(entry.get('peak_rss'))}  [load {load}]", flush=True)
        size_entry = {"name": name, "data": summary(prepared), "alpha": 1.0 / m["n_train"],
                      "cap": settings.cap, "hard_cap": settings.cap * 1.5 + settings.slack,
                      "contenders": entries}
        size_entry.update(core.finish_size(entries, {c.name: {"role": c.role}
                                                     for c in sel.contenders}))
        record["sizes"].append(size_entry)
    record["skipped"] = skipped
    record["contender_table"] = {c.name: {"library": c.library, "passes": c.passes,
                                          "role": c.role, "formats": list(c.formats),
                                          "in_memory": c.in_memory, "note": c.note}
                                 for c in sel.contenders}
    record["machine"]["load_end"] = _runinfo.load()
    record["wall_seconds"] = round(time.perf_counter() - t_start, 1)
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%MZ")
    fname = f"scale-{stamp}{'-quick' if args.quick else ''}.json"
    record["record_file"] = (os.path.relpath(out / fname, ROOT) if out.is_relative_to(ROOT)
                             else fname)
    out.mkdir(parents=True, exist_ok=True)
    try:
        text, points = core.compact_record(record)
    except ValueError:
        (out / f"{fname}.uncompacted").write_text(json.dumps(record, default=float))
        print(f"the compact record did not fit; the whole record is in "
              f"{out / (fname + '.uncompacted')}", file=sys.stderr)
        raise
    (out / fname).write_text(text + "\n")
    write_outputs(json.loads(text), out, docs)
    print(f"\nwrote {out / fname} ({len(text.encode()) / 1e3:.1f} kB, {points} points per "
          f"curve), {out / 'scale.md'}, {out / 'plots'}" + (f" and {docs}" if docs else "")
          + f"; {record['wall_seconds']:.0f} s")
    for line in skipped:
        print(line)
    return 0


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _half_memory() -> float:
    try:
        import psutil

        return float(psutil.virtual_memory().total) / 2
    except ImportError:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")) / 2
