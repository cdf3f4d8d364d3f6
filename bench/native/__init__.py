"""Compiled benchmark baselines, kept out of the sqnopt wheel.

* ``_baseline``: bare loops (SGD on the squared hinge, sparse Pegasos) with the driver's
  arithmetic and none of its structure, and ``calibration_workload``, the fixed work that
  normalises benchmark figures across machines;
* ``_floor``: BLAS ``ddot``/``daxpy`` flop floors;
* ``_sag``: a compiled SAG (Schmidt, Le Roux & Bach), the papers' variance-reduced baseline;
* ``_forkjoin``: the fixed cost of an OpenMP parallel region (built with ``-fopenmp`` where
  the compiler has it), beside which ``bench/parallel_passes.py`` times sqnopt's own pool.

``load(name)`` returns the module, building them (``bench/native/build.py``) when
they are missing or older than their sources or than the sqnopt they were built against::

    from native import load          # bench scripts and pytest (bench/ is on sys.path)
    axpy_dot_floor = load("_floor").axpy_dot_floor

A build needs Cython (>= 3.1) and setuptools, both in sqnopt's ``[test]`` extra, and a C
compiler; without the first two :func:`load` raises :class:`BuildToolsMissing` (the tests that
use the baselines skip with its message).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent

__all__ = ["BuildToolsMissing", "load"]


class BuildToolsMissing(ImportError):
    """A baseline must be built and Cython or setuptools is not installed."""


def _builder() -> ModuleType:
    """``bench/native/build.py`` as a module (loaded by path: ``build`` is also the name of a
    PyPA package)."""
    spec = importlib.util.spec_from_file_location("_sqnopt_bench_native_build", HERE / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_LOADED: dict[str, ModuleType] = {}


def load(name: str) -> ModuleType:
    """The compiled baseline module ``name`` (``"_baseline"``, ``"_floor"``, ``"_sag"``,
    ``"_forkjoin"``).

    Checked (and built when stale) once per process; later calls return the loaded module at
    the cost of a dictionary lookup, so benchmarks may call this inside a timed run."""
    if name in _LOADED:
        return _LOADED[name]
    _build = _builder()
    if name not in _build.MODULES:
        raise ValueError(f"unknown baseline {name!r}; one of {', '.join(_build.MODULES)}")
    if _build.stale(name):
        missing = [m for m in ("Cython", "setuptools") if importlib.util.find_spec(m) is None]
        if missing:
            raise BuildToolsMissing(
                f"bench/native/{name} must be built and {' and '.join(missing)} "
                f"{'is' if len(missing) == 1 else 'are'} not installed: "
                f"pip install 'cython>=3.1' setuptools (both in sqnopt's [test] extra)")
        # in a child process (a stale extension loaded here could not be replaced afterwards),
        # against the sqnopt this process imports (the child's sys.path starts at bench/native)
        sqnopt_home = str(_build._sqnopt_dir().parent)
        path = os.pathsep.join(filter(None, [sqnopt_home, os.environ.get("PYTHONPATH")]))
        subprocess.run([sys.executable, str(HERE / "build.py")], check=True,
                       env={**os.environ, "PYTHONPATH": path})
    module = importlib.import_module(f"{__name__}.{name}")
    _LOADED[name] = module
    return module
