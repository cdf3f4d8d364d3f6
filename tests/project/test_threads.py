"""Thread safety (docs/usage.md, "Threads"): fits running at the same time in 8 threads -- each
with its own Solver or estimator, sharing one read-only input -- give bit for bit the results of
the same fits run one after the other; the shared input is not modified; results do not depend
on the number of BLAS threads; overlapping runs' BLAS limits end with the process's own setting
(they used to leave it at 1). The compiled loops release the GIL, so the threads really
overlap.

The threads run in a child process under ``-X faulthandler``: a race that crashed would fail this
test with the C traceback instead of ending the test run."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import sqnopt_env

_CHILD = r"""
import hashlib, json, threading
import numpy as np, scipy.sparse as sp
from sqnopt import SQNClassifier, Solver

rng = np.random.default_rng(0)
X = rng.normal(size=(300, 12))
y2 = np.where(X @ rng.normal(size=12) + 0.3 * rng.normal(size=300) > 0, 1, -1)
y3 = np.argmax(X[:, :3] + 0.3 * rng.normal(size=(300, 3)), axis=1)
Xs = sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0))
shared = {"X": X.copy(), "Xs": Xs.copy()}

def digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()

JOBS = [
    lambda: Solver("squared_hinge", "identity", max_epochs=3, random_state=1).fit(X, y2).w,
    lambda: Solver("squared_hinge", "lbfgs", max_epochs=3, random_state=2).fit(X, y2).w,
    lambda: Solver("logloss", "regularized_bfgs", max_epochs=2, random_state=3).fit(X, y2).w,
    lambda: Solver("logloss", "full_bfgs", max_epochs=2, random_state=4).fit(X, y2).w,
    lambda: Solver("hinge", "identity", "fixed", "pegasos", max_epochs=3,
                   random_state=5).fit(Xs, y2).w,              # the sparse scaled loop
    lambda: Solver("logloss", "adagrad", "fixed", "constant", max_epochs=3,
                   random_state=6).fit(Xs, y2).w,
    lambda: SQNClassifier(curvature="lbfgs", max_iter=3, tol=None,
                          random_state=7).fit(X, y3).coef_,    # multinomial
    lambda: SQNClassifier(loss="hinge", max_iter=3, tol=None,
                          random_state=8).fit(Xs, y3).coef_,   # one-vs-rest, sparse
]

serial = [digest(job()) for job in JOBS]
rounds = []
for _ in range(3):
    out = [None] * len(JOBS)
    barrier = threading.Barrier(len(JOBS))
    def run(k):
        barrier.wait()
        out[k] = digest(JOBS[k]())
    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(JOBS))]
    for t in threads: t.start()
    for t in threads: t.join()
    rounds.append(out)
blas = {n: [digest(Solver("logloss", curv, max_epochs=2, random_state=3,
                          blas_threads=n).fit(X, y2).w)
            for curv in ("regularized_bfgs", "full_bfgs")] for n in (1, 2, 8)}
print(json.dumps({
    "serial": serial, "rounds": rounds, "blas": blas,
    "unchanged": bool(np.array_equal(shared["X"], X)
                      and (shared["Xs"] != Xs).nnz == 0),
}))
"""


def test_eight_threads_give_the_single_thread_results(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", textwrap.dedent(_CHILD)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env=sqnopt_env(OPENBLAS_NUM_THREADS="2"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    for k, out in enumerate(r["rounds"]):
        assert out == r["serial"], f"round {k}: concurrent fits differ from serial ones"
    assert r["blas"]["1"] == r["blas"]["2"] == r["blas"]["8"]
    assert r["unchanged"]


class _FakeBLAS:
    """Stands in for a BLAS library's threadpoolctl controller: one process-wide thread count."""

    def __init__(self, threads: int) -> None:
        self.num_threads = threads
        self.calls = 0

    def set_num_threads(self, n: int) -> None:
        self.num_threads = n
        self.calls += 1


@pytest.mark.parametrize("limits", [(1, 1), (1, 2), (2, 1), (3, 1, 2)])
def test_overlapping_limits_restore_the_setting(monkeypatch: pytest.MonkeyPatch,
                                                limits: tuple[int, ...]) -> None:
    """Runs that overlap and end in the order they started (A in, B in, A out, B out): the
    smallest active limit applies, and the setting is the original once all have ended. Before
    the fix each run restored what it found when it started, so B put back A's limit and the
    process kept 1 BLAS thread (seen with 8 concurrent fits: 2 threads before, 1 after)."""
    from sqnopt.solver import _blas

    fake = _FakeBLAS(4)
    monkeypatch.setattr(_blas, "_blas", [fake])
    runs = [_blas.blas_threads_limited(n) for n in limits]
    for k, run in enumerate(runs):
        run.__enter__()
        assert fake.num_threads == min(limits[:k + 1])
    for k, run in enumerate(runs):
        run.__exit__(None, None, None)
        if k + 1 < len(runs):
            assert fake.num_threads == min(limits[k + 1:])
    assert fake.num_threads == 4
    with _blas.blas_threads_limited(None):
        assert fake.num_threads == 4


def test_a_library_already_within_the_limit_is_not_touched(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """Under ``OPENBLAS_NUM_THREADS=1`` a run with ``blas_threads=1`` sets nothing, and a
    library with fewer threads than the limit keeps them (a limit never raises a count)."""
    from sqnopt.solver import _blas

    one, two = _FakeBLAS(1), _FakeBLAS(2)
    monkeypatch.setattr(_blas, "_blas", [one, two])
    with _blas.blas_threads_limited(4):
        assert (one.num_threads, two.num_threads) == (1, 2)
    with _blas.blas_threads_limited(1):
        assert (one.num_threads, two.num_threads) == (1, 1)
    assert (one.num_threads, two.num_threads) == (1, 2)
    assert (one.calls, two.calls) == (0, 2)
