"""Build the plugin's Cython extension against the installed sqnopt's .pxd files."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [Extension("sqnopt_bbscale._kernel", ["sqnopt_bbscale/_kernel.pyx"],
                   # no FMA contraction: sqnopt's dispatched kernels (sq_dot), compiled
                   # into this module, then round the same on every CPU, as in sqnopt
                   extra_compile_args=["-O3", "-ffp-contract=off"])],
        compiler_directives={"language_level": 3, "boundscheck": False, "wraparound": False,
                             "cdivision": True},
    ),
)
