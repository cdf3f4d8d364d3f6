"""Kernel Pegasos: the Pegasos iteration in the dual (support-vector) representation for Mercer
kernels (Shalev-Shwartz, Singer, Srebro & Cotter 2011, Sec. 4), and its random-feature
approximation. The kernel expansion is an iterate representation of the driver:
:mod:`sqnopt.kernel._pegasos` for the built-in kernels (run by the compiled driver),
:mod:`sqnopt.kernel._expansion` for kernel callables (run by the Python driver)."""

from sqnopt.kernel._estimator import ApproximateKernelPegasos, KernelPegasos, kernel_matrix

__all__ = ["ApproximateKernelPegasos", "KernelPegasos", "kernel_matrix"]
