# cython: language_level=3
"""Compiled batch-schedule interface: the minibatch size at iteration ``k = 1, 2, ...``."""


cdef class ScheduleKernel:
    cdef readonly Py_ssize_t n_samples    # the cap applied by the driver
    cdef Py_ssize_t cy_batch_size(self, Py_ssize_t k) noexcept nogil


cdef class FixedKernel(ScheduleKernel):
    cdef readonly Py_ssize_t size


cdef class LinearKernel(ScheduleKernel):
    cdef readonly Py_ssize_t b1
    cdef readonly double gamma
    cdef readonly Py_ssize_t cap


cdef class GeometricKernel(ScheduleKernel):
    cdef readonly double b1
    cdef readonly double rate
    cdef readonly Py_ssize_t cap
