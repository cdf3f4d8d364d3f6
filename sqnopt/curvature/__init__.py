"""Curvature models: turn a stochastic gradient into a direction ``d = H g``."""

from sqnopt.curvature._adagrad import AdaGradKernel
from sqnopt.curvature._base import CurvatureKernel
from sqnopt.curvature._bfgs import BFGSKernel
from sqnopt.curvature._bound import QuadraticBoundKernel
from sqnopt.curvature._bound_components import QuadraticBound
from sqnopt.curvature._components import (
    LBFGS,
    BoundLBFGS,
    FullBFGS,
    HessianLBFGS,
    Identity,
    Newton,
    NewtonCG,
    RegularizedBFGS,
    TruncatedNewton,
)
from sqnopt.curvature._first_order import AdaGrad
from sqnopt.curvature._hessian_lbfgs import HessianLBFGSKernel
from sqnopt.curvature._identity import IdentityKernel
from sqnopt.curvature._lbfgs import LBFGSKernel
from sqnopt.curvature._newton import NewtonKernel
from sqnopt.curvature._newton_cg import NewtonCGKernel
from sqnopt.curvature._precond_lbfgs import BoundLBFGSKernel
from sqnopt.curvature._res_eig import RESEigKernel
from sqnopt.curvature._secant import SecantKernel
from sqnopt.interfaces import CurvatureModel

__all__ = [
    "AdaGrad",
    "AdaGradKernel",
    "BFGSKernel",
    "BoundLBFGS",
    "BoundLBFGSKernel",
    "CurvatureKernel",
    "CurvatureModel",
    "FullBFGS",
    "HessianLBFGS",
    "HessianLBFGSKernel",
    "Identity",
    "IdentityKernel",
    "LBFGS",
    "LBFGSKernel",
    "Newton",
    "NewtonCG",
    "NewtonCGKernel",
    "NewtonKernel",
    "QuadraticBound",
    "QuadraticBoundKernel",
    "RESEigKernel",
    "RegularizedBFGS",
    "SecantKernel",
    "TruncatedNewton",
]
