"""Batch schedules: the minibatch size at each iteration."""

from sqnopt.interfaces import BatchSchedule
from sqnopt.schedules._base import FixedKernel, GeometricKernel, LinearKernel, ScheduleKernel
from sqnopt.schedules._components import Fixed, Full, Geometric, Linear

__all__ = [
    "BatchSchedule",
    "Fixed",
    "FixedKernel",
    "Full",
    "Geometric",
    "GeometricKernel",
    "Linear",
    "LinearKernel",
    "ScheduleKernel",
]
