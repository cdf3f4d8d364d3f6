"""The instruction-set variants of the vector kernels (``sqnopt/_simd.h``) give bit-identical
results: each variant runs in a subprocess (``SQNOPT_SIMD`` caps the variant when the modules
load) on workloads that reach every kernel -- dense float64 / float32 row dots and axpys and the
fused step (SGD), the two-loop recursion (oLBFGS), the fused symmetric pass with folds (oBFGS at
n >= 400), the RES update, Cholesky factor and solve, the scaled iterate's row dots and norms
(Pegasos) -- and the bytes of the results must agree with this process's."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sqnopt._simd_info import VARIANTS, simd_variant
from sqnopt.curvature._bfgs import FUSED_MIN_DIM_BY_VARIANT


def fingerprints() -> dict[str, str]:
    """SHA-256 of the results of each workload (run in this process)."""
    from sqnopt import LBFGS, Decaying, Fixed, Identity, RegularizedBFGS, Solver, SquaredHinge
    from sqnopt.curvature import BFGSKernel
    from sqnopt.datasets import make_boxes
    from sqnopt.interfaces import Problem

    def digest(*arrays: Any) -> str:
        h = hashlib.sha256()
        for a in arrays:
            h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
        return h.hexdigest()

    out: dict[str, str] = {}
    X, y = make_boxes(400, 37, random_state=3)
    for dtype in (np.float64, np.float32):
        res = Solver(SquaredHinge(lam=1e-3), Identity(), Fixed(5), Decaying(3e-2, 100),
                     random_state=0, max_iter=300).fit(X.astype(dtype), y)
        out[f"sgd_{np.dtype(dtype).name}"] = digest(res.w)
    X, y = make_boxes(600, 100, random_state=4)
    res = Solver(SquaredHinge(lam=1e-3), LBFGS(memory=7), Fixed(5), Decaying(2e-2, 100),
                 random_state=0, max_iter=200).fit(X, y)
    out["olbfgs"] = digest(res.w)

    rng = np.random.default_rng(0)
    for name, n, kernel in (
            ("obfgs_fused_419", 419, None),
            ("res_cholesky_60", 60, RegularizedBFGS(delta=1e-3, Gamma=1e-4)),
            ("res_cholesky_37", 37, RegularizedBFGS(delta=1e-3, Gamma=1e-4))):
        if kernel is None:
            kern = BFGSKernel(n, fused=True)
        else:
            kern = kernel.init(Problem(n_samples=10, n_features=n, dim=n, n_blocks=1,
                                       n_params=n, lam=0.0, fit_intercept=False,
                                       capabilities=frozenset()))
        # Hessian diag(a) + u u' applied without BLAS (whose threads could change the rounding)
        a, u = rng.uniform(0.5, 2.0, size=n), rng.normal(size=n) / np.sqrt(n)
        g = rng.normal(size=n)
        d = np.empty(n)
        dirs = []
        for _ in range(11):
            kern.direction(g, d)
            dirs.append(d.copy())
            v = rng.normal(size=n)
            kern.update_pair(v, a * v + u * np.sum(u * v))
            g = g - 0.1 * d
        out[name] = digest(*dirs)

    # the scaled sparse iterate: dense-row dots and the row norms of its projection (float32
    # rows reach sq_dot_f32 and sq_sqnorm_f32)
    import scipy.sparse as sp

    X, y = make_boxes(300, 40, random_state=5)
    for dtype in (np.float64, np.float32):
        for name, data in (("dense", X.astype(dtype)), ("csr", sp.csr_matrix(X.astype(dtype)))):
            res = Solver.pegasos(1e-2, max_iter=400, random_state=0, path="scaled").fit(data, y)
            out[f"pegasos_{name}_{np.dtype(dtype).name}"] = digest(res.w)
    return out


def _env(**extra: str) -> dict[str, str]:
    """The environment of a subprocess that imports the same sqnopt as this process (run it
    outside the checkout, whose uncompiled sqnopt/ would otherwise shadow an installed one)."""
    import sqnopt

    home = str(Path(sqnopt.__file__).resolve().parent.parent)
    path = os.pathsep.join([home, os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH")
                           else [home])
    return dict(os.environ, PYTHONPATH=path, **extra)


_SCRIPT = (
    "import json, sys\n"
    "sys.path.insert(0, {tests!r})\n"
    "from test_simd import fingerprints\n"
    "from sqnopt._simd_info import simd_variant\n"
    "from sqnopt.curvature._bfgs import FUSED_MIN_DIM\n"
    "print(json.dumps({{'variant': simd_variant(), 'fused_min_dim': FUSED_MIN_DIM,\n"
    "                  'fingerprints': fingerprints()}}))\n"
)


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_gives_the_same_bits(variant: str, tmp_path: Any) -> None:
    env = _env(SQNOPT_SIMD=variant, OPENBLAS_NUM_THREADS="1")
    script = _SCRIPT.format(tests=os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300, check=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    # the cap lowers the variant, never raises it above what the CPU has
    assert VARIANTS.index(got["variant"]) <= VARIANTS.index(variant)
    if variant == "baseline":
        assert got["variant"] == "baseline"
    # oBFGS's switch to the fused pass follows the variant's measured crossover
    assert got["fused_min_dim"] == FUSED_MIN_DIM_BY_VARIANT[got["variant"]]
    assert got["fingerprints"] == fingerprints(), (
        f"variant {got['variant']} differs from {simd_variant()} (this process)")


_C_PROGRAM = r"""
#include "_simd.h"
#include <stdio.h>

static double a[1200], b[1200], c[1200], M[160 * 160], F[160 * 160], PA[3 * 160], PB[3 * 160];
static float f[1200];

static void show(const char* name, const double* x, int n)
{
    int i;
    printf("%s", name);
    for (i = 0; i < n; i++)
        printf(" %a", x[i]);
    printf("\n");
}

int main(void)
{
    int i, j, n;
    double r[8], rho[4], alpha[4], y1[160], y2[160], out[160];
    for (i = 0; i < 1200; i++) {
        a[i] = 1.0 / (i + 1.5);
        b[i] = (i % 7) - 3.3 + 1e-3 * i;
        c[i] = 0.25 * i - 100.0;
        f[i] = (float) (0.1 * i - 7.0);
    }
    for (n = 1; n <= 1200; n += 37) {
        for (i = 0; i < n; i++)
            c[i] = 0.25 * i - 100.0;
        r[0] = sq_dot(a, b, n);
        r[1] = sq_dot_f32(f, b, n);
        sq_axpy(0.3, a, c, n);
        sq_axpy_f32(-0.7, f, c, n);
        r[2] = sq_axpy_dot(1.25, b, c, a, n);
        r[3] = sq_step_allfinite(a, 0.01, b, c, n);
        r[4] = c[n - 1];
        r[5] = sq_axpy_sqnorm(-0.45, b, c, n);
        r[6] = c[n - 1];
        r[7] = sq_dot(b, b, n) - r[5];
        show("vec", r, 8);
        if (r[7] != 0.0) {                  /* the fused norm is sq_dot's, bit for bit */
            printf("sq_axpy_sqnorm differs from sq_dot at n = %d\n", n);
            return 1;
        }
    }
    for (i = 0; i < 4; i++)
        rho[i] = 1.0 / (1.0 + i);
    sq_two_loop(150, a, b, 160, 4, 3, 1, rho, alpha, 0.7, c, out);
    show("two_loop", out, 150);
    for (n = 37; n <= 160; n += 123) {
        for (i = 0; i < n; i++)
            for (j = 0; j < n; j++)
                M[i * n + j] = (i == j ? 4.0 : 0.0) + 1.0 / (1.0 + i + j);
        for (i = 0; i < 3 * n; i++) {
            PA[i] = 1e-2 * a[i];
            PB[i] = -1e-2 * b[i] / 7.0;
        }
        sq_symv2_merge_upper(n, M, n, 3, PA, PB, n, a, b, y1, y2);
        show("symv2_y1", y1, n);
        show("symv2_y2", y2, n);
        sq_symv2_merge_upper(n, M, n, 0, NULL, NULL, n, b, b, y1, y2);
        show("symv2_read", y1, n);
        sq_syr2_shift_copy_upper(n, M, n, 0.5, a, -1e-4, b, 1e-3, F);
        printf("potrf %d\n", sq_potrf_upper(n, F, n));
        for (i = 0; i < n; i++)
            out[i] = b[i];
        sq_potrs_upper(n, F, n, out);
        show("potrs", out, n);
    }
    return 0;
}
"""


def _compiler(which: str) -> list[str] | None:
    """``"python"``: the compiler Python was built with (the one that builds sqnopt); else a
    compiler by name, if installed."""
    import shlex
    import shutil
    import sysconfig

    cc = (sysconfig.get_config_var("CC") or "cc") if which == "python" else which
    cmd = shlex.split(cc)
    return cmd if shutil.which(cmd[0]) else None


@pytest.mark.parametrize("which", ["python", "clang"])
def test_kernels_agree_bit_for_bit_in_c(which: str, tmp_path: Any) -> None:
    """Every kernel of the header, compiled into a C program: each variant (SQNOPT_SIMD) and the
    portable representation of other compilers (SQ_PORTABLE_ONLY) print the same bits; with
    Clang (only the baseline variant: the per-variant pragmas are GCC's) too."""
    import sqnopt

    cc = _compiler(which)
    if cc is None:
        pytest.skip(f"no {which} compiler")
    include = str(Path(sqnopt.__file__).resolve().parent)
    src = tmp_path / "kernels.c"
    src.write_text(_C_PROGRAM)

    def build(compiler: list[str], label: str, *defines: str) -> Path:
        exe = tmp_path / label
        subprocess.run([*compiler, "-O2", "-ffp-contract=off", f"-I{include}", *defines,
                        str(src), "-o", str(exe), "-lm"], check=True, capture_output=True,
                       timeout=300)
        return exe

    def output(exe: Path, variant: str) -> str:
        return subprocess.run([str(exe)], env=dict(os.environ, SQNOPT_SIMD=variant),
                              capture_output=True, text=True, timeout=60, check=True).stdout

    dispatch = build(cc, "dispatch")
    outputs = {f"dispatch/{v}": output(dispatch, v) for v in VARIANTS}
    outputs["portable/baseline"] = output(build(cc, "portable", "-DSQ_PORTABLE_ONLY"), "baseline")
    ref_cc = _compiler("python")
    if which != "python" and ref_cc is not None:    # against the reference compiler's bits
        outputs["reference/baseline"] = output(build(ref_cc, "reference"), "baseline")
    reference = outputs["dispatch/baseline"]
    assert reference.count("\n") > 40 and "potrf 0" in reference
    for key, text in outputs.items():
        assert text == reference, f"{key} differs from dispatch/baseline"


def test_unknown_variant_name_warns_and_is_ignored(tmp_path: Any) -> None:
    env = _env(SQNOPT_SIMD="avx-2")
    proc = subprocess.run([sys.executable, "-c", "import sqnopt; print(sqnopt.simd_variant())"],
                          env=env, capture_output=True, text=True, timeout=120, check=True,
                          cwd=tmp_path)
    variant = proc.stdout.strip()                       # ignored: the CPU's best
    assert variant in VARIANTS
    assert "SQNOPT_SIMD='avx-2' is not one of baseline, avx2, avx512f" in proc.stderr
    assert f"the vector kernels run {variant!r}" in proc.stderr
