"""Where the fixed cost of one ``SQNClassifier().fit`` goes: the inclusive CPU time of each
stage of the fit on the 100 x 10 dense problem of ``bench/estimator_overhead.py`` (one pass,
``auto`` picks Newton there), or on mushrooms as the race poses it (``--data mushrooms``, needs
the shared data sets).

Each stage is a function of the fit path, wrapped with a CPU-time counter (the process's CPU
time, which other processes on a shared machine disturb less than wall time); the wrappers add
about a microsecond per call, so the figures are a little high and the nested ones are included
in their parents'. What is not listed is the stage's own code between the calls. Stages this
version of the code does not have or does not call are left out (the script runs on older
trees too, for comparisons).

    OPENBLAS_NUM_THREADS=1 python bench/fit_stages.py [--data boxes|mushrooms] [--fits 3000]
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
try:
    import sqnopt  # noqa: F401
except ImportError:
    sys.path.insert(0, str(HERE.parent))

#: (module, attribute path, depth for the indented listing)
STAGES = [
    ("sqnopt.estimators._classifier", "SQNClassifier.fit", 0),
    ("sqnopt.estimators._classifier", "fast_fit_data", 1),
    ("sqnopt.estimators._classifier", "validate_data", 1),
    ("sqnopt.estimators._classifier", "check_classification_targets", 1),
    ("sqnopt.estimators._classifier", "SQNClassifier._get_trainer", 1),
    ("sqnopt.training._trainer", "Trainer.fit", 1),
    ("sqnopt.training._trainer", "check_matrix", 2),
    ("sqnopt.training._trainer", "encode_labels", 2),
    ("sqnopt.training._trainer", "class_counts", 2),
    ("sqnopt.training._trainer", "sample_weights", 2),
    ("sqnopt.training._trainer", "check_two_classes", 2),
    ("sqnopt.training._trainer", "make_setup", 2),
    ("sqnopt.training._setup", "objective_with_lam", 3),
    ("sqnopt.training._setup", "requested_components", 3),
    ("sqnopt.training._setup", "Requested.recipe", 3),
    ("sqnopt.training._trainer", "make_bit_generator", 2),
    ("sqnopt.training._trainer", "make_solver", 2),
    ("sqnopt.solver._build", "_Builder.init_state", 2),
    ("sqnopt.solver._build", "_Builder._init_validated", 2),
    ("sqnopt.solver._build", "_Builder._prepare", 3),
    ("sqnopt.solver._build", "_Builder._new_state", 3),
    ("sqnopt.solver._build", "_Builder._make_loop", 4),
    ("sqnopt.training._trainer", "run_budget", 2),
    ("sqnopt.solver._run", "_Runner._run", 3),
    ("sqnopt.solver._run", "_Runner._limits", 4),
    ("sqnopt.solver._run", "_Runner._record", 4),
    ("sqnopt.solver._run", "_Runner._call_callbacks", 4),
    ("sqnopt.solver._run", "_Runner._result", 4),
    ("sqnopt.training._trainer", "check_majority", 2),
    ("sqnopt.training._trainer", "Trainer._finish", 2),
    ("sqnopt.estimators._classifier", "SQNClassifier._set_fitted", 1),
]


def _wrap(acc: dict[str, float], module: str, path: str) -> bool:
    """Time ``module.path``; False when this tree has no such function (another version)."""
    owner: Any = importlib.import_module(module)
    *parents, name = path.split(".")
    for p in parents:
        owner = getattr(owner, p)
    f = getattr(owner, name, None)
    if f is None:
        return False

    @functools.wraps(f)
    def timed(*args: Any, **kwargs: Any) -> Any:
        tic = time.process_time()
        try:
            return f(*args, **kwargs)
        finally:
            acc[path] += time.process_time() - tic

    setattr(owner, name, timed)
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", choices=["boxes", "mushrooms"], default="boxes")
    ap.add_argument("--fits", type=int, default=None,
                    help="fits timed (default 3000 on boxes, 60 on mushrooms)")
    args = ap.parse_args(argv)

    import numpy as np

    from sqnopt import SQNClassifier

    if args.data == "boxes":
        from sqnopt.datasets import make_boxes

        X, y = make_boxes(100, 10, random_state=0)
        X = np.ascontiguousarray(X, dtype=np.float64)
        kw: dict[str, Any] = dict(max_iter=1, tol=None, random_state=0)
    else:
        sys.path.insert(0, str(HERE))
        from race.problems import datasets_dir, load_problems

        p = next(load_problems(["mushrooms"], ["logistic"], datasets_dir(), quick=True,
                               skipped=[]))
        X, y = p.X, p.y
        kw = dict(alpha=p.alpha, fit_intercept=False, random_state=0)
    fits = args.fits or (3000 if args.data == "boxes" else 60)
    acc: dict[str, float] = defaultdict(float)
    present = {path for module, path, _ in STAGES if _wrap(acc, module, path)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(max(fits // 20, 3)):
            SQNClassifier(**kw).fit(X, y)       # warm-up
        acc.clear()
        for _ in range(fits):
            SQNClassifier(**kw).fit(X, y)
    print(f"{args.data}: CPU time per fit, inclusive, over {fits} fits")
    for _, path, depth in STAGES:
        if path in present and (acc[path] > 0 or depth < 2):
            print(f"{acc[path] / fits * 1e6:10.1f} us  {'  ' * depth}{path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
