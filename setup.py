"""Build the Cython extensions of sqnopt.

Every ``.pyx`` under ``sqnopt/`` becomes one extension module of the same dotted name.
Compiler directives and C flags live here and nowhere else.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

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
EXTRA_COMPILE_ARGS = [] if sys.platform == "win32" else ["-O3", "-ffp-contract=off"]
DEFINE_MACROS = [("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")]


def extensions() -> list[Extension]:
    exts = []
    for pyx in sorted((HERE / "sqnopt").rglob("*.pyx")):
        rel = pyx.relative_to(HERE)
        module = ".".join(rel.with_suffix("").parts)
        exts.append(
            Extension(
                module,
                [str(rel)],
                # "sqnopt": the vector kernels' header (sqnopt/_simd.h, declared in _simd.pxd)
                include_dirs=[np.get_include(), "sqnopt"],
                depends=["sqnopt/_simd.h", "sqnopt/_simd_kernels.h"],
                define_macros=DEFINE_MACROS,
                extra_compile_args=EXTRA_COMPILE_ARGS,
            )
        )
    return exts


if __name__ == "__main__":  # also under pip (setuptools runs this file as __main__);
    # bench/native/build.py imports the directives and flags above without building sqnopt
    setup(
        ext_modules=cythonize(
            extensions(),
            compiler_directives=COMPILER_DIRECTIVES,
            nthreads=int(os.environ.get("SQNOPT_BUILD_JOBS", "0")),
        ),
    )
