"""``python -m sklearn_smallfair``: the ``smallfair`` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
