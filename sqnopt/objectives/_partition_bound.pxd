# cython: language_level=3
"""The partition-function quadratic bound of SQB, per sample and as an objective interface.

A log-linear model over a finite output set ``Omega = {0, ..., K-1}``

    p(y | x_i, theta) = h_i(y) exp(theta . f_i(y)) / Z_i(theta)

has the per-sample loss ``l_i(theta) = log Z_i(theta) - theta . f_i(y_i)`` (minus the log base
measure of the observed output, a constant). Aravkin, Choromanska, Jebara & Kanevsky,
*Semistochastic quadratic bound methods* (2014), Algorithm 1 bounds ``Z_i`` by

    Z_i(theta) <= z exp(1/2 (theta - t)' S_i (theta - t) + (theta - t)' r)      (their eq. 3)

at any expansion point ``t``. :class:`BoundObjectiveKernel` is the compiled interface a
curvature model (``QuadraticBound``, SQB) uses: ``cy_bound`` stores the bound of each sample of a
batch in factored form and ``cy_bound_matvec`` applies ``Sigma_B = mean_i g_i S_i`` to a vector
without ever forming a ``d x d`` matrix.

Factored form. With ``F_i`` the ``K x d`` matrix whose rows are ``f_i(y)``, Algorithm 1's
``r`` before output ``y`` is ``F_i' q_y`` for a mixture ``q_y`` over the outputs already seen,
and each column of ``S = sum_y w_y (f(y) - r)(f(y) - r)'`` is ``F_i' (e_y - q_y)``. So
``S_i = F_i' M_i F_i`` with the ``K x K`` matrix ``M_i = sum_y w_y (e_y - q_y)(e_y - q_y)'``.
``q`` evolves as ``q_{y+1} = (1 - rho_y) q_y + rho_y e_y``, so ``M_i u`` takes O(K) work from the
per-output numbers ``(w_y, rho_y, 1 - rho_y)``, which is all a factor stores (3K doubles per
sample). ``Sigma_B v`` then costs two feature passes per sample: ``u = F_i v`` and
``out += F_i' M_i u`` -- O(nnz * K) per sample, the cost of one gradient.
"""

from sqnopt.objectives._base cimport ObjectiveKernel


# tanh(l / 2) / (2 l): the weight of Algorithm 1, 1/4 at l = 0, -> 0 as |l| -> infinity.
cdef double bound_weight(double l) noexcept nogil

# Algorithm 1 for one sample, in the log domain. ``s[y] = log h(y) + theta . f(y)``
# (``-inf`` for outputs with h(y) = 0). Writes ``fac[0:K] = w_y``, ``fac[K:2K] = rho_y``,
# ``fac[2K:3K] = 1 - rho_y`` (``fac`` may be NULL) and the final mixture ``q`` (= softmax(s),
# may be NULL). Returns ``log z = log Z`` (NaN if a score is NaN or +inf, or every score is -inf).
cdef double bound_sample(const double* s, Py_ssize_t K, double* fac, double* q) noexcept nogil

# ``beta = M u`` for one sample's factor (see the module docstring); O(K).
cdef void bound_factor_apply(const double* fac, Py_ssize_t K, const double* u,
                             double* beta) noexcept nogil


cdef class BoundObjectiveKernel(ObjectiveKernel):
    """Objective kernel that provides the quadratic bound of Aravkin et al. (2014) (capability
    ``QUADRATIC_BOUND``)."""
    cdef readonly Py_ssize_t n_outputs      # |Omega|
    cdef readonly Py_ssize_t factor_size    # doubles per sample in a bound factor

    # The bound at ``w`` of every sample of ``batch``: ``factor[t * factor_size ...]`` receives
    # sample ``batch[t]``'s factor, already scaled by ``g_i / size`` (gradient weights). If ``mu``
    # is not NULL it receives ``mu_B = (1/size) sum_i g_i (r_i - f_i(y_i))`` (the data part of the
    # minibatch gradient, overwritten). Returns 0, or -1 if a score is not finite.
    cdef int cy_bound(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                      double* factor, double* mu) noexcept nogil
    # ``out = Sigma_B v`` (overwritten) from factors that ``cy_bound`` computed on ``batch``.
    cdef void cy_bound_matvec(self, const Py_ssize_t* batch, Py_ssize_t size,
                              const double* factor, const double* v, double* out) noexcept nogil
    # ``out = Sigma_B`` as a dense row-major ``n_params x n_params`` matrix (overwritten) from the
    # same factors, for small ``n_params`` (exact solves). Returns 0, or -1 if out of memory. The
    # default forms one product per unit vector; subclasses assemble it sample by sample.
    cdef int cy_bound_dense(self, const Py_ssize_t* batch, Py_ssize_t size,
                            const double* factor, double* out) noexcept nogil

    # The support of ``Sigma_B``. On sparse rows ``Sigma_B`` is zero outside the coordinates the
    # batch's features touch, so a solve with ``Sigma_B + eta I`` can run on those "compact"
    # coordinates (and treat the rest as ``eta I``). ``support_map_size > 0`` says the kernel has
    # a compact form: ``cy_bound_support`` fills ``map`` (``support_map_size`` entries, owned by
    # the caller) for a batch and returns the number ``m`` of compact coordinates;
    # ``cy_support_gather`` copies ``v``'s compact coordinates into ``vc`` (length ``m``) and
    # returns the squared norm of ``v`` outside them; ``cy_support_scatter`` writes ``vc`` back
    # into ``v`` (other entries untouched); ``cy_bound_matvec_support`` is ``cy_bound_matvec`` on
    # compact vectors. Defaults: no compact form (``support_map_size = 0``, ``m = n_params``,
    # identity maps).
    cdef readonly Py_ssize_t support_map_size
    cdef Py_ssize_t cy_bound_support(self, const Py_ssize_t* batch, Py_ssize_t size,
                                     Py_ssize_t* map) noexcept nogil
    cdef double cy_support_gather(self, const Py_ssize_t* map, const double* v,
                                  double* vc) noexcept nogil
    cdef void cy_support_scatter(self, const Py_ssize_t* map, const double* vc,
                                 double* v) noexcept nogil
    cdef void cy_bound_matvec_support(self, const Py_ssize_t* map, Py_ssize_t m,
                                      const Py_ssize_t* batch, Py_ssize_t size,
                                      const double* factor, const double* vc,
                                      double* outc) noexcept nogil
