"""The fuzz worker's child process (see ``_worker.py``): runs one case at a time and answers
with a small summary, or the exception the case raised. Run as a script under
``-X faulthandler``; its stdout carries the protocol, so the cases' own output goes elsewhere."""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import shutil
import struct
import sys
import tempfile
import traceback
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp


# ---------------------------------------------------------------------------- API
def _recompute_objective(solver: Any, X: Any, y: Any, sample_weight: Any, res: Any) -> float | None:
    """``F(w)`` of a binary margin objective at the returned iterate, in NumPy (the oracle)."""
    from sqnopt.objectives.reference import hinge_loss, logistic_loss, squared_hinge_loss

    losses = {"logloss": logistic_loss, "squared_hinge": squared_hinge_loss, "hinge": hinge_loss}
    name = getattr(solver.objective, "name", None)
    if name not in losses:
        return None
    Xd = X.toarray() if sp.issparse(X) else np.asarray(X)
    Xd = np.asarray(Xd, dtype=np.float64)
    ya = np.asarray(y).ravel()  # a column vector is accepted, as one label per row
    cls = np.unique(ya)
    yy = np.where(ya == cls[1], 1.0, -1.0)
    c = np.ones(len(yy)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if c.ndim == 0:
        c = np.full(len(yy), float(c))
    w = np.asarray(res.coef, dtype=np.float64).ravel()
    b = float(np.asarray(res.intercept).ravel()[0]) if np.size(res.intercept) else 0.0
    lam = float(solver.objective.lam)
    reg = 0.5 * lam * float(w @ w)
    if solver.fit_intercept == "regularized":
        reg += 0.5 * lam * b * b
    keep = c > 0  # a sample of weight 0 is not part of the objective (even if its row is huge)
    with np.errstate(all="ignore"):
        margins = yy[keep] * (Xd[keep] @ w + b)
        return reg + float(np.sum(c[keep] * losses[name](margins)) / np.sum(c))


def solver_fit(X: Any, y: Any, sample_weight: Any, solver_kw: dict[str, Any]) -> dict[str, Any]:
    from sqnopt import Solver

    solver = Solver(**solver_kw)
    res = solver.fit(X, y, sample_weight)
    return {"fun": float(res.fun), "coef": np.asarray(res.coef), "status": res.status.value,
            "intercept": np.asarray(res.intercept),
            "check": _recompute_objective(solver, X, y, sample_weight, res)}


def estimator(X: Any, y: Any, sample_weight: Any, params: dict[str, Any], X_pred: Any,
              partial: bool) -> dict[str, Any]:
    from sqnopt import SQNClassifier

    clf = SQNClassifier(**params)
    if partial:
        classes = np.unique(np.asarray(y))
        half = max(1, len(y) // 2)
        sw1 = None if sample_weight is None else sample_weight[:half]
        sw2 = None if sample_weight is None else sample_weight[half:]
        clf.partial_fit(X[:half], y[:half], classes=classes, sample_weight=sw1)
        if len(y) > half:
            clf.partial_fit(X[half:], y[half:], sample_weight=sw2)
    else:
        clf.fit(X, y, sample_weight)
    out: dict[str, Any] = {"classes": np.asarray(clf.classes_)}
    if not hasattr(clf, "coef_"):  # partial_fit on all-zero weights: nothing learned yet
        return out
    out["coef"] = np.asarray(clf.coef_)
    out["intercept"] = np.asarray(clf.intercept_)
    out["pred"] = np.asarray(clf.predict(X_pred))
    out["dec"] = np.asarray(clf.decision_function(X_pred))
    if hasattr(clf, "predict_proba"):
        out["proba"] = np.asarray(clf.predict_proba(X_pred))
    Xd = X_pred.toarray() if sp.issparse(X_pred) else np.asarray(X_pred, dtype=np.float64)
    out["dec_check"] = np.asarray(Xd, dtype=np.float64) @ out["coef"].T + out["intercept"]
    return out


# ---------------------------------------------------------------------------- sparse structures
def _structurally_valid(fmt: str, shape: tuple[int, int], arrays: dict[str, Any]) -> bool:
    """An independent, loop-by-loop check of what every consumer needs (the oracle)."""
    n_rows, n_cols = shape
    if fmt == "coo":
        row, col, data = arrays["row"], arrays["col"], arrays["data"]
        return (len(row) == len(col) == len(data)
                and all(0 <= int(r) < n_rows for r in row) and all(0 <= int(c) < n_cols
                                                                     for c in col))
    major, minor = (n_rows, n_cols) if fmt == "csr" else (n_cols, n_rows)
    ptr, ind, data = arrays["indptr"], arrays["indices"], arrays["data"]
    if len(ptr) != major + 1 or len(ind) != len(data) or int(ptr[0]) != 0:
        return False
    if any(int(ptr[i + 1]) < int(ptr[i]) for i in range(major)) or int(ptr[-1]) > len(ind):
        return False
    return all(0 <= int(ind[p]) < minor for p in range(int(ptr[-1])))


def _build(fmt: str, shape: tuple[int, int], arrays: dict[str, Any]) -> Any:
    """A matrix with exactly these arrays, past SciPy's constructor checks."""
    X = {"csr": sp.csr_matrix, "csc": sp.csc_matrix, "coo": sp.coo_matrix}[fmt](shape)
    if fmt == "coo":
        X.coords = (arrays["row"], arrays["col"])
        X.data = arrays["data"]
    else:
        X.indptr, X.indices, X.data = arrays["indptr"], arrays["indices"], arrays["data"]
    return X


def sparse_entry(fmt: str, shape: tuple[int, int], arrays: dict[str, Any], entry: str,
                 y: Any) -> dict[str, Any]:
    valid = _structurally_valid(fmt, shape, arrays)
    X = _build(fmt, shape, arrays)
    out: dict[str, Any] = {"valid": valid}
    if entry == "check_matrix":
        from sqnopt.data import check_matrix

        Xc = check_matrix(X)
        out["dense"] = Xc.toarray()
    elif entry == "solver":
        from sqnopt import Solver

        out["fun"] = float(Solver(max_epochs=1, random_state=0).fit(X, y).fun)
    elif entry in ("predict", "predict_proba", "model"):
        from sqnopt import SQNClassifier

        clf = SQNClassifier(max_iter=1, random_state=0, tol=None).fit(
            np.eye(2, shape[1]), [0, 1])
        if entry == "predict":
            out["pred"] = clf.predict(X)
        elif entry == "predict_proba":
            out["pred"] = clf.predict_proba(X)
        else:
            out["pred"] = clf.to_model().decision_function(X)
    elif entry == "estimator_fit":
        from sqnopt import SQNClassifier

        out["pred"] = SQNClassifier(max_iter=1, random_state=0, tol=None).fit(X, y).predict(X)
    elif entry == "csr_rows":
        from sqnopt.data import CSRRows64

        rows = CSRRows64(np.ascontiguousarray(arrays["data"], dtype=np.float64),
                         np.ascontiguousarray(arrays["indices"], dtype=np.int32),
                         np.ascontiguousarray(arrays["indptr"], dtype=np.intp), shape[1],
                         np.ones(shape[0]), np.ones(shape[0]), np.ones(shape[0]), False)
        out["dots"] = [rows.dot(i, np.ones(shape[1])) for i in range(shape[0])]
    else:
        raise AssertionError(entry)
    return out


# ---------------------------------------------------------------------------- files
def _outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "ok", fn()
    except (ValueError, TypeError, FileNotFoundError, IsADirectoryError) as exc:
        return type(exc).__name__, str(exc)


def svmlight(content: bytes, name: str, n_features: int | None, zero_based: Any,
             chunk: int) -> dict[str, Any]:
    from sqnopt.datasets import _io

    d = Path(tempfile.mkdtemp(prefix="fuzz-svm-"))
    try:
        path = d / name
        path.write_bytes(content)
        out: dict[str, Any] = {"path": str(path)}
        real = _io._engine
        for parser in ("compiled", "python"):
            _io._engine = real if parser == "compiled" else (lambda: None)
            try:
                out[parser] = {
                    "load": _outcome(lambda: _dense(_io.load_svmlight(
                        path, n_features=n_features, zero_based=zero_based))),
                    "load_one_based": _outcome(lambda: _dense(_io.load_svmlight(
                        path, zero_based=False))),
                    "scan": _outcome(lambda: _io.scan_svmlight(path)),
                    "chunks": _outcome(lambda: [_dense(c) for c in _io.iter_svmlight_chunks(
                        path, chunk)]),
                }
            finally:
                _io._engine = real
        return out
    finally:
        shutil.rmtree(d)


def _dense(Xy: tuple[Any, Any]) -> tuple[Any, Any]:
    X, y = Xy
    assert sp.issparse(X)
    if X.shape[0] * X.shape[1] > 10**6:  # a wide result: summarise instead
        return ("wide", X.shape, X.nnz, float(abs(X).sum()), np.asarray(y))
    return X.toarray(), np.asarray(y)


def model_file(content: bytes) -> dict[str, Any]:
    from sqnopt.model import LinearModel

    d = Path(tempfile.mkdtemp(prefix="fuzz-model-"))
    try:
        path = d / "m.npz"
        path.write_bytes(content)
        model = LinearModel.load(path)
        X = np.random.default_rng(0).normal(size=(5, model.n_features))
        out = {"path": str(path), "coef": model.coef, "intercept": model.intercept,
               "scores": model.decision_function(X), "pred": model.predict(X),
               "classes": model.classes}
        if model.probabilistic:
            out["proba"] = model.predict_proba(X)
        return out
    finally:
        shutil.rmtree(d)


# ---------------------------------------------------------------------------- CLI
_TEMPLATE: Path | None = None


def _template() -> Path:
    """Files the fuzzed command lines point at (made once per child)."""
    global _TEMPLATE
    if _TEMPLATE is not None:
        return _TEMPLATE
    from sqnopt.model import LinearModel

    d = Path(tempfile.mkdtemp(prefix="fuzz-cli-template-"))
    rng = np.random.default_rng(0)
    lines = []
    for i in range(40):
        feats = sorted(rng.choice(np.arange(1, 7), size=3, replace=False))
        lines.append(f"{(-1, 1)[i % 2]} " + " ".join(f"{j}:{rng.normal():.3f}" for j in feats))
    (d / "ok.svm").write_text("\n".join(lines) + "\n")
    (d / "multi.svm").write_text("\n".join(f"{i % 3} {1 + i % 4}:1 5:{i / 10}"
                                           for i in range(30)) + "\n")
    (d / "empty.svm").write_text("")
    (d / "huge.svm").write_text("1 1:1\n-1 2000000000:1\n")
    (d / "bad.svm").write_text("1 1:1\nspam 2:3\n")
    (d / "ok.csv").write_text("a,b,city,label\n" + "".join(
        f"{rng.normal():.3f},{rng.integers(0, 9)},{'xyz'[i % 3]},{'ny'[i % 2]}\n"
        for i in range(40)))
    (d / "bad.csv").write_text("a,label\n1,0\n,1\nx,0,3\n")
    (d / "ok.tsv").write_text("x\ty\n" + "".join(f"{i / 7:.3f}\t{i % 2}\n" for i in range(20)))
    import lzma

    good = lzma.compress((d / "ok.svm").read_bytes())
    (d / "corrupt.xz").write_bytes(good[: len(good) // 2] + bytes(16))
    LinearModel(coef=rng.normal(size=(1, 6)), intercept=np.zeros(1),
                classes=np.array([-1.0, 1.0]), strategy="binary", loss="logloss",
                probabilistic=True, info={"features": {"format": "svmlight", "n_features": 6}}
                ).save(d / "m.npz")
    (d / "corrupt.npz").write_bytes((d / "m.npz").read_bytes()[:100])
    (d / "h.json").write_text('{"format": "sqnopt.history", "label": "x", "runs": [{"name": "", '
                              '"history": {"iteration": [0, 5], "samples": [0, 25], '
                              '"effective_passes": [0, 0.6], "time": [0, 0.01], '
                              '"objective": [0.69, 0.5]}}]}')
    (d / "bad.json").write_text("{not json")
    (d / "adir").mkdir()
    import atexit

    atexit.register(shutil.rmtree, d, True)
    _TEMPLATE = d
    return d


def cli(argv: list[str], files: dict[str, bytes] | None = None) -> dict[str, Any]:
    from sqnopt.cli import main

    work = Path(tempfile.mkdtemp(prefix="fuzz-cli-"))
    shutil.rmtree(work)
    shutil.copytree(_template(), work)
    for name, content in (files or {}).items():
        (work / name).write_bytes(content)
    old = os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    os.chdir(work)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse usage errors and --help
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        written = {}
        for p in work.iterdir():
            if p.is_file() and p.name not in (files or {}) and (
                    not (_template() / p.name).exists()
                    or p.read_bytes() != (_template() / p.name).read_bytes()):
                written[p.name] = p.read_bytes()[:200_000]
        return {"code": code, "out": out.getvalue()[-5000:], "err": err.getvalue()[-5000:],
                "written": written}
    finally:
        os.chdir(old)
        shutil.rmtree(work, ignore_errors=True)


# ---------------------------------------------------------------------------- threads
def threads(kind: str, n_threads: int) -> dict[str, Any]:
    """``n_threads`` fits at once on different problems vs the same fits one by one."""
    import threading

    from sqnopt import SQNClassifier, Solver

    rng = np.random.default_rng(0)
    problems = []
    for k in range(n_threads):
        X = rng.normal(size=(200, 8))
        y = np.where(X @ rng.normal(size=8) + 0.3 * rng.normal(size=200) > 0, 1, -1)
        problems.append((sp.csr_matrix(X) if k % 2 else X, y))

    def fit(k: int) -> np.ndarray:
        X, y = problems[k]
        if kind == "solver":
            return np.asarray(Solver("squared_hinge", "lbfgs", max_epochs=3,
                                     random_state=k).fit(X, y).coef)
        return np.asarray(SQNClassifier(curvature="lbfgs", max_iter=3, tol=None,
                                        random_state=k).fit(X, y).coef_)

    serial = [fit(k) for k in range(n_threads)]
    results: list[Any] = [None] * n_threads
    barrier = threading.Barrier(n_threads)

    def run(k: int) -> None:
        barrier.wait()
        results[k] = fit(k)

    ts = [threading.Thread(target=run, args=(k,)) for k in range(n_threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return {"same": all(np.array_equal(a, b) for a, b in zip(serial, results))}


CASES: dict[str, Callable[..., Any]] = {
    "solver_fit": solver_fit, "estimator": estimator, "sparse_entry": sparse_entry,
    "svmlight": svmlight, "model_file": model_file, "cli": cli, "threads": threads,
}


def serve() -> None:
    proto_in = sys.stdin.buffer
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # stray output must not corrupt the protocol
    while True:
        header = proto_in.read(8)
        if len(header) < 8:
            return
        case, kwargs = pickle.loads(proto_in.read(struct.unpack("<Q", header)[0]))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = CASES[case](**kwargs)
                if isinstance(result, dict):
                    result["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
                reply: tuple[Any, ...] = ("ok", result)
            except Exception as exc:  # reported to the parent, which judges it
                mro = tuple(c.__name__ for c in type(exc).__mro__)
                reply = ("raised", type(exc).__name__, mro, str(exc),
                         traceback.format_exc()[-3000:])
        data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        proto_out.write(struct.pack("<Q", len(data)) + data)
        proto_out.flush()


if __name__ == "__main__":
    serve()
