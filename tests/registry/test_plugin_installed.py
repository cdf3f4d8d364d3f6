"""When the example plugins in plugins/ are installed, sqnopt finds them by name (CI installs
every package of plugins/)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from sqnopt import Solver
from sqnopt.datasets import make_boxes
from sqnopt.registry import get_registry, reset_registry

pytestmark = pytest.mark.usefixtures("installed_plugins")   # conftest isolates them otherwise


def _installed(module: str, package: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(importlib.util.find_spec(module) is None,
                              reason=f"plugins/{package} is not installed")


@_installed("sqnopt_bbscale", "sqnopt-bbscale")
def test_installed_plugin_is_discovered_and_compiled() -> None:
    reset_registry()
    try:
        assert get_registry().get("curvature", "bbscale").source == "bbscale"
        X, y = make_boxes(300, 6, random_state=1)
        res = Solver("squared_hinge", "bbscale", ("fixed", {"size": 5}), max_iter=40,
                     random_state=0).fit(X, y)
        assert res.compiled and np.isfinite(res.fun) and res.n_pairs_accepted > 0
    finally:
        reset_registry()


@_installed("sqnopt_extras", "sqnopt-extras")
def test_installed_extras_are_discovered_and_compiled() -> None:
    """The second example registers one component of four kinds through one entry point; a
    composition of all four by name runs the compiled loop."""
    reset_registry()
    try:
        reg = get_registry()
        for kind, name in (("objective", "modified_huber"), ("curvature", "lsr1"),
                           ("gradient", "sarah"), ("step", "polyak_decay")):
            assert reg.get(kind, name).source == "extras"
        X, y = make_boxes(300, 6, random_state=1)
        res = Solver("modified_huber", "lsr1", ("fixed", {"size": 50}), "polyak_decay",
                     gradient="sarah", max_iter=40, random_state=0).fit(X, y)
        assert res.compiled and res.path == "generic" and np.isfinite(res.fun)
        assert res.n_pairs_accepted > 0
    finally:
        reset_registry()
