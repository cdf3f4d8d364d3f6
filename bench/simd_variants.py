"""Speed of each vector-kernel variant (``sqnopt/_simd.h``: AVX-512F, AVX2, SSE2 baseline) on
the per-iteration benchmarks of ``bench/test_core.py`` and ``bench/test_curvature.py``.

    python bench/simd_variants.py [--rounds 3] [--trees . /tmp/old] [--variants avx2 ...]
    python bench/simd_variants.py --crossover 300 400 600 800 1000   # oBFGS fused vs BLAS path

A CPU runs every variant up to the best it has, so one machine measures them all: each
(tree, variant) runs in its own process with ``SQNOPT_SIMD`` set, and with OpenBLAS pinned to the
kernels of the same instruction set (``OPENBLAS_CORETYPE`` Haswell for AVX2, Nehalem for the
baseline), so that the BLAS/LAPACK baselines and paths the benchmarks compare with are those a
machine of that kind would run. The contenders alternate over the rounds; each figure is the
minimum over rounds (µs per iteration). ``--trees`` compares built checkouts (for a before/after;
an older tree ignores ``SQNOPT_SIMD`` if it predates it -- see its header for what it runs).
``--crossover N ...`` instead times one oBFGS iteration at each dimension on both storage paths
(fused one-pass kernel, BLAS ``dsyr2`` + 2 ``dsymv``), interleaved, for each variant: where the
fused kernel starts to win is ``FUSED_MIN_DIM`` of that variant.
Results depend on the machine; docs/benchmarks.md ("Vector-kernel variants") has a run.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

CORETYPE = {"baseline": "Nehalem", "avx2": "Haswell", "avx512f": ""}
CASES = [  # (label, benchmark file, -k expression, regex on its printed line)
    ("SGD compiled n=100", "bench/test_core.py", "ratios and 100",
     r"^\[n=100\] per iteration: compiled ([\d.]+) us"),
    ("SGD bare n=100", "bench/test_core.py", "ratios and 100",
     r"^\[n=100\] .* bare Cython ([\d.]+) us"),
    ("oLBFGS n=100", "bench/test_curvature.py", "olbfgs_iteration",
     r"^\[oLBFGS n=100\] ([\d.]+) us"),
    ("oLBFGS n=1000", "bench/test_curvature.py", "olbfgs_iteration",
     r"^\[oLBFGS n=1000\] ([\d.]+) us"),
    ("RES n=100", "bench/test_curvature.py", "res_iteration", r"^\[RES n=100\] ([\d.]+) us"),
    ("oBFGS n=100", "bench/test_curvature.py", "obfgs", r"^\[oBFGS n=100\] ([\d.]+) us"),
    ("oBFGS n=1000", "bench/test_curvature.py", "obfgs", r"^\[oBFGS n=1000\] ([\d.]+) us"),
    ("oBFGS n=1000 this / other path", "bench/test_curvature.py", "obfgs",
     r"^\[oBFGS n=1000\] .*vs the other path: ([\d.]+)"),
]


def variant_env(tree: Path, variant: str) -> dict[str, str]:
    """The environment of a subprocess that runs ``tree``'s sqnopt capped at ``variant``, with
    OpenBLAS on the kernels of the same instruction set."""
    env = dict(os.environ, SQNOPT_SIMD=variant, OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=str(tree))
    env.pop("OPENBLAS_CORETYPE", None)
    if CORETYPE[variant]:
        env["OPENBLAS_CORETYPE"] = CORETYPE[variant]
    return env


def run(tree: Path, variant: str) -> tuple[str, dict[str, float]]:
    """The variant the tree reports (``n/a`` if it predates ``simd_variant``) and the figures."""
    env = variant_env(tree, variant)
    out: dict[str, float] = {}
    for path in sorted({c[1] for c in CASES}):
        ks = " or ".join(sorted({f"({c[2]})" for c in CASES if c[1] == path}))
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", path, "--benchmark-only", "-s", "-q",
             "-p", "no:cacheprovider", "-k", ks],
            cwd=tree, env=env, capture_output=True, text=True, timeout=1800, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"{tree} {variant} {path}:\n{proc.stdout[-3000:]}{proc.stderr}")
        for label, p, _, rx in CASES:
            if p != path:
                continue
            for line in proc.stdout.splitlines():
                m = re.search(rx, line.strip())
                if m:
                    out[label] = float(m.group(1))
    probe = subprocess.run(
        [sys.executable, "-c", "from sqnopt._simd_info import simd_variant; print(simd_variant())"],
        cwd=tree, env=env, capture_output=True, text=True, check=False)
    return (probe.stdout.strip() if probe.returncode == 0 else "n/a"), out


CROSSOVER = r'''
import sys
sys.path.insert(0, "bench")
from sqnopt._simd_info import simd_variant
from sqnopt.curvature import BFGSKernel
from test_curvature import _secant_workload, interleaved
for n in map(int, sys.argv[1:]):
    k = max(6, int(2e7 / n**2))
    fused, blas = BFGSKernel(n, fused=True), BFGSKernel(n, fused=False)
    _, _, it = _secant_workload(fused, n, k)
    it(fused)
    it(blas)
    tf, tb = interleaved(lambda: it(fused), lambda: it(blas), rounds=9)
    print(f"{simd_variant():9s} n={n:5d}: fused {tf / k * 1e6:8.1f} us, BLAS {tb / k * 1e6:8.1f} us,"
          f" fused/BLAS {tf / tb:.2f}", flush=True)
'''


def crossover(tree: Path, variant: str, dims: list[int]) -> None:
    subprocess.run([sys.executable, "-c", CROSSOVER, *map(str, dims)], cwd=tree,
                   env=variant_env(tree, variant), check=True, timeout=3600)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--trees", nargs="+", default=["."])
    ap.add_argument("--variants", nargs="+", default=["baseline", "avx2", "avx512f"],
                    choices=["baseline", "avx2", "avx512f"])
    ap.add_argument("--crossover", nargs="+", type=int, metavar="N",
                    help="time oBFGS's two storage paths at these dimensions instead")
    args = ap.parse_args()
    trees = [Path(t).resolve() for t in args.trees]
    if args.crossover:
        for tree in trees:
            for variant in args.variants:
                crossover(tree, variant, args.crossover)
        return
    best: dict[tuple[str, str], dict[str, float]] = {}
    seen: dict[tuple[str, str], str] = {}
    for r in range(args.rounds):
        for tree in trees:
            for variant in args.variants:
                key = (str(tree), variant)
                seen[key], res = run(tree, variant)
                cur = best.setdefault(key, {})
                for label, value in res.items():
                    cur[label] = min(cur.get(label, float("inf")), value)
                print(f"round {r + 1}: {tree} {variant} done", file=sys.stderr, flush=True)
    keys = list(best)
    head = "case".ljust(34) + "".join(
        f"{Path(k[0]).name or k[0]}:{k[1]} ({seen[k]})".rjust(30) for k in keys)
    print(head)
    for label, *_ in CASES:
        print(label.ljust(34) + "".join(f"{best[k].get(label, float('nan')):30.2f}" for k in keys))
    print("(µs per iteration, minimum over rounds; the last row is a ratio, the default storage "
          "path over the other (fused one-pass kernel vs BLAS dsyr2 + 2 dsymv): < 1 means the "
          "default is the faster)")


if __name__ == "__main__":
    main()
