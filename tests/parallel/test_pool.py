"""The thread pool, the block plan and the ordered fold of ``sqnopt._parallel``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from sqnopt import _parallel


def test_tasks_run_once_each_and_workers_take_part() -> None:
    if not _parallel.threads_available():
        pytest.skip("this build runs every task on the caller")
    ran = _parallel._which_threads(2, 40, 2e-3)
    assert np.all(ran >= 0)                      # every task ran
    assert set(ran.tolist()) == {0, 1}           # on the caller and on a pool thread
    ran = _parallel._which_threads(4, 40, 1e-3)  # more threads than this machine's cores
    assert np.all(ran >= 0) and np.all(ran < 4)
    assert len(set(ran.tolist())) > 1


def test_one_thread_runs_every_task_on_the_caller() -> None:
    assert_array_equal(_parallel._which_threads(1, 7, 0.0), np.zeros(7, dtype=np.intc))


@pytest.mark.parametrize("n_ring", [1, 2, 3, 8])
def test_ordered_pass_adds_blocks_in_order_for_every_thread_count(n_ring: int) -> None:
    """``out = ((out + p_0) + p_1) + ...`` exactly, in block order, however many threads ran the
    blocks and however few ring buffers they shared (values chosen so that another order rounds
    differently); every block's status comes back."""
    rng = np.random.default_rng(0)
    n, m = 20_000, 23
    partials = rng.normal(size=(m, n)) * 10.0 ** rng.integers(-8, 8, size=(m, n))
    start = rng.normal(size=n) * 1e8
    expected = start.copy()
    for b in range(m):
        expected += partials[b]
    reversed_order = start + partials[0]
    for b in reversed(range(1, m)):
        reversed_order += partials[b]
    assert not np.array_equal(expected, reversed_order)     # the order matters here
    for threads in (1, 2, 4):
        out = start.copy()
        status = _parallel._ordered_for_tests(out, partials, threads, n_ring)
        assert_array_equal(out, expected)
        assert_array_equal(status, (np.arange(m) % 3 == 2).astype(np.intc))


def test_ring_is_a_few_buffers_per_thread() -> None:
    assert _parallel.ring(1, 1, 100) == 0                   # one block: no partial vector
    assert _parallel.ring(2, 30, 100) == 4
    assert _parallel.ring(4, 3, 100) == 2                   # at most one per later block
    assert _parallel.ring(2, 30, 0) == 0
    huge = int(_parallel.block_policy()["max_vector_bytes"] // 8)
    assert _parallel.ring(8, 100, huge) == 1                # within max_vector_bytes, >= 1


def _pow2(b: int) -> int:
    """The policy's rounding: below 64 blocks, the largest power of two not above ``b``."""
    return b if b >= 64 else 1 << (b.bit_length() - 1)


def test_plan_depends_on_the_work_only() -> None:
    policy = _parallel.block_policy()
    assert policy == _parallel.DEFAULT_POLICY
    least = policy["min_block_work"]
    # below two blocks' worth of work: the serial loop
    assert _parallel.plan(1000, 2 * least / 1000 - 1) == 1
    assert _parallel.plan(1000, 2 * least / 1000 + 1) == 2
    # each block has at least min_block_work units; at most max_blocks blocks, one row each
    assert _parallel.plan(10**6, 100.0) == min(int(10**8 / least), policy["max_blocks"])
    assert _parallel.plan(10, 1e9) == 8                     # 10 rows: 8 blocks, a power of 2
    assert [_parallel.plan(b, 1e9) for b in (2, 3, 4, 7, 63, 64, 65)] == [2, 2, 4, 4, 32, 64, 65]
    # a pass summing into a vector: its partials cost at most 1/reduce_ratio of the work
    work = 10**6 * 50.0
    n_vec = 10**5
    assert _parallel.plan(10**6, 50.0, n_vec) == _pow2(
        int(work / (policy["reduce_ratio"] * n_vec)))


def test_policy_is_validated_and_restored() -> None:
    with pytest.raises(ValueError, match="min_block_work"):
        _parallel._set_block_policy(min_block_work=0)
    with pytest.raises(ValueError, match="max_blocks"):
        _parallel._set_block_policy(max_blocks=0)
    old = _parallel._set_block_policy(max_blocks=3)
    try:
        assert _parallel.plan(10**6, 1e3) == 2             # 3 allowed: 2, a power of two
    finally:
        _parallel._set_block_policy(**old)
    assert _parallel.block_policy() == _parallel.DEFAULT_POLICY


def test_may_split_bounds_every_pass() -> None:
    """``may_split`` is False exactly when even the heaviest pass per row (Newton's Hessian)
    has one block: a solver then need not resolve ``n_jobs``."""
    for n_rows, entries, outputs in [(100, 10.0, 1), (5000, 14.0, 1), (200, 50.0, 3),
                                     (30, 784.0, 10), (10**6, 20.0, 1)]:
        e, k = entries, outputs
        heaviest = k * k * (0.5 * e * e + e) + k * (2 * e + 16)
        assert _parallel.may_split(n_rows, entries, outputs) == (
            _parallel.plan(n_rows, heaviest) > 1)


def test_concurrent_callers_get_the_same_results() -> None:
    """Fits running in several Python threads share one pool: a caller that finds it busy runs
    its blocks itself; every thread gets the bits of a lone run."""
    from sqnopt import Solver

    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 40))
    y = np.where(X @ rng.normal(size=40) + rng.normal(size=3000) > 0, 1.0, -1.0)
    old = _parallel._set_block_policy(min_block_work=256)
    try:
        def fit() -> np.ndarray:
            solver = Solver.preset("lbfgs", lam=1e-3, n_jobs=2, max_iter=30)
            return solver.fit(X, y).w

        alone = fit()
        results: list[np.ndarray] = []
        threads = [threading.Thread(target=lambda: results.append(fit())) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        _parallel._set_block_policy(**old)
    assert len(results) == 3
    for w in results:
        assert_array_equal(w, alone)


def _env() -> dict[str, str]:
    """A subprocess's environment that imports the same sqnopt as this process (it runs
    outside the checkout, whose uncompiled sqnopt/ would shadow an installed one)."""
    import sqnopt

    home = str(Path(sqnopt.__file__).resolve().parent.parent)
    path = os.pathsep.join([home, os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH")
                           else [home])
    return dict(os.environ, PYTHONPATH=path)


def test_a_forked_child_runs_parallel_passes(tmp_path: Path) -> None:
    """The pool's threads do not survive fork(); a child forked after the parent ran parallel
    passes starts threads of its own instead of waiting for the parent's (GNU OpenMP's
    runtime hangs there). Run in a fresh interpreter that forks (no pytest threads around)."""
    if not hasattr(os, "fork"):
        pytest.skip("no fork() on this platform")
    code = textwrap.dedent("""
        import os, sys
        import numpy as np
        from sqnopt import _parallel
        parent = _parallel._which_threads(2, 20, 1e-3)
        assert set(parent.tolist()) == {0, 1}, parent
        pid = os.fork()
        if pid == 0:
            child = _parallel._which_threads(2, 20, 1e-3)
            os._exit(0 if set(child.tolist()) == {0, 1} else 3)
        _, status = os.waitpid(pid, 0)
        sys.exit(os.waitstatus_to_exitcode(status))
    """)
    if not _parallel.threads_available():
        pytest.skip("this build runs every task on the caller")
    proc = subprocess.run([sys.executable, "-W", "ignore", "-c", code], timeout=120,
                          capture_output=True, text=True, env=_env(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
