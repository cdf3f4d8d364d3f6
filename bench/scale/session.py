"""What runs inside a contender's own process: the held-out set, a clock that pauses while the
held-out set is evaluated, the memory watch, and the record of points (one JSON line each,
flushed at once, so a run stopped at its time cap keeps every point it reached).

A contender's ``run(session)`` reads the training file itself inside :meth:`Session.timed`
blocks (or between :meth:`Session.resume` and :meth:`Session.pause`) and calls
:meth:`Session.point` whenever it has a model to evaluate; evaluation time is never counted.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import numpy as np

__all__ = ["MemoryWatch", "Session", "held_out_metrics"]


def held_out_metrics(y: np.ndarray, *, margin: np.ndarray | None = None,
                     proba: np.ndarray | None = None) -> dict[str, float]:
    """Log loss (natural log; from the margin ``m`` as ``mean log(1 + e^m) - y m``, stable; from
    probabilities clipped to ``[1e-15, 1 - 1e-15]`` as scikit-learn's ``log_loss``), accuracy
    at 0.5 and ROC AUC of a model's held-out scores; labels ``y`` in {0, 1}."""
    from sklearn.metrics import roc_auc_score

    if margin is not None:
        m = np.asarray(margin, dtype=np.float64).ravel()
        loss = float(np.mean(np.logaddexp(0.0, m) - y * m))
        pred, score = m > 0, m
    else:
        assert proba is not None
        p = np.clip(np.asarray(proba, dtype=np.float64).ravel(), 1e-15, 1 - 1e-15)
        loss = float(-np.mean(y * np.log(p) + (1 - y) * np.log1p(-p)))
        pred, score = p > 0.5, p
    if not math.isfinite(loss):
        return {"loss": math.inf, "accuracy": math.nan, "auc": math.nan}
    acc = float(np.mean(pred == (y > 0)))
    auc = float(roc_auc_score(y, score)) if 0 < y.sum() < y.size else math.nan
    return {"loss": loss, "accuracy": acc, "auc": auc}


def _status(field: str, pid: int | str = "self") -> int:
    """A memory field of ``/proc/PID/status`` (``VmHWM``, ``VmRSS``), in bytes; 0 where
    ``/proc`` is not available."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _hwm(pid: int | str = "self") -> int:
    """The peak resident memory (``VmHWM``, bytes) of a process's address space since it
    started its program. Unlike ``getrusage``'s ``ru_maxrss``, which Linux carries over from
    the parent across ``fork`` and ``exec`` (a child of a 2 GB parent "peaks" at 2 GB), this
    is the child's own. 0 where ``/proc`` is not available."""
    return _status("VmHWM", pid)


class MemoryWatch:
    """Peak resident memory of this process and every process it started (a LocalCluster's
    workers, say): the sum of their resident sizes sampled every ``interval`` seconds by a
    daemon thread, and this process's own high-water mark (``VmHWM``), which no sampling can
    miss."""

    def __init__(self, interval: float = 0.25) -> None:
        self.interval = interval
        self.peak_tree = 0
        self._stop = threading.Event()
        try:
            import psutil

            self._proc: Any = psutil.Process()
        except ImportError:   # the high-water mark alone
            self._proc = None
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def current(self) -> int:
        """The resident size of this process and its children (without psutil: this
        process's own ``VmRSS``; a contender that starts workers needs psutil)."""
        if self._proc is None:
            return _status("VmRSS")
        total = 0
        try:
            total = self._proc.memory_info().rss
            for child in self._proc.children(recursive=True):
                try:
                    total += child.memory_info().rss
                except Exception:   # gone meanwhile
                    pass
        except Exception:
            pass
        return int(total)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak_tree = max(self.peak_tree, self.current())

    @staticmethod
    def self_peak() -> int:
        """This process's own peak (``VmHWM``), in bytes."""
        return _hwm()

    def peak(self) -> int:
        return max(self.peak_tree, self.self_peak(), self.current())

    def stop(self) -> None:
        self._stop.set()


class Session:
    """One contender's run (see the module docstring). ``spec`` is the job the runner wrote:
    data files, sizes, ``alpha``, seed, chunk size, time cap."""

    def __init__(self, spec: dict[str, Any], out: IO[str]) -> None:
        self.spec = spec
        self._out = out
        self.n_train = int(spec["n_train"])
        self.n_features = int(spec["n_features"])
        self.alpha = float(spec["alpha"])
        self.seed = int(spec["seed"])
        self.chunk_rows = int(spec["chunk_rows"])
        self.cap = float(spec["cap"])
        self.files = {k: Path(v) for k, v in spec["files"].items()}
        self.workdir = Path(spec["workdir"])
        self.watch = MemoryWatch()
        from sklearn.datasets import load_svmlight_file

        Xt, yt = load_svmlight_file(str(self.files["test.svm"]), n_features=self.n_features,
                                    dtype=np.float64, zero_based=False)
        self.X_test = Xt.tocsr()
        self.y_test = (np.asarray(yt) > 0).astype(np.float64)
        self.rss_base = self.watch.current()
        self._elapsed = 0.0
        self._since: float | None = None
        self._next_eval = 0.0
        self.n_points = 0
        self.info: dict[str, Any] = {}
        self.status = "done"

    # ------------------------------------------------------------------ the clock
    def resume(self) -> None:
        if self._since is None:
            self._since = time.perf_counter()

    def pause(self) -> None:
        if self._since is not None:
            self._elapsed += time.perf_counter() - self._since
            self._since = None

    @property
    def elapsed(self) -> float:
        """Seconds counted so far (evaluation excluded)."""
        run = 0.0 if self._since is None else time.perf_counter() - self._since
        return self._elapsed + run

    @contextmanager
    def timed(self) -> Iterator[None]:
        self.resume()
        try:
            yield
        finally:
            self.pause()

    def count(self, seconds: float) -> None:
        """Add ``seconds`` measured elsewhere (a process of the contender's own) to the clock."""
        self._elapsed += float(seconds)

    def over_cap(self) -> bool:
        if self.elapsed > self.cap:
            self.status = "time cap"
            return True
        return False

    # ------------------------------------------------------------------ the points
    def due(self, examples: float) -> bool:
        """Whether ``examples`` has passed the next evaluation point (the points are spread
        evenly in log scale: see :meth:`point`)."""
        return examples >= self._next_eval

    def point(self, examples: float, *, margin: Any = None, proba: Any = None,
              elapsed: float | None = None, per_decade: int = 8, **extra: Any) -> dict[str, Any]:
        """Evaluate a model on the held-out set (clock paused) and record the point:
        ``examples`` processed so far, seconds counted (``elapsed``, default the clock's),
        held-out log loss, accuracy, AUC, the memory at that moment."""
        running = self._since is not None
        self.pause()
        t = self.elapsed if elapsed is None else float(elapsed)
        if callable(margin):
            margin = margin(self.X_test)
        if callable(proba):
            proba = proba(self.X_test)
        metrics = held_out_metrics(self.y_test, margin=margin, proba=proba)
        rec = {"time": t, "examples": float(examples), **metrics,
               "rss": self.watch.peak(), **extra}
        self._out.write(json.dumps({"point": rec}, default=float) + "\n")
        self._out.flush()
        self.n_points += 1
        step = 10.0 ** (1.0 / per_decade)
        self._next_eval = max(self._next_eval, float(examples)) * step
        if running:
            self.resume()
        return rec

    def finish(self, error: str | None = None) -> None:
        self.pause()
        self.watch.stop()
        end = {"status": "failed" if error else self.status, "error": error,
               "peak_rss": self.watch.peak(), "rss_base": self.rss_base,
               "peak_rss_self": MemoryWatch.self_peak(), "elapsed": self.elapsed,
               "info": self.info}
        self._out.write(json.dumps({"end": end}, default=float) + "\n")
        self._out.flush()


def main(argv: list[str]) -> int:
    """``python -m scale.session JOB OUT``: run the contender named in JOB, points to OUT."""
    import traceback
    import warnings

    from . import contenders

    job = json.loads(Path(argv[0]).read_text())
    with open(argv[1], "a") as out:
        session = Session(job, out)
        c = contenders.by_name()[job["contender"]]
        err = None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                c.run(session)
        except Exception as exc:  # recorded; the runner reports it
            err = f"{type(exc).__name__}: {exc}"[:500]
            traceback.print_exc()
        session.finish(err)
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
