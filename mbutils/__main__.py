import sys

from mbutils.cli import main

sys.exit(main(prog="python -m mbutils"))
