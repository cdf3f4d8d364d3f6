"""Kernel Pegasos' iterate sequences, recorded, so that the kernel expansion run by the one
compiled driver can be held to the iterates of the separate loop it replaced
(``tests/first_order/test_kernel_record.py``).

    python tests/first_order/kernel_record.py [OUT]   # (re)write kernel_record.npz beside this file
    python tests/first_order/kernel_record.py --python [OUT]   # kernel_record_python.npz


Run it with the tree whose iterates are the reference on the import path (e.g.
``PYTHONPATH=/path/to/old/checkout``): it imports ``sqnopt`` from wherever Python finds it. Every
run fits :class:`~sqnopt.kernel.KernelPegasos` (the compiled path) for a few iteration counts
and keeps what the fit reports: the support, ``dual_coef_ = c alpha_j y_j`` (the coefficients
with the scale ``c`` applied), the intercept ``b``, ``||w||^2``, the iterations done and the
kernel evaluations. RBF, linear and polynomial kernels, dense rows (CSR rows too for the first seed), batch sizes 1 and 4,
with and without the projection and the intercept, three seeds, and an injected batch sequence
that runs out before the budget.

``--python`` records the Python path instead (:func:`python_runs`): kernels given as Python
callables (RBF and polynomial, written with NumPy below), and the built-in names with
``path="python"``, two seeds, batch sizes 1 and 4, the projection and the intercept on and off,
into ``kernel_record_python.npz`` (written by the separate NumPy loop ``_fit_python`` before the
callable path ran on the Python driver).
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
RECORD_PYTHON = HERE / "kernel_record_python.npz"
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


def rbf_callable(A: Any, B: Any) -> np.ndarray:
    """``exp(-1.5 ||a - b||^2)`` by NumPy broadcasting (dense or CSR rows)."""
    A = A.toarray() if sp.issparse(A) else np.asarray(A)
    B = B.toarray() if sp.issparse(B) else np.asarray(B)
    d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return np.exp(-1.5 * d2)


def poly_callable(A: Any, B: Any) -> np.ndarray:
    """``(0.5 a.b + 1)^2`` (dense or CSR rows)."""
    A = A.toarray() if sp.issparse(A) else np.asarray(A)
    B = B.toarray() if sp.issparse(B) else np.asarray(B)
    return (0.5 * (A @ B.T) + 1.0) ** 2


def python_runs() -> Iterator[tuple[str, dict[str, Any], Any, np.ndarray]]:
    """``(name, KernelPegasos parameters, X, y)`` of every recorded fit of the Python path."""
    kernels: tuple[tuple[str, Any, dict[str, Any]], ...] = (
        ("rbf_callable", rbf_callable, {}), ("poly_callable", poly_callable, {}),
        ("rbf_python", "rbf", {"path": "python", "gamma": 1.5}),
        ("poly_python", "poly", {"path": "python", "gamma": 0.5, "degree": 2}))
    for kname, kernel, extra in kernels:
        for seed in (0, 3):
            for k, project, intercept in ((1, True, False), (1, False, False), (4, True, True),
                                          (4, False, True)):
                X, y = _data(seed)
                params = dict(kernel=kernel, lam=2e-2, batch_size=k, project=project,
                              fit_intercept=intercept, random_state=seed, **extra)
                name = f"{kname}/seed{seed}/k{k}/project={project}/b={intercept}"
                yield f"{name}/dense", params, X, y
                if kname == "rbf_callable" and seed == 0:
                    yield f"{name}/csr", params, sp.csr_matrix(X), y
    X, y = _data(5)
    seq = np.random.default_rng(5).integers(0, X.shape[0], size=3 * 25 + 2)
    yield ("rbf_callable/sequence_runs_out/dense",
           dict(kernel=rbf_callable, lam=1e-2, batch_size=3, fit_intercept=True,
                batch_sequence=seq), X, y)


def fit(params: dict[str, Any], X: Any, y: np.ndarray, max_iter: int) -> dict[str, np.ndarray]:
    """One fit's record, packed in two arrays (few entries keep the file small):
    ``ints = [n_iter_, n_kernel_evals_, *support_]``, ``floats = [intercept_, sqnorm_,
    *dual_coef_]``."""
    from sqnopt.kernel import KernelPegasos

    kp = KernelPegasos(max_iter=max_iter, **params).fit(X, y)
    return {"ints": np.r_[kp.n_iter_, kp.n_kernel_evals_, kp.support_].astype(np.int64),
            "floats": np.r_[kp.intercept_, kp.sqnorm_, kp.dual_coef_].astype(np.float64)}


def recorded(python: bool = False) -> Iterator[tuple[str, dict[str, np.ndarray]]]:
    for name, params, X, y in (python_runs() if python else runs()):
        for T in ITERS:
            yield f"{name}/T{T}", fit(params, X, y, T)


def main() -> None:
    import sqnopt

    args = sys.argv[1:]
    python = "--python" in args
    args = [a for a in args if a != "--python"]
    path = Path(args[0]) if args else (RECORD_PYTHON if python else RECORD)
    arrays = {f"{key}/{f}": v for key, got in recorded(python) for f, v in got.items()}
    np.savez_compressed(path, **arrays)
    print(f"{len(arrays)} arrays from {sqnopt.__file__} -> {path}")


if __name__ == "__main__":
    main()
