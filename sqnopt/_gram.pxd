# cython: language_level=3
"""The pairs of one sparse row's entries added into a triangle of a Gram-type matrix: the
Newton Hessian's ``sum_i D_i x_i x_i'`` (:mod:`sqnopt.curvature._newton`) and the Böhning
bound's ``sum_i s_i x_i x_i'`` (:mod:`sqnopt.curvature._precond_lbfgs`).

``H`` is ``n x n``; the entry of the pair ``(p, q)``, ``p <= q``, is ``H[idx[p] n + idx[q]]``
-- the upper triangle of a row-major matrix, which is the lower triangle of a column-major one
-- so the row's indices must increase strictly (a canonical CSR row). Four entries ``p`` at a
time: each later entry ``q`` is loaded once for four updates, which keeps the
read-modify-writes of ``H`` (a scatter, one per pair) the only memory traffic per pair. Every
entry of ``H`` receives one product per row, so a sum over rows in order is the same to the
bit whatever the blocking. The diagonal receives ``diag`` times its product (``0.5``: the
Newton kernel's fold adds the transpose; ``1``: the whole product).
"""

ctypedef fused gram_index:
    int
    Py_ssize_t


cdef inline void add_pairs(double* H, Py_ssize_t n, const gram_index* idx, const double* val,
                           Py_ssize_t m, double coef, double diag) noexcept nogil:
    """``H[idx[p], idx[q]] += coef val[p] val[q]`` for ``p < q``, ``diag coef val[p]^2`` on
    the diagonal."""
    cdef Py_ssize_t p = 0, q, j
    cdef double a0, a1, a2, a3, v
    cdef double* r0
    cdef double* r1
    cdef double* r2
    cdef double* r3
    while p + 3 < m:
        r0 = H + idx[p] * n
        r1 = H + idx[p + 1] * n
        r2 = H + idx[p + 2] * n
        r3 = H + idx[p + 3] * n
        a0 = coef * val[p]
        a1 = coef * val[p + 1]
        a2 = coef * val[p + 2]
        a3 = coef * val[p + 3]
        r0[idx[p]] += diag * a0 * val[p]
        r0[idx[p + 1]] += a0 * val[p + 1]
        r0[idx[p + 2]] += a0 * val[p + 2]
        r0[idx[p + 3]] += a0 * val[p + 3]
        r1[idx[p + 1]] += diag * a1 * val[p + 1]
        r1[idx[p + 2]] += a1 * val[p + 2]
        r1[idx[p + 3]] += a1 * val[p + 3]
        r2[idx[p + 2]] += diag * a2 * val[p + 2]
        r2[idx[p + 3]] += a2 * val[p + 3]
        r3[idx[p + 3]] += diag * a3 * val[p + 3]
        for q in range(p + 4, m):
            j = idx[q]
            v = val[q]
            r0[j] += a0 * v
            r1[j] += a1 * v
            r2[j] += a2 * v
            r3[j] += a3 * v
        p += 4
    while p < m:
        r0 = H + idx[p] * n
        a0 = coef * val[p]
        r0[idx[p]] += diag * a0 * val[p]
        for q in range(p + 1, m):
            r0[idx[q]] += a0 * val[q]
        p += 1


cdef inline void add_pairs_ones(double* H, Py_ssize_t n, const gram_index* idx, Py_ssize_t m,
                                double coef, double diag) noexcept nogil:
    """:func:`add_pairs` for a row whose values are all 1: every product is ``coef`` exactly
    (``diag coef`` on the diagonal), so the loads of the values and the multiplies go, with
    the same bits."""
    cdef Py_ssize_t p = 0, q, j
    cdef double h = diag * coef
    cdef double* r0
    cdef double* r1
    cdef double* r2
    cdef double* r3
    while p + 3 < m:
        r0 = H + idx[p] * n
        r1 = H + idx[p + 1] * n
        r2 = H + idx[p + 2] * n
        r3 = H + idx[p + 3] * n
        r0[idx[p]] += h
        r0[idx[p + 1]] += coef
        r0[idx[p + 2]] += coef
        r0[idx[p + 3]] += coef
        r1[idx[p + 1]] += h
        r1[idx[p + 2]] += coef
        r1[idx[p + 3]] += coef
        r2[idx[p + 2]] += h
        r2[idx[p + 3]] += coef
        r3[idx[p + 3]] += h
        for q in range(p + 4, m):
            j = idx[q]
            r0[j] += coef
            r1[j] += coef
            r2[j] += coef
            r3[j] += coef
        p += 4
    while p < m:
        r0 = H + idx[p] * n
        r0[idx[p]] += h
        for q in range(p + 1, m):
            r0[idx[q]] += coef
        p += 1
