"""Every curvature model at the estimator's defaults, on every real data set: the defaults
matrix ("no silent failure, robust defaults").

For each data set of ``../shared/datasets`` (a9a, w8a, news20, mushrooms, dna, fashion-mnist)
and each curvature model (the default ``"auto"``, ``lbfgs``, ``full_bfgs``, ``newton``,
``newton_cg``, ``truncated_newton``, ``hessian_lbfgs``, ``regularized_bfgs``, ``adagrad``, ``quadratic_bound``,
``identity``) this fits

    SQNClassifier(alpha=1/N, curvature=c, fit_intercept=fi, random_state=0)

with nothing else set, for ``fi`` in (False, True), and records the relative excess
``(F(w) - F*) / F*`` of the training objective (``F*`` from scikit-learn's
``LogisticRegression(C=1)``, the same objective, solved to ``tol=1e-12``, cached in
``bench/.cache``), the training accuracy against the majority class's, the warnings and
errors the fit raised, and its wall time. A cell is *good* when it is within 1e-2 of the
optimum, *warned* when it is not but a warning or error said so, and *silent* otherwise (a
defect). Writes ``bench/results/defaults_matrix.json`` and the table ``docs/defaults_matrix.md``.

    OPENBLAS_NUM_THREADS=1 python bench/defaults_matrix.py [--datasets a9a,w8a] [--curvatures auto,lbfgs]
    python bench/defaults_matrix.py --render-only     # the table again from the record

The record is written after each data set (a long run keeps what it finished) and keeps the
cells of data sets and curvature models an earlier run measured; a cell never measured shows
"not run".
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import logsumexp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
try:
    import sqnopt  # noqa: F401
except ImportError:
    sys.path.insert(0, str(HERE.parent))

from _data import datasets_dir, load_svmlight_xz, read_idx  # noqa: E402

DATASETS = ("a9a", "w8a", "mushrooms", "dna", "fashion-mnist", "news20")
CURVATURES = ("auto", "lbfgs", "full_bfgs", "regularized_bfgs", "newton", "newton_cg",
              "truncated_newton", "hessian_lbfgs", "adagrad", "quadratic_bound", "identity")
GOOD = 1e-2


def load(name: str) -> tuple[Any, np.ndarray]:
    if name == "a9a":
        return load_svmlight_xz("a9a.xz", n_features=123)
    if name == "w8a":
        return load_svmlight_xz("w8a.xz", n_features=300)
    if name == "mushrooms":
        return load_svmlight_xz("mushrooms.xz")
    if name == "dna":
        return load_svmlight_xz("dna.scale.xz")
    if name == "news20":
        return load_svmlight_xz("news20.xz")
    if name == "fashion-mnist":
        d = datasets_dir() / "fashion-mnist"
        X = read_idx(d / "train-images-idx3-ubyte.gz").reshape(60000, -1) / 255.0
        y = read_idx(d / "train-labels-idx1-ubyte.gz").astype(np.int64)
        return np.ascontiguousarray(X), y
    raise ValueError(name)


def objective(coef: np.ndarray, intercept: np.ndarray, X: Any, y: np.ndarray,
              classes: np.ndarray, alpha: float) -> float:
    """L2-logistic (binary) or softmax objective, mean loss plus alpha/2 ||W||^2 (the
    intercept unregularised)."""
    coef = np.atleast_2d(coef)
    S = np.asarray(X @ coef.T) + np.ravel(intercept)
    if coef.shape[0] == 1:
        s = np.where(y == classes[1], 1.0, -1.0)
        return float(np.mean(np.logaddexp(0.0, -s * S[:, 0])) + alpha / 2 * np.sum(coef ** 2))
    idx = np.searchsorted(classes, y)
    return float(np.mean(logsumexp(S, axis=1) - S[np.arange(len(y)), idx])
                 + alpha / 2 * np.sum(coef ** 2))


def optimum(name: str, X: Any, y: np.ndarray, fit_intercept: bool) -> float:
    cache = HERE / ".cache" / f"optimum_{name}_{int(fit_intercept)}.json"
    if cache.exists():
        return float(json.loads(cache.read_text())["F"])
    from sklearn.linear_model import LogisticRegression

    classes = np.unique(y)
    ref = LogisticRegression(C=1.0, tol=1e-12, max_iter=100_000,
                             fit_intercept=fit_intercept).fit(X, y)
    F = objective(ref.coef_, ref.intercept_, X, y, classes, 1.0 / X.shape[0])
    cache.parent.mkdir(exist_ok=True)
    cache.write_text(json.dumps({"F": F, "n_iter": int(np.max(ref.n_iter_))}))
    return F


def run_cell(X: Any, y: np.ndarray, curvature: str, fit_intercept: bool, fstar: float,
             majority: float) -> dict[str, Any]:
    from sqnopt import SQNClassifier

    N = X.shape[0]
    classes = np.unique(y)
    cell: dict[str, Any] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tic = time.perf_counter()
        try:
            clf = SQNClassifier(alpha=1.0 / N, curvature=curvature, fit_intercept=fit_intercept,
                                random_state=0).fit(X, y)
        except Exception as exc:  # noqa: BLE001 - an error is a recorded outcome
            cell.update(error=f"{type(exc).__name__}: {exc}"[:300],
                        seconds=time.perf_counter() - tic)
            return cell
        cell["seconds"] = time.perf_counter() - tic
    F = objective(clf.coef_, clf.intercept_, X, y, classes, 1.0 / N)
    cell.update(rel_excess=(F - fstar) / fstar, accuracy=float(clf.score(X, y)),
                below_majority=bool(clf.score(X, y) < majority), passes=int(clf.n_iter_),
                converged=bool(getattr(clf, "converged_", False)),
                warnings=sorted({f"{w.category.__name__}: {str(w.message)[:160]}"
                                 for w in caught}))
    return cell


def verdict(cell: dict[str, Any]) -> str:
    if "error" in cell:
        return "error"
    ok = cell["rel_excess"] <= GOOD and not cell["below_majority"]
    if ok:
        return "good"
    return "warned" if cell["warnings"] else "SILENT"


def render(record: dict[str, Any]) -> str:
    lines = ["# Every curvature model at the estimator's defaults",
             "",
             "Generated by `python bench/defaults_matrix.py` (do not edit by hand): "
             "`SQNClassifier(alpha=1/N, curvature=c, fit_intercept=fi, random_state=0)` with "
             "nothing else set, L2-logistic regression (softmax for the multiclass sets), "
             f"on {record['machine']}. Each cell: relative excess of the training objective "
             "over the optimum (scikit-learn's `LogisticRegression`, same objective, "
             "`tol=1e-12`), training accuracy, passes, seconds, and the verdict: **good** "
             f"(within {GOOD:g} and not below the majority class), **warned** (not within, "
             "and a warning or error said so), **error** (a clear error), **SILENT** "
             "(a defect).", ""]
    for fi in (False, True):
        lines += [f"## fit_intercept={fi}", "",
                  "| data set | " + " | ".join(record["curvatures"]) + " |",
                  "|---|" + "---|" * len(record["curvatures"])]
        for ds in record["datasets"]:
            info = record["results"][ds]
            row = [f"{ds} (N={info['n_samples']}, majority {info['majority']:.3f})"]
            for c in record["curvatures"]:
                cell = info["cells"].get(f"{c}|{int(fi)}")
                if cell is None:
                    row.append("not run")
                elif "error" in cell:
                    row.append(f"error: {cell['error'][:90]}")
                else:
                    row.append(f"{cell['rel_excess']:.1e}, acc {cell['accuracy']:.3f}, "
                               f"{cell['passes']} p, {cell['seconds']:.1f} s, "
                               f"**{verdict(cell)}**")
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    lines += ["## Warnings raised", ""]
    for ds in record["datasets"]:
        for key, cell in record["results"][ds]["cells"].items():
            for w in cell.get("warnings", []):
                lines.append(f"- {ds}, {key.replace('|', ', fit_intercept=')}: {w}")
    counts: dict[str, int] = {}
    for ds in record["datasets"]:
        for cell in record["results"][ds]["cells"].values():
            counts[verdict(cell)] = counts.get(verdict(cell), 0) + 1
    lines += ["", "Verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), ""]
    return "\n".join(lines)


def _write(record: dict[str, Any], out: Path, doc: Path) -> None:
    """The record and its table, written atomically."""
    from sqnopt._files import write_text_atomic

    record["datasets"] = [d for d in DATASETS if d in record["results"]]
    present = {key.split("|")[0] for info in record["results"].values() for key in info["cells"]}
    record["curvatures"] = [c for c in CURVATURES if c in present or c in record["curvatures"]]
    out.parent.mkdir(exist_ok=True)
    write_text_atomic(out, json.dumps(record, indent=1, default=float) + "\n")
    write_text_atomic(doc, render(record))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--curvatures", default=",".join(CURVATURES))
    ap.add_argument("--intercept", choices=("both", "no", "yes"), default="both")
    ap.add_argument("--out", default=str(HERE / "results" / "defaults_matrix.json"))
    ap.add_argument("--doc", default=str(HERE.parent / "docs" / "defaults_matrix.md"))
    ap.add_argument("--render-only", action="store_true",
                    help="write the table from the record, running nothing")
    args = ap.parse_args(argv)
    from sqnopt import __version__

    intercepts = {"both": (False, True), "no": (False,), "yes": (True,)}[args.intercept]
    record: dict[str, Any] = {
        "machine": f"{platform.processor() or platform.machine()}, {platform.python_version()}",
        "sqnopt": __version__, "datasets": [], "curvatures": args.curvatures.split(","),
        "results": {}}
    out = Path(args.out)
    if out.exists():   # keep cells of other data sets / curvatures from earlier runs
        old = json.loads(out.read_text())
        record["results"] = old.get("results", {})
    requested = args.curvatures.split(",")     # _write widens record["curvatures"] to the table's
    for ds in ([] if args.render_only else args.datasets.split(",")):
        try:
            X, y = load(ds)
        except FileNotFoundError as exc:
            print(f"{ds}: skipped ({exc})")
            continue
        classes, counts = np.unique(y, return_counts=True)
        majority = float(counts.max() / counts.sum())
        info = record["results"].setdefault(ds, {"cells": {}})
        info.update(n_samples=int(X.shape[0]), n_features=int(X.shape[1]),
                    n_classes=int(len(classes)), majority=majority)
        for fi in intercepts:
            fstar = optimum(ds, X, y, fi)
            for c in requested:
                cell = run_cell(X, y, c, fi, fstar, majority)
                cell["fstar"] = fstar
                info["cells"][f"{c}|{int(fi)}"] = cell
                shown = {k: (round(v, 6) if isinstance(v, float) else v) for k, v in cell.items()
                         if k != "warnings"}
                print(f"{ds} fi={fi} {c}: {verdict(cell)} {shown} "
                      f"warnings={[w[:100] for w in cell.get('warnings', [])]}", flush=True)
        _write(record, out, Path(args.doc))     # after each data set: a long run keeps its cells
    _write(record, out, Path(args.doc))
    print(f"wrote {out} and {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
