"""Delimited tables (CSV, TSV) with a header row, turned into a feature matrix and labels.

One column is the label (``target``; by default the first column named ``label``, ``target``,
``y`` or ``class``, in that order of preference). Every other column is a feature, typed by a
rule that errs on the side of an error naming the line, the column, the value and the fix:

* a column whose values all parse as finite numbers is *numeric*: one real feature, as is; a
  missing value in it -- an empty cell or a missing marker (:data:`MISSING_MARKERS`: ``NA``,
  ``nan``, ``null``, ...) -- is an error (fill or drop it);
* a column with no number is *categorical* (its missing markers and empty cells set no
  indicator), unless its values are numbers written with a comma (``1,000``, ``0,5``:
  thousands separators or a decimal comma), an error: one-hot codes would turn amounts into
  unrelated categories;
* a column mixing numbers with other values (``abc``, ``inf``, ``1e400``, a NUL byte, ...) is an
  error naming the first value of the minority kind, unless it is declared categorical
  (``categorical=[...]``, the command line's ``--categorical``);
* a categorical column whose values are distinct in half of its rows or more (an identifier:
  its one-hot indicators would each fit one row, memorised rather than learned) is an error
  unless declared categorical or dropped (``drop=[...]``, ``--drop``).

Categorical columns are one-hot encoded through a vocabulary learned from the training table,
or hashed into ``n_bags`` indicators -- the encodings of
:class:`~sqnopt.datasets.CTRFeaturizer` (the Criteo features), which does the work. The label
column must hold a label in every row (a missing marker is no label), and for training a
classification label: all numbers or all text, and when numbers, integers -- non-integer
numbers (a continuous quantity) or distinct values in more than half of more than 20 rows (an
identifier, or a quantity) are refused (scikit-learn's test for a regression target), and so
are yes/no words spelled with different capitals (``True`` and ``true`` would be two classes).
A table read for a regression loss (``label_kind="regression"``) holds real-valued targets
instead: every label a finite number, read as float64 and never encoded as classes.

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
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from sqnopt._text import short_list
from sqnopt.data._dataset import LABEL_KINDS, LabelKind
from sqnopt.datasets._ctr import CTRFeaturizer
from sqnopt.datasets._io import READ_ERRORS, PathLike, open_binary

__all__ = ["MISSING_MARKERS", "TARGET_NAMES", "load_table", "table_delimiter"]

#: Column names taken as the label when ``target`` is not given (first match wins).
TARGET_NAMES: tuple[str, ...] = ("label", "target", "y", "class")
#: Cell values that mean "no value" (compared without case, spaces stripped), as an empty cell:
#: an error in a numeric or the label column, no indicator in a categorical one (pandas'
#: readers take the same for missing).
MISSING_MARKERS: frozenset[str] = frozenset({"", "na", "n/a", "#n/a", "nan", "null", "none"})
#: A categorical column with distinct values in at least this fraction of its rows (and at
#: least ``_ID_ROWS`` rows) looks like an identifier.
_ID_FRACTION = 0.5
_ID_ROWS = 20
#: dates and times as spreadsheets and loggers write them (ISO 8601 with an optional time and
#: zone, day/month/year with slashes or dots, a time of day alone)
_DATE_TIME = re.compile(
    r"(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})"
    r"([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?"
    r"|\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?( ?[AaPp][Mm])?")
_SUFFIXES = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
_COMPRESSED = (".gz", ".xz", ".bz2", ".lzma")


def table_delimiter(path: PathLike) -> str | None:
    """``","`` for ``*.csv``, a tab for ``*.tsv`` / ``*.tab`` (also compressed, e.g.
    ``data.csv.gz``); ``None`` for any other name."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in _COMPRESSED:
        suffixes = suffixes[:-1]
    return _SUFFIXES.get(suffixes[-1]) if suffixes else None


#: Delimiters a table written for another locale or tool may use instead of the expected one.
_OTHER_DELIMITERS = (";", "\t", "|", ",")


def check_header(header: list[str], delimiter: str, source: str) -> list[str]:
    """The header's column names, stripped; an empty or repeated name is an error, and so is a
    header that is one column holding another delimiter that splits it into names (a table
    delimited by ``;``, as spreadsheets in many locales write CSV, read at ``,``): that file
    would otherwise fail later, on a label column that cannot be found."""
    header = [h.strip() for h in header]
    if any(not h for h in header):
        raise ValueError(f"{source}: line 1: the header has an empty column name; every "
                         "column needs a name")
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise ValueError(f"{source}: line 1: the header names the columns {dup} twice; "
                         "column names must be unique")
    if len(header) == 1:
        for other in _OTHER_DELIMITERS:
            names = [h.strip() for h in header[0].split(other)]
            if other != delimiter and len(names) > 1 and all(names):
                raise ValueError(
                    f"{source}: line 1: the header is the single column {header[0]!r} at the "
                    f"delimiter {delimiter!r}, but {other!r} splits it into {len(names)} "
                    f"columns ({short_list(names)}): the file is delimited by {other!r}. "
                    "Rewrite it with commas (a .csv name) or tabs (a .tsv name, or --format "
                    f"tsv), or read it in Python with load_table(path, delimiter={other!r})")
    return header


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
        header = check_header(header, delimiter, source)
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


def _kind(value: str) -> str:
    """``"missing"`` (empty or a marker), ``"number"`` (a finite number), ``"nonfinite"`` (a
    number that is not finite: ``inf``, ``1e400``) or ``"text"``."""
    v = value.strip()
    if v.lower() in MISSING_MARKERS:
        return "missing"
    try:
        return "number" if math.isfinite(float(v)) else "nonfinite"
    except ValueError:
        return "text"


def _show(value: str) -> str:
    v = value.strip()
    return repr(v[:30] + ("..." if len(v) > 30 else ""))


def categorical_fix(column: str) -> str:
    """The fix a numeric-error message offers for a column whose values may be categories
    (in the caller's terms: the CLI rewrites ``categorical=[...]`` as ``--categorical``)."""
    return f"pass categorical=[{column!r}] to treat it as categorical"


def missing_label_error(source: str, line: int, column: str, value: str) -> ValueError:
    """The error for a label cell that is empty or a missing marker: every row needs a label
    (whole-file and streamed readers alike)."""
    what = "is empty" if not value.strip() else f"holds the missing marker {_show(value)}"
    return ValueError(f"{source}: line {line}: the label column {column!r} {what}; every row "
                      "needs a label (drop the row, or fill in its label)")


def missing_number_error(source: str, line: int, column: str, value: str) -> ValueError:
    """The error for an empty cell or a missing marker in a numeric column (whole-file and
    streamed readers alike)."""
    what = "is empty" if not value.strip() else f"holds the missing marker {_show(value)}"
    return ValueError(f"{source}: line {line}: the numeric column {column!r} {what}; numeric "
                      "columns need a finite number in every row (fill or drop the missing "
                      f"values, or {categorical_fix(column)})")


def _first(kinds: list[str], wanted: tuple[str, ...]) -> int:
    return next(i for i, k in enumerate(kinds) if k in wanted)


#: Spellings of a yes/no answer, compared without case: a label column of them is two
#: classes however each row capitalises its answer.
_BOOLEAN_WORDS = {"true", "false", "yes", "no"}


def check_boolean_labels(labels: Iterable[str], source: str, name: str) -> None:
    """Refuse training labels that are yes/no words spelled with different capitals (``True``,
    ``true``, ``TRUE``): as text they would be separate classes, a binary problem trained as
    one of three or more classes."""
    distinct = sorted(set(labels))
    lowered = {v.lower() for v in distinct}
    if len(lowered) < len(distinct) and lowered <= _BOOLEAN_WORDS:
        same = [v for v in distinct if sum(w.lower() == v.lower() for w in distinct) > 1]
        raise ValueError(f"{source}: the label column {name!r} spells the same answer with "
                         f"different capitals ({short_list(same)}), which would make "
                         f"{len(distinct)} classes of {len(lowered)}: write each label one way "
                         "(e.g. all lower case)")


def _labels(values: list[str], source: str, name: str, training: bool,
            regression: bool = False) -> NDArray[Any]:
    """The label column as float64 (every label a number) or strings; see the module
    docstring for what is refused (``training``: the checks of a classification target;
    ``regression``: real-valued targets, every one a finite number, never classes)."""
    kinds = [_kind(v) for v in values]
    if "missing" in kinds:
        i = _first(kinds, ("missing",))
        raise missing_label_error(source, i + 2, name, values[i])
    stripped = [v.strip() for v in values]
    if regression:
        if any(k != "number" for k in kinds):
            i = _first(kinds, ("nonfinite", "text"))
            what = "is not a finite number" if kinds[i] == "nonfinite" else "is not a number"
            raise ValueError(f"{source}: line {i + 2}: the target {_show(values[i])} of column "
                             f"{name!r} {what}; a regression loss needs a real-valued target "
                             "in every row (fix or drop the row, or name the target column "
                             "with target=COLUMN)")
        return np.array([float(v) for v in stripped], dtype=np.float64)
    n_num = kinds.count("number")
    if n_num and n_num < len(kinds):
        odd = ("nonfinite", "text") if n_num * 2 >= len(kinds) else ("number",)
        i = _first(kinds, odd)
        what = ("is not a finite number" if kinds[i] == "nonfinite" else
                "is not a number" if kinds[i] == "text" else "is a number")
        raise ValueError(f"{source}: line {i + 2}: the label {_show(values[i])} {what}, while "
                         f"{n_num} of the {len(kinds)} labels of column {name!r} are numbers: "
                         "labels must all be numbers or all be names (fix the label, or name "
                         "the label column with target=COLUMN)")
    if n_num == 0:
        if training:
            check_boolean_labels(stripped, source, name)
        return np.array(stripped)
    y = np.array([float(v) for v in stripped])
    if training:
        frac = y != np.round(y)
        if frac.any():
            i = int(np.flatnonzero(frac)[0])
            raise ValueError(
                f"{source}: line {i + 2}: the label column {name!r} holds {_show(values[i])}, "
                f"not an integer: the labels look continuous ({np.unique(y).shape[0]} distinct "
                "values), and classification needs discrete labels (classes). Name the label "
                "column with target=COLUMN, bin the values into classes, or fit a regression "
                "loss (loss='squared_error', 'huber' or 'poisson': real-valued targets)")
    return y


def _check_classes(y: NDArray[Any], source: str, name: str) -> None:
    """Refuse a training label column with distinct values in more than half of more than 20
    rows (scikit-learn's test for a regression target)."""
    n = y.shape[0]
    distinct = np.unique(y).shape[0]
    if n > 20 and distinct > 0.5 * n:
        raise ValueError(f"{source}: the label column {name!r} has {distinct} distinct values "
                         f"in {n} rows: it looks like an identifier or a continuous quantity, "
                         "and a classifier needs a few discrete labels (classes). Name the "
                         "label column with target=COLUMN, or fit a regression loss "
                         "(loss='squared_error', 'huber' or 'poisson': real-valued targets)")


#: A number written with a comma: thousands separators (``1,000``, ``-12,345.5``) or a
#: decimal comma (``0,5``). Text to the type rule, but a column of them holds amounts, which
#: one-hot codes would turn into unrelated categories.
_COMMA_NUMBER = re.compile(r"[+-]?(\d{1,3}(,\d{3})+(\.\d*)?|\d*,\d+)")


def _column_kind(name: str, values: list[str], source: str) -> str:
    """``"numeric"`` or ``"categorical"`` by the rule of the module docstring (a column not
    declared categorical); raises the error for a column that mixes numbers and other
    values, or a numeric column with a missing value."""
    kinds = [_kind(v) for v in values]
    n_num = kinds.count("number")
    comma = [i for i, v in enumerate(values) if _COMMA_NUMBER.fullmatch(v.strip())]
    if comma and all(kinds[i] in ("missing", "number") or i in set(comma)
                     for i in range(len(values))):
        i = comma[0]
        raise ValueError(f"{source}: line {i + 2}: column {name!r} holds {_show(values[i])}, a "
                         f"number written with a comma ({len(comma)} of its {len(values)} "
                         "values; thousands separators or a decimal comma): write the numbers "
                         "with a decimal point and no separators, or "
                         f"{categorical_fix(name)} if the values are codes")
    if n_num == 0:
        present = [i for i, k in enumerate(kinds) if k != "missing"]
        if not present:
            raise ValueError(f"{source}: column {name!r} has no value in any of its "
                             f"{len(values)} rows (every cell empty or a missing marker): drop "
                             f"it with drop=[{name!r}]")
        if all(_DATE_TIME.fullmatch(values[i].strip()) for i in present):
            i = present[0]
            raise ValueError(f"{source}: line {i + 2}: column {name!r} holds dates or times "
                             f"(e.g. {_show(values[i])}): one-hot codes would make each one a "
                             "category unrelated to the others, and a model could not use "
                             "their order. Turn it into numbers (days since a start, month, "
                             f"weekday, hour) or drop it with drop=[{name!r}]; "
                             f"{categorical_fix(name)} if the values are codes")
        return "categorical"
    n_other = kinds.count("text") + kinds.count("nonfinite")
    fix = categorical_fix(name)
    if n_other:
        if n_num >= n_other:
            i = _first(kinds, ("text", "nonfinite"))
            what = ("not a finite number" if kinds[i] == "nonfinite" else "not a number")
            raise ValueError(f"{source}: line {i + 2}: column {name!r} holds {_show(values[i])}, "
                             f"{what}, while {n_num} of its {len(kinds)} values are numbers: "
                             f"fix the value, or {fix}")
        i = _first(kinds, ("number",))
        j = _first(kinds, ("text", "nonfinite"))
        raise ValueError(f"{source}: column {name!r} mixes numbers and text ({n_num} numbers, "
                         f"e.g. {_show(values[i])} on line {i + 2}; {n_other} others, e.g. "
                         f"{_show(values[j])} on line {j + 2}): {fix}, or fix the values")
    if "missing" in kinds:
        i = _first(kinds, ("missing",))
        raise missing_number_error(source, i + 2, name, values[i])
    return "numeric"


def _names(value: str | Sequence[str] | None, what: str) -> list[str]:
    """A list of column names from one name, a sequence of names or None."""
    if value is None:
        return []
    names = [value] if isinstance(value, str) else list(value)
    bad = [v for v in names if not isinstance(v, str)]
    if bad:
        raise TypeError(f"{what} must name columns (strings), got {bad[0]!r}")
    return names


def _check_not_identifier(name: str, values: list[str], source: str) -> None:
    """Refuse an inferred categorical column whose values are distinct in at least half of
    its rows (module docstring)."""
    present = [v.strip() for v in values if v.strip().lower() not in MISSING_MARKERS]
    n = len(values)
    distinct = len(set(present))
    if n >= _ID_ROWS and distinct >= _ID_FRACTION * n:
        raise ValueError(f"{source}: column {name!r} has {distinct} distinct values in {n} rows: "
                         "it looks like an identifier, and one-hot encoding it would add a "
                         "feature per value that fits one row (memorised, not learned). Drop "
                         f"it with drop=[{name!r}], or pass categorical=[{name!r}] to encode it "
                         "anyway")


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
               categorical: str | Sequence[str] | None = None, drop: str | Sequence[str] | None
               = None, encoding: str = "onehot", n_bags: int = 2**13, seed: int = 0,
               spec: Mapping[str, Any] | None = None, require_target: bool = True,
               label_kind: LabelKind = "multiclass",
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
        Columns (a name or a list of names) to encode as categories whatever their values:
        a column of codes that look like numbers, one that mixes numbers and text, an
        identifier to encode anyway. The other columns are typed by the rule of the module
        docstring.
    drop
        Columns (a name or a list of names) to leave out (identifiers, free text).
    encoding
        ``"onehot"`` (a vocabulary learned from this table; values not seen in it share the
        column's "other" indicator) or ``"hash"`` (``n_bags`` indicators per column, CRC32
        with ``seed``; no vocabulary, so unseen values get features too).
    spec
        The spec returned for the training table: the columns, their kinds and the encodings
        are taken from it, and a table with other feature columns is refused.
    require_target
        ``False`` accepts a table without the label column (prediction); ``y`` is then None.
    label_kind
        The kind of target the model fits (its objective's ``label_kind``): ``"binary"`` or
        ``"multiclass"`` read the label column as classes (with the checks of a
        classification target above); ``"regression"`` reads it as real-valued targets --
        float64, each a finite number, never encoded as classes (continuous values and
        values distinct in every row are what such a column holds).

    Returns
    -------
    X : ndarray or CSR matrix of shape (n_rows, n_features)
        Dense float64 when every feature column is numeric, else CSR.
    y : ndarray or None
        float64 when every label is a number (always for ``label_kind="regression"``), else
        strings.
    spec : dict
        ``{"format": "csv", "delimiter", "target", "numeric", "categorical", "drop",
        "encoding", "n_bags", "seed", "vocabularies", "n_features"}`` (JSON-able).

    Raises
    ------
    ValueError
        Naming the file, the line, the column and the fix: a column that mixes numbers and
        other values, a missing value in a numeric or the label column, an identifier-like
        column, a label column that is not a classification target, ... (module docstring).
    """
    if label_kind not in LABEL_KINDS:
        raise ValueError(f"label_kind must be one of {', '.join(map(repr, LABEL_KINDS))}, got "
                         f"{label_kind!r}")
    source = str(path)
    declared = _names(categorical, "categorical")
    dropped = _names(drop, "drop")
    if spec is not None:
        delimiter = delimiter or str(spec.get("delimiter", ","))
        target = target or spec.get("target")
        encoding = str(spec.get("encoding", "onehot"))
        n_bags = int(spec.get("n_bags", n_bags))
        seed = int(spec.get("seed", seed))
        dropped = [str(h) for h in spec.get("drop", [])]
    if encoding not in ("onehot", "hash"):
        raise ValueError(f"encoding must be 'onehot' or 'hash', got {encoding!r}")
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
    if spec is None:
        unknown = [h for h in [*declared, *dropped] if h not in header]
        if unknown:
            hint = (" (the encoding of categorical columns is encoding= / --encoding)"
                    if unknown[0] in ("onehot", "hash") else "")
            raise ValueError(f"{source}: no column named {unknown[0]!r} to "
                             f"{'treat as categorical' if unknown[0] in declared else 'drop'}"
                             f"{hint} (columns: {short_list(header)})")
        if name is not None and name in [*declared, *dropped]:
            raise ValueError(f"{source}: {name!r} is the label column; it cannot be "
                             f"{'categorical' if name in declared else 'dropped'} too")
    columns = {h: [row[j] for row in rows] for j, h in enumerate(header)
               if h not in dropped or h == name}
    regression = label_kind == "regression"
    y = (None if name is None else
         _labels(columns.pop(name), source, name, spec is None, regression=regression))
    if y is not None and spec is None and not regression:
        _check_classes(y, source, str(name))

    if spec is None:
        numeric = [h for h, vals in columns.items()
                   if h not in declared and _column_kind(h, vals, source) == "numeric"]
        cats = [h for h in columns if h not in numeric]
        for h in cats:
            if h not in declared:
                _check_not_identifier(h, columns[h], source)
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
    for h in cats:      # missing markers set no indicator, as an empty cell
        columns[h] = ["" if v.strip().lower() in MISSING_MARKERS else v for v in columns[h]]

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
                           "numeric": numeric, "categorical": cats, "drop": dropped,
                           "encoding": encoding, "n_bags": int(n_bags), "seed": int(seed)}
    if not cats:
        out["n_features"] = len(numeric)
        return dense, y, out
    if encoding == "onehot":
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
