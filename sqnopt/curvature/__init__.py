"""Curvature models: turn a stochastic gradient into a direction ``d = H g``."""

from sqnopt.curvature._base import CurvatureKernel
from sqnopt.curvature._bound import QuadraticBoundKernel
from sqnopt.curvature._bound_components import QuadraticBound
from sqnopt.curvature._components import Identity
from sqnopt.curvature._identity import IdentityKernel
from sqnopt.interfaces import CurvatureModel

__all__ = [
    "CurvatureKernel",
    "CurvatureModel",
    "Identity",
    "IdentityKernel",
    "QuadraticBound",
    "QuadraticBoundKernel",
]
