"""Delimited tables (CSV, TSV) with a header row, turned into a feature matrix and labels.

One column is the label (``target``; by default the first column named ``label``, ``target``,
``y`` or ``class``, in that order of preference). Every other column is a feature:

* a *numeric* column (every non-empty value a finite number) is one real feature, as is;
* any other column is *categorical*: one-hot encoded through a vocabulary learned from the
  training table, or hashed into ``n_bags`` indicators -- the encodings of
  :class:`~sqnopt.datasets.CTRFeaturizer` (the Criteo features), which does the work.

A table of numeric columns only gives a dense matrix; with categorical columns the matrix is
sparse (CSR). :func:`load_table` returns, with ``(X, y)``, a JSON-able *spec* of the columns and
encodings; passing that spec back (``spec=``) reads a test table into the same features, and
refuses a table whose columns differ.
"""

from __future__ import annotations

import csv
import difflib
import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from sqnopt._text import short_list
from sqnopt.datasets._ctr import CTRFeaturizer
from sqnopt.datasets._io import READ_ERRORS, PathLike, open_binary

__all__ = ["TARGET_NAMES", "load_table", "table_delimiter"]

#: Column names taken as the label when ``target`` is not given (first match wins).
TARGET_NAMES: tuple[str, ...] = ("label", "target", "y", "class")
_SUFFIXES = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
_COMPRESSED = (".gz", ".xz", ".bz2", ".lzma")


def table_delimiter(path: PathLike) -> str | None:
    """``","`` for ``*.csv``, a tab for ``*.tsv`` / ``*.tab`` (also compressed, e.g.
    ``data.csv.gz``); ``None`` for any other name."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in _COMPRESSED:
        suffixes = suffixes[:-1]
    return _SUFFIXES.get(suffixes[-1]) if suffixes else None


def _read(path: PathLike, delimiter: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a delimited file (plain or compressed); errors name the line."""
    source = str(path)
    line = 1
    fh = open_binary(path)
    try:
        text = io.TextIOWrapper(fh, encoding="utf-8-sig", errors="strict", newline="")
        reader = csv.reader(text, delimiter=delimiter, strict=True)
        try:
            header = next(reader)
        except StopIteration:
            raise ValueError(f"{source}: the file is empty (a header row naming the columns is "
                             "required)") from None
        header = [h.strip() for h in header]
        if any(not h for h in header):
            raise ValueError(f"{source}: line 1: the header has an empty column name; every "
                             "column needs a name")
        dup = sorted({h for h in header if header.count(h) > 1})
        if dup:
            raise ValueError(f"{source}: line 1: the header names the columns {dup} twice; "
                             "column names must be unique")
        rows: list[list[str]] = []
        for row in reader:
            line = reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # blank line
            if len(row) != len(header):
                raise ValueError(f"{source}: line {line} has {len(row)} fields, the header "
                                 f"{len(header)} (delimiter {delimiter!r}; a quoted field with "
                                 "the delimiter inside?)")
            rows.append(row)
    except csv.Error as exc:
        raise ValueError(f"{source}: line {line}: not a valid delimited file ({exc})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{source}: near line {line}: not UTF-8 text ({exc.reason})") from None
    except READ_ERRORS as exc:
        if isinstance(exc, (FileNotFoundError, IsADirectoryError)):
            raise
        raise ValueError(f"{source}: line {line}: cannot read the file: corrupt or truncated "
                         f"data ({type(exc).__name__}: {exc})") from None
    finally:
        fh.close()
    if not rows:
        raise ValueError(f"{source}: no data rows below the header")
    return header, rows


def _is_number(value: str) -> bool:
    try:
        return math.isfinite(float(value))
    except ValueError:
        return False


def _labels(values: list[str], source: str, name: str) -> NDArray[Any]:
    missing = [i for i, v in enumerate(values) if not v.strip()]
    if missing:
        raise ValueError(f"{source}: line {missing[0] + 2}: the label column {name!r} is empty; "
                         "every row needs a label")
    stripped = [v.strip() for v in values]
    if all(_is_number(v) for v in stripped):
        return np.array([float(v) for v in stripped])
    return np.array(stripped)


def _pick_target(header: Sequence[str], target: str | None, source: str) -> str | None:
    if target is not None:
        if target not in header:
            close = difflib.get_close_matches(target, list(header), n=1)
            raise ValueError(f"{source}: no column named {target!r} for the label"
                             + (f"; did you mean {close[0]!r}?" if close else "")
                             + f" (columns: {short_list(header)})")
        return target
    lower = {h.lower(): h for h in header}
    for name in TARGET_NAMES:
        if name in lower:
            return lower[name]
    return None


#: A column with at most this many distinct values (and at least two) may be the label.
LIKELY_LABEL_VALUES = 20


def _likely_label(header: Sequence[str], rows: Sequence[Sequence[str]]) -> tuple[str, str] | None:
    """The column that most likely holds the labels of a table that names none, and why: the
    last column when it has 2 to ``LIKELY_LABEL_VALUES`` distinct values (tables usually end
    with their label), else the column with the fewest such values (the rightmost of a tie);
    None when no column has so few."""
    best: tuple[int, int, str] | None = None
    last = len(header) - 1
    for j in range(last, -1, -1):
        values = {row[j].strip() for row in rows if j < len(row)} - {""}
        k = len(values)
        if not 2 <= k <= LIKELY_LABEL_VALUES:
            continue
        shown = short_list(sorted(values), 3, quote=True)
        if j == last:
            return header[j], f"the last column, {k} distinct values: {shown}"
        if best is None or k < best[0]:
            best = (k, j, shown)
    if best is None:
        return None
    return header[best[1]], f"{best[0]} distinct values: {best[2]}"


def load_table(path: PathLike, *, target: str | None = None, delimiter: str | None = None,
               categorical: str = "onehot", n_bags: int = 2**13, seed: int = 0,
               spec: Mapping[str, Any] | None = None, require_target: bool = True,
               ) -> tuple[Any, NDArray[Any] | None, dict[str, Any]]:
    """Read a delimited table with a header into ``(X, y, spec)`` (see the module docstring).

    Parameters
    ----------
    path
        A ``.csv`` / ``.tsv`` file, plain or compressed (xz, gzip, bzip2).
    target
        The label column; ``None``: the first of :data:`TARGET_NAMES` present.
    delimiter
        ``None``: from the file name (:func:`table_delimiter`), else ``","``.
    categorical
        ``"onehot"`` (a vocabulary learned from this table; values not seen in it share the
        column's "other" indicator) or ``"hash"`` (``n_bags`` indicators per column, CRC32
        with ``seed``; no vocabulary, so unseen values get features too).
    spec
        The spec returned for the training table: the columns, their kinds and the encodings
        are taken from it, and a table with other feature columns is refused.
    require_target
        ``False`` accepts a table without the label column (prediction); ``y`` is then None.

    Returns
    -------
    X : ndarray or CSR matrix of shape (n_rows, n_features)
        Dense float64 when every feature column is numeric, else CSR.
    y : ndarray or None
        float64 when every label is a number, else strings.
    spec : dict
        ``{"format": "csv", "delimiter", "target", "numeric", "categorical", "encoding",
        "n_bags", "seed", "vocabularies", "n_features"}`` (JSON-able).
    """
    source = str(path)
    if spec is not None:
        delimiter = delimiter or str(spec.get("delimiter", ","))
        target = target or spec.get("target")
        categorical = str(spec.get("encoding", "onehot"))
        n_bags = int(spec.get("n_bags", n_bags))
        seed = int(spec.get("seed", seed))
    if categorical not in ("onehot", "hash"):
        raise ValueError(f"categorical must be 'onehot' or 'hash', got {categorical!r}")
    if delimiter is None:
        delimiter = table_delimiter(path) or ","
    header, rows = _read(path, delimiter)
    if spec is not None and not require_target and target not in header:
        target = None  # prediction data without the label column
    name = _pick_target(header, target, source)
    if name is None and (require_target or spec is None):
        likely = _likely_label(header, rows)
        raise ValueError(
            f"{source}: no label column: none is named {', '.join(TARGET_NAMES)}"
            + (f". The likely label is {likely[0]!r} ({likely[1]}): pass target="
               f"{likely[0]!r}" if likely else "; name it with target=COLUMN")
            + f" (columns: {short_list(header)})")
    columns = {h: [row[j] for row in rows] for j, h in enumerate(header)}
    y = None if name is None else _labels(columns.pop(name), source, name)

    if spec is None:
        numeric = [h for h, vals in columns.items()
                   if any(v.strip() for v in vals)
                   and all(_is_number(v) for v in vals if v.strip())]
        cats = [h for h in columns if h not in numeric]
        vocab: dict[str, dict[str, int]] | None = None
    else:
        numeric = list(spec.get("numeric", []))
        cats = list(spec.get("categorical", []))
        expected = set(numeric) | set(cats)
        missing = [h for h in [*numeric, *cats] if h not in columns]
        extra = [h for h in columns if h not in expected]
        if missing or extra:
            raise ValueError(
                f"{source}: the columns differ from the training table's: "
                + (f"missing [{short_list(missing, 10, quote=True)}]" if missing else "")
                + ("; " if missing and extra else "")
                + (f"not in the model [{short_list(extra, 10, quote=True)}]" if extra else "")
                + f" (the model's feature columns: {short_list([*numeric, *cats])})")
        vocab = spec.get("vocabularies")
    if not numeric and not cats:
        raise ValueError(f"{source}: no feature columns besides the label {name!r}")

    dense = np.empty((len(rows), len(numeric)), dtype=np.float64)
    for j, h in enumerate(numeric):
        for i, v in enumerate(columns[h]):
            try:
                value = float(v)
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                what = "is empty" if not v.strip() else f"holds {v.strip()[:30]!r}"
                raise ValueError(f"{source}: line {i + 2}: the numeric column {h!r} {what}; "
                                 "numeric columns need a finite number in every row (fill or "
                                 "drop the missing values)")
            dense[i, j] = value
    out: dict[str, Any] = {"format": "csv", "delimiter": delimiter, "target": name,
                           "numeric": numeric, "categorical": cats, "encoding": categorical,
                           "n_bags": int(n_bags), "seed": int(seed)}
    if not cats:
        out["n_features"] = len(numeric)
        return dense, y, out
    if categorical == "onehot":
        feats = CTRFeaturizer(categorical=cats, seed=seed)
        if vocab is None:
            feats.fit(columns)
        else:
            feats.vocabularies_ = {c: {str(k): int(v) for k, v in vocab[c].items()}
                                   for c in cats}
        out["vocabularies"] = feats.vocabularies_
    else:
        feats = CTRFeaturizer(hashed=cats, n_bags=n_bags, seed=seed)
    X = sp.hstack([sp.csr_matrix(dense), feats.transform(columns)], format="csr")
    out["n_features"] = int(X.shape[1])
    return X, y, out
