"""The streaming recipe's step race: what one pass gets with the step it picks, against every
candidate step fixed, and how the length of the race's first segment changes the pick.

For each data set, one pass (``max_iter=1``, ``early_stopping=False``: every training row
used, so that the comparison is of steps alone) of ``SQNClassifier()`` in the large-data regime
(the data given as a stream of chunks, which always takes the streaming recipe), with

* each candidate ``2**k / s`` of :data:`sqnopt.recipes.STEP_EXPONENTS` alone (a race of one),
* the race of all candidates with a first segment of each ``--segments`` rows
  (:data:`sqnopt.recipes.RACE_FIRST_SEGMENT` is the default's),

and the held-out log loss of each. Reported: the best fixed candidate, and for each segment
the step the race picked and its loss's excess over the best candidate's.

Data: the generated 10^6-row CTR stream (:class:`sqnopt.datasets.HashedCTRGenerator`, in
memory from a seed), sqnopt's shipped a9a, and the LIBSVM sets and the Criteo sample of
``shared/datasets`` when present.

    python -m bench.step_race                        # every data set, segments 250 1000 4000
    python -m bench.step_race --datasets a9a ctr1e6 --segments 1000

Writes ``bench/results/step_race.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from bench import _runinfo
from bench._data import Split, SplitLoader, a9a_split, datasets_dir, libsvm_split


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


DATASETS: dict[str, SplitLoader] = {
    "ctr1e6": _ctr, "a9a": a9a_split,
    "w8a": libsvm_split("w8a.xz", "w8a.t.xz", 300),
    "mushrooms": libsvm_split("mushrooms.xz", None, 112),
    "news20": libsvm_split("news20.xz", None, 62061),
    "criteo": _criteo,
}


def one_pass(Xtr: Any, ytr: Any, Xte: Any, yte: Any, *, exponents: tuple[int, ...],
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


def main(argv: list[str] | None = None) -> None:
    import sqnopt.recipes as R

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    ap.add_argument("--segments", type=int, nargs="+", default=[250, 1000, 4000])
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "step_race.json")
    args = ap.parse_args(argv)
    rows = []
    for name in args.datasets:
        try:
            Xtr, Xte, ytr, yte = DATASETS[name]()
        except FileNotFoundError as exc:
            print(f"{name}: skipped ({exc})")
            continue
        fixed = {}
        for k in R.STEP_EXPONENTS:
            loss, steps, _ = one_pass(Xtr, ytr, Xte, yte, exponents=(k,), segment=250)
            fixed[k] = {"step": steps[0], "loss": loss}
        best_k = min(fixed, key=lambda k: fixed[k]["loss"])
        best = fixed[best_k]["loss"]
        print(f"{name}: best fixed candidate 2^{best_k}/s = {fixed[best_k]['step']:.4g}, "
              f"loss {best:.5f}", flush=True)
        races = {}
        for seg in args.segments:
            loss, steps, sec = one_pass(Xtr, ytr, Xte, yte, exponents=tuple(R.STEP_EXPONENTS),
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


if __name__ == "__main__":
    main()
