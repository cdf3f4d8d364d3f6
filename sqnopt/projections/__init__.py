"""Projections applied after each step (constraint sets)."""

from sqnopt.interfaces import Projection
from sqnopt.projections._base import L2BallKernel, ProjectionKernel
from sqnopt.projections._components import L2Ball

__all__ = ["L2Ball", "L2BallKernel", "Projection", "ProjectionKernel"]
