"""Smoke test of bench/paper003_ctr.py, including its oLBFGS branch.

The real oLBFGS (registry name "lbfgs") comes from another branch; here a stand-in registered
under that name (identity directions, accepting ``memory``) checks the script's plumbing.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sqnopt.curvature.reference import IdentityKernelNumPy
from sqnopt.interfaces import CurvatureModel, Problem
from sqnopt.registry import get_registry, hookimpl, register_plugin, unregister_plugin

from tests.conftest import dataset_path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "paper003_ctr.py"


@dataclass(frozen=True)
class _FakeLBFGS(CurvatureModel):
    memory: int = 10
    name = "lbfgs"

    def init(self, problem: Problem) -> IdentityKernelNumPy:
        return IdentityKernelNumPy()


class _Plugin:
    @staticmethod
    @hookimpl
    def sqnopt_register_curvature_models(register: Any) -> None:
        register("lbfgs", _FakeLBFGS)


def test_ctr_script_runs_every_method(tmp_path: Path) -> None:
    data = dataset_path("criteo_dac_train_head10k.tsv.xz")
    spec = importlib.util.spec_from_file_location("paper003_ctr", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    registered = "lbfgs" in get_registry().names("curvature")
    if not registered:
        register_plugin(_Plugin, name="fake-lbfgs")
    try:
        out = tmp_path / "ctr"
        assert mod.main(["--data", str(data), "--samples", "1000", "--n-bags", "256",
                         "--out", str(out)]) == 0
    finally:
        if not registered:
            unregister_plugin(_Plugin)
    doc = json.loads(out.with_suffix(".json").read_text())
    assert set(doc["methods"]) == {"oLBFGS plain", "SGD plain", "oLBFGS weighted",
                                   "SGD weighted"}
    for run in doc["methods"].values():
        assert run["history"]["samples"][-1] >= 1000
        assert sum(run["H1_clicked_ctr"]) == pytest.approx(1.0)
    assert doc["info"]["gamma"] == pytest.approx(
        (1 - doc["info"]["click_rate_train"]) / doc["info"]["click_rate_train"])
