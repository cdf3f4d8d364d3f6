"""What the data layer costs: the sparse structure checks next to a fit, and reading.

Structure checks: ``check_sparse_structure`` (the user-facing check, run once per matrix by the
data layer) and the compiled ``CSRRows`` bounds guard each make one or two vectorised passes
over the index arrays; ``check_matrix`` (which also copies the matrix) and one epoch of
``Solver.fit`` (SGD, logloss, batches of 5) are the yardsticks. Measured side by side in this
process (interleaved, best of several), on random CSR data with 100 stored values per row.

Reading: the compiled svmlight reader against scikit-learn's, a cached stream pass against a
parsing one, and read-ahead against a GIL-free consumer, on a generated CTR-like file (20,000
rows of 24 hashed one-hot features). Interleaved, best of three, in this process. (Reading at
scale, against Vowpal Wabbit reading its own file, is part of the scale benchmark,
``python -m bench.scale``.)

    OPENBLAS_NUM_THREADS=1 python -m pytest bench/test_data.py --benchmark-only -s \
        -p no:cacheprovider
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import Solver
from sqnopt.data import CSRRows64, check_matrix, check_sparse_structure
from sqnopt.datasets import load_svmlight, stream_svmlight


def _best(fn: Callable[[], Any], repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        tic = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - tic)
    return best


def write_ctr(directory: Path, rows: int, seed: int = 0) -> Path:
    """``rows`` CTR-like rows (24 categorical fields, Zipf values, hashed into 2**18 one-hot
    columns, label 1 with probability ~0.16) as ``ctr.svm`` (one-based)."""
    rng = np.random.default_rng(seed)
    svm = directory / "ctr.svm"
    with open(svm, "w") as fs:
        for start in range(0, rows, 50_000):
            n = min(50_000, rows - start)
            values = rng.zipf(1.3, size=(n, 24)) % 100_003
            cols = (values * 2654435761 + np.arange(24) * 40503) % (1 << 18)
            cols.sort(axis=1)
            y = rng.random(n) < 0.16
            lines = []
            for i in range(n):
                uniq = np.unique(cols[i]) + 1
                feats = " ".join(f"{c}:1" for c in uniq.tolist())
                lines.append(f"{int(y[i])} {feats}\n")
            fs.write("".join(lines))
    return svm


# --- the structure checks ---------------------------------------------------------------------

@pytest.mark.parametrize("n_rows", [20_000, 100_000])
def test_structure_check_cost_vs_one_epoch(benchmark: Any, n_rows: int) -> None:
    rng = np.random.default_rng(0)
    k, d = 100, 1_000_000
    indices = np.sort(rng.integers(0, d, size=(n_rows, k)), axis=1).ravel().astype(np.int32)
    X = sp.csr_matrix((rng.random(n_rows * k), indices, np.arange(0, n_rows * k + 1, k)),
                      shape=(n_rows, d))
    X.sum_duplicates()
    y = np.where(rng.random(n_rows) < 0.5, -1.0, 1.0)
    Xc = check_matrix(X)
    ind = np.ascontiguousarray(Xc.indices, dtype=np.int32)
    ptr = np.ascontiguousarray(Xc.indptr, dtype=np.intp)
    ones = np.ones(n_rows)
    contenders: dict[str, Callable[[], Any]] = {
        "check_sparse_structure": lambda: check_sparse_structure(X),
        "CSRRows guard": lambda: CSRRows64(Xc.data, ind, ptr, d, y, ones, ones, False),
        "check_matrix": lambda: check_matrix(X),
        "one epoch": lambda: Solver(max_epochs=1, random_state=0).fit(X, y),
    }
    best = {name: float("inf") for name in contenders}
    for _ in range(3):  # interleaved, so that load changes hit every contender alike
        for name, fn in contenders.items():
            best[name] = min(best[name], _best(fn, 1 if name == "one epoch" else 5))
    epoch = best["one epoch"]
    print(f"\n[{n_rows} rows x 100 nnz = {X.nnz} stored values]")
    for name, t in best.items():
        print(f"  {name:24s} {t * 1e3:8.2f} ms  ({t / epoch:6.1%} of one epoch)")
    benchmark.extra_info.update({f"ms_{name}": t * 1e3 for name, t in best.items()})
    assert best["check_sparse_structure"] < 0.1 * epoch
    assert best["CSRRows guard"] < 0.1 * epoch
    benchmark.pedantic(contenders["check_sparse_structure"], rounds=5, iterations=1)


# --- reading -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ctr_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_ctr(tmp_path_factory.mktemp("ctr"), 20_000)


def test_compiled_reader_vs_scikit_learn(benchmark: Any, ctr_file: Path) -> None:
    from sklearn.datasets import load_svmlight_file

    ours = lambda: load_svmlight(ctr_file, n_features=1 << 18)  # noqa: E731
    theirs = lambda: load_svmlight_file(str(ctr_file), n_features=1 << 18)  # noqa: E731
    best = {"sqnopt": float("inf"), "sklearn": float("inf")}
    for _ in range(3):
        best["sqnopt"] = min(best["sqnopt"], _best(ours, 1))
        best["sklearn"] = min(best["sklearn"], _best(theirs, 1))
    mb = ctr_file.stat().st_size / 1e6
    print(f"\n[{mb:.1f} MB] sqnopt {mb / best['sqnopt']:.0f} MB/s, scikit-learn "
          f"{mb / best['sklearn']:.0f} MB/s: {best['sklearn'] / best['sqnopt']:.1f}x")
    benchmark.extra_info.update({"mb_per_s_sqnopt": mb / best["sqnopt"],
                                 "mb_per_s_sklearn": mb / best["sklearn"]})
    assert best["sqnopt"] * 5 < best["sklearn"]
    benchmark.pedantic(ours, rounds=3, iterations=1)


def test_cached_pass_vs_parsing_pass(benchmark: Any, ctr_file: Path, tmp_path: Path) -> None:
    def one_pass(cache: Any) -> None:
        for _ in stream_svmlight(ctr_file, chunk_size=5000, n_features=1 << 18,
                                 classes=[0, 1], cache=cache):
            pass

    cache = tmp_path / "c.cache"
    one_pass(cache)  # writes it
    parse = _best(lambda: one_pass(False))
    cached = _best(lambda: one_pass(cache))
    print(f"\nparsing pass {parse * 1e3:.1f} ms, cached pass {cached * 1e3:.1f} ms "
          f"({parse / cached:.1f}x)")
    benchmark.extra_info.update({"ms_parsing_pass": parse * 1e3, "ms_cached_pass": cached * 1e3})
    assert cached < parse
    benchmark.pedantic(lambda: one_pass(cache), rounds=3, iterations=1)


def test_read_ahead_overlaps_a_gil_free_consumer(benchmark: Any, ctr_file: Path) -> None:
    """A consumer that spends twice the reading time per chunk without the GIL (a sleep stands
    for the compiled training loop): with read-ahead the pass takes about the larger of the two
    (the consumer's), without it their sum (2/3 of it ideally)."""
    chunk = 2000
    reading = _best(lambda: [None for _ in stream_svmlight(
        ctr_file, chunk_size=chunk, n_features=1 << 18, classes=[0, 1], prefetch=0)])
    per_chunk = 2 * reading / 10  # 20,000 rows: 10 chunks

    def consume(prefetch: int) -> None:
        for _ in stream_svmlight(ctr_file, chunk_size=chunk, n_features=1 << 18,
                                 classes=[0, 1], prefetch=prefetch):
            time.sleep(per_chunk)

    serial = _best(lambda: consume(0))
    overlapped = _best(lambda: consume(2))
    print(f"\nreading {reading * 1e3:.1f} ms; with a consumer: serial {serial * 1e3:.1f} ms, "
          f"read ahead {overlapped * 1e3:.1f} ms ({overlapped / serial:.2f}x)")
    benchmark.extra_info.update({"ms_serial": serial * 1e3, "ms_read_ahead": overlapped * 1e3})
    assert overlapped < 0.9 * serial
    benchmark.pedantic(lambda: consume(2), rounds=3, iterations=1)
