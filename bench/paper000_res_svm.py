"""Reproduce Mokhtari & Ribeiro, *A quasi-Newton method for large scale support vector machines*
(ICASSP 2014), Section 4, Figures 1-4: RES vs SGD (and non-regularized oBFGS) on the boxes data.

* Figs. 1-2: F vs samples processed, n = 4 and n = 40 (N = 1e4, lam = 1e-3; RES: delta = 1e-3,
  Gamma = 1e-4, L = 5; SGD: L = 1; both eps_t = 3e-2 * 100 / (100 + t)).
* Fig. 3: test accuracy (1e4 test samples) after one pass over N = 2.5e3 training samples, n = 4,
  over ``--realizations`` realizations (paper: 1e3); clairvoyant accuracy from the data model.
* Fig. 4: n = 10, constant step 0.1, 1e4 samples: RES vs oBFGS (delta = Gamma = 0) vs SGD.

The paper does not state w0, B_0 or the exact scaling of the loss. ``--variant`` picks:
``sqh`` (default; F = lam/2 |w|^2 + mean max(0, 1 - m)^2 exactly as written, w0 = 0, B_0 = I),
``half`` (the loss halved, 1/2 max(0, 1 - m)^2, run exactly through the equivalence
F_half(w; lam) = 1/2 F_sqh(w; 2 lam), see ``paper_problem``), and ``--init randn`` (w0 ~ N(0, I)).
The paper's numbers are printed beside ours.

Usage::

    python bench/paper000_res_svm.py                      # all figures, default variant
    python bench/paper000_res_svm.py --variant half --tag half
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import multiprocessing as mp  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

if __import__("importlib.util").util.find_spec("sqnopt") is None:  # run from a source checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqnopt import (  # noqa: E402
    Constant,
    Decaying,
    DivergenceWarning,
    Fixed,
    FullBFGS,
    Identity,
    RegularizedBFGS,
    Solver,
    SquaredHinge,
    Status,
)
from sqnopt.datasets import make_boxes  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import save_png, write_json  # noqa: E402

HERE = Path(__file__).resolve().parent
LAM, DELTA, GAMMA, EPS0, T0 = 1e-3, 1e-3, 1e-4, 3e-2, 100.0

PAPER = {
    "fig1": {"res_samples_to_0.065": 315, "sgd_samples_to_0.065": 1740,
             "res_F_at_2500": 4.14e-2, "sgd_F_at_2500": 6.31e-2},
    "fig2": {"res_F_at_3500": 5.55e-4, "sgd_F_at_3500": 1.80e-2},
    "fig3": {"res_mean_accuracy": 0.822, "sgd_max_accuracy": 0.65, "clairvoyant": 0.98,
             "res_beats_0.65_probability": 0.98},
    "fig4": {"claim": "oBFGS (delta = Gamma = 0) deteriorates catastrophically; RES recovers"},
}


def paper_problem(variant: str, kind: str, step: float, *, delta: float = DELTA,
                  Gamma: float = GAMMA, b0: float = 1.0) -> tuple[Any, Any, float, float]:
    """(objective, curvature, step, c) such that running them reproduces the paper's method on
    the paper's objective ``F_paper = c * F_ours`` exactly.

    ``half``: ``F_half(w; lam) = lam/2 |w|^2 + mean 1/2 l(m) = 1/2 F_sqh(w; 2 lam)``. Gradients and
    secant pairs scale by c = 1/2, so SGD's step becomes c eps, and RES's ``B`` scales by c:
    RES(delta, Gamma, B_0) on F_half is RES(delta/c, c Gamma, B_0/c) on F_sqh with the same step.
    """
    c = 0.5 if variant == "half" else 1.0
    objective = SquaredHinge(lam=LAM / c)
    if kind == "sgd":
        return objective, Identity(), c * step, c
    if kind == "obfgs":
        return objective, FullBFGS(init_scale=b0 / c), step, c
    return objective, RegularizedBFGS(delta=delta / c, Gamma=c * Gamma, init_scale=b0 / c), step, c


def curve(n: int, kind: str, r: int, args: argparse.Namespace, max_samples: int,
          constant: float | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    """F_paper vs samples processed for one realization (history at every iteration)."""
    X, y = make_boxes(10_000, n, random_state=10_007 * n + r)
    w0 = None if args.init == "zeros" else np.random.default_rng(99_991 * n + r).normal(size=n)
    batch = 1 if kind == "sgd" else 5
    step0 = constant if constant is not None else EPS0
    objective, curvature, step, c = paper_problem(args.variant, kind, step0)
    rule: Any = Constant(step) if constant is not None else Decaying(eps0=step, T0=T0)
    n_iter = max_samples // batch
    every = max(1, n_iter // 400)
    solver = Solver(objective, curvature, Fixed(batch), rule, max_samples=max_samples,
                    history_every=every, report_every=every, random_state=r)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DivergenceWarning)   # recorded as the run's status
        res = solver.fit(X, y, w0=w0)
    status = "diverged" if res.status is Status.DIVERGED else "ok"
    hist = res.history
    if hist is None or len(hist) == 0:
        return np.zeros(0), np.zeros(0), status
    return hist.samples.astype(float), c * hist.objective, status


def first_reach(samples: np.ndarray, F: np.ndarray, level: float) -> float:
    ok = np.nonzero(F <= level)[0]
    return float(samples[ok[0]]) if ok.size else math.nan


def at(samples: np.ndarray, F: np.ndarray, s: float) -> float:
    j = np.searchsorted(samples, s)
    return float(F[min(j, len(F) - 1)]) if len(F) else math.nan


def fig12_task(task: tuple[int, str, int, Any]) -> dict[str, Any]:
    n, kind, r, args = task
    s, F, status = curve(n, kind, r, args, 4000)
    return {"n": n, "kind": kind, "r": r, "samples": s.tolist(), "F": F.tolist(), "status": status}


def accuracy_task(task: tuple[int, Any]) -> dict[str, float]:
    """Fig. 3: one pass over N = 2.5e3 training vectors, accuracy on 1e4 test vectors."""
    r, args = task
    n = 4
    X, y = make_boxes(12_500, n, random_state=5_000_011 + r)
    Xtr, ytr, Xte, yte = X[:2500], y[:2500], X[2500:], y[2500:]
    w0 = None if args.init == "zeros" else np.random.default_rng(77_777 + r).normal(size=n)
    out = {"r": r, "clairvoyant": float(np.mean(np.sign(Xte.sum(axis=1)) == yte))}
    for kind in ("res", "sgd"):
        batch = 1 if kind == "sgd" else 5
        objective, curvature, step, _ = paper_problem(args.variant, kind, EPS0)
        solver = Solver(objective, curvature, Fixed(batch), Decaying(eps0=step, T0=T0),
                        sampling="shuffle", max_samples=2500, random_state=r, report_every=10**9)
        w = solver.fit(Xtr, ytr, w0=w0).w
        out[kind] = float(np.mean(np.where(Xte @ w > 0, 1.0, -1.0) == yte))
    return out


def parallel(fn: Any, tasks: list[Any], workers: int) -> list[Any]:
    if workers <= 1:
        return [fn(t) for t in tasks]
    with mp.get_context("fork").Pool(workers) as pool:
        return list(pool.imap_unordered(fn, tasks, chunksize=4))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--realizations", type=int, default=1000, help="Fig. 3 realizations")
    ap.add_argument("--curves", type=int, default=20, help="realizations per curve (Figs. 1, 2, 4)")
    ap.add_argument("--variant", choices=("sqh", "half"), default="sqh")
    ap.add_argument("--init", choices=("zeros", "randn"), default="zeros")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    tic = time.perf_counter()
    results: dict[str, Any] = {"config": {"variant": args.variant, "init": args.init,
                                          "lam": LAM, "delta": DELTA, "Gamma": GAMMA,
                                          "eps0": EPS0, "T0": T0, "curves": args.curves,
                                          "realizations": args.realizations}}
    print(f"Paper 000 (Mokhtari & Ribeiro, ICASSP 2014) reproduction: variant={args.variant}, "
          f"init={args.init}")

    # ---- Figs. 1-2
    tasks = [(n, kind, r, args) for n in (4, 40) for kind in ("res", "sgd")
             for r in range(args.curves)]
    rows = parallel(fig12_task, tasks, args.workers)
    curves: dict[str, Any] = {}
    for n, fig in ((4, "fig1"), (40, "fig2")):
        stats: dict[str, Any] = {}
        for kind in ("res", "sgd"):
            runs = sorted((x for x in rows if x["n"] == n and x["kind"] == kind),
                          key=lambda x: x["r"])
            S = np.array(runs[0]["samples"])
            Fm = np.median(np.array([np.interp(S, x["samples"], x["F"]) for x in runs]), axis=0)
            curves[f"{kind}_n{n}"] = {"samples": S.tolist(), "median_F": Fm.tolist()}
            stats[f"{kind}_samples_to_0.065"] = first_reach(S, Fm, 0.065)
            for s in (315, 1740, 2500, 3500):
                stats[f"{kind}_F_at_{s}"] = at(S, Fm, s)
        results[fig] = stats
        print(f"\n{fig} (n={n}), median over {args.curves} realizations:")
        if n == 4:
            print(f"  samples to F=6.5e-2: RES {stats['res_samples_to_0.065']:.0f} (paper 315), "
                  f"SGD {stats['sgd_samples_to_0.065']:.0f} (paper 1740)")
            print(f"  F at Lt=2500:  RES {stats['res_F_at_2500']:.3g} (paper 4.14e-2), "
                  f"SGD {stats['sgd_F_at_2500']:.3g} (paper 6.31e-2)")
        else:
            print(f"  F at Lt=3500:  RES {stats['res_F_at_3500']:.3g} (paper 5.55e-4), "
                  f"SGD {stats['sgd_F_at_3500']:.3g} (paper 1.80e-2)")

    # ---- Fig. 3
    acc = parallel(accuracy_task, [(r, args) for r in range(args.realizations)], args.workers)
    res_acc = np.array([a["res"] for a in acc])
    sgd_acc = np.array([a["sgd"] for a in acc])
    clair = np.array([a["clairvoyant"] for a in acc])
    results["fig3"] = {"res_mean_accuracy": float(res_acc.mean()),
                       "res_min": float(res_acc.min()), "res_max": float(res_acc.max()),
                       "sgd_mean_accuracy": float(sgd_acc.mean()),
                       "sgd_max_accuracy": float(sgd_acc.max()),
                       "clairvoyant_mean": float(clair.mean()),
                       "res_beats_0.65_probability": float(np.mean(res_acc > 0.65)),
                       "res_fail_probability_below_0.6": float(np.mean(res_acc < 0.6))}
    f3 = results["fig3"]
    print(f"\nfig3 (n=4, N=2.5e3, one pass, 1e4 test, {args.realizations} realizations):")
    print(f"  RES mean accuracy {f3['res_mean_accuracy']:.3f} (paper 0.822), P(RES > 0.65) = "
          f"{f3['res_beats_0.65_probability']:.3f} (paper 0.98)")
    print(f"  SGD mean {f3['sgd_mean_accuracy']:.3f}, max {f3['sgd_max_accuracy']:.3f} "
          f"(paper: at most 0.65); clairvoyant {f3['clairvoyant_mean']:.3f} (paper 0.98)")

    # ---- Fig. 4
    tasks4 = [(10, kind, r, args) for kind in ("res", "obfgs", "sgd") for r in range(args.curves)]
    rows4 = parallel(fig4_task, tasks4, args.workers)
    stats4: dict[str, Any] = {}
    for kind in ("res", "obfgs", "sgd"):
        runs = [x for x in rows4 if x["kind"] == kind]
        finals = np.array([x["F"][-1] if x["F"] and x["status"] == "ok" else np.inf for x in runs])
        peaks = np.array([max(x["F"][len(x["F"]) // 10:], default=np.inf) for x in runs])
        stats4[kind] = {"median_final_F": float(np.median(finals)),
                        "max_final_F": float(np.max(finals)),
                        "median_peak_F_after_10pct": float(np.median(peaks)),
                        "diverged": sum(x["status"] != "ok" for x in runs),
                        "runs": len(runs)}
        curves[f"{kind}_n10_constant"] = {"samples": runs[0]["samples"], "F": runs[0]["F"]}
    ref = stats4["res"]["median_final_F"]
    for kind in ("obfgs", "sgd"):
        runs = [x for x in rows4 if x["kind"] == kind]
        stats4[kind]["final_F_above_10x_res_median"] = int(sum(
            (not x["F"]) or x["status"] != "ok" or x["F"][-1] > 10 * ref for x in runs))
    results["fig4"] = stats4
    print(f"\nfig4 (n=10, constant step 0.1, 1e4 samples, {args.curves} realizations): "
          "paper: oBFGS deteriorates catastrophically, RES recovers")
    for kind in ("res", "obfgs", "sgd"):
        s4 = stats4[kind]
        extra = (f", final F > 10x RES median in {s4['final_F_above_10x_res_median']}/{s4['runs']}"
                 if kind != "res" else "")
        print(f"  {kind:6s} median final F {s4['median_final_F']:.3g}, max final "
              f"{s4['max_final_F']:.3g}, median peak F after 1e3 samples "
              f"{s4['median_peak_F_after_10pct']:.3g}, diverged {s4['diverged']}{extra}")

    results["paper"] = PAPER
    results["wall_seconds"] = time.perf_counter() - tic
    out = HERE / "results" / f"paper000_res_svm{('_' + args.tag) if args.tag else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json(out, results | {"curves": curves,
                               "fig3_accuracies": {"res": res_acc.tolist(),
                                                   "sgd": sgd_acc.tolist()}})
    print(f"\nwrote {out.relative_to(HERE.parent)} ({results['wall_seconds']:.0f} s)")
    plot(curves, res_acc, sgd_acc, rows4, out.with_suffix(".png"), args)


def fig4_task(task: tuple[int, str, int, Any]) -> dict[str, Any]:
    n, kind, r, args = task
    s, F, status = curve(n, kind, r, args, 10_000, constant=0.1)
    return {"kind": kind, "r": r, "samples": s.tolist(), "F": F.tolist(), "status": status}


def plot(curves: dict[str, Any], res_acc: np.ndarray, sgd_acc: np.ndarray,
         rows4: list[dict[str, Any]], path: Path, args: argparse.Namespace) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover
        return
    fig, ax = plt.subplots(1, 4, figsize=(17, 3.8))
    for i, n in enumerate((4, 40)):
        for kind, col in (("res", "C0"), ("sgd", "C1")):
            c = curves[f"{kind}_n{n}"]
            ax[i].loglog(np.maximum(c["samples"], 1), c["median_F"], color=col,
                         label=f"{kind.upper()} (median)")
        ax[i].set_title(f"Fig. {i + 1}: n={n}")
        ax[i].set_xlabel("samples processed Lt")
        ax[i].set_ylabel("F(w_t)")
    ax[0].plot([315, 1740, 2500, 2500], [6.5e-2, 6.5e-2, 4.14e-2, 6.31e-2], "k*", label="paper")
    ax[1].plot([3500, 3500], [5.55e-4, 1.8e-2], "k*", label="paper")
    ax[0].legend(fontsize=8)
    bins = np.linspace(0.4, 1.0, 61)
    ax[2].hist(res_acc, bins=bins, alpha=0.6, label=f"RES (mean {res_acc.mean():.3f})")
    ax[2].hist(sgd_acc, bins=bins, alpha=0.6, label=f"SGD (mean {sgd_acc.mean():.3f})")
    ax[2].axvline(0.822, color="k", ls="--", label="paper RES mean")
    ax[2].set_title("Fig. 3: test accuracy, n=4, N=2.5e3")
    ax[2].legend(fontsize=8)
    for kind, col in (("res", "C0"), ("obfgs", "C3"), ("sgd", "C1")):
        for x in [x for x in rows4 if x["kind"] == kind][:5]:
            if x["F"]:
                ax[3].semilogy(np.maximum(x["samples"], 1), x["F"], color=col, lw=0.7,
                               label=kind if x["r"] == 0 else None)
    ax[3].set_title("Fig. 4: n=10, constant step 0.1 (5 runs each)")
    ax[3].set_xlabel("samples processed Lt")
    ax[3].legend(fontsize=8)
    fig.suptitle(f"Paper 000 reproduction (variant={args.variant}, init={args.init})")
    fig.tight_layout()
    save_png(fig, path, dpi=90)
    print(f"wrote {path.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
