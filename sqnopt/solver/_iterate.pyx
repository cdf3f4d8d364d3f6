# cython: language_level=3
"""The iterate-representation interface (see ``_iterate.pxd``): the base class.

The base class stores nothing and is not used by a solve; an implementation (the scaled sparse
representation of :mod:`sqnopt.solver._scaled_loop`, the kernel expansion of
:mod:`sqnopt.kernel._pegasos`) overrides every ``cy_*`` method and the Python-level state
methods below.
"""

from libc.math cimport NAN


cdef class IterateKernel:
    """Base class of an iterate representation for coefficient-form first-order steps (the
    interface is in ``_iterate.pxd``)."""

    #: the ``"loop"`` entry of the driver's checkpoint state with this representation
    kind = "iterate"
    #: the representation has a dense iterate of ``n_params`` entries (``cy_sync`` writes it);
    #: False: its own state is the iterate (``_iterate.pxd``)
    dense_iterate = True

    def __init__(self, Py_ssize_t n_params, Py_ssize_t lookahead=0):
        if n_params < 1 or not 0 <= lookahead <= MAX_LOOKAHEAD:
            raise ValueError(f"n_params must be >= 1 and 0 <= lookahead <= {MAX_LOOKAHEAD}")
        self.n_params = n_params
        self.lookahead = lookahead
        self.sqnorm = 0.0
        self.extra_samples = 0
        self.batch_loss = NAN
        self.batch_weight = 0.0

    cdef int cy_first_order(self, const Py_ssize_t* batch, Py_ssize_t size,
                            const Py_ssize_t* const* ahead, const Py_ssize_t* ahead_sizes,
                            Py_ssize_t n_ahead, double eps, double radius, Py_ssize_t n_avg,
                            double* loss) noexcept nogil:
        loss[0] = NAN
        return ITERATE_NONFINITE_LOSS

    cdef void cy_sync(self, Py_ssize_t n_avg) noexcept nogil:
        pass

    def sync(self, Py_ssize_t n_avg) -> None:
        """Write the dense iterate and the average of ``n_avg`` iterates (``cy_sync``)."""
        with nogil:
            self.cy_sync(n_avg)

    def reload(self, Py_ssize_t n_avg) -> None:
        """Rebuild the representation from the dense iterate and the average of ``n_avg``
        iterates (after they were written from outside, e.g. a restored state)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement reload")

    def adopt(self, IterateKernel previous) -> bool:
        """Take over the representation of ``previous`` (the same solve on new data), exactly;
        False when it is not of the same kind and shape (then the caller reloads)."""
        return False

    def check_state(self, state) -> None:
        """Raise :class:`~sqnopt.checkpoint.CheckpointError` unless ``state`` (a
        :meth:`get_state` result) fits this representation; the default accepts any."""

    def get_state(self) -> dict:
        """The representation (copies)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement get_state")

    def set_state(self, state) -> None:
        """Restore what :meth:`get_state` returned."""
        raise NotImplementedError(f"{type(self).__name__} does not implement set_state")
