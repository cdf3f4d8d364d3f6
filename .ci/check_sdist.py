"""Build the sdist and check that it carries every tracked file under ``sqnopt/`` (the Cython
sources, declarations and headers a build from the sdist needs, the stubs and package data).

The sdist is built from a copy of the checkout's files (tracked and untracked-but-not-ignored):
setuptools merges any ``*.egg-info/SOURCES.txt`` left by an earlier build into the sdist's file
list, which would hide a missing ``MANIFEST.in`` rule."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    def git_files(*args: str) -> list[str]:
        return subprocess.run(["git", "ls-files", *args], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.splitlines()

    tracked = git_files("sqnopt")
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "src", Path(tmp) / "dist"
        for name in git_files() + git_files("--others", "--exclude-standard"):
            if (ROOT / name).is_file():
                (src / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, src / name)
        subprocess.run([sys.executable, "setup.py", "-q", "sdist", "-d", str(out)], cwd=src,
                       check=True, capture_output=True)
        (archive,) = out.glob("*.tar.gz")
        with tarfile.open(archive) as tar:
            names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    missing = sorted(set(tracked) - names)
    pyx = [n for n in names if n.endswith(".pyx")]
    print(f"sdist {archive.name}: {len(names)} files, {len(pyx)} .pyx; "
          f"tracked under sqnopt/: {len(tracked)}, missing: {len(missing)}")
    for name in missing:
        print(f"  missing: {name}")
    return 1 if missing or not pyx else 0


if __name__ == "__main__":
    sys.exit(main())
