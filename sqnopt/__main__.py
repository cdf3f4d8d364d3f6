import sys

from sqnopt.cli import main

sys.exit(main())
