"""Conformance checks of penalties (:class:`sqnopt.interfaces.Penalty`).

Beyond the configuration, registry and kernel checks of every kind, on two parameter blocks
with intercepts:

* the value: ``P(0) = 0``, ``P >= 0``, convex along segments, blind to intercepts, equal to
  ``l1 ||w_reg||_1 + (l2/2) ||w_reg||^2`` for the weights the kernel declares (``l1``, ``l2``,
  those of the component's ``l1_strength`` / ``l2_strength``), ``l1_value`` its L1 part;
* the proximal map: finite, intercepts untouched, ``prox(0) = 0`` exactly, exact zeros where
  ``|z_j| <= t l1``, firmly non-expansive (``||p(a) - p(b)||^2 <= (p(a) - p(b))'(a - b)``),
  the minimiser of ``t P(u) + ||u - z||^2 / 2`` (no nearby point does better, and the optimality
  condition ``(z - p)/t in dP(p)`` holds coordinate by coordinate), the same in place;
* the pseudo-gradient: the formula of Andrew & Gao, and consistent with the value: moving along
  ``-pg`` decreases ``g'u + l1 ||u_reg||_1`` at the rate ``||pg||^2``;
* a composite solve (OWL-QN, compiled for a compiled kernel, its NumPy twin for a Python one)
  on a small logistic problem ends with a pseudo-gradient of zero.

A penalty has no slot in the stochastic driver, so the short solve of the other kinds is the
composite solve here; a penalty kernel carries no state between calls (checked as for every
kind).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from sqnopt.interfaces import PenaltyKernelLike
from sqnopt.testing._core import Check, Outputs, Setup, Suite, allclose, fail, max_rel

__all__ = ["PenaltySuite"]

#: Scales of the points the checks use (relative to a standard normal vector).
_SCALES = (1e-3, 0.05, 0.3, 1.0, 3.0, 30.0)
#: Prox steps.
_STEPS = (1e-3, 0.1, 1.0, 10.0)


class PenaltySuite(Suite):
    """The checks of one penalty."""

    kind = "penalty"
    slot = None

    def protocol(self) -> type:
        return PenaltyKernelLike

    def compiled_base(self) -> type[Any]:
        from sqnopt.penalties._base import PenaltyKernel

        return PenaltyKernel

    def blocks_setup(self) -> Setup:
        """Two parameter blocks of ``n_features + 1`` (the last entry of each an intercept)."""
        base = super().setup(fit_intercept=True)
        p = base.problem
        problem = dataclasses.replace(p, n_blocks=2, dim=p.n_features + 1,
                                      n_params=2 * (p.n_features + 1), fit_intercept=True)
        return Setup(problem, base.data, base.objective, base.X, base.y)

    def _reg(self, setup: Setup) -> np.ndarray:
        p = setup.problem
        mask = np.zeros((p.n_blocks, p.dim), dtype=bool)
        mask[:, : p.n_features] = True
        return mask.ravel()

    def _weights(self, kernel: Any) -> tuple[float, float]:
        l1, l2 = float(kernel.l1), float(kernel.l2)
        if not (np.isfinite(l1) and np.isfinite(l2) and l1 >= 0 and l2 >= 0):
            fail(f"the kernel's weights must be finite and >= 0, got l1={l1!r}, l2={l2!r}")
        return l1, l2

    def _prox(self, kernel: Any, z: np.ndarray, t: float) -> np.ndarray:
        out = np.full_like(z, np.nan)
        ret = kernel.prox(z, t, out)
        if ret is not None:
            fail(f"prox() must write into out and return None, returned {ret!r:.40}")
        return out

    def _point(self, rng: np.random.Generator, n: int, scale: float) -> np.ndarray:
        w = np.asarray(scale * rng.normal(size=n))
        w[rng.random(n) < 0.3] = 0.0                  # some exact zeros
        return w

    def drive(self, kernel: Any, setup: Setup, steps: range) -> Outputs:
        out: Outputs = []
        n = setup.problem.n_params
        for t in steps:
            rng = np.random.default_rng([self.seed, 51, t])
            z = self._point(rng, n, (0.02, 0.3, 3.0)[t % 3])
            out.append((f"step {t} prox", self._prox(kernel, z, _STEPS[t % len(_STEPS)])))
            out.append((f"step {t} value", float(kernel.value(z))))
        return out

    # ------------------------------------------------------------------ the list
    def checks(self) -> list[tuple[str, Check]]:
        return [
            ("check_component_contract", self.check_component_contract),
            ("check_registry_round_trip", self.check_registry_round_trip),
            ("check_kernel_contract", self.check_kernel_contract),
            ("check_declared_flags", self.check_declared_flags),
            ("check_penalty_value", self.check_penalty_value),
            ("check_prox", self.check_prox),
            ("check_pseudo_gradient", self.check_pseudo_gradient),
            ("check_state_round_trip", self.check_state_round_trip),
            ("check_composite_solve", self.check_composite_solve),
        ]

    def declared_flags(self, kernel: Any) -> list[tuple[str, Any, Any]]:
        return [("l1_strength", float(self.component.l1_strength), float(kernel.l1)),
                ("l2_strength", float(self.component.l2_strength), float(kernel.l2))]

    def kernel_contract(self, kernel: Any, setup: Setup) -> None:
        self._weights(kernel)
        n = setup.problem.n_params
        try:
            kernel.value(np.zeros(n + 1))
        except ValueError:
            pass
        else:
            fail("value() accepted a vector of the wrong length")

    # ------------------------------------------------------------------ checks
    def check_penalty_value(self) -> str | None:
        setup = self.blocks_setup()
        kernel = self.fresh(setup)
        l1, l2 = self._weights(kernel)
        reg = self._reg(setup)
        n = setup.problem.n_params
        rng = np.random.default_rng([self.seed, 52])
        zero = float(kernel.value(np.zeros(n)))
        if zero != 0.0:
            fail(f"P(0) = {zero!r}, expected 0")
        for scale in _SCALES:
            a, b = self._point(rng, n, scale), self._point(rng, n, scale)
            pa, pb = float(kernel.value(a)), float(kernel.value(b))
            expect = l1 * float(np.sum(np.abs(a[reg]))) + 0.5 * l2 * float(a[reg] @ a[reg])
            if not (pa >= 0 and np.isfinite(pa)):
                fail(f"P(w) = {pa!r} at |w| = {np.linalg.norm(a):.3g}: must be finite and >= 0")
            if not allclose(pa, expect, 1e-12, 1e-300):
                fail(f"P(w) = {pa!r}, but the declared weights l1={l1!r}, l2={l2!r} give "
                     f"{expect!r}")
            part = float(kernel.l1_value(a))
            if not allclose(part, l1 * float(np.sum(np.abs(a[reg]))), 1e-12, 1e-300):
                fail(f"l1_value(w) = {part!r}, expected l1 ||w_reg||_1 = "
                     f"{l1 * float(np.sum(np.abs(a[reg])))!r}")
            moved = a.copy()
            moved[~reg] = rng.normal(size=int((~reg).sum())) * 10 * scale
            if float(kernel.value(moved)) != pa:
                fail("P(w) changed with the intercepts: intercepts are never penalised")
            mid = float(kernel.value(0.5 * (a + b)))
            if mid > 0.5 * (pa + pb) * (1 + 1e-12) + 1e-300:
                fail(f"not convex: P((a + b)/2) = {mid:.6g} > (P(a) + P(b))/2 = "
                     f"{0.5 * (pa + pb):.6g}")
        return f"l1 = {l1:.6g}, l2 = {l2:.6g}"

    def check_prox(self) -> str | None:
        setup = self.blocks_setup()
        kernel = self.fresh(setup)
        l1, l2 = self._weights(kernel)
        reg = self._reg(setup)
        n = setup.problem.n_params
        rng = np.random.default_rng([self.seed, 53])
        zeros = 0
        for t in _STEPS:
            p0 = self._prox(kernel, np.zeros(n), t)
            if p0.tobytes() != np.zeros(n).tobytes():
                fail(f"prox of 0 (t = {t}) is {p0}, not exactly 0 (no negative zeros)")
            points = [self._point(rng, n, s) for s in _SCALES for _ in range(2)]
            images = [self._prox(kernel, z, t) for z in points]
            for z, p in zip(points, images):
                if not np.all(np.isfinite(p)):
                    fail(f"prox of a finite point (t = {t}) is not finite")
                if p[~reg].tobytes() != z[~reg].tobytes():
                    fail("prox changed an intercept: intercepts are never penalised")
                small = reg & (np.abs(z) <= t * l1)
                if np.any(p[small] != 0.0):
                    fail(f"prox left {int(np.count_nonzero(p[small]))} coordinates with "
                         f"|z_j| <= t l1 = {t * l1:.3g} nonzero: soft thresholding zeroes them "
                         "exactly")
                zeros += int(np.count_nonzero(p[reg] == 0.0))
                # the optimality condition (z - p)/t in l1 d|p| + l2 p, per coordinate
                r = (z[reg] - p[reg]) / t - l2 * p[reg]
                nz = p[reg] != 0.0
                tol = 1e-9 * (np.abs(z[reg]) / t + l1 + 1e-300)
                if np.any(np.abs(r[nz] - l1 * np.sign(p[reg][nz])) > tol[nz]):
                    fail(f"prox is not the minimiser: (z - p)/t - l2 p != l1 sign(p) where p != 0"
                         f" (t = {t}, worst {np.max(np.abs(r[nz] - l1 * np.sign(p[reg][nz]))):.3g})")
                if np.any(np.abs(r[~nz]) > l1 + tol[~nz]):
                    fail(f"prox is not the minimiser: |z_j / t| > l1 where p_j = 0 (t = {t})")
                # no nearby point does better on t P(u) + ||u - z||^2 / 2
                best = t * float(kernel.value(p)) + 0.5 * float((p - z) @ (p - z))
                for _ in range(4):
                    q = p + 1e-3 * (np.linalg.norm(p) + 1e-3) * rng.normal(size=n)
                    q[~reg] = z[~reg]
                    other = t * float(kernel.value(q)) + 0.5 * float((q - z) @ (q - z))
                    if other < best - 1e-12 * (abs(best) + 1e-300):
                        fail(f"prox is not the minimiser of t P(u) + ||u - z||^2/2: a nearby "
                             f"point gives {other:.9g} < {best:.9g} (t = {t})")
                same = z.copy()
                kernel.prox(same, t, same)
                if same.tobytes() != p.tobytes():
                    fail(f"prox in place (out is z) differs from prox into a new vector "
                         f"({max_rel(same, p)})")
            for a, pa in zip(points, images):
                for b, pb in zip(points, images):
                    d, e = pa - pb, a - b
                    if float(d @ d) > float(d @ e) + 1e-12 * float(np.linalg.norm(d)) * float(
                            np.linalg.norm(e)) + 1e-300:
                        fail(f"not firmly non-expansive: ||p(a) - p(b)||^2 = {float(d @ d):.6g} "
                             f"> (p(a) - p(b))'(a - b) = {float(d @ e):.6g} (t = {t})")
        return f"{zeros} exact zeros among the prox images"

    def check_pseudo_gradient(self) -> str | None:
        setup = self.blocks_setup()
        kernel = self.fresh(setup)
        l1, _ = self._weights(kernel)
        reg = self._reg(setup)
        n = setup.problem.n_params
        rng = np.random.default_rng([self.seed, 54])
        for scale in _SCALES:
            w = self._point(rng, n, scale)
            g = rng.normal(size=n) * (l1 * 2 + scale)
            g[rng.random(n) < 0.2] = 0.0
            pg = np.full(n, np.nan)
            kernel.pseudo_gradient(w, g, pg)
            sub = np.where(w != 0, l1 * np.sign(w), np.clip(-g, -l1, l1))
            expect = np.where(reg, g + sub, g)
            if not allclose(pg, expect, 1e-13, 1e-300):
                fail(f"pseudo_gradient differs from Andrew & Gao's ({max_rel(pg, expect)})")
            if not np.any(pg):
                continue
            # the rate of decrease of phi(u) = g'u + l1 ||u_reg||_1 along -pg is ||pg||^2
            nzw = np.abs(w[w != 0])
            h = 1e-3 * float(np.min(nzw) if nzw.size else 1.0) / (float(np.max(np.abs(pg)))
                                                                   + 1e-300)
            phi0 = float(g @ w) + float(kernel.l1_value(w))
            u = w - h * pg
            rate = (float(g @ u) + float(kernel.l1_value(u)) - phi0) / h
            target = -float(pg @ pg)
            if abs(rate - target) > 1e-6 * (abs(target) + float(np.abs(g) @ np.abs(pg)) + l1
                                            * float(np.sum(np.abs(pg)))):
                fail(f"moving along -pg changes g'u + l1 |u|_1 at the rate {rate:.9g}, not "
                     f"-||pg||^2 = {target:.9g}: pg is not the steepest-descent direction")
        return None

    def check_composite_solve(self) -> str | None:
        from sqnopt.composite._solve import with_lam
        from sqnopt.composite.reference import owlqn_numpy

        setup = self.setup(fit_intercept=True)
        base = self.fresh(setup)
        l1, l2 = self._weights(base)
        obj = self.objective()
        smooth = with_lam(obj, float(getattr(obj, "lam", 0.0)) + l2)
        okernel = smooth.init(setup.data)
        # a penalty strong enough to zero some weights: l1 of the size of the gradient at 0
        g0 = np.zeros(setup.problem.n_params)
        okernel.full_gradient(np.zeros(setup.problem.n_params), g0)
        scale = 0.5 * float(np.max(np.abs(g0[: setup.problem.n_features])))
        comp = self.component
        if l1 > 0:
            factor = scale / l1
            alpha = getattr(comp, "alpha", None)
            if isinstance(alpha, (int, float)) and dataclasses.is_dataclass(comp):
                replace: Any = dataclasses.replace
                comp = replace(comp, alpha=alpha * factor)
                smooth = with_lam(obj, float(getattr(obj, "lam", 0.0))
                                  + float(comp.l2_strength))
                okernel = smooth.init(setup.data)
        kernel = comp.init(setup.problem)
        from sqnopt.objectives._base import ObjectiveKernel

        if isinstance(kernel, self.compiled_base()) and isinstance(okernel, ObjectiveKernel):
            from sqnopt.composite import owlqn

            w, _, status, _, _, gmax, _, _ = owlqn(okernel, kernel, tol=1e-9, max_iter=500)
            how = "compiled OWL-QN"
        else:
            w, _, _, code = owlqn_numpy(okernel, kernel, np.zeros(setup.problem.n_params),
                                        tol=1e-9, max_iter=500)
            pg = np.zeros_like(w)
            g = np.zeros_like(w)
            okernel.full_gradient(w, g)
            kernel.pseudo_gradient(w, g, pg)
            gmax = float(np.max(np.abs(pg)))
            status = ("max_iter", "gtol", "ftol", "precision", "nonfinite")[code]
            how = "OWL-QN's NumPy twin"
        if status not in ("gtol", "precision") or not gmax <= 1e-7:
            fail(f"{how} on a small logistic problem stopped with {status}, max |pg| = "
                 f"{gmax:.3g}: the composite solve does not reach its minimiser")
        zeros = int(np.count_nonzero(w[: setup.problem.n_features] == 0.0))
        return f"{how}: {status}, max |pg| = {gmax:.2g}, {zeros} exact zeros"
