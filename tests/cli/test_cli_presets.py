"""Every preset ``sqnopt list`` shows works at its defaults: it trains on the shipped a9a
through the command line without failing or diverging, to a test accuracy near the
estimator's; and ``sqnopt list`` shows each preset's parameters (required ones marked) and a
plain-text summary cut at a sentence's end."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import numpy as np
import pytest

from sqnopt.cli import main
from sqnopt.registry import get_registry


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def _listed_presets() -> list[str]:
    return list(get_registry().preset_names())


@pytest.fixture(scope="module")
def reference() -> tuple[float, float]:
    """The majority class's rate on a9a's test split and SQNClassifier()'s test accuracy."""
    from sqnopt import SQNClassifier
    from sqnopt.datasets import load_a9a

    X, y = load_a9a("train")
    Xt, yt = load_a9a("test")
    majority = max(np.mean(yt == c) for c in np.unique(y))
    return float(majority), float(SQNClassifier(random_state=0).fit(X, y).score(Xt, yt))


@pytest.fixture
def cached_a9a(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The built-in a9a parsed once for the whole module (each run reads it otherwise)."""
    import sqnopt.datasets as ds

    monkeypatch.setattr(ds, "load_builtin", _cached_builtin(ds.load_builtin))
    monkeypatch.chdir(tmp_path)


@functools.cache
def _cached_builtin(load: object) -> object:
    return functools.cache(load)  # type: ignore[arg-type]


def test_sqnopt_list_offers_every_preset() -> None:
    assert {"pegasos", "saga", "svrg", "lbfgs", "sqb"} <= set(_listed_presets())


@pytest.mark.slow      # 40 s for all of them: each runs to its own stopping rule
@pytest.mark.parametrize("preset", _listed_presets())
def test_every_listed_preset_works_at_its_defaults_on_a9a(
        preset: str, capsys: pytest.CaptureFixture[str], cached_a9a: None,
        reference: tuple[float, float]) -> None:
    majority, estimator = reference
    code, out, err = _run(capsys, "train", "--preset", preset, "--progress", "never")
    assert code == 0, err
    assert "diverged" not in err and "unstable" not in err
    acc = float(re.search(r"test accuracy:\s+([0-9.]+)", out).group(1))   # type: ignore[union-attr]
    # the majority class has 0.764, SQNClassifier() 0.850: within 0.02 of the estimator
    assert acc > majority + 0.05 and acc >= estimator - 0.02, (preset, acc, out, err)


def test_list_shows_parameters_and_plain_sentences(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "list", "--kind", "preset")
    assert code == 0
    assert "saga(eta=None, objective='logloss', batch_size=1)" in out     # eta: from the data
    assert "pegasos(batch_size=1, average=False, project=True, radius=None" in out
    assert "asgd(objective='hinge', eps0=1.0, batch_size=1, average=True" in out
    # no reStructuredText markup, and each summary ends a sentence
    assert "``" not in out and ":func:" not in out and ":class:" not in out
    assert "sgd with average=True." in out
    summaries: list[list[str]] = []
    for line in out.splitlines()[1:]:
        if line.startswith("      "):
            summaries[-1].append(line.strip())
        else:
            summaries.append([])
    assert len(summaries) == len(_listed_presets())
    for lines in summaries:
        assert lines and " ".join(lines).endswith("."), lines


def test_a_required_preset_parameter_is_marked(capsys: pytest.CaptureFixture[str]) -> None:
    from sqnopt import Solver
    from sqnopt.registry import hookimpl, register_plugin, unregister_plugin

    class Plugin:
        @staticmethod
        @hookimpl
        def sqnopt_register_presets(register: object) -> None:
            def tuned(lam: float = 1e-4, *, eta: float, memory: int = 5,
                      **solver_kwargs: object) -> Solver:
                """A preset whose step must be given.

                Nothing else."""
                return Solver.preset("lbfgs", lam=lam, memory=memory)
            register("needs_eta", tuned)  # type: ignore[operator]

    plugin = Plugin()
    register_plugin(plugin, name="needs-eta-test")
    try:
        code, out, _ = _run(capsys, "list", "--kind", "preset")
    finally:
        unregister_plugin(plugin)
    assert code == 0
    assert "needs_eta(eta (required), memory=5)" in out
    assert "      A preset whose step must be given.\n" in out


@pytest.mark.parametrize("spec", ["sgd:objective=logloss", "saga:objective=logloss"])
def test_a_preset_loss_given_as_a_parameter_takes_alpha(spec: str) -> None:
    """``--preset NAME:objective=LOSS`` builds the loss with ``--alpha`` as ``--loss`` does (it
    was built at the loss's own default regularisation, ``--alpha`` silently ignored)."""
    import argparse

    from sqnopt.cli import CLIError, _preset

    solver = _preset(argparse.Namespace(preset=spec, loss=None), 0.0123)
    assert solver.objective.lam == 0.0123
    assert solver.objective.name == "logloss"
    with pytest.raises(CLIError, match="given twice"):
        _preset(argparse.Namespace(preset=spec, loss="hinge"), 0.0123)
