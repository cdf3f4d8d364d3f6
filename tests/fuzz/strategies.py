"""Hypothesis strategies of the fuzz suite: inputs, hyperparameters, sparse structures, svmlight
text, model-file bytes and command lines, each mixing valid values with the hostile ones."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import math
from typing import Any

import numpy as np
import scipy.sparse as sp
from hypothesis import strategies as st

# ---------------------------------------------------------------------------- values
SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, -1e-300, 1e300, -1e300, 1e-8, 1e8,
                  math.nan, math.inf, -math.inf, 5e-324]
FINITE = st.one_of(st.floats(-1e3, 1e3, allow_nan=False), st.sampled_from(
    [0.0, 1.0, -1.0, 1e-8, 1e6, -1e6]))


def floats_any() -> st.SearchStrategy[float]:
    return st.one_of(st.sampled_from(SPECIAL_FLOATS), st.floats(allow_nan=True,
                                                                allow_infinity=True))


def hyper_value(default: Any) -> st.SearchStrategy[Any]:
    """A value for a component parameter whose default is ``default``: the default, nearby and
    extreme numbers, wrong types."""
    wrong = st.sampled_from([None, "abc", [1, 2], {"a": 1}, True])
    if isinstance(default, bool):
        return st.one_of(st.booleans(), wrong, st.sampled_from([0, 1, 2, -1]))
    if isinstance(default, int):
        return st.one_of(st.just(default), st.integers(-3, 50), st.sampled_from(
            [0, -1, 10**4, 2**31, 2**63]), st.sampled_from([0.5, math.nan, 1.0]), wrong)
    if isinstance(default, float):
        return st.one_of(st.just(default), st.floats(-10, 10), floats_any(),
                         st.builtins() if False else wrong, st.integers(-2, 5))
    if isinstance(default, str):
        return st.one_of(st.just(default), st.sampled_from(["", "bogus", "auto", "skip", "damp",
                                                            "reset", "raise", "cg", "exact"]),
                         wrong)
    return st.one_of(st.just(default), floats_any(), st.integers(-2, 100), wrong)


# ---------------------------------------------------------------------------- data
DTYPES = [np.float64, np.float32, np.int64, np.int8, np.uint8, np.bool_, np.float16,
          np.complex128, object, "U3"]
FORMATS = ["dense", "csr", "csc", "coo", "lil", "fortran", "list", "csr_array"]


@st.composite
def design(draw: st.DrawFn, *, hostile: bool = True, max_rows: int = 14,
           max_cols: int = 6) -> tuple[Any, Any, Any]:
    """``(X, y, sample_weight)``: X in many formats/dtypes (NaN/inf sometimes), labels of many
    kinds, weights valid or not."""
    n = draw(st.integers(0 if hostile else 2, max_rows))
    d = draw(st.integers(0 if hostile else 1, max_cols))
    values = draw(st.lists(FINITE, min_size=n * d, max_size=n * d))
    X = np.array(values, dtype=np.float64).reshape(n, d)
    X[np.asarray(draw(st.lists(st.booleans(), min_size=n * d, max_size=n * d)),
                 dtype=bool).reshape(n, d)] = 0.0
    if hostile and n * d and draw(st.integers(0, 9)) == 0:
        i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, d - 1))
        X[i, j] = draw(st.sampled_from([math.nan, math.inf, -math.inf, 1e308]))
    dtype = draw(st.sampled_from(DTYPES)) if hostile else draw(st.sampled_from(
        [np.float64, np.float32, np.int64]))
    fmt = draw(st.sampled_from(FORMATS)) if hostile else draw(st.sampled_from(["dense", "csr"]))
    X = _as(X, dtype, fmt)
    y = draw(labels(n, hostile))
    sw = draw(weights(n)) if hostile else draw(st.one_of(st.none(), st.lists(
        st.floats(0.1, 10), min_size=n, max_size=n).map(np.asarray)))
    return X, y, sw


def _as(X: np.ndarray, dtype: Any, fmt: str) -> Any:
    with np.errstate(all="ignore"):
        try:
            Xt = X.astype(dtype)
        except (ValueError, OverflowError):
            Xt = X
    if fmt == "dense":
        return Xt
    if fmt == "fortran":
        return np.asfortranarray(Xt)
    if fmt == "list":
        return Xt.tolist()
    if Xt.dtype.kind in "OU" or Xt.ndim != 2:
        return Xt
    try:
        return {"csr": sp.csr_matrix, "csc": sp.csc_matrix, "coo": sp.coo_matrix,
                "lil": sp.lil_matrix, "csr_array": sp.csr_array}[fmt](Xt)
    except (ValueError, TypeError):
        return Xt


@st.composite
def labels(draw: st.DrawFn, n: int, hostile: bool = True) -> Any:
    kind = draw(st.sampled_from(["pm1", "01", "str", "multi", "float"] + (
        ["single", "nan", "short", "2d", "bool", "none_obj"] if hostile else [])))
    bits = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    if n >= 2 and kind not in ("single",):  # keep two classes present
        bits[0], bits[1] = False, True
    if kind == "pm1":
        return np.where(bits, 1, -1)
    if kind == "01":
        return bits.astype(int)
    if kind == "str":
        return np.where(bits, "spam", "ham")
    if kind == "multi":
        k = draw(st.integers(3, 4))
        y = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
        if n >= k:
            y[:k] = np.arange(k)
        return y
    if kind == "float":
        return np.where(bits, 2.5, -0.5)
    if kind == "single":
        return np.ones(n)
    if kind == "nan":
        y = np.where(bits, 1.0, 0.0)
        if n:
            y[-1] = math.nan
        return y
    if kind == "short":
        return np.where(bits, 1, -1)[: max(n - 1, 0)]
    if kind == "2d":
        return np.where(bits, 1, -1).reshape(-1, 1) if draw(st.booleans()) else \
            np.zeros((n, 2))
    if kind == "bool":
        return bits
    return np.array([None] * n, dtype=object)


@st.composite
def weights(draw: st.DrawFn, n: int) -> Any:
    kind = draw(st.sampled_from(["none", "ok", "zeros_some", "neg", "nan", "len", "scalar",
                                 "all_zero", "str"]))
    if kind == "none":
        return None
    w = np.array(draw(st.lists(st.floats(0.01, 10), min_size=n, max_size=n)))
    if kind == "zeros_some" and n:
        w[0] = 0.0
    elif kind == "neg" and n:
        w[-1] = -1.0
    elif kind == "nan" and n:
        w[0] = math.nan
    elif kind == "len":
        w = np.append(w, 1.0)
    elif kind == "scalar":
        return draw(st.sampled_from([2.0, 0.0, -1.0, math.nan]))
    elif kind == "all_zero":
        w = np.zeros(n)
    elif kind == "str":
        return ["a"] * n
    return w


# ---------------------------------------------------------------------------- hyperparameters
def component(kind: str, names: list[str] | None = None) -> st.SearchStrategy[Any]:
    """A registered component by name, with fuzzed parameters; or garbage."""
    from sqnopt.registry import get_registry

    entries = [e for e in get_registry().entries(kind) if names is None or e.name in names]

    @st.composite
    def one(draw: st.DrawFn) -> Any:
        if draw(st.integers(0, 39)) == 0:
            return draw(st.sampled_from(["nope", "", 3, None, ("lbfgs", "x")]))
        entry = draw(st.sampled_from(entries))
        params = entry.parameters()
        chosen = draw(st.lists(st.sampled_from(sorted(params)), unique=True, max_size=2)) \
            if params else []
        kw = {p: draw(hyper_value(params[p])) for p in chosen}
        if draw(st.integers(0, 29)) == 0:
            kw["bogus_param"] = 1
        return (entry.name, kw) if kw else entry.name
    return one()


# ---------------------------------------------------------------------------- sparse structures
@st.composite
def sparse_structure(draw: st.DrawFn) -> tuple[str, tuple[int, int], dict[str, Any]]:
    """Arrays of a CSR/CSC/COO matrix, mostly almost valid: index values and lengths drawn from
    ranges that straddle the legal ones."""
    fmt = draw(st.sampled_from(["csr", "csc", "coo"]))
    n_rows, n_cols = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    major, minor = (n_rows, n_cols) if fmt != "csc" else (n_cols, n_rows)
    idx_dtype = draw(st.sampled_from([np.int32, np.int64]))
    nnz = draw(st.integers(0, 8))
    index = st.one_of(st.integers(0, minor - 1), st.integers(0, minor - 1),
                      st.integers(-3, minor + 3), st.sampled_from([-2**31, 2**31 - 1, 10**7]))
    data = np.array(draw(st.lists(FINITE, min_size=nnz, max_size=nnz)), dtype=np.float64)
    if fmt == "coo":
        row = draw(st.lists(st.one_of(st.integers(0, n_rows - 1), st.integers(-2, n_rows + 2)),
                            min_size=nnz, max_size=nnz))
        col = draw(st.lists(st.one_of(st.integers(0, n_cols - 1), st.integers(-2, n_cols + 2)),
                            min_size=nnz, max_size=nnz))
        return fmt, (n_rows, n_cols), {"row": np.array(row, dtype=idx_dtype),
                                       "col": np.array(col, dtype=idx_dtype), "data": data}
    indices = np.array(draw(st.lists(index, min_size=nnz, max_size=nnz)), dtype=np.int64)
    indices = indices.clip(np.iinfo(idx_dtype).min, np.iinfo(idx_dtype).max).astype(idx_dtype)
    if draw(st.booleans()):  # a sorted, monotone indptr ending at nnz (often valid)
        cuts = sorted(draw(st.lists(st.integers(0, nnz), min_size=major - 1, max_size=major - 1)))
        indptr = [0, *cuts, nnz]
    else:
        indptr = draw(st.lists(st.integers(-2, nnz + 2), min_size=1, max_size=major + 3))
    if draw(st.integers(0, 5)) == 0 and nnz:
        data = data[:-1]
    return fmt, (n_rows, n_cols), {"indptr": np.array(indptr, dtype=idx_dtype),
                                   "indices": indices, "data": data}


# ---------------------------------------------------------------------------- svmlight text
@st.composite
def svmlight_valid(draw: st.DrawFn) -> tuple[bytes, np.ndarray, np.ndarray, bool]:
    """A well-formed file and the ``(X, y)`` it holds (with its index base)."""
    n = draw(st.integers(1, 8))
    d = draw(st.integers(1, 9))
    zero_based = draw(st.booleans())
    X = np.zeros((n, d))
    y = np.array(draw(st.lists(st.sampled_from([-1.0, 1.0, 0.0, 2.0, 3.5]), min_size=n,
                               max_size=n)))
    lines = []
    if draw(st.booleans()):
        lines.append(b"# a header comment")
    for i in range(n):
        cols = sorted(draw(st.sets(st.integers(0, d - 1), max_size=d)))
        toks = [repr(float(y[i])).encode() if draw(st.booleans()) else f"{y[i]:g}".encode()]
        if draw(st.integers(0, 5)) == 0:
            toks.append(f"qid:{draw(st.integers(0, 9))}".encode())
        for j in cols:
            v = draw(st.floats(-1e6, 1e6, allow_nan=False))
            X[i, j] = v
            toks.append(f"{j + (0 if zero_based else 1)}:{v!r}".encode())
        line = b" ".join(toks)
        if draw(st.integers(0, 4)) == 0:
            line += b" # trailing comment"
        lines.append(line)
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from([b"", b"   ", b"# c", b"\t"])))
    eol = draw(st.sampled_from([b"\n", b"\r\n"]))
    return eol.join(lines) + (eol if draw(st.booleans()) else b""), X, y, zero_based


_TOKENS = [b"nan", b"inf", b"-inf", b"1e400", b"-5", b"0", b"99999999999999999999", b"qid:",
           b"qid", b"::", b":", b"1:", b":1", b"\x00", b"#", b"\xff\xfe", b"1.5:2", b"+3:1",
           b"2147483648:1", b"2147483647:1", b"2000000000:1", b"\t", b"\r", b"1_0:2",
           b"\xe2\x80\x83", b"-0:1", b"0x10:1", b"1:1:1"]


@st.composite
def svmlight_bytes(draw: st.DrawFn) -> tuple[bytes, str]:
    """A file name and bytes: a valid file mutated (tokens replaced, bytes flipped, lines
    dropped or repeated, truncated), maybe compressed and then damaged."""
    text = draw(svmlight_valid())[0]
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["token", "flip", "insert", "delete", "truncate", "dup"]))
        if op == "token" or not text:
            toks = text.split(b" ")
            k = draw(st.integers(0, len(toks) - 1))
            toks[k] = draw(st.sampled_from(_TOKENS))
            text = b" ".join(toks)
        elif op == "flip":
            k = draw(st.integers(0, len(text) - 1))
            text = text[:k] + bytes([text[k] ^ draw(st.integers(1, 255))]) + text[k + 1:]
        elif op == "insert":
            k = draw(st.integers(0, len(text)))
            text = text[:k] + draw(st.binary(max_size=8)) + text[k:]
        elif op == "delete":
            k = draw(st.integers(0, len(text) - 1))
            text = text[:k] + text[k + draw(st.integers(1, 10)):]
        elif op == "truncate":
            text = text[: draw(st.integers(0, len(text)))]
        else:
            lines = text.split(b"\n")
            k = draw(st.integers(0, len(lines) - 1))
            text = b"\n".join(lines[: k + 1] + [lines[k]] + lines[k + 1:])
    compress = draw(st.sampled_from(["", "", "xz", "gz", "bz2"]))
    if compress:
        text = {"xz": lzma.compress, "gz": gzip.compress, "bz2": bz2.compress}[compress](text)
        if draw(st.booleans()) and text:
            k = draw(st.integers(0, len(text) - 1))
            if draw(st.booleans()):
                text = text[:k]
            else:
                text = text[:k] + bytes([text[k] ^ 0xA5]) + text[k + 1:]
    return text, "data.svm" + (f".{compress}" if compress else "")


# ---------------------------------------------------------------------------- model files
def model_bytes_valid(kind: str) -> bytes:
    from sqnopt.model import LinearModel

    rng = np.random.default_rng(0)
    if kind == "binary":
        m = LinearModel(coef=rng.normal(size=(1, 4)), intercept=np.array([0.2]),
                        classes=np.array([-1.0, 1.0]), strategy="binary", loss="logloss",
                        probabilistic=True, info={"x": 1})
    else:
        m = LinearModel(coef=rng.normal(size=(3, 4)), intercept=np.zeros(3),
                        classes=np.array(["a", "b", "c"]), strategy="ovr", loss="hinge",
                        probabilistic=False)
    import os
    import tempfile

    fd, name = tempfile.mkstemp(suffix=".npz")
    os.close(fd)
    try:
        m.save(name)
        with open(name, "rb") as fh:
            return fh.read()
    finally:
        os.unlink(name)


_JSONISH = st.recursive(st.none() | st.booleans() | st.integers(-5, 5) | st.floats() |
                        st.text(max_size=5), lambda c: st.lists(c, max_size=3) |
                        st.dictionaries(st.text(max_size=5), c, max_size=3), max_leaves=6)


@st.composite
def model_bytes(draw: st.DrawFn) -> bytes:
    """A model file damaged at the byte level, or rebuilt with fuzzed arrays and metadata."""
    base = model_bytes_valid(draw(st.sampled_from(["binary", "multi"])))
    how = draw(st.sampled_from(["bytes", "bytes", "arrays"]))
    if how == "bytes":
        raw = bytearray(base)
        for _ in range(draw(st.integers(1, 4))):
            op = draw(st.sampled_from(["flip", "truncate", "insert", "zero"]))
            if op == "flip" and raw:
                k = draw(st.integers(0, len(raw) - 1))
                raw[k] ^= draw(st.integers(1, 255))
            elif op == "truncate":
                raw = raw[: draw(st.integers(0, len(raw)))]
            elif op == "insert":
                k = draw(st.integers(0, len(raw)))
                raw[k:k] = draw(st.binary(max_size=16))
            elif raw:
                k = draw(st.integers(0, len(raw) - 1))
                raw[k:k + 8] = bytes(len(raw[k:k + 8]))
        return bytes(raw)
    meta: dict[str, Any] = {"format": "sqnopt.LinearModel", "version": 1, "strategy": "binary",
                            "loss": "logloss", "probabilistic": True, "info": {}}
    for key in draw(st.lists(st.sampled_from(sorted(meta) + ["extra"]), unique=True,
                             max_size=3)):
        if draw(st.booleans()):
            meta.pop(key, None)
        else:
            meta[key] = draw(_JSONISH)
    k = draw(st.integers(1, 4))
    arrays = {
        "coef": draw(st.sampled_from([np.ones((1, 3)), np.ones((k, 3)), np.ones(3),
                                      np.array([[math.nan, 1.0, 2.0]]), np.ones((1, 0)),
                                      np.array([["a", "b", "c"]]), np.ones((1, 3), np.float32),
                                      np.ones((1, 3), np.int64),
                                      # finite, but scores overflow to inf or to NaN (inf - inf)
                                      np.full((1, 3), 1e308),
                                      np.array([[1e308, -1e308, 1e308]])])),
        "intercept": draw(st.sampled_from([np.zeros(1), np.zeros(k), np.array([math.inf]),
                                           np.zeros((1, 1))])),
        "classes": draw(st.sampled_from([np.array([0, 1]), np.array([1, 1]), np.arange(k + 1),
                                         np.array(["a", "b"]), np.array([math.nan, 1.0]),
                                         np.array([True, False]), np.array([[0, 1]])])),
        "meta": np.array(json.dumps(meta, allow_nan=True)) if draw(st.integers(0, 9)) else
        draw(st.sampled_from([np.ones(2), np.array("[]"), np.array(3)])),
    }
    for key in draw(st.lists(st.sampled_from(sorted(arrays)), unique=True, max_size=1)):
        del arrays[key]
    buf = io.BytesIO()
    np.savez(buf, **arrays) if draw(st.booleans()) else np.savez_compressed(buf, **arrays)
    return buf.getvalue()


# ---------------------------------------------------------------------------- command lines
_DATA = ["ok.svm", "multi.svm", "empty.svm", "huge.svm", "bad.svm", "corrupt.xz", "missing.svm",
         "adir", "m.npz", "/dev/null", "ok.csv", "bad.csv", "ok.tsv", "mixed.csv", "ids.csv",
         "nanlabel.csv", "scale.svm", "ck.npz", "damaged_ck.npz"]
_OUT = ["out.npz", "adir", "/dev/null", "nope/x.npz", "m.npz", "h2.json", "", "/proc/x.npz"]
_NUM = ["0", "1", "-1", "2", "0.5", "nan", "inf", "-inf", "1e9", "abc", "", "3", "1e-3",
        "99999999999999999999"]


def _spec(kind: str) -> st.SearchStrategy[str]:
    from sqnopt.registry import get_registry

    names = [e.name for e in get_registry().entries(kind)]
    params = {e.name: sorted(e.parameters()) for e in get_registry().entries(kind)}

    @st.composite
    def one(draw: st.DrawFn) -> str:
        name = draw(st.sampled_from(names + ["nope", "", ":", "lbfgs:"]))
        keys = params.get(name, []) + ["bogus"]
        items = [f"{draw(st.sampled_from(keys))}={draw(st.sampled_from(_NUM + ['none', 'x']))}"
                 for _ in range(draw(st.integers(0, 2)))]
        return name + (":" + ",".join(items) if items else "")
    return one()


@st.composite
def argv(draw: st.DrawFn) -> list[str]:
    cmd = draw(st.sampled_from(["train", "train", "train", "evaluate", "predict", "plot",
                                "list", "demo", "bogus"]))
    args: list[str] = [cmd]
    if cmd == "train":
        args.append(draw(st.sampled_from(_DATA[:6] + _DATA[6:])))
        args += ["--progress", "never", "--max-epochs",
                 draw(st.sampled_from(["1", "2", "0.5", "0", "-1", "nan", "abc"]))]
        opts = {
            "--model": st.sampled_from(_OUT), "--history": st.sampled_from(_OUT + ["h.json"]),
            "--loss": _spec("objective"), "--curvature": _spec("curvature"),
            "--schedule": _spec("schedule"), "--step": st.one_of(st.just("auto"), _spec("step")),
            "--projection": _spec("projection"), "--alpha": st.sampled_from(_NUM),
            "--tol": st.sampled_from(_NUM + ["none"]), "--seed": st.sampled_from(_NUM),
            "--chunk-size": st.sampled_from(["0", "1", "7", "100", "-3", "x"]),
            "--n-features": st.sampled_from(["1", "6", "10", "0", "3000000000", "x"]),
            "--class-weight": st.sampled_from(["balanced", "1=2", "-1=0,1=0", "x", "1=a",
                                               "none"]),
            "--sampling": st.sampled_from(["uniform", "shuffle", "subset", "weighted", "x"]),
            "--multiclass": st.sampled_from(["auto", "ovr", "multinomial", "x"]),
            "--n-iter-no-change": st.sampled_from(_NUM), "--report-every": st.sampled_from(_NUM),
            "--history-points": st.sampled_from(["1", "5", "0", "x"]),
            "--test": st.sampled_from(_DATA), "--format": st.sampled_from(
                ["auto", "svmlight", "criteo", "csv", "tsv", "x"]),
            "--preset": st.sampled_from(["sqb", "pegasos", "sgd", "adagrad", "lbfgs", "gd",
                                         "sgd:eps0=0.1", "sgd:x=1", "nope", ""]),
            "--target": st.sampled_from(["label", "y", "a", "nope", ""]),
            "--categorical": st.sampled_from(["a", "b", "city", "a,city", "id", "hash", "x",
                                              ""]),
            "--encoding": st.sampled_from(["onehot", "hash", "x"]),
            "--drop": st.sampled_from(["a", "id", "city", "label", "x", "a,b"]),
            "--checkpoint": st.sampled_from(["ck.npz", "new_ck.npz", "adir", "m.npz"]),
            "--resume": st.sampled_from(["ck.npz", "damaged_ck.npz", "m.npz", "missing.npz"]),
            "--checkpoint-every": st.sampled_from(["1", "0.5", "0", "x"]),
        }
        for opt in draw(st.lists(st.sampled_from(sorted(opts)), unique=True, max_size=4)):
            args += [opt, draw(opts[opt])]
        for flag in draw(st.lists(st.sampled_from(["--average", "--no-intercept", "--scale"]),
                                  unique=True, max_size=3)):
            args.append(flag)
    elif cmd in ("evaluate", "predict"):
        args += [draw(st.sampled_from(["m.npz", "corrupt.npz", "missing.npz", "adir", "ok.svm",
                                       "/dev/null"])), draw(st.sampled_from(_DATA))]
        if cmd == "predict":
            if draw(st.booleans()):
                args.append("--proba")
            if draw(st.booleans()):
                args += ["-o", draw(st.sampled_from(_OUT + ["-", "p.txt"]))]
        if draw(st.booleans()):
            args += ["--format", draw(st.sampled_from(["auto", "svmlight", "criteo", "csv"]))]
        if draw(st.booleans()):
            args += ["--n-features", draw(st.sampled_from(["6", "3", "0", "x"]))]
    elif cmd == "plot":
        args += draw(st.lists(st.sampled_from(["h.json", "bad.json", "missing.json", "adir",
                                               "m.npz", "/dev/null", "fz.json", "fz.json"]),
                              max_size=2))
        if draw(st.booleans()):
            args += ["-o", draw(st.sampled_from(_OUT + ["p.png", "p.svg", "p.pdf"]))]
        for flag in draw(st.lists(st.sampled_from(["--linear-x", "--linear-y"]), unique=True)):
            args.append(flag)
        if draw(st.booleans()):
            args += ["--x", draw(st.sampled_from(["samples", "time", "iteration",
                                                  "effective_passes", "x"]))]
    elif cmd == "demo":
        for opt, vals in (("--n-samples", ["50", "0", "-1", "x", "100000"]),
                          ("--n-features", ["3", "0", "100000"]),
                          ("--samples", ["100", "0", "x"]),
                          ("--curvature", ["identity", "lbfgs", "nope"])):
            if draw(st.booleans()):
                args += [opt, draw(st.sampled_from(vals))]
    elif cmd == "list" and draw(st.booleans()):
        args += ["--kind", draw(st.sampled_from(["curvature", "step", "x"]))]
    if draw(st.integers(0, 14)) == 0:
        args.insert(draw(st.integers(1, len(args))), draw(st.sampled_from(
            ["--bogus", "-h", "--", "-o"])))
    return args


@st.composite
def history_json(draw: st.DrawFn) -> bytes:
    """A history file whose columns hold any numbers (NaN, inf, 0, negative, extreme, ragged)."""
    n = draw(st.integers(0, 5))
    value = st.one_of(floats_any(), st.integers(-3, 10**6), st.sampled_from([0, -1, 1e-320]))
    cols = ("iteration", "samples", "effective_passes", "time", "objective")
    runs = []
    for _ in range(draw(st.integers(1, 2))):
        hist = {c: draw(st.lists(value, min_size=n, max_size=n)) for c in cols}
        if draw(st.integers(0, 9)) == 0:
            hist[draw(st.sampled_from(cols))] = draw(st.sampled_from([[], "x", [None], [True]]))
        runs.append({"name": draw(st.sampled_from(["", "class 1", "x" * 80])), "history": hist})
    doc = {"format": "sqnopt.history", "label": draw(st.sampled_from(["a", "", "é\u2603"])),
           "data": draw(st.sampled_from(["d", None, 3])), "runs": runs}
    return json.dumps(doc, allow_nan=True).encode()


# ---------------------------------------------------------------------------- CSV tables
#: Cells a numeric column's values are drawn from (finite numbers, written several ways).
_NUMBER = st.one_of(st.integers(-999, 999).map(str),
                    st.floats(-1e6, 1e6, allow_nan=False).map(repr),
                    st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: f"{v:.3e}"),
                    st.sampled_from(["+2", " 4 ", "0", "-0", "1e300", "5e-324", ".5", "7."]))
#: Words of a text column: none parses as a number or is a missing marker.
_WORDS = ["paris", "rome", "oslo", "lima", "x1", "A-3", "b c", "naïve", "z,z", 'q"q', "Ω"]
#: What a cell of a numeric column may be turned into.
BAD_CELLS = ["abc", "inf", "-inf", "Infinity", "1e400", "-1e400", "1\x00", "\x00", "12abc",
             "two words", "nan", "NaN", "NA", "N/A", "#N/A", "null", "None", "", "  "]
#: Missing markers of sqnopt.datasets.MISSING_MARKERS, written in several cases.
MARKERS = ["", "  ", "NA", "na", "N/A", "#N/A", "nan", "NaN", "null", "NULL", "None"]


@st.composite
def csv_table(draw: st.DrawFn) -> dict[str, Any]:
    """A table (header and rows) whose columns were made with an intent -- numeric with maybe
    a few bad cells, text with maybe a few numbers or missing markers, an identifier, empty --
    and a label column of some kind; plus the options of ``load_table``. The intents are what
    the test's oracle reads."""
    n = draw(st.integers(1, 45))
    n_cols = draw(st.integers(1, 4))
    cols: list[dict[str, Any]] = []
    for j in range(n_cols):
        intent = draw(st.sampled_from(["num"] * 4 + ["num_bad", "text", "text", "text_mixed",
                                                    "text_missing", "id", "empty",
                                                    "inf_words"]))
        if intent.startswith("num"):
            cells = [draw(_NUMBER) for _ in range(n)]
            if intent == "num_bad":
                for _ in range(draw(st.integers(1, 3))):
                    cells[draw(st.integers(0, n - 1))] = draw(st.sampled_from(BAD_CELLS))
        elif intent == "id":
            cells = [f"u{i:05d}" for i in range(n)]
        elif intent == "empty":
            cells = [draw(st.sampled_from(MARKERS)) for _ in range(n)]
        elif intent == "inf_words":
            cells = [draw(st.sampled_from(["Infinity", "-inf", "nan", "paris"])) for _ in range(n)]
        else:
            k = draw(st.integers(1, 4))
            cells = [draw(st.sampled_from(_WORDS[:k])) for _ in range(n)]
            if intent == "text_mixed":
                cells[draw(st.integers(0, n - 1))] = draw(_NUMBER)
            elif intent == "text_missing":
                cells[draw(st.integers(0, n - 1))] = draw(st.sampled_from(MARKERS))
        cols.append({"name": f"c{j}", "intent": intent, "cells": cells})
    label_kind = draw(st.sampled_from(["int"] * 6 + ["str"] * 3 + [
        "float_cont", "missing", "mixed", "nonfinite", "id"]))
    if label_kind == "str":
        labels = [draw(st.sampled_from(["cat", "dog", "eel"])) for _ in range(n)]
    elif label_kind == "float_cont":
        labels = [repr(draw(st.floats(-5, 5, allow_nan=False))) for _ in range(n)]
    elif label_kind == "id":
        labels = [str(i) for i in range(n)]
    else:
        labels = [str(draw(st.integers(0, 2))) for _ in range(n)]
        if label_kind == "missing":
            labels[draw(st.integers(0, n - 1))] = draw(st.sampled_from(MARKERS))
        elif label_kind == "mixed":
            labels[draw(st.integers(0, n - 1))] = draw(st.sampled_from(["cat", "x1"]))
        elif label_kind == "nonfinite":
            labels[draw(st.integers(0, n - 1))] = draw(st.sampled_from(["inf", "-Infinity",
                                                                        "1e400"]))
    label_at = draw(st.integers(0, n_cols))
    names = [c["name"] for c in cols]
    declared = [c for c in names if draw(st.integers(0, 3)) == 0]
    dropped = [c for c in names if c not in declared and draw(st.integers(0, 4)) == 0]
    if draw(st.integers(0, 39)) == 0:
        (declared if draw(st.booleans()) else dropped).append(draw(st.sampled_from(
            ["nope", "hash", "label"])))
    header = names[:label_at] + ["label"] + names[label_at:]
    out = io.StringIO()
    import csv

    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    by_name = {c["name"]: c["cells"] for c in cols} | {"label": labels}
    for i in range(n):
        w.writerow([by_name[h][i] for h in header])
    return {"content": out.getvalue().encode("utf-8"), "columns": cols, "labels": labels,
            "label_kind": label_kind, "header": header, "categorical": declared,
            "drop": dropped, "encoding": draw(st.sampled_from(["onehot", "hash"]))}
