"""Data: the papers' synthetic generators, hashed CTR-like streams with a known model,
svmlight/LIBSVM files (plain or compressed, whole or streamed in chunks; fast writers for them
and for Vowpal Wabbit), CSV/TSV tables, CTR feature engineering, streams of chunks for data
larger than memory (svmlight, CSV, Parquet, a binary chunk format, your own chunks), and real
data shipped with the package."""

from sqnopt.datasets._builtin import (
    BUILTIN_DATASETS,
    BuiltinDataset,
    builtin_path,
    load_a9a,
    load_builtin,
)
from sqnopt.datasets._columnar import stream_csv, stream_parquet
from sqnopt.datasets._ctr import (
    CRITEO_CATEGORICAL,
    CRITEO_COLUMNS,
    CRITEO_NUMERIC,
    CTRFeaturizer,
    balancing_gamma,
    click_weights,
    criteo_featurizer,
    iter_criteo,
    read_criteo,
)
from sqnopt.datasets._hashed_ctr import (
    CTRSample,
    HashedCTRGenerator,
    bayes_log_loss,
    zipf_like_pmf,
)
from sqnopt.datasets._io import (
    count_svmlight_features,
    iter_svmlight_chunks,
    load_svmlight,
    open_binary,
    scan_svmlight,
)
from sqnopt.datasets._rcv1_like import make_rcv1_like
from sqnopt.datasets._stream import (
    ChunkStream,
    StreamPass,
    stream_arrays,
    stream_binary,
    stream_chunks,
    stream_svmlight,
    write_binary,
)
from sqnopt.datasets._table import MISSING_MARKERS, TARGET_NAMES, load_table, table_delimiter
from sqnopt.datasets._synthetic import boxes_clairvoyant_accuracy, irwin_hall_cdf, make_boxes
from sqnopt.datasets._write import write_svmlight, write_vw

__all__ = [
    "BUILTIN_DATASETS",
    "BuiltinDataset",
    "CRITEO_CATEGORICAL",
    "CRITEO_COLUMNS",
    "CRITEO_NUMERIC",
    "CTRFeaturizer",
    "CTRSample",
    "ChunkStream",
    "HashedCTRGenerator",
    "MISSING_MARKERS",
    "StreamPass",
    "TARGET_NAMES",
    "balancing_gamma",
    "bayes_log_loss",
    "boxes_clairvoyant_accuracy",
    "builtin_path",
    "click_weights",
    "count_svmlight_features",
    "criteo_featurizer",
    "irwin_hall_cdf",
    "iter_criteo",
    "iter_svmlight_chunks",
    "load_a9a",
    "load_builtin",
    "load_svmlight",
    "load_table",
    "make_boxes",
    "make_rcv1_like",
    "open_binary",
    "read_criteo",
    "scan_svmlight",
    "stream_arrays",
    "stream_binary",
    "stream_chunks",
    "stream_csv",
    "stream_parquet",
    "stream_svmlight",
    "table_delimiter",
    "write_binary",
    "write_svmlight",
    "write_vw",
    "zipf_like_pmf",
]
