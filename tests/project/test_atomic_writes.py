"""Every file sqnopt writes is replaced atomically: a process killed (SIGKILL) while writing
leaves the previous file intact, byte for byte.

``LinearModel.save`` used to open the destination with truncation and then write: a kill during
the save destroyed the old model (a partial zip, ``BadZipFile`` on load). Now content goes to a
temporary file in the same directory, is flushed and fsync-ed, and ``os.replace`` puts it in
place. The kill tests run the writer in a child process with a hook that stops it mid-write (the
model: ``np.savez`` writes part of its archive and sleeps; the other writers: ``os.fsync`` of the
temporary file sleeps, after all new bytes are written), kill it with SIGKILL, and compare.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from sqnopt._files import atomic_write, check_output_path, write_bytes_atomic, write_text_atomic
from sqnopt.cli import main
from sqnopt.model import LinearModel

from tests.conftest import sqnopt_env

SVM = b"".join(f"{1 if i % 3 else -1} 1:{i % 5} 2:{(i * 7) % 3} 4:1\n".encode()
               for i in range(40))


def _child(code: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-X", "faulthandler", "-c", textwrap.dedent(code)],
                            cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=sqnopt_env())


def _kill_when_ready(proc: subprocess.Popen[str], timeout: float = 60.0) -> None:
    """Wait for the child's READY line (it is inside the write), then SIGKILL it."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    line = ""
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.strip() == "READY" or not line:
            break
    if line.strip() != "READY":
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"the writer finished without pausing inside an atomic write "
                    f"(exit {proc.returncode}): {err[-2000:]}")
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)  # reaps the child and closes the pipes
    assert proc.returncode == -signal.SIGKILL


def _model(n_features: int, seed: int) -> LinearModel:
    rng = np.random.default_rng(seed)
    return LinearModel(coef=rng.normal(size=(1, n_features)), intercept=np.array([0.5]),
                       classes=np.array([-1.0, 1.0]), strategy="binary", loss="logloss",
                       probabilistic=True, info={"seed": seed})


def test_kill9_during_model_save_keeps_the_old_model(tmp_path: Path) -> None:
    path = tmp_path / "model.npz"
    old = _model(50, seed=1)
    old.save(path)
    before = path.read_bytes()
    proc = _child(f"""
        import time, numpy as np
        from sqnopt.model import LinearModel
        real = np.savez
        def slow_savez(fh, **arrays):
            fh.write(b"PK\\x03\\x04 a partial archive ...")  # what a kill leaves behind
            fh.flush()
            print("READY", flush=True)
            time.sleep(120)
            real(fh, **arrays)
        np.savez = slow_savez
        rng = np.random.default_rng(2)
        LinearModel(coef=rng.normal(size=(1, 50)), intercept=np.zeros(1),
                    classes=np.array([-1.0, 1.0]), strategy="binary", loss="logloss",
                    probabilistic=True).save({str(path)!r})
    """, tmp_path)
    _kill_when_ready(proc)
    assert path.read_bytes() == before
    np.testing.assert_array_equal(LinearModel.load(path).coef, old.coef)
    # the interrupted write left only its hidden temporary file beside the model
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == \
        ["model.npz"]


_HOOK = """
import os, sys, time
TARGET = sys.argv[1]
real_fsync = os.fsync
def slow_fsync(fd):
    name = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
    if name.startswith("." + TARGET + "."):
        print("READY", flush=True)
        time.sleep(120)
    return real_fsync(fd)
os.fsync = slow_fsync
from sqnopt.cli import main
"""


@pytest.fixture(scope="module")
def cli_outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with the files ``sqnopt train / predict / plot`` write."""
    d = tmp_path_factory.mktemp("outputs")
    (d / "data.svm").write_bytes(SVM)
    cwd = os.getcwd()
    os.chdir(d)
    try:
        assert main(["train", "data.svm", "--max-epochs", "2", "--progress", "never",
                     "--model", "m.npz", "--history", "h.json"]) == 0
        assert main(["predict", "m.npz", "data.svm", "-o", "pred.txt"]) == 0
        assert main(["plot", "h.json", "-o", "plot.png"]) == 0
    finally:
        os.chdir(cwd)
    return d


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
@pytest.mark.parametrize("target,argv", [
    ("m.npz", ["train", "data.svm", "--max-epochs", "1", "--seed", "3", "--progress", "never",
               "--model", "m.npz", "--history", "h.json"]),
    ("h.json", ["train", "data.svm", "--max-epochs", "1", "--seed", "3", "--progress", "never",
                "--model", "m.npz", "--history", "h.json"]),
    ("pred.txt", ["predict", "m.npz", "data.svm", "--proba", "-o", "pred.txt"]),
    ("plot.png", ["plot", "h.json", "--linear-x", "-o", "plot.png"]),
])
def test_kill9_during_each_cli_write_keeps_the_old_file(cli_outputs: Path, target: str,
                                                        argv: list[str]) -> None:
    snapshot = {p.name: p.read_bytes() for p in cli_outputs.iterdir() if p.is_file()}
    code = _HOOK + f"\nsys.exit(main({argv!r}))\n"
    proc = subprocess.Popen([sys.executable, "-c", code, target], cwd=cli_outputs,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=sqnopt_env())
    _kill_when_ready(proc)
    assert (cli_outputs / target).read_bytes() == snapshot[target]
    leftovers = [p for p in cli_outputs.iterdir() if p.name.startswith(f".{target}.")]
    assert len(leftovers) == 1 and leftovers[0].name.endswith(".tmp")
    leftovers[0].unlink()


def test_save_figure_kill9_keeps_the_old_figure(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "fig.png"
    path.write_bytes(b"old figure")
    code = _HOOK.replace("from sqnopt.cli import main", "") + f"""
from matplotlib.figure import Figure
from sqnopt.plotting import save_figure
fig = Figure()
fig.add_subplot().plot([1, 2, 3])
save_figure(fig, {str(path)!r})
"""
    proc = subprocess.Popen([sys.executable, "-c", code, "fig.png"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=sqnopt_env())
    _kill_when_ready(proc)
    assert path.read_bytes() == b"old figure"


def test_atomic_write_semantics(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    write_text_atomic(path, "one")
    assert path.read_text() == "one"
    mode = stat.S_IMODE(path.stat().st_mode)
    assert mode == 0o666 & ~_umask()                      # what open(path, "w") gives
    os.chmod(path, 0o640)
    write_bytes_atomic(path, b"two")
    assert path.read_bytes() == b"two" and stat.S_IMODE(path.stat().st_mode) == 0o640
    with pytest.raises(RuntimeError, match="boom"), atomic_write(path) as fh:
        fh.write(b"three, half written")
        raise RuntimeError("boom")
    assert path.read_bytes() == b"two"                    # an error leaves the old file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]  # and no temporary file
    link = tmp_path / "link.txt"
    link.symlink_to(path)
    write_text_atomic(link, "via link")
    assert link.is_symlink() and path.read_text() == "via link"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for bad in (fifo, tmp_path):
        with pytest.raises(ValueError, match="regular file|directory"):
            write_text_atomic(bad, "x")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_text_atomic(tmp_path / "missing" / "f.txt", "x")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_check_output_path_refuses_unwritable_destinations(tmp_path: Path) -> None:
    assert check_output_path(tmp_path / "new.npz") == tmp_path / "new.npz"
    assert not list(tmp_path.iterdir())                   # the probe file is gone
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    cases = [(tmp_path / "nope" / "m.npz", "does not exist"), (tmp_path, "is a directory"),
             (fifo, "not a regular file"), (Path("/dev/null"), "not a regular file")]
    if Path("/proc/self").is_dir():
        cases.append((Path("/proc/sqnopt_out.png"), "cannot create files"))
    for path, match in cases:
        with pytest.raises(ValueError, match=match):
            check_output_path(path, "--model")
