"""What the commands share: option types checked at the boundary, common options, and results files in and out."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pandas as pd

from mbutils.base.errors import MbutilsError, ResultsError
from mbutils.base.folders import check_not_input
from mbutils.base.provenance import parquet_metadata, read_parquet, read_sidecar, sidecar_path, sidecar_text
from mbutils.base.tables import csv_safe, read_csv_table
from mbutils.base.validation import check_int, check_names, check_number, check_workers
from mbutils.base.vocabulary import REMOVED_IN
from mbutils.data.bundle import find_bundle
from mbutils.evaluate.completeness import check_complete

MISSING_CHOICES = {"error": "error", "drop-models": "drop_models", "drop-items": "drop_items"}
BIG = 10**6          # the largest count (models, sources, sizes) any option accepts
MAX_RUNS = 100_000
MAX_SEED = 2**63 - 1


# -- option values: checked at the boundary, with the validation helpers' wording --------------------

def as_number(text: str):
    """The text as an int or float when it is one, else the text (so the check names it)."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _option(check, what: str, **bounds):
    """An argparse type that parses a number and range-checks it; failures are usage errors (exit 2)."""
    def parse(text: str):
        try:
            return check(as_number(text.strip()), what, **bounds)
        except MbutilsError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    parse.__name__ = what
    return parse


def count(what: str, low: int = 1, high: int = BIG):
    return _option(check_int, what, low=low, high=high)


def number(what: str, **bounds):
    return _option(check_number, what, **bounds)


def workers(text: str) -> int:
    """An argparse type: a number of workers (``-1``: every core)."""
    try:
        return check_workers(as_number(text.strip()), "jobs")
    except MbutilsError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def size_list(text: str) -> list[int]:
    """An argparse type: comma-separated sizes, at least one, each a positive count."""
    parse = count("size")
    sizes = [parse(x) for x in text.split(",") if x.strip()]
    if not sizes:
        raise argparse.ArgumentTypeError("sizes must name at least one, not an empty list")
    return sizes


def names(what: str):
    """An argparse type for a comma-separated list of names, each checked."""
    def parse(text: str) -> list[str]:
        try:
            return check_names(text.split(","), what)
        except MbutilsError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    parse.__name__ = what
    return parse


THRESHOLD = number("threshold", low=0, high=1, low_open=True)
BIN_WIDTH = number("bin width (points)", low=0.01, high=100)
SEED = count("seed", low=0, high=MAX_SEED)
BOOTSTRAP = count("bootstrap resamples", high=100_000)


# -- options several commands take ---------------------------------------------------------------

class Formatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Every option's help states its default once: argparse's ``(default: X)`` is added unless the
    help says it already (the word "default"), or there is none to state (``None``: the option is
    simply not given). Descriptions keep their line breaks."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.default is None or re.search(r"\bdefault\b", text, re.IGNORECASE):
            return text
        return super()._get_help_string(action)


class _RetiredOption(argparse.Action):
    """A retired option name (see mbutils.base.vocabulary): still works for one release, and says so."""

    def __init__(self, option_strings, dest, new: str = "", **kwargs):
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"warning: {option_string} is renamed {self.new}; the old name stops working in mbutils {REMOVED_IN}",
              file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_retired_option(p, old: str, new: str, **kwargs) -> None:
    """Accept ``old`` as ``new`` (same type and destination), hidden from --help, with a warning on use."""
    p.add_argument(old, action=_RetiredOption, new=new, dest=new.lstrip("-").replace("-", "_"),
                   help=argparse.SUPPRESS, **kwargs)


def add_protocol(p, what: str = "the experiment") -> None:
    """The protocol's options: runs, sources, targets and the root seed."""
    p.add_argument("--runs", type=count("runs", high=MAX_RUNS), default=50, help=f"runs of {what}")
    p.add_argument("--sources", type=count("sources"), default=300, help="source models per run")
    p.add_argument("--targets", type=count("targets", low=2), default=50, help="target models per run")
    p.add_argument("--seed", type=SEED, default=0, help="root seed of every random draw")


def add_missing(p) -> None:
    """The ``--missing`` option: what to do with models or items that have empty cells."""
    p.add_argument("--missing", choices=list(MISSING_CHOICES), default="error",
                   help="what to do with models/items that have missing cells")


def add_mdad_options(p, ci_choices: list[str], ci_default: str) -> None:
    """The options of the MDAD and its interval: threshold, bin width, tie rule, method, interval and resamples."""
    p.add_argument("--threshold", type=THRESHOLD, default=0.8, help="agreement the MDAD must reach, in (0, 1]")
    p.add_argument("--bin-width", type=BIN_WIDTH, default=0.5, help="gap bin width in accuracy points (0.01-100)")
    p.add_argument("--tie-rule", choices=["paper", "exclude"], default="paper",
                   help="pairs tied on the truth: scored as the paper does, or left out")
    p.add_argument("--method", choices=["monotone", "first"], default="monotone",
                   help="a non-decreasing fit of the agreement curve (the book's MDAD) or its first bin crossing "
                   "the threshold (the paper's; with --ci pairs, the paper's table)")
    p.add_argument("--ci", choices=ci_choices, default=ci_default, help="how the confidence interval is resampled")
    p.add_argument("--bootstrap", type=BOOTSTRAP, default=1000, help="bootstrap resamples (1-100000)")


# -- files in and out ----------------------------------------------------------------------------

def _read_results(path: str) -> pd.DataFrame:
    """A results table (Parquet with its provenance, or CSV); every failure is one message."""
    from mbutils.evaluate.metrics import RESULT_TEXT_COLUMNS

    file = Path(path)
    if not file.exists():
        raise ResultsError(f"{path}: no such results file (make one with `python -m mbutils experiment`)")
    if not file.is_file():
        raise ResultsError(f"{path} is {'a folder' if file.is_dir() else 'not a regular file'}; "
                           "give a results file (.parquet or .csv)")
    try:
        if file.suffix == ".csv":
            return read_sidecar(read_csv_table(file, RESULT_TEXT_COLUMNS), file)
        return read_parquet(file)
    except ResultsError:
        raise
    except PermissionError:
        raise ResultsError(f"{path}: permission denied; the results file cannot be read") from None
    except Exception as err:  # any reader failure means the file is not a results table
        raise ResultsError(f"{path}: cannot read it as a results table ({type(err).__name__}: "
                           f"{str(err).splitlines()[0][:200] if str(err) else ''})") from None


def whole_results(path: str, args) -> pd.DataFrame:
    """A results table to score: refused when runs or sizes are missing, unless --allow-partial (then
    a note says so on stderr, and in a markdown table's output)."""
    from mbutils.evaluate.metrics import check_results

    table = _read_results(path)
    try:
        check_results(table)
    except ResultsError as err:
        raise ResultsError(f"{path}: {err}") from None
    note = check_complete(table, path, getattr(args, "allow_partial", False))
    if note:
        print(f"note: {note}", file=sys.stderr)
        args.partial_note = note
    return table


def say_partial(args) -> None:
    """The partial-results note in a markdown output too (a CSV output stays a plain table)."""
    note = getattr(args, "partial_note", "")
    if note and getattr(args, "format", "") == "markdown":
        sys.stdout.write(f"\n> Note: {note}.\n")


def bundle_folder_of(data: str) -> Path | None:
    """The folder a --data value names, when it names one (synthetic stand-ins have none)."""
    try:
        return Path(find_bundle(data)).resolve()
    except MbutilsError:
        return None


def refuse_existing(path: Path, force: bool, what: str = "--out") -> None:
    """An existing output is replaced only when the command line says so."""
    if path.exists() and not force:
        raise MbutilsError(f"{path} exists; pass --force to replace it, or give another {what}")


def check_results_out(out: str, inputs=(), force: bool = False) -> Path:
    """Refuse an unusable output path before any work is done (one of the inputs included)."""
    path = Path(out)
    check_not_input(path, inputs, ResultsError)
    if path.suffix not in (".parquet", ".pq", ".csv"):
        raise ResultsError(f"{out}: output must end in .parquet or .csv")
    if path.is_dir():
        raise ResultsError(f"{out} is a folder; give a file name ending in .parquet or .csv")
    if path.exists() and not path.is_file():
        raise ResultsError(f"{out} exists and is not a regular file; give another output file")
    if not path.parent.is_dir():
        raise ResultsError(f"{out}: the folder {path.parent} does not exist")
    refuse_existing(path, force)
    if path.suffix == ".csv":
        check_not_input(sidecar_path(path), inputs, ResultsError)
        refuse_existing(sidecar_path(path), force, "--out (a CSV keeps its provenance in that file beside it)")
    return path


def write_table(table: pd.DataFrame, out: str, force: bool) -> None:
    """Write the whole table or nothing; say so when an existing file is replaced (``force``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mbutils.base.cache import atomic_write

    path = check_results_out(out, force=force)
    replacing = path.exists()

    def parquet(tmp: Path) -> None:
        arrow = pa.Table.from_pandas(table, preserve_index=False)
        pq.write_table(arrow.replace_schema_metadata({**(arrow.schema.metadata or {}),
                                                      **parquet_metadata(table)}), tmp)

    write = (lambda tmp: csv_safe(table).to_csv(tmp, index=False)) if path.suffix == ".csv" else parquet
    side = sidecar_path(path)
    try:
        if path.suffix == ".csv" and (text := sidecar_text(table)) is not None:
            atomic_write(side, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        elif path.suffix == ".csv":
            side.unlink(missing_ok=True)  # an old table's record must not describe this one
        atomic_write(path, write)
    except OSError as err:
        raise ResultsError(f"{out}: cannot write the results ({err.strerror or err})") from None
    if replacing:
        print(f"note: replaced the existing {out}", file=sys.stderr)


def check_target_set(name: str | None) -> None:
    """An empty --target-set is a mistake, not 'no target set'."""
    if name is not None and not name.strip():
        raise ResultsError("--target-set is empty; name a target set of the bundle, or leave the option out")
