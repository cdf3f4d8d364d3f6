# cython: language_level=3
from sqnopt.objectives._base cimport ObjectiveKernel
from sqnopt.steps._base cimport ArmijoKernel, StepKernel


cdef class ScoreLineKernel(StepKernel):
    cdef readonly double eps0
    cdef readonly double c1
    cdef readonly double shrink
    cdef readonly Py_ssize_t max_backtracks
    cdef readonly double rtol
    cdef readonly Py_ssize_t max_iter
    # objectives that do not evaluate losses from scores: Armijo's backtracking, same settings
    cdef readonly ArmijoKernel fallback
    # diagnostics: 1-D evaluations of phi' (each O(|B| n_scores), no row read) and score gathers
    # of the iterate (cache misses) since construction
    cdef readonly Py_ssize_t n_line_evals
    cdef readonly Py_ssize_t n_score_gathers
    # the scores at the last accepted point, by sample: valid for sample i when stamp[i] == gen
    # and the search starts from cache_w (compared entry by entry)
    cdef const void* _obj
    cdef object _obj_ref            # keeps that objective alive: no other can take its address
    cdef Py_ssize_t _n_samples, _K, _n, _cap
    cdef double* _cache_s
    cdef long long* _stamp
    cdef long long _gen
    cdef double* _cache_w
    cdef bint _have
    # the batch's scores at w and at d, the trial scores and their derivatives
    cdef double* _z
    cdef double* _u
    cdef double* _zn
    cdef double* _coef
    # a cache restored by set_state, loaded (after one check gather) at the next search
    cdef Py_ssize_t _pend_count         # -1: none
    cdef Py_ssize_t _pend_n, _pend_K
    cdef Py_ssize_t* _pend_idx
    cdef double* _pend_s
    cdef double* _pend_w
    cdef void _drop_pending(self) noexcept nogil
    cdef void _load_pending(self, ObjectiveKernel obj) noexcept nogil

    cdef void _release(self) noexcept nogil
    cdef int _ensure(self, ObjectiveKernel obj, Py_ssize_t size, Py_ssize_t n) noexcept nogil
    cdef bint _load(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size) noexcept nogil
    cdef void _store(self, const double* w_next, const Py_ssize_t* batch,
                     Py_ssize_t size) noexcept nogil
    cdef double _minimise(self, ObjectiveKernel obj, const Py_ssize_t* batch, Py_ssize_t size,
                          double gd, double rb, double rc) noexcept nogil
