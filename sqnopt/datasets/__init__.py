"""Data sets shipped with sqnopt: the papers' synthetic generators (no download needed)."""

from sqnopt.datasets._rcv1_like import make_rcv1_like
from sqnopt.datasets._synthetic import make_boxes

__all__ = ["make_boxes", "make_rcv1_like"]
