"""Shared fixtures."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp


def _find_datasets() -> Path:
    """``$SQNOPT_DATASETS``, else the first ``shared/datasets`` above the test folder (the
    checkout may sit at different depths: /work/main, /work/wt/<branch>)."""
    env = os.environ.get("SQNOPT_DATASETS")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "shared" / "datasets"
        if candidate.is_dir():
            return candidate
    return here.parents[2] / "shared" / "datasets"


DATASETS = _find_datasets()


def _register_fuzz_profiles() -> None:
    """Hypothesis profiles of the fuzz suite (tests/fuzz, docs/usage.md "Reliability"):
    ``short`` (the default: every run of the test suite, about a minute, derandomized so CI is
    reproducible) and ``long`` (>= 10,000 cases in total, random seeds). Choose with
    ``SQNOPT_FUZZ_PROFILE=long`` or pytest's ``--hypothesis-profile long``. Registered here, in
    the initial conftest, so that ``--hypothesis-profile`` finds them. No example database is
    written, and hypothesis' caches go to a temporary directory, not into the checkout."""
    try:
        from hypothesis import HealthCheck, settings
        from hypothesis.configuration import set_hypothesis_home_dir
    except ImportError:  # hypothesis is in the [test] extra; tests/fuzz skips without it
        return
    # hypothesis keeps caches in ./.hypothesis by default: keep them out of the checkout
    import tempfile

    set_hypothesis_home_dir(os.path.join(tempfile.gettempdir(), "sqnopt-hypothesis"))
    common = dict(deadline=None, database=None, print_blob=True,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                         HealthCheck.filter_too_much])
    settings.register_profile("short", max_examples=120, derandomize=True, **common)
    settings.register_profile("long", max_examples=1500, derandomize=False, **common)
    settings.load_profile(os.environ.get("SQNOPT_FUZZ_PROFILE", "short"))


_register_fuzz_profiles()

def pytest_configure(config: pytest.Config) -> None:
    """Installed third-party plugins (entry points of the ``sqnopt`` group) stay out of the
    registry the tests see: a plugin installed in this environment must not change what the
    suite checks (the "every registered component" parametrisations, names it could shadow).
    The registry reads ``SQNOPT_LOAD_PLUGINS`` when it first loads (empty: no installed plugin);
    child processes inherit it, and ``sqnopt_env`` passes it on. A value set before pytest
    starts is kept (``SQNOPT_LOAD_PLUGINS=bbscale``). Tests about installed plugins take the
    ``installed_plugins`` fixture. A hook rather than module code: a test that imports from
    ``conftest`` runs this module again, which must not undo the fixture."""
    os.environ.setdefault("SQNOPT_LOAD_PLUGINS", "")


@pytest.fixture
def installed_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The registry as a user's session builds it: every installed plugin loads (the registry
    is rebuilt now, and again after the test)."""
    from sqnopt.registry import reset_registry

    monkeypatch.delenv("SQNOPT_LOAD_PLUGINS", raising=False)
    reset_registry()
    yield
    reset_registry()


def sqnopt_env(**extra: str) -> dict[str, str]:
    """A small environment for a child process that imports the same sqnopt as this process
    (the checkout built in place, or the installed package). Run such a child outside the
    checkout (``cwd``), whose uncompiled ``sqnopt/`` would otherwise shadow an installed one."""
    import sqnopt

    env = {"PYTHONPATH": str(Path(sqnopt.__file__).resolve().parents[1]),
           "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "OPENBLAS_NUM_THREADS": "1",
           "MPLBACKEND": "Agg", "HOME": os.environ.get("HOME", "/tmp")}
    if "SQNOPT_LOAD_PLUGINS" in os.environ:   # the same installed plugins as this process
        env["SQNOPT_LOAD_PLUGINS"] = os.environ["SQNOPT_LOAD_PLUGINS"]
    env.update(extra)
    return env


def dataset_path(name: str) -> Path:
    """Path of a file in ../shared/datasets; skips the test when it is absent."""
    p = DATASETS / name
    if not p.exists():
        pytest.skip(f"dataset {name} not available at {p}")
    return p


@pytest.fixture
def boxes() -> tuple[np.ndarray, np.ndarray]:
    from sqnopt.datasets import make_boxes

    return make_boxes(400, 12, random_state=0)


def gaussian_classes(n: int = 300, p: int = 6, k: int = 3, seed: int = 0
                     ) -> tuple[np.ndarray, np.ndarray]:
    """``n`` samples in ``p`` dimensions from ``k`` unit Gaussians around centres drawn with
    scale 2; labels ``0..k-1`` in turn (every class present): a small softmax problem."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(k, p)) * 2
    y = np.arange(n) % k
    return centers[y] + rng.normal(size=(n, p)), y


def sparse_linear_classes(n_samples: int, n_features: int, density: float, seed: int = 0
                          ) -> tuple[np.ndarray, np.ndarray]:
    """A dense array with a fraction ``density`` of Gaussian entries (the rest 0) and labels
    +-1 from a random linear rule plus noise: a small margin problem to store dense or sparse
    (the scaled and lazy iterates' twin tests)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features)) * (rng.random((n_samples, n_features)) < density)
    w_true = rng.normal(size=n_features)
    y = np.where(X @ w_true + 0.3 * rng.normal(size=n_samples) > 0, 1.0, -1.0)
    return X, y


def scipy_minimum(objective: object) -> float:
    """``min F`` of a compiled objective kernel by SciPy's L-BFGS-B from ``w = 0`` to gradient
    1e-12: the reference the full-batch solvers are checked against."""
    import scipy.optimize

    obj = objective

    def fg(w: np.ndarray) -> tuple[float, np.ndarray]:
        g = np.empty_like(w)
        return float(obj.full_gradient(w, g)), g  # type: ignore[attr-defined]

    res = scipy.optimize.minimize(fg, np.zeros(obj.n_params), jac=True,  # type: ignore[attr-defined]
                                  method="L-BFGS-B",
                                  options={"gtol": 1e-12, "ftol": 0.0, "maxiter": 2000})
    return float(res.fun)


def as_format(X: np.ndarray, fmt: str, dtype: type) -> object:
    """X as dense or CSR in the given dtype."""
    Xc = np.ascontiguousarray(X, dtype=dtype)
    return sp.csr_matrix(Xc) if fmt == "csr" else Xc


def curvature_problem(n: int) -> object:
    """The :class:`~sqnopt.interfaces.Problem` a curvature model's ``init`` needs for ``n``
    parameters (one block, no intercept; the kernels read only ``n_params``)."""
    from sqnopt.interfaces import Problem

    return Problem(n_samples=10, n_features=n, dim=n, n_blocks=1, n_params=n, lam=0.0,
                   fit_intercept=False, capabilities=frozenset())


def curvature_twin_iterates(objective: object, compiled: object, twin: object, X: object,
                            y: object, *, max_iter: int = 12
                            ) -> tuple[np.ndarray, object, np.ndarray, object]:
    """The iterates (and results) of a compiled curvature model and its NumPy twin on the same
    injected batch sequence: ``Fixed(60)`` gradient batches, ``Fixed(40)`` curvature batches,
    Armijo steps, an intercept, a callback at every iteration."""
    from sqnopt import Armijo, Fixed, Solver

    seq = np.random.default_rng(0).integers(0, 300, size=50_000).astype(np.intp)
    out: list[object] = []
    for model in (compiled, twin):
        its: list[np.ndarray] = []
        res = Solver(objective, model, Fixed(60), Armijo(), curvature_schedule=Fixed(40),
                     batch_sequence=seq, max_iter=max_iter, report_every=1, fit_intercept=True,
                     callback=lambda info: its.append(info.w.copy())).fit(X, y)
        out += [np.array(its), res]
    return out[0], out[1], out[2], out[3]  # type: ignore[return-value]
