"""``python -m bloomedu``: the command line of :mod:`bloomedu.cli` (e.g. ``size``)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
