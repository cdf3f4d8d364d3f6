# cython: language_level=3
"""Minibatch samplers fed by one NumPy bit generator (nogil)."""

from numpy.random cimport bitgen_t


cdef class Sampler:
    cdef readonly Py_ssize_t n_samples
    cdef readonly Py_ssize_t n_drawn       # indices handed out so far
    cdef readonly bint whole_at_n          # a request of n_samples or more is the whole set
    cdef object _bitgen                    # numpy.random.BitGenerator (keeps bitgen_t alive)
    cdef bitgen_t* _rng
    # Fill ``out[0:size]`` with sample indices; returns 0, or -1 when the sampler is exhausted.
    # Subclasses draw bounded integers with sqnopt._random.bounded_uint64(_rng, n) (inline).
    cdef int cy_draw(self, Py_ssize_t size, Py_ssize_t* out) noexcept nogil


cdef class UniformSampler(Sampler):
    pass


cdef class ShuffleSampler(Sampler):
    cdef Py_ssize_t[::1] _perm
    cdef Py_ssize_t _pos
    cdef readonly Py_ssize_t n_epochs
    cdef void _shuffle(self) noexcept nogil


cdef class SubsetSampler(Sampler):
    cdef Py_ssize_t[::1] _perm
    cdef readonly bint nested              # growing draws extend the previous one
    cdef Py_ssize_t _last                  # the previous draw's size (0: the whole set)


cdef class WeightedSampler(Sampler):
    cdef double[::1] _prob      # alias-method acceptance probabilities
    cdef Py_ssize_t[::1] _alias


cdef class SequenceSampler(Sampler):
    cdef const Py_ssize_t[::1] _seq
    cdef Py_ssize_t _pos
