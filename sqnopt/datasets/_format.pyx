# cython: language_level=3
"""Compiled text formatting of sparse rows (svmlight and Vowpal Wabbit lines), without the GIL.

:func:`format_rows` is the hot loop of :func:`sqnopt.datasets.write_svmlight` and
:func:`sqnopt.datasets.write_vw`; its pure-Python twin is
``sqnopt.datasets._write.format_rows_python`` (the tests compare them byte for byte).

Numbers are written as by the twin: a value equal to an integer of magnitude below ``1e15``
as that integer (``1``, ``-3``, ``0``), any other finite value with 15 significant digits
(``%.15g``) when that reads back to the same double, else with 17 (which always does).
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.math cimport fabs, floor
from libc.stdio cimport snprintf
from libc.stdlib cimport free, malloc, realloc, strtod
from libc.string cimport memcpy

cdef enum:
    # Bytes one number can take at most: sign, 17 digits, point, exponent, terminator.
    NUMBER_MAX = 32


cdef inline Py_ssize_t _write_uint(char* out, unsigned long long v) noexcept nogil:
    cdef char tmp[24]
    cdef Py_ssize_t n = 0, k
    if v == 0:
        out[0] = 48
        return 1
    while v:
        tmp[n] = <char> (48 + v % 10)
        v //= 10
        n += 1
    for k in range(n):
        out[k] = tmp[n - 1 - k]
    return n


cdef inline Py_ssize_t _write_double(char* out, double v) noexcept nogil:
    cdef Py_ssize_t n
    if v == floor(v) and fabs(v) < 1e15:
        if v < 0:
            out[0] = 45
            return 1 + _write_uint(out + 1, <unsigned long long> (-v))
        return _write_uint(out, <unsigned long long> v)
    n = snprintf(out, NUMBER_MAX, "%.15g", v)
    if strtod(out, NULL) != v:
        n = snprintf(out, NUMBER_MAX, "%.17g", v)
    return n


def format_rows(const long long[::1] indptr, const long long[::1] indices,
                const double[::1] data, const double[::1] labels, long long index_offset,
                bytes separator):
    """The text lines ``<label><separator><index + index_offset>:<value> ...`` of CSR rows,
    one ``\\n``-terminated line per row, as bytes.

    The caller (Python) has checked the shapes, that ``indptr`` is a valid CSR pointer over
    ``indices``/``data`` and that every value is finite."""
    cdef Py_ssize_t n_rows = labels.shape[0]
    cdef Py_ssize_t i, p, row_start, row_end
    cdef Py_ssize_t sep_len = len(separator)
    cdef const char* sep = separator
    cdef Py_ssize_t cap, used = 0, need
    cdef char* buf
    cdef char* grown
    cdef bint failed = False
    if indptr.shape[0] != n_rows + 1:
        raise ValueError(f"indptr has {indptr.shape[0]} entries for {n_rows} rows")
    if n_rows and (indptr[0] != 0 or indptr[n_rows] > indices.shape[0]
                   or indptr[n_rows] > data.shape[0]):
        raise ValueError("indptr does not point into indices and data")
    cap = 64 + n_rows * (NUMBER_MAX + sep_len + 1) + (indptr[n_rows] if n_rows else 0) * 12
    buf = <char*> malloc(cap)
    if buf == NULL:
        raise MemoryError()
    with nogil:
        for i in range(n_rows):
            row_start = indptr[i]
            row_end = indptr[i + 1]
            need = used + NUMBER_MAX + sep_len + 1 + (row_end - row_start) * (2 * NUMBER_MAX + 2)
            if need > cap:
                while cap < need:
                    cap *= 2
                grown = <char*> realloc(buf, cap)
                if grown == NULL:
                    failed = True
                    break
                buf = grown
            used += _write_double(buf + used, labels[i])
            memcpy(buf + used, sep, sep_len)
            used += sep_len
            for p in range(row_start, row_end):
                if p > row_start:
                    buf[used] = 32
                    used += 1
                used += _write_uint(buf + used, <unsigned long long> (indices[p] + index_offset))
                buf[used] = 58
                used += 1
                used += _write_double(buf + used, data[p])
            buf[used] = 10
            used += 1
    if failed:
        free(buf)
        raise MemoryError()
    try:
        return PyBytes_FromStringAndSize(buf, used)
    finally:
        free(buf)
