"""mbutils: micro-benchmark experiments, their meta-evaluation, and the book's chapters.

Every user error ends in one message on stderr and exit code 1 (2 for a malformed
command line), never a traceback, and never a half-written output file. An unexpected
failure is a bug: one line says so and where to report it (the traceback with --debug).
"""

from __future__ import annotations

import argparse
import errno
import json
import sys
import traceback
from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.base.version import __version__
from mbutils.base.errors import MbutilsError, ResultsError
from mbutils.base.folders import check_not_input, check_output_folder
from mbutils.base.tables import mdad_text
from mbutils.base.validation import check_int, check_names, check_number, check_workers

MISSING_CHOICES = {"error": "error", "drop-models": "drop_models", "drop-items": "drop_items"}
REPORT = ("this is a bug in mbutils: please report it on the project's issue tracker with the command "
          "you ran")
BIG = 10**6          # the largest count (models, sources, sizes) any option accepts
MAX_RUNS = 100_000
MAX_SEED = 2**63 - 1
DESCRIPTION = __doc__.splitlines()[0]


# -- option values: checked at the boundary, with the validation helpers' wording --------------------

def _number(text: str):
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
            return check(_number(text.strip()), what, **bounds)
        except MbutilsError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    parse.__name__ = what
    return parse


def count(what: str, low: int = 1, high: int = BIG):
    return _option(check_int, what, low=low, high=high)


def number(what: str, **bounds):
    return _option(check_number, what, **bounds)


def _workers(text: str) -> int:
    try:
        return check_workers(_number(text.strip()), "jobs")
    except MbutilsError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _sizes(text: str) -> list[int]:
    parse = count("size")
    sizes = [parse(x) for x in text.split(",") if x.strip()]
    if not sizes:
        raise argparse.ArgumentTypeError("sizes must name at least one, not an empty list")
    return sizes


def _names(what: str):
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


# -- files in and out ----------------------------------------------------------------------------

def _read_results(path: str) -> pd.DataFrame:
    """A results table (Parquet with its provenance, or CSV); every failure is one message."""
    from mbutils.base.provenance import read_parquet, read_sidecar
    from mbutils.base.tables import read_csv_table
    from mbutils.results.metrics import RESULT_TEXT_COLUMNS

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


def _whole_results(path: str, args) -> pd.DataFrame:
    """A results table to score: refused when runs or sizes are missing, unless --allow-partial (then
    a note says so on stderr, and in a markdown table's output)."""
    from mbutils.results.completeness import check_complete
    from mbutils.results.metrics import check_results

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


def _say_partial(args) -> None:
    """The partial-results note in a markdown output too (a CSV output stays a plain table)."""
    note = getattr(args, "partial_note", "")
    if note and getattr(args, "format", "") == "markdown":
        sys.stdout.write(f"\n> Note: {note}.\n")


def _bundle_folder(data: str) -> Path | None:
    """The folder a --data value names, when it names one (synthetic stand-ins have none)."""
    from mbutils.data.bundle import find_bundle

    try:
        return Path(find_bundle(data)).resolve()
    except MbutilsError:
        return None


def _refuse_existing(path: Path, force: bool, what: str = "--out") -> None:
    """An existing output is replaced only when the command line says so."""
    if path.exists() and not force:
        raise MbutilsError(f"{path} exists; pass --force to replace it, or give another {what}")


def _check_out(out: str, inputs=(), force: bool = False) -> Path:
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
    _refuse_existing(path, force)
    if path.suffix == ".csv":
        from mbutils.base.provenance import sidecar_path

        check_not_input(sidecar_path(path), inputs, ResultsError)
        _refuse_existing(sidecar_path(path), force, "--out (a CSV keeps its provenance in that file beside it)")
    return path


def _write_table(table: pd.DataFrame, out: str, force: bool) -> None:
    """Write the whole table or nothing; say so when an existing file is replaced (``force``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mbutils.base.cache import atomic_write
    from mbutils.base.provenance import parquet_metadata, sidecar_path, sidecar_text
    from mbutils.base.tables import csv_safe

    path = _check_out(out, force=force)
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


def _note_confidence_fallback(bench, selectors: list[str]) -> None:
    """Say when a confidence-reading selector will read 0/1 correctness instead."""
    from mbutils.methods.selectors import make_selector

    if bench.has_confidence:
        return
    readers = [name for name in selectors if getattr(make_selector(name), "uses_confidence", False)]
    if readers:
        print(f"note: {bench.name} has no confidence.csv, so {', '.join(readers)} read 0/1 correctness "
              "instead of confidences", file=sys.stderr)


# -- the commands -------------------------------------------------------------------------------

def _check_target_set(name: str | None) -> None:
    """An empty --target-set is a mistake, not 'no target set'."""
    if name is not None and not name.strip():
        raise ResultsError("--target-set is empty; name a target set of the bundle, or leave the option out")


def cmd_experiment(args) -> int:
    from mbutils.data.datasets import load_benchmark
    from mbutils.methods.experiment import run_experiment
    from mbutils.methods.protocol import Protocol

    _check_out(args.out, [_bundle_folder(args.data)], args.force)
    _check_target_set(args.target_set)
    bench = load_benchmark(args.data, missing=MISSING_CHOICES[args.missing])
    protocol = Protocol(n_sources=args.sources, n_targets=args.targets, n_runs=args.runs,
                        seed=args.seed, target_set=args.target_set)
    results = run_experiment(bench, args.selectors, args.sizes, protocol, jobs=args.jobs,
                             backend=args.backend, use_cache=not args.no_cache,
                             progress=not args.quiet, scheduler=args.scheduler)
    _note_confidence_fallback(bench, args.selectors)
    _write_table(results, args.out, args.force)
    if not args.quiet:
        print(f"wrote {len(results):,} rows to {args.out}", file=sys.stderr)
    return 0


def cmd_mdad(args) -> int:
    from mbutils.results.metrics import mdad_table
    from mbutils.base.tables import render

    table = mdad_table(_whole_results(args.results, args), threshold=args.threshold, split=args.split,
                       bin_width=args.bin_width, tie_rule=args.tie_rule, method=args.method,
                       ci=args.ci, n_boot=args.bootstrap, seed=args.seed)
    columns = ["selector", "size", "mdad", "ci_low", "ci_high", "n_pairs"]
    sys.stdout.write(render(table[columns], args.format))
    _say_partial(args)
    return 0


def cmd_summary(args) -> int:
    from mbutils.results.metrics import summary_table
    from mbutils.base.tables import render

    sys.stdout.write(render(summary_table(_whole_results(args.results, args)), args.format))
    _say_partial(args)
    return 0


def cmd_combine(args) -> int:
    from mbutils.base.provenance import combine

    _check_out(args.out, args.results, args.force)
    tables = [_whole_results(path, args) for path in args.results]
    combined = combine(tables, [str(path) for path in args.results])
    _write_table(combined, args.out, args.force)
    print(f"wrote {len(combined):,} rows of {len(tables)} experiments ({combined['run'].nunique()} runs) "
          f"to {args.out}", file=sys.stderr)
    return 0


def cmd_validate(args) -> int:
    from mbutils.data.bundle import find_bundle, validate_bundle

    folder = find_bundle(args.bundle)
    problems = validate_bundle(folder)
    errors = [p for p in problems if p.severity == "error"]
    for problem in problems:
        print(f"{problem.severity}: {problem}")
    if errors:
        print(f"{folder}: {len(errors)} error(s); the bundle cannot be used until they are fixed",
              file=sys.stderr)
        return 1
    if any(p.kind == "missing" for p in problems):
        print(f"{folder}: valid bundle format, but incomplete: experiment, plan and audit refuse it "
              "unless given --missing drop-models or --missing drop-items (see the warning above)")
        return 0
    print(f"{folder}: valid bundle" + (" (with warnings)" if problems else ""))
    return 0


def cmd_data(args) -> int:
    from mbutils.data import inventory
    from mbutils.data.datapath import describe_data_path
    from mbutils.results.paper_results import find_folder
    from mbutils.base.tables import render

    if args.action == "show":
        if not args.name:
            raise MbutilsError("data show needs a bundle name, e.g. python -m mbutils data show gpqa")
        print(inventory.describe(args.name))
        return 0
    if args.name:
        raise MbutilsError(f"data list takes no name (got {args.name!r}); to see one bundle: data show NAME")
    sys.stdout.write(render(inventory.listing(display=args.format == "markdown"), args.format))
    tables = find_folder()
    print(f"searched: {describe_data_path()}", file=sys.stderr)
    print(f"the paper's published tables: {tables if tables else 'none on the data path'}", file=sys.stderr)
    return 0


def cmd_cache(args) -> int:
    from mbutils.base import cache
    from mbutils.base.tables import render

    if args.action == "list":
        entries = cache.list_entries()
        sys.stdout.write(render(entries, "markdown") if len(entries) else "")
        total = entries["bytes"].sum() / 1e6 if len(entries) else 0.0
        print(f"{len(entries)} entries, {total:.1f} MB in {cache.cache_root()}", file=sys.stderr)
    else:
        removed, others = cache.clear(args.kind)
        print(f"removed {removed} entries from {cache.cache_root()}", file=sys.stderr)
        if others:
            shown = ", ".join(str(p.relative_to(cache.cache_root())) for p in others[:5])
            print(f"left {len(others)} files the cache did not write ({shown}{', ...' if len(others) > 5 else ''})",
                  file=sys.stderr)
    return 0


def _check_import_out(args) -> None:
    """Refuse, before reading any log, an --out that holds the inputs or is taken."""
    check_output_folder(args.out, args.force, [*args.paths, args.models, None if args.source == "hub" else args.source],
                        ResultsError)


def _save_imported(bench, out: str, quiet: bool, force: bool) -> int:
    from mbutils.data.bundle import save_bundle

    folder = save_bundle(bench, out, overwrite=force)
    if not quiet:
        print(f"wrote {bench.n_models} models x {bench.n_items} items "
              f"({len(bench.subtask_names)} subtasks{', with confidences' if bench.has_confidence else ''}) "
              f"to {folder}", file=sys.stderr)
    return 0


def cmd_import(args) -> int:
    import warnings

    from mbutils.data import importers

    _check_import_out(args)
    if args.metric is not None and not args.metric.strip():
        raise ResultsError("--metric is empty; name the 0/1 metric to read (e.g. acc), or leave the option out")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        confidence = False if args.no_confidence else None
        if args.format == "lm-eval":
            if not args.paths or not all(p.strip() for p in args.paths):
                raise ResultsError("give one or more lm-evaluation-harness output files or folders "
                                   "(an empty path would mean the current folder)")
            bench = importers.import_lm_eval(
                args.paths, args.metric or "acc", filter=args.filter, name=args.name or Path(args.out).name,
                items=args.items, check_docs=args.doc_check or "error", confidence=confidence,
                subtask_field=args.subtask_field, progress=not args.quiet)
        else:
            if not args.models or not args.benchmark:
                raise ResultsError("import leaderboard needs --models FILE and --benchmark NAME")
            if args.source == "hub":
                source = importers.HubSource(cache_dir=args.cache_dir, layout=args.layout)
            else:
                source = importers.LocalSource(args.source)
            bench = importers.import_leaderboard(
                importers.read_model_list(args.models), args.benchmark, source=source, metric=args.metric,
                name=args.name or Path(args.out).name, items=args.items,
                check_docs=args.doc_check or "warn", confidence=confidence, progress=not args.quiet)
    for warning in caught:
        print(f"warning: {warning.message}", file=sys.stderr)
    return _save_imported(bench, args.out, args.quiet, args.force)


#: What the chapter commands need beyond the library (the ``book`` extra).
BOOK_MODULES = ("nbformat", "jupytext", "papermill", "nbconvert", "ipykernel", "matplotlib", "myst_nb")


def _need_book_packages(command: str) -> None:
    from importlib.util import find_spec

    absent = [m for m in BOOK_MODULES if find_spec(m) is None]
    if absent:
        raise MbutilsError(f"{command} needs the book's packages ({', '.join(absent)} missing): "
                           "pip install 'mbutils[book]', or pip install -r requirements.txt in the repository")


def cmd_run_chapter(args) -> int:
    _need_book_packages("run-chapter")
    from mbutils.build.chapters import run_chapter

    from mbutils.build.chapters import chapter_path

    stem = chapter_path(args.chapter).stem
    pages = [Path(args.out) / f"{stem}{suffix}" for suffix in (".html", ".ipynb")]
    existed = [page for page in pages if page.exists()]
    for page in existed:
        _refuse_existing(page, args.force, "--out folder")
    html = run_chapter(args.chapter, dict(args.param), args.out, profile=args.profile, timeout=args.timeout,
                       progress=not args.quiet)
    print(f"wrote {html} and {html.with_suffix('.ipynb')}", file=sys.stderr)
    if existed:
        print(f"note: replaced the existing {' and '.join(p.name for p in existed)} in {args.out}", file=sys.stderr)
    return 0


def cmd_notebook(args) -> int:
    _need_book_packages("notebook")
    from mbutils.build.chapters import chapter_names, chapter_path, to_notebook

    if args.chapter == "all":
        out = Path(args.out or ".")
        if out.suffix == ".ipynb":
            raise MbutilsError("notebook all: --out must be a folder")
        for name in chapter_names():
            _refuse_existing(out / f"{name}.ipynb", args.force, "--out folder")
        out.mkdir(parents=True, exist_ok=True)
        for name in chapter_names():
            to_notebook(name, out / f"{name}.ipynb", launch=args.launch)
        print(f"wrote {len(chapter_names())} notebooks into {out}", file=sys.stderr)
        return 0
    out = Path(args.out) if args.out else Path(f"{chapter_path(args.chapter).stem}.ipynb")
    replacing = out.exists()
    _refuse_existing(out, args.force)
    print(f"wrote {to_notebook(args.chapter, out, launch=args.launch)}", file=sys.stderr)
    if replacing:
        print(f"note: replaced the existing {out}", file=sys.stderr)
    return 0


def cmd_book(args) -> int:
    _need_book_packages("book")
    from mbutils.build.publish import build_book

    proc = build_book(args.copy, args.out, execution_cache=args.execution_cache)
    if proc.returncode == 0:
        where = Path(args.out) if args.out else Path(".")
        print(f"built the {args.copy} copy: {where / '_build' / 'html' / 'index.html'}", file=sys.stderr)
    return proc.returncode


def cmd_book_pdf(args) -> int:
    _need_book_packages("book-pdf")
    from mbutils.build.publish import book_pdf

    _refuse_existing(Path(args.out), args.force)
    report = book_pdf(args.html, args.out)
    pages = sum(r["pages"] for r in report.values())
    print(json.dumps(report, indent=1))  # per document: pages, figures, narrowest figure / text column, equations
    print(f"wrote {args.out}: {len(report)} documents, {pages} pages", file=sys.stderr)
    return 0


def _protocol_from(args):
    from mbutils.methods.protocol import Protocol

    return Protocol(n_sources=args.sources, n_targets=args.targets, n_runs=args.runs, seed=args.seed,
                    target_set=getattr(args, "target_set", None))


def _results_of(bench, path: str, args) -> pd.DataFrame:
    """A results table given with --results, refused when another bundle produced it."""
    from mbutils.base.provenance import check_bundle

    results = _whole_results(path, args)
    check_bundle(results, bench.content_hash, bench.name, path)
    unknown = sorted(set(results["model"].astype(str)) - set(map(str, bench.models)))
    if unknown:
        shown = ", ".join(map(repr, unknown[:3])) + (f" and {len(unknown) - 3} more" if len(unknown) > 3 else "")
        raise ResultsError(f"{path}: models {shown} are not in bundle {bench.name!r}; these results come "
                           "from another bundle")
    # a CSV without its sidecar carries no provenance: the counts themselves must be this bundle's (seen + unseen = all items,
    # and each model's correct answers on them = its correct answers on the bundle)
    totals = pd.Series(np.nansum(bench.correct, axis=1), index=bench.models.astype(str))
    items = results["n_seen"].to_numpy(np.int64) + results["n_unseen"].to_numpy(np.int64)
    right = results["seen_correct"].to_numpy(np.int64) + results["unseen_correct"].to_numpy(np.int64)
    off = (items != bench.n_items) | (right != totals[results["model"].astype(str)].to_numpy().round().astype(np.int64))
    if off.any():
        row = int(np.flatnonzero(off)[0])
        raise ResultsError(f"{path}: row {row + 2} (model {results['model'].iloc[row]!r}) counts {right[row]} right of "
                           f"{items[row]} items, which is not its result on bundle {bench.name!r} "
                           f"({int(totals[str(results['model'].iloc[row])])} of {bench.n_items}); these results come "
                           "from another bundle")
    return results


def cmd_plan(args) -> int:
    from mbutils.data.datasets import load_benchmark
    from mbutils.results.planning import cached_results, format_pair_power, format_plan, pair_power, plan_table

    if (args.gap is None) == (args.pair is None):
        raise ResultsError("give either --gap (pairs of a gap bin) or --pair MODEL_A MODEL_B (one pair of models)")
    if args.results is not None and not args.results.strip():
        raise ResultsError("--results is empty; give a results file (.parquet or .csv), or leave the option out")
    bench = load_benchmark(args.data, missing=MISSING_CHOICES[args.missing])
    if args.pair is not None:
        power = pair_power(bench, args.pair[0], args.pair[1], sizes=args.sizes, agreement=args.agreement)
        sys.stdout.write(format_pair_power(power, args.sizes))
        return 0
    if not args.sizes:  # the cached experiments looked up: the default sizes that fit this bundle
        from mbutils.methods.experiment import n_seen_items

        args.sizes = [k for k in (10, 25, 50, 100, 200) if k <= n_seen_items(bench)] or [n_seen_items(bench)]
    protocol = _protocol_from(args)
    if args.results:
        results = _results_of(bench, args.results, args)
    else:
        results = cached_results(bench, args.sizes, protocol)
    plan = plan_table(bench, args.gap, args.agreement, results, truth=args.truth, protocol=protocol,
                      bin_width=args.bin_width, tie_rule=args.tie_rule)
    sys.stdout.write(format_plan(plan))
    if results is None:
        print("(no cached experiments for this bundle and protocol: run `python -m mbutils experiment` "
              "with the same settings to compare selectors)", file=sys.stderr)
    return 0


def _param_value(text: str):
    """A --param value: a number, True/False/None, or the text itself."""
    value = _number(text.strip())
    if isinstance(value, str):
        return {"true": True, "false": False, "none": None}.get(value.strip().lower(), value.strip())
    return value


def _params(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ResultsError(f"--param {pair!r}: write it as key=value (e.g. --param n_strata=5)")
        out[key.strip()] = _param_value(value)
    return out


def _read_model_list(path: str) -> list[str]:
    file = Path(path)
    if not file.is_file():
        raise ResultsError(f"{path}: no such file of models to exclude (one model name per line)")
    try:
        lines = file.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise ResultsError(f"{path}: cannot read it ({err})") from None
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def cmd_build_micro(args) -> int:
    from mbutils.data.bundle import find_bundle
    from mbutils.data.datasets import load_benchmark
    from mbutils.methods.selectors import make_selector
    from mbutils.results.lm_eval_task import check_exportable
    from mbutils.results.micro_folder import check_out, write_micro
    from mbutils.results.microbench import build_micro

    try:
        bundle_folder = find_bundle(args.data)
    except MbutilsError:
        bundle_folder = None  # a synthetic stand-in: no folder to protect
    check_out(args.out, bundle_folder, args.force)
    selector = make_selector(args.selector, **_params(args.param))
    exclude = _read_model_list(args.exclude_models) if args.exclude_models else []
    bench = load_benchmark(args.data, missing=MISSING_CHOICES[args.missing])
    check_exportable(bench.items, bench.subtasks)  # names the export would refuse, before any work
    if args.lm_eval_tasks is not None and not Path(args.lm_eval_tasks).is_dir():
        raise MbutilsError(f"--lm-eval-tasks {args.lm_eval_tasks}: no such folder of lm-eval task configs")
    built = build_micro(bench, selector, args.k, seed=args.seed, exclude=exclude, runs=args.runs,
                        threshold=args.threshold, jobs=args.jobs, progress=not args.quiet)
    path = write_micro(built, args.out, bundle_folder=bundle_folder, force=args.force, tasks_dir=args.lm_eval_tasks)
    card = built.card
    if card.protocol is None:
        reliability = f"no reliability card: {card.note}"
    else:
        reliability = (f"MDAD at k = {built.k}: {mdad_text(card.mdad, unit=' points')} (95% CI "
                       f"{mdad_text(card.ci_low)} to {mdad_text(card.ci_high)}; random sampling: "
                       f"{mdad_text(card.random_mdad, unit=' points')})")
    print(f"wrote {path}: {built.k} items of {bench.name} chosen by {built.selector} "
          f"(pool of {len(built.pool)} models); {reliability}")
    return 0


def cmd_score(args) -> int:
    from mbutils.results.micro_folder import read_micro
    from mbutils.results.scoring import format_scores, score

    folder = read_micro(args.folder)
    table = score(folder, args.files, level=args.level, metric=args.metric)
    sys.stdout.write(format_scores(table, folder, args.format))
    return 0


def cmd_audit(args) -> int:
    from mbutils.results.auditing import audit, format_audit, read_items, read_weights
    from mbutils.data.datasets import load_benchmark

    if args.out is not None:
        _check_out(args.out, [args.items, args.weights or None, _bundle_folder(args.data)], args.force)
    _check_target_set(args.target_set)
    if args.weights is not None and not args.weights.strip():
        raise ResultsError("--weights is empty; give a weights file, or leave the option out for a plain mean")
    bench = load_benchmark(args.data, missing=MISSING_CHOICES[args.missing])
    items, weights = read_items(args.items)
    if args.weights:
        weights = read_weights(args.weights, items)
    report = audit(bench, items, weights, n_random=args.random, seed=args.seed, threshold=args.threshold,
                   truth=args.truth, models=args.target_set, bin_width=args.bin_width,
                   tie_rule=args.tie_rule, mdad_method=args.method, ci=args.ci, n_boot=args.bootstrap,
                   progress=not args.quiet)
    sys.stdout.write(format_audit(report, max_gap=args.max_gap))
    if args.out is not None:
        _write_table(report.results, args.out, args.force)
    return 0


# -- the parser ---------------------------------------------------------------------------------

class _Formatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Every option's help ends with its default; descriptions keep their line breaks."""


def _add_protocol(p, what: str = "the experiment") -> None:
    p.add_argument("--runs", type=count("runs", high=MAX_RUNS), default=50, help=f"runs of {what}")
    p.add_argument("--sources", type=count("sources"), default=300, help="source models per run")
    p.add_argument("--targets", type=count("targets", low=2), default=50, help="target models per run")
    p.add_argument("--seed", type=SEED, default=0, help="root seed of every random draw")


def _add_missing(p) -> None:
    p.add_argument("--missing", choices=list(MISSING_CHOICES), default="error",
                   help="what to do with models/items that have missing cells")


def _add_mdad_options(p, ci_choices: list[str], ci_default: str) -> None:
    p.add_argument("--threshold", type=THRESHOLD, default=0.8, help="agreement the MDAD must reach, in (0, 1]")
    p.add_argument("--bin-width", type=BIN_WIDTH, default=0.5, help="gap bin width in accuracy points (0.01-100)")
    p.add_argument("--tie-rule", choices=["paper", "exclude"], default="paper",
                   help="pairs tied on the truth: scored as the paper does, or left out")
    p.add_argument("--method", choices=["first", "monotone"], default="first",
                   help="first bin crossing the threshold (paper) or a non-decreasing fit of the curve")
    p.add_argument("--ci", choices=ci_choices, default=ci_default, help="how the confidence interval is resampled")
    p.add_argument("--bootstrap", type=BOOTSTRAP, default=1000, help="bootstrap resamples (1-100000)")


def _experiment_parser(sub, common) -> None:
    p = sub.add_parser("experiment", parents=[common], formatter_class=_Formatter,
                       help="run selectors x sizes x runs on a bundle", description="Run selectors x sizes x "
                       "runs on a bundle and write the tidy results table (with its provenance).")
    p.add_argument("--data", required=True, help="bundle name on the data path, synthetic-*, or a folder")
    p.add_argument("--selectors", type=_names("selectors"), default=["random"], help="comma-separated names")
    p.add_argument("--sizes", type=_sizes, default=[10, 25, 50, 100, 200],
                   help="comma-separated micro-benchmark sizes (items)")
    _add_protocol(p)
    p.add_argument("--target-set", default=None, help="named target set from target_sets.json")
    p.add_argument("--jobs", type=_workers, default=1,
                   help="processes that compute, this one included with loky (-1: all cores; "
                        "never more than runs or cores)")
    p.add_argument("--backend", choices=["loky", "threading", "sequential", "dask", "ray"], default="loky",
                   help="how runs are spread over workers (dask/ray need requirements-scale.txt)")
    p.add_argument("--scheduler", default=None,
                   help="address of a running Dask scheduler or Ray cluster (default: start a local one)")
    _add_missing(p)
    p.add_argument("--no-cache", action="store_true", help="recompute even if cached")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--out", required=True, help="results file (.parquet or .csv)")
    p.add_argument("--force", action="store_true", help="replace an existing --out")
    p.set_defaults(func=cmd_experiment)


def _table_parsers(sub, common) -> None:
    p = sub.add_parser("mdad", parents=[common], formatter_class=_Formatter,
                       help="MDAD with confidence intervals per selector x size")
    p.add_argument("results", help="results table of one experiment (.parquet or .csv)")
    p.add_argument("--split", choices=["seen", "unseen"], default="seen", help="which half is the truth")
    _add_mdad_options(p, ["pairs", "runs", "none"], "pairs")
    p.add_argument("--seed", type=SEED, default=0, help="seed of the bootstrap")
    p.add_argument("--format", choices=["csv", "markdown"], default="csv", help="output format")
    p.add_argument("--allow-partial", action="store_true",
                   help="score results with runs or sizes missing (refused otherwise); the output says so")
    p.set_defaults(func=cmd_mdad)

    p = sub.add_parser("summary", parents=[common], formatter_class=_Formatter,
                       help="Kendall tau and estimation error per selector x size")
    p.add_argument("results", help="results table of one experiment (.parquet or .csv)")
    p.add_argument("--format", choices=["csv", "markdown"], default="csv", help="output format")
    p.add_argument("--allow-partial", action="store_true",
                   help="score results with runs or sizes missing (refused otherwise); the output says so")
    p.set_defaults(func=cmd_summary)

    p = sub.add_parser("combine", parents=[common], formatter_class=_Formatter,
                       help="join results of several experiments on purpose, numbering their runs apart",
                       description="Join the results tables of several experiments into one, on purpose: "
                       "the runs of each are renumbered after the previous one's, so no pairs are pooled by "
                       "mistake, and the provenance of every source is kept in the output's metadata.")
    p.add_argument("results", nargs="+", help="results tables (.parquet or .csv), two or more")
    p.add_argument("--out", required=True, help="combined results file (.parquet or .csv)")
    p.add_argument("--force", action="store_true", help="replace an existing --out")
    p.add_argument("--allow-partial", action="store_true",
                   help="score results with runs or sizes missing (refused otherwise); the output says so")
    p.set_defaults(func=cmd_combine)


def _bundle_parsers(sub, common) -> None:
    p = sub.add_parser("validate", parents=[common], formatter_class=_Formatter,
                       help="check a bundle and explain every problem found")
    p.add_argument("bundle", help="bundle name on the data path or a folder")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("plan", parents=[common], formatter_class=_Formatter,
                       help="how many items random sampling needs for a given gap and agreement")
    p.add_argument("--data", required=True, help="bundle name on the data path, synthetic-*, or a folder")
    p.add_argument("--gap", type=number("gap (points)", low=0, high=100, low_open=True), default=None,
                   help="accuracy gap in points (or give --pair)")
    p.add_argument("--pair", nargs=2, metavar=("MODEL_A", "MODEL_B"), default=None,
                   help="one pair of models of the bundle: the power of a random k-item subset to order them "
                   "(exact), and the smallest k reaching --agreement")
    p.add_argument("--agreement", type=number("agreement", low=0, high=1, low_open=True), default=0.8,
                   help="target pairwise agreement, in (0, 1]")
    p.add_argument("--truth", choices=["seen", "full"], default="seen",
                   help="judge against the seen half (the paper's protocol) or all items")
    p.add_argument("--results", default=None,
                   help="results of an experiment on this bundle to compare selectors (default: cache)")
    p.add_argument("--allow-partial", action="store_true",
                   help="score results with runs or sizes missing (refused otherwise); the output says so")
    p.add_argument("--sizes", type=_sizes, default=None,
                   help="sizes of the cached experiment to look up (default 10,25,50,100,200); with --pair: "
                   "the sizes to show (default a few up to N)")
    _add_protocol(p, "the cached experiment to look up")
    p.add_argument("--bin-width", type=BIN_WIDTH, default=0.5, help="gap bin width in accuracy points (0.01-100)")
    p.add_argument("--tie-rule", choices=["paper", "exclude"], default="paper",
                   help="pairs tied on the truth: scored as the paper does, or left out")
    _add_missing(p)
    p.set_defaults(func=cmd_plan)
    _micro_parsers(sub, common)

    p = sub.add_parser("audit", parents=[common], formatter_class=_Formatter,
                       help="how well a given list of items ranks every pair of models")
    p.add_argument("--data", required=True, help="bundle name on the data path, synthetic-*, or a folder")
    p.add_argument("--items", required=True, help="one item per line, or a CSV with an item column")
    p.add_argument("--weights", default=None, help="one weight per line, or a CSV with item,weight")
    p.add_argument("--random", type=count("random subsets", high=100_000), default=100,
                   help="random subsets of equal size as baseline")
    p.add_argument("--seed", type=SEED, default=0, help="seed of the random subsets and bootstrap")
    p.add_argument("--truth", choices=["full", "rest"], default="full",
                   help="judge against all items, or against the items not in the list")
    p.add_argument("--target-set", default=None, help="only the models of this target set")
    _add_mdad_options(p, ["models", "pairs", "none"], "models")
    p.add_argument("--max-gap", type=number("max gap (points)", low=0, high=100, low_open=True), default=10.0,
                   help="widest gap shown in the curve")
    _add_missing(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--out", default=None, help="also write the audit's results table (.parquet/.csv)")
    p.add_argument("--force", action="store_true", help="replace an existing --out")
    p.set_defaults(func=cmd_audit)


def _micro_parsers(sub, common) -> None:
    p = sub.add_parser("build-micro", parents=[common], formatter_class=_Formatter,
                       help="choose a micro-benchmark for use and write it as a folder",
                       description="Choose a k-item micro-benchmark from all items, learning from every model "
                       "of the bundle but those of --exclude-models, and write a folder: the items with their "
                       "weights, the estimator's state, provenance, the calibration of its interval "
                       "(cross-fitted held-out errors of the pool's models; none for random sampling, whose "
                       "interval is exact), a reliability card (MDAD at this k from a protocol run, random "
                       "sampling's, share of the pool's pairs it separates) and lm-evaluation-harness tasks "
                       "that run only the chosen documents. Written whole or not at all.")
    p.add_argument("--data", required=True, help="bundle name on the data path, synthetic-*, or a folder")
    p.add_argument("--selector", required=True, help="a selector name (not an adaptive one)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a selector parameter (repeatable), e.g. --param n_strata=5")
    p.add_argument("--k", type=count("k"), required=True, help="items in the micro-benchmark")
    p.add_argument("--out", required=True, help="folder to write (new or empty; see --force)")
    p.add_argument("--exclude-models", default=None, help="file with one model per line to hold out")
    p.add_argument("--seed", type=SEED, default=0, help="seed of the selection, folds and protocol run")
    p.add_argument("--runs", type=count("runs", high=MAX_RUNS), default=20, help="runs of the card's protocol")
    p.add_argument("--threshold", type=THRESHOLD, default=0.8, help="agreement the card's MDAD must reach")
    p.add_argument("--jobs", type=_workers, default=1, help="workers of the protocol run (-1: all cores)")
    p.add_argument("--lm-eval-tasks", default=None,
                   help="folder of lm-eval task YAMLs to find the original tasks in (default: the installed "
                   "lm_eval, else <task>.yaml next to the exported YAML)")
    p.add_argument("--force", action="store_true", help="replace an existing non-empty --out")
    _add_missing(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_build_micro)

    p = sub.add_parser("score", parents=[common], formatter_class=_Formatter,
                       help="a new model's estimated accuracy, interval and distinguishable pool models",
                       description="Score new models with a micro-benchmark folder from their lm-eval "
                       "samples_*.jsonl logs (of the original task or of the exported micro tasks) or a "
                       "bundle-format responses.csv. Interval: for uniform random sampling (plain mean) the "
                       "exact finite-population (hypergeometric) interval; for every other selector an "
                       "empirical interval from the cross-fitted held-out errors of the pool's models "
                       "(cross-fitted, CV+-like: its coverage is measured, not guaranteed). A pool model is distinguishable when the accuracies differ "
                       "by at least the card's MDAD.")
    p.add_argument("folder", help="micro-benchmark folder written by build-micro")
    p.add_argument("files", nargs="+", help="samples_*.jsonl files (or folders of them), or responses.csv files")
    p.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    p.add_argument("--level", type=number("level", low=0, high=1, low_open=True, high_open=True), default=0.9,
                   help="level of the interval, in (0, 1)")
    p.add_argument("--metric", default="acc", help="lm-eval 0/1 metric read as correctness (e.g. acc_norm)")
    p.set_defaults(func=cmd_score)


def _import_parser(sub, common) -> None:
    p = sub.add_parser("import", parents=[common], formatter_class=_Formatter,
                       help="turn lm-evaluation-harness logs or leaderboard details into a bundle")
    p.add_argument("format", choices=["lm-eval", "leaderboard"], help="where the results come from")
    p.add_argument("paths", nargs="*", help="lm-eval: samples_*.jsonl files or folders holding them")
    p.add_argument("--out", required=True, help="bundle folder to write (new or empty; see --force)")
    p.add_argument("--force", action="store_true", help="replace an existing non-empty --out")
    p.add_argument("--metric", default=None, help="0/1 metric to read (lm-eval default: acc)")
    p.add_argument("--models", help="leaderboard: text file with one model id per line")
    p.add_argument("--benchmark", help="leaderboard: gpqa, gpqa-diamond, bbh, mmlu-pro, musr, math-hard, ifeval")
    p.add_argument("--source", default="hub", help="leaderboard: 'hub' (download) or a local folder of details")
    p.add_argument("--layout", choices=["raw", "parquet"], default="raw", help="leaderboard: hub file layout")
    p.add_argument("--cache-dir", default=None, help="leaderboard: download cache folder")
    p.add_argument("--filter", default=None, help="lm-eval: which filter's records to use")
    p.add_argument("--subtask-field", default=None, help="lm-eval: take subtasks from this doc field")
    p.add_argument("--items", choices=["same", "common"], default="same",
                   help="models must log the same items (same) or keep the items all have (common)")
    p.add_argument("--doc-check", choices=["error", "warn", "ignore"], default=None,
                   help="what to do when logs disagree on an item's content hash (lm-eval: error, "
                   "leaderboard: warn)")
    p.add_argument("--no-confidence", action="store_true", help="do not derive confidences")
    p.add_argument("--name", default=None, help="bundle name (default: the output folder name)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_import)


def _chapter_parsers(sub, common) -> None:
    p = sub.add_parser("run-chapter", parents=[common], formatter_class=_Formatter,
                       help="execute a chapter of the book on other data or settings")
    p.add_argument("chapter", help="chapter name (e.g. bench_gpqa) or path of its .md (or .ipynb)")
    p.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"),
                   help="set a parameter of the chapter (repeatable), e.g. -p data mybundle -p runs 10")
    p.add_argument("--out", default="chapter-output", help="folder for the executed notebook and its HTML")
    p.add_argument("--force", action="store_true", help="replace the chapter's page and notebook in --out")
    p.add_argument("--profile", choices=["quick", "default", "paper"], default=None,
                   help="settings profile (default: $MBUTILS_PROFILE or 'default')")
    p.add_argument("--timeout", type=count("timeout (seconds)", high=10**7), default=None,
                   help="seconds allowed per cell (default: no limit)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_run_chapter)

    p = sub.add_parser("notebook", parents=[common], formatter_class=_Formatter,
                       help="write a chapter as an .ipynb notebook (for papermill or Jupyter)")
    p.add_argument("chapter", help="chapter name (e.g. bench_gpqa) or path of its .md, or 'all' (every chapter)")
    p.add_argument("--out", default=None, help="notebook file or folder (default: ./CHAPTER.ipynb; all: .)")
    p.add_argument("--force", action="store_true", help="replace existing notebooks")
    p.add_argument("--launch", action="store_true",
                   help="open with the cell that installs mbutils where it is missing (Colab)")
    p.set_defaults(func=cmd_notebook)

    p = sub.add_parser("book", parents=[common], formatter_class=_Formatter,
                       help="build the book strictly: the default, students' or instructors' copy",
                       description="Build the book with jupyter-book build -W -n --keep-going. The students' "
                       "copy has no solutions (nor any source download holding them); the instructors' shows "
                       "every solution open; the default folds each under its exercise.")
    p.add_argument("--copy", choices=["default", "students", "instructors"], default="default",
                   help="which copy to build")
    p.add_argument("--out", default=None, help="folder to hold _build/; None: the book's folder")
    p.add_argument("--execution-cache", default=None, metavar="BUILD",
                   help="reuse the executed notebooks of another build (its _build folder); None: this build's own")
    p.set_defaults(func=cmd_book)

    p = sub.add_parser("book-pdf", parents=[common], formatter_class=_Formatter,
                       help="print the built book into one PDF (Chromium), chapters in toc order")
    p.add_argument("--html", default="_build/html", help="the built book's HTML folder")
    p.add_argument("--out", default="_build/html/book.pdf", help="PDF file to write")
    p.add_argument("--force", action="store_true", help="replace an existing --out")
    p.set_defaults(func=cmd_book_pdf)


def _data_parser(sub, common) -> None:
    p = sub.add_parser("data", parents=[common], formatter_class=_Formatter,
                       help="list the bundles on the data path, or show one")
    p.add_argument("action", nargs="?", choices=["list", "show"], default="list",
                   help="list every bundle, or show one in detail")
    p.add_argument("name", nargs="?", default=None, help="the bundle to show (a name or a folder)")
    p.add_argument("--format", choices=["markdown", "csv"], default="markdown", help="how to print the list")
    p.set_defaults(func=cmd_data)


def _cache_parser(sub, common) -> None:
    from mbutils.base.cache import KINDS

    p = sub.add_parser("cache", parents=[common], formatter_class=_Formatter,
                       help="list or clear cached results and synthetic bundles")
    p.add_argument("action", choices=["list", "clear"], help="list the entries, or remove them")
    p.add_argument("--kind", choices=KINDS, default=None, help="only this kind of entry (default: every kind)")
    p.set_defaults(func=cmd_cache)


def program_name() -> str:
    """``mbutils`` when run as the installed script, else how the module is run."""
    return "mbutils" if Path(sys.argv[0]).name == "mbutils" else "python -m mbutils"


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the full traceback of an unexpected error")
    parser = argparse.ArgumentParser(prog=prog or program_name(), description=DESCRIPTION,
                                     formatter_class=_Formatter)
    parser.add_argument("--version", action="version", version=f"mbutils {__version__}")
    parser.add_argument("--debug", action="store_true", default=False,
                        help="show the full traceback of an unexpected error")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                title="commands (COMMAND --help for each one's options)")
    _experiment_parser(sub, common)
    _table_parsers(sub, common)
    _bundle_parsers(sub, common)
    _data_parser(sub, common)
    _import_parser(sub, common)
    _chapter_parsers(sub, common)
    _cache_parser(sub, common)
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
    an escape sequence could recolour or rewrite the terminal. Line breaks, tabs and carriage returns
    (the progress bar's) pass. Both standard streams of a command go through it.
    """

    _TABLE = {c: f"\\x{c:02x}" for c in [*range(0x20), 0x7F] if chr(c) not in "\n\r\t"}

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
