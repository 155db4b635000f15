"""Micro-benchmarks for use: the plan, build-micro, score and audit commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.base.errors import MbutilsError, ResultsError
from mbutils.base.provenance import check_bundle
from mbutils.base.tables import mdad_text, render, upper_bound_text
from mbutils.cli.common import (BIN_WIDTH, MAX_RUNS, MISSING_CHOICES, SEED, THRESHOLD, Formatter, add_mdad_options,
                                add_missing, add_protocol, add_retired_option, as_number, bundle_folder_of,
                                check_results_out, check_target_set, count, number, size_list, whole_results, workers,
                                write_table)
from mbutils.data.bundle import find_bundle
from mbutils.data.datasets import load_benchmark
from mbutils.methods.protocol import Protocol
from mbutils.methods.selectors import make_selector
from mbutils.micro.choice import choice_table
from mbutils.micro.shipped import open_micro


#: How FOLDER_OR_NAME is read (mbutils.micro.shipped.open_micro).
_NAME_RULE = ("a shipped name is the shipped micro-benchmark unless the working folder holds a micro-benchmark "
              "folder of that name (one with manifest.json or micro.json), which then wins; a file or any other "
              "folder of that name does not shadow it; write ./NAME to mean the folder")


def micro_parsers(sub, common) -> None:
    """plan, build-micro, score and audit, in this order (the order of the commands' list)."""
    p = sub.add_parser("plan", parents=[common], formatter_class=Formatter,
                       help="how many items random sampling needs for a given gap and threshold")
    p.add_argument("--data", default=None, help="bundle name on the data path, synthetic-*, or a folder "
                   "(required unless --micro)")
    p.add_argument("--micro", default=None, metavar="FOLDER_OR_NAME",
                   help="with --pair: a micro-benchmark folder or shipped name (" + _NAME_RULE + "); the two "
                   "models may be new ones scored in --results-of logs (or one pool model): the probability this "
                   "micro-benchmark orders them correctly and how many more random items would reach --threshold")
    p.add_argument("--results-of", nargs="+", default=[], metavar="FILE",
                   help="with --micro: lm-eval samples_*.jsonl logs (or folders) or responses.csv of the new models")
    p.add_argument("--metric", default=None, help="with --micro: the lm-eval metric read (default: the bundle's)")
    p.add_argument("--gap", type=number("gap (points)", low=0, high=100, low_open=True), default=None,
                   help="accuracy gap in points (or give --pair)")
    p.add_argument("--pair", nargs=2, metavar=("MODEL_A", "MODEL_B"), default=None,
                   help="two accuracies (fractions, e.g. 0.40 0.43: the items a random subset needs), or one "
                        "pair of models of the bundle: the power of a random k-item subset to order them "
                   "(exact), and the smallest k reaching --threshold")
    p.add_argument("--threshold", type=THRESHOLD, default=0.8,
                   help="pairwise agreement the size must reach, in (0, 1]")
    add_retired_option(p, "--agreement", "--threshold", type=THRESHOLD)
    p.add_argument("--truth", choices=["seen", "full"], default="seen",
                   help="judge against the seen half (the paper's protocol) or all items")
    p.add_argument("--results", default=None,
                   help="results of an experiment on this bundle to compare selectors (default: cache)")
    p.add_argument("--allow-partial", action="store_true",
                   help="score results with runs or sizes missing (refused otherwise); the output says so")
    p.add_argument("--sizes", type=size_list, default=None,
                   help="sizes of the cached experiment to look up (default 10,25,50,100,200); with --pair: "
                   "the sizes to show (default a few up to N)")
    add_protocol(p, "the cached experiment to look up")
    p.add_argument("--bin-width", type=BIN_WIDTH, default=0.5, help="gap bin width in accuracy points (0.01-100)")
    p.add_argument("--tie-rule", choices=["paper", "exclude"], default="paper",
                   help="pairs tied on the truth: scored as the paper does, or left out")
    add_missing(p)
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser("build-micro", parents=[common], formatter_class=Formatter,
                       help="choose a micro-benchmark for use and write it as a folder",
                       description="Choose a k-item micro-benchmark from all items, learning from every model "
                       "of the bundle but those of --exclude-models, and write a folder: the items with their "
                       "weights, the estimator's state, provenance, the calibration of its interval "
                       "(cross-fitted held-out errors of the pool's models; none for random sampling, whose "
                       "interval is exact), for random_difference (a uniform sample read by the cross-fitted "
                       "difference estimator) the pool's 0/1 answers on every item, which its estimate reads "
                       "(pool_answers.csv), a reliability card (MDAD at this k from a protocol run, random "
                       "sampling's, share of the pool's pairs it separates, coverage of its interval on held-out "
                       "models) as card.json and in words as card.md, and lm-evaluation-harness tasks that run "
                       "only the chosen documents: <harness task>_micro per harness task the items come from "
                       "(as the bundle states them: items.csv columns lm_eval_task and doc_id, or its "
                       "provenance.json) and the group <benchmark>_micro, checked by the installed harness. "
                       "Written whole or not at all.")
    p.add_argument("--data", required=True, help="bundle name on the data path, synthetic-*, or a folder")
    p.add_argument("--selector", required=True,
                   help="a selector name (not an adaptive one; random_difference is written with the pool's answers, "
                   "random_regression is refused), or auto: the method the book's paired noise rule "
                   "finds most reliable at --k on the pool (lowest MDAD if beyond the noise lower than random "
                   "sampling's, else random sampling), with the reason printed and written in the card")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a selector parameter (repeatable), e.g. --param n_strata=5")
    p.add_argument("--k", type=count("k"), required=True, help="items in the micro-benchmark")
    p.add_argument("--out", required=True, help="folder to write (new or empty; see --force)")
    p.add_argument("--exclude-models", default=None, help="file with one model per line to hold out")
    p.add_argument("--seed", type=SEED, default=0, help="seed of the selection, folds and protocol run")
    p.add_argument("--runs", type=count("runs", high=MAX_RUNS), default=20, help="runs of the card's protocol")
    p.add_argument("--threshold", type=THRESHOLD, default=0.8, help="agreement the card's MDAD must reach")
    p.add_argument("--jobs", type=workers, default=1, help="workers of the protocol run (-1: all cores)")
    p.add_argument("--lm-eval-tasks", default=None,
                   help="folder of lm-eval task YAMLs to find the original tasks in (default: the installed "
                   "lm_eval, else <task>.yaml next to the exported YAML); a task it lacks, or a bundle with no "
                   "harness export, is an error")
    p.add_argument("--force", action="store_true", help="replace an existing non-empty --out")
    add_missing(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_build_micro)

    p = sub.add_parser("score", parents=[common], formatter_class=Formatter,
                       help="a new model's estimated accuracy, interval and distinguishable pool models",
                       description="Score new models with a micro-benchmark folder from their lm-eval "
                       "samples_*.jsonl logs (of the original task or of the exported micro tasks) or a "
                       "bundle-format responses.csv. Interval: for uniform random sampling (plain mean) the "
                       "exact finite-population (hypergeometric) interval; for random_difference a normal "
                       "interval from the cross-fitted residuals of the difference estimator (its own variance); "
                       "for every other selector an empirical interval from the cross-fitted held-out errors of the "
                       "pool's models (cross-fitted, CV+-like). Only the exact interval's coverage is guaranteed; "
                       "the others' is measured on held-out models (card.md). The output names the interval. A pool "
                       "model is distinguishable when the accuracies differ by at least the card's MDAD.")
    p.add_argument("folder", help="micro-benchmark folder written by build-micro, or the name of a shipped one "
                   "(python -m mbutils micro list): " + _NAME_RULE)
    p.add_argument("files", nargs="+", help="samples_*.jsonl files (or folders of them), or responses.csv files")
    p.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    p.add_argument("--level", type=number("level", low=0, high=1, low_open=True, high_open=True), default=0.9,
                   help="level of the interval, in (0, 1)")
    p.add_argument("--metric", default=None, help="lm-eval 0/1 metric read as correctness (default: the metric "
                   "the micro-benchmark's bundle was built on, e.g. acc_norm for the leaderboard's GPQA and BBH, "
                   "else acc); the output names the metric read")
    p.add_argument("--filter", default=None, help="for logs that record several filters, the one to read "
                   "(e.g. strict-match)")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("audit", parents=[common], formatter_class=Formatter,
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
    add_mdad_options(p, ["models", "pairs", "none"], "models")
    p.add_argument("--max-gap", type=number("max gap (points)", low=0, high=100, low_open=True), default=10.0,
                   help="widest gap shown in the curve")
    add_missing(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--out", default=None, help="also write the audit's results table (.parquet/.csv)")
    p.add_argument("--force", action="store_true", help="replace an existing --out")
    p.set_defaults(func=cmd_audit)


def _protocol_from(args):
    return Protocol(n_sources=args.sources, n_targets=args.targets, n_runs=args.runs, seed=args.seed,
                    target_set=getattr(args, "target_set", None))


def _results_of(bench, path: str, args) -> pd.DataFrame:
    """A results table given with --results, refused when another bundle produced it."""
    results = whole_results(path, args)
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


def _plan_new_pair(args) -> int:
    """plan --micro M --pair A B [--results-of LOGS]: two scored models, new or from the pool."""
    from mbutils.micro.planning_new_pair import format_new_pair, new_pair_power

    if args.pair is None or args.gap is not None or args.data is not None:
        raise ResultsError("--micro goes with --pair MODEL_A MODEL_B (and --results-of their logs), not with --gap "
                           "or --data (the micro-benchmark names its bundle)")
    folder = open_micro(args.micro)
    power = new_pair_power(folder, args.pair[0], args.pair[1], args.results_of, threshold=args.threshold,
                           metric=args.metric)
    sys.stdout.write(format_new_pair(power))
    return 0


def cmd_plan(args) -> int:
    from mbutils.evaluate.planning import cached_results, format_pair_power, format_plan, pair_power, plan_table

    if args.micro is not None:
        return _plan_new_pair(args)
    if args.results_of or args.metric is not None:
        raise ResultsError("--results-of and --metric go with --micro (a micro-benchmark and new models' logs)")
    if args.gap is not None and args.pair is not None:
        raise ResultsError("give either --gap (pairs of a gap bin) or --pair (two models, or two accuracies)")
    accuracies = _as_accuracies(args.pair)
    bench = load_benchmark(args.data, missing=MISSING_CHOICES[args.missing]) if args.data is not None else None
    if accuracies is not None and not (bench is not None and set(args.pair) <= set(map(str, bench.models))):
        # two accuracies (not two models of the bundle): the per-pair rule's sizes, the bundle's size if given
        from mbutils.evaluate.planning_accuracies import accuracy_pair, format_accuracy_pair

        n_items = bench.n_items if bench is not None else None
        sys.stdout.write(format_accuracy_pair(accuracy_pair(*accuracies, n_items=n_items, threshold=args.threshold)))
        return 0
    if args.data is None:
        raise ResultsError("give --data (a bundle), or --pair with two accuracies (e.g. --pair 0.40 0.43), or "
                           "--micro with --pair for two scored models")
    if (args.gap is None) == (args.pair is None):
        raise ResultsError("give either --gap (pairs of a gap bin) or --pair MODEL_A MODEL_B (one pair of models)")
    if args.results is not None and not args.results.strip():
        raise ResultsError("--results is empty; give a results file (.parquet or .csv), or leave the option out")
    if args.pair is not None:
        power = pair_power(bench, args.pair[0], args.pair[1], sizes=args.sizes, threshold=args.threshold)
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
    plan = plan_table(bench, args.gap, args.threshold, results, truth=args.truth, protocol=protocol,
                      bin_width=args.bin_width, tie_rule=args.tie_rule)
    sys.stdout.write(format_plan(plan))
    if results is None:
        print("(no cached experiments for this bundle and protocol: run `python -m mbutils experiment` "
              "with the same settings to compare selectors)", file=sys.stderr)
    return 0


def _as_accuracies(pair) -> tuple[float, float] | None:
    """--pair's two values as accuracies (fractions from 0 to 1), or None when they are model names."""
    if pair is None:
        return None
    values = [as_number(text.strip()) for text in pair]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return None
    if not all(0 <= v <= 1 for v in values):
        raise ResultsError(f"--pair {pair[0]} {pair[1]}: two accuracies are fractions from 0 to 1 (e.g. 0.40 0.43)")
    return float(values[0]), float(values[1])


def _param_value(text: str):
    """A --param value: a number, True/False/None, or the text itself."""
    value = as_number(text.strip())
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
    from mbutils.micro.folder import check_out
    from mbutils.micro.build import build_micro

    try:
        bundle_folder = find_bundle(args.data)
    except MbutilsError:
        bundle_folder = None  # a synthetic stand-in: no folder to protect
    check_out(args.out, bundle_folder, args.force)
    if args.selector.strip().lower() == "auto":
        if args.param:
            raise ResultsError("--param does not go with --selector auto (it runs each candidate with its defaults)")
        selector = "auto"
    else:
        selector = make_selector(args.selector, **_params(args.param))
    exclude = _read_model_list(args.exclude_models) if args.exclude_models else []
    if args.lm_eval_tasks is not None and not Path(args.lm_eval_tasks).is_dir():
        raise MbutilsError(f"--lm-eval-tasks {args.lm_eval_tasks}: no such folder of lm-eval task configs")
    bench = load_benchmark(args.data, missing=MISSING_CHOICES[args.missing])
    built = build_micro(bench, selector, args.k, seed=args.seed, exclude=exclude, runs=args.runs,
                        threshold=args.threshold, jobs=args.jobs, progress=not args.quiet, out=args.out,
                        force=args.force, lm_eval_tasks=args.lm_eval_tasks)
    card = built.card
    if card.protocol is None:
        reliability = f"no reliability card: {card.note}"
    else:
        reliability = (f"MDAD at k = {built.k}: {mdad_text(card.mdad, unit=' points')} (95% CI "
                       f"{mdad_text(card.ci_low)} to {upper_bound_text(card.ci_high)}; measured in "
                       f"{card.protocol['n_runs']} protocol runs on the pool); random sampling of {built.k} items: MDAD "
                       f"{mdad_text(card.random_mdad, unit=' points')} (the exact planner's prediction)"
                       + (f"; note: {card.note}" if card.note else ""))
    if card.choice:
        print(f"selector auto: {card.choice['reason']} The candidates:")
        print(render(choice_table(card.choice).round(1), "markdown"))
    print(f"wrote {built.path}: {built.k} items of {bench.name} chosen by {built.selector} "
          f"(pool of {len(built.pool)} models); {reliability}")
    print(_export_line(built.path))
    return 0


def _export_line(path: Path) -> str:
    """One line on the folder's lm-eval export: the group to run and the metric, or why there is none."""
    meta = json.loads((Path(path) / "micro.json").read_text(encoding="utf-8"))
    group = meta.get("lm_eval_group")
    if not group:
        return f"no lm-eval export: {meta.get('lm_eval_note') or 'none'}"
    line = (f"lm-eval: run group {group['name']} ({len(group['tasks'])} task(s)) with --include_path "
            f"{Path(path) / 'lm_eval'}; metric {group['metric']}; {meta.get('lm_eval_check')}")
    if group.get("unresolved"):
        line += f"; original YAML not found for {', '.join(group['unresolved'][:3])} (see card.md)"
    return line


def cmd_score(args) -> int:
    from mbutils.micro.scoring import format_scores, score

    folder = open_micro(args.folder)
    table = score(folder, args.files, level=args.level, metric=args.metric, log_filter=args.filter)
    sys.stdout.write(format_scores(table, folder, args.format, args.metric))
    return 0


def cmd_audit(args) -> int:
    from mbutils.evaluate.auditing import audit, format_audit, read_items, read_weights

    if args.out is not None:
        check_results_out(args.out, [args.items, args.weights or None, bundle_folder_of(args.data)], args.force)
    check_target_set(args.target_set)
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
        write_table(report.results, args.out, args.force)
    return 0
