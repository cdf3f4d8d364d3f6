"""Grid sweeps of one preset's parameters on the race's L2-logistic problems, against the
full-batch ``lbfgs`` preset in the same process (``bench/progressive_theta.py``,
``bench/multibatch_growth.py``).

Each run goes for at most ``max_epochs`` effective passes and 1000 iterations without the
gradient-norm stop, recording a point per iteration; the record keeps, per data set and run,
the effective passes and iterations to 1e-2, 1e-4 and 1e-6 relative excess, the final relative
excess and the status (passes and iterations do not depend on the machine's load).
:func:`table` renders the mean passes to 1e-6 over the seeds and the worst case.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from bench.full_batch_solvers import TARGETS, reach
from bench.race.problems import Problem, cache_path, datasets_dir, load_problems, reference

from sqnopt import Solver

#: ``runs(problem, common)``: label -> solver; labels of seeded runs end in `` seed=<k>``.
RunBuilder = Callable[[Problem, dict[str, Any]], dict[str, Solver]]
#: ``extra(state)``: fields added to a run's record and a note for its printed line.
Extra = Callable[[Any], tuple[dict[str, Any], str]]


def add_arguments(ap: argparse.ArgumentParser, out: Path) -> None:
    """The options every sweep shares (its own grid options are added by the script)."""
    ap.add_argument("--datasets", default="a9a,w8a,news20")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--max-epochs", type=float, default=300.0)
    ap.add_argument("--out", default=str(out))
    ap.add_argument("--table", action="store_true",
                    help="print the table of the record in --out and exit (no runs)")


def seeds(args: argparse.Namespace) -> list[int]:
    return [int(s) for s in args.seeds.split(",")]


def sweep(args: argparse.Namespace, runs: RunBuilder, extra: Extra | None = None
          ) -> dict[str, Any]:
    """Run ``runs`` (plus the full-batch reference) on every data set of ``--datasets``;
    prints a line per run and returns the record (written by :func:`finish`)."""
    record: dict[str, Any] = {"max_epochs": args.max_epochs, "seeds": seeds(args),
                              "problem": "logistic, alpha = 1/N, no intercept (bench/race)",
                              "results": {}}
    skipped: list[str] = []
    for p in load_problems(args.datasets.split(","), ["logistic"], datasets_dir(),
                           quick=False, skipped=skipped):
        reference(p, cache_path())
        fstar = p.f_star
        common = dict(lam=p.alpha, gtol=None, max_epochs=args.max_epochs, max_iter=1000,
                      report_every=1, history_every=1)
        grid: dict[str, Solver] = {"lbfgs (full batch, Wolfe)": Solver.preset("lbfgs", **common)}
        grid.update(runs(p, common))
        for label, solver in grid.items():
            state = solver.init_state(p.X, p.y)
            res = solver.run(state)
            cells = {f"{t:g}": reach(res.history, fstar, t) for t in TARGETS}
            fields, note = extra(state) if extra is not None else ({}, "")
            record["results"].setdefault(p.dataset, {})[label] = {
                "final_rel_excess": (res.fun - fstar) / fstar, "iterations": res.n_iter,
                "passes": res.effective_passes, "status": str(res.status.value),
                "pairs_accepted": res.n_pairs_accepted, "pairs_skipped": res.n_pairs_skipped,
                **fields, "reached": cells}
            shown = "  ".join(
                f"{t}: " + ("-" if c is None else f"{c['passes']:.0f}p/{c['iterations']}it")
                for t, c in cells.items())
            print(f"{p.dataset:6s} {label:32s} {shown}  final {(res.fun - fstar) / fstar:.1e} "
                  f"{res.status.value}{note}", flush=True)
    for line in skipped:
        print(line)
    record["worst_passes_to_1e-6"] = worst(record)
    return record


def finish(record: dict[str, Any], out: str) -> int:
    """Write the record and print its table."""
    path = Path(out)
    path.write_text(json.dumps(record, default=float) + "\n")
    print(f"wrote {path}")
    print(table(record))
    return 0


def print_table(out: str) -> int:
    print(table(json.loads(Path(out).read_text())))
    return 0


def _passes_to_1e6(record: dict[str, Any]) -> Iterable[tuple[str, str, float]]:
    """``(data set, run without its seed, passes to 1e-6 or inf)`` for every run."""
    for ds, per in record["results"].items():
        for label, r in per.items():
            c6 = r["reached"]["1e-06"]
            yield ds, label.rsplit(" seed=", 1)[0], math.inf if c6 is None else float(c6["passes"])


def worst(record: dict[str, Any]) -> dict[str, float]:
    """Per gridded run (seeds merged), the most passes to 1e-6 over data sets and seeds."""
    out: dict[str, float] = {}
    for _, key, passes in _passes_to_1e6(record):
        if not key.startswith("lbfgs (full batch"):
            out[key] = max(out.get(key, 0.0), passes)
    return out


def table(record: dict[str, Any]) -> str:
    """Effective passes to 1e-6 per data set, mean over the seeds (``-``: a seed never got
    there), and the worst over data sets and seeds: a Markdown table."""
    sets = list(record["results"])
    rows: dict[str, dict[str, list[float]]] = {}
    for ds, key, passes in _passes_to_1e6(record):
        rows.setdefault(key, {}).setdefault(ds, []).append(passes)
    lines = ["| run | " + " | ".join(f"{ds}: passes to 1e-6" for ds in sets) + " | worst |",
             "|---" * (len(sets) + 2) + "|"]
    for key, per in rows.items():
        cells = []
        for ds in sets:
            v = per.get(ds, [])
            cells.append("-" if not v or not all(map(math.isfinite, v))
                         else f"{sum(v) / len(v):.0f}")
        w = max((x for v in per.values() for x in v), default=math.inf)
        lines.append(f"| {key} | " + " | ".join(cells) + " | "
                     + ("-" if not math.isfinite(w) else f"{w:.0f}") + " |")
    return "\n".join(lines)
