"""When the example plugin in plugins/ is installed, sqnopt finds it by name (CI installs it)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from sqnopt import Solver
from sqnopt.datasets import make_boxes
from sqnopt.registry import get_registry, reset_registry

pytestmark = [pytest.mark.skipif(importlib.util.find_spec("sqnopt_bbscale") is None,
                                 reason="plugins/sqnopt-bbscale is not installed"),
              pytest.mark.usefixtures("installed_plugins")]   # conftest isolates them otherwise


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
