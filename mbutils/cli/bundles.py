"""Bundles: the validate, data, import and cache commands."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

from mbutils.base.errors import MbutilsError, ResultsError
from mbutils.base.folders import check_output_folder
from mbutils.base.tables import render
from mbutils.cli.common import Formatter
from mbutils.data import inventory
from mbutils.data.bundle import find_bundle, save_bundle, validate_bundle
from mbutils.data.datapath import describe_data_path


def validate_parser(sub, common) -> None:
    """The ``validate`` command: check a bundle and explain each problem."""
    p = sub.add_parser("validate", parents=[common], formatter_class=Formatter,
                       help="check a bundle and explain every problem found")
    p.add_argument("bundle", help="bundle name on the data path or a folder")
    p.set_defaults(func=cmd_validate)


def cmd_validate(args) -> int:
    folder = find_bundle(args.bundle)
    problems = validate_bundle(folder)
    errors = [p for p in problems if p.severity == "error"]
    for problem in problems:
        print(f"{problem.severity}: {problem}")
    if errors and all(p.kind == "export" for p in errors):
        print(f"{folder}: {len(errors)} error(s); build-micro refuses the bundle until they are fixed (experiment, "
              "plan and audit can use it)", file=sys.stderr)
        return 1
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


def data_parser(sub, common) -> None:
    """The ``data`` command: list the bundles on the data path, or show one."""
    p = sub.add_parser("data", parents=[common], formatter_class=Formatter,
                       help="list the bundles on the data path, or show one")
    p.add_argument("action", nargs="?", choices=["list", "show"], default="list",
                   help="list every bundle, or show one in detail")
    p.add_argument("name", nargs="?", default=None, help="the bundle to show (a name or a folder)")
    p.add_argument("--format", choices=["markdown", "csv"], default="markdown", help="how to print the list")
    p.set_defaults(func=cmd_data)


def cmd_data(args) -> int:
    from mbutils.book.findings.paper_results import find_folder  # the book's findings: loaded for this command only

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


def import_parser(sub, common) -> None:
    """The ``import`` command: lm-evaluation-harness logs or leaderboard details into a bundle."""
    p = sub.add_parser("import", parents=[common], formatter_class=Formatter,
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


def _check_import_out(args) -> None:
    """Refuse, before reading any log, an --out that holds the inputs or is taken."""
    check_output_folder(args.out, args.force, [*args.paths, args.models, None if args.source == "hub" else args.source],
                        ResultsError)


def _save_imported(bench, out: str, quiet: bool, force: bool) -> int:
    folder = save_bundle(bench, out, overwrite=force)
    if not quiet:
        print(f"wrote {bench.n_models} models x {bench.n_items} items "
              f"({len(bench.subtask_names)} subtasks{', with confidences' if bench.has_confidence else ''}) "
              f"to {folder}", file=sys.stderr)
    return 0


def cmd_import(args) -> int:
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


def cache_parser(sub, common) -> None:
    """The ``cache`` command: list or clear the cached results and synthetic bundles."""
    from mbutils.base.cache import KINDS

    p = sub.add_parser("cache", parents=[common], formatter_class=Formatter,
                       help="list or clear cached results and synthetic bundles")
    p.add_argument("action", choices=["list", "clear"], help="list the entries, or remove them")
    p.add_argument("--kind", choices=KINDS, default=None, help="only this kind of entry (default: every kind)")
    p.set_defaults(func=cmd_cache)


def cmd_cache(args) -> int:
    from mbutils.base import cache

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
