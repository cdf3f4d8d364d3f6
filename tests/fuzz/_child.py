"""The fuzz worker's child process (see ``_worker.py``): runs one case at a time and answers
with a small summary, or the exception the case raised. Run as a script under
``-X faulthandler``; its stdout carries the protocol, so the cases' own output goes elsewhere."""

from __future__ import annotations

import contextlib
import io
import math
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
    mixed = [f"{rng.normal():.3f},{i % 5},{'xyz'[i % 3]},{'ny'[i % 2]}" for i in range(40)]
    mixed[7] = "abc,1,x,y"                                  # one bad value: an error, not a
    (d / "mixed.csv").write_text("a,b,city,label\n" + "\n".join(mixed) + "\n")  # category
    (d / "ids.csv").write_text("id,a,label\n" + "".join(
        f"u{i:04d},{rng.normal():.3f},{i % 2}\n" for i in range(40)))
    (d / "nanlabel.csv").write_text("a,label\n" + "".join(
        f"{rng.normal():.3f},{'nan' if i == 5 else i % 2}\n" for i in range(30)))
    (d / "scale.svm").write_text("".join(f"{(-1, 1)[i % 2]} 1:{rng.normal() * 1e300:.3e} "
                                          f"2:{rng.normal():.3f}\n" for i in range(30)))
    import lzma

    good = lzma.compress((d / "ok.svm").read_bytes())
    (d / "corrupt.xz").write_bytes(good[: len(good) // 2] + bytes(16))
    LinearModel(coef=rng.normal(size=(1, 6)), intercept=np.zeros(1),
                classes=np.array([-1.0, 1.0]), strategy="binary", loss="logloss",
                probabilistic=True, info={"features": {"format": "svmlight", "n_features": 6}}
                ).save(d / "m.npz")
    (d / "corrupt.npz").write_bytes((d / "m.npz").read_bytes()[:100])
    _training_checkpoints(d)
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


def _training_checkpoints(d: Path) -> None:
    """``ck.npz``: a checkpoint of ``sqnopt train ok.svm`` (its defaults), and
    ``damaged_ck.npz``: the same with its sampler's permutation out of range and a NaN
    iterate (a valid container)."""
    from sqnopt.checkpoint import Checkpoint
    from sqnopt.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        old = os.getcwd()
        os.chdir(d)
        try:
            main(["train", "ok.svm", "--progress", "never", "--max-epochs", "2", "--checkpoint",
                  "ck.npz", "--model", "ck_model.npz", "--history", "ck_history.json"])
        finally:
            os.chdir(old)
    ck = Checkpoint.load(d / "ck.npz")
    for rec in ck.state["subs"]:
        st = rec.get("solver", {}).get("state", {})
        if "sampler" in st and "perm" in st["sampler"]["state"]:
            st["sampler"]["state"]["perm"] = st["sampler"]["state"]["perm"] + 10**9
        if "w" in st:
            st["w"] = np.full_like(st["w"], np.nan)
    ck.save(d / "damaged_ck.npz")
    for name in ("ck_model.npz", "ck_history.json"):
        (d / name).unlink(missing_ok=True)


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


# ---------------------------------------------------------------------------- checkpoints
#: Settings under which a component's state becomes non-trivial within a few dozen iterations
#: (as tests/solver/test_resume.py's).
_STRESS: dict[tuple[str, str], dict[str, Any]] = {
    ("curvature", "lbfgs"): {"memory": 3}, ("curvature", "regularized_bfgs"):
    {"method": "eig", "refresh_every": 4}, ("gradient", "svrg"): {"period": 40},
    ("projection", "l1ball"): {"radius": 0.3}, ("projection", "eg_pm"): {"radius": 2.0},
    ("schedule", "linear"): {"b1": 2, "gamma": 4.0},
    ("schedule", "geometric"): {"b1": 2, "rate": 1.2}, ("objective", "loglinear"):
    {"n_outputs": 3},
}


def _ckpt_data(objective: Any, sparse: bool) -> tuple[Any, Any]:
    from sqnopt import LogLinear

    rng = np.random.default_rng(0)
    n = 90
    if isinstance(objective, LogLinear):
        X = rng.normal(size=(n, 12))
        y = np.argmax(X.reshape(n, 3, 4).sum(axis=2) + rng.normal(size=(n, 3)), axis=1)
    elif objective.label_kind == "multiclass":
        y = np.arange(n) % 3
        X = rng.normal(size=(3, 6))[y] + rng.normal(size=(n, 6))
    elif objective.label_kind == "regression":  # targets >= 0: every regression loss's domain
        y = np.where(np.arange(n) % 2, 2.5, 0.5)
        X = rng.normal(size=(n, 6)) + 0.8 * (y[:, None] - 1.5)
    else:
        y = np.where(np.arange(n) % 2, 1.0, -1.0)
        X = rng.normal(size=(n, 6)) + 0.8 * y[:, None]
    if sparse:
        X = sp.csr_matrix(X * (rng.random(X.shape) < 0.6))
    return X, y.astype(float)


def _ckpt_solver(kind: str, name: str) -> tuple[Callable[[], Any], Any]:
    """A zero-argument factory of a Solver exercising the registered component ``kind`` /
    ``name`` (the construction of tests/solver/test_resume.py's ``solver_factory``)."""
    from sqnopt import Armijo, Constant, Decaying, Fixed, LogLoss, Solver, SquaredHinge
    from sqnopt.registry import get_registry

    reg = get_registry()
    comp = reg.create(kind, name, **_STRESS.get((kind, name), {}))  # type: ignore[arg-type]
    parts: dict[str, Any] = {"curvature": "identity", "schedule": Fixed(5), "projection": None,
                             "gradient": "minibatch"}
    parts[kind] = comp
    if kind == "objective":
        objective = comp
    else:
        objective = LogLoss(lam=1e-3)
        for cap in sorted(comp.requires - objective.capabilities):
            alt = objective.with_capability(cap)
            if alt is None:
                break
            objective = alt
        if not comp.requires <= objective.capabilities:
            for e in reg.entries("objective"):
                cand = reg.create("objective", e.name, lam=1e-3)
                if comp.requires <= cand.capabilities and cand.label_kind == "binary":
                    objective = cand
                    break
        if kind == "step" and name == "pegasos":
            objective = SquaredHinge(lam=1e-2)
    steps = [parts.pop("step")] if kind == "step" else [Decaying(0.05, 20), Constant(0.05),
                                                          Armijo()]
    parts.pop("objective", None)
    kw = {"random_state": 3, "report_every": 4, "history_every": 5}
    for step in steps:
        try:
            Solver(objective, step=step, **parts, **kw)
        except ValueError:
            continue
        return (lambda: Solver(objective, step=step, **parts, **kw)), objective
    raise ValueError(f"no step rule works with {kind} {name}")


def _leaves(node: Any, path: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    if isinstance(node, dict):
        for k in sorted(node):
            out += _leaves(node[k], f"{path}.{k}" if path else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _leaves(v, f"{path}.{i}")
    else:
        out.append((path, node))
    return out


def _put(tree: Any, path: str, value: Any) -> None:
    *head, last = path.split(".")
    node = tree
    for key in head:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


def _kind_of(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return {"f": "float_array", "i": "int_array", "u": "int_array", "b": "bool_array",
                "U": "str_array"}.get(value.dtype.kind, "other_array")
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    return type(value).__name__


def _mutated(value: Any, op: str, arg: int, n: int, leaves: list[tuple[str, Any]]) -> Any:
    """``value`` changed by ``op`` (None: the operation does not apply to it)."""
    arr = value if isinstance(value, np.ndarray) else None
    if op in ("none", "string", "list", "dict"):
        return {"none": None, "string": "x", "list": [1, 2], "dict": {}}[op]
    if op == "swap":
        same = [v for _, v in leaves if isinstance(v, np.ndarray) and arr is not None
                and v is not arr and v.shape == arr.shape and v.dtype == arr.dtype]
        return same[arg % len(same)].copy() if same else None
    if isinstance(value, bool):
        return (not value) if op == "flip" else None
    if arr is not None and arr.dtype.kind in "fiub":
        if op == "drop":
            return arr[..., :-1] if arr.ndim and arr.size else None
        if op == "append":
            return np.concatenate([arr.reshape(-1), arr.reshape(-1)[:1]]) if arr.size else None
        if op == "reshape2d":
            return arr.reshape(1, -1) if arr.ndim == 1 else arr.reshape(-1)
        if op == "to_float":
            return arr.astype(np.float64) + 0.5
        if op == "to_int":
            return np.nan_to_num(arr, posinf=0, neginf=0).astype(np.int64)
        if op == "to_str":
            return arr.astype(str)
        if not arr.size:
            return None
        out = arr.copy()
        j = arg % out.size
        if op == "dup" and out.size > 1:
            out.flat[j] = out.flat[(j + 1) % out.size]
            return out
        vals = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "huge": 1e300,
                "tiny": 5e-324, "zero": 0, "neg": -1, "neg5": -5, "big": n + 10**6 + arg,
                "i63": 2**63 - 1}
        if op not in vals:
            return None
        v = vals[op]
        if out.dtype.kind in "iub" and isinstance(v, float) and not v.is_integer():
            return None
        try:
            out.flat[j] = v
        except (OverflowError, ValueError):
            return None
        return out
    if isinstance(value, (int, float)):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "huge": 1e300,
                "tiny": 5e-324, "zero": type(value)(0), "neg": -1, "neg5": -5,
                "big": n + 10**6 + arg,
                "i63": 2**63, "i64": 2**64, "to_float": float(value) + 0.5,
                "to_int": int(value) if math.isfinite(value) else 0}.get(op)
    return None


def checkpoint_case(kind: str, name: str, sparse: bool, k: int, m: int,
                    mutations: list[tuple[int, str, int]], via: str, trainer: bool
                    ) -> dict[str, Any]:
    """Checkpoint a solve (or a Trainer fit) of the component ``kind``/``name`` after ``k``
    iterations, change its values (``mutations``: leaf pick, operation, argument), write it to
    a file and read it back (``via="file"``: the container stays valid), restore it on the
    same data and run ``m`` more iterations. Returns what was changed and how the run ended;
    errors propagate (the parent judges them)."""
    from sqnopt.checkpoint import Checkpoint

    make, objective = _ckpt_solver(kind, name)
    X, y = _ckpt_data(objective, sparse)
    n = X.shape[0]
    if trainer:
        from sqnopt.training import Trainer

        loss = "logloss" if objective.label_kind == "binary" else "softmax"
        curv = name if kind == "curvature" else "lbfgs"

        def make_trainer() -> Any:
            return Trainer(loss, curvature=curv, random_state=3, max_epochs=3, tol=1e-9)
        cks: list[Any] = []
        try:
            make_trainer().fit(X, y, checkpoint=cks.append, checkpoint_every=0.5)
        except ValueError:          # a curvature model the Trainer does not take for this loss
            make_trainer = lambda: Trainer("logloss", curvature="lbfgs",  # noqa: E731
                                           random_state=3, max_epochs=3, tol=1e-9)
            make_trainer().fit(X, y, checkpoint=cks.append, checkpoint_every=0.5)
        ck = cks[k % len(cks)]
    else:
        s = make()
        st = s.init_state(X, y)
        if k:
            s.run(st, max_iter=k)
        ck = st.checkpoint()
    state = ck.state
    leaves = [(p, v) for p, v in _leaves(state) if not isinstance(v, str)]
    kinds = {p: _kind_of(v) for p, v in leaves}     # each field's kind before any change
    changed: list[tuple[str, str, str]] = []
    for pick, op, arg in mutations:
        if not leaves:
            break
        path, value = leaves[pick % len(leaves)]
        new = _mutated(value, op, arg, n, leaves)
        if new is None:
            continue
        _put(state, path, new)
        # the last change of a field is the one that counts (the oracle judges each field)
        changed = [c for c in changed if c[0] != path] + [
            (path, op, kinds.get(path, _kind_of(value)))]
        leaves = [(p, v) for p, v in _leaves(state) if not isinstance(v, str)]
    out: dict[str, Any] = {"changed": changed, "n": n}
    d = Path(tempfile.mkdtemp(prefix="fuzz-ckpt-"))
    try:
        if via == "file":
            path = d / "ck.npz"
            ck.save(path)                       # a valid container with the changed values
            ck = Checkpoint.load(path)
        if trainer:
            fitted = make_trainer()
            fitted.fit(X, y, resume=ck)
            w = np.concatenate([np.ravel(r.w) for r in fitted.results_])
            out.update(status=[r.status.value for r in fitted.results_], w=w)
        else:
            s2 = make()
            restored = s2.restore(ck, X, y)
            res = s2.run(restored, max_iter=m)
            out.update(status=[res.status.value], w=np.asarray(res.w), fun=float(res.fun))
        return out
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------------------- CSV typing
def csv_table(content: bytes, target: str | None, categorical: list[str], drop: list[str],
              encoding: str) -> dict[str, Any]:
    """``load_table`` on a generated table (its outcome is judged by the parent's oracle)."""
    from sqnopt.datasets import load_table

    d = Path(tempfile.mkdtemp(prefix="fuzz-csv-"))
    try:
        path = d / "t.csv"
        path.write_bytes(content)
        X, y, spec = load_table(path, target=target, categorical=categorical, drop=drop,
                                encoding=encoding)
        Xd = X.toarray() if sp.issparse(X) else np.asarray(X)
        return {"path": str(path), "shape": Xd.shape, "numeric_block": Xd[:, :len(spec["numeric"])],
                "finite": bool(np.all(np.isfinite(Xd))), "y": np.asarray(y), "spec": spec,
                "row_sums": Xd[:, len(spec["numeric"]):].sum(axis=1)}
    finally:
        shutil.rmtree(d, ignore_errors=True)


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
    "checkpoint": checkpoint_case, "csv_table": csv_table,
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
