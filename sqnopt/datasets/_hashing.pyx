# cython: language_level=3
"""Hash bags of many strings at once: the categorical encoding of
:class:`~sqnopt.datasets.CTRFeaturizer` (a value's bag is ``crc32(f"{seed}\\x1f{value}") %
n_bags``) computed without the GIL over the bytes of an Arrow string array.

CRC-32 here is zlib's (the reflected IEEE 802.3 polynomial ``0xEDB88320``, table driven);
continuing the checksum of the prefix over the value's bytes gives ``zlib.crc32(prefix +
value)``. A value of ASCII whitespace only is missing (no bag, code -1), as ``str.strip()`` sees
it; a value with a non-ASCII byte is marked -2 for the caller to decide in Python (Unicode
whitespace).
"""

from libc.stdint cimport int64_t, uint32_t

cdef uint32_t[256] TABLE
cdef uint32_t POLY = 0xEDB88320
cdef uint32_t ONES = 0xFFFFFFFF


cdef void _init_table() noexcept:
    cdef uint32_t c
    cdef int n, k
    for n in range(256):
        c = n
        for k in range(8):
            if c & 1:
                c = POLY ^ (c >> 1)
            else:
                c = c >> 1
        TABLE[n] = c


_init_table()


cdef inline bint _blank(unsigned char c) noexcept nogil:
    # str.strip()'s ASCII whitespace: \t \n \v \f \r, \x1c-\x1f and space
    return c == 32 or (9 <= c <= 13) or (28 <= c <= 31)


def hash_bags(const unsigned char[::1] data, const int64_t[::1] offsets, unsigned long prefix_crc,
              long n_bags, int64_t[::1] out):
    """``out[i]`` = the bag of string ``i`` (bytes ``data[offsets[i]:offsets[i + 1]]``):
    ``crc32`` continued from ``prefix_crc`` over its bytes, modulo ``n_bags``; -1 for a blank
    string, -2 for one with a non-ASCII byte."""
    cdef Py_ssize_t n = offsets.shape[0] - 1, i, j
    cdef int64_t a, b
    cdef uint32_t crc, start = (<uint32_t>prefix_crc) ^ ONES, bags = <uint32_t>n_bags
    cdef bint blank, ascii
    cdef unsigned char c
    if n < 0 or out.shape[0] != n:
        raise ValueError("out needs one entry per string (len(offsets) - 1)")
    if n_bags < 1:
        raise ValueError("n_bags must be >= 1")
    if n and (offsets[0] < 0 or offsets[n] > data.shape[0]):
        raise ValueError("offsets outside the data")
    for i in range(n):
        if offsets[i + 1] < offsets[i]:
            raise ValueError("offsets decrease")
    with nogil:
        for i in range(n):
            a = offsets[i]
            b = offsets[i + 1]
            crc = start
            blank = True
            ascii = True
            for j in range(a, b):
                c = data[j]
                if c >= 128:
                    ascii = False
                elif not _blank(c):
                    blank = False
                crc = TABLE[(crc ^ c) & 0xFF] ^ (crc >> 8)
            if not ascii:
                out[i] = -2
            elif blank:
                out[i] = -1
            else:
                out[i] = <int64_t>((crc ^ ONES) % bags)
