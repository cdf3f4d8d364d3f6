"""A fitted linear classifier that needs only NumPy/SciPy: prediction, probabilities, and a
portable model file.

:class:`LinearModel` is what :class:`sqnopt.training.Trainer` produces and what the ``sqnopt``
command line saves and loads; the scikit-learn estimators store the same numbers as ``coef_`` and
``intercept_``.

Model files are NumPy ``.npz`` archives read with ``allow_pickle=False``: loading one never runs
code, unlike a pickle.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from sqnopt._files import atomic_write
from sqnopt.data import check_matrix

FloatArray = NDArray[np.float64]
#: ``binary``: one weight vector; ``ovr``: one binary model per class (one-vs-rest);
#: ``multinomial``: one block per class of a multiclass objective (softmax).
Strategy = Literal["binary", "ovr", "multinomial"]

FORMAT_VERSION = 1

__all__ = ["FORMAT_VERSION", "LinearModel", "Strategy", "log_softmax", "log_sigmoid"]


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
        ``n_outputs`` is 1 for a binary problem, else the number of classes.
    intercept : ndarray of shape (n_outputs,)
    classes : ndarray
        Sorted original labels; for a binary model a positive score predicts ``classes[1]``.
    strategy : {"binary", "ovr", "multinomial"}
    loss : str
        Registry name of the objective the model was trained with.
    probabilistic : bool
        The loss is a log-likelihood (logistic / softmax), so scores map to probabilities.
    info : dict
        Free-form JSON-able description (components, training summary).
    """

    coef: FloatArray
    intercept: FloatArray
    classes: NDArray[Any]
    strategy: Strategy
    loss: str
    probabilistic: bool
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        coef = np.atleast_2d(np.asarray(self.coef, dtype=np.float64))
        icpt = np.atleast_1d(np.asarray(self.intercept, dtype=np.float64))
        if coef.ndim != 2 or icpt.shape != (coef.shape[0],):
            raise ValueError(f"LinearModel: coef {coef.shape} and intercept {icpt.shape} do not "
                             "match (expected (n_outputs, n_features) and (n_outputs,))")
        k = len(self.classes)
        expected = 1 if k == 2 else k
        if coef.shape[0] != expected:
            raise ValueError(f"LinearModel: {k} classes need {expected} rows of coef, "
                             f"got {coef.shape[0]}")
        if self.strategy not in ("binary", "ovr", "multinomial"):
            raise ValueError(f"LinearModel: unknown strategy {self.strategy!r}")
        object.__setattr__(self, "coef", coef)
        object.__setattr__(self, "intercept", icpt)
        object.__setattr__(self, "classes", np.asarray(self.classes))

    # ------------------------------------------------------------------ prediction
    @property
    def n_features(self) -> int:
        return int(self.coef.shape[1])

    def _check_X(self, X: Any) -> Any:
        Xc = check_matrix(X)
        if Xc.shape[1] != self.n_features:
            raise ValueError(f"X has {Xc.shape[1]} features, but the model was trained with "
                             f"{self.n_features}. Use data with the same columns (for svmlight "
                             f"files pass n_features={self.n_features} when loading)")
        return Xc

    def decision_function(self, X: Any) -> FloatArray:
        """Scores: shape ``(n,)`` for a binary model, ``(n, n_classes)`` otherwise."""
        return self.scores_of(self._check_X(X))

    def scores_of(self, Xc: Any) -> FloatArray:
        """:meth:`decision_function` of an already validated matrix (no checks, no copy)."""
        if sp.issparse(Xc):
            scores = np.asarray(Xc @ self.coef.T, dtype=np.float64)
        else:
            scores = np.asarray(Xc, dtype=np.float64) @ self.coef.T
        scores = scores + self.intercept
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X: Any) -> NDArray[Any]:
        return self.labels_of_scores(self.decision_function(X))

    def labels_of_scores(self, scores: FloatArray) -> NDArray[Any]:
        """Predicted labels from the scores :meth:`decision_function` returned."""
        idx = (scores > 0).astype(np.intp) if scores.ndim == 1 else np.argmax(scores, axis=1)
        labels: NDArray[Any] = self.classes[idx]
        return labels

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
        classes = self.classes
        if classes.dtype == object:
            classes = classes.astype(str)
        meta = {"format": "sqnopt.LinearModel", "version": FORMAT_VERSION,
                "strategy": self.strategy, "loss": self.loss,
                "probabilistic": self.probabilistic, "info": self.info}
        with atomic_write(p) as fh:
            np.savez(fh, coef=self.coef, intercept=self.intercept, classes=classes,
                     meta=np.array(json.dumps(meta, default=str)))
        return p

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> LinearModel:
        """Read a model file written by :meth:`save`."""
        p = Path(path)
        if not p.exists():
            raise FileNotFoundError(f"model file {str(p)!r} does not exist")
        try:
            with np.load(p, allow_pickle=False) as z:
                meta = json.loads(str(z["meta"]))
                coef, intercept, classes = z["coef"], z["intercept"], z["classes"]
        except (ValueError, KeyError, OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{str(p)!r} is not an sqnopt model file ({exc}). Model files are "
                             "written by `sqnopt train --model FILE` or LinearModel.save") from exc
        if meta.get("format") != "sqnopt.LinearModel":
            raise ValueError(f"{str(p)!r} is not an sqnopt model file")
        if int(meta.get("version", 0)) > FORMAT_VERSION:
            raise ValueError(f"{str(p)!r} was written by a newer sqnopt (format "
                             f"{meta['version']}); upgrade sqnopt to read it")
        return cls(coef=coef, intercept=intercept, classes=classes, strategy=meta["strategy"],
                   loss=meta["loss"], probabilistic=bool(meta["probabilistic"]),
                   info=dict(meta.get("info", {})))
