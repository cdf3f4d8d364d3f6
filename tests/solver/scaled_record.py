"""The scaled sparse iterate's iterate sequences, recorded, so that a restructured driver can be
held to them bit for bit (``tests/solver/test_scaled_record.py``).

    python tests/solver/scaled_record.py [OUT]     # (re)write scaled_record.npz beside this file

(and ``scaled_checkpoint.npz`` beside ``OUT``: a checkpoint file of one run, to check that the
files the reference tree writes restore and continue bit for bit).

Run it with the tree whose iterates are the reference on the import path (e.g.
``PYTHONPATH=/path/to/old/checkout``): it imports ``sqnopt`` from wherever Python finds it. The
record holds, for every run of :func:`runs`, the iterate after iterations 1, 10 and the last
and the counters of the result. The arithmetic of the vector layer may depend on the machine's
SIMD width, so the record is of the machine it was written on; regenerate it (with the
reference tree) on another.
"""

from __future__ import annotations

import hashlib
import pickle
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
RECORD = HERE / "scaled_record.npz"
# a checkpoint file the reference tree wrote after SPLIT iterations of CHECKPOINT_RUN
CHECKPOINT = HERE / "scaled_checkpoint.npz"
CHECKPOINT_RUN = "pegasos_k4_avg"
SPLIT = 40
SNAPSHOTS = (1, 10)
COUNTERS = ("n_iter", "n_samples", "n_grad_evals")
MAX_STORED = 1000
STRIDE = 97


def _data(n_samples: int, n_features: int, density: float, seed: int
          ) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features)) * (rng.random((n_samples, n_features)) < density)
    w_true = rng.normal(size=n_features)
    y = np.where(X @ w_true + 0.3 * rng.normal(size=n_samples) > 0, 1.0, -1.0)
    return X, y


def _configs() -> dict[str, dict[str, Any]]:
    from sqnopt import (Constant, Decaying, Fixed, Full, Hinge, Identity, InverseSqrt, L2Ball,
                        Linear, LogLoss, PegasosStep, SquaredHinge)

    return {
        "pegasos": dict(objective=Hinge(lam=1e-2), curvature=Identity(), schedule=Fixed(1),
                        step=PegasosStep(), projection=L2Ball()),
        "pegasos_k4_avg": dict(objective=Hinge(lam=1e-2), curvature=Identity(),
                               schedule=Fixed(4), step=PegasosStep(), projection=L2Ball(),
                               average=True),
        "hinge_intercept_avg10": dict(objective=Hinge(lam=5e-2), curvature=Identity(),
                                      schedule=Fixed(3), step=Decaying(eps0=0.5, T0=10),
                                      projection=L2Ball(), fit_intercept=True, average=10),
        "logloss_invsqrt": dict(objective=LogLoss(lam=1e-3), curvature=Identity(),
                                schedule=Fixed(2), step=InverseSqrt(eps0=0.5)),
        "sqhinge_linear_batches": dict(objective=SquaredHinge(lam=1e-3), curvature=Identity(),
                                       schedule=Linear(b1=1, gamma=0.5, cap=20),
                                       step=Decaying(eps0=0.05, T0=10), average=True),
        "folding_constant_step": dict(objective=LogLoss(lam=1.0), curvature=Identity(),
                                      schedule=Fixed(2), step=Constant(eps=0.9),
                                      projection=L2Ball(radius=0.5), average=True),
        "full_batch_bulk_norm": dict(objective=SquaredHinge(lam=1e-2), curvature=Identity(),
                                     schedule=Full(), step=Constant(eps=0.5),
                                     sampling="shuffle", average=True, fit_intercept=True),
        "ball_weighted": dict(objective=Hinge(lam=1e-3), curvature=Identity(),
                              schedule=Fixed(2), step=InverseSqrt(eps0=1.0),
                              projection=L2Ball(radius=0.7), sampling="weighted"),
    }


def _solve(config: dict[str, Any], X: Any, y: np.ndarray, sw: np.ndarray | None, n_iter: int,
           split: int = 0) -> tuple[list[np.ndarray], Any]:
    """Run ``n_iter`` iterations on the scaled path (``split``: checkpoint after that many,
    pickle, restore into a new solver and continue); the iterates at the snapshots and the
    result."""
    from sqnopt import Solver

    out: dict[int, np.ndarray] = {}

    def keep(info: Any) -> None:
        if info.iteration in SNAPSHOTS:
            out[info.iteration] = np.array(info.w)

    def solver(max_iter: int) -> Any:
        return Solver(max_iter=max_iter, report_every=1, path="scaled", random_state=7,
                      callback=keep, **config)

    if split:
        s = solver(split)
        st = s.init_state(X, y, sw)
        s.run(st)
        ck = pickle.loads(pickle.dumps(st.checkpoint()))
        s = solver(n_iter)
        st = s.restore(ck, X, y, sw)
    else:
        s = solver(n_iter)
        st = s.init_state(X, y, sw)
    assert type(st.loop).__name__ == "ScaledLoop"
    res = s.run(st)
    return [out[k] for k in SNAPSHOTS] + [np.array(res.w)], res


def split_problem(name: str) -> tuple[dict[str, Any], Any, np.ndarray, np.ndarray]:
    """The configuration and data of the ``{name}/split`` run."""
    k = list(_configs()).index(name)
    X, y = _data(120, 40, 0.2, seed=k)
    sw = np.random.default_rng(3).uniform(0.2, 2.0, size=y.shape[0])
    return _configs()[name], sp.csr_matrix(X), y, sw


def continue_from_file(path: Path) -> tuple[list[np.ndarray], Any]:
    """Restore the checkpoint file ``path`` (``SPLIT`` iterations of ``CHECKPOINT_RUN``'s split
    run) and run the split run's remaining 100 iterations: the last iterate and the result."""
    from sqnopt import Solver
    from sqnopt.checkpoint import read_checkpoint_file

    config, X, y, sw = split_problem(CHECKPOINT_RUN)
    s = Solver(max_iter=100, report_every=1, path="scaled", random_state=7, **config)
    st = s.restore(read_checkpoint_file(path), X, y, sw)
    assert type(st.loop).__name__ == "ScaledLoop"
    res = s.run(st)
    return [np.array(res.w)], res


def write_checkpoint(path: Path) -> None:
    from sqnopt import Solver

    config, X, y, sw = split_problem(CHECKPOINT_RUN)
    s = Solver(max_iter=SPLIT, report_every=1, path="scaled", random_state=7, **config)
    st = s.init_state(X, y, sw)
    s.run(st)
    st.checkpoint().save(path)


def runs() -> Iterator[tuple[str, Callable[[], tuple[list[np.ndarray], Any]]]]:
    """The recorded runs: every configuration on CSR (float64 and float32, with sample
    weights) and dense float64 rows for 150 iterations, one split through a pickled
    checkpoint (40 iterations, then 100 more), and Pegasos on 20,000 features for 4,000 iterations with and without
    averaging (folds of the scale, the prefetch stages)."""
    configs = _configs()
    for k, (name, config) in enumerate(configs.items()):
        X, y = _data(120, 40, 0.2, seed=k)
        sw = np.random.default_rng(3).uniform(0.2, 2.0, size=y.shape[0])
        for fmt, dtype in (("csr", np.float64), ("csr", np.float32), ("dense", np.float64)):
            Xc = np.ascontiguousarray(X, dtype=dtype)
            Xf = sp.csr_matrix(Xc) if fmt == "csr" else Xc
            yield (f"{name}/{fmt}/{np.dtype(dtype).name}",
                   lambda c=config, Xf=Xf, y=y, sw=sw: _solve(c, Xf, y, sw, 150))
        yield (f"{name}/split", lambda c=config, X=X, y=y, sw=sw: _solve(
            c, sp.csr_matrix(X), y, sw, 100, split=40))
    rng = np.random.default_rng(11)
    Xb = sp.random(3000, 20_000, density=1e-3, format="csr", random_state=rng)
    yb = np.where(rng.random(3000) < 0.5, 1.0, -1.0)
    for avg in (False, True):
        from sqnopt import Hinge, Identity, L2Ball, PegasosStep, Fixed

        config = dict(objective=Hinge(lam=1e-4), curvature=Identity(), schedule=Fixed(1),
                      step=PegasosStep(), projection=L2Ball(), average=avg)
        yield (f"pegasos_20k/avg={avg}",
               lambda c=config: _solve(c, Xb, yb, None, 4000))


def flatten(name: str, ws: list[np.ndarray], res: Any) -> dict[str, np.ndarray]:
    """The arrays recorded for one run; an iterate of more than ``MAX_STORED`` entries is kept
    as every ``STRIDE``-th entry and the SHA-256 digest of all its bytes (the record stays
    small, the comparison exact)."""
    out: dict[str, np.ndarray] = {}
    for k, w in zip(SNAPSHOTS + ("last",), ws):
        w = np.ascontiguousarray(w, dtype=np.float64)
        if w.size > MAX_STORED:
            out[f"{name}/w{k}"] = w[::STRIDE]
            out[f"{name}/w{k}_sha256"] = np.array(hashlib.sha256(w.tobytes()).hexdigest())
        else:
            out[f"{name}/w{k}"] = w
    out[f"{name}/counters"] = np.array([getattr(res, a) for a in COUNTERS], dtype=np.int64)
    out[f"{name}/fun"] = np.array([res.fun])
    return out


def main() -> None:
    import sqnopt

    path = Path(sys.argv[1]) if len(sys.argv) > 1 else RECORD
    arrays: dict[str, np.ndarray] = {}
    for name, run in runs():
        arrays.update(flatten(name, *run()))
    np.savez_compressed(path, **arrays)
    ck = path.with_name(CHECKPOINT.name)
    write_checkpoint(ck)
    print(f"{len(arrays)} arrays from {sqnopt.__file__} -> {path}; checkpoint -> {ck}")


if __name__ == "__main__":
    main()
