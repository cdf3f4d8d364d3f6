"""A fitted linear classifier that needs only NumPy/SciPy: prediction, probabilities, and a
portable model file.

:class:`LinearModel` is what :class:`sqnopt.training.Trainer` produces and what the ``sqnopt``
command line saves and loads; the scikit-learn estimators store the same numbers as ``coef_`` and
``intercept_``.

Model files are NumPy ``.npz`` archives, written atomically and read by one checking reader
(:func:`read_model_file`) that never loads a pickle: loading one never runs code, and a damaged
file gives one :class:`ModelFileError` naming the file and the problem.

A model may carry the feature scaling it was trained with (:func:`feature_scaling`:
standardization of dense data, max-abs scaling of sparse data); it then scores raw data,
``coef @ ((x - offset) / factor) + intercept``. Format versions: 1, no scaling; 2 adds the
optional ``scale_offset`` and ``scale_factor`` arrays. A model without scaling is still written
as version 1, so older readers read it.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from sqnopt._files import atomic_write
from sqnopt._text import short_list
from sqnopt._npz import read_archive, read_member
from sqnopt.data import check_matrix

FloatArray = NDArray[np.float64]
#: ``binary``: one weight vector; ``ovr``: one binary model per class (one-vs-rest);
#: ``multinomial``: one block per class of a multiclass objective (softmax); ``regression``: one
#: weight vector predicting a real target through the model's ``link``.
Strategy = Literal["binary", "ovr", "multinomial", "regression"]
#: How a regression model's score ``s`` maps to its prediction: ``identity`` (``s``) or ``log``
#: (``exp(s)``, the log link of Poisson regression).
Link = Literal["identity", "log"]
LINKS: tuple[Link, ...] = ("identity", "log")

#: Newest model-file format this sqnopt reads and writes (2: optional feature scaling;
#: 3: regression models, their ``link``).
FORMAT_VERSION = 3

__all__ = ["FORMAT_VERSION", "LINKS", "Link", "LinearModel", "ModelFileError", "Strategy", "apply_scaling",
           "feature_scaling",
           "log_softmax", "log_sigmoid", "read_model_file"]


def feature_scaling(X: Any, columns: Sequence[int] | None = None
                    ) -> tuple[str, FloatArray, FloatArray]:
    """``(kind, offset, factor)`` that scale ``X`` column by column to ``(x - offset) / factor``.

    Dense ``X``: standardization (``kind="standard"``): the column mean and standard
    deviation. Sparse ``X``: max-abs scaling (``kind="maxabs"``, offset 0): centring would fill
    the matrix, and dividing by the largest absolute value keeps zeros zero and puts every
    column in ``[-1, 1]``. Constant (dense) or empty (sparse) columns keep factor 1.

    ``columns``: standardize only these columns, whether ``X`` is dense or sparse -- a table's
    numeric columns, stored beside the 0/1 indicators of its categorical ones (which are
    already in ``[0, 1]`` and keep offset 0 and factor 1); ``kind="standard"``.
    """
    Xc = check_matrix(X)
    n = Xc.shape[1]
    if columns is not None:
        cols = np.asarray(columns, dtype=np.intp)
        if cols.size and (cols.min() < 0 or cols.max() >= n):
            raise ValueError(f"columns must be column indices of X (0 to {n - 1})")
        block = Xc[:, cols]
        A = np.asarray(block.toarray() if sp.issparse(block) else block, dtype=np.float64)
        offset, factor = np.zeros(n), np.ones(n)
        offset[cols] = A.mean(axis=0) if A.shape[0] else 0.0
        factor[cols] = A.std(axis=0) if A.shape[0] else 1.0
        kind = "standard"
    elif sp.issparse(Xc):
        factor = np.asarray(abs(Xc).max(axis=0).toarray(), dtype=np.float64).ravel()
        offset = np.zeros(n)
        kind = "maxabs"
    else:
        A = np.asarray(Xc, dtype=np.float64)
        offset = A.mean(axis=0)
        factor = A.std(axis=0)
        kind = "standard"
    factor = np.where(np.isfinite(factor) & (factor > 0), factor, 1.0)
    return kind, np.asarray(offset, dtype=np.float64), factor


def apply_scaling(X: Any, offset: FloatArray, factor: FloatArray) -> Any:
    """``(X - offset) / factor`` column by column, as a new matrix (``X`` is not modified);
    sparse input stays sparse: its columns with an offset (a table's standardized numeric
    columns) are stored in full, the others keep their zeros."""
    Xc = check_matrix(X)
    if sp.issparse(Xc):
        scaled = sp.csr_matrix(Xc @ sp.diags(1.0 / factor))
        centred = np.flatnonzero(offset != 0)
        if centred.size == 0:
            return scaled
        keep = np.setdiff1d(np.arange(Xc.shape[1]), centred)
        full = np.asarray(Xc[:, centred].toarray(), dtype=np.float64)
        full = (full - offset[centred]) / factor[centred]
        # the centred columns in full, the others as they were scaled, in the original order
        parts = sp.hstack([sp.csr_matrix(full), scaled[:, keep]], format="csr")
        order = np.argsort(np.concatenate([centred, keep]), kind="stable")
        return sp.csr_matrix(parts[:, order])
    return (np.asarray(Xc, dtype=np.float64) - offset) / factor


def log_sigmoid(z: FloatArray) -> FloatArray:
    """``log(1 / (1 + exp(-z)))`` without overflow: ``-logaddexp(0, -z)``."""
    return -np.logaddexp(0.0, -z)


def log_softmax(z: FloatArray) -> FloatArray:
    """Row-wise ``z - logsumexp(z)`` with the maximum subtracted first (exact for any finite z)."""
    zmax = np.max(z, axis=1, keepdims=True)
    shifted = z - zmax
    out: FloatArray = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return out


@dataclass(frozen=True, eq=False)
class LinearModel:
    """Scores ``X @ coef.T + intercept`` and what follows from them.

    Attributes
    ----------
    coef : ndarray of shape (n_outputs, n_features)
        ``n_outputs`` is 1 for a binary problem or a regression, else the number of classes.
    intercept : ndarray of shape (n_outputs,)
    classes : ndarray
        Sorted original labels; for a binary model a positive score predicts ``classes[1]``.
        Empty for a regression model.
    strategy : {"binary", "ovr", "multinomial", "regression"}
    loss : str
        Registry name of the objective the model was trained with.
    probabilistic : bool
        The loss is a log-likelihood (logistic / softmax), so scores map to probabilities.
    info : dict
        Free-form JSON-able description (components, training summary).
    scale_offset, scale_factor : ndarray of shape (n_features,) or None
        The feature scaling the model was trained with (:func:`feature_scaling`): ``coef`` acts
        on ``(x - scale_offset) / scale_factor``, and every method here takes raw ``x``.
        ``None``: no scaling.
    link : {"identity", "log"}
        Regression models: the prediction is the score (``identity``) or ``exp`` of it
        (``log``: Poisson regression). ``identity`` for classifiers.
    """

    coef: FloatArray
    intercept: FloatArray
    classes: NDArray[Any]
    strategy: Strategy
    loss: str
    probabilistic: bool
    info: dict[str, Any] = field(default_factory=dict)
    scale_offset: FloatArray | None = None
    scale_factor: FloatArray | None = None
    link: Link = "identity"

    def __post_init__(self) -> None:
        coef = np.atleast_2d(np.asarray(self.coef, dtype=np.float64))
        icpt = np.atleast_1d(np.asarray(self.intercept, dtype=np.float64))
        if coef.ndim != 2 or icpt.shape != (coef.shape[0],):
            raise ValueError(f"LinearModel: coef {coef.shape} and intercept {icpt.shape} do not "
                             "match (expected (n_outputs, n_features) and (n_outputs,))")
        k = len(self.classes)
        if self.strategy not in _STRATEGIES:
            raise ValueError(f"LinearModel: unknown strategy {self.strategy!r}")
        if self.link not in LINKS or (self.link != "identity" and self.strategy != "regression"):
            raise ValueError(f"LinearModel: link {self.link!r} must be one of {LINKS} "
                             "('identity' for a classifier)")
        if self.strategy == "regression":
            if k != 0 or coef.shape[0] != 1:
                raise ValueError(f"LinearModel: a regression model has no classes and one row "
                                 f"of coef, got {k} classes and {coef.shape[0]} rows")
        else:
            expected = 1 if k == 2 else k
            if coef.shape[0] != expected:
                raise ValueError(f"LinearModel: {k} classes need {expected} rows of coef, "
                                 f"got {coef.shape[0]}")
        object.__setattr__(self, "coef", coef)
        object.__setattr__(self, "intercept", icpt)
        object.__setattr__(self, "classes", np.asarray(self.classes))
        if (self.scale_offset is None) != (self.scale_factor is None):
            raise ValueError("LinearModel: give both scale_offset and scale_factor, or neither")
        if self.scale_offset is not None and self.scale_factor is not None:
            off = np.asarray(self.scale_offset, dtype=np.float64)
            fac = np.asarray(self.scale_factor, dtype=np.float64)
            if off.shape != (coef.shape[1],) or fac.shape != (coef.shape[1],):
                raise ValueError(f"LinearModel: scale_offset {off.shape} and scale_factor "
                                 f"{fac.shape} must have one entry per feature "
                                 f"({coef.shape[1]})")
            if not (np.all(np.isfinite(off)) and np.all(np.isfinite(fac)) and np.all(fac > 0)):
                raise ValueError("LinearModel: the scaling must be finite with positive factors")
            object.__setattr__(self, "scale_offset", off)
            object.__setattr__(self, "scale_factor", fac)

    # ------------------------------------------------------------------ prediction
    @property
    def n_features(self) -> int:
        return int(self.coef.shape[1])

    @property
    def scaled(self) -> bool:
        """Whether the model carries a feature scaling."""
        return self.scale_factor is not None

    def raw_coefficients(self) -> tuple[FloatArray, FloatArray]:
        """``(coef, intercept)`` acting on raw features: the scaling folded in,
        ``coef / factor`` and ``intercept - (coef / factor) @ offset``."""
        if self.scale_factor is None or self.scale_offset is None:
            return self.coef, self.intercept
        coef = self.coef / self.scale_factor
        return coef, self.intercept - coef @ self.scale_offset

    def _check_X(self, X: Any) -> Any:
        Xc = check_matrix(X)
        if Xc.shape[1] != self.n_features:
            raise ValueError(f"X has {Xc.shape[1]} features, but the model was trained with "
                             f"{self.n_features}. Use data with the same columns (for svmlight "
                             f"files pass n_features={self.n_features} when loading)")
        return Xc

    def decision_function(self, X: Any) -> FloatArray:
        """Scores: shape ``(n,)`` for a binary model, ``(n, n_classes)`` otherwise.

        Scores that overflow float64 (a finite coefficient times a finite feature beyond
        ``1.8e308``, or two such products of opposite signs that make NaN) are an error: labels
        and probabilities from them would be arbitrary. A trained model never gets there
        (training refuses features whose squares overflow and stops a diverging run), so the
        model file is damaged or the data are on another scale than the training data."""
        Xc = self._check_X(X)
        with np.errstate(over="ignore", invalid="ignore"):
            scores = self.scores_of(Xc)
        if not np.all(np.isfinite(scores)):
            raise ValueError(self._overflow_message(Xc, scores))
        return scores

    def _overflow_message(self, Xc: Any, scores: FloatArray) -> str:
        bad = ~np.isfinite(scores.reshape(scores.shape[0], -1))
        rows = np.flatnonzero(bad.any(axis=1))
        with np.errstate(over="ignore", invalid="ignore"):
            coef, intercept = self.raw_coefficients()
        top_coef = float(np.max(np.abs(np.concatenate([coef.ravel(), intercept]))))
        row = Xc[int(rows[0])]
        values = np.abs(row.toarray() if sp.issparse(row) else np.asarray(row, dtype=np.float64))
        top_x = float(values.max()) if values.size else 0.0
        return (f"the scores of {rows.shape[0]} of {scores.shape[0]} rows overflow float64 "
                f"(first row {int(rows[0])}: features up to {top_x:.3g} in absolute value, "
                f"model coefficients up to {top_coef:.3g}), so their labels and probabilities "
                "would be arbitrary. A trained model does not get there: check that the model "
                "file is the one training wrote and that the data are on the scale of the "
                "training data (train with --scale / a scaler for features of very different "
                "sizes)")

    def scores_of(self, Xc: Any, n_jobs: int | None = 1) -> FloatArray:
        """:meth:`decision_function` of an already validated matrix (no checks, no copy). A
        large sparse matrix is scored in blocks of rows on ``n_jobs`` threads
        (:func:`sqnopt.data.csr_scores`: SciPy's arithmetic, the same bits)."""
        coef, intercept = self.raw_coefficients()
        threads = 1
        if sp.issparse(Xc) and Xc.shape[0] > 0 and n_jobs != 1:
            from sqnopt._jobs import pass_threads

            threads = pass_threads(n_jobs, Xc.shape[0],
                                   coef.shape[0] * Xc.nnz / Xc.shape[0] + 1)
        if threads > 1:
            from sqnopt.data import csr_scores

            scores = csr_scores(Xc, np.ascontiguousarray(coef.T, dtype=np.float64), threads)
        elif sp.issparse(Xc):
            scores = np.asarray(Xc @ coef.T, dtype=np.float64)
        else:
            scores = np.asarray(Xc, dtype=np.float64) @ coef.T
        scores = scores + intercept
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X: Any) -> NDArray[Any]:
        """Predicted labels, or for a regression model the predicted targets."""
        return self.labels_of_scores(self.decision_function(X))

    def labels_of_scores(self, scores: FloatArray) -> NDArray[Any]:
        """Predicted labels from the scores :meth:`decision_function` returned (a regression
        model: the predictions, ``scores`` through the inverse link)."""
        if self.strategy == "regression":
            return self.predictions_of_scores(scores)
        idx = (scores > 0).astype(np.intp) if scores.ndim == 1 else np.argmax(scores, axis=1)
        labels: NDArray[Any] = self.classes[idx]
        return labels

    def predictions_of_scores(self, scores: FloatArray) -> FloatArray:
        """A regression model's predictions from its scores: the scores themselves, or
        ``exp(scores)`` for the log link (``inf`` where the score exceeds ``log(DBL_MAX)``)."""
        s = np.asarray(scores, dtype=np.float64)
        if self.link == "log":
            with np.errstate(over="ignore"):
                out: FloatArray = np.exp(s)
            return out
        return s

    def predict_log_proba(self, X: Any) -> FloatArray:
        """Log class probabilities, shape ``(n, n_classes)`` (log-likelihood losses only).

        Binary: ``log sigmoid(±s)``; one-vs-rest: per-class ``log sigmoid(s_k)`` normalised
        over the classes; multinomial: ``log softmax(s)``. Computed in the log domain.
        """
        if not self.probabilistic:
            raise AttributeError(f"probabilities need a log-likelihood loss; this model was "
                                 f"trained with {self.loss!r}")
        return self.log_proba_of_scores(self.decision_function(X))

    def log_proba_of_scores(self, scores: FloatArray) -> FloatArray:
        """:meth:`predict_log_proba` from the scores :meth:`decision_function` returned."""
        if not self.probabilistic:
            raise AttributeError(f"probabilities need a log-likelihood loss; this model was "
                                 f"trained with {self.loss!r}")
        if scores.ndim == 1:
            return np.column_stack([log_sigmoid(-scores), log_sigmoid(scores)])
        if self.strategy == "ovr":
            return log_softmax(log_sigmoid(scores))
        return log_softmax(scores)

    def predict_proba(self, X: Any) -> FloatArray:
        """Class probabilities, shape ``(n, n_classes)``, rows summing to 1."""
        return np.exp(self.predict_log_proba(X))

    def accuracy(self, X: Any, y: Any) -> float:
        return float(np.mean(self.predict(X) == np.asarray(y)))

    # ------------------------------------------------------------------ files
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write a ``.npz`` model file (no pickle); returns the path written.

        The file is replaced atomically (:func:`sqnopt._files.atomic_write`): a crash or kill
        during the save leaves the previous model file intact."""
        p = Path(path)
        if not (np.all(np.isfinite(self.coef)) and np.all(np.isfinite(self.intercept))):
            raise ValueError(f"cannot save the model to {str(p)!r}: its coefficients contain NaN "
                             "or infinity (the training diverged); the file would not load")
        classes = self.classes
        if classes.dtype == object:
            classes = classes.astype(str)
        arrays: dict[str, Any] = {"coef": self.coef, "intercept": self.intercept,
                                  "classes": classes}
        if self.scale_offset is not None and self.scale_factor is not None:
            arrays.update(scale_offset=self.scale_offset, scale_factor=self.scale_factor)
        # the oldest version that describes the file, so older readers read unscaled models
        regression = self.strategy == "regression"
        meta = {"format": "sqnopt.LinearModel",
                "version": 3 if regression else 2 if self.scaled else 1,
                "strategy": str(self.strategy), "loss": str(self.loss),
                "probabilistic": bool(self.probabilistic), "info": self.info}
        if regression:
            meta["link"] = str(self.link)
        with atomic_write(p) as fh:
            np.savez(fh, **arrays, meta=np.array(json.dumps(meta, default=str)))
        return p

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> LinearModel:
        """Read a model file written by :meth:`save` (see :func:`read_model_file`)."""
        return read_model_file(path)


class ModelFileError(ValueError):
    """A model file that cannot be read; the message names the file and what is wrong."""


#: Arrays of a model file, as written by :meth:`LinearModel.save`.
_MEMBERS = ("coef", "intercept", "classes", "meta")
#: Optional arrays of a version-2 file: the feature scaling (both or neither).
_SCALING = ("scale_offset", "scale_factor")
_STRATEGIES = ("binary", "ovr", "multinomial", "regression")


def _check_numeric(arr: NDArray[Any], key: str, ndim: int, problem: Any) -> FloatArray:
    if arr.dtype.kind not in "fiu" or arr.ndim != ndim:
        raise problem(f"{key!r} must be a {ndim}-D array of numbers, got a {arr.ndim}-D array "
                      f"of dtype {arr.dtype}")
    out = np.asarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(out)):
        raise problem(f"{key!r} contains NaN or infinity (a diverged or damaged model)")
    return out


def _check_loss(loss: str, probabilistic: bool, regression: bool, problem: Any) -> None:
    """The metadata's ``loss`` against what it claims, when the loss is a registered objective
    (a plugin's that is not installed is taken as written: predictions need only the
    coefficients): ``probabilistic`` must be the objective's capability (probabilities from a
    hinge model's scores would be made up), and a regression model needs a regression loss."""
    from sqnopt.interfaces import PROBABILISTIC, REGRESSION
    from sqnopt.registry import get_registry

    registry = get_registry()
    if loss not in registry.names("objective"):
        return
    try:
        caps: frozenset[str] = getattr(registry.create("objective", loss), "capabilities",
                                       frozenset())
    except (TypeError, ValueError):   # needs parameters to be built: nothing to compare
        return
    if (PROBABILISTIC in caps) != probabilistic:
        raise problem(f"metadata 'probabilistic' is {probabilistic}, but the loss {loss!r} "
                      f"{'is' if PROBABILISTIC in caps else 'is not'} a likelihood")
    if (REGRESSION in caps) != regression:
        kind = "regression" if REGRESSION in caps else "classification"
        claimed = "'regression'" if regression else "a classification one"
        raise problem(f"the loss {loss!r} is a {kind} loss, but metadata 'strategy' is {claimed}")


def read_model_file(path: str | os.PathLike[str]) -> LinearModel:
    """Read and check a model file; every problem is one :class:`ModelFileError` (a
    ``ValueError``) naming the file and what is wrong.

    The file is a ZIP archive of ``.npy`` arrays (``np.savez``). It is read member by member
    with :mod:`zipfile` (CRC checked), each array's header checked against the bytes the
    archive holds before anything is allocated, and no pickle is ever loaded. Checked: the
    archive (empty, truncated, bad CRC, not a ZIP), the four arrays (present, numeric, shapes
    consistent, finite coefficients; version 2: the optional scaling arrays, both or neither,
    one finite entry per feature, positive factors), the metadata (a JSON object with
    ``format``, an integer ``version`` no newer than :data:`FORMAT_VERSION`, ``strategy``, ``loss``, ``probabilistic``
    and an optional ``info`` object, each of the right type). A missing file raises
    ``FileNotFoundError``.
    """
    p = Path(path)
    name = str(p)

    def problem(what: str) -> ModelFileError:
        return ModelFileError(f"model file {name!r}: {what}. Model files are written by "
                              "`sqnopt train --model FILE` or LinearModel.save")

    def read(zf: zipfile.ZipFile) -> dict[str, Any]:
        arrays = {key: read_member(zf, key, problem) for key in _MEMBERS}
        names = set(zf.namelist())
        arrays.update({key: read_member(zf, key, problem) for key in _SCALING
                       if f"{key}.npy" in names})
        return arrays

    arrays = read_archive(p, "model file", "model file", problem, ModelFileError, read)

    meta_arr = arrays["meta"]
    if meta_arr.dtype.kind != "U" or meta_arr.shape != ():
        raise problem("the metadata is not a JSON string")
    try:
        meta = json.loads(str(meta_arr[()]))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise problem(f"the metadata is not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise problem(f"the metadata is a JSON {type(meta).__name__}, not an object")
    if meta.get("format") != "sqnopt.LinearModel":
        raise problem("is not an sqnopt model file (metadata 'format' is "
                      f"{meta.get('format')!r}, expected 'sqnopt.LinearModel')")
    version = meta.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise problem(f"metadata 'version' must be a positive integer, got {version!r}")
    if version > FORMAT_VERSION:
        raise problem(f"was written by a newer sqnopt (format version {version}; this one reads "
                      f"up to {FORMAT_VERSION}); upgrade sqnopt to read it")
    for key, kind in (("strategy", str), ("loss", str), ("probabilistic", bool)):
        if key not in meta:
            raise problem(f"metadata field {key!r} is missing")
        if not isinstance(meta[key], kind):
            raise problem(f"metadata field {key!r} must be a {kind.__name__}, got "
                          f"{type(meta[key]).__name__} {meta[key]!r:.40}")
    if meta["strategy"] not in _STRATEGIES:
        raise problem(f"metadata 'strategy' must be one of {_STRATEGIES}, got "
                      f"{meta['strategy']!r:.40}")
    regression = meta["strategy"] == "regression"
    _check_loss(meta["loss"], meta["probabilistic"], regression, problem)
    if regression and version < 3:
        raise problem(f"a version-{version} file holds a regression model, which version 3 "
                      "introduced")
    link = meta.get("link", "identity")
    if link not in LINKS or (link != "identity" and not regression):
        raise problem(f"metadata 'link' must be one of {LINKS} (a regression model's), got "
                      f"{link!r:.40}")
    info = meta.get("info", {})
    if not isinstance(info, dict):
        raise problem(f"metadata field 'info' must be an object, got {type(info).__name__}")

    coef = _check_numeric(arrays["coef"], "coef", 2, problem)
    intercept = _check_numeric(arrays["intercept"], "intercept", 1, problem)
    classes = arrays["classes"]
    if classes.ndim != 1 or classes.dtype.kind not in "biufU":
        raise problem(f"'classes' must be a 1-D array of labels, got a {classes.ndim}-D array "
                      f"of dtype {classes.dtype}")
    if classes.dtype.kind == "f" and not np.all(np.isfinite(classes)):
        raise problem("'classes' contains NaN or infinity")
    if regression:
        if classes.shape[0] != 0:
            raise problem(f"a regression model has no classes, got "
                          f"[{short_list(classes.tolist(), 10)}]")
    elif classes.shape[0] < 2 or np.unique(classes).shape[0] != classes.shape[0]:
        raise problem(f"'classes' must hold at least two distinct labels, got "
                      f"[{short_list(classes.tolist(), 10)}]")
    if coef.shape[1] < 1:
        raise problem(f"'coef' has no features (shape {coef.shape})")
    if meta["strategy"] == "binary" and classes.shape[0] != 2:
        raise problem(f"a binary model has {classes.shape[0]} classes")
    scaling: dict[str, FloatArray] = {}
    present = [key for key in _SCALING if key in arrays]
    if present and version < 2:
        raise problem(f"a version-{version} file holds {present[0]!r}, which version 2 "
                      "introduced")
    if len(present) == 1:
        raise problem(f"{present[0]!r} is there without "
                      f"{[k for k in _SCALING if k not in present][0]!r}")
    for key in present:
        scaling[key] = _check_numeric(arrays[key], key, 1, problem)
        if scaling[key].shape != (coef.shape[1],):
            raise problem(f"{key!r} has {scaling[key].shape[0]} entries, 'coef' "
                          f"{coef.shape[1]} features")
    if "scale_factor" in scaling and not np.all(scaling["scale_factor"] > 0):
        raise problem("'scale_factor' must be positive")
    try:
        return LinearModel(coef=coef, intercept=intercept, classes=classes,
                           strategy=meta["strategy"], loss=meta["loss"],
                           probabilistic=meta["probabilistic"], info=dict(info),
                           scale_offset=scaling.get("scale_offset"),
                           scale_factor=scaling.get("scale_factor"), link=link)
    except ValueError as exc:  # shapes that do not fit together
        raise problem(str(exc).removeprefix("LinearModel: ")) from None
