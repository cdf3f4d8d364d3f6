# cython: language_level=3
"""Bounded random integers from a NumPy bit generator, without the GIL.

``bounded_uint64(rng, n)`` is uniform on ``[0, n)``: Lemire's multiply-shift method
(D. Lemire, "Fast random integer generation in an interval", ACM TOMACS 2019), which replaces
the two 64-bit divisions of the modulo method (about 40-90 cycles each) by one 64x64->128-bit
multiply, and divides only in the rare rejection branch.
"""

from libc.stdint cimport uint64_t
from numpy.random cimport bitgen_t


cdef extern from *:
    """
    #include <stdint.h>
    static inline uint64_t sqnopt_mul_u64(uint64_t a, uint64_t b, uint64_t *lo) {
    #if defined(__SIZEOF_INT128__)
        __uint128_t m = (__uint128_t)a * (__uint128_t)b;
        *lo = (uint64_t)m;
        return (uint64_t)(m >> 64);
    #else
        uint64_t a_lo = (uint32_t)a, a_hi = a >> 32, b_lo = (uint32_t)b, b_hi = b >> 32;
        uint64_t p0 = a_lo * b_lo, p1 = a_lo * b_hi, p2 = a_hi * b_lo, p3 = a_hi * b_hi;
        uint64_t mid = (p0 >> 32) + (uint32_t)p1 + (uint32_t)p2;
        *lo = (mid << 32) | (uint32_t)p0;
        return p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
    #endif
    }
    """
    uint64_t sqnopt_mul_u64(uint64_t a, uint64_t b, uint64_t* lo) noexcept nogil


cdef inline uint64_t bounded_uint64(bitgen_t* rng, uint64_t n) noexcept nogil:
    """Uniform integer in ``[0, n)``, ``n >= 1``."""
    cdef uint64_t lo, threshold
    cdef uint64_t hi = sqnopt_mul_u64(rng.next_uint64(rng.state), n, &lo)
    if lo < n:
        threshold = (-n) % n
        while lo < threshold:
            hi = sqnopt_mul_u64(rng.next_uint64(rng.state), n, &lo)
    return hi
