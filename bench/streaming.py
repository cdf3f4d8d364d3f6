"""The streaming regime: one pass over chunks, at the defaults.

``partial-fit``: ``partial_fit`` at its defaults against ``SGDClassifier().partial_fit``. Each
data set is split once (its own test split where it has one, else a stratified 25 % held out
with a fixed seed); the training rows are put in a seeded random order (one order per
repetition, the same for both estimators) and fed in chunks of ``--chunk`` rows, once. Both
estimators are built with no arguments but ``random_state`` (scikit-learn's default loss is
the hinge, sqnopt's the logistic loss: each at its defaults). Beside them, the held-out accuracy
of the model ``partial_fit`` aims at: ``SQNClassifier().fit`` on all the training rows (the
regularised logistic loss solved to ``tol``): where it is below SGD's, the gap is the loss's
and the regularisation's, not the pass's. Dense sets from scikit-learn are
standardized (as a user of SGD is told to); the LIBSVM sets are used as shipped (their
features are already scaled or binary). Reported: held-out accuracy after the pass, mean and
worst over the repetitions, and the ratio of the two estimators' mean accuracies. Data:
scikit-learn's bundled sets, sqnopt's shipped a9a, and the LIBSVM sets of ``shared/datasets``
when present (skipped otherwise). Writes ``bench/results/partial_fit_defaults.json`` (or
``--out``) and prints a Markdown table.

``step-race``: the streaming recipe's step race: what one pass gets with the step it picks,
against every candidate step fixed, and how the length of the race's first segment changes the
pick. For each data set, one pass (``max_iter=1``, ``early_stopping=False``: every training
row used, so that the comparison is of steps alone) of ``SQNClassifier()`` in the large-data
regime (the data given as a stream of chunks, which always takes the streaming recipe), with
each candidate ``2**k / s`` of :data:`sqnopt.recipes.STEP_EXPONENTS` alone (a race of one), and
the race of all candidates with a first segment of each ``--segments`` rows
(:data:`sqnopt.recipes.RACE_FIRST_SEGMENT` is the default's), and the held-out log loss of
each. Reported: the best fixed candidate, and for each segment the step the race picked and its
loss's excess over the best candidate's. Data: the generated 10^6-row CTR stream
(:class:`sqnopt.datasets.HashedCTRGenerator`, in memory from a seed), sqnopt's shipped a9a, and
the LIBSVM sets and the Criteo sample of ``shared/datasets`` when present. Writes
``bench/results/step_race.json`` (or ``--out``).

``in-memory-chunks``: ``SQNClassifier()`` at its defaults on the generated 10^6-row CTR data in
memory (the large-data regime), with the data taken as one chunk against chunks of
:data:`sqnopt.training._streaming.IN_MEMORY_CHUNK` rows (``--chunks``), alternating for
``--rounds``: fit seconds to early stopping, passes and held-out log loss. ``--copies-ab``
also runs each fit with the chunks taken by SciPy's indexing (a slice of rows, then the rows
the held-out split keeps, both copied every pass, as before
:class:`sqnopt.training._streaming.ChunkRows`), interleaved, and records whether the
coefficients are the same bits. Writes ``bench/results/in_memory_chunks.json`` (or ``--out``).

    python -m bench.streaming partial-fit                   # chunks of 50 and 1000, 5 orders
    python -m bench.streaming partial-fit --chunk 50 --reps 3 --out /tmp/pf.json
    python -m bench.streaming step-race                     # every data set, segments 250 1000 4000
    python -m bench.streaming step-race --datasets a9a ctr1e6 --segments 1000
    python -m bench.streaming in-memory-chunks              # one chunk against 10^5-row ones
    python -m bench.streaming in-memory-chunks --chunks 100000 --copies-ab
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from bench import _runinfo
from bench._data import (
    Split,
    SplitLoader,
    a9a_split,
    datasets_dir,
    held_out_split,
    libsvm_split,
)

def _sklearn(name: str) -> SplitLoader:
    def load() -> Split:
        import sklearn.datasets as skd

        X, y = getattr(skd, f"load_{name}")(return_X_y=True)
        return held_out_split(X, y, scale=True)
    return load


PARTIAL_FIT_DATASETS: dict[str, SplitLoader] = {
    "breast_cancer": _sklearn("breast_cancer"),
    "digits": _sklearn("digits"),
    "wine": _sklearn("wine"),
    "iris": _sklearn("iris"),
    "a9a": a9a_split,
    "w8a": libsvm_split("w8a.xz", "w8a.t.xz", 300),
    "mushrooms": libsvm_split("mushrooms.xz", None, 112),
    "dna": libsvm_split("dna.scale.xz", "dna.scale.t.xz", 180),
    "news20": libsvm_split("news20.xz", None, 62061),
}


def partial_fit_pass(make: Callable[[], Any], Xtr: Any, ytr: Any, Xte: Any, yte: Any,
             order: np.ndarray, chunk: int) -> tuple[float, float]:
    """Held-out accuracy after one ``partial_fit`` pass in ``order``, and its seconds."""
    est = make()
    classes = np.unique(ytr)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(0, order.size, chunk):
            idx = order[i:i + chunk]
            est.partial_fit(Xtr[idx], ytr[idx], classes=classes)
    seconds = time.perf_counter() - t
    return float(np.mean(est.predict(Xte) == yte)), seconds


def partial_fit_main(argv: list[str] | None = None) -> None:
    """``partial-fit`` (module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m bench.streaming partial-fit")
    ap.add_argument("--chunk", type=int, nargs="+", default=[50, 1000])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--datasets", nargs="+", default=list(PARTIAL_FIT_DATASETS),
                    choices=list(PARTIAL_FIT_DATASETS))
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "partial_fit_defaults.json")
    args = ap.parse_args(argv)

    from sklearn.linear_model import SGDClassifier

    from sqnopt import SQNClassifier

    rows = []
    for name in args.datasets:
        try:
            Xtr, Xte, ytr, yte = PARTIAL_FIT_DATASETS[name]()
        except FileNotFoundError as exc:
            print(f"{name}: skipped ({exc})")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            solved = SQNClassifier(random_state=0).fit(Xtr, ytr)
        solved_acc = float(np.mean(solved.predict(Xte) == yte))
        for chunk in args.chunk:
            acc: dict[str, list[float]] = {"sqnopt": [], "sgd": []}
            sec: dict[str, list[float]] = {"sqnopt": [], "sgd": []}
            for rep in range(args.reps):
                order = np.random.default_rng(rep).permutation(Xtr.shape[0])
                makers: tuple[tuple[str, Callable[[], Any]], ...] = (
                    ("sqnopt", partial(SQNClassifier, random_state=rep)),
                    ("sgd", partial(SGDClassifier, random_state=rep)))
                for key, make in makers:
                    a, s = partial_fit_pass(make, Xtr, ytr, Xte, yte, order, chunk)
                    acc[key].append(a)
                    sec[key].append(s)
            row = {"dataset": name, "n_train": int(Xtr.shape[0]), "chunk": chunk,
                   "solved_acc": solved_acc,
                   **{f"{k}_acc_mean": float(np.mean(v)) for k, v in acc.items()},
                   **{f"{k}_acc_min": float(np.min(v)) for k, v in acc.items()},
                   **{f"{k}_seconds": float(np.median(v)) for k, v in sec.items()}}
            row["ratio"] = row["sqnopt_acc_mean"] / row["sgd_acc_mean"]
            rows.append(row)
            print(f"{name:14s} chunk {chunk:5d}: sqnopt {row['sqnopt_acc_mean']:.4f} "
                  f"(min {row['sqnopt_acc_min']:.4f}, {row['sqnopt_seconds']:.2f} s)  "
                  f"SGD {row['sgd_acc_mean']:.4f} (min {row['sgd_acc_min']:.4f}, "
                  f"{row['sgd_seconds']:.2f} s)  ratio {row['ratio']:.3f}  solved {solved_acc:.4f}",
                  flush=True)

    print("\n| data set | chunk | sqnopt accuracy (mean / worst) | SGDClassifier (mean / worst) "
          "| ratio | sqnopt solved to tol |\n|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['dataset']} | {r['chunk']} | {r['sqnopt_acc_mean']:.4f} / "
              f"{r['sqnopt_acc_min']:.4f} | {r['sgd_acc_mean']:.4f} / {r['sgd_acc_min']:.4f} "
              f"| {r['ratio']:.3f} | {r['solved_acc']:.4f} |")
    record = {"bench": "partial_fit_defaults", "reps": args.reps, "machine": _runinfo.machine(),
              "rows": [{k: (round(v, 5) if isinstance(v, float) else v) for k, v in r.items()}
                       for r in rows]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"\nwrote {args.out}")



def _ctr() -> Split:
    from sqnopt.datasets import HashedCTRGenerator

    g = HashedCTRGenerator(random_state=0)
    tr, te = g.sample(1_000_000, stream=0), g.sample(200_000, stream=1)
    return tr[0], te[0], tr[1], te[1]


def _criteo() -> Split:
    """The Criteo sample as the scale benchmark featurizes it: first 8000 rows train, the
    last 2000 held out (time order)."""
    import scipy.sparse as sp

    from sqnopt.datasets import criteo_featurizer, read_criteo

    table, label = read_criteo(datasets_dir() / "criteo_dac_train_head10k.tsv.xz")
    X = sp.csr_matrix(criteo_featurizer(n_bags=2**13).fit(table).transform(table))
    y = (np.asarray(label) > 0).astype(np.float64)
    return X[:8000], X[8000:], y[:8000], y[8000:]


STEP_RACE_DATASETS: dict[str, SplitLoader] = {
    "ctr1e6": _ctr, "a9a": a9a_split,
    "w8a": libsvm_split("w8a.xz", "w8a.t.xz", 300),
    "mushrooms": libsvm_split("mushrooms.xz", None, 112),
    "news20": libsvm_split("news20.xz", None, 62061),
    "criteo": _criteo,
}


def step_race_pass(Xtr: Any, ytr: Any, Xte: Any, yte: Any, *, exponents: tuple[int, ...],
             segment: int) -> tuple[float, list[float], float]:
    """Held-out log loss after one pass of the default in the streaming regime with the
    candidates ``exponents`` and the race's first ``segment``; the step(s) picked; seconds."""
    from sklearn.metrics import log_loss

    import sqnopt.recipes as R
    from sqnopt import SQNClassifier
    from sqnopt.datasets import stream_arrays

    saved = (R.STEP_EXPONENTS, R.RACE_FIRST_SEGMENT)
    R.STEP_EXPONENTS, R.RACE_FIRST_SEGMENT = exponents, segment
    try:
        est = SQNClassifier(max_iter=1, early_stopping=False, random_state=0)
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(stream_arrays(Xtr, ytr, chunk_size=100_000))
        seconds = time.perf_counter() - t
    finally:
        R.STEP_EXPONENTS, R.RACE_FIRST_SEGMENT = saved
    loss = float(log_loss(yte, est.predict_proba(Xte), labels=est.classes_))
    return loss, [float(s) for s in est.steps_], seconds


def step_race_main(argv: list[str] | None = None) -> None:
    """``step-race`` (module docstring)."""
    import sqnopt.recipes as R

    ap = argparse.ArgumentParser(prog="python -m bench.streaming step-race")
    ap.add_argument("--datasets", nargs="+", default=list(STEP_RACE_DATASETS),
                    choices=list(STEP_RACE_DATASETS))
    ap.add_argument("--segments", type=int, nargs="+", default=[250, 1000, 4000])
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "step_race.json")
    args = ap.parse_args(argv)
    rows = []
    for name in args.datasets:
        try:
            Xtr, Xte, ytr, yte = STEP_RACE_DATASETS[name]()
        except FileNotFoundError as exc:
            print(f"{name}: skipped ({exc})")
            continue
        fixed = {}
        for k in R.STEP_EXPONENTS:
            loss, steps, _ = step_race_pass(Xtr, ytr, Xte, yte, exponents=(k,), segment=250)
            fixed[k] = {"step": steps[0], "loss": loss}
        best_k = min(fixed, key=lambda k: fixed[k]["loss"])
        best = fixed[best_k]["loss"]
        print(f"{name}: best fixed candidate 2^{best_k}/s = {fixed[best_k]['step']:.4g}, "
              f"loss {best:.5f}", flush=True)
        races = {}
        for seg in args.segments:
            loss, steps, sec = step_race_pass(Xtr, ytr, Xte, yte, exponents=tuple(R.STEP_EXPONENTS),
                                        segment=seg)
            races[seg] = {"steps": steps, "loss": loss, "excess": loss / best - 1.0,
                          "seconds": sec}
            print(f"  race, first segment {seg:6d}: picked {steps[0]:.4g}, loss {loss:.5f} "
                  f"({100 * (loss / best - 1):+.2f} % over the best candidate), {sec:.2f} s",
                  flush=True)
        rows.append({"dataset": name, "n_train": int(Xtr.shape[0]),
                     "fixed": {str(k): v for k, v in fixed.items()}, "best_exponent": best_k,
                     "races": {str(s): v for s, v in races.items()}})
    record = {"bench": "step_race", "machine": _runinfo.machine(),
              "default_segment": R.RACE_FIRST_SEGMENT, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1, default=float) + "\n")
    print(f"wrote {args.out}")


def in_memory_chunks_main(argv: list[str] | None = None) -> None:
    """``in-memory-chunks`` (module docstring)."""
    from sklearn.metrics import log_loss

    from sqnopt import SQNClassifier
    from sqnopt.training import _streaming

    ap = argparse.ArgumentParser(prog="python -m bench.streaming in-memory-chunks")
    ap.add_argument("--chunks", type=int, nargs="+", default=[10**9, _streaming.IN_MEMORY_CHUNK])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--copies-ab", action="store_true",
                    help="also fit with the chunks copied by SciPy's indexing")
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "in_memory_chunks.json")
    args = ap.parse_args(argv)
    from sqnopt.training import _trainer

    Xtr, Xte, ytr, yte = _ctr()
    saved = _streaming.IN_MEMORY_CHUNK
    take, row_range = _streaming.ChunkRows.take, _trainer.checked_row_range
    variants = ["buffers", "scipy copies"] if args.copies_ab else ["buffers"]
    runs: list[dict[str, Any]] = []
    coefs: dict[str, Any] = {}
    same = True
    try:
        for rnd in range(args.rounds):
            for chunk in args.chunks:
                for variant in variants:
                    _streaming.IN_MEMORY_CHUNK = chunk
                    if variant == "scipy copies":
                        _streaming.ChunkRows.take = (  # type: ignore[method-assign]
                            lambda self, X, keep: X[keep])
                        _trainer.checked_row_range = lambda X, a, b: X[a:b]
                    t = time.perf_counter()
                    try:
                        est = SQNClassifier(random_state=0).fit(Xtr, ytr)
                    finally:
                        _streaming.ChunkRows.take = take  # type: ignore[method-assign]
                        _trainer.checked_row_range = row_range
                    seconds = time.perf_counter() - t
                    loss = float(log_loss(yte, est.predict_proba(Xte), labels=est.classes_))
                    key = f"{chunk} {variant}"
                    same = same and np.array_equal(coefs.setdefault(key, est.coef_), est.coef_)
                    if args.copies_ab and variant == "scipy copies":
                        same = same and np.array_equal(coefs[f"{chunk} buffers"], est.coef_)
                    runs.append({"round": rnd, "chunk": chunk, "variant": variant,
                                 "seconds": seconds, "passes": int(np.max(est.n_iter_)),
                                 "held_out_log_loss": loss})
                    print(f"round {rnd}: chunks of {chunk:>10} rows, {variant}: "
                          f"{seconds:6.1f} s, {runs[-1]['passes']} passes, held-out log loss "
                          f"{loss:.5f}", flush=True)
    finally:
        _streaming.IN_MEMORY_CHUNK = saved
    record = {"bench": "in_memory_chunks", "machine": _runinfo.machine(), "runs": runs,
              "identical_coef": same}
    print(f"identical coefficients (rounds, variants): {same}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {args.out}")


MODES: dict[str, Callable[[list[str] | None], None]] = {
    "partial-fit": partial_fit_main, "step-race": step_race_main,
    "in-memory-chunks": in_memory_chunks_main}


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in MODES:
        sys.exit(f"usage: python -m bench.streaming {{{','.join(MODES)}}} [options]  "
                 f"(--help after the mode for its options)\n\n{__doc__}")
    MODES[args[0]](args[1:])


if __name__ == "__main__":
    main()
