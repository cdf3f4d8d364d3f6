"""Per-row statistics of a design matrix that step sizes are made of: the squared row norms,
weighted by the samples' gradient weights, and the variance-reduced constant step they give.
Shared by the recipes (:mod:`sqnopt.recipes`) and the step rules that compute their step from
the data (:class:`~sqnopt.steps.LipschitzStep`); a module of the data layer, below both."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

__all__ = ["max_sample_smoothness_step", "row_sq_norms", "variance_reduced_step",
           "weighted_row_sq_norms"]


def row_sq_norms(X: Any) -> FloatArray:
    """``||x_i||^2`` of every row of ``X`` (dense or sparse)."""
    if sp.issparse(X):
        Xc = sp.csr_matrix(X)
        if Xc.data.dtype in (np.float32, np.float64):
            # (compiled: one read of the stored values, no array of their squares)
            from sqnopt.data._rows import csr_row_sqnorms

            return csr_row_sqnorms(np.asarray(Xc.indptr, dtype=np.intp), Xc.data)
        data = np.asarray(Xc.data, dtype=np.float64)
        out: FloatArray = np.zeros(Xc.shape[0])
        filled = np.diff(Xc.indptr) > 0
        if data.size:
            # segments start at the non-empty rows only: an empty row's start may equal the
            # number of stored values (empty last rows), which reduceat refuses
            out[filled] = np.add.reduceat(data * data, Xc.indptr[:-1][filled])
        return out
    Xd = np.asarray(X, dtype=np.float64)
    dense: FloatArray = np.einsum("ij,ij->i", Xd, Xd)
    return dense


def weighted_row_sq_norms(X: Any, grad_weight: FloatArray, fit_intercept: bool) -> FloatArray:
    """``(||x_i||^2 + [intercept]) c_i``: each sample's weighted squared row norm."""
    out: FloatArray = (row_sq_norms(X) + (1.0 if fit_intercept else 0.0)) * np.asarray(
        grad_weight)
    return out


def variance_reduced_step(weighted_sq: FloatArray, curvature_bound: float | None, lam: float,
                          factor: float) -> float:
    """``1 / (factor L_max)`` with ``L_max = c max_i g_i (||x_i||^2 + [intercept]) + lam``
    from the weighted squared row norms ``weighted_sq`` (``c`` the loss's curvature bound, 1
    for a loss that declares none); 1 when that is not a finite positive number."""
    c = curvature_bound if curvature_bound is not None else 1.0
    lmax = c * float(np.max(weighted_sq)) + lam if weighted_sq.size else 1.0
    lmax *= factor
    return 1.0 / lmax if lmax > 0 and np.isfinite(lmax) else 1.0


def max_sample_smoothness_step(X: Any, grad_weight: FloatArray, curvature_bound: float | None,
                               lam: float, fit_intercept: bool, factor: float) -> float:
    """:func:`variance_reduced_step` on the rows of ``X`` with the gradient weights
    ``grad_weight`` (one pass over the stored values)."""
    return variance_reduced_step(weighted_row_sq_norms(X, grad_weight, fit_intercept),
                                 curvature_bound, lam, factor)
