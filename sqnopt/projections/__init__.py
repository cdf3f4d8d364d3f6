"""Projections applied after each step (constraint sets), and mirror maps."""

from sqnopt.interfaces import Projection
from sqnopt.projections._base import L2BallKernel, ProjectionKernel
from sqnopt.projections._components import ExpGradPM, L1Ball, L2Ball, LazyProjection, MirrorMap
from sqnopt.projections._l1ball import L1BallKernel
from sqnopt.projections._mirror import ExpGradPMKernel, LazyProjectionKernel, MirrorMapKernel

__all__ = [
    "ExpGradPM",
    "ExpGradPMKernel",
    "L1Ball",
    "L1BallKernel",
    "L2Ball",
    "L2BallKernel",
    "LazyProjection",
    "LazyProjectionKernel",
    "MirrorMap",
    "MirrorMapKernel",
    "Projection",
    "ProjectionKernel",
]
