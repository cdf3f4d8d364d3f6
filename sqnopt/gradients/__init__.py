"""Gradient estimators: what the driver steps with (:class:`~sqnopt.interfaces.GradientEstimator`).

* :class:`Minibatch` -- the minibatch gradient ``s(w, B)``;
* :class:`SVRG` -- ``s(w, B) - s(w~, B) + grad F(w~)`` with periodic snapshots (Johnson & Zhang
  2013);
* :class:`SAGA` -- a table of per-sample score derivatives (Defazio, Bach & Lacoste-Julien 2014);
* :class:`ProgressiveBatch` -- ``s(w, B)`` on batches sized by the inner-product and
  orthogonality tests (Bollapragada, Byrd & Nocedal 2018; Bollapragada et al. 2018);
* :class:`OverlapBatch` -- ``s(w, B)`` on batches that share samples with the previous one,
  and curvature pairs from the shared samples (multi-batch L-BFGS, Berahas, Nocedal & Takac
  2016).

Compiled kernels subclass ``sqnopt.gradients._base.GradientKernel`` (declared in
``_base.pxd``); NumPy reference twins live in :mod:`sqnopt.gradients.reference`.
"""

from sqnopt.gradients._components import SAGA, SVRG, Minibatch, OverlapBatch, ProgressiveBatch

__all__ = ["SAGA", "SVRG", "Minibatch", "OverlapBatch", "ProgressiveBatch"]
