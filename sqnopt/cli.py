"""Command line of sqnopt.

    sqnopt train [DATA]          train a linear classifier (default DATA: the built-in a9a set)
    sqnopt evaluate MODEL DATA   accuracy, log loss, AUC of a saved model
    sqnopt predict MODEL DATA    labels or probabilities, one line per sample
    sqnopt plot [HISTORY ...]    objective vs samples processed (matplotlib: sqnopt[plot])
    sqnopt list                  registered components (with parameters), plugins, data sets
    sqnopt demo                  the paper-003 synthetic SVM problem

Components are given by registered name, optionally with parameters:
``--curvature lbfgs:memory=5``, ``--step decaying:eps0=0.1,T0=1e4``; named compositions by
``--preset NAME[:k=v,...]`` (:mod:`sqnopt.presets`). Data: svmlight/LIBSVM files, Criteo TSV
logs, CSV/TSV tables with a header, or a built-in data set.

``sqnopt train --checkpoint FILE`` writes the whole state of the training run to ``FILE``
every ``--checkpoint-every`` passes (by default every pass, skipping those that would make the
writing take more than a tenth of the run) and at the end (atomically: an interrupted run
leaves the last complete checkpoint); ``--resume FILE`` continues such a run with the same settings and
data (a larger ``--max-epochs`` extends it) and ends with the model the uninterrupted run ends
with.

Exit status: 0 on success (a fit that did not meet its tolerance prints a warning), 1 on an
error, 3 when the training run diverged (the model written is the best iterate before it),
130 when interrupted.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import importlib.util
import io
import json
import math
import re
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from sqnopt._files import check_output_path, write_text_atomic

if TYPE_CHECKING:
    from sqnopt.data import LabelKind
    from sqnopt.model import LinearModel

DEFAULT_MODEL = "sqnopt_model.npz"
DEFAULT_HISTORY = "sqnopt_history.json"
HISTORY_FORMAT = "sqnopt.history"
#: Exit status of a training run that diverged.
EXIT_DIVERGED = 3
#: Without ``--checkpoint-every``, checkpoints are skipped while writing them took more than
#: this fraction of the run (``Trainer.fit(checkpoint_overhead=...)``).
CHECKPOINT_OVERHEAD = 0.1


class CLIError(Exception):
    """An error the command line reports as one message (exit status 1)."""


# ---------------------------------------------------------------------------- helpers
def parse_component(text: str) -> str | tuple[str, dict[str, Any]]:
    """``"name"`` or ``"name:k=v,k=v"`` -> a component spec (values parsed as Python literals)."""
    name, sep, rest = text.partition(":")
    name = name.strip()
    if not name:
        raise CLIError(f"empty component name in {text!r}")
    if not sep:
        return name
    params: dict[str, Any] = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise CLIError(f"bad parameter {item!r} in {text!r}; write name:key=value,key=value")
        if key.strip() in params:
            raise CLIError(f"parameter {key.strip()!r} is given twice in {text!r}; keep one")
        params[key.strip()] = _literal(value.strip())
    return name, params


def _literal(value: str) -> Any:
    low = value.lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "false"):
        return low == "true"
    try:
        v = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return value
    if isinstance(v, float) and v.is_integer() and "e" in low and "." not in low:
        return int(v)  # 1e4 -> 10000 for integer parameters
    return v


def _parse_class_weight(text: str | None) -> Any:
    if text is None or text.lower() == "none":
        return None
    if text == "balanced":
        return "balanced"
    out: dict[Any, float] = {}
    for item in text.split(","):
        label, eq, w = item.partition("=")
        if not eq:
            raise CLIError(f"--class-weight: write 'balanced' or LABEL=WEIGHT,...; got {text!r}")
        try:
            weight = float(w)
        except ValueError:
            raise CLIError(f"--class-weight: the weight {w.strip()!r} of label {label.strip()!r} "
                           "is not a number") from None
        out[_literal(label.strip())] = weight
    return out


def _table_format(path: Path, fmt: str) -> str:
    """The format of a data file: ``fmt`` unless ``auto``; then ``csv`` for a ``.csv`` /
    ``.tsv`` name, ``criteo`` for a first line of >= 13 tabs, else ``svmlight``."""
    from sqnopt.datasets import table_delimiter

    if fmt != "auto":
        return fmt
    detected = _detect_format(path)
    if table_delimiter(path) is not None and detected != "criteo":
        return "csv"
    return detected


def _check_format_options(fmt: str, source: str, args: argparse.Namespace | None) -> None:
    """Refuse training options that do not apply to the data's format: they would be ignored
    in silence, and the model would not be the one asked for."""
    if args is None:
        return
    if fmt in ("csv", "tsv"):
        if getattr(args, "n_features", None) is not None:
            raise CLIError(f"--n-features sets the width of svmlight data, but {source} is read "
                           "as a CSV/TSV table, whose features come from its columns: remove "
                           "--n-features")
        return
    given = [opt for opt, attr in (("--target", "target"), ("--categorical", "categorical"),
                                   ("--drop", "drop")) if getattr(args, attr, None)]
    if given:
        raise CLIError(f"{'/'.join(given)} name{'s' if len(given) == 1 else ''} columns of a "
                       f"CSV/TSV table, but {source} is read as {fmt} data, which has none: "
                       "remove the option, or pass --format csv (or tsv) if the file is a table "
                       "with a header row")


def _delimiter(path: Path, fmt: str) -> str | None:
    from sqnopt.datasets import table_delimiter

    return "\t" if fmt == "tsv" else table_delimiter(path)


def _load_data(spec: str, fmt: str, n_features: int | None = None, split: str = "train",
               args: argparse.Namespace | None = None,
               zero_based: bool | Literal["auto"] = "auto",
               label_kind: LabelKind = "multiclass",
               ) -> tuple[Any, np.ndarray[Any, Any], dict[str, Any]]:
    """``(X, y, info)`` from a built-in name or a file; ``info["features"]`` describes how the
    features were made (stored in the model, so ``evaluate``/``predict`` make the same).
    ``label_kind``: the loss's (``"regression"``: a table's label column holds real-valued
    targets)."""
    from sqnopt.datasets import BUILTIN_DATASETS, builtin_path, load_builtin

    if spec.lower() in BUILTIN_DATASETS and not Path(spec).exists():
        ds = BUILTIN_DATASETS[spec.lower()]
        _check_format_options("svmlight", f"the built-in {ds.name}", args)
        X, y = load_builtin(ds.name, split)  # type: ignore[arg-type]
        return X, y, {"source": f"{ds.name} (built-in, {split}; {ds.license})",
                      "name": f"{ds.name} ({split})",
                      "features": {"format": "svmlight", "n_features": ds.n_features},
                      "path": str(builtin_path(ds.name, split))}  # type: ignore[arg-type]
    path = Path(spec)
    if not path.exists():
        known = ", ".join(sorted(BUILTIN_DATASETS))
        raise CLIError(f"data {spec!r}: no such file, and not a built-in dataset ({known})")
    fmt = _table_format(path, fmt)
    _check_format_options(fmt, str(path), args)
    if fmt in ("csv", "tsv"):
        from sqnopt.datasets import load_table

        X, yt, table = load_table(path, target=getattr(args, "target", None),
                                  delimiter=_delimiter(path, fmt),
                                  categorical=_column_list(getattr(args, "categorical", None)),
                                  drop=_column_list(getattr(args, "drop", None)),
                                  encoding=getattr(args, "encoding", "onehot"),
                                  label_kind=label_kind)
        assert yt is not None
        kinds = (f"{len(table['numeric'])} numeric"
                 + (f", {len(table['categorical'])} categorical ({table['encoding']})"
                    if table["categorical"] else ""))
        return X, yt, {"source": f"{path} (label column {table['target']!r}; {kinds} columns)",
                       "name": path.name, "features": table}
    if fmt == "criteo":
        from sqnopt.datasets import criteo_featurizer, read_criteo

        table_c, y = read_criteo(path)
        feats = criteo_featurizer()
        X = feats.transform(table_c)
        return X, y, {"source": str(path), "name": path.name,
                      "features": {"format": "criteo", "n_features": X.shape[1],
                                   "featurizer": {"n_bags": feats.n_bags,
                                                  "numeric_bins": feats.numeric_bins,
                                                  "seed": feats.seed}}}
    from sqnopt.datasets._io import load_svmlight_base

    # the index base found here is the model's: test and prediction files are read with it
    X, y, zero = load_svmlight_base(path, n_features=n_features, zero_based=zero_based)
    return X, y, {"source": str(path), "name": path.name,
                  "features": {"format": "svmlight", "n_features": X.shape[1],
                               "zero_based": zero}}


def _column_list(values: list[str] | None) -> list[str]:
    """Column names from repeated ``--categorical`` / ``--drop`` options, each a name or a
    comma-separated list."""
    return [name.strip() for v in values or [] for name in v.split(",") if name.strip()]


def _load_for_model(spec: str, fmt: str, model: Any, args: argparse.Namespace,
                    need_labels: bool = True) -> tuple[Any, Any, dict[str, Any]]:
    """Data for ``evaluate``/``predict``, made into the model's features the way ``train``
    made them; a feature-count mismatch is an error naming both counts."""
    y: Any
    from sqnopt.datasets import BUILTIN_DATASETS

    feats = model.info.get("features", {})
    if not isinstance(feats, dict):
        feats = {}
    trained_on = feats.get("format")
    n_model = model.n_features
    if spec.lower() in BUILTIN_DATASETS and not Path(spec).exists():
        X, y, info = _load_data(spec, "auto", split="test")
    else:
        path = Path(spec)
        if not path.exists():
            raise CLIError(f"data {spec!r}: no such file")
        if fmt == "auto":
            from sqnopt.datasets import table_delimiter

            detected = _detect_format(path)
            fmt = ("csv" if table_delimiter(path) is not None and detected != "criteo" else
                   trained_on if trained_on in ("criteo", "csv") else detected)
        if fmt in ("csv", "tsv"):
            from sqnopt.datasets import load_table

            X, y_or_none, _ = load_table(path, target=args.target,
                                         delimiter=_delimiter(path, fmt),
                                         spec=feats if trained_on == "csv" else None,
                                         require_target=need_labels,
                                         label_kind=("regression"
                                                     if model.strategy == "regression"
                                                     else "multiclass"))
            y = y_or_none
            info = {"source": str(path)}
        elif fmt == "criteo":
            from sqnopt.datasets import CRITEO_CATEGORICAL, CRITEO_NUMERIC, CTRFeaturizer, read_criteo

            fz = feats.get("featurizer", {})
            f = CTRFeaturizer(numeric=CRITEO_NUMERIC, hashed=CRITEO_CATEGORICAL,
                              n_bags=int(fz.get("n_bags", 2**13)),
                              numeric_bins=int(fz.get("numeric_bins", 24)),
                              seed=int(fz.get("seed", 0)))
            table, y = read_criteo(path)
            X, info = f.transform(table), {"source": str(path)}
        else:
            from sqnopt.datasets import load_svmlight

            n_given = args.n_features
            try:
                X, y = load_svmlight(path, n_features=n_given,
                                     zero_based=_index_base(feats) if trained_on == "svmlight"
                                     else "auto")
            except ValueError as exc:
                if n_given is not None and "n_features" in str(exc):
                    raise CLIError(f"{exc}; the model {args.model!r} has {n_model} "
                                   "features") from None
                raise
            info = {"source": str(path)}
            if X.shape[1] < n_model and n_given is None:
                raise CLIError(
                    f"{spec}: its largest feature index is {X.shape[1]}, but the model "
                    f"{args.model!r} was trained with {n_model} features. If the file is "
                    "simply missing the last, all-zero features (svmlight files do not record "
                    f"their width), pass --n-features {n_model}; otherwise use data with the "
                    "model's features")
    if X.shape[1] != n_model:
        raise CLIError(f"{spec}: the data has {X.shape[1]} features, but the model "
                       f"{args.model!r} was trained with {n_model}; use data with the same "
                       "features (the same columns, or the same featurizer)")
    return X, y, info


def _detect_format(path: Path) -> str:
    from sqnopt.datasets import open_binary
    from sqnopt.datasets._io import READ_ERRORS

    try:
        with open_binary(path) as fh:
            first = fh.readline()
    except READ_ERRORS as exc:
        if isinstance(exc, (FileNotFoundError, IsADirectoryError)):
            raise
        raise CLIError(f"{path}: line 1: cannot read the file: corrupt or truncated data "
                       f"({type(exc).__name__}: {exc})") from None
    if first.count(b"\t") >= 13 and first.split(b"\t", 1)[0].strip() in (b"0", b"1"):
        return "criteo"  # a label first: a Criteo log (a table's header row names columns)
    return "svmlight"


def _fail(exc: BaseException) -> int:
    msg = str(exc) if str(exc) else type(exc).__name__
    print(f"sqnopt: error: {cli_terms(' '.join(msg.split()))}", file=sys.stderr)  # one line
    return 1


#: The library's parameter -> the option of the command line that sets it. The library's
#: messages name its Python parameters (``max_iter=``, ``step='auto'``); the command line
#: re-emits them (:func:`_fail`, :func:`_print_warnings`) with its own options.
CLI_OPTIONS = {
    "max_iter": "--max-epochs", "max_epochs": "--max-epochs", "tol": "--tol", "gtol": "--tol",
    "alpha": "--alpha", "loss": "--loss", "curvature": "--curvature", "step": "--step",
    "schedule": "--schedule", "gradient": "--gradient", "projection": "--projection",
    "sampling": "--sampling", "multiclass": "--multiclass", "class_weight": "--class-weight",
    "n_iter_no_change": "--n-iter-no-change", "target": "--target",
    "n_features": "--n-features", "random_state": "--seed", "categorical": "--categorical",
    "drop": "--drop", "cache": "--cache",
}
#: Parameters also named without a value in prose ("increase max_iter"); the others are
#: ordinary words there ("the step").
_BARE = ("max_iter", "max_epochs", "tol", "alpha", "n_iter_no_change")
_ASSIGN = re.compile(r"\b(" + "|".join(CLI_OPTIONS) + r")=('?)([^'\s,;)]*)\2")
#: a list of column names, ``categorical=['a', 'b']`` -> ``--categorical a,b``
_COLUMNS = re.compile(r"\b(categorical|drop)=\[([^\]]*)\]")
_SETTING = re.compile(r"\b(" + "|".join(CLI_OPTIONS) + r"): checkpoint\b")
_BARE_WORD = re.compile(r"(?<![-\w])(" + "|".join(_BARE) + r")\b(?![=(])")
#: a component's description, ``name(k=v, ...)``: its parameters are the component's, kept
_COMPONENT = re.compile(r"\b[A-Za-z_]\w*\([^()]*\)")


def cli_terms(text: str) -> str:
    """``text`` (a library message) with the command line's options in place of the Python
    parameters they set: ``max_iter=20`` -> ``--max-epochs 20``, ``step='auto'`` -> ``--step
    auto``, ``tol=None`` -> ``--tol none``, ``increase max_iter`` -> ``increase
    --max-epochs``, ``lam > 0`` -> ``--alpha > 0``, ``lam = 0`` -> ``--alpha 0``,
    ``max_samples=N samples`` -> ``N samples`` (the budget ``--max-epochs`` set). Components' descriptions
    (``score_line(max_iter=30)``) keep their parameters, which ``NAME:k=v`` takes as they
    are."""
    kept: list[str] = []

    def keep(m: re.Match[str]) -> str:
        kept.append(m.group(0))
        return f"\x00{len(kept) - 1}\x00"

    def assign(m: re.Match[str]) -> str:
        value = m.group(3)
        return f"{CLI_OPTIONS[m.group(1)]} {'none' if value == 'None' else value}"

    def columns(m: re.Match[str]) -> str:
        try:
            names = ast.literal_eval(f"[{m.group(2)}]")
        except (ValueError, SyntaxError):
            return m.group(0)
        return f"{CLI_OPTIONS[m.group(1)]} {','.join(str(n) for n in names)}"

    out = _COMPONENT.sub(keep, text)
    out = re.sub(r"\bmax_samples=(\d+) samples", r"\1 samples", out)
    out = re.sub(r"\bstep='auto' in the estimators\b", "step='auto'", out)
    out = re.sub(r"\blam > 0\b", "--alpha > 0", out)
    out = re.sub(r"\blam = 0\b", "--alpha 0", out)
    out = re.sub(r"\blogy=False\b", "--linear-y", out)
    out = _COLUMNS.sub(columns, out)
    out = _ASSIGN.sub(assign, out)
    # a resumed fit's settings that differ: ``random_state: checkpoint '0', now '5'``
    out = _SETTING.sub(lambda m: f"{CLI_OPTIONS[m.group(1)]}: checkpoint", out)
    out = _BARE_WORD.sub(lambda m: CLI_OPTIONS[m.group(1)], out)
    return re.sub("\x00(\\d+)\x00", lambda m: kept[int(m.group(1))], out)


def _number(kind: type, low: float, strict: bool, what: str, high: float | None = None) -> Any:
    """An argparse ``type``: a finite ``kind`` number ``> low`` (``>= low`` if not strict) and
    at most ``high``."""
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if (not math.isfinite(value) or (value <= low if strict else value < low)
                or (high is not None and value > high)):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    parse.__name__ = what  # argparse names the type in its messages
    return parse


_positive_int = _number(int, 0, True, "a positive integer")
_feature_count = _number(int, 0, True, "an integer in [1, 2**31 - 1]", 2**31 - 1)
_nonnegative_int = _number(int, 0, False, "an integer >= 0")


def _n_jobs(text: str) -> int:
    """``--n-jobs``: a nonzero integer (``-1``: every usable core)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a nonzero integer (-1: every usable core), "
                                         f"got {text!r}") from None
    if value == 0:
        raise argparse.ArgumentTypeError("expected a nonzero integer (1: one thread, -1: every "
                                         "usable core), got '0'")
    return value
_positive_float = _number(float, 0.0, True, "a positive number")
_nonnegative_float = _number(float, 0.0, False, "a number >= 0")
_fraction = _number(float, 0.0, True, "a number in (0, 1)", 0.999999)
_fraction_closed = _number(float, 0.0, False, "a number in [0, 1]", 1.0)


def _tol(text: str) -> float | None:
    """``--tol``: a number >= 0, or ``none``."""
    if text.strip().lower() == "none":
        return None
    value: float = _nonnegative_float(text)
    return value


def _progress(mode: str, total: int | None = None, unit: str = " samples") -> Any:
    """The training progress bar: ``auto`` draws on a terminal (once the run has lasted a
    second), in a notebook, and as a line every 30 s in a log; ``always`` as on a terminal,
    from the start, whatever stderr is; ``never`` not at all."""
    from sqnopt.progress import ProgressBar

    enabled = {"auto": None, "always": True, "never": False}[mode]
    return ProgressBar(total=total, enabled=enabled, show_final=True, label="train", unit=unit,
                       delay=0.0 if mode == "always" else 1.0)


# ---------------------------------------------------------------------------- train
def _loop_name(result: Any) -> str:
    """Which loop ran a solve (``SolveResult.path``: adaptive, lazy, scaled, generic, python)."""
    path = getattr(result, "path", None)
    return str(path) if path else ("compiled" if result.compiled else "python")


def _preset(args: argparse.Namespace, alpha: float) -> Any:
    """The :class:`~sqnopt.Solver` of ``--preset NAME[:k=v,...]``, its objective from
    ``--loss`` when the preset takes one."""
    import inspect

    from sqnopt.registry import UnknownComponentError, get_registry
    from sqnopt.training._setup import objective_with_lam

    spec = parse_component(args.preset)
    name, params = (spec, {}) if isinstance(spec, str) else spec
    try:
        factory = get_registry().preset(name).factory   # built-ins and plugins' presets
    except UnknownComponentError as exc:
        raise CLIError(f"{exc} (see 'sqnopt list')") from None
    accepted = inspect.signature(factory).parameters
    for key in ("lam",):
        if key in params:
            raise CLIError(f"--preset {name}: give the regularisation with --alpha, not {key}=")
    kwargs: dict[str, Any] = dict(params)
    if ("objective" in kwargs or args.loss is not None) and "objective" not in accepted:
        given = "objective=" if "objective" in kwargs else "--loss"
        raise CLIError(f"--preset {name} fixes its loss ({factory(lam=alpha).objective.name}); "
                       f"drop {given}, or compose the components with --loss/--curvature/"
                       "--schedule/--step")
    if "objective" in kwargs and args.loss is not None:
        raise CLIError(f"--preset {name}: the loss is given twice (objective= and --loss); "
                       "keep one")
    if "objective" in kwargs:   # --preset NAME:objective=LOSS takes --alpha like --loss does
        try:
            kwargs["objective"] = objective_with_lam(kwargs["objective"], alpha)
        except (TypeError, ValueError) as exc:
            raise CLIError(f"--preset {name}: objective={kwargs['objective']!r}: {exc}") from None
    if args.loss is not None:
        kwargs["objective"] = objective_with_lam(parse_component(args.loss), alpha)
    kwargs["lam"] = None if "objective" in kwargs else alpha
    try:
        return factory(**kwargs)
    except TypeError as exc:
        known = ", ".join(k for k in accepted if k not in ("lam", "solver_kwargs"))
        twice = re.search(r"multiple values for keyword argument '(\w+)'", str(exc))
        if twice is not None and twice.group(1) in params:
            # a Solver keyword the preset's factory sets itself (a component it composes):
            # the component options override a preset's parts, NAME:key= cannot
            key = twice.group(1)
            fix = (f"pass {CLI_OPTIONS[key]} instead, which overrides that part of the preset"
                   if key in CLI_OPTIONS else "compose the solver in Python to change it")
            raise CLIError(f"--preset {name} sets its {key} itself, so '{key}' is not one of "
                           f"its parameters ({known}); {fix}") from None
        raise CLIError(f"--preset {name}: {exc}; its parameters: {known}") from None


def _losses_with(requires: frozenset[str], alpha: float) -> list[str]:
    """Registered losses that provide ``requires`` themselves or through another form."""
    from sqnopt.interfaces import Objective
    from sqnopt.recipes import adapt_objective
    from sqnopt.registry import get_registry

    out = []
    reg = get_registry()
    for entry in reg.entries("objective"):
        try:
            obj = reg.create("objective", entry.name, lam=alpha)
        except (TypeError, ValueError):
            continue
        assert isinstance(obj, Objective)
        form = adapt_objective(obj, requires)
        if requires <= form.capabilities:
            out.append(entry.name if form.name == obj.name else
                       f"{entry.name} (solved as {form.name})")
    return out


def _components(args: argparse.Namespace) -> dict[str, Any]:
    """Every component of ``train``, resolved and checked before any data is read: unknown
    names, bad parameters and combinations that cannot work fail here."""
    from sqnopt.interfaces import (
        STRONGLY_CONVEX,
        BatchSchedule,
        CurvatureModel,
        GradientEstimator,
        Projection,
        StepRule,
    )
    from sqnopt.recipes import adapt_objective
    from sqnopt.solver import IncompatibleComponentsError, Solver
    from sqnopt.solver._solver import resolve_component
    from sqnopt.training._setup import objective_with_lam

    alpha = float(args.alpha)
    comp: dict[str, Any] = {"curvature": "auto", "schedule": "auto", "step": "auto",
                            "gradient": "auto", "projection": None, "average": args.average,
                            "sampling": args.sampling,
                            "fit_intercept": not args.no_intercept, "notes": []}
    if args.preset is not None:
        solver = _preset(args, alpha)
        comp.update(objective=solver.objective, curvature=solver.curvature,
                    schedule=solver.schedule, step=solver.step, gradient=solver.gradient,
                    projection=solver.projection, average=args.average or solver.average)
        if args.sampling == "auto":
            comp["sampling"] = solver.sampling
        strong = [c for c in (solver.curvature, solver.step, solver.gradient, solver.projection)
                  if c is not None and STRONGLY_CONVEX in c.requires]
        if strong and not args.no_intercept:
            # a component that requires strong convexity (Pegasos' step 1/(lam t)) would leave
            # an unregularised intercept unchecked: the paper's bias, a regularised feature
            comp["fit_intercept"] = "regularized"
    else:
        default = "squared_error" if getattr(args, "task", None) == "regression" else "logloss"
        comp["objective"] = objective_with_lam(parse_component(args.loss or default), alpha)
    task = getattr(args, "task", None)
    if task is not None:
        kind = comp["objective"].label_kind
        if (kind == "regression") != (task == "regression"):
            raise CLIError(f"--task {task}: the loss {comp['objective'].name} fits "
                           f"{'real-valued targets' if kind == 'regression' else 'classes'}; "
                           + ("use a regression loss (--loss squared_error, huber or poisson)"
                              if task == "regression" else
                              "use a classification loss (e.g. --loss logloss)"))
    if comp["objective"].label_kind == "regression" and args.class_weight is not None:
        raise CLIError("--class-weight: a regression loss has no classes")
    comp["penalty"] = _penalty(args)
    if comp["penalty"] is not None:
        return comp     # the composite methods or FTRL-Proximal: checked by _penalty
    if args.curvature != "auto":
        comp["curvature"] = resolve_component("curvature", parse_component(args.curvature),
                                              CurvatureModel)
    if args.schedule != "auto":
        comp["schedule"] = resolve_component("schedule", parse_component(args.schedule),
                                             BatchSchedule)
    if args.step != "auto":
        comp["step"] = resolve_component("step", parse_component(args.step), StepRule)
    if args.gradient != "auto":
        comp["gradient"] = resolve_component("gradient", parse_component(args.gradient),
                                             GradientEstimator)
    if args.projection is not None:
        comp["projection"] = resolve_component("projection", parse_component(args.projection),
                                               Projection)
    objective, curv = comp["objective"], comp["curvature"]
    if curv != "auto":
        form = adapt_objective(objective, curv.requires)
        missing = sorted(curv.requires - form.capabilities)
        if missing:
            ok = _losses_with(curv.requires, alpha)
            raise CLIError(
                f"--curvature {curv.name} needs a loss with the capability "
                f"{', '.join(repr(m) for m in missing)}, which {objective.name} has in no form; "
                "losses that work with it: "
                f"{', '.join(ok) if ok else 'none registered'}")
        if form.name != objective.name:
            comp["notes"].append(
                f"loss:  {objective.name} is solved in its {form.name} form (the same "
                f"objective), which provides the "
                f"{', '.join(sorted(curv.requires - objective.capabilities))} capability "
                f"{curv.name} needs")
        try:  # the combination fails here, before any work, if it cannot work
            Solver(form, curv,
                   comp["schedule"] if comp["schedule"] != "auto" else "fixed",
                   comp["step"] if comp["step"] != "auto" else "constant",
                   projection=comp["projection"],
                   fit_intercept=comp["fit_intercept"])
        except IncompatibleComponentsError as exc:
            raise CLIError(str(exc)) from None
    return comp


#: --curvature values of an in-memory --penalty l1 / elasticnet fit
_COMPOSITE_CURVATURES = ("auto", "owlqn", "newglmnet")


def _penalty(args: argparse.Namespace) -> Any:
    """The :class:`~sqnopt.interfaces.Penalty` of ``--penalty`` / ``--l1-ratio`` / ``--alpha``
    (``None`` for l2), the options it cannot be combined with refused with the fix named
    (before any data is read). In memory the composite methods solve it; with
    ``--chunk-size`` the large-data recipe's FTRL-Proximal AdaGrad."""
    from sqnopt.penalties import L1, ElasticNet

    name = getattr(args, "penalty", "l2")
    ratio = getattr(args, "l1_ratio", None)
    if name != "elasticnet" and ratio is not None:
        raise CLIError(f"--l1-ratio is the L1 share of --penalty elasticnet; with --penalty "
                       f"{name} drop it (or pass --penalty elasticnet)")
    if name == "l2":
        return None
    if name == "elasticnet" and ratio is None:
        raise CLIError("--penalty elasticnet needs --l1-ratio R (the L1 share, in [0, 1])")
    what = f"--penalty {name}"
    if args.preset is not None:
        raise CLIError(f"{what} does not combine with --preset (a preset fixes its own "
                       "components); drop --preset, or use --penalty l2")
    if args.projection is not None:
        raise CLIError(f"{what} does not combine with --projection: drop it (or use "
                       "--penalty l2)")
    if args.average:
        raise CLIError(f"{what} takes no --average (an average of sparse iterates is not "
                       "sparse): drop it")
    streamed = args.chunk_size is not None
    given = {opt: getattr(args, opt) for opt in ("curvature", "gradient", "schedule", "step")}
    for opt, value in given.items():
        if streamed and value != "auto":
            raise CLIError(f"{what} with --chunk-size is fitted by the large-data recipe "
                           f"(FTRL-Proximal AdaGrad with a raced step), which takes no "
                           f"--{opt} {value}: drop --{opt}"
                           + (" ('owlqn' and 'newglmnet' solve data held in memory: drop "
                              "--chunk-size to use them)" if opt == "curvature" else ""))
        if not streamed and opt == "curvature" and value not in _COMPOSITE_CURVATURES:
            raise CLIError(f"{what} on data in memory is solved by the composite methods: "
                           f"--curvature auto, owlqn (orthant-wise L-BFGS) or newglmnet "
                           f"(proximal Newton), not {value}; or stream the file with "
                           "--chunk-size for the large-data recipe")
        if not streamed and opt != "curvature" and value != "auto":
            raise CLIError(f"{what} on data in memory is solved full batch by a composite "
                           f"method, which has no --{opt}: drop --{opt} {value}")
    alpha = float(args.alpha)
    if name == "l1":
        return L1(alpha)
    assert ratio is not None
    return ElasticNet(alpha, float(ratio))


def _train_composite(args: argparse.Namespace, comp: dict[str, Any], X: Any, Xfit: Any,
                     y: Any, test: Any, info: dict[str, Any], scaling: Any) -> int:
    """``--penalty l1 / elasticnet`` on data in memory: the composite solve the estimators
    make (:func:`sqnopt.estimators._composite.fit_composite`: OWL-QN or newGLMNET, full
    batch, to ``--tol`` on the largest pseudo-gradient entry)."""
    from types import SimpleNamespace

    from sklearn.utils.class_weight import compute_sample_weight

    from sqnopt.estimators._composite import fit_composite

    penalty = comp["penalty"]
    regression = comp["objective"].label_kind == "regression"
    classes = None if regression else np.unique(y)
    weights = None
    cw = _parse_class_weight(args.class_weight)
    if cw is not None and not regression:
        weights = compute_sample_weight(cw, y)
    est = SimpleNamespace(curvature=args.curvature, tol=args.tol,
                          max_iter=int(math.ceil(min(args.max_epochs, 2.0**31))),
                          fit_intercept=comp["fit_intercept"], warm_start=False,
                          multiclass=args.multiclass)
    tic = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = fit_composite(est, penalty, Xfit, y, weights, loss=comp["objective"],
                            classes=classes)
    _print_warnings(caught, quiet=args.quiet)
    wall = time.perf_counter() - tic
    model = fit.model_
    if scaling is not None:
        model = dataclasses.replace(model, scale_offset=scaling[1], scale_factor=scaling[2])
        model.info["scale"] = scaling[0]
    nnz = int(np.count_nonzero(model.coef))
    print(f"model: {comp['objective'].name} + {penalty.describe()} | {model.info['method']} "
          f"(full batch) | {model.strategy}")
    print(f"done:  {fit.n_iter_} iterations in {wall:.2f} s"
          + ("" if fit.converged_ else " (not converged to --tol)")
          + f"; {nnz} of {model.coef.size} weights nonzero")
    summary: dict[str, Any] = {"iterations": int(fit.n_iter_), "wall_time": wall,
                               "converged": bool(fit.converged_), "nnz": nnz,
                               "penalty": penalty.describe()}
    _report_fit(model, X, y, test, regression, summary)
    model.info["features"] = dict(info["features"], n_features=int(X.shape[1]))
    model.info["data"] = info["source"]
    _write_outputs(args, model, None, summary, info["name"])
    return 0


def _trainer(args: argparse.Namespace, comp: dict[str, Any], **kwargs: Any) -> Any:
    from sqnopt.training import Trainer

    kwargs.setdefault("early_stopping", False if getattr(args, "no_early_stopping", False)
                      else "auto")
    kwargs.setdefault("validation_fraction", getattr(args, "validation_fraction", 0.1))
    kwargs.setdefault("parameter_mixing", not getattr(args, "no_parameter_mixing", False))
    return Trainer(comp["objective"], alpha=float(args.alpha), curvature=comp["curvature"],
                   gradient=comp["gradient"], schedule=comp["schedule"], step=comp["step"],
                   projection=comp["projection"], fit_intercept=comp["fit_intercept"],
                   average=comp["average"], sampling=comp["sampling"],
                   multiclass=args.multiclass,
                   class_weight=_parse_class_weight(args.class_weight),
                   random_state=args.seed, report_every=args.report_every,
                   n_jobs=args.n_jobs, penalty=comp.get("penalty"), **kwargs)


def _cmd_train(args: argparse.Namespace) -> int:
    comp = _components(args)
    _parse_class_weight(args.class_weight)
    # outputs are checked before any data is read or any work is done
    model_out = check_output_path(args.model, "--model")
    hist_out = check_output_path(args.history, "--history")
    if model_out.resolve() == hist_out.resolve():
        raise CLIError(f"--model and --history name the same file {args.model!r}; give two files")
    ckpt_out, resume = _checkpoint_options(args, model_out, hist_out)

    if args.quiet:   # nothing on stdout, no bar, no warnings: only errors on stderr
        args.progress = "never"
        with contextlib.redirect_stdout(io.StringIO()):
            return _train_run(args, comp, ckpt_out, resume)
    return _train_run(args, comp, ckpt_out, resume)


def _train_run(args: argparse.Namespace, comp: dict[str, Any], ckpt_out: Path | None,
               resume: Any) -> int:
    from sqnopt.model import apply_scaling, feature_scaling

    if args.chunk_size is not None:
        if args.max_epochs is None:
            args.max_epochs = 1.0
        return _train_streaming(args, comp)
    if args.max_epochs is None:
        args.max_epochs = 1000.0

    kind = comp["objective"].label_kind
    X, y, info = _load_data(args.data, args.format, n_features=args.n_features, args=args,
                            label_kind=kind)
    test = None
    if args.test is not None:
        test = _load_test(args, info["features"], X.shape[1], kind)
    elif args.data.lower() == "a9a" and not Path(args.data).exists():
        Xt, yt, _ = _load_data("a9a", "auto", split="test")
        test = (Xt, yt)
    n, d = X.shape
    regression = comp["objective"].label_kind == "regression"
    what = ("real-valued targets" if regression else f"{len(np.unique(y))} classes")
    print(f"data:  {info['source']}: {n} samples x {d} features, {what}"
          + (f"; test: {test[0].shape[0]} samples" if test is not None else ""))
    for note in comp["notes"]:
        print(note)
    scaling = None
    Xfit = X
    if args.scale:
        feats = info["features"]
        if feats.get("format") == "csv" and feats.get("categorical"):
            # a table: its numeric columns are standardized as a table without categorical
            # columns would be; the categorical ones' indicators are already in [0, 1]
            n_num = len(feats["numeric"])
            scaling = feature_scaling(X, columns=range(n_num))
            what = (f"standardized the {n_num} numeric columns; the {d - n_num} indicator "
                    f"columns of the categorical ones ({', '.join(feats['categorical'])}) are "
                    "left as they are")
        else:
            scaling = feature_scaling(X)
            what = (f"{'standardized' if scaling[0] == 'standard' else 'max-abs scaled'} "
                    f"{d} columns ({'dense' if scaling[0] == 'standard' else 'sparse'} data)")
        Xfit = apply_scaling(X, scaling[1], scaling[2])
        print(f"scale: {what}; the model file stores the scaling and evaluate/predict apply it")

    if comp.get("penalty") is not None:
        return _train_composite(args, comp, X, Xfit, y, test, info, scaling)
    # at most, with batches of one (capped: a budget the solver cannot count is refused by it)
    total_iter = max(1, int(math.ceil(min(args.max_epochs * n, 2.0**62))))
    points = sorted({int(v) for v in np.geomspace(1, total_iter, args.history_points)})
    trainer = _trainer(args, comp, max_epochs=args.max_epochs, tol=args.tol,
                       n_iter_no_change=args.n_iter_no_change, history_every=points)
    bar = _progress(args.progress)
    tic = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = trainer.fit(
                Xfit, y, progress=bar, resume=resume,
                checkpoint=None if ckpt_out is None else (lambda c: c.save(ckpt_out)),
                checkpoint_every=args.checkpoint_every,
                checkpoint_overhead=args.checkpoint_overhead)
    finally:
        bar.close()
    diverged = _print_warnings(caught, quiet=args.quiet)
    wall = time.perf_counter() - tic
    if scaling is not None:
        model = dataclasses.replace(model, scale_offset=scaling[1], scale_factor=scaling[2])
        model.info["scale"] = scaling[0]
    setup = trainer._setup
    assert setup is not None
    print(f"model: {setup.objective.describe()} | {setup.gradient.describe()} | "
          f"{setup.curvature.describe()} | "
          f"{setup.schedule.describe()} | {setup.step.describe()} | {setup.strategy}")
    res = trainer.results_
    n_samples = sum(r.n_samples for r in res)
    solver_time = sum(r.wall_time for r in res)
    pairs = sum(r.n_pairs_accepted for r in res)
    skipped = sum(r.n_pairs_skipped for r in res)
    fun = float(np.mean([r.fun for r in res]))
    # the passes --max-epochs counts (gradient batches) and all the passes over the data
    # (with line-search trials, curvature batches, variance reduction's full gradients)
    grad_passes = max(r.n_samples / r.n_train for r in res)
    all_passes = max(r.effective_passes for r in res)
    passes = f"{grad_passes:.4g} passes"
    if abs(all_passes - grad_passes) > 0.01 * max(grad_passes, 1.0):
        passes += (f" of gradient batches (what --max-epochs counts; {all_passes:.4g} passes "
                   "over the data in all, with line-search trials, curvature batches and "
                   "variance reduction's full gradients)")
    print(f"done:  {passes}, {trainer.t_} iterations, {n_samples} samples "
          f"processed in {wall:.2f} s (solver {solver_time:.2f} s, "
          f"{'/'.join(sorted({_loop_name(r) for r in res}))} loop); "
          f"training objective F = {fun:.6g}"
          + (" (mean over the one-vs-rest problems)" if len(res) > 1 else "")
          + (f"; curvature pairs accepted {pairs}, skipped {skipped}" if pairs or skipped else ""))
    summary: dict[str, Any] = {"objective": fun, "passes": grad_passes,
                               "effective_passes": all_passes,
                               "iterations": trainer.t_, "samples": n_samples, "wall_time": wall}
    _report_fit(model, X, y, test, regression, summary)
    model.info["features"] = dict(info["features"], n_features=int(d))
    model.info["data"] = info["source"]
    _write_outputs(args, model, trainer, summary, info["name"])
    if ckpt_out is not None:
        print(f"wrote checkpoint {args.checkpoint} (continue with --resume {args.checkpoint})")
    if diverged:
        print("sqnopt: the run diverged (see the warning above); the model written is the best "
              "iterate before it", file=sys.stderr)
        return EXIT_DIVERGED
    return 0


def _checkpoint_options(args: argparse.Namespace, *outputs: Path) -> tuple[Path | None, Any]:
    """``--checkpoint`` (checked to be writable, and not another output) and ``--resume``
    (read and checked as a checkpoint file), before any data is read."""
    from sqnopt.checkpoint import Checkpoint

    if args.chunk_size is not None and (args.checkpoint is not None or args.resume is not None):
        raise CLIError("--checkpoint and --resume checkpoint a training run on data held in "
                       "memory; they do not work with --chunk-size (streamed partial_fit). Drop "
                       "one of them")
    if hasattr(args, "checkpoint_every") and args.checkpoint is None:
        raise CLIError("--checkpoint-every needs --checkpoint FILE (the file to write)")
    # by default every pass, but no more often than keeps writing them under a tenth of the
    # run (a large model's checkpoint can take longer than a pass); as asked when asked
    args.checkpoint_overhead = None if hasattr(args, "checkpoint_every") else CHECKPOINT_OVERHEAD
    args.checkpoint_every = getattr(args, "checkpoint_every", 1.0)
    ckpt_out = None
    if args.checkpoint is not None:
        ckpt_out = check_output_path(args.checkpoint, "--checkpoint")
        if any(ckpt_out.resolve() == out.resolve() for out in outputs):
            raise CLIError(f"--checkpoint names the same file as --model or --history "
                           f"({args.checkpoint!r}); give another file")
    resume = None if args.resume is None else Checkpoint.load(args.resume)
    return ckpt_out, resume


def _index_base(features: Any) -> bool | Literal["auto"]:
    """The index base the model's svmlight training file was read with (``"auto"`` when the
    model does not record one, e.g. a file written before it did)."""
    zero = features.get("zero_based") if isinstance(features, dict) else None
    return zero if isinstance(zero, bool) else "auto"


def _load_test(args: argparse.Namespace, features: dict[str, Any], d: int,
               label_kind: LabelKind) -> tuple[Any, Any]:
    """``--test`` data, made into the training data's features (``label_kind``: the loss's)."""
    if features.get("format") == "csv":
        from sqnopt.datasets import load_table

        path = Path(args.test)
        if not path.exists():
            raise CLIError(f"--test {args.test!r}: no such file")
        Xt, yt, _ = load_table(path, spec=features, delimiter=_delimiter(path, args.format),
                               label_kind=label_kind)
    else:
        Xt, yt, _ = _load_data(args.test, args.format, n_features=d, split="test", args=args,
                               zero_based=_index_base(features), label_kind=label_kind)
    if Xt.shape[1] != d:
        raise CLIError(f"--test {args.test}: {Xt.shape[1]} features, the training data {d}; "
                       "use test data with the training data's features")
    return Xt, yt


def _print_warnings(caught: list[warnings.WarningMessage], quiet: bool = False) -> bool:
    """Print the warnings a run raised as ``sqnopt: warning: ...`` lines (none when
    ``quiet``); True if one of them was a divergence."""
    from sqnopt.solver import DivergenceWarning

    diverged = False
    seen: set[str] = set()
    for w in caught:
        text = str(w.message)
        if text in seen:
            continue
        seen.add(text)
        diverged = diverged or issubclass(w.category, DivergenceWarning)
        if not quiet:
            print(f"sqnopt: warning: {cli_terms(text)}", file=sys.stderr)
    return diverged


def _train_streaming(args: argparse.Namespace, comp: dict[str, Any]) -> int:
    """``--chunk-size``: the file as a stream (:mod:`sqnopt.datasets` streams: read and parsed a
    chunk ahead in a background thread, ``--cache`` for a binary cache of later passes), trained
    by :meth:`~sqnopt.training.Trainer.fit_stream`: up to ``--max-epochs`` passes, stopped on
    held-out rows. The progress bar counts rows read."""
    from sqnopt.datasets import (
        BUILTIN_DATASETS,
        builtin_path,
        criteo_featurizer,
        iter_criteo,
        stream_chunks,
        stream_csv,
        stream_svmlight,
    )
    from sqnopt.model import apply_scaling

    if args.data.lower() in BUILTIN_DATASETS and not Path(args.data).exists():
        path = builtin_path(args.data.lower())
        fmt = "svmlight"
    else:
        path = Path(args.data)
        if not path.exists():
            raise CLIError(f"data {args.data!r}: no such file, and not a built-in dataset")
        fmt = _table_format(path, args.format)
    _check_format_options(fmt, str(path), args)
    if fmt in ("csv", "tsv") and _column_list(getattr(args, "drop", None)):
        raise CLIError("--drop does not work with --chunk-size: a streamed table reads every "
                       "column; remove the columns from the file first, or drop --chunk-size "
                       "to read the table whole")
    test_path = _streamed_test(args, fmt)
    kind = comp["objective"].label_kind
    regression = kind == "regression"
    if regression and fmt == "criteo":
        raise CLIError(f"{path}: a Criteo file holds click labels (classes); the loss "
                       f"{comp['objective'].name} fits real-valued targets: use a "
                       "classification loss (e.g. --loss logloss)")
    featurizer = None
    table: dict[str, Any] | None = None
    cache: Any = bool(args.cache) if args.cache in (None, "") else args.cache
    if fmt in ("csv", "tsv"):
        # every column not declared --categorical must be numeric (a value that is not a
        # finite number is an error naming its line and the fix): a stream cannot look at
        # the whole column before typing it, as a table read whole does
        stream = stream_csv(path, target=getattr(args, "target", None),
                            categorical=_column_list(getattr(args, "categorical", None)),
                            encoding=getattr(args, "encoding", "onehot"),
                            delimiter=_delimiter(path, fmt), chunk_size=args.chunk_size,
                            cache=cache or False, label_kind=kind)
        csv: Any = stream       # the table's columns and encodings, known after its scan
        table = {"format": "csv", "delimiter": csv.delimiter, "target": csv.target,
                 "numeric": list(csv.numeric), "categorical": list(csv.categorical),
                 "drop": [], "encoding": csv.encoding, "n_bags": int(csv.n_bags),
                 "seed": int(csv.seed), "n_features": int(csv.n_features)}
        if csv.vocabularies:
            table["vocabularies"] = {c: dict(v) for c, v in csv.vocabularies.items()}
    elif fmt == "criteo":
        featurizer = criteo_featurizer()

        def criteo_chunks(source: Path = path) -> Any:
            return ((featurizer.transform(t), y) for t, y in iter_criteo(source, args.chunk_size))

        stream = stream_chunks(criteo_chunks, n_features=featurizer.n_features,
                               classes=[0.0, 1.0], name=str(path))
    else:
        # the index base as the file read whole finds it: one-based unless an index 0 occurs
        stream = stream_svmlight(path, chunk_size=args.chunk_size, n_features=args.n_features,
                                 zero_based="auto", cache=cache or False, label_kind=kind)
    n_features = int(stream.n_features)
    classes = np.asarray(stream.classes)
    n_rows = stream.n_rows
    rows = f"{n_rows} samples" if n_rows is not None else "samples"
    print(f"data:  {path} (streamed in chunks of {args.chunk_size}"
          + (", binary cache" if cache else "") + f"): {rows} x {n_features} features, "
          + ("real-valued targets" if regression else f"{len(classes)} classes"))
    for note in comp["notes"]:
        print(note)
    factor = None
    if args.scale:  # one pass for the columns' largest absolute values
        factor = np.zeros(n_features)
        for Xc, _ in stream:
            top = abs(Xc).max(axis=0)
            factor = np.maximum(factor, np.asarray(top.toarray() if hasattr(top, "toarray")
                                                   else top).ravel())
        factor[factor <= 0] = 1.0
        print(f"scale: max-abs scaled {n_features} columns (sparse data; one pass over the "
              "file); the model file stores the scaling and evaluate/predict apply it")
        raw = stream
        scale = factor

        def scaled_chunks() -> Any:
            return ((apply_scaling(Xc, np.zeros(n_features), scale), yc) for Xc, yc in raw)

        stream = stream_chunks(scaled_chunks, n_features=n_features,
                               classes=None if regression else classes, name=str(path),
                               prefetch=0, label_kind=kind)
    epochs = max(1, int(math.ceil(args.max_epochs)))
    bar = _progress(args.progress, total=None if n_rows is None else epochs * n_rows,
                    unit=" rows")
    trainer = _trainer(args, comp, tol=args.tol, max_epochs=float(args.max_epochs),
                       callback=bar.observe)
    tic = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            trainer.fit_stream(stream, progress=bar)
    finally:
        bar.close()
    _print_warnings(caught, quiet=args.quiet)
    wall = time.perf_counter() - tic
    model = trainer.model_
    if factor is not None:
        model = dataclasses.replace(model, scale_offset=np.zeros(n_features),
                                    scale_factor=factor)
        model.info["scale"] = "maxabs"
    setup = trainer._setup
    assert setup is not None
    print(f"model: {setup.objective.describe()} | {setup.gradient.describe()} | "
          f"{setup.curvature.describe()} | "
          f"{setup.schedule.describe()} | {setup.step.describe()} | {setup.strategy}")
    passes = int(trainer.n_iter_)
    print(f"done:  {passes} passes, {trainer.t_} iterations in {wall:.2f} s")
    summary: dict[str, Any] = {"passes": passes, "iterations": int(trainer.t_),
                               "wall_time": wall}
    prog = [r.progressive_loss for r in trainer.results_]
    if all(math.isfinite(v) for v in prog):
        summary["progressive_loss"] = float(np.mean(prog))
        print(f"progressive loss (each example's loss before its update): "
              f"{summary['progressive_loss']:.6g}")
    held = getattr(trainer, "validation_loss_", [])
    summary["validation_loss"] = [[float(v) for v in losses] for losses in held]
    if held and held[-1] and trainer.early_stopping is not False:
        best = min(float(np.mean(v)) for v in held if v)
        summary["held_out_loss"] = best
        print(f"held-out loss (best pass, {args.validation_fraction:g} of the rows held out): "
              f"{best:.6g}")
    if test_path is not None:   # read in chunks too: the test file may be as large
        if table is not None:   # the training table's columns and encodings
            test_stream = stream_csv(test_path, target=table["target"],
                                     categorical=table["categorical"],
                                     encoding=table["encoding"], n_bags=table["n_bags"],
                                     seed=table["seed"],
                                     vocabularies=table.get("vocabularies"),
                                     delimiter=table["delimiter"], chunk_size=args.chunk_size,
                                     classes=None if regression else classes,
                                     label_kind=kind)
            if int(test_stream.n_features) != n_features:
                raise CLIError(f"--test {test_path}: {test_stream.n_features} features, the "
                               f"training table {n_features}: the test table needs the same "
                               "columns")
        elif featurizer is None:
            # the training file's index base: a test file need not hold an index 0
            test_stream = stream_svmlight(test_path, chunk_size=args.chunk_size,
                                          n_features=n_features,
                                          classes=None if regression else classes,
                                          zero_based=bool(getattr(stream, "indices_zero_based",
                                                                  False)),
                                          label_kind=kind)
        else:
            test_stream = stream_chunks(lambda: criteo_chunks(test_path),
                                        n_features=n_features, classes=classes)
        if regression:
            m = _streamed_regression_metrics(model, test_stream)
            summary["test_r2"], summary["test_rmse"] = m["r2"], m["rmse"]
            r2 = "undefined (constant targets)" if m["r2"] is None else f"{m['r2']:.4f}"
            print(f"test R^2: {r2}   RMSE: {m['rmse']:.6g} ({m['n_samples']} samples of "
                  f"{test_path}, streamed)")
        else:
            hits = total = 0
            for Xc, yc in test_stream:
                hits += int(np.sum(model.predict(Xc) == yc))
                total += len(yc)
            summary["test_accuracy"] = hits / max(total, 1)
            print(f"test accuracy:  {summary['test_accuracy']:.4f} ({total} samples of "
                  f"{test_path}, streamed)")
    features: dict[str, Any] = (dict(table) if table is not None else
                                {"format": fmt, "n_features": int(n_features)})
    if fmt == "svmlight":
        features["zero_based"] = bool(getattr(stream, "indices_zero_based", False))
    if featurizer is not None:
        features["featurizer"] = {"n_bags": featurizer.n_bags,
                                  "numeric_bins": featurizer.numeric_bins, "seed": featurizer.seed}
    model.info["features"] = features
    model.info["data"] = str(path)
    _write_outputs(args, model, trainer, summary, Path(path).name)
    return 0


def _streamed_regression_metrics(model: Any, stream: Any) -> dict[str, Any]:
    """R^2 and RMSE of a regression model's predictions over a stream, in one pass: sums of the
    squared residuals and of the targets' deviations from a running shift (the first target:
    no cancellation when the targets are far from 0)."""
    n = 0
    shift: float | None = None
    sse = s1 = s2 = 0.0
    for Xc, yc in stream:
        y = np.asarray(yc, dtype=np.float64)
        if not y.size:
            continue
        if shift is None:
            shift = float(y[0])
        r = model.predict(Xc) - y
        sse += float(np.dot(r, r))
        d = y - shift
        s1 += float(d.sum())
        s2 += float(np.dot(d, d))
        n += int(y.size)
    sst = s2 - s1 * s1 / max(n, 1)
    return {"n_samples": n, "r2": 1.0 - sse / sst if sst > 0 else None,
            "rmse": math.sqrt(sse / max(n, 1))}


def _streamed_test(args: argparse.Namespace, fmt: str) -> Path | None:
    """The test file of a streamed run (``--test``, or a built-in training set's test split),
    checked before training: it must exist and be of the training file's format."""
    from sqnopt.datasets import BUILTIN_DATASETS, builtin_path

    spec = args.test
    if spec is None:
        builtin = args.data.lower() in BUILTIN_DATASETS and not Path(args.data).exists()
        return builtin_path(args.data.lower(), "test") if builtin else None
    if spec.lower() in BUILTIN_DATASETS and not Path(spec).exists():
        return builtin_path(spec.lower(), "test")
    path = Path(spec)
    if not path.exists():
        raise CLIError(f"--test {spec!r}: no such file, and not a built-in dataset")
    test_fmt = _table_format(path, args.format)
    if test_fmt != fmt:
        raise CLIError(f"--test {spec!r} is a {test_fmt} file, the training data {fmt}: "
                       "--chunk-size evaluates test data of the training data's format")
    return path


def _report_fit(model: LinearModel, X: Any, y: Any, test: tuple[Any, Any] | None,
                regression: bool, summary: dict[str, Any]) -> None:
    """Print the fit's quality on the training data (and the test data, when given) and add
    it to ``summary``: R^2 and RMSE for a regression, accuracy for a classification."""
    if regression:
        parts = (("train", (X, y)), ("test", test)) if test is not None else (("train", (X, y)),)
        for part, (Xp, yp) in parts:
            m = regression_metrics(model, Xp, yp)
            summary[f"{part}_r2"], summary[f"{part}_rmse"] = m["r2"], m["rmse"]
            print(f"{part} R^2: {m['r2']:.4f}   RMSE: {m['rmse']:.6g}")
    else:
        summary["train_accuracy"] = model.accuracy(X, y)
        print(f"train accuracy: {summary['train_accuracy']:.4f}")
        if test is not None:
            summary["test_accuracy"] = model.accuracy(test[0], test[1])
            print(f"test accuracy:  {summary['test_accuracy']:.4f}")


def _write_outputs(args: argparse.Namespace, model: Any, trainer: Any, summary: dict[str, Any],
                   source: str) -> None:
    model_path = model.save(args.model)
    label = args.label or model.info.get("curvature", "sqnopt")
    runs = []
    for j, h in enumerate([] if trainer is None else trainer.histories_):
        name = "" if len(trainer.histories_) == 1 else f"class {_label(trainer.classes_[j])}"
        runs.append({"name": name, "history": h.as_dict()})
    doc = {"format": HISTORY_FORMAT, "version": 1, "label": label, "data": source,
           "components": {k: model.info.get(k) for k in ("objective", "gradient", "curvature",
                                                         "schedule", "step", "strategy")},
           "summary": summary, "runs": runs}
    hist_path = Path(args.history)
    write_text_atomic(hist_path, json.dumps(doc, indent=1, default=float))
    print(f"wrote model {model_path} and history {hist_path} (plot: sqnopt plot {hist_path})")


# ---------------------------------------------------------------------------- evaluate / predict
def _load_model(path: str) -> Any:
    from sqnopt.model import LinearModel

    return LinearModel.load(path)


def _roc_auc(y_true: np.ndarray[Any, Any], score: np.ndarray[Any, Any]) -> float:
    from scipy.stats import rankdata

    pos = y_true.astype(bool)
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if n_pos == 0 or n_neg == 0:
        return math.nan
    ranks = rankdata(score)
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _cmd_evaluate(args: argparse.Namespace) -> int:
    """The model's metrics on the data: lines for a reader, ``--quiet`` the metric lines only,
    ``--json`` one JSON object (``evaluation_metrics`` says what it holds)."""
    model = _load_model(args.model)
    X, y, info = _load_for_model(args.data, args.format, model, args)
    if model.strategy == "regression":
        return _evaluate_regression(args, model, X, y, info)
    unknown = np.setdiff1d(np.unique(y), model.classes)
    if unknown.size:
        from sqnopt._text import short_list

        raise CLIError(f"the data has labels [{short_list(unknown.tolist(), 5)}] the model never "
                       f"saw (model classes [{short_list(model.classes.tolist(), 10)}])")
    metrics = evaluation_metrics(model, X, y)
    if args.json:
        print(json.dumps({"model": str(args.model), "data": str(info["source"]), **metrics},
                         allow_nan=False))
        return 0
    if not args.quiet:
        print(f"model: {args.model} ({model.info.get('objective', model.loss)}, "
              f"{model.strategy}, {len(model.classes)} classes, {model.n_features} features"
              + (f", {model.info.get('scale', 'scaled')} scaling applied" if model.scaled
                 else "") + ")")
        print(f"data:  {info['source']}: {metrics['n_samples']} samples")
    print(f"accuracy: {metrics['accuracy']:.4f}")
    if "log_loss" in metrics:
        print(f"log loss: {metrics['log_loss']:.6f}")
    if "roc_auc" in metrics:
        auc = metrics["roc_auc"]
        print(f"ROC AUC:  {'undefined (one class only)' if auc is None else f'{auc:.4f}'}")
    for c in metrics["classes"]:
        if c["n_samples"]:
            print(f"  class {c['label']}: {c['n_samples']} samples, recall {c['recall']:.4f}")
    return 0


def regression_metrics(model: Any, X: Any, y: Any) -> dict[str, Any]:
    """What ``sqnopt evaluate`` reports for a regression model, JSON-able: ``n_samples``,
    ``r2`` (the coefficient of determination, as scikit-learn's ``r2_score``), ``rmse``,
    ``mae`` and, for the log link, ``mean_poisson_deviance`` (as scikit-learn's
    ``mean_poisson_deviance``); computed with NumPy, so the command line needs no
    scikit-learn."""
    yt = np.asarray(y, dtype=np.float64)
    pred = np.asarray(model.predict(X), dtype=np.float64)
    res = yt - pred
    ss_tot = float(np.sum((yt - yt.mean()) ** 2))
    out: dict[str, Any] = {
        "n_samples": int(yt.shape[0]),
        "r2": (1.0 - float(np.sum(res * res)) / ss_tot) if ss_tot > 0 else None,
        "rmse": float(np.sqrt(np.mean(res * res))), "mae": float(np.mean(np.abs(res)))}
    if model.link == "log" and np.all(yt >= 0) and np.all(np.isfinite(pred)):
        with np.errstate(divide="ignore", invalid="ignore"):
            term = np.where(yt > 0, yt * np.log(yt / pred), 0.0)
        out["mean_poisson_deviance"] = float(np.mean(2.0 * (term - yt + pred)))
    return out


def _evaluate_regression(args: argparse.Namespace, model: Any, X: Any, y: Any,
                         info: dict[str, Any]) -> int:
    metrics = regression_metrics(model, X, y)
    if args.json:
        print(json.dumps({"model": str(args.model), "data": str(info["source"]), **metrics},
                         allow_nan=False))
        return 0
    if not args.quiet:
        print(f"model: {args.model} ({model.info.get('objective', model.loss)}, regression"
              f"{', log link' if model.link == 'log' else ''}, {model.n_features} features"
              + (f", {model.info.get('scale', 'scaled')} scaling applied" if model.scaled
                 else "") + ")")
        print(f"data:  {info['source']}: {metrics['n_samples']} samples")
    r2 = metrics["r2"]
    print(f"R^2:  {'undefined (constant targets)' if r2 is None else f'{r2:.4f}'}")
    print(f"RMSE: {metrics['rmse']:.6g}")
    print(f"MAE:  {metrics['mae']:.6g}")
    if "mean_poisson_deviance" in metrics:
        print(f"mean Poisson deviance: {metrics['mean_poisson_deviance']:.6g}")
    return 0


def evaluation_metrics(model: Any, X: Any, y: Any) -> dict[str, Any]:
    """What ``sqnopt evaluate`` reports, JSON-able: ``n_samples``, ``accuracy``, ``log_loss``
    (log-likelihood losses), ``roc_auc`` (two classes; None when the data hold one class only)
    and ``classes``: each class's ``label``, ``n_samples`` and ``recall`` (None without
    samples)."""
    scores = model.decision_function(X)
    pred = model.labels_of_scores(scores)
    out: dict[str, Any] = {"n_samples": int(X.shape[0]),
                           "accuracy": float(np.mean(pred == y))}
    if model.probabilistic:
        logp = model.log_proba_of_scores(scores)
        idx = np.searchsorted(model.classes, y)
        out["log_loss"] = float(-np.mean(logp[np.arange(len(y)), idx]))
    if scores.ndim == 1:
        auc = _roc_auc(y == model.classes[1], scores)
        out["roc_auc"] = None if math.isnan(auc) else auc
    classes = []
    for c in model.classes:
        sel = y == c
        k = int(sel.sum())
        classes.append({"label": c.item() if hasattr(c, "item") else c, "n_samples": k,
                        "recall": float(np.mean(pred[sel] == c)) if k else None})
    out["classes"] = classes
    return out


def _label(c: Any) -> str:
    return str(c.item() if hasattr(c, "item") else c)


def _cmd_predict(args: argparse.Namespace) -> int:
    if args.output and args.output != "-":
        check_output_path(args.output, "-o/--output")
    model = _load_model(args.model)
    X, _, _ = _load_for_model(args.data, args.format, model, args, need_labels=False)
    if args.proba:
        if not model.probabilistic:
            raise CLIError(f"--proba needs a log-likelihood loss; the model was trained with "
                           f"{model.loss!r}")
        out = model.predict_proba(X)
        lines = [" ".join(f"{p:.6g}" for p in row) for row in out]
        header = "# " + " ".join(_label(c) for c in model.classes)
        lines.insert(0, header)
    else:
        lines = [_label(v) for v in model.predict(X)]
    text = "\n".join(lines) + "\n"
    if args.output and args.output != "-":
        write_text_atomic(args.output, text)
        if not args.quiet:
            print(f"wrote {X.shape[0]} predictions to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


# ---------------------------------------------------------------------------- plot
def _read_history(path: Path) -> dict[str, Any]:
    """A history file written by ``sqnopt train``, checked field by field (one clear error)."""
    if not path.exists():
        raise CLIError(f"history file {str(path)!r} does not exist (write one with sqnopt train "
                       f"--history FILE)")
    if not path.is_file():
        raise CLIError(f"history file {str(path)!r} is not a regular file")
    try:
        doc = json.loads(path.read_bytes().decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise CLIError(f"{str(path)!r} is not a JSON history file ({exc})") from None
    except OSError as exc:
        raise CLIError(f"history file {str(path)!r}: cannot be read ({exc.strerror})") from None
    if not isinstance(doc, dict) or doc.get("format") != HISTORY_FORMAT or "runs" not in doc:
        raise CLIError(f"{str(path)!r} is not an sqnopt history file (written by sqnopt train)")
    runs = doc["runs"]
    if not isinstance(runs, list) or not runs:
        raise CLIError(f"history file {str(path)!r}: 'runs' must be a non-empty list")
    for k, run in enumerate(runs):
        hist = run.get("history") if isinstance(run, dict) else None
        if not isinstance(hist, dict):
            raise CLIError(f"history file {str(path)!r}: run {k} has no 'history' object")
        lengths = set()
        for key in ("objective", *_X_TITLES):
            col = hist.get(key)
            if not isinstance(col, list) or not all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) for v in col):
                raise CLIError(f"history file {str(path)!r}: run {k}: '{key}' must be a list of "
                               "numbers")
            lengths.add(len(col))
        if lengths == {0} and isinstance(doc.get("summary"), dict) and \
                "validation_loss" in doc["summary"]:
            raise CLIError(f"history file {str(path)!r} is of a streamed run, which records no "
                           "training objective (each point would cost a pass over the data); "
                           "its held-out loss after each pass is the summary's "
                           "'validation_loss'")
        if len(lengths) != 1 or 0 in lengths:
            raise CLIError(f"history file {str(path)!r}: run {k}: the columns are empty or "
                           "differ in length")
    return doc


def _cmd_plot(args: argparse.Namespace) -> int:
    files = [Path(p) for p in (args.histories or [DEFAULT_HISTORY])]
    out = Path(args.output or files[0].with_suffix(".png").name)
    check_output_path(out, "-o/--output")
    lines: list[tuple[str, dict[str, Any]]] = []
    for p in files:
        doc = _read_history(p)
        label = str(doc.get("label") or p.stem)
        if len(files) > 1 and any(str(_read_history(q).get("label")) == label
                                  for q in files if q != p):
            label = f"{label} ({p.stem})"
        for run in doc["runs"]:
            name = f"{label} [{run['name']}]" if run.get("name") else label
            lines.append((name, run["history"]))
    title = args.title
    if title is None and len(files) == 1:
        data = _read_history(files[0]).get("data")
        title = None if data is None else str(data)
    if importlib.util.find_spec("matplotlib") is None:
        raise CLIError("sqnopt plot needs matplotlib: pip install 'sqnopt[plot]'")
    from sqnopt.plotting import figure_format, plot_histories, save_figure

    try:
        figure_format(out)      # before drawing: an extension matplotlib does not write
    except ValueError as exc:
        raise CLIError(f"-o/--output: {exc}") from None

    with warnings.catch_warnings():
        # matplotlib's layout notes (long labels) and its scale arithmetic overflowing on
        # extreme ranges (a diverged run's 1e300 next to 1e-300) are about the drawing, which
        # is made all the same: the command line's output stays one line
        warnings.simplefilter("ignore")
        try:
            fig = plot_histories(lines, x=args.x, logx=not args.linear_x,
                                 logy=not args.linear_y, title=title)
            save_figure(fig, out)
        except ValueError as exc:
            if "nothing to plot" in str(exc):   # the histories' values, not the drawing
                where = ", ".join(str(p) for p in files)
                raise CLIError(f"{where}: {cli_terms(str(exc))}".replace("plot_histories: ", "")
                               ) from None
            raise CLIError(f"matplotlib cannot draw these histories ({type(exc).__name__}: "
                           f"{exc}); try --linear-x / --linear-y") from None
        except OverflowError as exc:  # ranges matplotlib cannot lay out
            raise CLIError(f"matplotlib cannot draw these histories ({type(exc).__name__}: "
                           f"{exc}); try --linear-x / --linear-y") from None
    if not args.quiet:
        print(f"wrote {out}")
    return 0


_X_TITLES = {"samples": "samples processed Lt", "effective_passes": "effective passes",
             "time": "time (s)", "iteration": "iteration t"}


# ---------------------------------------------------------------------------- list
def _cmd_list(args: argparse.Namespace) -> int:
    from sqnopt.datasets import BUILTIN_DATASETS
    from sqnopt.interfaces import KINDS
    from sqnopt.registry import get_plugin_manager, get_registry

    reg = get_registry()
    for kind in KINDS:
        if args.kind and kind != args.kind:
            continue
        print(f"{kind}:")
        for entry in reg.entries(kind):
            params = ", ".join(f"{k}={v!r}" for k, v in entry.parameters().items())
            alias = f" (aliases: {', '.join(entry.aliases)})" if entry.aliases else ""
            print(f"  {entry.name}({params}){alias}  [{entry.source}]")
    if args.kind == "preset" or not args.kind:
        print("presets (sqnopt train --preset NAME[:k=v,...], the regularisation from --alpha; "
              "Solver.preset(NAME, lam=...); any Solver keyword passes through):")
        for name in reg.preset_names():
            preset = reg.preset(name)
            alias = f" (aliases: {', '.join(preset.aliases)})" if preset.aliases else ""
            print(f"  {name}({_preset_parameters(preset.factory)}){alias}  [{preset.source}]")
            for line in _summary_lines(preset.factory.__doc__):
                print(f"      {line}")
    if args.kind:
        return 0
    print("auto (estimators and sqnopt train): --curvature, --schedule, --step, --gradient and")
    print("  --sampling left at auto come from the recipe of the composition (sqnopt.recipes),")
    print("  chosen from what the components declare")
    pm = get_plugin_manager()
    dists = {id(plugin): dist for plugin, dist in pm.list_plugin_distinfo()}
    print("plugins:")
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda kv: str(kv[0])):
        dist = dists.get(id(plugin))
        where = (f"{dist.project_name} {dist.version}" if dist is not None else "built-in")
        print(f"  {name}  [{where}]")
    print("built-in datasets:")
    for ds in BUILTIN_DATASETS.values():
        print(f"  {ds.name}: {ds.description} [{ds.license}]")
    return 0


def _preset_parameters(factory: Any) -> str:
    """A preset's parameters as ``sqnopt train --preset NAME:k=v`` takes them: ``name=default``,
    ``name (required)`` for one without a default; not ``lam`` (``--alpha``) nor the Solver
    keywords that pass through."""
    import inspect

    out = []
    for p in inspect.signature(factory).parameters.values():
        if p.name == "lam" or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        out.append(f"{p.name} (required)" if p.default is p.empty else f"{p.name}={p.default!r}")
    return ", ".join(out)


def _summary_lines(doc: str | None, width: int = 94) -> list[str]:
    """The first sentence of a docstring's first paragraph, as plain text (no
    reStructuredText markup), wrapped to ``width`` columns."""
    import inspect
    import textwrap

    from sqnopt._text import first_sentence, plain_rst

    text = inspect.cleandoc(doc or "").split("\n\n")[0]
    summary = first_sentence(plain_rst(text))
    return textwrap.wrap(summary, width) if summary else []


# ---------------------------------------------------------------------------- demo
_DEMO_MAX_ENTRIES = 50_000_000  # 400 MB of float64


def _cmd_demo(args: argparse.Namespace) -> int:
    from sqnopt import Decaying, Fixed, Solver, SquaredHinge
    from sqnopt.datasets import make_boxes

    if args.n_samples * args.n_features > _DEMO_MAX_ENTRIES:
        raise CLIError(f"--n-samples x --n-features = {args.n_samples * args.n_features} "
                       f"entries; the demo's dense data is limited to {_DEMO_MAX_ENTRIES:.0e}")
    X, y = make_boxes(args.n_samples, args.n_features, random_state=args.seed)
    solver = Solver(SquaredHinge(lam=1e-4), parse_component(args.curvature), Fixed(5),
                    Decaying(eps0=2e-2, T0=100), max_samples=args.samples,
                    random_state=args.seed, history_every=max(1, args.samples // 5 // 5))
    with warnings.catch_warnings(record=True) as caught:    # printed as train prints them
        warnings.simplefilter("always")
        res = solver.fit(X, y)
    diverged = _print_warnings(caught)
    acc = float(np.mean(np.sign(X @ res.coef) == y))
    print(f"{solver!r}")
    for t, s, f in zip(res.history.iteration, res.history.samples, res.history.objective):
        print(f"  iter {t:6d}  samples {s:7d}  F = {f:.6e}")
    print(f"status: {res.status.value} ({res.message})")
    print(f"F(w) = {res.fun:.6e}   training accuracy = {acc:.4f}   "
          f"solver time = {res.wall_time * 1e3:.1f} ms ({_loop_name(res)} loop)")
    if diverged:
        print("sqnopt: the run diverged (see the warning above); the result shown is the best "
              "iterate before it", file=sys.stderr)
        return EXIT_DIVERGED
    return 0


# ---------------------------------------------------------------------------- parser
class _HelpFormatter(argparse.HelpFormatter):
    """Help that names a default only when there is one to name (no "(default: None)")."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (default is None or default is False or default is argparse.SUPPRESS
                or "%(default)" in text or "default" in text.lower()
                or (not action.option_strings and action.nargs not in ("?", "*"))):
            return text
        return text + " (default: %(default)s)"


def _add_quiet(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("-q", "--quiet", action="store_true",
                   help=f"for scripts: {what}; errors still go to stderr")


def build_parser() -> argparse.ArgumentParser:
    """The ``sqnopt`` argument parser (the CLI reference of the documentation is generated from
    it)."""
    from sqnopt import __version__
    from sqnopt.training import DEFAULT_CURVATURE

    parser = argparse.ArgumentParser(
        prog="sqnopt", description="Stochastic quasi-Newton and first-order solvers for linear "
        "models.", epilog="Run 'sqnopt COMMAND --help' for the options of a command.",
        formatter_class=_HelpFormatter)
    parser.add_argument("--version", action="version", version=f"sqnopt {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    formats = ("auto", "svmlight", "criteo", "csv", "tsv")
    p = sub.add_parser(
        "train", help="train a linear classifier; writes a model file and a history JSON",
        description="Train a linear classifier on an svmlight/LIBSVM file (plain, .xz, .gz, "
        ".bz2), a Criteo TSV log, a CSV/TSV table with a header row, or a built-in dataset "
        "(default: a9a, UCI Adult, shipped with sqnopt). Components are registered names with "
        "optional parameters, e.g. --curvature lbfgs:memory=5 --step decaying:eps0=0.1,T0=1e4, "
        "or a named composition, --preset NAME (see 'sqnopt list').",
        formatter_class=_HelpFormatter)
    p.add_argument("data", nargs="?", default="a9a",
                   help="data file or built-in dataset name")
    p.add_argument("--test", help="test data (file or built-in name); for a built-in training "
                   "set its test split is used automatically")
    p.add_argument("--format", choices=formats, default="auto",
                   help="input format (auto: csv/tsv from a .csv/.tsv name, Criteo TSV if the "
                   "first line has >= 13 tabs, else svmlight)")
    p.add_argument("--target", metavar="COLUMN", help="CSV/TSV: the label column (default: "
                   "the column named label, target, y or class)")
    p.add_argument("--categorical", metavar="COLUMN[,COLUMN...]", action="append",
                   help="CSV/TSV: encode these columns as categories whatever their values "
                   "(codes that look like numbers, a column mixing numbers and text); other "
                   "columns are numeric when every value is a finite number, categorical when "
                   "none is (numbers written with a comma, 1,000 or 0,5, are an error), and "
                   "an error naming the line otherwise")
    p.add_argument("--drop", metavar="COLUMN[,COLUMN...]", action="append",
                   help="CSV/TSV: leave these columns out (identifiers, free text)")
    p.add_argument("--encoding", choices=("onehot", "hash"), default="onehot",
                   help="CSV/TSV: encoding of categorical columns (one-hot with a vocabulary "
                   "learned from the training data, or hashed into 8192 indicators per column, "
                   "as the Criteo featurizer does)")
    p.add_argument("--n-features", type=_feature_count,
                   help="number of features of svmlight data")
    p.add_argument("--scale", action="store_true", help="scale the features: standardize "
                   "dense data, max-abs scale sparse data; stored in the model file, so "
                   "evaluate and predict apply it")
    p.add_argument("--preset", metavar="NAME[:k=v,...]", help="a named composition "
                   "(pegasos, sgd, asgd, adagrad, smd, seg_pm, gd, pgd, lbfgs, sqb, and any a "
                   "plugin registers: 'sqnopt list --kind preset'); the component options below "
                   "override its parts")
    p.add_argument("--loss", help="objective: NAME[:k=v,...] (default: logloss, squared_error "
                   "with --task regression, or the preset's)")
    p.add_argument("--task", choices=("classification", "regression"),
                   help="what the labels are (default: what the loss fits -- squared_error, "
                   "huber and poisson fit real-valued targets, the others classes)")
    p.add_argument("--alpha", type=_nonnegative_float, default=1e-4,
                   help="regularisation strength: lambda of the L2 penalty, or the alpha of "
                   "--penalty l1 / elasticnet")
    p.add_argument("--penalty", choices=("l2", "l1", "elasticnet"), default="l2",
                   help="l2: alpha/2 ||w||^2; l1: alpha ||w||_1 (a sparse model); elasticnet: "
                   "alpha (r ||w||_1 + (1 - r)/2 ||w||^2) with r = --l1-ratio. Data in memory: "
                   "solved full batch by the composite methods (--curvature auto, owlqn or "
                   "newglmnet); with --chunk-size: FTRL-Proximal AdaGrad, the large-data "
                   "recipe")
    p.add_argument("--l1-ratio", type=_fraction_closed, metavar="R",
                   help="the L1 share r of --penalty elasticnet, in [0, 1]")
    p.add_argument("--curvature", default=DEFAULT_CURVATURE, help="curvature model: auto (the "
                   "recipe's default, see sqnopt.recipes) or NAME[:k=v,...]")
    p.add_argument("--gradient", default="auto", help="gradient estimator: auto (the recipe's) "
                   "or NAME[:k=v,...] (minibatch, svrg, saga)")
    p.add_argument("--schedule", default="auto", help="batch schedule: auto (the curvature "
                   "model's recipe, see sqnopt.recipes) or NAME[:k=v,...]")
    p.add_argument("--step", default="auto", help="step rule: auto (the recipe's) or "
                   "NAME[:k=v,...]")
    p.add_argument("--projection", metavar="NAME[:k=v,...]", help="projection after each step")
    p.add_argument("--no-intercept", action="store_true", help="do not fit an intercept")
    p.add_argument("--average", action="store_true", help="Polyak-Ruppert averaging")
    p.add_argument("--sampling", choices=("auto", "uniform", "shuffle", "subset", "weighted"),
                   default="auto", help="minibatch sampling (auto: the recipe's)")
    p.add_argument("--multiclass", choices=("auto", "ovr", "multinomial"), default="auto",
                   help="more than two classes: one multiclass objective or one-vs-rest")
    p.add_argument("--class-weight", metavar="balanced|LABEL=W,...",
                   help="class weights: 'balanced' or LABEL=WEIGHT,...")
    p.add_argument("--max-epochs", type=_positive_float,
                   help="budget in passes over the data (default: 1000 -- a cap, the tolerance "
                   "ends the run -- or, with --chunk-size, one pass over the file)")
    p.add_argument("--tol", type=_tol, default=1e-5, help="converged once the largest entry of "
                   "the training objective's gradient is at most this ('none': run --max-epochs)")
    p.add_argument("--n-iter-no-change", type=_positive_int, default=5,
                   help="stochastic recipes: stop after this many passes without improvement")
    p.add_argument("--seed", type=_nonnegative_int, default=0, help="random seed")
    p.add_argument("--n-jobs", type=_n_jobs, default=1, metavar="N",
                   help="threads for the passes over the data (-1: every usable core, -2: all "
                   "but one); the model is the same, bit for bit, for every N")
    p.add_argument("--chunk-size", type=_positive_int, help="stream the file in chunks of this "
                   "many rows (for files larger than memory): up to --max-epochs passes (default "
                   "1) of the large-data recipe, stopped on held-out rows. svmlight, Criteo or "
                   "CSV/TSV (a streamed table's columns are numeric unless named by "
                   "--categorical)")
    p.add_argument("--cache", nargs="?", const="", default=None, metavar="PATH",
                   help="with --chunk-size: write the parsed chunks to a binary cache on the "
                   "first pass (next to the data file, or at PATH) and read later passes from it")
    p.add_argument("--validation-fraction", type=_fraction, default=0.1,
                   help="large-data recipe: share of the rows held out for early stopping")
    p.add_argument("--no-early-stopping", action="store_true",
                   help="large-data recipe: train on every row and stop on each pass's "
                   "progressive loss instead of held-out rows")
    p.add_argument("--no-parameter-mixing", action="store_true",
                   help="large-data recipe: sequential updates instead of each chunk as two "
                   "shards averaged (which run on two threads from --n-jobs 2, the same model "
                   "for every N)")
    p.add_argument("--report-every", type=_positive_int,
                   help="solver iterations between progress updates (default: the recipe's)")
    p.add_argument("--history-points", type=_positive_int, default=60,
                   help="log-spaced objective evaluations recorded in the history")
    p.add_argument("--model", default=DEFAULT_MODEL, help="model file to write (.npz)")
    p.add_argument("--history", default=DEFAULT_HISTORY, help="history file to write (.json)")
    p.add_argument("--checkpoint", metavar="FILE", help="write the whole training state to FILE "
                   "(.npz, replaced atomically) every --checkpoint-every passes and at the end")
    p.add_argument("--checkpoint-every", type=_positive_float, metavar="N",
                   default=argparse.SUPPRESS, help="passes between checkpoints (default: 1, "
                   "skipping those that would make writing checkpoints take more than a tenth "
                   "of the run)")
    p.add_argument("--resume", metavar="FILE", help="continue the run checkpointed in FILE "
                   "(same data and settings; --max-epochs may be larger) and end with the model "
                   "of the uninterrupted run")
    p.add_argument("--label", help="name of this run in plots (default: the curvature model)")
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                   help="progress bar on stderr (auto: live on a terminal or in a notebook, a "
                   "line every 30 s in a log)")
    _add_quiet(p, "nothing on stdout, no progress bar, no warnings (the exit status says "
               "whether the run diverged); the files are written as usual")
    p.set_defaults(func=_cmd_train)

    for command, func, text in (
            ("evaluate", _cmd_evaluate, "accuracy, log loss and AUC of a saved model"),
            ("predict", _cmd_predict, "predicted labels or probabilities, one line per sample")):
        p = sub.add_parser(command, help=text, formatter_class=_HelpFormatter,
                           description=f"{text[0].upper()}{text[1:]}, for a model file written "
                           "by 'sqnopt train'. The data is made into the model's features the "
                           "way train made them (format, CSV columns, scaling); a feature-count "
                           "mismatch is an error.")
        p.add_argument("model", help="model file (.npz)")
        p.add_argument("data", help="data file or built-in dataset name (a9a: its test split)")
        p.add_argument("--format", choices=formats, default="auto",
                       help="input format (auto: from the name, the model, or the content)")
        p.add_argument("--target", metavar="COLUMN", help="CSV/TSV: the label column (default: "
                       "the model's)")
        p.add_argument("--n-features", type=_feature_count, help="svmlight: the width of the "
                       "data, when its last features are all zero (svmlight files do not "
                       "record their width)")
        if command == "predict":
            p.add_argument("--proba", action="store_true",
                           help="class probabilities (logistic/softmax)")
            p.add_argument("-o", "--output", help="output file (default: stdout)")
            _add_quiet(p, "the predictions only (no 'wrote ...' line with -o)")
        else:
            p.add_argument("--json", action="store_true", help="the metrics as one JSON object "
                           "on stdout (n_samples, accuracy, log_loss, roc_auc, classes with "
                           "label, n_samples and recall; null where undefined), for scripts")
            _add_quiet(p, "the metric lines only (no model and data lines)")
        p.set_defaults(func=func)

    p = sub.add_parser("plot", help="plot history JSON files (objective vs samples) to a PNG",
                       description="Objective vs samples processed (or passes / time), one line "
                       "per run, logarithmic axes, from history files written by 'sqnopt "
                       "train'. Needs matplotlib: pip install 'sqnopt[plot]'.",
                       formatter_class=_HelpFormatter)
    p.add_argument("histories", nargs="*", help=f"history files (default: {DEFAULT_HISTORY})")
    p.add_argument("-o", "--output", help="image to write, PNG, PDF or SVG by extension "
                   "(default: the first history's name with .png)")
    p.add_argument("--x", choices=("samples", "effective_passes", "time", "iteration"),
                   default="samples", help="x axis")
    p.add_argument("--linear-x", action="store_true", help="linear x axis")
    p.add_argument("--linear-y", action="store_true", help="linear y axis")
    p.add_argument("--title", help="figure title (default: the data set of a single history)")
    _add_quiet(p, "no 'wrote ...' line")
    p.set_defaults(func=_cmd_plot)

    p = sub.add_parser("list", help="registered components with parameters, presets, plugins, "
                       "datasets", formatter_class=_HelpFormatter,
                       description="Everything registered: components (built-in and from "
                       "plugins) with their parameters, presets, plugins, built-in datasets.")
    p.add_argument("--kind", choices=("objective", "curvature", "gradient", "schedule", "step",
                                      "projection", "penalty", "preset"),
                   help="only this kind of component")
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("demo", help="solve the paper-003 synthetic squared-hinge problem",
                       formatter_class=_HelpFormatter)
    p.add_argument("--n-samples", type=_number(int, 2, False, "an integer >= 2 (two boxes)"),
                   default=10_000, help="training samples")
    p.add_argument("--n-features", type=_positive_int, default=100, help="features")
    p.add_argument("--samples", type=_positive_int, default=40_000, help="samples to process (Lt)")
    p.add_argument("--curvature", default="identity",
                   help="curvature model: NAME[:k=v,...], as for train")
    p.add_argument("--seed", type=_nonnegative_int, default=0, help="random seed")
    p.set_defaults(func=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 success -- bare ``sqnopt`` prints the
    help --, 1 error, 2 usage error, 3 a diverged training run, 130 interrupted). Errors are one line on stderr, never a traceback: anticipated ones name the
    problem; anything else is reported as an internal error (``SQNOPT_DEBUG=1`` re-raises it)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv:  # bare `sqnopt`: the overview, not an error
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    from sqnopt.registry import UnknownComponentError
    from sqnopt.solver import CurvatureError

    try:
        return int(args.func(args))
    except (CLIError, UnknownComponentError, ValueError, TypeError, FileNotFoundError,
            IsADirectoryError, ImportError, CurvatureError, MemoryError) as exc:
        return _fail(exc)
    except KeyboardInterrupt:
        print("\nsqnopt: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except OSError as exc:  # permissions, a full disk, ...
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        return _fail(CLIError(f"{exc.strerror or exc}{where}"))
    except MemoryError:
        return _fail(CLIError("out of memory (the data or the model is too large for this "
                              "machine; try --chunk-size to stream the data)"))
    except Exception as exc:
        import os

        if os.environ.get("SQNOPT_DEBUG"):
            raise
        return _fail(CLIError(f"internal error: {type(exc).__name__}: {exc} (please report it; "
                              "SQNOPT_DEBUG=1 shows the traceback)"))


if __name__ == "__main__":
    sys.exit(main())
