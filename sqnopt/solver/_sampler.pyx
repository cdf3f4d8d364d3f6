# cython: language_level=3
"""Minibatch samplers.

All randomness of a solve comes from one NumPy ``BitGenerator`` (seeded once from the user's
``random_state``) which every sampler of that solve shares; draws happen without the GIL.

* ``UniformSampler``  — i.i.d. uniform indices (with replacement).
* ``ShuffleSampler``  — without replacement: a fresh random permutation every epoch, batches are
  consecutive slices (a batch that crosses an epoch boundary continues in the next permutation).

* ``SubsetSampler``   — each batch is a uniformly random subset of distinct indices (partial
  Fisher-Yates: the sampling of semistochastic growing-batch methods, Friedlander & Schmidt
  2012). ``nested=True`` (the solver's choice for the plain minibatch gradient without
  curvature batches): a batch larger than the one drawn before it extends it -- the previous
  batch's indices first, in their order, then new distinct ones (the shuffle continued from
  where it stopped) -- so it is still a uniformly random subset of its size, and the driver
  evaluates the gradient of the new indices only (the previous batch's, at the same iterate,
  is the accepted step's own evaluation). A batch no larger than the previous one is drawn
  afresh; without ``nested`` every batch is.

For these three, a batch of ``n_samples`` or more is the *full batch*: every index once, in
order, with no random draw (so ``Full()`` schedules and growing batches that reach their cap give
the exact gradient, and consecutive full batches are recognised as the same batch: the driver
reuses the secant gradient of one iteration as the next iteration's gradient).
* ``WeightedSampler`` — i.i.d. with probability proportional to the sample weights (Walker's
  alias method: O(1) per draw).
* ``SequenceSampler`` — a fixed, injected index sequence (tests; reproducing another code's
  batch order).
"""

import numpy as np

from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport uint64_t
from numpy.random cimport bitgen_t

from sqnopt._random cimport bounded_uint64
from sqnopt.checkpoint import restore_permutation, state_value


cdef class Sampler:
    """Base class. ``bit_generator`` is a ``numpy.random.BitGenerator`` shared by all samplers
    of one solve."""

    def __init__(self, Py_ssize_t n_samples, bit_generator):
        if n_samples < 1:
            raise ValueError("n_samples must be >= 1")
        if not isinstance(bit_generator, np.random.BitGenerator):
            raise TypeError("bit_generator must be a numpy.random.BitGenerator")
        self.n_samples = n_samples
        self.n_drawn = 0
        self.whole_at_n = False
        self._bitgen = bit_generator
        capsule = bit_generator.capsule
        self._rng = <bitgen_t*> PyCapsule_GetPointer(capsule, "BitGenerator")

    @property
    def bit_generator(self):
        return self._bitgen

    cdef int cy_draw(self, Py_ssize_t size, Py_ssize_t* out) noexcept nogil:
        return -1

    def get_state(self) -> dict:
        """The sampler's position (copies). The bit generator's state is not part of it: the
        generator is shared by the samplers of a solve and checkpointed once, by the solve."""
        return {"n_drawn": int(self.n_drawn)}

    def set_state(self, state) -> None:
        """Restore what :meth:`get_state` returned, on a sampler of the same kind and size
        (every field checked first: a compiled loop reads the positions and permutations as
        row numbers)."""
        self.n_drawn = state_value(state, "n_drawn", int, self, lo=0)

    def draw(self, Py_ssize_t size):
        """Return the next ``size`` indices as an ``intp`` array (the Python path's entry)."""
        if size < 1:
            raise ValueError("size must be >= 1")
        out = np.empty(size, dtype=np.intp)
        cdef Py_ssize_t[::1] o = out
        if self.cy_draw(size, &o[0]) != 0:
            raise StopIteration("the injected batch sequence is exhausted")
        if size > self.n_samples and self.whole_at_n:
            return out[:self.n_samples]     # a request of N or more is the whole data set
        return out


cdef inline void _full_batch(Py_ssize_t n, Py_ssize_t* out) noexcept nogil:
    cdef Py_ssize_t t
    for t in range(n):
        out[t] = t


cdef class UniformSampler(Sampler):
    def __init__(self, Py_ssize_t n_samples, bit_generator):
        Sampler.__init__(self, n_samples, bit_generator)
        self.whole_at_n = True

    cdef int cy_draw(self, Py_ssize_t size, Py_ssize_t* out) noexcept nogil:
        cdef Py_ssize_t t
        if size >= self.n_samples:
            _full_batch(self.n_samples, out)
            self.n_drawn += self.n_samples
            return 0
        for t in range(size):
            out[t] = <Py_ssize_t> bounded_uint64(self._rng, <uint64_t> self.n_samples)
        self.n_drawn += size
        return 0


cdef class ShuffleSampler(Sampler):
    def __init__(self, Py_ssize_t n_samples, bit_generator):
        Sampler.__init__(self, n_samples, bit_generator)
        self.whole_at_n = True
        self._perm = np.arange(n_samples, dtype=np.intp)
        self._pos = n_samples      # forces a shuffle on the first draw
        self.n_epochs = 0

    def get_state(self) -> dict:
        state = Sampler.get_state(self)
        state.update(perm=np.array(self._perm), pos=int(self._pos), n_epochs=int(self.n_epochs))
        return state

    def set_state(self, state) -> None:
        Sampler.set_state(self, state)
        pos = state_value(state, "pos", int, self, lo=0, hi=self.n_samples)
        n_epochs = state_value(state, "n_epochs", int, self, lo=0)
        restore_permutation(self._perm, state, "perm", self)
        self._pos = pos
        self.n_epochs = n_epochs

    cdef void _shuffle(self) noexcept nogil:
        cdef Py_ssize_t i, j, tmp
        for i in range(self.n_samples - 1, 0, -1):
            j = <Py_ssize_t> bounded_uint64(self._rng, <uint64_t> (i + 1))
            tmp = self._perm[i]
            self._perm[i] = self._perm[j]
            self._perm[j] = tmp
        self._pos = 0
        self.n_epochs += 1

    cdef int cy_draw(self, Py_ssize_t size, Py_ssize_t* out) noexcept nogil:
        cdef Py_ssize_t t
        if size >= self.n_samples:
            _full_batch(self.n_samples, out)
            self.n_drawn += self.n_samples
            return 0
        for t in range(size):
            if self._pos >= self.n_samples:
                self._shuffle()
            out[t] = self._perm[self._pos]
            self._pos += 1
        self.n_drawn += size
        return 0


cdef class SubsetSampler(Sampler):
    def __init__(self, Py_ssize_t n_samples, bit_generator, bint nested=False):
        Sampler.__init__(self, n_samples, bit_generator)
        self.whole_at_n = True
        self.nested = nested
        self._perm = np.arange(n_samples, dtype=np.intp)
        self._last = 0

    def get_state(self) -> dict:
        state = Sampler.get_state(self)
        state["perm"] = np.array(self._perm)
        state["last"] = int(self._last)
        return state

    def set_state(self, state) -> None:
        Sampler.set_state(self, state)
        last = (state_value(state, "last", int, self, lo=0, hi=self.n_samples)
                if "last" in state else 0)
        restore_permutation(self._perm, state, "perm", self)
        self._last = last

    cdef int cy_draw(self, Py_ssize_t size, Py_ssize_t* out) noexcept nogil:
        cdef Py_ssize_t t, j, tmp, n = self.n_samples, start = 0
        if size >= n:                   # the whole data set, in order
            _full_batch(n, out)
            self.n_drawn += n
            self._last = 0
            return 0
        if self.nested and self._last < size:   # a growing batch extends the previous draw
            start = self._last
        for t in range(start):
            out[t] = self._perm[t]
        self._last = size
        for t in range(start, size):    # partial Fisher-Yates: perm[0:size] is a uniform subset
            j = t + <Py_ssize_t> bounded_uint64(self._rng, <uint64_t> (n - t))
            tmp = self._perm[t]
            self._perm[t] = self._perm[j]
            self._perm[j] = tmp
            out[t] = self._perm[t]
        self.n_drawn += size
        return 0


cdef class WeightedSampler(Sampler):
    def __init__(self, Py_ssize_t n_samples, bit_generator, weights):
        Sampler.__init__(self, n_samples, bit_generator)
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (n_samples,) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError("weights must be n_samples finite non-negative numbers with a "
                             "positive sum")
        prob, alias = _alias_table(w / w.sum())
        self._prob = prob
        self._alias = alias

    cdef int cy_draw(self, Py_ssize_t size, Py_ssize_t* out) noexcept nogil:
        cdef Py_ssize_t t, i
        cdef double u
        for t in range(size):
            i = <Py_ssize_t> bounded_uint64(self._rng, <uint64_t> self.n_samples)
            u = (self._rng.next_uint64(self._rng.state) >> 11) * (1.0 / 9007199254740992.0)
            out[t] = i if u < self._prob[i] else self._alias[i]
        self.n_drawn += size
        return 0


def _alias_table(p):
    """Walker/Vose alias table for the distribution ``p`` (sums to 1)."""
    n = p.shape[0]
    scaled = p * n
    prob = np.ones(n)
    alias = np.arange(n, dtype=np.intp)
    small = [i for i in range(n) if scaled[i] < 1.0]
    large = [i for i in range(n) if scaled[i] >= 1.0]
    while small and large:
        s = small.pop()
        l = large.pop()
        prob[s] = scaled[s]
        alias[s] = l
        scaled[l] = scaled[l] + scaled[s] - 1.0
        if scaled[l] < 1.0:
            small.append(l)
        else:
            large.append(l)
    for i in small + large:
        prob[i] = 1.0
    return prob, alias


cdef class SequenceSampler(Sampler):
    def __init__(self, Py_ssize_t n_samples, bit_generator, sequence):
        Sampler.__init__(self, n_samples, bit_generator)
        seq = np.ascontiguousarray(sequence, dtype=np.intp).ravel()
        if seq.size == 0:
            raise ValueError("the injected batch sequence is empty")
        if seq.min() < 0 or seq.max() >= n_samples:
            raise ValueError(f"injected batch indices must lie in [0, {n_samples})")
        seq.setflags(write=False)
        self._seq = seq
        self._pos = 0

    def get_state(self) -> dict:
        state = Sampler.get_state(self)
        state["pos"] = int(self._pos)
        return state

    def set_state(self, state) -> None:
        Sampler.set_state(self, state)
        self._pos = state_value(state, "pos", int, self, lo=0, hi=self._seq.shape[0])

    @property
    def remaining(self) -> int:
        return self._seq.shape[0] - self._pos

    cdef int cy_draw(self, Py_ssize_t size, Py_ssize_t* out) noexcept nogil:
        cdef Py_ssize_t t
        if self._pos + size > self._seq.shape[0]:
            return -1
        for t in range(size):
            out[t] = self._seq[self._pos + t]
        self._pos += size
        self.n_drawn += size
        return 0
