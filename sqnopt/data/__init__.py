"""Data access: validation, label encoding (classes or real targets), weights and compiled row
views."""

from sqnopt.data._dataset import (
    Dataset,
    LabelKind,
    check_matrix,
    check_sample_weight,
    check_sparse_structure,
    check_targets,
    encode_labels,
    make_rows,
    prepare,
)
from sqnopt.data._rows import (
    CSRRows32,
    CSRRows64,
    DenseRows32,
    DenseRows64,
    RowData,
    csr_scores,
)

__all__ = [
    "CSRRows32",
    "CSRRows64",
    "Dataset",
    "DenseRows32",
    "DenseRows64",
    "LabelKind",
    "RowData",
    "check_matrix",
    "check_sample_weight",
    "check_sparse_structure",
    "check_targets",
    "csr_scores",
    "encode_labels",
    "make_rows",
    "prepare",
]
