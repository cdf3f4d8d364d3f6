"""Penalties of composite objectives: L2, L1 and the elastic net (scikit-learn's names).

A penalty is a component (kind ``"penalty"``) whose kernel gives the value, the proximal map
(soft thresholding: exact zeros) and Andrew & Gao's pseudo-gradient of
``P(w) = alpha (l1_ratio ||w_reg||_1 + (1 - l1_ratio)/2 ||w_reg||^2)``; the composite solvers of
:mod:`sqnopt.composite` minimise ``f(w) + P(w)`` with it. :mod:`sqnopt.penalties.reference`
holds the NumPy twin.
"""

from sqnopt.penalties._base import PenaltyKernel
from sqnopt.penalties._components import L1, L2, ElasticNet, PenaltySpec, resolve_penalty

__all__ = ["L1", "L2", "ElasticNet", "PenaltyKernel", "PenaltySpec", "resolve_penalty"]
