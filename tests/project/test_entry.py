"""How the package and the command start: ``import sqnopt`` loads nothing heavy, a source
tree without its compiled extensions says so and how to fix it, and Ctrl-C while the command
line loads ends it as an interrupted run (exit 130), not with a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sqnopt

PKG = Path(sqnopt.__file__).resolve().parent
ROOT = Path(__file__).resolve().parents[2]


def _env(path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(path), os.environ.get("PYTHONPATH")]))}


def _python(code: str, cwd: Path, path: Path = PKG.parent,
            *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env=_env(path))


def test_import_sqnopt_loads_neither_numpy_nor_the_compiled_core(tmp_path: Path) -> None:
    res = _python("import sys, sqnopt; print(sorted(m for m in ('numpy', 'scipy', "
                  "'sqnopt.solver', 'sqnopt._simd_info') if m in sys.modules)); "
                  "print(sqnopt.Solver.__module__, 'numpy' in sys.modules)", tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split("\n")[:2] == ["[]", "sqnopt.solver._solver True"]


def test_every_public_name_resolves_and_is_listed() -> None:
    for name in sqnopt.__all__:
        assert getattr(sqnopt, name) is not None
    assert set(sqnopt.__all__) <= set(dir(sqnopt))
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        sqnopt.Nope  # type: ignore[attr-defined]  # noqa: B018


def test_an_unbuilt_source_tree_says_how_to_build_it(tmp_path: Path) -> None:
    """The sources without their compiled modules (a fresh checkout, imported from its root)."""
    tree = tmp_path / "checkout"
    shutil.copytree(PKG, tree / "sqnopt",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "*.c", "__pycache__"))
    res = _python("import sqnopt", tree, tree)
    assert res.returncode == 1
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: sqnopt's compiled extensions are not built in")
    assert "pip install ." in last and "python setup.py build_ext --inplace" in last
    assert "No module named" not in res.stderr


# what the console script does (import, then call), with Ctrl-C delivered while NumPy loads: a
# finder on the import path sends SIGINT to the process the first time NumPy is looked up
_INTERRUPT_NUMPY = """
import os, signal, sys
# Python's own Ctrl-C handler, as in a terminal: a child of a background job inherits SIGINT
# ignored (POSIX shells start background commands so), and the signal would then not arrive
signal.signal(signal.SIGINT, signal.default_int_handler)

class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, Interrupt())
sys.argv = ["sqnopt", "list"]
from sqnopt.__main__ import main
sys.exit(main())
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is POSIX")
def test_ctrl_c_while_the_command_line_loads_is_an_interrupted_run(tmp_path: Path) -> None:
    res = _python(_INTERRUPT_NUMPY, tmp_path)
    assert res.returncode == 130, res.stderr
    assert res.stderr.strip() == "sqnopt: interrupted"
    assert "Traceback" not in res.stderr and res.stdout == ""


def test_the_console_script_is_the_guarded_entry_point() -> None:
    pyproject = ROOT / "pyproject.toml"
    if not pyproject.exists():
        pytest.skip("no pyproject.toml beside the tests")
    import tomllib

    scripts = tomllib.loads(pyproject.read_text())["project"]["scripts"]
    assert scripts["sqnopt"] == "sqnopt.__main__:main"
    from sqnopt.__main__ import main

    assert callable(main)
