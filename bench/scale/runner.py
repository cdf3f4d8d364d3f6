"""Running each contender in its own process: the job file, the command, the time limit, the
points it wrote, its peak memory.

The child is ``python -m <this package>.session JOB POINTS``; it prints nothing the runner needs
(its output goes to a log kept beside the points while it runs, and is shown when it fails).
A child still running at ``hard_cap`` seconds (the contender's cap plus slack for reading the
held-out set and the evaluations) is killed with its whole process group (a LocalCluster's
workers included); the points it flushed before are kept, its status is ``killed``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .contenders import Contender
from .data import Prepared

PACKAGE = __package__ or "scale"
#: The directory that makes ``PACKAGE`` importable (the checkout for ``bench.scale``, bench/
#: for ``scale``).
PACKAGE_ROOT = Path(__file__).resolve().parents[PACKAGE.count(".") + 1]


@dataclass
class Settings:
    seed: int = 0
    chunk_rows: int = 100_000
    cap: float = 900.0                 # seconds counted per contender and data set
    slack: float = 120.0               # hard limit = cap * 1.5 + slack (wall clock)
    tmp: Path | None = None            # scratch directory of the children (VW's cache)
    log: Callable[[str], None] = print


def job_for(c: Contender, p: Prepared, s: Settings, workdir: Path) -> dict[str, Any]:
    files = {f"{split}.{fmt}": str(p.path(split, fmt)) for split in ("train", "test")
             for fmt in p.manifest["formats"]}
    n = int(p.manifest["n_train"])
    return {"contender": c.name, "n_train": n, "n_features": p.n_features, "alpha": 1.0 / n,
            "seed": s.seed, "chunk_rows": min(s.chunk_rows, n), "cap": s.cap, "files": files,
            "workdir": str(workdir)}


def _env() -> dict[str, str]:
    """The children's environment: this package importable, and the same sqnopt as the
    runner's (a checkout built in place, or the installed one), whatever their cwd."""
    import sqnopt

    env = dict(os.environ)
    paths = [str(PACKAGE_ROOT), str(Path(sqnopt.__file__).resolve().parents[1])]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    return env


def _read_points(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    points: list[dict[str, Any]] = []
    end = None
    if not path.exists():
        return points, end
    for line in path.read_text().splitlines():
        try:
            msg = json.loads(line)
        except ValueError:      # a line cut by a kill
            continue
        if "point" in msg:
            points.append(msg["point"])
        elif "end" in msg:
            end = msg["end"]
    return points, end


def run_contender(c: Contender, p: Prepared, s: Settings) -> dict[str, Any]:
    """One contender on one data set, in its own process: the record entry (curve, status,
    peak memory, what it reported)."""
    workdir = Path(tempfile.mkdtemp(prefix="sqnopt-scale-", dir=s.tmp))
    try:
        job = job_for(c, p, s, workdir)
        (workdir / "job.json").write_text(json.dumps(job))
        out, log = workdir / "points.jsonl", workdir / "child.log"
        hard = s.cap * 1.5 + s.slack
        tic = time.perf_counter()
        with open(log, "wb") as fh:
            proc = _spawn([sys.executable, "-m", f"{PACKAGE}.session", str(workdir / "job.json"),
                           str(out)], fh, workdir)
            status = _wait(proc, hard)
        wall = time.perf_counter() - tic
        points, end = _read_points(out)
        entry: dict[str, Any] = {"wall": round(wall, 2)}
        if end is not None:
            entry.update(status=end["status"], peak_rss=end["peak_rss"],
                         rss_base=end["rss_base"], counted=end["elapsed"], info=end["info"])
            if end.get("error"):
                entry["error"] = end["error"]
        else:
            entry.update(status="killed" if status == "killed" else "crashed",
                         peak_rss=max([q.get("rss", 0) for q in points] + [0]))
            tail = log.read_text(errors="replace")[-600:] if log.exists() else ""
            entry["error"] = (f"no end record ({status}); " + tail.strip())[-600:]
        if points:
            entry["curve"] = {k: [q[k] for q in points] for k in ("time", "examples", "loss",
                                                                   "accuracy", "auc")}
        if entry.get("error"):
            s.log(f"    {c.name}: {entry['status']}: {entry['error'][-300:]}")
        return entry
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _spawn(cmd: list[str], log: Any, cwd: Path) -> Any:
    import subprocess

    # cwd: the job's scratch directory, so that the child imports what the environment says
    # (PYTHONPATH: this package's root), not a checkout that happens to be the cwd
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=_env(),
                            start_new_session=True, cwd=cwd)


def _wait(proc: Any, limit: float) -> str:
    """Wait for the child (at most ``limit`` seconds, then kill its process group); returns
    how it ended. (The kernel's ``ru_maxrss`` of the child is not used: Linux carries the
    parent's peak over into it; the child measures its own.)"""
    import subprocess

    try:
        code = proc.wait(timeout=limit)
        return "exited" if code == 0 else f"exit status {code}"
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        return "killed"
