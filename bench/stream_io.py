"""Reading and parsing speed: sqnopt's compiled svmlight parser and streams against
scikit-learn's reader and Vowpal Wabbit reading the same rows itself.

Contenders, each timed on the same rows (wall and process CPU time, best of ``--rounds``,
interleaved so that load changes hit every contender alike):

* ``parse (buffer)`` -- the compiled parser alone on the file's bytes already in memory,
  into arrays allocated before the timing;
* ``load_svmlight`` -- sqnopt's whole-file reader (read + parse + checks, one CSR);
* ``scan`` -- the compiled scan a stream runs when the width or the labels are not given;
* ``stream pass`` -- one pass of ``stream_svmlight`` (chunks of ``--chunk-size`` rows, read
  ahead in a thread), with ``prefetch=0`` (no thread) and ``prefetch=2``;
* ``stream pass (cache)`` -- one pass from the binary cache (``cache=True``, written by a
  pass before the timing);
* ``stream + partial_fit`` -- a pass whose consumer trains on every chunk
  (``SQNClassifier(curvature="lbfgs").partial_fit``, whose compiled loop releases the GIL),
  with ``prefetch=0`` (read, then train) and ``prefetch=2`` (the next chunk is read while the
  current one trains);
* ``sklearn load_svmlight_file`` -- scikit-learn's reader;
* ``vw`` -- ``Workspace("-d FILE.vw -b 18 --loss_function logistic --holdout_off --quiet")``:
  VW parses and trains (its default online learner) in C++ in the constructor, one pass;
* ``vw (cache)`` -- the same from VW's own cache (``--cache_file``, written by a run before
  the timing).

Without ``--svm``/``--vw`` it writes a CTR-like file pair (``--rows`` rows of 24 hashed one-hot
features out of 2**18, Zipf-distributed values; the same rows in both formats) to a temporary
directory first.

    nice python bench/stream_io.py --svm train.svm --vw train.vw [--rounds 3] \\
        [--record bench/results/stream_io.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
try:
    import sqnopt  # noqa: F401
except ImportError:
    sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402


def write_ctr_pair(directory: Path, rows: int, seed: int = 0) -> tuple[Path, Path]:
    """``rows`` CTR-like rows (24 categorical fields, Zipf values, hashed into 2**18 one-hot
    columns, label 1 with probability ~0.16) as ``ctr.svm`` (one-based) and ``ctr.vw``."""
    rng = np.random.default_rng(seed)
    svm, vw = directory / "ctr.svm", directory / "ctr.vw"
    with open(svm, "w") as fs, open(vw, "w") as fv:
        for start in range(0, rows, 50_000):
            n = min(50_000, rows - start)
            values = rng.zipf(1.3, size=(n, 24)) % 100_003
            cols = (values * 2654435761 + np.arange(24) * 40503) % (1 << 18)
            cols.sort(axis=1)
            y = rng.random(n) < 0.16
            svm_lines, vw_lines = [], []
            for i in range(n):
                uniq = np.unique(cols[i]) + 1
                feats = " ".join(f"{c}:1" for c in uniq.tolist())
                svm_lines.append(f"{int(y[i])} {feats}\n")
                vw_lines.append(f"{1 if y[i] else -1} | {feats}\n")
            fs.write("".join(svm_lines))
            fv.write("".join(vw_lines))
    return svm, vw


def _time(fn: Callable[[], Any]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--svm", type=Path, help="an svmlight file (one-based indices)")
    ap.add_argument("--vw", type=Path, help="the same rows in VW's text format")
    ap.add_argument("--rows", type=int, default=200_000,
                    help="rows of the generated file pair when --svm is not given")
    ap.add_argument("--n-features", type=int, default=1 << 18)
    ap.add_argument("--chunk-size", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--skip", nargs="*", default=[],
                    help="contenders to leave out: sklearn, vw, train")
    ap.add_argument("--record", type=Path, default=None,
                    help="also write the measurement to this JSON file")
    args = ap.parse_args(argv)

    from sqnopt.datasets import _svmlight, load_svmlight, scan_svmlight, stream_svmlight

    tmp = Path(tempfile.mkdtemp(prefix="sqnopt-stream-io-"))
    try:
        if args.svm is None:
            args.svm, args.vw = write_ctr_pair(tmp, args.rows)
        svm_bytes = args.svm.stat().st_size
        vw_bytes = args.vw.stat().st_size if args.vw else None
        d = args.n_features
        rows = scan_svmlight(args.svm)[0]
        cache = tmp / "stream.cache"
        warm = stream_svmlight(args.svm, chunk_size=args.chunk_size, n_features=d,
                               classes=[0, 1], cache=cache)
        for _ in warm:  # writes the cache
            pass
        buf = args.svm.read_bytes()
        labels, indptr = np.ones(rows), np.ones(rows + 1, dtype=np.int64)
        nnz = buf.count(b":")
        indices, data = np.ones(nnz, dtype=np.int32), np.ones(nnz)  # allocated, touched

        def parse_buffer() -> None:
            indptr[0] = 0
            status = _svmlight.parse_lines(buf, 0, len(buf), labels, indptr, indices, data,
                                           0, 0, rows)
            assert status[2] == rows

        def stream_pass(prefetch: int, cached: bool = False) -> None:
            s = stream_svmlight(args.svm, chunk_size=args.chunk_size, n_features=d,
                                classes=[0, 1], prefetch=prefetch,
                                cache=cache if cached else False)
            n = 0
            for X, _ in s:
                n += X.shape[0]
            assert n == rows

        def stream_train(prefetch: int) -> None:
            import warnings

            from sqnopt import SQNClassifier

            clf = SQNClassifier(curvature="lbfgs", alpha=1.0 / rows, random_state=0)
            s = stream_svmlight(args.svm, chunk_size=args.chunk_size, n_features=d,
                                classes=[0, 1], prefetch=prefetch)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # one partial_fit per chunk does not converge
                for X, y in s:
                    clf.partial_fit(X, y, classes=[0, 1])

        contenders: dict[str, tuple[Callable[[], Any], int | None]] = {
            "parse (buffer)": (parse_buffer, svm_bytes),
            "load_svmlight": (lambda: load_svmlight(args.svm, n_features=d), svm_bytes),
            "scan": (lambda: scan_svmlight(args.svm), svm_bytes),
            "stream pass, prefetch=0": (lambda: stream_pass(0), svm_bytes),
            "stream pass, prefetch=2": (lambda: stream_pass(2), svm_bytes),
            "stream pass (cache)": (lambda: stream_pass(2, cached=True), None),
        }
        if "train" not in args.skip:
            contenders["stream + partial_fit, prefetch=0"] = (lambda: stream_train(0), svm_bytes)
            contenders["stream + partial_fit, prefetch=2"] = (lambda: stream_train(2), svm_bytes)
        if "sklearn" not in args.skip:
            from sklearn.datasets import load_svmlight_file

            contenders["sklearn load_svmlight_file"] = (
                lambda: load_svmlight_file(str(args.svm), n_features=d), svm_bytes)
        if args.vw is not None and "vw" not in args.skip:
            from vowpalwabbit import Workspace

            vw_cache = tmp / "vw.cache"
            base = "-b 18 --loss_function logistic --holdout_off --quiet"

            def vw_run(extra: str) -> None:
                ws = Workspace(f"-d {args.vw} {base} {extra}")
                ws.finish()

            vw_run(f"--cache_file {vw_cache}")  # writes VW's cache
            contenders["vw (parse + train)"] = (lambda: vw_run(""), vw_bytes)
            contenders["vw (cache + train)"] = (
                lambda: vw_run(f"--cache_file {vw_cache}"), None)

        load_before = os.getloadavg()
        best: dict[str, list[float]] = {k: [float("inf"), float("inf")] for k in contenders}
        for r in range(args.rounds):
            for name, (fn, _) in contenders.items():
                wall, cpu = _time(fn)
                best[name] = [min(best[name][0], wall), min(best[name][1], cpu)]
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
        load_after = os.getloadavg()

        results: dict[str, Any] = {}
        print(f"\n{rows} rows; {args.svm.name}: {svm_bytes / 1e6:.1f} MB"
              + (f", {args.vw.name}: {vw_bytes / 1e6:.1f} MB" if vw_bytes else "")
              + f"; load average {load_before[0]:.2f} -> {load_after[0]:.2f}")
        print(f"{'contender':34s} {'wall s':>8s} {'cpu s':>8s} {'MB/s':>8s} {'rows/s':>11s}")
        for name, (fn, nbytes) in contenders.items():
            wall, cpu = best[name]
            mbs = nbytes / wall / 1e6 if nbytes else None
            results[name] = {"wall_s": round(wall, 4), "cpu_s": round(cpu, 4),
                             "rows_per_s": round(rows / wall), "mb_per_s":
                             round(mbs, 1) if mbs else None}
            print(f"{name:34s} {wall:8.3f} {cpu:8.3f} "
                  f"{(f'{mbs:8.1f}' if mbs else '       -')} {rows / wall:11,.0f}")
        if args.record is not None:
            import sklearn

            record = {
                "command": "python bench/stream_io.py " + " ".join(
                    a for a in (argv if argv is not None else sys.argv[1:])),
                "rows": rows, "svm_bytes": svm_bytes, "vw_bytes": vw_bytes,
                "chunk_size": args.chunk_size, "rounds": args.rounds,
                "loadavg": [round(load_before[0], 2), round(load_after[0], 2)],
                "results": results,
                "versions": {"python": platform.python_version(), "numpy": np.__version__,
                             "sklearn": sklearn.__version__},
                "machine": platform.machine(), "cpus": os.cpu_count(),
                "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()),
            }
            args.record.parent.mkdir(parents=True, exist_ok=True)
            args.record.write_text(json.dumps(record, indent=1) + "\n")
            print(f"wrote {args.record}")
    finally:
        for p in tmp.iterdir():
            p.unlink()
        tmp.rmdir()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
