"""mbutils: micro-benchmark experiments, their meta-evaluation, and the book's chapters.

Every user error ends in one message on stderr and exit code 1 (2 for a malformed
command line), never a traceback, and never a half-written output file. An unexpected
failure is a bug: one line says so and where to report it (the traceback with --debug).

The commands live by group, each module with its parsers beside their handlers:
:mod:`~mbutils.cli.experiments` (experiment, mdad, summary, combine), :mod:`~mbutils.cli.bundles`
(validate, data, import, cache), :mod:`~mbutils.cli.micro` (plan, build-micro, score, audit),
:mod:`~mbutils.cli.shipped` (micro), :mod:`~mbutils.cli.example` (example) and
:mod:`~mbutils.cli.chapters` (run-chapter, notebook, book, book-pdf); :mod:`~mbutils.cli.common`
holds the option types and the results files' helpers they share. This module builds the parser
and runs one command.
"""

from __future__ import annotations

import argparse
import errno
import sys
import traceback
from pathlib import Path

from mbutils.base.errors import MbutilsError
from mbutils.base.version import __version__
from mbutils.cli import bundles, chapters, example, experiments, micro, shipped
from mbutils.cli.common import Formatter

REPORT = ("this is a bug in mbutils: please report it on the project's issue tracker with the command "
          "you ran")
DESCRIPTION = __doc__.splitlines()[0]


def program_name() -> str:
    """``mbutils`` when run as the installed script, else how the module is run."""
    return "mbutils" if Path(sys.argv[0]).name == "mbutils" else "python -m mbutils"


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the full traceback of an unexpected error")
    parser = argparse.ArgumentParser(prog=prog or program_name(), description=DESCRIPTION,
                                     formatter_class=Formatter)
    parser.add_argument("--version", action="version", version=f"mbutils {__version__}")
    parser.add_argument("--debug", action="store_true", default=False,
                        help="show the full traceback of an unexpected error")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                title="commands (COMMAND --help for each one's options)")
    # in the order of the commands' list in --help
    experiments.experiment_parser(sub, common)
    experiments.table_parsers(sub, common)
    bundles.validate_parser(sub, common)
    micro.micro_parsers(sub, common)
    shipped.shipped_parser(sub, common)
    example.example_parser(sub, common)
    bundles.data_parser(sub, common)
    bundles.import_parser(sub, common)
    chapters.chapter_parsers(sub, common)
    bundles.cache_parser(sub, common)
    return parser


def _os_message(err: OSError, args) -> str:
    """An operating-system failure (unreadable file, full disk) as one line naming the file.

    A write that fails on a full disk often names no file; the command's --out is then the file
    (or folder) it was writing.
    """
    if getattr(err, "filename", None):
        return f"{err.filename}: {err.strerror or err}"
    out = getattr(args, "out", None)
    if out and err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS):
        return f"{out}: {err.strerror or err} while writing it; nothing was replaced. Free some space or write elsewhere"
    return f"{err.strerror or err}"


class _PrintableStream:
    """A text stream that shows control characters (an ESC in a folder name, say) as escapes.

    Names from the command line and from data files reach messages and tables verbatim; printed raw,
    an escape sequence could recolour or rewrite the terminal, a Unicode line separator forge a line and a
    bidirectional control reorder one. Line breaks, tabs and carriage returns (the progress bar's) pass. Both standard streams of a command go through it.
    """

    _TABLE = {**{c: f"\\x{c:02x}" for c in [*range(0x20), *range(0x7F, 0xA0)] if chr(c) not in "\n\r\t"},
              **{c: f"\\u{c:04x}" for c in [0x2028, 0x2029, 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
                                            *range(0x2066, 0x206A), 0xFEFF]}}

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(text.translate(self._TABLE))

    def __getattr__(self, name):
        return getattr(self._stream, name)


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """Run one command; the exit code is 0, 1 (refused input), 2 (usage), 70 (a bug) or 130."""
    parser = build_parser(prog)
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = map(_PrintableStream, streams)
    try:
        return _run(parser, parser.parse_args(argv))
    finally:
        sys.stdout, sys.stderr = streams


def _run(parser, args) -> int:
    try:
        return args.func(args)
    except MbutilsError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except OSError as err:
        print(f"error: {_os_message(err, args)}", file=sys.stderr)
        return 1
    except Exception as err:  # noqa: BLE001 -- anything else is a bug; say so in one line
        if isinstance(err, RuntimeError) and "home directory" in str(err):  # Path.expanduser on '~nouser/x'
            print("error: a path starts with '~' and a user name this machine does not know; give the full path",
                  file=sys.stderr)
            return 1
        if args.debug:
            traceback.print_exc()
        text = str(err).splitlines()[0][:200] if str(err) else ""
        hint = "" if args.debug else " and the output of the same command with --debug"
        print(f"{parser.prog}: internal error ({type(err).__name__}: {text}); {REPORT}{hint}", file=sys.stderr)
        return 70
