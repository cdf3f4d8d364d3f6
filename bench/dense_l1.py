"""L1 on dense data: ``SQNRegressor(penalty="l1")`` against scikit-learn's ``Lasso`` and
``SQNClassifier(penalty="l1")`` against ``LogisticRegression(penalty="l1",
solver="liblinear")``, at the defaults and to targets of the objective.

    python bench/dense_l1.py
    python bench/dense_l1.py --rounds 3 --record bench/results/dense_l1/dense_l1.json
    python bench/dense_l1.py --table bench/results/dense_l1/dense_l1.json

newGLMNET's coordinate descent reads ``X`` by columns. Dense ``X`` is read column after
column in Fortran order (no row indices; one copy unless it is already so stored), and the
exact model -- formed from the rows at every outer iteration, one multiply-add per pair of a
row's entries -- only where forming it costs at most ``FORM_PASSES`` sweeps
(``sqnopt.composite._solve``): on dense rows of many features forming it costs ``n / 2``
sweeps where coordinate descent needs a few. Run this script on an older checkout
(``PYTHONPATH`` at its built tree) to see what those two rules changed.

Problems (scikit-learn's generators, fixed seeds): ``lasso 20000x200`` and ``lasso
5000x1000`` (``make_regression``, 30 / 50 informative features, noise 5, the target
standardised; ``fit_intercept=True``, which ``Lasso`` fits exactly by centring) at ``alpha``
0.01 and 0.001; ``l1-logistic 20000x200`` and ``l1-logistic 5000x1000``
(``make_classification``, 40 informative features) at ``C = 1`` (``alpha = 1/N``) without an
intercept (liblinear penalises its own: the objectives would differ).

For each contender: the fit at its defaults (its own ``tol``), timed after ``gc.collect()``,
best of ``--rounds``, with its relative excess ``(F - F*) / |F*|`` (``F*``: the lowest of
sqnopt at ``tol=1e-10`` and the peer at ``tol=1e-8``, at most 1000 iterations); and budgets
of ``max_iter`` swept upwards (sqnopt: outer iterations with ``tol=None``; scikit-learn:
iterations with ``tol=1e-14`` so that ``max_iter`` binds) until the excess is below 1e-4 and
1e-6, a sweep ending when one fit takes more than ``--cap`` seconds. ``--record`` writes a
compact JSON record (kB); ``--table RECORD`` prints its Markdown table.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
try:
    import sqnopt  # noqa: F401
except ImportError:         # run from a checkout built in place
    sys.path.insert(0, str(HERE.parent))

TARGETS = (1e-4, 1e-6)
BUDGETS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 65, 80, 100, 130, 160, 200,
           260, 330, 420, 530, 670, 850, 1000)


def problems() -> dict[str, dict[str, Any]]:
    from sklearn.datasets import make_classification, make_regression

    out: dict[str, dict[str, Any]] = {}
    for n, p, k in ((20000, 200, 30), (5000, 1000, 50)):
        X, y = make_regression(n, p, n_informative=k, noise=5.0, random_state=0)
        y = (y - y.mean()) / y.std()
        for alpha in (0.01, 0.001):
            out[f"lasso {n}x{p} alpha={alpha:g}"] = dict(kind="lasso", X=X, y=y, alpha=alpha)
    for n, p in ((20000, 200), (5000, 1000)):
        X, y = make_classification(n, p, n_informative=40, random_state=0)
        out[f"l1-logistic {n}x{p} C=1"] = dict(kind="logistic", X=X, y=y, alpha=1.0 / n)
    return out


def objective(kind: str, X: Any, y: Any, alpha: float, coef: Any, intercept: Any) -> float:
    """The solvers' common objective: ``(1/N) sum_i loss_i + alpha ||w||_1`` (squared error
    halved, as ``Lasso``'s; liblinear's ``C sum loss + ||w||_1`` divided by ``C N``)."""
    s = X @ np.ravel(coef) + float(np.ravel(intercept)[0] if np.size(intercept) else 0.0)
    if kind == "lasso":
        data = 0.5 * float(np.mean((y - s) ** 2))
    else:
        m = np.where(y > 0, s, -s)
        data = float(np.mean(np.logaddexp(0.0, -m)))
    return data + alpha * float(np.abs(coef).sum())


def _timed(make: Callable[[], Any], X: Any, y: Any, rounds: int) -> tuple[Any, float]:
    best, est = float("inf"), None
    for _ in range(rounds):
        est = make()
        gc.collect()
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        best = min(best, time.perf_counter() - t0)
    return est, best


def run(name: str, p: dict[str, Any], rounds: int, cap: float) -> dict[str, Any]:
    from sklearn.linear_model import Lasso, LogisticRegression

    from sqnopt import SQNClassifier, SQNRegressor

    kind, X, y, alpha = p["kind"], p["X"], p["y"], p["alpha"]
    N = X.shape[0]

    def ours(**kw: Any) -> Any:
        if kind == "lasso":
            return SQNRegressor(penalty="l1", alpha=alpha, **kw)
        return SQNClassifier(penalty="l1", alpha=alpha, fit_intercept=False, **kw)

    def peer(**kw: Any) -> Any:
        if kind == "lasso":
            return Lasso(alpha=alpha, **kw)
        return LogisticRegression(penalty="l1", C=1.0 / (alpha * N), solver="liblinear",
                                  fit_intercept=False, random_state=0, **kw)

    peer_name = "sklearn Lasso" if kind == "lasso" else "sklearn liblinear"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        refs = [ours(tol=1e-10, max_iter=1000).fit(X, y),
                peer(tol=1e-8, max_iter=1000).fit(X, y)]
    fstar = min(objective(kind, X, y, alpha, r.coef_, r.intercept_) for r in refs)

    def excess(est: Any) -> float:
        return (objective(kind, X, y, alpha, est.coef_, est.intercept_) - fstar) / abs(fstar)

    out: dict[str, Any] = {"shape": list(X.shape), "alpha": alpha, "f_star": fstar,
                           "contenders": {}}
    for label, make, budget in (
            ("sqnopt", ours, lambda b: ours(max_iter=b, tol=None)),
            (peer_name, peer, lambda b: peer(max_iter=b, tol=1e-14))):
        est, seconds = _timed(make, X, y, rounds)
        row: dict[str, Any] = {"defaults": {"seconds": round(seconds, 5),
                                            "excess": float(f"{excess(est):.3g}"),
                                            "nnz": int(np.count_nonzero(est.coef_))}}
        for b in BUDGETS:
            est, seconds = _timed(lambda: budget(b), X, y, rounds)
            e = excess(est)
            for target in TARGETS:
                key = f"{target:g}"
                if key not in row and e <= target:
                    row[key] = {"budget": b, "seconds": round(seconds, 5)}
            if all(f"{t:g}" in row for t in TARGETS) or seconds > cap:
                break
        out["contenders"][label] = row
        print(f"  {label}: {row}", flush=True)
    return out


def table(record: dict[str, Any]) -> str:
    """Markdown: per problem, each contender's defaults (ms, excess, nonzeros), its time to
    1e-4 / 1e-6, and sqnopt's ratio to the peer (defaults, 1e-4, 1e-6)."""
    lines = ["| problem | sqnopt defaults | peer defaults | sqnopt to 1e-4 / 1e-6 | "
             "peer to 1e-4 / 1e-6 | ratio: defaults, 1e-4, 1e-6 |",
             "|---|---|---|---|---|---|"]

    def ms(s: float) -> str:
        return f"{s * 1e3:.1f}" if s < 0.1 else f"{s * 1e3:.0f}"

    for name, p in record["problems"].items():
        (_, a), (peer, b) = list(p["contenders"].items())

        def dflt(r: dict[str, Any]) -> str:
            d = r["defaults"]
            return f"{ms(d['seconds'])} ms ({d['excess']:.0e}, {d['nnz']} nonzeros)"

        def to(r: dict[str, Any]) -> str:
            return " / ".join(ms(r[f"{t:g}"]["seconds"]) if f"{t:g}" in r else "-"
                              for t in TARGETS) + " ms"

        ratios = [f"{a['defaults']['seconds'] / b['defaults']['seconds']:.2f}x"]
        for t in TARGETS:
            k = f"{t:g}"
            ratios.append(f"{a[k]['seconds'] / b[k]['seconds']:.2f}x" if k in a and k in b
                          else "-")
        lines.append(f"| {name} ({peer}) | {dflt(a)} | {dflt(b)} | {to(a)} | {to(b)} | "
                     f"{', '.join(ratios)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import json

    from sqnopt.solver._blas import blas_threads_limited

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cap", type=float, default=20.0,
                    help="a budget sweep ends after a fit of more seconds than this")
    ap.add_argument("--problems", nargs="*", help="a subset of the problems, by name")
    ap.add_argument("--record", type=Path, help="write a compact JSON record here")
    ap.add_argument("--table", type=Path, metavar="RECORD",
                    help="print the Markdown table of a record, run nothing")
    args = ap.parse_args(argv)
    if args.table is not None:
        print(table(json.loads(args.table.read_text())))
        return 0
    import sqnopt as package
    from _runinfo import git_head

    record: dict[str, Any] = {
        "command": "python bench/dense_l1.py " + " ".join(
            sys.argv[1:] if argv is None else argv),
        "sqnopt": git_head(Path(package.__file__).resolve().parents[1]),
        "load_start": list(os.getloadavg()), "problems": {}}
    print(f"load average {record['load_start']}")
    with blas_threads_limited(1):
        for name, p in problems().items():
            if args.problems and name not in args.problems:
                continue
            print(name, flush=True)
            record["problems"][name] = run(name, p, args.rounds, args.cap)
    record["load_end"] = list(os.getloadavg())
    print(table(record))
    if args.record is not None:
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
