"""Experiments and their tables: the experiment, mdad, summary and combine commands."""

from __future__ import annotations

import argparse
import sys

from mbutils.base.provenance import combine
from mbutils.base.tables import render
from mbutils.cli.common import (MISSING_CHOICES, SEED, Formatter, add_mdad_options, add_missing, add_protocol,
                                bundle_folder_of, check_results_out, check_target_set, names, number, say_partial,
                                size_list, whole_results, workers, write_table)
from mbutils.data.datasets import load_benchmark
from mbutils.methods.protocol import Protocol
from mbutils.methods.selectors import make_selector
from mbutils.methods.selectors.registry import selector_names


class RegisteredSelectors(argparse.Action):
    """``--selectors``: its help lists the registry's names (:func:`mbutils.methods.selectors.selector_names`),
    read when the help is printed, so building the parser does not load the selectors. An unknown name is
    refused by the experiment, which lists the names (exit status 1, as every request the data cannot serve)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)

    @property
    def help(self) -> str:
        return f"comma-separated names, of: {', '.join(selector_names())}"

    @help.setter
    def help(self, value) -> None:  # argparse sets help=; the registry's list stands instead
        pass


def experiment_parser(sub, common) -> None:
    """The ``experiment`` command: run selectors x sizes x runs and write the results table."""
    p = sub.add_parser("experiment", parents=[common], formatter_class=Formatter,
                       help="run selectors x sizes x runs on a bundle", description="Run selectors x sizes x "
                       "runs on a bundle and write the tidy results table (with its provenance).")
    p.add_argument("--data", required=True, help="bundle name on the data path, synthetic-*, or a folder")
    p.add_argument("--selectors", type=names("selectors"), default=["random"], action=RegisteredSelectors)
    p.add_argument("--sizes", type=size_list, default=[10, 25, 50, 100, 200],
                   help="comma-separated micro-benchmark sizes (items)")
    add_protocol(p)
    p.add_argument("--target-set", default=None, help="named target set from target_sets.json")
    p.add_argument("--frontier", type=number("frontier", low=0, high=1, low_open=True, high_open=True), default=None,
                   help="frontier split: targets from this strongest share of the models, sources from the "
                        "models weaker than all of them (e.g. 0.2)")
    p.add_argument("--jobs", type=workers, default=1,
                   help="processes that compute, this one included with loky (-1: all cores; "
                        "never more than runs or cores)")
    p.add_argument("--backend", choices=["loky", "threading", "sequential", "dask", "ray"], default="loky",
                   help="how runs are spread over workers (dask/ray need requirements-scale.txt)")
    p.add_argument("--scheduler", default=None,
                   help="address of a running Dask scheduler or Ray cluster (default: start a local one)")
    add_missing(p)
    p.add_argument("--no-cache", action="store_true", help="recompute even if cached")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--out", required=True, help="results file (.parquet or .csv)")
    p.add_argument("--force", action="store_true", help="replace an existing --out")
    p.set_defaults(func=cmd_experiment)


def _note_confidence_fallback(bench, selectors: list[str]) -> None:
    """Say when a confidence-reading selector will read 0/1 correctness instead."""
    if bench.has_confidence:
        return
    readers = [name for name in selectors if getattr(make_selector(name), "uses_confidence", False)]
    if readers:
        print(f"note: {bench.name} has no confidence.csv, so {', '.join(readers)} read 0/1 correctness "
              "instead of confidences", file=sys.stderr)


def cmd_experiment(args) -> int:
    from mbutils.methods.experiment import run_experiment

    check_results_out(args.out, [bundle_folder_of(args.data)], args.force)
    check_target_set(args.target_set)
    bench = load_benchmark(args.data, missing=MISSING_CHOICES[args.missing])
    protocol = Protocol(n_sources=args.sources, n_targets=args.targets, n_runs=args.runs,
                        seed=args.seed, target_set=args.target_set, frontier=args.frontier)
    results = run_experiment(bench, args.selectors, args.sizes, protocol, jobs=args.jobs,
                             backend=args.backend, use_cache=not args.no_cache,
                             progress=not args.quiet, scheduler=args.scheduler)
    _note_confidence_fallback(bench, args.selectors)
    write_table(results, args.out, args.force)
    if not args.quiet:
        print(f"wrote {len(results):,} rows to {args.out}", file=sys.stderr)
    return 0


def table_parsers(sub, common) -> None:
    """The commands that read results tables: mdad, summary and combine."""
    p = sub.add_parser("mdad", parents=[common], formatter_class=Formatter,
                       help="MDAD with confidence intervals per selector x size")
    p.add_argument("results", help="results table of one experiment (.parquet or .csv)")
    p.add_argument("--split", choices=["seen", "unseen"], default="seen", help="which half is the truth")
    add_mdad_options(p, ["runs", "pairs", "none"], "runs")
    p.add_argument("--seed", type=SEED, default=0, help="seed of the bootstrap")
    p.add_argument("--format", choices=["csv", "markdown"], default="csv", help="output format")
    p.add_argument("--allow-partial", action="store_true",
                   help="score results with runs or sizes missing (refused otherwise); the output says so")
    p.set_defaults(func=cmd_mdad)

    p = sub.add_parser("summary", parents=[common], formatter_class=Formatter,
                       help="Kendall tau and estimation error per selector x size")
    p.add_argument("results", help="results table of one experiment (.parquet or .csv)")
    p.add_argument("--format", choices=["csv", "markdown"], default="csv", help="output format")
    p.add_argument("--allow-partial", action="store_true",
                   help="score results with runs or sizes missing (refused otherwise); the output says so")
    p.set_defaults(func=cmd_summary)

    p = sub.add_parser("combine", parents=[common], formatter_class=Formatter,
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


def cmd_mdad(args) -> int:
    from mbutils.evaluate.metrics import few_runs_warnings, mdad_table

    table = mdad_table(whole_results(args.results, args), threshold=args.threshold, split=args.split,
                       bin_width=args.bin_width, tie_rule=args.tie_rule, method=args.method,
                       ci=args.ci, n_boot=args.bootstrap, seed=args.seed)
    columns = ["selector", "size", "mdad", "ci_low", "ci_high", "n_pairs"]
    sys.stdout.write(render(table[columns], args.format))
    for line in few_runs_warnings(table):  # an interval from too few runs: said on stderr, the table unchanged
        print(line, file=sys.stderr)
    say_partial(args)
    return 0


def cmd_summary(args) -> int:
    from mbutils.evaluate.metrics import summary_table

    sys.stdout.write(render(summary_table(whole_results(args.results, args)), args.format))
    say_partial(args)
    return 0


def cmd_combine(args) -> int:
    check_results_out(args.out, args.results, args.force)
    tables = [whole_results(path, args) for path in args.results]
    combined = combine(tables, [str(path) for path in args.results])
    write_table(combined, args.out, args.force)
    print(f"wrote {len(combined):,} rows of {len(tables)} experiments ({combined['run'].nunique()} runs) "
          f"to {args.out}", file=sys.stderr)
    return 0
