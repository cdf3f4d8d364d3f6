"""Build the plugin's Cython extension against the installed sqnopt's .pxd files."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [Extension("sqnopt_bbscale._kernel", ["sqnopt_bbscale/_kernel.pyx"],
                   extra_compile_args=["-O3"])],
        compiler_directives={"language_level": 3, "boundscheck": False, "wraparound": False,
                             "cdivision": True},
    ),
)
