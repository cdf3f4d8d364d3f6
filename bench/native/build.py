"""Build the compiled benchmark baselines of ``bench/native`` in place.

    python bench/native/build.py            # build what is missing or stale
    python bench/native/build.py --force    # rebuild everything

The modules cimport sqnopt's installed ``.pxd`` declarations and include its vector-kernel
header, so they are built against the sqnopt that ``import sqnopt`` finds (an installed one, or
a checkout built in place) with sqnopt's compiler directives and flags. They are not part of the
sqnopt wheel: only the benchmarks and their tests use them (:func:`bench.native.load` builds on
demand).
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODULES = ("_baseline", "_floor", "_sag", "_forkjoin")
#: Extra compiler and linker flags of a module (``_forkjoin`` times an OpenMP region: it needs
#: the compiler's OpenMP; a compiler without it builds the module with serial loops, which
#: ``_forkjoin.openmp()`` reports).
FLAGS = {"_forkjoin": [] if sys.platform == "win32" else ["-fopenmp"]}


def _sqnopt_dir() -> Path:
    import sqnopt

    return Path(sqnopt.__file__).resolve().parent


def _built(name: str) -> Path:
    """The file this interpreter imports (a build for another Python version does not count)."""
    return HERE / f"{name}{importlib.machinery.EXTENSION_SUFFIXES[0]}"


def _stamp(name: str) -> Path:
    """Names the sqnopt a build was made against (an installed one and a checkout differ)."""
    return _built(name).with_name(_built(name).name + ".built-against")


def stale(name: str) -> bool:
    """Missing, built against another sqnopt, or older than its source or than the sqnopt build
    it cimports from."""
    built, stamp = _built(name), _stamp(name)
    if not built.exists() or not stamp.exists():
        return True
    if stamp.read_text(encoding="utf-8") != str(_sqnopt_dir()):
        return True
    mtime = built.stat().st_mtime
    deps = [HERE / f"{name}.pyx", *_sqnopt_dir().rglob("*.pxd"), *_sqnopt_dir().rglob("*.so"),
            *_sqnopt_dir().rglob("*.pyd")]
    return any(p.stat().st_mtime > mtime for p in deps if p.exists())


def _flags(name: str) -> list[str]:
    """The module's OpenMP flag if the compiler takes it (else none: serial loops)."""
    flags = FLAGS.get(name, [])
    if not flags:
        return []
    import shutil
    import subprocess

    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return []
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "t.c"
        src.write_text("#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n")
        ok = subprocess.run([cc, *flags, str(src), "-o", str(Path(tmp) / "t")],
                            capture_output=True).returncode == 0
    return flags if ok else []


def build(force: bool = False, quiet: bool = False) -> list[str]:
    """Build the stale modules (all with ``force``); returns the names built."""
    names = [n for n in MODULES if force or stale(n)]
    if not names:
        return []
    import numpy as np
    from Cython.Build import cythonize
    from setuptools import Extension
    from setuptools.dist import Distribution

    sys.path.insert(0, str(HERE.parent.parent))
    try:  # sqnopt's directives and flags, from its setup.py when this is a checkout
        from setup import COMPILER_DIRECTIVES, DEFINE_MACROS, EXTRA_COMPILE_ARGS  # type: ignore
    except ImportError:
        COMPILER_DIRECTIVES = {"language_level": 3, "boundscheck": False, "wraparound": False,
                               "cdivision": True}
        DEFINE_MACROS = [("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")]
        EXTRA_COMPILE_ARGS = [] if sys.platform == "win32" else ["-O3", "-ffp-contract=off"]
    finally:
        sys.path.pop(0)
    pkg = _sqnopt_dir()
    exts = [Extension(n, [str(HERE / f"{n}.pyx")], include_dirs=[np.get_include(), str(pkg)],
                      define_macros=DEFINE_MACROS,
                      extra_compile_args=EXTRA_COMPILE_ARGS + _flags(n),
                      extra_link_args=_flags(n))
            for n in names]
    tic = time.perf_counter()
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        modules = cythonize(exts, compiler_directives=COMPILER_DIRECTIVES, quiet=True,
                            include_path=[str(pkg.parent)], build_dir=tmp,
                            nthreads=min(len(exts), os.cpu_count() or 1))
        dist = Distribution({"ext_modules": modules, "script_name": "build.py"})
        cmd = dist.get_command_obj("build_ext")
        cmd.inplace = False
        cmd.build_lib = str(HERE)
        cmd.build_temp = tmp
        cmd.parallel = os.cpu_count() or 1
        try:
            os.chdir(tmp)
            cmd.ensure_finalized()
            cmd.run()
        finally:
            os.chdir(cwd)
    for n in names:
        _stamp(n).write_text(str(pkg), encoding="utf-8")
    if not quiet:
        print(f"bench/native: built {', '.join(names)} in {time.perf_counter() - tic:.1f} s "
              f"against sqnopt at {pkg}")
    return names


if __name__ == "__main__":
    build(force="--force" in sys.argv[1:])
