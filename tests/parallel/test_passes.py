"""Every parallel pass of the compiled objectives gives the same bits on 1, 2 and 4 threads.

Each pass is run through the objective kernels' Python entries on the same data with the row
view's thread count set to 1, 2 and 4 (more than this machine's cores) under a block policy that
splits the test problems into dozens of blocks (``small_blocks``); the outputs must be equal
bit for bit. They must also equal the serial loop's (one block, the default policy at this size)
to rounding: the blocks cover every row once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

from sqnopt import _parallel
from sqnopt.curvature._newton import NewtonKernel
from sqnopt.data import make_rows
from sqnopt.objectives import (
    BinaryLogisticKernel,
    HingeKernel,
    LogisticKernel,
    SoftmaxKernel,
    SquaredHingeKernel,
    StackedLogLinearKernel,
)

N, D, K = 600, 24, 3
STORAGES = ["dense64", "dense32", "csr64", "csr32"]


def _matrix(storage: str, n_cols: int = D, seed: int = 0) -> Any:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, n_cols)) * (rng.random((N, n_cols)) < 0.3)
    X[::7] = 0.0                       # some empty rows
    dtype = np.float32 if storage.endswith("32") else np.float64
    X = X.astype(dtype)
    return sp.csr_matrix(X) if storage.startswith("csr") else np.ascontiguousarray(X)


def _rows(X: Any, y: np.ndarray, intercept: bool, seed: int = 1) -> Any:
    rng = np.random.default_rng(seed)
    sw = rng.uniform(0.2, 2.0, N)
    sw /= sw.mean()
    return make_rows(X, y, sw, sw, intercept)


def _binary_labels(seed: int = 2) -> np.ndarray:
    return np.where(np.random.default_rng(seed).random(N) < 0.4, -1.0, 1.0)


def _class_labels(seed: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, K, N).astype(np.float64)


def _kernels() -> list[tuple[str, Callable[[str, bool], Any]]]:
    def margin(cls: type) -> Callable[[str, bool], Any]:
        return lambda storage, icpt: cls(_rows(_matrix(storage), _binary_labels(), icpt), 1e-2)

    def softmax(storage: str, icpt: bool) -> Any:
        return SoftmaxKernel(_rows(_matrix(storage), _class_labels(), icpt), 1e-2, K)

    def stacked(storage: str, icpt: bool) -> Any:
        return StackedLogLinearKernel(_rows(_matrix(storage, D * K), _class_labels(), False),
                                      1e-2, K)

    def binary(storage: str, icpt: bool) -> Any:
        return BinaryLogisticKernel(_rows(_matrix(storage), _binary_labels(), icpt), 1e-2)

    return [("logistic", margin(LogisticKernel)), ("squared_hinge", margin(SquaredHingeKernel)),
            ("hinge", margin(HingeKernel)), ("softmax", softmax), ("stacked", stacked),
            ("binary_logistic", binary)]


def _all_passes(kern: Any, seed: int = 4) -> dict[str, Any]:
    """Every pass the kernel provides, on the whole data set and on a batch with repeats."""
    rng = np.random.default_rng(seed)
    n = kern.n_params
    w = rng.normal(size=n) * 0.3
    v = rng.normal(size=n)
    full = np.arange(N, dtype=np.intp)
    batch = rng.integers(0, N, N).astype(np.intp)        # with repeats, in no order
    out: dict[str, Any] = {}
    for name, b in (("full", full), ("batch", batch)):
        g = np.empty(n)
        out[f"gradient/{name}"] = (kern.gradient(w, b, g), g)
        if kern.n_scores > 0:
            coef, f = kern.score_derivatives(w, b)
            out[f"score_derivatives/{name}"] = (f, coef)
            acc = rng.normal(size=n)
            kern.rows_axpy(b, coef, 0.37, acc)
            out[f"rows_axpy/{name}"] = acc
            z = kern.rows_dot(b, w)
            u = kern.rows_dot(b, v)
            out[f"rows_dot/{name}"] = (z, u)
            out[f"rows_sqnorm/{name}"] = kern.rows_sqnorm(b, coef)
            if kern.score_losses:
                out[f"scores_loss/{name}"] = kern.scores_loss(b, z)
                out[f"scores_line/{name}"] = kern.scores_line(b, z, u, 0.7)
        if kern.hess_size > 0:
            D_ = kern.hessian_factors(w, b)
            hv = np.empty(n)
            kern.hessian_product(w, b, v, hv)
            out[f"hessian/{name}"] = (D_, hv)
            try:
                out[f"hessian_diagonal/{name}"] = kern.hessian_diagonal(w, b)
            except TypeError:           # not provided (softmax)
                pass
        if hasattr(kern, "bound_factors"):
            fac, mu = kern.bound_factors(w, b)
            out[f"bound/{name}"] = (fac, mu, kern.bound_matvec(b, fac, v))
    g = np.empty(n)
    out["full_gradient"] = (kern.full_gradient(w, g), g)
    out["value"] = kern.value(w)
    out["value/zero"] = kern.value(np.zeros(n))
    return out


def _assert_same(a: Any, b: Any, exact: bool, where: str) -> None:
    if isinstance(a, tuple):
        for x, y in zip(a, b):
            _assert_same(x, y, exact, where)
    elif exact:
        assert_array_equal(np.asarray(a), np.asarray(b), err_msg=where)
    else:
        assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-11, atol=1e-13, err_msg=where)


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("name,build", _kernels(), ids=[k[0] for k in _kernels()])
def test_every_pass_is_bit_identical_for_any_thread_count(small_blocks: None, name: str,
                                                          build: Any, storage: str,
                                                          intercept: bool) -> None:
    if name == "stacked" and intercept:
        pytest.skip("the stacked log-linear objective has no intercept")
    kern = build(storage, intercept)
    assert _parallel.plan(N, 16, kern.n_params) > 8      # every pass splits
    results = {}
    for threads in (1, 2, 4):
        kern.data.set_threads(threads)
        results[threads] = _all_passes(kern)
    for threads in (2, 4):
        for key, value in results[1].items():
            _assert_same(value, results[threads][key], True, f"{key}, {threads} threads")


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("name,build", _kernels(), ids=[k[0] for k in _kernels()])
def test_row_hints_change_no_bit(name: str, build: Any, storage: str) -> None:
    """The batch passes' memory hints (``sqnopt.data._rows.HINT_AHEAD``) at any distances --
    one row ahead, past every batch, the rest of dense rows not hinted -- read only rows of the
    batch and give the same bits as the shipped ones, on batches of every size from one row
    (``_all_passes``: the whole set and a batch of rows in no order, with repeats), on one
    thread and on two."""
    from sqnopt.data._rows import _row_hints

    kern = build(storage, name != "stacked")
    shipped = _row_hints()
    base = _all_passes(kern)
    rng = np.random.default_rng(8)
    small = {}
    for size in (1, 2, 3, 17):
        b = rng.integers(0, N, size).astype(np.intp)
        g = np.empty(kern.n_params)
        small[size] = (kern.gradient(np.full(kern.n_params, 0.1), b, g), g.copy())
    for policy in ((1, 1), (2, 0), (2 ** 40, 0), (3, 2 ** 40)):
        _row_hints(*policy)
        try:
            for threads in (1, 2):
                kern.data.set_threads(threads)
                got = _all_passes(kern)
                for key, value in base.items():
                    _assert_same(value, got[key], True, f"{key}, hints {policy}, {threads} threads")
            kern.data.set_threads(1)
            rng = np.random.default_rng(8)
            for size, value in small.items():
                b = rng.integers(0, N, size).astype(np.intp)
                g = np.empty(kern.n_params)
                _assert_same(value, (kern.gradient(np.full(kern.n_params, 0.1), b, g), g), True,
                             f"gradient on {size} rows, hints {policy}")
        finally:
            _row_hints(*shipped)
    assert _row_hints() == shipped
    # passes over rows in order hinted at any size (thresholds 0) or never: the same bits
    from sqnopt.data._rows import _ordered_hints

    ordered = _ordered_hints()
    for policy in ((0, 0, 0), (2 ** 62, 0, 0)):
        _ordered_hints(*policy)
        try:
            for threads in (1, 2):
                kern.data.set_threads(threads)
                got = _all_passes(kern)
                for key, value in base.items():
                    _assert_same(value, got[key], True,
                                 f"{key}, in-order hints {policy}, {threads} threads")
        finally:
            _ordered_hints(*ordered)
            kern.data.set_threads(1)
    assert _ordered_hints() == ordered


@pytest.mark.parametrize("storage", STORAGES)
def test_stored_bytes_count_values_and_indices(storage: str) -> None:
    """``RowData.stored_bytes``, which decides the hints over rows in order: the values'
    bytes, plus four per stored value of CSR rows (their column indices)."""
    kern = _kernels()[0][1](storage, False)
    data = kern.data
    per = data.dtype.itemsize + (4 if data.is_sparse else 0)
    assert data.stored_bytes == data.nnz * per


@pytest.mark.parametrize("storage", ["dense64", "csr32"])
@pytest.mark.parametrize("name,build", _kernels(), ids=[k[0] for k in _kernels()])
def test_blocks_add_up_to_the_serial_pass(name: str, build: Any, storage: str) -> None:
    """The blocked passes equal the serial loop's (one block: a policy that splits nothing)
    to rounding: every row is in exactly one block."""
    kern = build(storage, True if name != "stacked" else False)
    old = _parallel._set_block_policy(min_block_work=1e18)
    try:
        assert _parallel.plan(N, 200, kern.n_params) == 1  # the heaviest pass here: 198 units
        serial = _all_passes(kern)
    finally:
        _parallel._set_block_policy(**old)
    old = _parallel._set_block_policy(min_block_work=64, reduce_ratio=1e-3, max_blocks=48)
    try:
        kern.data.set_threads(2)
        blocked = _all_passes(kern)
    finally:
        _parallel._set_block_policy(**old)
    for key, value in serial.items():
        _assert_same(value, blocked[key], False, key)


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("loss", ["logistic", "softmax"])
def test_newton_hessian_is_bit_identical_for_any_thread_count(small_blocks: None, loss: str,
                                                              storage: str) -> None:
    """The Newton Hessian's formation (its blocks' triangles added in block order): the same
    Cholesky factor on 1, 2 and 4 threads, and the serial one's to rounding."""
    if loss == "softmax":
        kern: Any = SoftmaxKernel(_rows(_matrix(storage), _class_labels(), True), 1e-2, K)
    else:
        kern = LogisticKernel(_rows(_matrix(storage), _binary_labels(), True), 1e-2)
    rng = np.random.default_rng(5)
    w = rng.normal(size=kern.n_params) * 0.3
    batch = np.arange(N, dtype=np.intp)

    def factor() -> np.ndarray:
        newton = NewtonKernel(kern.n_params, N, kern.hess_size)
        newton.observe_batch(kern, w, batch)
        state = newton.get_state()
        assert state["have_factor"]
        return np.asarray(state["factor"])

    factors = {}
    for threads in (1, 2, 4):
        kern.data.set_threads(threads)
        factors[threads] = factor()
    assert_array_equal(factors[1], factors[2])
    assert_array_equal(factors[1], factors[4])
    old = _parallel._set_block_policy(min_block_work=65536, reduce_ratio=8, max_blocks=256)
    try:
        serial = factor()
    finally:
        _parallel._set_block_policy(**old)
    assert_allclose(np.triu(factors[1]), np.triu(serial), rtol=1e-10, atol=1e-12)


def test_a_nonfinite_score_is_reported_from_any_block(small_blocks: None) -> None:
    """A block that meets a non-finite score fails the whole pass (Hessian factors)."""
    X = _matrix("dense64")
    kern = LogisticKernel(_rows(X, _binary_labels(), False), 1e-2)
    w = np.zeros(kern.n_params)
    w[0] = np.inf
    batch = np.arange(N, dtype=np.intp)
    for threads in (1, 2, 4):
        kern.data.set_threads(threads)
        with pytest.raises(FloatingPointError):
            kern.hessian_factors(w, batch)


def _skewed(storage: str, n_cols: int = 400, seed: int = 6) -> Any:
    """Rows of very unequal lengths, in order of length (empty rows first, the last row full):
    the blocks are cut at equal work, not equal row counts, and keep at least one row each."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum((n_cols * (np.arange(N) / N) ** 6).astype(int), n_cols)
    lengths[-1] = n_cols
    X = np.zeros((N, n_cols))
    for i, k in enumerate(lengths):
        X[i, rng.choice(n_cols, k, replace=False)] = rng.normal(size=k)
    dtype = np.float32 if storage.endswith("32") else np.float64
    return sp.csr_matrix(X.astype(dtype))


@pytest.mark.parametrize("storage", ["csr64", "csr32"])
@pytest.mark.parametrize("loss", ["logistic", "softmax"])
def test_blocks_of_unequal_rows_are_bit_identical_and_add_up(loss: str, storage: str) -> None:
    def build() -> Any:
        X = _skewed(storage)
        if loss == "softmax":
            return SoftmaxKernel(_rows(X, _class_labels(), True), 1e-2, K)
        return LogisticKernel(_rows(X, _binary_labels(), True), 1e-2)

    kern = build()
    serial = _all_passes(kern)
    old = _parallel._set_block_policy(min_block_work=64, reduce_ratio=1e-3, max_blocks=48)
    try:
        results = {}
        for threads in (1, 2, 3, 4):
            kern.data.set_threads(threads)
            results[threads] = _all_passes(kern)
    finally:
        _parallel._set_block_policy(**old)
    for threads in (2, 3, 4):
        for key, value in results[1].items():
            _assert_same(value, results[threads][key], True, f"{key}, {threads} threads")
    for key, value in serial.items():
        _assert_same(value, results[1][key], False, key)


def _equal_work_bounds(nnz: np.ndarray, n_blocks: int) -> np.ndarray:
    """The block bounds of the policy, from the rows' stored entries: block ``b`` starts after
    the first position whose cumulative work (an entry 1 unit, a row 16) reaches ``b / B`` of
    the total; then every block keeps at least one position."""
    work = np.cumsum(nnz.astype(np.int64) + 16)
    total = int(work[-1])
    bounds = [0] + [int(np.argmax(work * n_blocks >= total * b)) + 1 for b in range(1, n_blocks)]
    bounds.append(len(nnz))
    for b in range(1, n_blocks):
        bounds[b] = max(bounds[b], bounds[b - 1] + 1)
    for b in range(n_blocks - 1, 0, -1):
        bounds[b] = min(bounds[b], bounds[b + 1] - 1)
    return np.array(bounds)


@pytest.mark.parametrize("storage", ["csr64", "csr32", "dense64"])
def test_blocks_are_cut_at_equal_work(storage: str) -> None:
    """The bounds of a pass's blocks, for every row in order (no batch, and the batch of every
    row in order, both cut by binary search in ``indptr``), a prefix of the rows in order, a
    shuffled batch and a subset with repeats: equal work over the batch's rows for CSR (counted
    from ``indptr``), equal counts for dense rows."""
    from sqnopt.objectives._base import _block_bounds_for_tests

    X = _skewed(storage) if storage.startswith("csr") else _matrix(storage)
    data = _rows(X, _binary_labels(), True)
    rng = np.random.default_rng(4)
    row_nnz = (np.diff(X.indptr) if sp.issparse(X) else np.full(N, X.shape[1]))
    for batch in (None, np.arange(N), np.arange(N // 3), rng.permutation(N),
                  rng.integers(0, N, 250)):
        rows = np.arange(N) if batch is None else batch
        for B in (1, 2, 3, 8, 48):
            got = _block_bounds_for_tests(data, batch, B)
            if sp.issparse(X):
                want = _equal_work_bounds(row_nnz[rows], B)
            else:
                q, r = divmod(len(rows), B)
                want = np.concatenate([[0], np.cumsum([q + (b < r) for b in range(B)])])
            assert_array_equal(got, want, err_msg=f"B={B}")
