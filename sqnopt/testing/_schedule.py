"""Conformance checks of batch schedules (:class:`sqnopt.interfaces.BatchSchedule`).

Beyond the checks of every kind: ``batch_size(k)`` is an integer in ``[1, n]`` for every
iteration ``k >= 1`` and data sets of 1, a few and many samples, depends on ``k`` only (the
same whatever the order of the calls and whichever kernel makes them), and never decreases
when the schedule declares ``nondecreasing``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from sqnopt.interfaces import ScheduleKernelLike
from sqnopt.testing._core import Check, Outputs, Setup, Suite, fail

__all__ = ["ScheduleSuite"]

#: Iterations at which ``batch_size`` is asked.
_KS = (*range(1, 201), 1000, 123_457, 10**7)


class ScheduleSuite(Suite):
    """The checks of one batch schedule."""

    kind = "schedule"
    slot = "schedule"

    def protocol(self) -> type:
        return ScheduleKernelLike

    def compiled_base(self) -> type[Any]:
        from sqnopt.schedules._base import ScheduleKernel

        return ScheduleKernel

    def drive(self, kernel: Any, setup: Setup, steps: range) -> Outputs:
        """``batch_size(k)`` at ``k = step + 1``."""
        return [(f"batch_size({k + 1})", int(kernel.batch_size(k + 1))) for k in steps]

    def kind_checks(self) -> list[tuple[str, Check]]:
        return [("check_batch_sizes", self.check_batch_sizes)]

    def check_component_contract(self) -> str | None:
        super().check_component_contract()
        flag = getattr(self.component, "nondecreasing", False)
        if not isinstance(flag, bool):
            fail(f"nondecreasing must be a bool class attribute, got {flag!r}")
        return None

    def check_batch_sizes(self) -> str | None:
        """Integer sizes in ``[1, n]``, a function of ``k``, non-decreasing where declared."""
        base = self.setup().problem
        monotone = bool(getattr(self.component, "nondecreasing", False))
        seen = []
        for n in (1, 7, base.n_samples, 10_000):
            problem = dataclasses.replace(base, n_samples=n)
            forward = self.component.init(problem)
            sizes = []
            for k in _KS:
                b = forward.batch_size(k)
                if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or not 1 <= b <= n:
                    fail(f"with {n} samples batch_size({k}) = {b!r}: sizes must be integers in "
                         f"[1, {n}]")
                sizes.append(int(b))
            backward = self.component.init(problem)
            again = {k: int(backward.batch_size(k)) for k in reversed(_KS)}
            for k, b in zip(_KS, sizes):
                if again[k] != b or int(forward.batch_size(k)) != b:
                    fail(f"with {n} samples batch_size({k}) is not a function of k: {b} in "
                         f"order, {again[k]} from a fresh kernel asked in reverse")
            if monotone:
                for k, b, b_next in zip(_KS, sizes, sizes[1:]):
                    if b_next < b:
                        fail(f"declares nondecreasing, but with {n} samples batch_size shrinks "
                             f"from {b} to {b_next} after iteration {k}")
            seen.append(f"n={n}: {sizes[0]}..{max(sizes)}")
        return "sizes " + ", ".join(seen)
