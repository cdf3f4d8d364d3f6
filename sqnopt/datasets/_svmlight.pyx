# cython: language_level=3
"""The compiled svmlight / LIBSVM line parser: a buffer of complete lines into CSR arrays.

One call parses the lines of ``buf[start:stop]`` (every line ends with ``\\n`` except perhaps
the last one of the file) into caller-owned arrays, without the GIL and without a Python object
per line. It accepts the grammar of :func:`sqnopt.datasets._io._parse_line` -- the label, an
optional first ``qid:...`` token, then ``index:value`` tokens with non-negative, strictly
increasing integer indices below ``2**31``, a comment from ``#`` to the end of the line, blank
lines, any ASCII whitespace (``\\r`` of CRLF line ends included) -- and stops at the first line
it does not handle itself, so that the Python reader turns that line into its error message (or
reads it, for the rare forms this parser leaves to Python: underscores in numbers, a ``-0``
index, NUL bytes, numbers longer than 400 characters).

Numbers equal Python's ``float()`` to the last bit. A decimal literal ``[+-]d*[.d*][(e|E)[+-]d+]``
whose digits fit in an exact double (at most 19 significant digits whose integer is
``<= 2**53``) and whose decimal exponent ``e`` satisfies ``|e| <= 22`` is
``m * 10**e`` or ``m / 10**-e``: both operands are exact doubles, so the one rounded
operation gives the correctly rounded value (Clinger, *How to read floating point numbers
accurately*, PLDI 1990, the fast path). Any other literal goes to the C library's ``strtod``,
which is correctly rounded too (glibc, the BSDs and macOS; the result is only taken when
``strtod`` consumed exactly the token, so a locale whose decimal point is not ``.`` sends the
token to Python instead); both agree with ``float()``, which rounds correctly (Gay's algorithm).
"""

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport strtod
from libc.string cimport memchr, memcpy

cimport cython
from cython cimport floating

cdef enum:
    ST_DONE = 0   # every line of buf[start:stop] parsed
    ST_LIMIT = 1  # row_limit rows reached; pos is the start of the next line
    ST_GROW = 2   # an output array is full; grow it and call again from pos
    ST_SLOW = 3   # the line at pos needs the Python parser (an error, or a rare form)

#: Status codes returned by :func:`parse_lines`.
DONE = ST_DONE
LIMIT = ST_LIMIT
GROW = ST_GROW
SLOW = ST_SLOW

cdef int64_t MAX_INDEX = 2147483647
cdef uint64_t TWO53 = 9007199254740992
cdef int STRTOD_BUF = 400

cdef double[23] POW10 = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
                         1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]


cdef inline bint _space(unsigned char c) noexcept nogil:
    # bytes.split()'s whitespace without the line end: space, \t, \v, \f, \r
    return c == 32 or (9 <= c <= 13 and c != 10)


cdef inline bint _stop(const unsigned char* p, const unsigned char* end) noexcept nogil:
    # a token ends at whitespace, at a comment or at the end of the line
    return p == end or _space(p[0]) or p[0] == 35  # '#'


cdef const unsigned char* _strtod(const unsigned char* s, const unsigned char* p,
                                  double* out) noexcept nogil:
    """The C library's correctly rounded ``strtod`` of the decimal literal ``s[:p - s]``
    (already checked against the grammar); NULL when it does not take the whole token."""
    cdef char buf[400]
    cdef char* endp
    cdef Py_ssize_t n = p - s
    if n >= STRTOD_BUF:
        return NULL
    memcpy(buf, s, n)
    buf[n] = 0
    out[0] = strtod(buf, &endp)
    if endp != buf + n:
        return NULL
    return p


cdef inline const unsigned char* _number(const unsigned char* s, const unsigned char* end,
                                         double* out) noexcept nogil:
    """Parse the number token starting at ``s``; the pointer past it, or NULL when the token is
    not a decimal literal this parser reads exactly (the caller hands the line to Python)."""
    cdef const unsigned char* p = s
    cdef bint neg = False, digits = False, exact = True
    cdef uint64_t mant = 0
    cdef int ndig = 0
    cdef int64_t exp10 = 0, e = 0
    cdef bint eneg = False
    cdef unsigned int c
    cdef double v
    if p < end and (p[0] == 43 or p[0] == 45):  # + -
        neg = p[0] == 45
        p += 1
    while p < end:
        c = <unsigned int>p[0] - 48
        if c > 9:
            break
        digits = True
        if ndig < 19:
            if mant != 0 or c != 0:
                mant = mant * 10 + c
                ndig += 1
        else:
            exp10 += 1
            if c != 0:
                exact = False
        p += 1
    if p < end and p[0] == 46:  # '.'
        p += 1
        while p < end:
            c = <unsigned int>p[0] - 48
            if c > 9:
                break
            digits = True
            if ndig < 19:
                if mant != 0 or c != 0:
                    mant = mant * 10 + c
                    ndig += 1
                exp10 -= 1
            elif c != 0:
                exact = False
            p += 1
    if not digits:
        return NULL
    if p < end and (p[0] == 101 or p[0] == 69):  # e E
        p += 1
        if p < end and (p[0] == 43 or p[0] == 45):
            eneg = p[0] == 45
            p += 1
        if not (p < end and 48 <= p[0] <= 57):
            return NULL
        while p < end and 48 <= p[0] <= 57:
            if e < 100000000:
                e = e * 10 + (p[0] - 48)
            p += 1
        exp10 += -e if eneg else e
    if not _stop(p, end):
        return NULL
    if exact:
        if mant == 0:
            out[0] = -0.0 if neg else 0.0
            return p
        if mant <= TWO53 and -22 <= exp10 <= 22:
            v = <double>mant
            if exp10 >= 0:
                v = v * POW10[exp10]
            else:
                v = v / POW10[-exp10]
            out[0] = -v if neg else v
            return p
    return _strtod(s, p, out)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _parse(const unsigned char* base, Py_ssize_t start, Py_ssize_t stop,
                double* labels, int64_t* indptr, int32_t* indices, floating* data,
                Py_ssize_t row_cap, Py_ssize_t nnz_cap, Py_ssize_t row_limit,
                Py_ssize_t* row_io, Py_ssize_t* nnz_io, Py_ssize_t* pos_io,
                Py_ssize_t* lines_io) noexcept nogil:
    cdef const unsigned char* p = base + start
    cdef const unsigned char* end = base + stop
    cdef const unsigned char* line
    cdef const unsigned char* eol
    cdef const unsigned char* q
    cdef Py_ssize_t row = row_io[0], nnz = nnz_io[0], lines = 0, nnz_line
    cdef double label, value
    cdef int64_t idx, prev
    cdef bint first
    cdef unsigned int c
    cdef int status = ST_DONE
    while p < end:
        line = p
        eol = <const unsigned char*>memchr(p, 10, end - p)
        if eol == NULL:
            eol = end
        # skip leading whitespace; a blank or comment line is no row
        while p < eol and _space(p[0]):
            p += 1
        if p == eol or p[0] == 35:
            p = eol + 1 if eol < end else end
            lines += 1
            continue
        if row >= row_limit:
            p = line
            status = ST_LIMIT
            break
        if row >= row_cap:
            p = line
            status = ST_GROW
            break
        q = _number(p, eol, &label)
        if q == NULL or not (label - label == 0.0):  # not a number, or not finite
            p = line
            status = ST_SLOW
            break
        p = q
        nnz_line = nnz
        prev = -1
        first = True
        while True:
            while p < eol and _space(p[0]):
                p += 1
            if p == eol or p[0] == 35:
                break
            if first and eol - p >= 3 and p[0] == 113 and p[1] == 105 and p[2] == 100:  # qid
                first = False
                q = p
                while not _stop(q, eol) and q[0] != 58:
                    q += 1
                if _stop(q, eol):  # 'qid...' without ':'
                    status = ST_SLOW
                    break
                while not _stop(q, eol):
                    q += 1
                p = q
                continue
            first = False
            if p[0] == 43:  # '+'
                p += 1
            if not (p < eol and 48 <= p[0] <= 57):
                status = ST_SLOW
                break
            idx = 0
            q = p + 9 if eol - p > 9 else eol  # nine digits cannot pass MAX_INDEX
            while p < q:
                c = <unsigned int>p[0] - 48
                if c > 9:
                    break
                idx = idx * 10 + c
                p += 1
            while p < eol:
                c = <unsigned int>p[0] - 48
                if c > 9:
                    break
                idx = idx * 10 + c
                if idx > MAX_INDEX:
                    break
                p += 1
            if idx > MAX_INDEX or idx <= prev or not (p < eol and p[0] == 58):  # ':'
                status = ST_SLOW
                break
            p += 1
            c = <unsigned int>p[0] - 48 if p < eol else 10
            if c <= 9 and (p + 1 == eol or _space(p[1]) or p[1] == 35):  # one digit (one-hot)
                value = <double>c
                q = p + 1
            else:
                q = _number(p, eol, &value)
            if q == NULL or not (value - value == 0.0):
                status = ST_SLOW
                break
            if nnz >= nnz_cap:
                status = ST_GROW
                break
            p = q
            prev = idx
            indices[nnz] = <int32_t>idx
            data[nnz] = <floating>value
            nnz += 1
        if status != ST_DONE:
            nnz = nnz_line
            p = line
            break
        labels[row] = label
        row += 1
        indptr[row] = nnz
        p = eol + 1 if eol < end else end
        lines += 1
    row_io[0] = row
    nnz_io[0] = nnz
    pos_io[0] = p - base
    lines_io[0] = lines
    return status


def parse_lines(const unsigned char[::1] buf, Py_ssize_t start, Py_ssize_t stop,
                double[::1] labels, int64_t[::1] indptr, int32_t[::1] indices,
                floating[::1] data, Py_ssize_t row, Py_ssize_t nnz, Py_ssize_t row_limit):
    """Parse the lines of ``buf[start:stop]`` into the arrays, from row ``row`` and stored
    value ``nnz`` on (``indptr[row]`` must already hold ``nnz``).

    Returns ``(status, pos, row, nnz, lines)``: the status (:data:`DONE`, :data:`LIMIT` when
    ``row_limit`` rows are filled, :data:`GROW` when ``labels``/``indptr`` or
    ``indices``/``data`` are full, :data:`SLOW` when the line at ``pos`` is one for the Python
    parser), the offset of the first line not consumed, the rows and stored values filled so
    far and the number of lines consumed (blank and comment lines included). A line is either
    wholly written or not at all.
    """
    if not (0 <= start <= stop <= buf.shape[0]):
        raise ValueError(f"bad range [{start}, {stop}) of a buffer of {buf.shape[0]} bytes")
    if indptr.shape[0] != labels.shape[0] + 1 or indices.shape[0] != data.shape[0]:
        raise ValueError("indptr needs one entry more than labels, data as many as indices")
    if not (0 <= row <= labels.shape[0] and 0 <= nnz <= indices.shape[0]):
        raise ValueError("row and nnz must lie within the arrays")
    cdef Py_ssize_t pos = start, lines = 0
    cdef int status = ST_DONE
    cdef const unsigned char* base = &buf[0] if buf.shape[0] else NULL
    cdef double* lab = &labels[0] if labels.shape[0] else NULL
    cdef int32_t* ind = &indices[0] if indices.shape[0] else NULL
    cdef floating* dat = &data[0] if data.shape[0] else NULL
    if start == stop:
        return DONE, start, row, nnz, 0
    with nogil:
        status = _parse(base, start, stop, lab, &indptr[0], ind, dat, labels.shape[0],
                        indices.shape[0], row_limit, &row, &nnz, &pos, &lines)
    return status, pos, row, nnz, lines


def find_row(const unsigned char[::1] buf, Py_ssize_t start, Py_ssize_t stop,
             Py_ssize_t row):
    """Where the ``row``-th row (0-based) of ``buf[start:stop]`` is: ``(line, rows, lines,
    pos)``, ``line`` its 0-based line offset from ``start`` and ``pos`` the offset of its first
    byte in ``buf``, or ``line = -1`` when the range holds fewer rows; ``rows`` and ``lines``
    the rows and lines counted before it (all of them when not found). A row is a line with
    anything before a comment, as :func:`parse_lines` counts them."""
    if not (0 <= start <= stop <= buf.shape[0]):
        raise ValueError(f"bad range [{start}, {stop}) of a buffer of {buf.shape[0]} bytes")
    cdef const unsigned char* base = &buf[0] if buf.shape[0] else NULL
    cdef const unsigned char* p
    cdef const unsigned char* end
    cdef const unsigned char* eol
    cdef const unsigned char* first
    cdef Py_ssize_t line = 0, seen = 0, found = -1, at = stop
    if start == stop:
        return -1, 0, 0, stop
    with nogil:
        p = base + start
        end = base + stop
        while p < end:
            first = p
            eol = <const unsigned char*>memchr(p, 10, end - p)
            if eol == NULL:
                eol = end
            while p < eol and _space(p[0]):
                p += 1
            if p < eol and p[0] != 35:
                if seen == row:
                    found = line
                    at = first - base
                    break
                seen += 1
            line += 1
            p = eol + 1 if eol < end else end
    return found, seen, line, at
