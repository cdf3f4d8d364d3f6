"""Build the plugin's Cython extensions against the installed sqnopt's .pxd files."""

from Cython.Build import cythonize
from setuptools import Extension, setup

MODULES = ("_objective", "_lsr1", "_sarah", "_step")

setup(
    ext_modules=cythonize(
        [Extension(f"sqnopt_extras.{m}", [f"sqnopt_extras/{m}.pyx"],
                   # no FMA contraction: sqnopt's dispatched kernels (sq_dot, sq_axpy),
                   # compiled into these modules, then round the same on every CPU
                   extra_compile_args=["-O3", "-ffp-contract=off"])
         for m in MODULES],
        compiler_directives={"language_level": 3, "boundscheck": False, "wraparound": False,
                             "cdivision": True},
    ),
)
