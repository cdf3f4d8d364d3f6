"""Gradient estimators: what the driver steps with (:class:`~sqnopt.interfaces.GradientEstimator`).

* :class:`Minibatch` -- the minibatch gradient ``s(w, B)``;
* :class:`SVRG` -- ``s(w, B) - s(w~, B) + grad F(w~)`` with periodic snapshots (Johnson & Zhang
  2013);
* :class:`SAGA` -- a table of per-sample score derivatives (Defazio, Bach & Lacoste-Julien 2014);
* :class:`ProgressiveBatch` -- ``s(w, B)`` on batches sized by the inner-product test
  (Bollapragada, Mudigere, Nocedal, Shi & Tang 2018).

Compiled kernels subclass ``sqnopt.gradients._base.GradientKernel`` (declared in
``_base.pxd``); NumPy reference twins live in :mod:`sqnopt.gradients.reference`.
"""

from sqnopt.gradients._components import SAGA, SVRG, Minibatch, ProgressiveBatch

__all__ = ["SAGA", "SVRG", "Minibatch", "ProgressiveBatch"]
