"""sqnopt's solvers on data partitioned across a Dask cluster (``pip install 'sqnopt[dask]'``).

* :class:`DaskSQNClassifier` -- :class:`sqnopt.SQNClassifier`'s parameters and defaults;
  ``fit`` takes a ``dask.array`` (dense or with ``scipy.sparse`` chunks) or a dask DataFrame
  and runs on the active ``dask.distributed`` client.
* :func:`solve` -- ``Solver.fit`` on dask collections: any :class:`sqnopt.Solver`, its driver on
  the client, its objective evaluated where the data lives.
* :class:`ChunkedData`, :class:`DistributedObjective` -- the building blocks.

The driver (curvature memory, direction, step, schedules, tolerances) runs on the client; every
large batch (progressive batching's variance test included), full gradient, full objective and
SVRG snapshot runs on the workers, each chunk through the compiled kernels, and only vectors of
the parameters' size travel. See ``docs/dask.md`` for what runs where, what travels, and the
limits.

``import sqnopt`` never imports Dask; this subpackage does.
"""

from typing import Any

try:
    import dask  # noqa: F401
    import dask.array  # noqa: F401
    import distributed  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without dask
    raise ImportError(
        f"sqnopt.dask needs dask[array] and distributed ({exc}). Install them with "
        "pip install 'sqnopt[dask]'") from exc

from sqnopt.dask._data import ChunkedData, CommStats
from sqnopt.dask._objective import (
    LOCAL_BATCH,
    DistributedObjective,
    DistributedProgressiveBatch,
    DistributedSVRG,
    GatheredCurvature,
    solve,
)

#: The estimator imports scikit-learn: on first use only (the workers import this package to
#: run the per-chunk work and need none of it).
_LAZY = {"DaskSQNClassifier": "sqnopt.dask._estimator",
         "SequentialOnClientWarning": "sqnopt.dask._estimator"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        try:
            module = importlib.import_module(_LAZY[name])
        except ImportError as exc:  # pragma: no cover - without scikit-learn
            raise ImportError(f"sqnopt.dask.{name} needs scikit-learn ({exc}). Install it with "
                              "pip install 'sqnopt[dask]'") from exc
        return getattr(module, name)
    raise AttributeError(f"module 'sqnopt.dask' has no attribute {name!r}")


__all__ = [
    "LOCAL_BATCH",
    "ChunkedData",
    "CommStats",
    "DaskSQNClassifier",
    "DistributedObjective",
    "DistributedProgressiveBatch",
    "DistributedSVRG",
    "GatheredCurvature",
    "SequentialOnClientWarning",
    "solve",
]
