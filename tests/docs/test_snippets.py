"""Every ```python block of the documentation (docs/*.md) and of the README runs as written.

The blocks of one page run in order in one namespace (a page builds on its earlier blocks), in
a temporary working directory. A block that raises fails the test with the page and the line
where the block starts. Warnings other than the documented convergence warnings fail too:
an example should not teach code that warns.
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
import types
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
#: Pages about an optional extra: skipped when its packages are not installed.
NEEDS = {"dask.md": ("dask.array", "distributed")}
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def _choosing_histories_are_curves(namespace: dict[str, object]) -> None:
    """choosing.md's comparison plots a curve per composition, not its two end points (which
    a deterministic fit's default history holds)."""
    histories = namespace["histories"]
    assert isinstance(histories, dict) and len(histories) == 4
    assert all(len(h) >= 10 for h in histories.values()), {k: len(h) for k, h in
                                                             histories.items()}


#: What a page's blocks must have left in their namespace, beyond running.
AFTER = {"choosing.md": _choosing_histories_are_curves}


def python_blocks(path: Path) -> list[tuple[int, str]]:
    """``(line, code)`` of each python block of a Markdown page."""
    text = path.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 2, textwrap.dedent(m.group(1)))
            for m in FENCE.finditer(text)]


def test_the_pages_have_python_blocks() -> None:
    counted = {p.name: len(python_blocks(p)) for p in PAGES}
    assert counted["quickstart.md"] >= 5 and counted["plugins.md"] >= 6, counted
    # the two snippets that failed as written once: usage.md section 1 (X) and sqb.md (N)
    assert counted["usage.md"] >= 1 and counted["sqb.md"] >= 1


@pytest.mark.usefixtures("installed_plugins")   # a page runs as in a user's session (plugins.md)
@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p)],
                         ids=lambda p: p.name)
def test_python_blocks_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sklearn")      # the estimator examples
    pytest.importorskip("matplotlib")   # the plotting examples
    for module in NEEDS.get(page.name, ()):   # an optional extra's page
        pytest.importorskip(module, exc_type=ImportError)
    from sqnopt.registry import get_plugin_manager, unregister_plugin
    from sqnopt.training import ConvergenceWarning

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    before = {id(p) for p in get_plugin_manager().get_plugins()}
    # a real module, so that dataclasses and pickle find the classes a page defines
    module = types.ModuleType(f"sqnopt_docs_{page.stem}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    try:
        for line, code in python_blocks(page):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    exec(compile(code, f"{page.name}:{line}", "exec"), namespace)
                except Exception as exc:
                    pytest.fail(f"{page.relative_to(ROOT)}, the block at line {line}: "
                                f"{type(exc).__name__}: {exc}")
            unexpected = [f"{w.category.__name__}: {w.message}" for w in caught
                          if not issubclass(w.category, ConvergenceWarning)]
            assert not unexpected, f"{page.name}, the block at line {line} warns: {unexpected}"
        if page.name in AFTER:
            AFTER[page.name](namespace)
    finally:  # a page that registers a plugin (plugins.md) leaves the registry as it found it
        for plugin in list(get_plugin_manager().get_plugins()):
            if id(plugin) not in before:
                unregister_plugin(plugin)
    assert os.getcwd() == str(tmp_path)
