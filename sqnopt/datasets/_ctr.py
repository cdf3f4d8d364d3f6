"""Click-through-rate (CTR) features as in Mokhtari & Ribeiro, *Global convergence of online
limited memory BFGS* (2015), Sec. 5.1, and a reader for the Criteo display-advertising log.

The paper turns every field of an ad impression into *binary* features:

* small categorical fields (age interval, gender, depth, position, ...) and identifiers
  (advertiser, ad) -> one indicator per value (one-hot);
* words of the query / title / keywords -> "bags of words": every word is hashed into one of
  20,000 bags and the bag's indicator is set (one block of bags per text field);
* unknown values -> all indicators of the field stay 0.

:class:`CTRFeaturizer` does exactly this for named columns: ``numeric`` fields are first cut into
logarithmic bins (``<= 0, [1, 2), [2, 4), ...``, the counterpart of the paper's age intervals),
``categorical`` fields get a learned vocabulary (rare values share an "other" indicator),
``hashed`` fields are hashed like words (no vocabulary, so it streams), and ``text`` fields are
split into words and hashed into bags. Clicked ads are rare, so the paper weights them by ``γ``
(eq. 43); :func:`balancing_gamma` gives the ``γ`` that makes both classes equally heavy and
:func:`click_weights` the per-sample weights.
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Union

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from sqnopt.datasets._io import READ_ERRORS, PathLike, open_binary

Table = Union[Mapping[str, Sequence[Any]], Any]  # a mapping of columns or a pandas DataFrame

CRITEO_NUMERIC: tuple[str, ...] = tuple(f"I{i}" for i in range(1, 14))
CRITEO_CATEGORICAL: tuple[str, ...] = tuple(f"C{i}" for i in range(1, 27))
CRITEO_COLUMNS: tuple[str, ...] = ("label", *CRITEO_NUMERIC, *CRITEO_CATEGORICAL)

__all__ = [
    "CRITEO_CATEGORICAL",
    "CRITEO_COLUMNS",
    "CRITEO_NUMERIC",
    "CTRFeaturizer",
    "balancing_gamma",
    "click_weights",
    "criteo_featurizer",
    "iter_criteo",
    "read_criteo",
]


def _missing(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, str):
        return v.strip() == ""
    if isinstance(v, float):
        return math.isnan(v)
    return False


def _column(table: Table, name: str) -> list[Any]:
    try:
        col = table[name]
    except (KeyError, IndexError, TypeError):
        raise KeyError(f"column {name!r} not found in the table") from None
    if hasattr(col, "tolist"):
        return list(col.tolist())
    return list(col)


def _n_rows(table: Table) -> int:
    if hasattr(table, "shape"):
        return int(table.shape[0])
    lengths = {len(v) for v in table.values()}
    if len(lengths) > 1:
        raise ValueError(f"table columns have different lengths {sorted(lengths)}")
    return lengths.pop() if lengths else 0


class CTRFeaturizer:
    """Binary sparse features from named columns (see the module docstring).

    Parameters
    ----------
    numeric
        Columns of counts / numbers, one-hot encoded by logarithmic bin.
    categorical
        Columns one-hot encoded through a vocabulary learned by :meth:`fit`.
    hashed
        Columns whose values are hashed into ``n_bags`` indicators each (no fit needed).
    text
        Columns of whitespace-separated words, each hashed into ``n_bags`` bags.
    n_bags
        Hash bags per hashed / text field (paper: 20,000).
    numeric_bins
        Bins per numeric field: ``<= 0``, then ``[2^(b-1), 2^b)`` for ``b = 1 ..``, the last bin
        open-ended.
    min_count
        Categorical values seen fewer times in :meth:`fit` share the field's "other" indicator.
    seed
        Salt of the hash function (the same word lands in the same bag in every field, as in
        the paper).
    """

    def __init__(self, *, numeric: Sequence[str] = (), categorical: Sequence[str] = (),
                 hashed: Sequence[str] = (), text: Sequence[str] = (), n_bags: int = 20_000,
                 numeric_bins: int = 24, min_count: int = 1, seed: int = 0) -> None:
        if n_bags < 1 or numeric_bins < 2 or min_count < 1:
            raise ValueError("n_bags >= 1, numeric_bins >= 2 and min_count >= 1 are required")
        names = [*numeric, *categorical, *hashed, *text]
        if len(set(names)) != len(names):
            raise ValueError("a column may appear in only one of numeric/categorical/hashed/text")
        self.numeric = tuple(numeric)
        self.categorical = tuple(categorical)
        self.hashed = tuple(hashed)
        self.text = tuple(text)
        self.n_bags = int(n_bags)
        self.numeric_bins = int(numeric_bins)
        self.min_count = int(min_count)
        self.seed = int(seed)
        self.vocabularies_: dict[str, dict[str, int]] | None = None if categorical else {}

    # ------------------------------------------------------------------ layout
    def _blocks(self) -> list[tuple[str, str, int]]:
        """``(kind, column, width)`` in column order of the output."""
        if self.vocabularies_ is None:
            raise RuntimeError("CTRFeaturizer has categorical columns: call fit() first")
        blocks = [("numeric", c, self.numeric_bins) for c in self.numeric]
        blocks += [("categorical", c, len(self.vocabularies_[c]) + 1) for c in self.categorical]
        blocks += [("hashed", c, self.n_bags) for c in self.hashed]
        blocks += [("text", c, self.n_bags) for c in self.text]
        return blocks

    @property
    def n_features(self) -> int:
        return sum(width for _, _, width in self._blocks())

    def feature_names(self) -> list[str]:
        names: list[str] = []
        for kind, col, width in self._blocks():
            if kind == "numeric":
                names += [f"{col}<=0"] + [f"{col}~2^{b - 1}" for b in range(1, width)]
            elif kind == "categorical":
                assert self.vocabularies_ is not None
                vocab = sorted(self.vocabularies_[col].items(), key=lambda kv: kv[1])
                names += [f"{col}={v}" for v, _ in vocab] + [f"{col}=<other>"]
            else:
                names += [f"{col}#bag{b}" for b in range(width)]
        return names

    # ------------------------------------------------------------------ fit / transform
    def fit(self, table: Table) -> CTRFeaturizer:
        """Learn the vocabularies of the categorical columns."""
        vocab: dict[str, dict[str, int]] = {}
        for col in self.categorical:
            counts = Counter(str(v) for v in _column(table, col) if not _missing(v))
            kept = sorted(v for v, c in counts.items() if c >= self.min_count)
            vocab[col] = {v: i for i, v in enumerate(kept)}
        self.vocabularies_ = vocab
        return self

    def fit_transform(self, table: Table) -> Any:
        return self.fit(table).transform(table)

    def _bag(self, word: str) -> int:
        return zlib.crc32(f"{self.seed}\x1f{word}".encode()) % self.n_bags

    def transform(self, table: Table) -> Any:
        """CSR float64 matrix of 0/1 features, one row per table row."""
        n = _n_rows(table)
        rows: list[NDArray[np.intp]] = []
        cols: list[NDArray[np.intp]] = []
        offset = 0
        for kind, col, width in self._blocks():
            values = _column(table, col)
            if len(values) != n:
                raise ValueError(f"column {col!r} has {len(values)} rows, expected {n}")
            r: list[int] = []
            c: list[int] = []
            if kind == "numeric":
                arr = np.array([np.nan if _missing(v) else _to_float(v, col) for v in values])
                ok = ~np.isnan(arr)
                b = np.zeros(n, dtype=np.intp)
                pos = ok & (arr >= 1)
                b[pos] = np.floor(np.log2(arr[pos])).astype(np.intp) + 1
                b = np.minimum(b, width - 1)
                r_arr = np.flatnonzero(ok)
                rows.append(r_arr)
                cols.append(offset + b[r_arr])
            elif kind == "categorical":
                assert self.vocabularies_ is not None
                vocab = self.vocabularies_[col]
                other = width - 1
                for i, v in enumerate(values):
                    if not _missing(v):
                        r.append(i)
                        c.append(vocab.get(str(v), other))
            elif kind == "hashed":
                for i, v in enumerate(values):
                    if not _missing(v):
                        r.append(i)
                        c.append(self._bag(str(v)))
            else:  # text
                for i, v in enumerate(values):
                    if not _missing(v):
                        for word in str(v).split():
                            r.append(i)
                            c.append(self._bag(word))
            if kind != "numeric":
                rows.append(np.asarray(r, dtype=np.intp))
                cols.append(offset + np.asarray(c, dtype=np.intp))
            offset += width
        rr = np.concatenate(rows) if rows else np.zeros(0, dtype=np.intp)
        cc = np.concatenate(cols) if cols else np.zeros(0, dtype=np.intp)
        X = sp.csr_matrix((np.ones(rr.shape[0]), (rr, cc)), shape=(n, offset))
        X.sum_duplicates()
        X.data[:] = 1.0  # indicators: a word twice in a field is still one bag
        return X


def _to_float(v: Any, col: str) -> float:
    try:
        value = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"numeric column {col!r} holds a non-number {v!r}") from None
    if math.isinf(value):
        raise ValueError(f"numeric column {col!r} holds an infinite value {v!r}")
    return value


def balancing_gamma(y: ArrayLike, positive: Any = 1) -> float:
    """``γ = #negatives / #positives``: with clicked ads weighted by ``γ`` both classes weigh the
    same (Mokhtari & Ribeiro 2015, oLBFGS, Sec. 5.3: ``γ = 18.2`` for 5.2% clicks)."""
    yy = np.asarray(y)
    n_pos = int(np.sum(yy == positive))
    if n_pos == 0:
        raise ValueError("balancing_gamma: no positive (clicked) samples")
    return float((yy.shape[0] - n_pos) / n_pos)


def click_weights(y: ArrayLike, gamma: float | str = "balance", positive: Any = 1
                  ) -> NDArray[np.float64]:
    """Sample weights of eq. (43) of Mokhtari & Ribeiro 2015 (oLBFGS): ``γ`` for clicked ads, 1 for the others
    (``gamma="balance"`` uses :func:`balancing_gamma`)."""
    yy = np.asarray(y)
    g = balancing_gamma(yy, positive) if gamma == "balance" else float(gamma)
    if not (math.isfinite(g) and g > 0):
        raise ValueError(f"gamma must be a positive number or 'balance', got {gamma!r}")
    return np.where(yy == positive, g, 1.0)


# ---------------------------------------------------------------------- Criteo
def criteo_featurizer(n_bags: int = 2**13, numeric_bins: int = 24, seed: int = 0
                      ) -> CTRFeaturizer:
    """Featurizer for the Criteo log: 13 count fields log-binned, 26 categorical fields hashed
    into ``n_bags`` bags each (26 * 8192 + 13 * 24 = 213,304 binary features by default, the
    scale of the paper's 174,026)."""
    return CTRFeaturizer(numeric=CRITEO_NUMERIC, hashed=CRITEO_CATEGORICAL, n_bags=n_bags,
                         numeric_bins=numeric_bins, seed=seed)


def iter_criteo(path: PathLike, chunk_size: int = 100_000, *, n_rows: int | None = None
                ) -> Iterator[tuple[dict[str, list[str]], NDArray[np.float64]]]:
    """Stream a Criteo display-advertising file (tab-separated: label, I1..I13, C1..C26;
    blank = missing; plain or compressed) as ``(table, y)`` chunks."""
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    source = str(path)
    names = CRITEO_COLUMNS[1:]
    numeric = set(CRITEO_NUMERIC)
    lineno = 0
    fh = open_binary(path)
    try:
        table: dict[str, list[str]] = {c: [] for c in names}
        labels: list[float] = []
        seen = 0
        for raw in fh:
            lineno += 1
            if n_rows is not None and seen >= n_rows:
                break
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if not line:
                continue
            parts = line.split("\t")
            if len(parts) != len(CRITEO_COLUMNS):
                raise ValueError(f"{source}: line {lineno} has {len(parts)} tab-separated fields, "
                                 f"expected {len(CRITEO_COLUMNS)} (label, I1..I13, C1..C26)")
            if parts[0].strip() not in ("0", "1"):
                raise ValueError(f"{source}: line {lineno}: label {parts[0][:20]!r} is not "
                                 "0 or 1")
            labels.append(float(parts[0]))
            for name, value in zip(names, parts[1:]):
                if name in numeric and value.strip():
                    try:
                        ok = math.isfinite(float(value))
                    except ValueError:
                        ok = False
                    if not ok:
                        raise ValueError(f"{source}: line {lineno}: the count {name} = "
                                         f"{value[:20]!r} is not a finite number")
                table[name].append(value)
            seen += 1
            if len(labels) >= chunk_size:
                yield table, np.asarray(labels)
                table, labels = {c: [] for c in names}, []
        if labels:
            yield table, np.asarray(labels)
        elif seen == 0:
            raise ValueError(f"{source}: no rows found (an empty file?)")
    except READ_ERRORS as exc:
        raise ValueError(f"{source}: line {lineno + 1}: cannot read the file: corrupt or "
                         f"truncated data ({type(exc).__name__}: {exc})") from None
    finally:
        fh.close()


def read_criteo(path: PathLike, *, n_rows: int | None = None
                ) -> tuple[dict[str, list[str]], NDArray[np.float64]]:
    """Read a whole Criteo file (see :func:`iter_criteo`) as ``(table, y)``."""
    tables = list(iter_criteo(path, chunk_size=2**62, n_rows=n_rows))
    table, y = tables[0]
    return table, y
