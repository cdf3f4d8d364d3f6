"""Type stub for the compiled module ``sqnopt_extras._objective``."""

from sqnopt.objectives._base import MarginObjectiveKernel

class ModifiedHuberKernel(MarginObjectiveKernel): ...
