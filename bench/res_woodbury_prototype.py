"""RES at large n: the Cholesky form against a Woodbury-over-eigendecomposition form (a NumPy
prototype, not a sqnopt component), on the paper-003 problem at n = 1000.

RES (paper 000, eq. 9) adds ``δI`` to ``B`` at every update, so ``B_t = β_t I + Σ_k (a_k a_kᵀ −
c_k c_kᵀ)`` with a scalar ``β_t``: only the identity part moves. After an eigendecomposition
``B_s = QΛQᵀ`` (every ``k`` accepted pairs), ``B_{s+j} = Q(Λ + jδ I)Qᵀ + W S Wᵀ`` with the ``2j``
rank-one columns ``W`` of the later updates (``S = ±1``). In ``Q``-coordinates (``Ŵ = QᵀW``)
Woodbury solves it exactly:

    x̂ = D⁻¹ĝ − D⁻¹Ŵ (S + ŴᵀD⁻¹Ŵ)⁻¹ ŴᵀD⁻¹ĝ,     D = Λ + jδ,   ĝ = Qᵀg,   x = Q x̂,

at the price of two ``n × n`` matrix–vector products with ``Q`` per direction, one more for the
new column ``Qᵀr̃`` (``Qᵀv`` and ``QᵀBv`` follow from ``x̂`` in O(n·m)), and the Gram matrix
``ŴᵀD⁻¹Ŵ`` (O(n·m²)), rebuilt every iteration because the shift changes ``D``. Both forms keep
the explicit ``B`` (two ``dsyr`` and the diagonal shift per pair; the Woodbury form needs it for
the next eigendecomposition).

The script drives one RES run (squared hinge, λ = δ = 1e-4, Γ = 1e-4, B_0 = 100 I, L = 5,
ε_t = 2e-2·100/(100+t); the settings of ``bench/paper003_olbfgs_svm.py``) with the Cholesky
form, feeds the same pairs to the Woodbury form for each refresh interval ``k``, and prints the
time per iteration of each form's curvature work (shared gradient work excluded) and the largest
relative difference of their directions. Usage::

    OPENBLAS_NUM_THREADS=1 python bench/res_woodbury_prototype.py [--n 1000] [--iters 600]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.linalg as sl  # noqa: E402
from scipy.linalg import blas  # noqa: E402

if __import__("importlib.util").util.find_spec("sqnopt") is None:  # run from a source checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sqnopt.data import prepare  # noqa: E402
from sqnopt.datasets import make_boxes  # noqa: E402
from sqnopt.objectives.reference import SquaredHingeNumPy  # noqa: E402

LAM = DELTA = GAMMA = 1e-4
B0, L, EPS0, T0 = 100.0, 5, 2e-2, 100.0


class Woodbury:
    """``(B⁻¹ + ΓI) g`` of RES through a periodic eigendecomposition and Woodbury."""

    def __init__(self, n: int, k: int) -> None:
        self.k = k
        self.B = np.asfortranarray(np.eye(n) * B0)  # explicit B (upper triangle), for refreshes
        self.refresh()

    def refresh(self) -> None:
        self.lam, self.Q = sl.eigh(self.B, lower=False, check_finite=False, driver="evd")
        self.shift = 0.0
        self.W = np.empty((self.B.shape[0], 2 * self.k))   # Ŵ = Qᵀ W, filled column by column
        self.sign = np.empty(2 * self.k)
        self.m = 0

    def direction(self, g: np.ndarray) -> np.ndarray:
        self.g_hat = self.Q.T @ g
        D = self.lam + self.shift
        y0 = self.g_hat / D
        if self.m:
            W = self.W[:, :self.m]
            Z = W / D[:, None]
            C = np.diag(self.sign[:self.m]) + W.T @ Z
            y0 = y0 - Z @ np.linalg.solve(C, W.T @ y0)
        self.x_hat = y0
        return self.Q @ y0 + GAMMA * g

    def update(self, v: np.ndarray, r_tilde: np.ndarray, vr: float, eps: float) -> None:
        # Qᵀv from this form's own direction (v = -eps d), without a product with Q; ``v`` itself
        # is not read. In ``compare`` the step is the Cholesky form's, equal to this one's to the
        # direction difference the script prints.
        D = self.lam + self.shift
        v_hat = -eps * (self.x_hat + GAMMA * self.g_hat)
        Bv_hat = D * v_hat
        if self.m:
            W = self.W[:, :self.m]
            Bv_hat += W @ (self.sign[:self.m] * (W.T @ v_hat))
        vBv = float(v_hat @ Bv_hat)
        Bv = self.Q @ Bv_hat
        self.W[:, self.m] = (self.Q.T @ r_tilde) / np.sqrt(vr)
        self.W[:, self.m + 1] = Bv_hat / np.sqrt(vBv)
        self.sign[self.m:self.m + 2] = (1.0, -1.0)
        self.m += 2
        self.shift += DELTA
        _explicit_update(self.B, r_tilde, vr, Bv, vBv)
        if self.m == 2 * self.k:
            self.refresh()


class Cholesky:
    """The published form: factor ``B`` at every iteration (LAPACK ``dpotrf``/``dpotrs``)."""

    def __init__(self, n: int) -> None:
        self.B = np.asfortranarray(np.eye(n) * B0)

    def direction(self, g: np.ndarray) -> np.ndarray:
        factor = sl.cho_factor(self.B, lower=False, check_finite=False)
        return sl.cho_solve(factor, g, check_finite=False) + GAMMA * g

    def update(self, v: np.ndarray, r_tilde: np.ndarray, vr: float, eps: float) -> None:
        Bv = blas.dsymv(1.0, self.B, v, lower=0)
        _explicit_update(self.B, r_tilde, vr, Bv, float(v @ Bv))


def _explicit_update(B: np.ndarray, r: np.ndarray, vr: float, Bv: np.ndarray, vBv: float) -> None:
    """``B += r rᵀ/vᵀr − Bv vᵀB/vᵀBv + δI`` on the upper triangle (paper 000, eq. 9), in place
    (``B`` is Fortran-ordered, so ``dsyr`` writes into it instead of into a copy)."""
    for alpha, x in ((1.0 / vr, r), (-1.0 / vBv, Bv)):
        out = blas.dsyr(alpha, x, a=B, lower=0, overwrite_a=True)
        assert np.shares_memory(out, B)
    B.flat[::B.shape[0] + 1] += DELTA


def compare(n: int, iters: int, ks: list[int], seed: int = 0) -> tuple[dict[str, float],
                                                                        dict[str, float], int]:
    """Run RES with the Cholesky form for ``iters`` iterations and feed the same pairs to one
    Woodbury form per ``k``; return each form's seconds of curvature work, each form's largest
    relative difference of its direction from the Cholesky form's, and the accepted pairs."""
    X, y = make_boxes(10_000, n, random_state=seed)
    objective = SquaredHingeNumPy(lam=LAM).init(prepare(X, y))   # sqnopt's NumPy twin

    def gradient(w: np.ndarray, batch: np.ndarray) -> np.ndarray:
        out = np.empty(n)
        objective.gradient(w, batch, out)
        return out

    batches = np.random.default_rng(seed).integers(0, X.shape[0], size=(iters, L))
    forms: dict[str, Cholesky | Woodbury] = {"cholesky": Cholesky(n)}
    forms |= {f"woodbury k={k}": Woodbury(n, k) for k in ks}
    seconds = dict.fromkeys(forms, 0.0)
    err = dict.fromkeys(forms, 0.0)
    w = np.zeros(n)
    accepted = 0
    for t in range(iters):
        g = gradient(w, batches[t])
        dirs = {}
        for name, form in forms.items():
            tic = time.perf_counter()
            dirs[name] = form.direction(g)
            seconds[name] += time.perf_counter() - tic
        d = dirs["cholesky"]
        for name in forms:
            err[name] = max(err[name], float(np.linalg.norm(dirs[name] - d) / np.linalg.norm(d)))
        eps = EPS0 * T0 / (T0 + t)
        w_new = w - eps * d
        v = w_new - w
        r_tilde = gradient(w_new, batches[t]) - g - DELTA * v
        vr = float(v @ r_tilde)
        if vr > 0.0:                                    # RES requires vᵀr̃ > 0; else skip
            accepted += 1
            for name, form in forms.items():
                tic = time.perf_counter()
                form.update(v, r_tilde, vr, eps)
                seconds[name] += time.perf_counter() - tic
        w = w_new
    return seconds, err, accepted


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--iters", type=int, default=600)
    ap.add_argument("--k", type=int, nargs="+", default=[50, 100, 200],
                    help="accepted pairs between eigendecompositions")
    args = ap.parse_args()
    seconds, err, accepted = compare(args.n, args.iters, args.k)
    print(f"RES, n = {args.n}, {args.iters} iterations ({accepted} pairs accepted), "
          f"B_0 = {B0:g} I, delta = {DELTA:g}, Gamma = {GAMMA:g}; one thread")
    print(f"  {'form':16s} {'ms / iteration':>14s} {'vs cholesky':>11s} {'max rel. diff of d':>19s}")
    for name in seconds:
        per = 1e3 * seconds[name] / args.iters
        print(f"  {name:16s} {per:14.2f} {seconds['cholesky'] / seconds[name]:10.2f}x "
              f"{err[name]:19.2e}")


if __name__ == "__main__":
    main()
