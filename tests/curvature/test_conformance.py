"""``sqnopt.testing.check_curvature_model`` (``check_component`` for curvature models, the entry
point plugins written before ``check_component`` call): variants and twins pass it, and
deliberately broken models fail it with a named check. Every registered component is checked
in ``tests/testing/test_builtin_conformance.py``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from sqnopt import LBFGS, FullBFGS, RegularizedBFGS
from sqnopt.curvature.reference import (
    FullBFGSNumPy,
    IdentityKernelNumPy,
    IdentityNumPy,
    LBFGSKernelNumPy,
    LBFGSNumPy,
    RegularizedBFGSNumPy,
)
from sqnopt.interfaces import PAIR_ACCEPTED, CurvatureModel, Problem
from sqnopt.testing import check_curvature_model, curvature_model_checks


@pytest.mark.parametrize("name", ["lbfgs", "res", "sqb"])
def test_registered_names_conform(name: str) -> None:
    check_curvature_model(name)


@pytest.mark.parametrize("model", [
    LBFGSNumPy(memory=3), FullBFGSNumPy(), RegularizedBFGSNumPy(), IdentityNumPy(),
    LBFGS(memory=2, on_bad_pair="damp"), FullBFGS(init_scale="auto"),
    RegularizedBFGS(delta=1e-2, Gamma=0.0, init_scale="auto", method="cholesky"),
    RegularizedBFGS(delta=1e-2, Gamma=1e-3, method="eig", refresh_every=3),
], ids=lambda m: m.describe())
def test_variants_and_twins_conform(model: CurvatureModel) -> None:
    check_curvature_model(model)


def test_checks_are_named_for_parametrization() -> None:
    checks = curvature_model_checks(LBFGS())
    names = [name for name, _ in checks]
    assert len(names) == len(set(names)) >= 6
    assert all(name.startswith("check_") and "lbfgs(" in name for name in names)
    assert {"check_direction_fresh", "check_secant_pairs_spd", "check_state_round_trip",
            "check_solver_paths"} <= {name.split("[")[0] for name in names}


# ---- broken models: the checks must catch them ----------------------------------------------

class _AscentKernel(IdentityKernelNumPy):
    def direction(self, grad: Any, out: Any) -> None:
        out[:] = -grad


@dataclass(frozen=True)
class AscentModel(CurvatureModel):
    name = "ascent"

    def init(self, problem: Problem) -> _AscentKernel:
        return _AscentKernel()


class _GreedyKernel(LBFGSKernelNumPy):
    def update_pair(self, v: Any, r: Any) -> int:
        if not np.all(np.isfinite(r)):
            return PAIR_ACCEPTED                   # wrong: accepts a NaN pair (ignoring it)
        return super().update_pair(v, r)


@dataclass(frozen=True)
class GreedyModel(CurvatureModel):
    name = "greedy"
    needs_secant_pair = True

    def init(self, problem: Problem) -> _GreedyKernel:
        return _GreedyKernel(problem.n_params, 5, 1.0, min_curvature=0.0, on_bad_pair="skip",
                             damping=0.2, on_nonfinite="reset")


@dataclass
class MutableModel(CurvatureModel):
    scale: float = 1.0
    name = "mutable"

    def init(self, problem: Problem) -> IdentityKernelNumPy:
        return IdentityKernelNumPy()


@dataclass(frozen=True)
class FlagMismatchModel(CurvatureModel):
    name = "flag_mismatch"
    needs_secant_pair = True        # but its kernel says False

    def init(self, problem: Problem) -> IdentityKernelNumPy:
        return IdentityKernelNumPy()


class _InputMutatingKernel(IdentityKernelNumPy):
    def direction(self, grad: Any, out: Any) -> None:
        out[:] = grad
        grad *= 2.0


@dataclass(frozen=True)
class InputMutatingModel(CurvatureModel):
    name = "input_mutating"

    def init(self, problem: Problem) -> _InputMutatingKernel:
        return _InputMutatingKernel()


@pytest.mark.parametrize("model,check", [
    (AscentModel(), "check_direction_fresh"),
    (GreedyModel(), "check_nonfinite_pair_not_accepted"),
    (MutableModel(), "check_component_contract"),
    (FlagMismatchModel(), "check_declared_flags"),
    (InputMutatingModel(), "check_direction_fresh"),
], ids=lambda x: x if isinstance(x, str) else type(x).__name__)
def test_broken_models_fail_the_named_check(model: CurvatureModel, check: str) -> None:
    with pytest.raises(AssertionError, match=check):
        check_curvature_model(model)
