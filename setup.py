"""Build the Cython extensions of sqnopt.

Every ``.pyx`` under ``sqnopt/`` becomes one extension module of the same dotted name.
Compiler directives and C flags live here and nowhere else.

The build uses every core: Cython translates the modules in parallel (``cythonize``'s
``nthreads``) and the C files compile in parallel (``build_ext``'s ``parallel``).
``SQNOPT_BUILD_JOBS=N`` caps both (``1``: serial); ``build_ext -j N`` on the command line
overrides the compile jobs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import Cython
import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent

COMPILER_DIRECTIVES = {
    "language_level": 3,
    "boundscheck": False,
    "wraparound": False,
    "initializedcheck": False,
    "cdivision": True,
    "nonecheck": False,
    "embedsignature": True,
    "cpow": True,
}

# -ffp-contract=off: no fused multiply-add contraction, so the compiled loop does exactly the
# arithmetic NumPy does and the compiled and Python paths give bit-identical iterates.
# -g0: no debug information (the interpreter's default CFLAGS ask for it): shorter compiles
# and smaller extensions.
EXTRA_COMPILE_ARGS = [] if sys.platform == "win32" else ["-O3", "-ffp-contract=off", "-g0"]
#: The extension that holds Cython's utility code (memoryviews, type imports, ...) once for the
#: whole package instead of once in every module (Cython >= 3.1): less C to compile per module.
SHARED_UTILITY = "sqnopt._cyutility"
DEFINE_MACROS = [("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")]


#: The module that holds the thread pool of the parallel passes (sqnopt/_pool.h): POSIX
#: threads (``-pthread``); a compiler without them builds the serial pool (same results).
POOL_MODULE = "sqnopt._parallel"
POOL_ARGS = [] if sys.platform == "win32" else ["-pthread"]


def extensions() -> list[Extension]:
    exts = []
    for pyx in sorted((HERE / "sqnopt").rglob("*.pyx")):
        rel = pyx.relative_to(HERE)
        module = ".".join(rel.with_suffix("").parts)
        pool = module == POOL_MODULE
        exts.append(
            Extension(
                module,
                [str(rel)],
                # "sqnopt": the vector kernels' header (sqnopt/_simd.h, declared in _vec.pxd)
                # and the thread pool's (sqnopt/_pool.h, included by _parallel.pyx only)
                include_dirs=[np.get_include(), "sqnopt"],
                depends=["sqnopt/_simd.h", "sqnopt/_simd_kernels.h"]
                        + (["sqnopt/_pool.h"] if pool else []),
                define_macros=DEFINE_MACROS,
                extra_compile_args=EXTRA_COMPILE_ARGS + (POOL_ARGS if pool else []),
                extra_link_args=POOL_ARGS if pool else [],
            )
        )
    exts.append(Extension(SHARED_UTILITY, [SHARED_UTILITY.replace(".", "/") + ".c"],
                          define_macros=DEFINE_MACROS, extra_compile_args=EXTRA_COMPILE_ARGS))
    return exts


def build_jobs() -> int:
    """``SQNOPT_BUILD_JOBS`` if set, else the cores this process may use."""
    env = os.environ.get("SQNOPT_BUILD_JOBS", "").strip()
    if env:
        try:
            jobs = int(env)
        except ValueError:
            sys.exit(f"SQNOPT_BUILD_JOBS must be a positive integer, got {env!r}")
        if jobs < 1:
            sys.exit(f"SQNOPT_BUILD_JOBS must be a positive integer, got {env!r}")
        return jobs
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class ParallelBuildExt(build_ext):
    """``build_ext`` compiling the C files in parallel unless ``-j`` says otherwise."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if not self.parallel:
            self.parallel = build_jobs()


if __name__ == "__main__":  # also under pip (setuptools runs this file as __main__);
    # bench/native/build.py imports the directives and flags above without building sqnopt
    if tuple(int(p) for p in Cython.__version__.split(".")[:2] if p.isdigit()) < (3, 1):
        # the shared utility module (shared_utility_qualified_name) came with Cython 3.1
        sys.exit(f"building sqnopt needs Cython >= 3.1, found {Cython.__version__}: "
                 "pip install 'cython>=3.1'")
    JOBS = build_jobs()
    setup(
        ext_modules=cythonize(
            extensions(),
            compiler_directives=COMPILER_DIRECTIVES,
            nthreads=JOBS if JOBS > 1 else 0,
            shared_utility_qualified_name=SHARED_UTILITY,
        ),
        cmdclass={"build_ext": ParallelBuildExt},
    )
