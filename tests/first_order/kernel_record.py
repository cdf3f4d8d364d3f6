"""Kernel Pegasos' iterate sequences, recorded, so that the kernel expansion run by the one
compiled driver can be held to the iterates of the separate loop it replaced
(``tests/first_order/test_kernel_record.py``).

    python tests/first_order/kernel_record.py [OUT]   # (re)write kernel_record.npz beside this file

Run it with the tree whose iterates are the reference on the import path (e.g.
``PYTHONPATH=/path/to/old/checkout``): it imports ``sqnopt`` from wherever Python finds it. Every
run fits :class:`~sqnopt.kernel.KernelPegasos` (the compiled path) for a few iteration counts
and keeps what the fit reports: the support, ``dual_coef_ = c alpha_j y_j`` (the coefficients
with the scale ``c`` applied), the intercept ``b``, ``||w||^2``, the iterations done and the
kernel evaluations. RBF, linear and polynomial kernels, dense rows (CSR rows too for the first seed), batch sizes 1 and 4,
with and without the projection and the intercept, three seeds, and an injected batch sequence
that runs out before the budget.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
RECORD = HERE / "kernel_record.npz"
ITERS = (1, 10, 300)


def _data(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two noisy circles (a problem no linear model separates) with 3 extra sparse features."""
    rng = np.random.default_rng(seed)
    n = 160
    r = np.where(rng.random(n) < 0.5, 0.4, 1.0)
    phi = rng.uniform(0, 2 * np.pi, n)
    X = np.c_[r * np.cos(phi), r * np.sin(phi), rng.normal(size=(n, 3)) * (rng.random((n, 3)) < 0.3)]
    X[:, :2] += 0.08 * rng.normal(size=(n, 2))
    return X, np.where(r < 0.5, -1.0, 1.0)


def _configs() -> Iterator[tuple[str, dict[str, Any]]]:
    for kernel in ("rbf", "linear", "poly"):
        for seed in (0, 1, 2):
            for k, project, intercept in ((1, True, False), (4, True, True), (4, False, True)):
                yield (f"{kernel}/seed{seed}/k{k}/project={project}/b={intercept}",
                       dict(kernel=kernel, lam=2e-2, batch_size=k, project=project,
                            fit_intercept=intercept, gamma=1.5, degree=2, random_state=seed))


def runs() -> Iterator[tuple[str, dict[str, Any], Any, np.ndarray]]:
    """``(name, KernelPegasos parameters, X, y)`` of every recorded fit (without ``max_iter``)."""
    for name, params in _configs():
        X, y = _data(params["random_state"])
        for fmt in ("dense", "csr"):
            if fmt == "csr" and (params["kernel"] == "poly" or params["random_state"] != 0):
                continue
            yield f"{name}/{fmt}", params, (sp.csr_matrix(X) if fmt == "csr" else X), y
    X, y = _data(5)
    seq = np.random.default_rng(5).integers(0, X.shape[0], size=3 * 25 + 2)
    yield ("rbf/sequence_runs_out/dense",
           dict(kernel="rbf", lam=1e-2, batch_size=3, gamma=1.0, fit_intercept=True,
                batch_sequence=seq), X, y)


def fit(params: dict[str, Any], X: Any, y: np.ndarray, max_iter: int) -> dict[str, np.ndarray]:
    """One fit's record, packed in two arrays (few entries keep the file small):
    ``ints = [n_iter_, n_kernel_evals_, *support_]``, ``floats = [intercept_, sqnorm_,
    *dual_coef_]``."""
    from sqnopt.kernel import KernelPegasos

    kp = KernelPegasos(max_iter=max_iter, **params).fit(X, y)
    return {"ints": np.r_[kp.n_iter_, kp.n_kernel_evals_, kp.support_].astype(np.int64),
            "floats": np.r_[kp.intercept_, kp.sqnorm_, kp.dual_coef_].astype(np.float64)}


def recorded() -> Iterator[tuple[str, dict[str, np.ndarray]]]:
    for name, params, X, y in runs():
        for T in ITERS:
            yield f"{name}/T{T}", fit(params, X, y, T)


def main() -> None:
    import sqnopt

    path = Path(sys.argv[1]) if len(sys.argv) > 1 else RECORD
    arrays = {f"{key}/{f}": v for key, got in recorded() for f, v in got.items()}
    np.savez_compressed(path, **arrays)
    print(f"{len(arrays)} arrays from {sqnopt.__file__} -> {path}")


if __name__ == "__main__":
    main()
