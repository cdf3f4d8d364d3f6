"""The ``sqnopt`` command: ``python -m sqnopt`` and the console script (``main``).

The whole run is guarded from its first statement: the command line's imports (NumPy, SciPy,
the compiled core; ``import sqnopt`` itself loads none of them) happen inside ``main``, so
Ctrl-C while they load ends the run as it does later -- ``sqnopt: interrupted`` and exit
status 130 -- not with a traceback.
"""

import sys


def main() -> int:
    """Run :func:`sqnopt.cli.main` on ``sys.argv``; 130 when interrupted."""
    try:
        from sqnopt.cli import main as run

        return run()
    except KeyboardInterrupt:
        print("\nsqnopt: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
