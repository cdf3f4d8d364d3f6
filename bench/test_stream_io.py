"""Reading speed: the compiled svmlight reader against scikit-learn's, and a cached stream
pass against a parsing one, on a generated CTR-like file (20,000 rows of 24 hashed one-hot
features). Interleaved, best of three, in this process:

    OPENBLAS_NUM_THREADS=1 python -m pytest bench/test_stream_io.py --benchmark-only -s \\
        -p no:cacheprovider

The full measurement against Vowpal Wabbit on 10**6 rows is ``bench/stream_io.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sqnopt.datasets import load_svmlight, stream_svmlight
from stream_io import write_ctr_pair


def _best(fn: Callable[[], Any], rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        tic = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - tic)
    return best


@pytest.fixture(scope="module")
def ctr_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_ctr_pair(tmp_path_factory.mktemp("ctr"), 20_000)[0]


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
