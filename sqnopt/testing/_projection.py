"""Conformance checks of projections (:class:`sqnopt.interfaces.Projection`).

Beyond the checks of every kind, on two parameter blocks with intercepts: intercepts are never
projected; a Euclidean projection (``euclidean``, the default) is finite, idempotent (its image
is its feasible set), non-expansive (``||P(a) - P(b)|| <= ||a - b||``) and the nearest feasible
point (``(z - P(z))'(q - P(z)) <= 0`` for feasible ``q``: the variational inequality that
characterises the Euclidean projection onto a closed convex set), the same from any kernel;
a kernel declaring ``ball_radius = r > 0`` (which the scaled loops apply as a rescaling) projects
exactly onto the ball ``||w_reg|| <= r``. A mirror map (``euclidean`` False: called once per
iteration, stateful) gives finite iterates and leaves a zero step (``z`` equal to its last
output) in place. A projection declaring ``bounds_iterate`` keeps its outputs bounded however
far the points it is given are.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from sqnopt.interfaces import ProjectionKernelLike
from sqnopt.testing._core import Check, Outputs, Setup, Suite, allclose, fail, max_rel

__all__ = ["ProjectionSuite"]

#: Scales of the points projected (relative to a standard normal vector).
_SCALES = (1e-3, 0.05, 0.3, 1.0, 3.0, 30.0, 1e3)


class ProjectionSuite(Suite):
    """The checks of one projection."""

    kind = "projection"
    slot = "projection"

    def protocol(self) -> type:
        return ProjectionKernelLike

    def compiled_base(self) -> type[Any]:
        from sqnopt.projections._base import ProjectionKernel

        return ProjectionKernel

    def euclidean(self) -> bool:
        return bool(getattr(self.component, "euclidean", True))

    def setup(self, *, fit_intercept: bool = False, big: bool = False) -> Setup:
        """Two parameter blocks of ``n_features + 1`` (the last entry of each an intercept)."""
        base = super().setup(fit_intercept=True, big=big)
        p = base.problem
        problem = dataclasses.replace(p, n_blocks=2, dim=p.n_features + 1,
                                      n_params=2 * (p.n_features + 1), fit_intercept=True)
        return Setup(problem, base.data, base.objective, base.X, base.y)

    def fresh(self, setup: Setup) -> Any:
        """``init``, then ``start(w0 = 0)`` where the kernel has it (as the solver starts a
        mirror map)."""
        kernel = super().fresh(setup)
        start = getattr(kernel, "start", None)
        if callable(start):
            start(np.zeros(setup.problem.n_params))
        return kernel

    def _intercepts(self, setup: Setup) -> np.ndarray:
        p = setup.problem
        mask = np.zeros(p.n_params, dtype=bool)
        if p.fit_intercept:
            mask[p.dim - 1::p.dim] = True
        return mask

    def _point(self, rng: np.random.Generator, setup: Setup, scale: float) -> np.ndarray:
        return np.asarray(scale * rng.normal(size=setup.problem.n_params))

    def _project(self, kernel: Any, z: np.ndarray) -> np.ndarray:
        w = z.copy()
        ret = kernel.project(w)
        if ret is not None:
            fail(f"project() must work in place and return None, returned {ret!r:.40}")
        return w

    def drive(self, kernel: Any, setup: Setup, steps: range) -> Outputs:
        """``project(z_t)`` of points of the size of a few steps (0.02 to 0.3 per coordinate),
        so that a mirror map's dual vector stays where its output depends on it."""
        out: Outputs = []
        for t in steps:
            rng = np.random.default_rng([self.seed, 41, t])
            z = self._point(rng, setup, (0.02, 0.1, 0.3)[t % 3])
            out.append((f"step {t} project", self._project(kernel, z)))
        return out

    # ------------------------------------------------------------------ checks
    def kind_checks(self) -> list[tuple[str, Check]]:
        return [("check_projection", self.check_projection)]

    def check_component_contract(self) -> str | None:
        super().check_component_contract()
        flag = getattr(self.component, "euclidean", True)
        if not isinstance(flag, bool):
            fail(f"euclidean must be a bool class attribute, got {flag!r}")
        return None

    def kernel_contract(self, kernel: Any, setup: Setup) -> None:
        p = setup.problem
        if isinstance(kernel, self.compiled_base()):
            if (kernel.n_params, kernel.block, kernel.n_reg) != (p.n_params, p.dim,
                                                                  p.n_features):
                fail(f"kernel layout (n_params, block, n_reg) = ({kernel.n_params}, "
                     f"{kernel.block}, {kernel.n_reg}), expected ({p.n_params}, {p.dim}, "
                     f"{p.n_features})")
            try:
                kernel.project(np.zeros(p.n_params + 1))
            except ValueError:
                pass
            else:
                fail("project() accepted a vector of the wrong length")
        radius = float(getattr(kernel, "ball_radius", 0.0))
        if not (radius >= 0 and np.isfinite(radius)):
            fail(f"ball_radius must be finite and >= 0, got {radius!r}")
        if radius > 0 and not self.euclidean():
            fail("the kernel declares a ball_radius (a Euclidean ball) but the component "
                 "declares euclidean = False")

    def check_projection(self) -> str | None:
        setup = self.setup()
        free = self._intercepts(setup)
        rng = np.random.default_rng([self.seed, 42])
        kernel = self.fresh(setup)
        points = [self._point(rng, setup, s) for s in _SCALES for _ in range(3)]
        images = []
        for z in points:
            w = self._project(kernel, z)
            if not np.all(np.isfinite(w)):
                fail(f"project() of a finite point of norm {np.linalg.norm(z):.3g} is not finite")
            moved = (w[free].tobytes() != z[free].tobytes() if self.euclidean() else
                     not allclose(w[free], z[free], 1e-12, 1e-14 * float(np.max(np.abs(z)))))
            if moved:
                fail(f"project() changed an intercept ({w[free]} from {z[free]}): projections act "
                     "on the regularised coordinates only (a mirror map takes the plain step "
                     "there)")
            images.append(w)
        if getattr(self.component, "bounds_iterate", False):
            bounded = self.fresh(setup)
            reg = ~free
            u = points[3]
            norms = [float(np.linalg.norm(self._project(bounded, t * u)[reg]))
                     for t in (1e6, 1e12, 1e18)]
            if not (np.all(np.isfinite(norms)) and norms[2] <= 2.0 * norms[1] + 1e-12):
                fail(f"declares bounds_iterate (every output in a bounded set), but the outputs "
                     f"of 1e6 z, 1e12 z and 1e18 z have norms {norms[0]:.3g}, {norms[1]:.3g}, "
                     f"{norms[2]:.3g}")
        if not self.euclidean():
            last = images[-1]
            again = self._project(kernel, last)
            if not allclose(again, last, 1e-12, 1e-12 * float(np.max(np.abs(last)))):
                fail(f"a mirror map moved on a zero step (z equal to its last output): "
                     f"{max_rel(again, last)}")
            return "mirror map (euclidean = False): stateful, one call per iteration"
        other = self.fresh(setup)
        for z, w in zip(points, images):
            scale = float(np.linalg.norm(z)) + 1e-300
            if not allclose(self._project(other, z), w, 1e-12, 1e-13 * scale):
                fail(f"project() of the same point differs between two kernels "
                     f"({max_rel(self._project(other, z), w)}): a Euclidean projection is a "
                     "function of the point")
            ww = self._project(kernel, w)
            if not allclose(ww, w, 1e-12, 1e-13 * scale):
                fail(f"not idempotent: P(P(z)) != P(z) for |z| = {scale:.3g} ({max_rel(ww, w)})")
        # close pairs (a, a + small step) and feasible points next to each image
        near, near_images, feasible = [], [], list(images)
        for z, w in zip(points, images):
            scale = 1e-4 * (float(np.linalg.norm(w)) + 1e-3)
            for _ in range(2):
                step = np.asarray(scale * rng.normal(size=z.shape[0]))
                step[free] = 0.0
                near.append(z + step)
                near_images.append(self._project(kernel, z + step))
                feasible.append(self._project(kernel, w + step))
        pairs = [(a, b, pa, pb) for a, pa in zip(points, images)
                 for b, pb in zip(points, images)]    # (a, b, P(a), P(b))
        for first in (0, 1):
            pairs += list(zip(points, near[first::2], images, near_images[first::2]))
        for a, b, pa, pb in pairs:
            gap = float(np.linalg.norm(a - b))
            moved = float(np.linalg.norm(pa - pb))
            if moved > gap * (1 + 1e-9) + 1e-15 * float(np.linalg.norm(a)):
                fail(f"expansive: ||P(a) - P(b)|| = {moved:.6g} > ||a - b|| = {gap:.6g} "
                     f"(|a| = {np.linalg.norm(a):.3g})")
            # firm non-expansiveness, which every projection onto a convex set has
            if moved * moved > float((pa - pb) @ (a - b)) + 1e-9 * moved * gap + 1e-300:
                fail(f"not firmly non-expansive: ||P(a) - P(b)||^2 = {moved * moved:.6g} > "
                     f"(P(a) - P(b))'(a - b) = {float((pa - pb) @ (a - b)):.6g} "
                     f"(|a| = {np.linalg.norm(a):.3g}, |a - b| = {gap:.3g})")
        for z, w in zip(points, images):
            for q in feasible:
                lhs = float((z - w) @ (q - w))
                # q - P(z) of rounding size has any direction
                slack = 1e-9 * float(np.linalg.norm(q - w)) + 1e-13 * float(np.linalg.norm(w))
                if lhs > float(np.linalg.norm(z - w)) * slack + 1e-300:
                    fail(f"P(z) is not the nearest feasible point: (z - P(z))'(q - P(z)) = "
                         f"{lhs:.3g} > 0 for a feasible q (|z| = {np.linalg.norm(z):.3g}, "
                         f"|q - P(z)| = {np.linalg.norm(q - w):.3g})")
        radius = float(getattr(kernel, "ball_radius", 0.0))
        if radius > 0:
            reg = ~free
            for z, w in zip(points, images):
                nz = float(np.linalg.norm(z[reg]))
                expect = z.copy()
                if nz > radius:
                    expect[reg] = z[reg] * (radius / nz)
                elif w.tobytes() != z.tobytes():
                    fail(f"declares ball_radius = {radius}, but moved a point of norm {nz:.6g} "
                         "inside the ball")
                if not allclose(w, expect, 1e-12, 1e-14 * radius):
                    fail(f"declares ball_radius = {radius}, but does not project onto that ball "
                         f"(|z_reg| = {nz:.6g}, |P(z)_reg| = {np.linalg.norm(w[reg]):.6g})")
            return f"Euclidean projection onto the ball of radius {radius:.6g}"
        inside = sum(1 for z, w in zip(points, images) if w.tobytes() == z.tobytes())
        return f"Euclidean projection ({inside} of {len(points)} points already feasible)"
