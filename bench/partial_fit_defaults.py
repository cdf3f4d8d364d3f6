"""``partial_fit`` at its defaults against ``SGDClassifier().partial_fit``: one pass over chunks.

Each data set is split once (its own test split where it has one, else a stratified 25 % held
out with a fixed seed); the training rows are put in a seeded random order (one order per
repetition, the same for both estimators) and fed in chunks of ``--chunk`` rows, once. Both
estimators are built with no arguments but ``random_state`` (scikit-learn's default loss is
the hinge, sqnopt's the logistic loss: each at its defaults). Dense sets from scikit-learn are
standardized (as a user of SGD is told to); the LIBSVM sets are used as shipped (their
features are already scaled or binary). Reported: held-out accuracy after the pass, mean and
worst over the repetitions, and the ratio of the two estimators' mean accuracies.

Data: scikit-learn's bundled sets, sqnopt's shipped a9a, and the LIBSVM sets of
``shared/datasets`` when present (skipped otherwise).

    python -m bench.partial_fit_defaults                    # chunks of 50 and 1000, 5 orders
    python -m bench.partial_fit_defaults --chunk 50 --reps 3 --out /tmp/pf.json

Writes ``bench/results/partial_fit_defaults.json`` (or ``--out``) and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from bench import _runinfo
from bench._data import Split, SplitLoader, a9a_split, held_out_split, libsvm_split


def _sklearn(name: str) -> SplitLoader:
    def load() -> Split:
        import sklearn.datasets as skd

        X, y = getattr(skd, f"load_{name}")(return_X_y=True)
        return held_out_split(X, y, scale=True)
    return load


DATASETS: dict[str, SplitLoader] = {
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


def one_pass(make: Callable[[], Any], Xtr: Any, ytr: Any, Xte: Any, yte: Any,
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


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunk", type=int, nargs="+", default=[50, 1000])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "partial_fit_defaults.json")
    args = ap.parse_args(argv)

    from sklearn.linear_model import SGDClassifier

    from sqnopt import SQNClassifier

    rows = []
    for name in args.datasets:
        try:
            Xtr, Xte, ytr, yte = DATASETS[name]()
        except FileNotFoundError as exc:
            print(f"{name}: skipped ({exc})")
            continue
        for chunk in args.chunk:
            acc: dict[str, list[float]] = {"sqnopt": [], "sgd": []}
            sec: dict[str, list[float]] = {"sqnopt": [], "sgd": []}
            for rep in range(args.reps):
                order = np.random.default_rng(rep).permutation(Xtr.shape[0])
                makers: tuple[tuple[str, Callable[[], Any]], ...] = (
                    ("sqnopt", partial(SQNClassifier, random_state=rep)),
                    ("sgd", partial(SGDClassifier, random_state=rep)))
                for key, make in makers:
                    a, s = one_pass(make, Xtr, ytr, Xte, yte, order, chunk)
                    acc[key].append(a)
                    sec[key].append(s)
            row = {"dataset": name, "n_train": int(Xtr.shape[0]), "chunk": chunk,
                   **{f"{k}_acc_mean": float(np.mean(v)) for k, v in acc.items()},
                   **{f"{k}_acc_min": float(np.min(v)) for k, v in acc.items()},
                   **{f"{k}_seconds": float(np.median(v)) for k, v in sec.items()}}
            row["ratio"] = row["sqnopt_acc_mean"] / row["sgd_acc_mean"]
            rows.append(row)
            print(f"{name:14s} chunk {chunk:5d}: sqnopt {row['sqnopt_acc_mean']:.4f} "
                  f"(min {row['sqnopt_acc_min']:.4f}, {row['sqnopt_seconds']:.2f} s)  "
                  f"SGD {row['sgd_acc_mean']:.4f} (min {row['sgd_acc_min']:.4f}, "
                  f"{row['sgd_seconds']:.2f} s)  ratio {row['ratio']:.3f}", flush=True)

    print("\n| data set | chunk | sqnopt accuracy (mean / worst) | SGDClassifier (mean / worst) "
          "| ratio |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['dataset']} | {r['chunk']} | {r['sqnopt_acc_mean']:.4f} / "
              f"{r['sqnopt_acc_min']:.4f} | {r['sgd_acc_mean']:.4f} / {r['sgd_acc_min']:.4f} "
              f"| {r['ratio']:.3f} |")
    record = {"bench": "partial_fit_defaults", "reps": args.reps, "machine": _runinfo.machine(),
              "rows": [{k: (round(v, 5) if isinstance(v, float) else v) for k, v in r.items()}
                       for r in rows]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
