"""Command line: ``sqnopt demo`` (main job on a built-in generator) and ``sqnopt list``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np


def _cmd_list(args: argparse.Namespace) -> int:
    from sqnopt.interfaces import KINDS
    from sqnopt.registry import get_registry

    reg = get_registry()
    for kind in KINDS:
        print(f"{kind}:")
        for entry in reg.entries(kind):
            params = ", ".join(f"{k}={v!r}" for k, v in entry.parameters().items())
            alias = f" (aliases: {', '.join(entry.aliases)})" if entry.aliases else ""
            print(f"  {entry.name}({params}){alias}  [{entry.source}]")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from sqnopt import Decaying, Fixed, Solver, SquaredHinge
    from sqnopt.datasets import make_boxes

    X, y = make_boxes(args.n_samples, args.n_features, random_state=args.seed)
    solver = Solver(SquaredHinge(lam=1e-4), args.curvature, Fixed(5),
                    Decaying(eps0=2e-2, T0=100), max_samples=args.samples,
                    random_state=args.seed, history_every=max(1, args.samples // 5 // 5))
    res = solver.fit(X, y)
    acc = float(np.mean(np.sign(X @ res.coef) == y))
    print(f"{solver!r}")
    for t, s, f in zip(res.history.iteration, res.history.samples, res.history.objective):
        print(f"  iter {t:6d}  samples {s:7d}  F = {f:.6e}")
    print(f"status: {res.status.value} ({res.message})")
    print(f"F(w) = {res.fun:.6e}   training accuracy = {acc:.4f}   "
          f"solver time = {res.wall_time * 1e3:.1f} ms ({'compiled' if res.compiled else 'python'} loop)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sqnopt", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("list", help="registered components and their parameters")
    p.set_defaults(func=_cmd_list)
    p = sub.add_parser("demo", help="solve the paper-003 synthetic squared-hinge problem")
    p.add_argument("--n-samples", type=int, default=10_000)
    p.add_argument("--n-features", type=int, default=100)
    p.add_argument("--samples", type=int, default=40_000, help="samples to process (Lt)")
    p.add_argument("--curvature", default="identity", help="registered curvature model name")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
