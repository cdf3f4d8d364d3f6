"""The kernel expansion in Python: kernel Pegasos' iterate representation for any kernel callable.

The same representation as the compiled :class:`~sqnopt.kernel._pegasos.KernelIterate` (see
:mod:`sqnopt.kernel._pegasos` for the derivation, Shalev-Shwartz, Singer, Srebro & Cotter 2011,
Sec. 4): the iterate ``w_t = c_t sum_j beta_j phi(x_j)`` of a margin objective in the RKHS of
``K``, with the scale ``c`` kept apart and ``nu = ||w||^2`` tracked exactly. Here ``K`` is any
callable ``K(A, B) -> (len(A), len(B))`` array of rows (dense or CSR), evaluated a block at a
time with NumPy; :class:`PythonKernelIterate` is an
:class:`~sqnopt.interfaces.IterateKernelLike`, run by the Python driver
(:meth:`sqnopt.solver._pyloop.PythonLoop.with_iterate`), which keeps the batches, the step
``eps_t``, the counters, the budgets and the non-finite stops.

One iteration on the batch ``B`` (``k = |B|`` positions ``s``, sample ``i = B_s``), with
``a_s = -g_i y_i loss'(m_i)`` (so ``c_i = -a_s / k``; for the hinge loss ``a_s = y_i`` on a
margin violation and 0 otherwise) and ``delta = eps / k``:

    f_s   = c sum_{j in SV} beta_j K(x_i, x_j)           (one K(X_B, X_SV) block)
    m_s   = y_i (f_s + b),   f_B(w_t) = sum_s g_i loss(m_s) / k + lam/2 nu
    c    <- (1 - eps lam) c,  nu <- (1 - eps lam)^2 nu
    for s with a_s != 0:  d_s = delta a_s
        nu     <- nu + 2 d_s (w . phi(x_i)) + d_s^2 K(x_i, x_i)
        beta_i <- beta_i + d_s / c
    if nu > r^2:  c <- c r / sqrt(nu),  nu <- r^2;    b <- b + eps sum_s a_s / k

where ``w . phi(x_i)`` is ``(1 - eps lam) f_s`` plus this step's earlier additions
``sum_{q < s} d_q K(x_{B_q}, x_i)``. This is the update of the compiled representation, written
with ``delta a_s`` in place of ``-eps c_i`` (equal for ``k`` a power of two, and to rounding
otherwise) so that the iterates are those of the NumPy loop this path replaced.
"""

from __future__ import annotations

import math
from typing import Any, Callable, ClassVar

import numpy as np
from numpy.typing import NDArray

from sqnopt.checkpoint import CheckpointError, restore_array, state_array, state_value
from sqnopt.interfaces import ITERATE_NONFINITE, ITERATE_NONFINITE_LOSS, ITERATE_STEPPED

FloatArray = NDArray[np.float64]
IndexArray = NDArray[np.intp]

#: batches up to this size take the margins' loss terms on Python floats (no array round trips)
_SCALAR_BATCH = 16
#: ``K(A, B)``: the kernel matrix of two blocks of rows, shape ``(len(A), len(B))``.
KernelBlock = Callable[[Any, Any], FloatArray]

# Fold the scale into the coefficients when |c| falls below this (or becomes exactly zero: the
# first Pegasos step has 1 - eps lam = 0); the compiled representation's threshold.
SCALE_MIN = 1e-9


class PythonKernelIterate:
    """The iterate ``w = c sum_j beta_j phi(x_j)`` (and ``b``) with ``nu = ||w||^2`` for a
    kernel given as a Python callable (see the module docstring).

    ``objective`` supplies the margin loss (``py_loss_and_dloss_dmargin``) and ``lam``
    (a :class:`~sqnopt.objectives._base.MarginObjectiveKernel`); ``X`` the rows (dense or CSR),
    ``y`` the labels (+-1) and ``sample_weight`` the ``g_i``; ``kernel`` evaluates ``K`` on
    blocks of rows. ``n_params`` counts the coefficients (one per training sample): there is no
    dense iterate.
    """

    kind: ClassVar[str] = "kernel"
    dense_iterate: ClassVar[bool] = False

    def __init__(self, objective: Any, X: Any, y: FloatArray, sample_weight: FloatArray,
                 kernel: KernelBlock, fit_intercept: bool) -> None:
        n = int(X.shape[0])
        if y.shape != (n,) or sample_weight.shape != (n,):
            raise ValueError("y and sample_weight must hold one entry per row of X")
        self.obj = objective
        self.lam = float(objective.lam)
        self.X = X
        self.y = np.asarray(y, dtype=np.float64)
        self.gw = np.asarray(sample_weight, dtype=np.float64)
        self.unit_weights = bool(np.all(self.gw == 1.0))
        self.kernel = kernel
        self.has_intercept = bool(fit_intercept)
        self.beta = np.zeros(n)
        self.sv: list[int] = []                 # support indices, in order of first use
        self.in_sv = np.zeros(n, dtype=bool)
        self._svi: IndexArray | None = None       # self.sv as an array (see _sv_array)
        self.scale = 1.0                        # c
        self._sqnorm = 0.0                      # nu
        self.intercept = 0.0                    # b
        self.n_kernel_evals = 0
        self.extra_samples = 0
        self.batch_loss = math.nan
        self.batch_weight = 0.0

    @property
    def n_params(self) -> int:
        return int(self.beta.shape[0])

    @property
    def lookahead(self) -> int:
        return 0

    @property
    def sqnorm(self) -> float:
        return self._sqnorm

    @property
    def n_sv(self) -> int:
        return len(self.sv)

    @property
    def support(self) -> IndexArray:
        """Support indices (samples with a coefficient, in order of first use)."""
        return np.asarray(self.sv, dtype=np.intp)

    def _sv_array(self) -> IndexArray:
        """``self.sv`` as an index array, rebuilt only when the support changed (it grows at a
        few iterations, and each iteration reads it)."""
        if self._svi is None or self._svi.shape[0] != len(self.sv):
            self._svi = np.asarray(self.sv, dtype=np.intp)
        return self._svi

    @property
    def coefficients(self) -> FloatArray:
        """``c * beta_j`` for the support indices: ``w = sum_j coef_j phi(x_j)``."""
        out: FloatArray = self.scale * self.beta[self.support]
        return out

    def _k(self, A: Any, B: Any) -> FloatArray:
        out = np.asarray(self.kernel(A, B), dtype=np.float64)
        if out.shape != (A.shape[0], B.shape[0]):
            raise ValueError(f"the kernel callable returned shape {out.shape}, expected "
                             f"{(A.shape[0], B.shape[0])}")
        return out

    def first_order(self, batch: IndexArray, eps: float, radius: float, n_avg: int
                    ) -> tuple[int, float]:
        """One iteration on ``batch`` with the step ``eps`` (the module docstring;
        :class:`~sqnopt.interfaces.IterateKernelLike`; no average: ``n_avg`` is ignored)."""
        X, lam = self.X, self.lam
        k = int(batch.shape[0])
        c, nu, b = self.scale, self._sqnorm, self.intercept
        # 1. margins at w_t: the minibatch objective and a_s = -g_i y_i loss'(m_s)
        if self.sv:
            svi = self._sv_array()
            f = (self._k(X[batch], X[svi]) @ self.beta[svi]) * c
            self.n_kernel_evals += k * len(self.sv)
        else:
            f = np.zeros(k)
        yb = self.y[batch]
        # (a sequential sum, as the compiled representation's; small batches: Python floats)
        if k == 1:
            # one sample (Pegasos' default): as below, with no lists
            y0 = float(yb[0])
            l0, d0 = self.obj.py_loss_and_dloss_dmargin(y0 * (float(f[0]) + b))
            if self.unit_weights:
                loss = (0.0 + l0) * 1.0
                a = [-(y0 * d0)]
            else:
                g0 = float(self.gw[batch[0]])
                loss = (0.0 + g0 * l0) * 1.0
                a = [-(g0 * y0 * d0)]
        elif k <= _SCALAR_BATCH:
            # the same arithmetic on Python floats, without the array round trips
            loss_and_dl = self.obj.py_loss_and_dloss_dmargin
            ys, fs = yb.tolist(), f.tolist()
            gs = [] if self.unit_weights else self.gw[batch].tolist()
            terms: list[float] = []
            a = []
            for s, (ys_s, fs_s) in enumerate(zip(ys, fs)):
                l_s, d_s = loss_and_dl(ys_s * (fs_s + b))
                if self.unit_weights:
                    terms.append(l_s)
                    a.append(-(ys_s * d_s))
                else:
                    terms.append(gs[s] * l_s)
                    a.append(-(gs[s] * ys_s * d_s))
            loss = sum(terms) * (1.0 / k)
        else:
            losses, dl = self.obj.py_loss_and_dloss_dmargin(yb * (f + b))
            if self.unit_weights:
                loss = sum(losses.tolist()) * (1.0 / k)
                a = (-(yb * dl)).tolist()
            else:
                gw = self.gw[batch]
                loss = sum((gw * losses).tolist()) * (1.0 / k)
                a = (-(gw * yb * dl)).tolist()
        # the batch's part of the progressive validation loss: its weighted loss sum
        self.batch_loss = loss * k
        self.batch_weight = float(k) if self.unit_weights else float(np.sum(self.gw[batch]))
        loss += 0.5 * lam * nu
        if not math.isfinite(loss):
            return ITERATE_NONFINITE_LOSS, loss
        # 2. ||w_{t+1}||^2 before anything changes: the shrinkage, then each addition
        shrink = 1.0 - eps * lam
        c_new = c * shrink
        nu *= shrink * shrink
        delta = eps / k
        gb = 0.0
        added: list[int] = []           # batch positions with an addition so far
        fl = f.tolist()
        for s in range(k):
            a_s = a[s]
            if a_s == 0.0:
                continue
            i = int(batch[s])
            gb -= a_s / k
            wphi = fl[s] * shrink
            if added:
                kq = self._k(X[batch[added]], X[i:i + 1])[:, 0]
                wphi += delta * float(np.dot([a[q] for q in added], kq))
                self.n_kernel_evals += len(added)
            kii = float(self._k(X[i:i + 1], X[i:i + 1])[0, 0])
            self.n_kernel_evals += 1
            d = delta * a_s
            nu += 2.0 * d * wphi + d * d * kii
            added.append(s)
        nu = max(nu, 0.0)
        b_new = b - eps * gb if self.has_intercept else b
        if not (math.isfinite(nu) and math.isfinite(c_new) and math.isfinite(b_new)):
            return ITERATE_NONFINITE, loss
        # 3. the update: c, then beta_i += d_s / c for the positions with an addition
        if c_new == 0.0 or abs(c_new) < SCALE_MIN:
            self._fold(c_new)
        else:
            self.scale = c_new
        for s in added:
            i = int(batch[s])
            self.beta[i] += delta * a[s] / self.scale
            if not self.in_sv[i]:
                self.in_sv[i] = True
                self.sv.append(i)
        # 4. the projection onto {||w|| <= radius}: a rescaling of c
        if radius > 0.0 and nu > radius * radius:
            sc = radius / math.sqrt(nu)
            self.scale *= sc
            nu *= sc * sc
        self._sqnorm = nu
        self.intercept = b_new
        return ITERATE_STEPPED, loss

    def _fold(self, c_new: float) -> None:
        """``beta <- c_new beta`` and ``c = 1``; forget the support when ``c_new == 0``."""
        if c_new == 0.0:
            self.beta[:] = 0.0
            self.in_sv[:] = False
            self.sv = []
            self._svi = None
        else:
            self.beta *= c_new
        self.scale = 1.0

    def sync(self, n_avg: int) -> None:
        """Nothing to write: the coefficients are the iterate (no dense ``w``)."""

    def reload(self, n_avg: int) -> None:
        """A representation without a dense iterate has nothing to rebuild from."""
        raise CheckpointError("the kernel expansion has no dense iterate to rebuild from: "
                              "restore the loop's state with set_state (its counters, sampler "
                              "and loop state together)")

    def get_state(self) -> dict[str, Any]:
        """The compiled representation's format: ``beta``, the support, ``c``, ``nu``, ``b``
        and the kernel-evaluation count (copies)."""
        return {"loop": "kernel", "n": self.n_params, "beta": self.beta.copy(),
                "support": self.support, "scale": float(self.scale),
                "sqnorm": float(self._sqnorm), "intercept": float(self.intercept),
                "n_kernel_evals": int(self.n_kernel_evals)}

    def check_state(self, state: dict[str, Any]) -> None:
        """Raise :class:`~sqnopt.checkpoint.CheckpointError` unless ``state`` is a kernel
        expansion over as many samples."""
        if state.get("loop") != "kernel":
            raise CheckpointError(f"the checkpoint is of the {state.get('loop')!r} loop, this "
                                  "solve runs the kernel expansion")
        n = state_value(state, "n", int, self)
        if n != self.n_params:
            raise CheckpointError(f"PythonKernelIterate: the checkpoint has {n} samples (field "
                                  f"'n'), this solve {self.n_params}: it is of other data")

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`get_state` returned."""
        self.check_state(state)
        support = state_array(state, "support", self, np.intp)
        n = self.n_params
        if support.shape[0] > n or (support.shape[0] and (support.min() < 0 or support.max() >= n)):
            raise CheckpointError("PythonKernelIterate: the checkpointed support does not fit "
                                  f"{n} samples: the checkpoint is of other data")
        if np.unique(support).shape[0] != support.shape[0]:
            raise CheckpointError("PythonKernelIterate: the checkpointed support lists a sample "
                                  "twice: the checkpoint is damaged or was edited")
        values = {key: state_value(state, key, float, self) for key in ("scale", "intercept")}
        sqnorm = state_value(state, "sqnorm", float, self, lo=0.0)
        n_kernel_evals = state_value(state, "n_kernel_evals", int, self, lo=0)
        restore_array(self.beta, state, "beta", self)
        self.in_sv[:] = False
        self.in_sv[support] = True
        self.sv = [int(j) for j in support]
        self._svi = None
        self.scale = values["scale"]
        self._sqnorm = sqnorm
        self.intercept = values["intercept"]
        self.n_kernel_evals = n_kernel_evals
