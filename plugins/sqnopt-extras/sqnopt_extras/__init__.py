"""sqnopt-extras: an example third-party sqnopt plugin with one component of four kinds --
an L-SR1 curvature model, the modified-Huber objective, the SARAH gradient estimator and a
decaying Polyak step -- compiled (:mod:`sqnopt_extras.plugin`) and in pure Python
(:mod:`sqnopt_extras.reference`)."""

from sqnopt_extras.plugin import LSR1, SARAH, DecayingPolyak, ModifiedHuber

__all__ = ["LSR1", "SARAH", "DecayingPolyak", "ModifiedHuber"]
