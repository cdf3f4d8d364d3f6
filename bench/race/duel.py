"""Pegasos against scikit-learn's ``SGDClassifier`` on the same hinge-loss problem: complete
``fit`` calls of 10 epochs, interleaved, best of ``repeats``; plus 1-epoch fits, from which the
fixed cost per fit and the cost per epoch follow (``t(10) = fixed + 10 e``, ``t(1) = fixed + e``)."""

from __future__ import annotations

import gc
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .problems import Problem


def _calls(p: Problem, epochs: int) -> dict[str, tuple[str, Callable[[int], Any]]]:
    from sklearn.linear_model import SGDClassifier

    from sqnopt import Solver

    lam, X, y = p.alpha, p.X, p.y

    def sgd(seed: int) -> Any:
        clf = SGDClassifier(loss="hinge", alpha=lam, learning_rate="optimal", max_iter=epochs,
                            tol=None, fit_intercept=False, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return clf.fit(X, y).coef_.ravel()

    return {
        "sqnopt Pegasos": (f"Solver.pegasos(lam, max_epochs={epochs})",
                           lambda seed: Solver.pegasos(lam, max_epochs=epochs,
                                                       random_state=seed).fit(X, y).w),
        "sqnopt Pegasos (i.i.d.)": (
            f"Solver.pegasos(lam, max_epochs={epochs}, sampling='uniform')",
            lambda seed: Solver.pegasos(lam, max_epochs=epochs, sampling="uniform",
                                        random_state=seed).fit(X, y).w),
        "sklearn SGDClassifier": (
            f"SGDClassifier(loss='hinge', alpha=lam, learning_rate='optimal', "
            f"max_iter={epochs}, tol=None, fit_intercept=False)", sgd),
    }


def pegasos_duel(p: Problem, *, repeats: int = 7, seeds: tuple[int, ...] = (0, 1, 2, 3),
                 log: Callable[[str], None] = print) -> dict[str, Any]:
    assert p.loss == "hinge"
    ten, one = _calls(p, 10), _calls(p, 1)
    for _, f in list(ten.values()) + list(one.values()):
        f(0)                                     # warm-up (imports, first-touch of the data)
    best = {k: np.inf for k in ten}
    best1 = {k: np.inf for k in one}
    for r in range(repeats):
        names = list(ten)
        names = names[r % len(names):] + names[:r % len(names)]
        for name in names:
            for calls, store in ((ten, best), (one, best1)):
                gc.collect()
                tic = time.perf_counter()
                calls[name][1](0)
                store[name] = min(store[name], time.perf_counter() - tic)
    out: dict[str, Any] = {}
    for name, (call, f) in ten.items():
        excess = float(np.mean([p.excess(f(s)) for s in seeds]))
        per_epoch = (best[name] - best1[name]) / 9.0
        out[name] = {"call": call, "time": float(best[name]), "time_1_epoch": float(best1[name]),
                     "per_epoch": per_epoch, "fixed": float(best1[name]) - per_epoch,
                     "excess": excess}
        log(f"  {name:26s} 10 epochs {best[name] * 1e3:7.2f} ms (1 epoch {best1[name] * 1e3:6.2f}"
            f" ms; fixed {out[name]['fixed'] * 1e3:5.2f} ms + {per_epoch * 1e3:5.2f} ms/epoch), "
            f"excess {excess:.4f}")
    base = out["sklearn SGDClassifier"]["time"]
    for name in ("sqnopt Pegasos", "sqnopt Pegasos (i.i.d.)"):
        log(f"  {name} / SGDClassifier: {out[name]['time'] / base:.3f}")
    return {"data": f"{p.key}: {p.description}; N = {p.n}, d = {p.d}", "lam": p.alpha,
            "f_star": p.f_star, "repeats": repeats, "objective_seeds": list(seeds),
            "baseline": "sklearn SGDClassifier", "contenders": out}
