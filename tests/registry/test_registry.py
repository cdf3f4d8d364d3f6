"""The pluggy registry: names, errors, runtime plugins, entry-point discovery."""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from sqnopt import Solver, get_registry, hookimpl
from sqnopt.curvature.reference import IdentityKernelNumPy
from sqnopt.interfaces import CurvatureModel, Problem
from sqnopt.registry import (
    RegistryError,
    UnknownComponentError,
    get_plugin_manager,
    register_plugin,
    reset_registry,
    unregister_plugin,
)


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch):
    reset_registry()
    yield
    reset_registry()


def test_builtins_register_through_the_hooks():
    reg = get_registry()
    assert {"squared_hinge", "logloss", "hinge"} <= set(reg.names("objective"))
    assert "identity" in reg.names("curvature")
    assert {"fixed", "linear", "full"} <= set(reg.names("schedule"))
    assert {"constant", "decaying", "pegasos", "armijo"} <= set(reg.names("step"))
    assert reg.get("objective", "logloss").source == "sqnopt.objectives._plugin"
    # aliases and case-insensitivity
    assert reg.get("curvature", "SGD").name == "identity"
    assert reg.create("schedule", "linear", gamma=2.0).params() == {"b1": 5, "gamma": 2.0, "cap": None}


def test_names_work_wherever_instances_do(boxes):
    X, y = boxes
    by_name = Solver("squared_hinge", "sgd", ("fixed", {"size": 4}), ("decaying", {"eps0": 0.3}),
                     max_iter=20, random_state=0).fit(X, y)
    from sqnopt import Decaying, Fixed, Identity, SquaredHinge

    by_obj = Solver(SquaredHinge(), Identity(), Fixed(4), Decaying(eps0=0.3), max_iter=20,
                    random_state=0).fit(X, y)
    np.testing.assert_array_equal(by_name.w, by_obj.w)


def test_unknown_name_lists_known_ones():
    with pytest.raises(UnknownComponentError, match=r"unknown curvature 'nope'.*identity"):
        Solver(curvature="nope")
    with pytest.raises(TypeError, match=r"bad parameters.*Accepted: \['size'\]"):
        Solver(schedule=("fixed", {"sise": 3}))


@dataclass(frozen=True)
class Halving(CurvatureModel):
    """A toy pure-Python curvature model: d = g / 2."""

    name = "halving"

    def init(self, problem: Problem) -> IdentityKernelNumPy:
        class K(IdentityKernelNumPy):
            def direction(self, grad, out):
                out[:] = 0.5 * grad

        return K()


class HalvingPlugin:
    @hookimpl
    def sqnopt_register_curvature_models(self, register):
        register("halving", Halving, aliases=("half",))


def test_runtime_plugin_registration(boxes):
    X, y = boxes
    plugin = HalvingPlugin()
    register_plugin(plugin, name="test-halving")
    try:
        assert get_registry().get("curvature", "half").source == "test-halving"
        r1 = Solver(curvature="halving", step=("constant", {"eps": 0.2}), max_iter=30,
                    random_state=0).fit(X, y)
        r2 = Solver(step=("constant", {"eps": 0.1}), max_iter=30, random_state=0).fit(X, y)
        assert not r1.compiled
        np.testing.assert_allclose(r1.w, r2.w, rtol=1e-12)
    finally:
        unregister_plugin(plugin)
    with pytest.raises(UnknownComponentError):
        get_registry().get("curvature", "halving")


def test_name_clash_and_wrong_kind_are_errors():
    class Clash:
        @hookimpl
        def sqnopt_register_curvature_models(self, register):
            register("identity", Halving)

    with pytest.raises(RegistryError, match="already registered by sqnopt.curvature._plugin"):
        register_plugin(Clash(), name="clash")
    assert "clash" not in dict(get_plugin_manager().list_name_plugin())

    class WrongKind:
        @hookimpl
        def sqnopt_register_step_rules(self, register):
            register("oops", Halving)

    register_plugin(WrongKind(), name="wrong-kind")
    with pytest.raises(RegistryError, match="not a step component"):
        Solver(step="oops")


def _fake_distribution(tmp_path: Path, ep_name: str) -> None:
    """An installed distribution on sys.path with an entry point in the 'sqnopt' group."""
    (tmp_path / "fake_sqnopt_plugin.py").write_text(textwrap.dedent('''
        from dataclasses import dataclass
        from sqnopt import hookimpl
        from sqnopt.curvature.reference import IdentityNumPy

        @dataclass(frozen=True)
        class Fake(IdentityNumPy):
            name = "fake_identity"

        @hookimpl
        def sqnopt_register_curvature_models(register):
            register("fake_identity", Fake)
    '''))
    dist = tmp_path / "fake_sqnopt_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-sqnopt-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[sqnopt]\n{ep_name} = fake_sqnopt_plugin\n")


def test_entry_point_discovery(tmp_path, monkeypatch, boxes):
    _fake_distribution(tmp_path, "fake")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("SQNOPT_LOAD_PLUGINS", raising=False)
    try:
        entry = get_registry().get("curvature", "fake_identity")
        assert entry.source == "fake"
        X, y = boxes
        assert Solver(curvature="fake_identity", max_iter=5).fit(X, y).n_iter == 5
        # the allow-list switches discovery off
        reset_registry()
        monkeypatch.setenv("SQNOPT_LOAD_PLUGINS", "")
        with pytest.raises(UnknownComponentError):
            get_registry().get("curvature", "fake_identity")
        reset_registry()
        monkeypatch.setenv("SQNOPT_LOAD_PLUGINS", "fake")
        assert get_registry().get("curvature", "fake_identity").source == "fake"
    finally:
        sys.modules.pop("fake_sqnopt_plugin", None)


def test_the_suite_keeps_installed_plugins_out(tmp_path, monkeypatch, request):
    """tests/conftest.py: an installed plugin stays out of the registry of a test and of the
    processes it starts, unless the test takes the ``installed_plugins`` fixture."""
    import os
    import subprocess

    from conftest import sqnopt_env

    _fake_distribution(tmp_path, "fake_suite")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert "fake_identity" not in get_registry().names("curvature")
        env = sqnopt_env()
        env["PYTHONPATH"] += os.pathsep + str(tmp_path)
        code = ("from sqnopt import get_registry; "
                "print('fake_identity' in get_registry().names('curvature'))")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=120, cwd=tmp_path)
        assert out.returncode == 0 and out.stdout.split() == ["False"], out.stderr
        request.getfixturevalue("installed_plugins")
        assert get_registry().get("curvature", "fake_identity").source == "fake_suite"
    finally:
        sys.modules.pop("fake_sqnopt_plugin", None)


def test_unknown_component_name_is_a_value_error_too() -> None:
    """A bad name is a bad parameter value: ``except ValueError`` catches it (and KeyError, as
    before). Found by the fuzz suite (tests/fuzz)."""
    from sqnopt import Solver

    with pytest.raises(ValueError, match="unknown curvature 'nope'"):
        Solver(curvature="nope")
    with pytest.raises(KeyError):
        Solver(objective="nope")
