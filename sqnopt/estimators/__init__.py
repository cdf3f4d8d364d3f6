"""scikit-learn estimators backed by sqnopt solvers (needs ``pip install 'sqnopt[sklearn]'``).

``import sqnopt`` never imports scikit-learn; this subpackage does.
"""

try:
    import sklearn  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError("sqnopt.estimators needs scikit-learn (>= 1.6). Install it with "
                      "pip install 'sqnopt[sklearn]'") from exc

from sqnopt.estimators._classifier import SQNClassifier, SQNConvergenceWarning
from sqnopt.estimators._path import (
    PathCV,
    RegularizationPath,
    alpha_grid,
    alpha_max,
    regularization_path,
)
from sqnopt.estimators._regressor import SQNRegressor

__all__ = ["PathCV", "RegularizationPath", "SQNClassifier", "SQNConvergenceWarning",
           "SQNRegressor", "alpha_grid", "alpha_max", "regularization_path"]
