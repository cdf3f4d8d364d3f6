"""Curvature models: turn a stochastic gradient into a direction ``d = H g``."""

from sqnopt.curvature._adagrad import AdaGradKernel
from sqnopt.curvature._base import CurvatureKernel
from sqnopt.curvature._components import Identity
from sqnopt.curvature._first_order import AdaGrad
from sqnopt.curvature._identity import IdentityKernel
from sqnopt.interfaces import CurvatureModel

__all__ = [
    "AdaGrad",
    "AdaGradKernel",
    "CurvatureKernel",
    "CurvatureModel",
    "Identity",
    "IdentityKernel",
]
