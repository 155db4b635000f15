"""The shipped micro-benchmarks: micro list, show, export and (for maintainers) rebuild."""

from __future__ import annotations

import json
import sys

from mbutils.base.tables import mdad_text, upper_bound_text
from mbutils.cli.common import Formatter, workers
from mbutils.micro import shipped


def shipped_parser(sub, common) -> None:
    """The ``micro`` command: list, show and export the shipped micro-benchmarks."""
    p = sub.add_parser("micro", parents=[common], formatter_class=Formatter,
                       help="the micro-benchmarks shipped with the package: list, show, export",
                       description="Micro-benchmarks of the shipped leaderboard bundles (GPQA, BBH, MMLU-Pro) at "
                       "two or three sizes, each built with the selector the book's paired noise rule finds most "
                       "reliable at that size (build-micro --selector auto). `score NAME LOGS` scores with one "
                       "directly; `micro export NAME --out DIR` writes it as a folder with lm-evaluation-harness "
                       "tasks for this installation. The package carries the SHA-256 of every shipped file "
                       "(hashes.json in each shipped folder) and every command checks them, and then the values: "
                       "shipped data edited after the package was built is refused, naming the file (reinstall "
                       "mbutils, or in a clone run `micro rebuild`). A shipped micro-benchmark is a folder "
                       "<bundle>-<k> of the package's shipped_micro/ holding shipped.json or hashes.json; any other "
                       "folder there is skipped.")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION",
                               help="list, show, export or rebuild the shipped micro-benchmarks")
    one = actions.add_parser("list", parents=[common], formatter_class=Formatter,
                             help="one line per shipped micro-benchmark",
                             description="One line per shipped micro-benchmark: its size, bundle and selector; its "
                             "MDAD (points) as measured in the card's protocol runs on the pool (with its 95% "
                             "interval); the MDAD the exact planner predicts for random sampling of the same k items "
                             "(a prediction, not a run: for a shipped random sample it may differ from the measured "
                             "one by the runs' noise); and, for an empirical interval, its coverage measured on "
                             "held-out models. --format json gives the same as mdad, ci_low, ci_high, runs, "
                             "random_mdad (the planner's prediction) and coverage.")
    one.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    one = actions.add_parser("show", parents=[common], formatter_class=Formatter,
                             help="a shipped micro-benchmark's card in words (card.md)")
    one.add_argument("name", help="a name from `micro list`")
    one = actions.add_parser("export", parents=[common], formatter_class=Formatter,
                             help="write a shipped micro-benchmark as a folder (as build-micro writes one)")
    one.add_argument("name", help="a name from `micro list`")
    one.add_argument("--out", default=None, help="folder to write (new or empty; default ./NAME)")
    one.add_argument("--force", action="store_true", help="replace an existing micro-benchmark folder at --out")
    one = actions.add_parser("rebuild", parents=[common], formatter_class=Formatter,
                             help="choose and store the shipped micro-benchmarks again (maintainers, in a clone)")
    one.add_argument("--bundle", action="append", default=None, help="only this bundle (repeatable)")
    one.add_argument("--jobs", type=workers, default=1, help="workers of the protocol runs (-1: all cores)")
    p.set_defaults(func=cmd_micro)


def cmd_micro(args) -> int:
    if args.action == "list":
        table = shipped.summary()
        if args.format == "json":
            sys.stdout.write(json.dumps(table.astype(object).where(table.notna(), None).to_dict("records"),
                                        indent=1) + "\n")
            return 0
        for row in table.itertuples():
            print(_list_line(row))
        return 0
    if args.action == "show":
        sys.stdout.write((shipped.shipped_folder(args.name).path / "card.md").read_text(encoding="utf-8"))
        return 0
    if args.action == "export":
        path = shipped.export_shipped(args.name, args.out or shipped.record(args.name)["name"], force=args.force)
        print(f"wrote {path}: shipped micro-benchmark {args.name} (score it with `python -m mbutils score {path} "
              "LOGS`; its card is card.md)")
        return 0
    for done in shipped.rebuild(args.bundle, jobs=args.jobs, progress=False):
        print(f"{done['name']}: {done['selector']}, MDAD {done['mdad']:g} points. {done['reason']}")
    return 0


def _list_line(row) -> str:
    """One shipped micro-benchmark: which MDAD was measured (and how) and which is the planner's prediction."""
    runs = row.runs if row.runs is not None and row.runs == row.runs else None
    measured = "no protocol run" if runs is None else f"measured in {int(runs)} protocol runs on the pool"
    if runs is not None and row.mdad == row.mdad:
        measured += f", 95% CI {mdad_text(row.ci_low)} to {upper_bound_text(row.ci_high)}"
    cover = "" if row.coverage != row.coverage else f"; interval coverage {100 * row.coverage:.0f}% on held-out models"
    return (f"{row.name}: {row.k} of {row.n_items} items of {row.bundle}, {row.selector}; "
            f"MDAD {mdad_text(row.mdad, unit=' points')} ({measured}); random sampling of {row.k} items: MDAD "
            f"{mdad_text(row.random_mdad, unit=' points')} (the exact planner's prediction){cover}")
