"""Kernel Pegasos: the Pegasos iteration in the dual (support-vector) representation for Mercer
kernels (Shalev-Shwartz, Singer, Srebro & Cotter 2011, Sec. 4), and its random-feature
approximation. The compiled part is :mod:`sqnopt.kernel._pegasos`: the kernel expansion, an iterate
representation run by the one compiled driver."""

from sqnopt.kernel._estimator import ApproximateKernelPegasos, KernelPegasos, kernel_matrix

__all__ = ["ApproximateKernelPegasos", "KernelPegasos", "kernel_matrix"]
