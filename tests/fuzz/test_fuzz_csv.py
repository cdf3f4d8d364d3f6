"""CSV/TSV typing (``sqnopt.datasets.load_table``) on generated tables: numeric columns with bad
cells (text, ``inf``, ``1e400``, NUL bytes, missing markers), text columns with stray numbers or
missing markers, identifier columns, empty columns (refused), words that read as non-finite numbers, label
columns of every kind (classes, names, continuous values, missing, mixed, non-finite, one per
row), declared categorical and dropped columns, one-hot and hashed encodings.

The oracle is the typing rule of the user guide, applied to what each cell was made to be (a
table of the generator's cells, not a float parse): the first error the rule meets -- options,
then the label column, then the feature columns in header order, then identifier columns -- is
the one raised, naming its line and column; otherwise the columns get the kinds the rule gives,
the numeric block holds the cells' values, each row has one indicator per present categorical
value, and the labels are the cells. Never a crash, a hang, a traceback or a warning."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings

from tests.fuzz import strategies as S
from tests.fuzz._worker import Raised, Worker

pytestmark = pytest.mark.fuzz

_NONFINITE = {"inf", "-inf", "Infinity", "-Infinity", "1e400", "-1e400"}
_MARKERS = {m.strip().lower() for m in S.MARKERS}


def cell_kind(cell: str) -> str:
    """What the generator made the cell: ``missing``, ``nonfinite``, ``text`` or ``number``."""
    v = cell.strip()
    if v.lower() in _MARKERS:
        return "missing"
    if v in _NONFINITE:
        return "nonfinite"
    if v in S.BAD_CELLS or v in S._WORDS or v in ("paris", "cat", "dog", "eel", "x1") or \
            v.startswith("u0") or "\x00" in v:
        return "text"
    return "number"                     # every other cell came from strategies._NUMBER


def expected_error(t: dict[str, Any]) -> tuple[str, list[str]] | None:
    """The first error of the rule, as ``(what, fragments its message must hold)``; None if
    the table loads."""
    header, n = t["header"], len(t["labels"])
    for name in [*t["categorical"], *t["drop"]]:
        if name not in header:
            return "option", [f"no column named {name!r}"]
    if "label" in t["categorical"] or "label" in t["drop"]:
        return "option", ["'label' is the label column"]
    kinds = [cell_kind(c) for c in t["labels"]]
    if "missing" in kinds:
        return "label", [f"line {kinds.index('missing') + 2}:", "label column 'label'"]
    n_num = kinds.count("number")
    if 0 < n_num < n:
        odd = [i for i, k in enumerate(kinds) if (k != "number") == (n_num * 2 >= n)]
        return "label", [f"line {odd[0] + 2}:", "labels must all be numbers"]
    if n_num == n:
        values = [float(c) for c in t["labels"]]
        frac = [i for i, v in enumerate(values) if v != round(v)]
        if frac:
            return "label", [f"line {frac[0] + 2}:", "not an integer"]
    if n > 20 and len(set(c.strip() if n_num < n else float(c) for c in t["labels"])) > n / 2:
        return "label", ["label column 'label' has", "distinct values"]
    features = [c for c in t["columns"] if c["name"] not in t["drop"]]
    cats = []
    for c in features:
        if c["name"] in t["categorical"]:
            cats.append(c)
            continue
        kinds = [cell_kind(v) for v in c["cells"]]
        n_num = kinds.count("number")
        other = kinds.count("text") + kinds.count("nonfinite")
        name = c["name"]
        if n_num == 0 and not other:        # every cell missing: no column at all
            return "column", [f"column {name!r} has no value in any of its",
                              f"drop=[{name!r}]"]
        if n_num == 0:
            cats.append(c)
        elif other and n_num >= other:
            first = next(i for i, k in enumerate(kinds) if k in ("text", "nonfinite"))
            return "column", [f"line {first + 2}: column {name!r}", f"categorical=[{name!r}]"]
        elif other:
            return "column", [f"column {name!r} mixes numbers and text",
                              f"categorical=[{name!r}]"]
        elif "missing" in kinds:
            return "column", [f"line {kinds.index('missing') + 2}: the numeric column {name!r}",
                              "fill or drop"]
    for c in cats:
        if c["name"] in t["categorical"]:
            continue
        present = {v.strip() for v in c["cells"] if cell_kind(v) != "missing"}
        if n >= 20 and len(present) >= 0.5 * n:
            return "column", [f"column {c['name']!r} has", "looks like an identifier",
                              f"drop=[{c['name']!r}]"]
    if not features:
        return "empty", ["no feature columns"]
    return None


@settings(max_examples=max(5, int(settings.default.max_examples * 2.0)))
@given(table=S.csv_table())
def test_csv_typing(worker: Worker, table: dict[str, Any]) -> None:
    r = worker.call("csv_table", content=table["content"], target=None,
                    categorical=table["categorical"], drop=table["drop"],
                    encoding=table["encoding"])
    want = expected_error(table)
    if isinstance(r, Raised):
        assert r.kind == "ValueError", f"{r.kind}: {r.message}\n{r.trace}"
        assert want is not None, f"refused a table the rule accepts: {r.message}"
        assert "\n" not in r.message and r.message.startswith(("/", "no column", "encoding")) \
            or "t.csv" in r.message, r.message
        for fragment in want[1]:
            assert fragment in r.message, (want, r.message)
        return
    assert want is None, f"accepted a table the rule refuses ({want}): {r['spec']}"
    assert not r["warnings"], r["warnings"]
    spec = r["spec"]
    features = [c for c in table["columns"] if c["name"] not in table["drop"]]
    numeric = [c for c in features if c["name"] not in table["categorical"]
               and any(cell_kind(v) == "number" for v in c["cells"])]
    assert spec["numeric"] == [c["name"] for c in numeric]
    assert spec["categorical"] == [c["name"] for c in features if c not in numeric]
    n = len(table["labels"])
    assert r["shape"][0] == n and r["finite"]
    block = np.array([[float(v) for v in c["cells"]] for c in numeric]).T.reshape(n, len(numeric))
    assert np.array_equal(r["numeric_block"], block)
    cats = [c for c in features if c not in numeric]
    present = [sum(cell_kind(c["cells"][i]) != "missing" for c in cats) for i in range(n)]
    assert np.array_equal(r["row_sums"], np.array(present, dtype=float))
    y = r["y"]
    if y.dtype.kind == "f":
        assert np.array_equal(y, [float(v) for v in table["labels"]])
    else:
        assert y.tolist() == [v.strip() for v in table["labels"]]
    assert math.isfinite(float(len(y)))
