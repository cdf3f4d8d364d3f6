"""Fuzzed Parquet files whose container is valid but whose values may not be: NaN, infinite
or null labels and features, a text column among the features, text targets for a regression
stream, feature indices that are negative, repeated, unsorted or beyond ``n_features``.

Oracle: reading the stream either raises one ``ValueError`` naming the file, or gives chunks
that a model can trust -- finite float features of the stream's width (every sparse index in
range and each row's indices strictly increasing), one finite float target per row for
``label_kind="regression"`` and labels among the stream's classes otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

pytestmark = pytest.mark.fuzz

_NUMBERS = st.one_of(st.floats(-5, 5), st.sampled_from([np.nan, np.inf, -np.inf]))


@st.composite
def parquet_tables(draw: Any) -> tuple[dict[str, Any], bool, int | None]:
    """``(columns, sparse, n_features given)``: a small table with some wrong values."""
    n = draw(st.integers(1, 12))
    target_kind = draw(st.sampled_from(["int", "float", "str", "null"]))
    if target_kind == "int":
        y: list[Any] = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    elif target_kind == "float":
        y = draw(st.lists(_NUMBERS, min_size=n, max_size=n))
    elif target_kind == "str":
        y = draw(st.lists(st.sampled_from(["a", "b", "1.5"]), min_size=n, max_size=n))
    else:
        y = draw(st.lists(st.one_of(st.none(), st.floats(-1, 1)), min_size=n, max_size=n))
    if draw(st.booleans()):                                       # sparse rows
        width = draw(st.integers(1, 6))
        rows = draw(st.lists(st.lists(st.integers(-2, width + 2), max_size=4), min_size=n,
                             max_size=n))
        cols: dict[str, Any] = {"label": y, "indices": pa.array(rows, pa.list_(pa.int64()))}
        if draw(st.booleans()):
            vals = [draw(st.lists(_NUMBERS, min_size=len(r), max_size=len(r))) for r in rows]
            cols["values"] = pa.array(vals, pa.list_(pa.float64()))
        return cols, True, (width if draw(st.booleans()) else None)
    cols = {"label": y}
    for j in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["num"] * 4 + ["null", "str"]))
        if kind == "num":
            cols[f"x{j}"] = draw(st.lists(_NUMBERS, min_size=n, max_size=n))
        elif kind == "null":
            cols[f"x{j}"] = draw(st.lists(st.one_of(st.none(), st.floats(-1, 1)),
                                          min_size=n, max_size=n))
        else:
            cols[f"x{j}"] = draw(st.lists(st.sampled_from(["a", "2"]), min_size=n, max_size=n))
    return cols, False, None


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(table=parquet_tables(), regression=st.booleans())
def test_parquet_values(tmp_path: Path, table: Any, regression: bool) -> None:
    from sqnopt.datasets import stream_parquet

    cols, sparse, width = table
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table(cols), path)
    try:
        stream = stream_parquet(path, n_features=width, chunk_size=5,
                                label_kind="regression" if regression else "multiclass")
        chunks = list(stream)
    except ValueError as exc:
        assert str(path) in str(exc), f"the error does not name the file: {exc}"
        return
    for X, y in chunks:
        assert X.shape == (y.shape[0], stream.n_features)
        if sp.issparse(X):
            Xc = sp.csr_matrix(X)
            assert np.all(np.isfinite(Xc.data))
            for i in range(Xc.shape[0]):
                idx = Xc.indices[Xc.indptr[i]:Xc.indptr[i + 1]]
                assert np.all(np.diff(idx) > 0) and np.all((idx >= 0) & (idx < X.shape[1]))
        else:
            assert np.all(np.isfinite(X))
        if regression:
            assert y.dtype == np.float64 and np.all(np.isfinite(y))
        else:
            assert np.all(np.isin(y, stream.classes))
