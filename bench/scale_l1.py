"""Sparse models on a stream: ``SQNClassifier(penalty="l1", alpha=A).fit(stream_svmlight(path))``
(FTRL-Proximal AdaGrad, the large-data recipe) against Vowpal Wabbit's ``--l1`` (truncated
gradient) on the same hashed CTR file, at a few penalties each: held-out log loss, the
nonzero weights of the model and the wall time (reading and parsing included).

The two penalties are not the same number: sqnopt's ``alpha`` weighs ``||w||_1`` against the
mean loss, VW applies ``--l1`` in its per-example truncation, scaled by its adaptive and
normalised steps. So each is swept over its own grid and the comparison is the held-out loss
at matched sparsity: the table lists every run, sorted by its number of nonzero weights.

Data: the scale benchmark's generated CTR files (``bench/scale``: ``python -m bench.scale
--sizes 1e6`` makes them under ``~/.cache/sqnopt-scale``); this script finds the prepared
directory of ``--size``. Each run is a process of its own (one at a time); the held-out set is
read once per process, outside the clock.

Run::

    nice python -m bench.scale_l1 --size 1e6 --out bench/results/scale_l1

Writes ``results.json`` (every run) and ``results.md`` (the table) under ``--out``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(os.environ.get("SQNOPT_SCALE_CACHE", Path.home() / ".cache" / "sqnopt-scale"))
#: sqnopt's alphas (the L1 weight against the mean log loss) and VW's --l1 values
SQN_ALPHAS = (3e-7, 1e-6, 3e-6, 1e-5)
VW_L1 = (1e-8, 3e-8, 1e-7, 3e-7, 1e-6)


def _prepared(size: str) -> Path:
    hits = sorted(ROOT.glob(f"{size}-*"))
    if not hits or not (hits[0] / "manifest.json").exists():
        raise SystemExit(f"no prepared data for size {size!r} under {ROOT}: run "
                         f"`python -m bench.scale --sizes {size}` first")
    return hits[0]


def _test_set(d: Path, n_features: int) -> tuple[Any, np.ndarray]:
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(d / "test.svm"), n_features=n_features)
    return X.tocsr(), (np.asarray(y) > 0).astype(np.float64)


def run_sqn(d: Path, alpha: float, seed: int, max_iter: int | None = None) -> dict[str, Any]:
    """One ``fit(stream_svmlight(train.svm))`` at ``alpha`` (defaults otherwise: the step
    race, held-out early stopping, the file parsed on every pass; ``max_iter=1``: one pass,
    as VW's)."""
    from scale.session import held_out_metrics

    from sqnopt import SQNClassifier
    from sqnopt.datasets import stream_svmlight

    m = json.loads((d / "manifest.json").read_text())
    n_features = int(m["n_features"])
    Xt, yt = _test_set(d, n_features)
    est = SQNClassifier(penalty="l1", alpha=alpha, random_state=seed,
                        **({} if max_iter is None else {"max_iter": max_iter}))
    t0 = time.perf_counter()
    est.fit(stream_svmlight(d / "train.svm", n_features=n_features, classes=[0.0, 1.0]))
    wall = time.perf_counter() - t0
    metrics = held_out_metrics(yt, margin=est.decision_function(Xt))
    return {"contender": "sqnopt" if max_iter is None else f"sqnopt max_iter={max_iter}",
            "penalty": alpha, "seconds": wall,
            "nnz": int(np.count_nonzero(est.coef_)), "passes": int(est.n_iter_),
            "steps": [float(s) for s in est.steps_], **metrics}


_VW_RUN = """
import sys, time
from vowpalwabbit import Workspace
t0 = time.perf_counter()
ws = Workspace(sys.argv[1])
ws.run_parser()
ws.finish()
print(time.perf_counter() - t0)
"""


def run_vw(d: Path, l1: float, seed: int) -> dict[str, Any]:
    """VW at its defaults with ``--l1`` (one pass, logistic loss, the scale benchmark's
    options; its own process, timed from its start to its end), the held-out predictions and
    the nonzero weights of the saved model (``--readable_model`` of the model loaded for the
    predictions, intercept excluded) afterwards."""
    from scale.session import held_out_metrics
    from vowpalwabbit import Workspace

    m = json.loads((d / "manifest.json").read_text())
    n_features = int(m["n_features"])
    bits = max(18, int(math.ceil(math.log2(n_features + 1))) + 1)
    with tempfile.TemporaryDirectory(prefix="scale-l1-") as tmp:
        model, readable, preds = (Path(tmp) / n for n in ("vw.model", "vw.txt", "p.txt"))
        opts = (f"-d {d / 'train.vw'} -b {bits} --loss_function logistic --holdout_off "
                f"--quiet --random_seed {seed} --l1 {l1!r} -f {model}")
        out = subprocess.run([sys.executable, "-c", _VW_RUN, opts], check=True,
                             capture_output=True, text=True)
        wall = float(out.stdout.split()[-1])
        # the model as saved (VW truncates the weights when it writes them; its readable
        # dump at the end of training is of the weights before the truncation)
        ws = Workspace(f"-t -i {model} -d {d / 'test.vw'} -p {preds} --link logistic --quiet "
                       f"--readable_model {readable}")
        ws.run_parser()
        ws.finish()
        proba = np.loadtxt(preds, dtype=np.float64, ndmin=1)
        nnz = _vw_nnz(readable)
    _, yt = _test_set(d, n_features)
    return {"contender": "vw", "penalty": l1, "seconds": wall, "nnz": nnz, "passes": 1,
            "options": opts.split(" -f ")[0].replace(str(d) + "/", ""),
            **held_out_metrics(yt, proba=proba)}


def _vw_nnz(readable: Path) -> int:
    """Nonzero weights of a VW readable model (lines ``index:weight [state...]`` after the
    header), the constant (VW's intercept, index 116060 at the default hash seed) left out."""
    import re

    nnz = 0
    for line in readable.read_text().splitlines():
        hit = re.match(r"^(\d+):(\S+)", line)
        if hit and hit.group(1) != "116060" and float(hit.group(2)) != 0.0:
            nnz += 1
    return nnz


def _table(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [f"# L1 on a stream: sqnopt vs VW --l1 ({meta['size']}, "
             f"{meta['n_train']:,} training rows, {meta['n_features']:,} features)", "",
             f"Command: `{meta['command']}`; load average before the runs "
             f"{meta['loadavg_before']}, after {meta['loadavg_after']}.", "",
             "| contender | penalty | nonzero weights | held-out log loss | AUC | wall s "
             "(read + parse + train) | passes |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for r in sorted(rows, key=lambda r: r["nnz"]):
        name = ("vw --l1 A'" if r["contender"] == "vw" else
                "SQNClassifier(penalty='l1', alpha=A"
                + r["contender"][len("sqnopt"):].replace(" ", ", ") + ").fit(stream_svmlight)")
        lines.append(f"| {name} | {r['penalty']:g} | {r['nnz']:,} | {r['loss']:.5f} | "
                     f"{r['auc']:.4f} | {r['seconds']:.1f} | {r['passes']} |")
    lines += ["", f"Bayes held-out log loss of the generator: {meta['bayes_test']:.5f}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="1e6")
    ap.add_argument("--out", default="bench/results/scale_l1")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--alphas", type=float, nargs="*", default=list(SQN_ALPHAS))
    ap.add_argument("--vw-l1", type=float, nargs="*", default=list(VW_L1))
    ap.add_argument("--one", nargs=2, metavar=("CONTENDER", "PENALTY"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    d = _prepared(args.size)
    if args.one:     # inside the run's own process
        who, pen = args.one[0], float(args.one[1])
        res = (run_vw(d, pen, args.seed) if who == "vw" else
               run_sqn(d, pen, args.seed, 1 if who == "sqnopt1" else None))
        print("RESULT " + json.dumps(res))
        return
    m = json.loads((d / "manifest.json").read_text())
    meta = {"size": args.size, "n_train": m["n_train"], "n_features": m["n_features"],
            "bayes_test": m["bayes_log_loss_test"],
            "command": "python -m bench.scale_l1 " + " ".join(argv or sys.argv[1:]),
            "loadavg_before": Path("/proc/loadavg").read_text().split()[:3]}
    rows = []
    jobs = ([("sqnopt", a) for a in args.alphas] + [("sqnopt1", a) for a in args.alphas]
            + [("vw", a) for a in args.vw_l1])
    here = Path(__file__).resolve().parent
    for who, pen in jobs:
        out = subprocess.run([sys.executable, "-m", "scale_l1", "--size", args.size,
                              "--seed", str(args.seed), "--one", who, repr(pen)],
                             cwd=here, check=True, capture_output=True, text=True)
        line = [x for x in out.stdout.splitlines() if x.startswith("RESULT ")][-1]
        rows.append(json.loads(line[len("RESULT "):]))
        print(f"{who} {pen:g}: nnz {rows[-1]['nnz']:,} loss {rows[-1]['loss']:.5f} "
              f"{rows[-1]['seconds']:.1f} s", flush=True)
    meta["loadavg_after"] = Path("/proc/loadavg").read_text().split()[:3]
    outdir = Path(args.out)
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "results.json").write_text(json.dumps({"meta": meta, "runs": rows}, indent=1)
                                         + "\n")
    (outdir / "results.md").write_text(_table(rows, meta))


if __name__ == "__main__":
    main()
