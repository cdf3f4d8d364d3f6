# cython: language_level=3
"""Which variant of the vector kernels of ``sqnopt/_simd.h`` this process runs.

The variant is picked from the CPU when each compiled module loads (AVX-512F, else AVX2, else
the SSE2 baseline; only the baseline off x86-64 Linux GCC builds) and can be capped with the
environment variable ``SQNOPT_SIMD=baseline|avx2|avx512f`` set before ``sqnopt`` is imported.
Every variant gives bit-identical results; only the speed differs.
"""

import os
import warnings

from sqnopt._vec cimport sq_simd_level

VARIANTS = ("baseline", "avx2", "avx512f")


def _check_environment():
    """Warn if ``SQNOPT_SIMD`` is set to a value the kernels do not know (they ignore it)."""
    value = os.environ.get("SQNOPT_SIMD")
    if value is not None and value not in VARIANTS:
        warnings.warn(f"SQNOPT_SIMD={value!r} is not one of {', '.join(VARIANTS)} and is ignored "
                      f"(the vector kernels run {VARIANTS[sq_simd_level()]!r}); unset it or use "
                      "one of those names", RuntimeWarning, stacklevel=2)


_check_environment()


def simd_variant():
    """The vector-kernel variant in use: ``"baseline"``, ``"avx2"`` or ``"avx512f"``."""
    return VARIANTS[sq_simd_level()]
