"""Huber regression at scale: ``SQNRegressor(loss="huber")`` at its defaults on a generated
stream of 10^6 sparse rows whose targets lie far from 0, reading and parsing the text file
included, against scikit-learn's ``SGDRegressor(loss="huber")`` reading the same file.

The rows are the hashed CTR generator's (:class:`sqnopt.datasets.HashedCTRGenerator`: 24
hashed fields, 2^18 columns); the targets ``y = offset + x . w* + e`` with ``w* ~ N(0, 1)``
and Student-t noise of 2 degrees of freedom (heavy tails: the case Huber's loss is for), the
held-out rows another stream of the same model. Data this large takes the large-data recipe
(per-example AdaGrad), which starts a fit of a loss whose curvature vanishes away from the
targets at the loss's own intercept (:meth:`sqnopt.interfaces.Objective.start_intercept`,
Huber's: the targets' weighted median); ``--from-zero`` adds the same fit started at 0 (the
loss's start replaced by 0 for that contender), which measures what that start buys.

Reported per contender: wall seconds (read + fit), the held-out mean Huber loss (``epsilon``
1.35, on the residuals) and mean absolute error, and the held-out loss per second is read
from those. ``--record FILE`` writes them as JSON (a few hundred bytes).

    python bench/huber_scale.py --rows 1000000 --offset 1000 --from-zero --record FILE
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

EPSILON = 1.35


def make_data(rows: int, offset: float, directory: Path) -> tuple[Path, Path]:
    """``train.svm`` and ``test.svm`` (a tenth as many rows) in ``directory``."""
    from sqnopt.datasets import HashedCTRGenerator, write_svmlight

    gen = HashedCTRGenerator(random_state=0)
    rng = np.random.default_rng(0)
    out = []
    for name, n, stream in (("train.svm", rows, 0), ("test.svm", max(rows // 10, 1000), 1)):
        X = gen.sample(n, stream=stream).X
        w = np.random.default_rng(1).normal(size=X.shape[1])
        y = offset + np.asarray(X @ w).ravel() + rng.standard_t(2.0, size=n)
        path = directory / name
        write_svmlight(path, X, y)
        out.append(path)
    return out[0], out[1]


def huber(r: Any) -> float:
    a = np.abs(r)
    return float(np.mean(np.where(a <= EPSILON, 0.5 * a * a, EPSILON * (a - 0.5 * EPSILON))))


def _int32(X: Any, y: Any) -> tuple[Any, Any]:
    """``X`` with 32-bit indices, which SGDRegressor requires (scikit-learn's reader may
    return 64-bit ones)."""
    import scipy.sparse as sp

    return sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)),
                         shape=X.shape), y


def run(name: str, train: Path, test: Path, n_features: int) -> dict[str, Any]:
    from sklearn.datasets import load_svmlight_file

    from sqnopt.datasets import load_svmlight

    # the held-out rows read apart, untimed
    Xt, yt = _int32(*load_svmlight_file(str(test), n_features=n_features))
    tic = time.perf_counter()
    if name.startswith("sklearn"):
        from sklearn.linear_model import SGDRegressor

        X, y = _int32(*load_svmlight_file(str(train), n_features=n_features))
        est: Any = SGDRegressor(loss="huber", random_state=0).fit(X, y)
    else:
        from sqnopt import SQNRegressor

        X, y = load_svmlight(train, n_features=n_features)
        if name.endswith("from 0"):
            from sqnopt.objectives import Huber
            Huber.start_intercept = lambda self, y, weights: 0.0  # type: ignore[method-assign]
        est = SQNRegressor(loss="huber", random_state=0).fit(X, y)
    seconds = time.perf_counter() - tic
    r = est.predict(Xt) - yt
    return {"contender": name, "seconds": round(seconds, 3), "heldout_huber": round(huber(r), 5),
            "heldout_mae": round(float(np.mean(np.abs(r))), 5),
            "intercept": round(float(np.ravel(est.intercept_)[0]), 3)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--offset", type=float, default=1000.0)
    ap.add_argument("--from-zero", action="store_true")
    ap.add_argument("--record", type=Path, default=None)
    args = ap.parse_args(argv)
    names = ["SQNRegressor(loss='huber')"] + (["SQNRegressor(loss='huber'), from 0"]
                                              if args.from_zero else [])
    names.append("sklearn SGDRegressor(loss='huber')")
    from concurrent.futures import ProcessPoolExecutor

    record: dict[str, Any] = {"command": "python bench/huber_scale.py " + " ".join(
        sys.argv[1:] if argv is None else argv), "rows": args.rows, "offset": args.offset,
        "load_start": list(os.getloadavg()), "results": []}
    with tempfile.TemporaryDirectory() as d:
        train, test = make_data(args.rows, args.offset, Path(d))
        for name in names:     # each in its own process: a fresh heap, the file read anew
            with ProcessPoolExecutor(1) as pool:
                res = pool.submit(run, name, train, test, 2 ** 18).result()
            print(res, flush=True)
            record["results"].append(res)
    record["load_end"] = list(os.getloadavg())
    if args.record:
        args.record.write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
