"""Kernel Pegasos' iterate sequences are pinned: every fit of
``tests/first_order/kernel_record.py`` (RBF, linear and polynomial kernels, several seeds, batch
sizes, projection and intercept settings, a batch sequence that runs out) reports the support,
coefficients, intercept, ``||w||^2``, iterations and kernel evaluations recorded in
``kernel_record.npz``, written by the separate kernel-Pegasos loop before the kernel expansion
became an iterate representation of the one compiled driver. Regenerate it only on purpose (and
list the change in docs/changelog.md).

Bit for bit, except one documented rounding difference: the projection onto the ball of radius
``r = 1/sqrt(lam)`` is the driver's ball rule ``nu > r^2: c <- c r / sqrt(nu)`` (the arithmetic of
the linear scaled iterate), where the separate loop computed ``lam nu > 1: c <- c / sqrt(lam
nu)``: equal in exact arithmetic, different in the last bits of ``c``. So the integers (support,
iterations, kernel evaluations) are equal in every run, the coefficients of runs without the
projection bit for bit, and those of projected runs to 1e-13 relative (2.5e-15 the largest
difference seen when the projection moved into the driver). The reported ``||w||^2`` of an
unprojected run is held to 1e-13 relative too: on CSR rows it is summed in the data layer's
order, which changed to two partial sums (one rounding step in one run).

The Python path (kernel callables and ``path="python"``) is held the same way to
``kernel_record_python.npz``, the iterates of the separate NumPy loop it replaced
(``kernel_record.python_runs``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.first_order import kernel_record

RUNS = {name: (params, X, y) for name, params, X, y in kernel_record.runs()}


@pytest.fixture(scope="module")
def record() -> Any:
    with np.load(kernel_record.RECORD) as f:
        return {k: f[k] for k in f.files}


def test_the_record_covers_every_run(record: dict[str, np.ndarray]) -> None:
    want = {f"{name}/T{T}/{part}" for name in RUNS for T in kernel_record.ITERS
            for part in ("ints", "floats")}
    assert set(record) == want


@pytest.mark.parametrize("name", list(RUNS))
def test_kernel_iterates_match_the_record(name: str, record: dict[str, np.ndarray]) -> None:
    params, X, y = RUNS[name]
    for T in kernel_record.ITERS:
        got = kernel_record.fit(params, X, y, T)
        for part in ("ints", "floats"):
            want = record[f"{name}/T{T}/{part}"]
            assert got[part].dtype == want.dtype and got[part].shape == want.shape, (T, part)
            if part == "floats" and params.get("project", True):
                np.testing.assert_allclose(got[part], want, rtol=1e-13, atol=0, err_msg=str(T))
            elif part == "floats":       # [intercept, ||w||^2, coefficients...]
                np.testing.assert_allclose(got[part][1], want[1], rtol=1e-13, atol=0,
                                           err_msg=str(T))
                assert np.array_equal(np.delete(got[part], 1), np.delete(want, 1)), (T, part)
            else:
                assert np.array_equal(got[part], want), (T, part)


PYTHON_RUNS = {name: (params, X, y) for name, params, X, y in kernel_record.python_runs()}


@pytest.fixture(scope="module")
def python_record() -> Any:
    with np.load(kernel_record.RECORD_PYTHON) as f:
        return {k: f[k] for k in f.files}


def test_the_python_record_covers_every_run(python_record: dict[str, np.ndarray]) -> None:
    want = {f"{name}/T{T}/{part}" for name in PYTHON_RUNS for T in kernel_record.ITERS
            for part in ("ints", "floats")}
    assert set(python_record) == want


@pytest.mark.parametrize("name", list(PYTHON_RUNS))
def test_python_kernel_iterates_match_the_record(name: str,
                                                 python_record: dict[str, np.ndarray]) -> None:
    """The Python path (a kernel callable, or ``path="python"``: the kernel expansion
    :class:`~sqnopt.kernel._expansion.PythonKernelIterate` run by the Python driver) against the
    iterates of the separate NumPy loop it replaced (``kernel_record_python.npz``).

    Bit for bit but for the documented projection rounding of the compiled path (module
    docstring): the ball rule is the driver's ``nu > r^2: c <- c r / sqrt(nu)`` where the NumPy
    loop computed ``lam nu > 1: c <- c / sqrt(lam nu)``. The integers are equal in every run,
    the floats of runs without the projection bit for bit, and those of projected runs to 1e-13
    relative (1.1e-15 the largest difference seen when the Python path moved onto the
    driver)."""
    params, X, y = PYTHON_RUNS[name]
    for T in kernel_record.ITERS:
        got = kernel_record.fit(params, X, y, T)
        for part in ("ints", "floats"):
            want = python_record[f"{name}/T{T}/{part}"]
            assert got[part].dtype == want.dtype and got[part].shape == want.shape, (T, part)
            if part == "floats" and params.get("project", True):
                np.testing.assert_allclose(got[part], want, rtol=1e-13, atol=0, err_msg=str(T))
            elif part == "floats":       # [intercept, ||w||^2, coefficients...]
                np.testing.assert_allclose(got[part][1], want[1], rtol=1e-13, atol=0,
                                           err_msg=str(T))
                assert np.array_equal(np.delete(got[part], 1), np.delete(want, 1)), (T, part)
            else:
                assert np.array_equal(got[part], want), (T, part)
