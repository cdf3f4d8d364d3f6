"""Type stub for the compiled module ``sqnopt.curvature._identity``."""

from sqnopt.curvature._base import CurvatureKernel

class IdentityKernel(CurvatureKernel): ...
