"""`python -m mbutils`: the command line, run as a module."""

import sys

from mbutils.cli import main

sys.exit(main(prog="python -m mbutils"))
