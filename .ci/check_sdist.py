"""Build the sdists of sqnopt and of the example plugins and check that each carries every
tracked file of its package (the Cython sources, declarations and headers a build from the sdist
needs, the stubs and package data).

Each sdist is built from a copy of the project's files (tracked, and untracked but not ignored):
setuptools merges any ``*.egg-info/SOURCES.txt`` left by an earlier build into the sdist's file
list, which would hide a missing ``MANIFEST.in`` rule. The plugins' builds cimport the installed
sqnopt, so run this where sqnopt is importable.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECTS = [(".", "sqnopt"), ("plugins/sqnopt-bbscale", "sqnopt_bbscale"),
            ("plugins/sqnopt-extras", "sqnopt_extras")]


def git_files(where: Path, *args: str) -> list[str]:
    return subprocess.run(["git", "ls-files", *args], cwd=where, capture_output=True,
                          text=True, check=True).stdout.splitlines()


def check(project: str, package: str) -> bool:
    where = ROOT / project
    tracked = git_files(where, package)
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "src", Path(tmp) / "dist"
        for name in git_files(where) + git_files(where, "--others", "--exclude-standard"):
            if (where / name).is_file():
                (src / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(where / name, src / name)
        built = subprocess.run([sys.executable, "setup.py", "-q", "sdist", "-d", str(out)],
                               cwd=src, capture_output=True, text=True)
        if built.returncode != 0:
            print(f"sdist of {project} failed (exit {built.returncode}); its output:\n"
                  f"{built.stdout}{built.stderr}")
            return False
        (archive,) = out.glob("*.tar.gz")
        with tarfile.open(archive) as tar:
            names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    missing = sorted(set(tracked) - names)
    pyx = [n for n in names if n.endswith(".pyx")]
    print(f"sdist {archive.name}: {len(names)} files, {len(pyx)} .pyx; tracked under "
          f"{package}/: {len(tracked)}, missing: {len(missing)}")
    for name in missing:
        print(f"  missing: {name}")
    return not missing and bool(pyx)


def main() -> int:
    results = [check(project, package) for project, package in PROJECTS]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
