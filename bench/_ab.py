"""What the A/B scripts (``bench/ab_*.py``) share: two built checkouts timed by the same child
program, one process per tree and round, the trees alternating over the rounds so that the
machine's drift falls on both, and a table of min / quantiles over the rounds.

A child program is Python source run as ``python -c CODE ARGS...`` with the tree on
``PYTHONPATH`` and as working directory; its last line of output is a JSON object of figures.
If that object has a ``"sqnopt"`` entry (``sqnopt.__file__``), it is checked to lie in the tree
and removed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any


#: The start of a child program on the race's problems: the usual imports, the bench folder on
#: the path (the child runs in the tree), ``load_problems`` with ``datasets_dir``, and
#: ``best(fn, r)``: the least CPU time of the thread over ``r`` calls of ``fn``, in ms.
RACE_PRELUDE = r'''
import gc, json, sys, time, warnings
import numpy as np
sys.path.insert(0, "bench")
import sqnopt
from bench._data import datasets_dir
from bench.race.problems import load_problems

def best(fn, r=7):
    out = []
    for _ in range(r):
        gc.collect()
        t = time.thread_time()
        fn()
        out.append(time.thread_time() - t)
    return 1e3 * min(out)
'''


def use_shared_datasets() -> None:
    """Point the children at the shared data sets found from here (a tree outside /work, a
    worktree in /tmp, finds them through ``SQNOPT_DATASETS``)."""
    from _data import datasets_dir

    found = datasets_dir()
    if found is not None:
        os.environ.setdefault("SQNOPT_DATASETS", str(found))


def parse(doc: str | None, rounds: int,
          extra: Callable[[argparse.ArgumentParser], None] | None = None) -> argparse.Namespace:
    """``OLD NEW [--rounds R]`` (and the options ``extra`` adds); ``old`` and ``new`` come back
    as absolute paths."""
    ap = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=rounds)
    if extra is not None:
        extra(ap)
    a = ap.parse_args()
    a.old, a.new = os.path.abspath(a.old), os.path.abspath(a.new)
    return a


def child(code: str, root: str, *args: str) -> dict[str, Any]:
    """The JSON figures of ``code`` run in the tree ``root`` (one BLAS thread)."""
    env = dict(os.environ, PYTHONPATH=root, OPENBLAS_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-c", code, *args], cwd=root, env=env,
                       capture_output=True, text=True, check=True)
    out: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    where = out.pop("sqnopt", None)
    if where is not None and not str(where).startswith(root):
        raise SystemExit(f"imported sqnopt from {where}, outside {root}")
    return out


def interleave(a: argparse.Namespace, code: str, *args: str) -> dict[str, list[dict[str, Any]]]:
    """``a.rounds`` rounds of ``code`` in the old tree, then the new one."""
    res: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    for _ in range(a.rounds):
        for tag, root in (("old", a.old), ("new", a.new)):
            res[tag].append(child(code, root, *args))
    return res


def table(res: dict[str, list[dict[str, Any]]], unit: str, *, width: int = 26,
          quantiles: Sequence[int] = (2,), digits: int = 2) -> None:
    """Per case: old and new minimum and the given quantiles over the rounds (``2``: median,
    ``4``: lower quartile) and new/old of the minima."""
    names = " / ".join(["min"] + [{2: "median", 4: "q1"}.get(q, f"1/{q}") for q in quantiles])
    print(f"{'case':{width}s} {'old ' + names:>28s} {'new ' + names:>28s} {'new/old':>8s}  "
          f"({unit})")
    for key in res["old"][0]:
        cells = []
        for tag in ("old", "new"):
            v = sorted(d[key] for d in res[tag])
            cells.append(" / ".join(f"{v[len(v) // q if q > 1 else 0]:.{digits}f}"
                                    for q in (1, *quantiles)))
        o_min = min(d[key] for d in res["old"])
        n_min = min(d[key] for d in res["new"])
        print(f"{key:{width}s} {cells[0]:>28s} {cells[1]:>28s} {n_min / o_min:8.3f}")
