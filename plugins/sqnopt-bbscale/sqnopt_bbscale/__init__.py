"""sqnopt-bbscale: an example third-party sqnopt plugin (compiled curvature model)."""

from sqnopt_bbscale.plugin import BBScale

__all__ = ["BBScale"]
