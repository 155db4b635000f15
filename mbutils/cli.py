"""``python -m mbutils``: experiment, mdad, summary, validate.

Every user error ends in one line on stderr and exit code 1, never a traceback, and
never a half-written output file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from .errors import MbutilsError, ResultsError

MISSING_CHOICES = {"error": "error", "drop-models": "drop_models", "drop-items": "drop_items"}


def _int_list(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def _name_list(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _read_results(path: str) -> pd.DataFrame:
    file = Path(path)
    if not file.exists():
        raise ResultsError(f"{path}: no such results file (make one with `python -m mbutils experiment`)")
    try:
        return pd.read_csv(file) if file.suffix == ".csv" else pd.read_parquet(file)
    except Exception as err:  # any reader failure means the file is not a results table
        raise ResultsError(f"{path}: cannot read it as a results table ({type(err).__name__}: {err})") from None


def _check_out(out: str) -> Path:
    """Refuse an unusable output path before any work is done."""
    path = Path(out)
    if path.suffix not in (".parquet", ".pq", ".csv"):
        raise ResultsError(f"{out}: output must end in .parquet or .csv")
    if path.is_dir():
        raise ResultsError(f"{out} is a folder; give a file name ending in .parquet or .csv")
    if not path.parent.is_dir():
        raise ResultsError(f"{out}: the folder {path.parent} does not exist")
    return path


def _write_table(table: pd.DataFrame, out: str) -> None:
    from .cache import atomic_write

    path = _check_out(out)
    write = (lambda tmp: table.to_csv(tmp, index=False)) if path.suffix == ".csv" else (
        lambda tmp: table.to_parquet(tmp, index=False))
    try:
        atomic_write(path, write)
    except OSError as err:
        raise ResultsError(f"{out}: cannot write the results ({err.strerror or err})") from None


def cmd_experiment(args) -> int:
    from .datasets import load_bundle
    from .experiment import run_experiment
    from .protocol import Protocol

    _check_out(args.out)
    bench = load_bundle(args.data, missing=MISSING_CHOICES[args.missing])
    protocol = Protocol(n_sources=args.sources, n_targets=args.targets, n_runs=args.runs,
                        seed=args.seed, target_set=args.target_set)
    results = run_experiment(bench, args.selectors, args.sizes, protocol, jobs=args.jobs,
                             backend=args.backend, use_cache=not args.no_cache,
                             progress=not args.quiet, scheduler=args.scheduler)
    _write_table(results, args.out)
    if not args.quiet:
        print(f"wrote {len(results):,} rows to {args.out}", file=sys.stderr)
    return 0


def cmd_mdad(args) -> int:
    from .metrics import mdad_table
    from .tables import render

    table = mdad_table(_read_results(args.results), threshold=args.threshold, split=args.split,
                       bin_width=args.bin_width, tie_rule=args.tie_rule, method=args.method,
                       ci=args.ci, n_boot=args.bootstrap, seed=args.seed)
    columns = ["selector", "size", "mdad", "ci_low", "ci_high", "n_pairs"]
    sys.stdout.write(render(table[columns], args.format))
    return 0


def cmd_summary(args) -> int:
    from .metrics import summary_table
    from .tables import render

    sys.stdout.write(render(summary_table(_read_results(args.results)), args.format))
    return 0


def cmd_validate(args) -> int:
    from .bundle import find_bundle, validate_bundle

    folder = find_bundle(args.bundle)
    problems = validate_bundle(folder)
    errors = [p for p in problems if p.severity == "error"]
    for problem in problems:
        print(f"{problem.severity}: {problem}")
    if errors:
        print(f"{folder}: {len(errors)} error(s); the bundle cannot be used until they are fixed",
              file=sys.stderr)
        return 1
    print(f"{folder}: valid bundle" + (" (with warnings)" if problems else ""))
    return 0


def cmd_cache(args) -> int:
    from . import cache
    from .tables import render

    if args.action == "list":
        entries = cache.list_entries()
        sys.stdout.write(render(entries, "markdown") if len(entries) else "")
        total = entries["bytes"].sum() / 1e6 if len(entries) else 0.0
        print(f"{len(entries)} entries, {total:.1f} MB in {cache.cache_dir()}", file=sys.stderr)
    else:
        print(f"removed {cache.clear(args.kind)} entries from {cache.cache_dir()}", file=sys.stderr)
    return 0


def _save_imported(bench, out: str, quiet: bool) -> int:
    from .bundle import save_bundle

    folder = save_bundle(bench, out)
    if not quiet:
        print(f"wrote {bench.n_models} models x {bench.n_items} items "
              f"({len(bench.subtask_names)} subtasks{', with confidences' if bench.has_confidence else ''}) "
              f"to {folder}", file=sys.stderr)
    return 0


def cmd_import(args) -> int:
    import warnings

    from . import importers

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        confidence = False if args.no_confidence else None
        if args.format == "lm-eval":
            if not args.paths:
                raise ResultsError("give one or more lm-evaluation-harness output files or folders")
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
    return _save_imported(bench, args.out, args.quiet)


def cmd_run_chapter(args) -> int:
    from .chapters import run_chapter

    params = {}
    for item in args.param:
        key, value = item
        params[key] = value
    html = run_chapter(args.chapter, params, args.out, profile=args.profile, timeout=args.timeout)
    print(f"wrote {html} and {html.with_suffix('.ipynb')}", file=sys.stderr)
    return 0


def cmd_notebook(args) -> int:
    from .chapters import chapter_path, to_notebook

    out = Path(args.out) if args.out else Path(f"{chapter_path(args.chapter).stem}.ipynb")
    print(f"wrote {to_notebook(args.chapter, out)}", file=sys.stderr)
    return 0


def _protocol_from(args):
    from .protocol import Protocol

    return Protocol(n_sources=args.sources, n_targets=args.targets, n_runs=args.runs, seed=args.seed,
                    target_set=getattr(args, "target_set", None))


def cmd_plan(args) -> int:
    from .datasets import load_bundle
    from .planning import cached_results, format_plan, plan_table

    bench = load_bundle(args.data, missing=MISSING_CHOICES[args.missing])
    protocol = _protocol_from(args)
    if args.results:
        results = _read_results(args.results)
    else:
        results = cached_results(bench, args.sizes, protocol)
    plan = plan_table(bench, args.gap, args.agreement, results, truth=args.truth, protocol=protocol,
                      bin_width=args.bin_width, tie_rule=args.tie_rule)
    sys.stdout.write(format_plan(plan))
    if results is None:
        print("(no cached experiments for this bundle and protocol: run `python -m mbutils experiment` "
              "with the same settings to compare selectors)", file=sys.stderr)
    return 0


def cmd_audit(args) -> int:
    from .audit import audit, format_audit, read_items, read_weights
    from .datasets import load_bundle

    if args.out:
        _check_out(args.out)
    bench = load_bundle(args.data, missing=MISSING_CHOICES[args.missing])
    items, weights = read_items(args.items)
    if args.weights:
        weights = read_weights(args.weights, items)
    report = audit(bench, items, weights, n_random=args.random, seed=args.seed, threshold=args.threshold,
                   truth=args.truth, models=args.target_set, bin_width=args.bin_width,
                   tie_rule=args.tie_rule, mdad_method=args.method, ci=args.ci, n_boot=args.bootstrap)
    sys.stdout.write(format_audit(report, max_gap=args.max_gap))
    if args.out:
        _write_table(report.results, args.out)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mbutils", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("experiment", help="run selectors x sizes x runs on a bundle")
    p.add_argument("--data", required=True, help="bundle name on MBUTILS_DATA, synthetic-*, or a folder")
    p.add_argument("--selectors", type=_name_list, default=["random"], help="comma-separated names")
    p.add_argument("--sizes", type=_int_list, default=[10, 25, 50, 100, 200])
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--sources", type=int, default=300)
    p.add_argument("--targets", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--target-set", default=None, help="named target set from target_sets.json")
    p.add_argument("--jobs", type=int, default=1, help="parallel workers (-1: all cores)")
    p.add_argument("--backend", choices=["loky", "threading", "sequential", "dask", "ray"], default="loky",
                   help="how runs are spread over workers (dask/ray need requirements-scale.txt)")
    p.add_argument("--scheduler", default=None,
                   help="address of a running Dask scheduler or Ray cluster (default: start a local one)")
    p.add_argument("--missing", choices=list(MISSING_CHOICES), default="error",
                   help="what to do with models/items that have missing cells")
    p.add_argument("--no-cache", action="store_true", help="recompute even if cached")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--out", required=True, help="results file (.parquet or .csv)")
    p.set_defaults(func=cmd_experiment)

    p = sub.add_parser("mdad", help="MDAD with confidence intervals per selector x size")
    p.add_argument("results")
    p.add_argument("--split", choices=["seen", "unseen"], default="seen")
    p.add_argument("--threshold", type=float, default=0.8)
    p.add_argument("--bin-width", type=float, default=0.5, help="gap bin width in points")
    p.add_argument("--tie-rule", choices=["paper", "exclude"], default="paper")
    p.add_argument("--method", choices=["first", "monotone"], default="first")
    p.add_argument("--ci", choices=["pairs", "runs", "none"], default="pairs")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--format", choices=["csv", "markdown"], default="csv")
    p.set_defaults(func=cmd_mdad)

    p = sub.add_parser("summary", help="Kendall tau and estimation error per selector x size")
    p.add_argument("results")
    p.add_argument("--format", choices=["csv", "markdown"], default="csv")
    p.set_defaults(func=cmd_summary)

    p = sub.add_parser("validate", help="check a bundle and explain every problem found")
    p.add_argument("bundle")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("plan", help="how many items random sampling needs for a given gap and agreement")
    p.add_argument("--data", required=True)
    p.add_argument("--gap", type=float, required=True, help="accuracy gap in points")
    p.add_argument("--agreement", type=float, default=0.8, help="target pairwise agreement")
    p.add_argument("--truth", choices=["seen", "full"], default="seen",
                   help="judge against the seen half (the paper's protocol) or all items")
    p.add_argument("--results", default=None, help="experiment results to compare selectors (default: cache)")
    p.add_argument("--sizes", type=_int_list, default=[10, 25, 50, 100, 200],
                   help="sizes of the cached experiment to look up")
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--sources", type=int, default=300)
    p.add_argument("--targets", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--bin-width", type=float, default=0.5)
    p.add_argument("--tie-rule", choices=["paper", "exclude"], default="paper")
    p.add_argument("--missing", choices=list(MISSING_CHOICES), default="error")
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser("audit", help="how well a given list of items ranks every pair of models")
    p.add_argument("--data", required=True)
    p.add_argument("--items", required=True, help="one item per line, or a CSV with an item column")
    p.add_argument("--weights", default=None, help="one weight per line, or a CSV with item,weight")
    p.add_argument("--random", type=int, default=100, help="random subsets of equal size as baseline")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threshold", type=float, default=0.8)
    p.add_argument("--truth", choices=["full", "rest"], default="full",
                   help="judge against all items, or against the items not in the list")
    p.add_argument("--target-set", default=None, help="only the models of this target set")
    p.add_argument("--bin-width", type=float, default=0.5)
    p.add_argument("--tie-rule", choices=["paper", "exclude"], default="paper")
    p.add_argument("--method", choices=["first", "monotone"], default="first")
    p.add_argument("--ci", choices=["models", "pairs", "none"], default="models")
    p.add_argument("--bootstrap", type=int, default=1000)
    p.add_argument("--max-gap", type=float, default=10.0, help="widest gap shown in the curve")
    p.add_argument("--missing", choices=list(MISSING_CHOICES), default="error")
    p.add_argument("--out", default=None, help="also write the audit's results table (.parquet/.csv)")
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("import", help="turn lm-evaluation-harness logs or leaderboard details into a bundle")
    p.add_argument("format", choices=["lm-eval", "leaderboard"])
    p.add_argument("paths", nargs="*", help="lm-eval: samples_*.jsonl files or folders holding them")
    p.add_argument("--out", required=True, help="bundle folder to write (must not exist)")
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
                   help="what to do when logs disagree on an item's content hash")
    p.add_argument("--no-confidence", action="store_true", help="do not derive confidences")
    p.add_argument("--name", default=None, help="bundle name (default: the output folder name)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("run-chapter", help="execute a chapter of the book on other data or settings")
    p.add_argument("chapter", help="chapter name (e.g. bench_gpqa) or path of its .md (or .ipynb)")
    p.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"),
                   help="set a parameter of the chapter (repeatable), e.g. -p data mybundle -p runs 10")
    p.add_argument("--out", default="chapter-output", help="folder for the executed notebook and its HTML")
    p.add_argument("--profile", choices=["quick", "default", "paper"], default=None,
                   help="settings profile (default: $MBUTILS_PROFILE or 'default')")
    p.add_argument("--timeout", type=int, default=None, help="seconds allowed per cell")
    p.set_defaults(func=cmd_run_chapter)

    p = sub.add_parser("notebook", help="write a chapter as an .ipynb notebook (for papermill or Jupyter)")
    p.add_argument("chapter", help="chapter name (e.g. bench_gpqa) or path of its .md")
    p.add_argument("--out", default=None, help="notebook file or folder (default: ./CHAPTER.ipynb)")
    p.set_defaults(func=cmd_notebook)

    p = sub.add_parser("cache", help="list or clear cached results and synthetic bundles")
    p.add_argument("action", choices=["list", "clear"])
    p.add_argument("--kind", default=None, help="only this kind of entry (results, synthetic, ...)")
    p.set_defaults(func=cmd_cache)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except MbutilsError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
