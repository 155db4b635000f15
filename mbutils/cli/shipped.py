"""The shipped micro-benchmarks: micro list, show, export and (for maintainers) rebuild."""

from __future__ import annotations

import json
import sys

from mbutils.cli.common import _Formatter, _workers


def _shipped_parser(sub, common) -> None:
    p = sub.add_parser("micro", parents=[common], formatter_class=_Formatter,
                       help="the micro-benchmarks shipped with the package: list, show, export",
                       description="Micro-benchmarks of the shipped leaderboard bundles (GPQA, BBH, MMLU-Pro) at "
                       "two or three sizes, each built with the selector the book's paired noise rule finds most "
                       "reliable at that size (build-micro --selector auto). `score NAME LOGS` scores with one "
                       "directly; `micro export NAME --out DIR` writes it as a folder with lm-evaluation-harness "
                       "tasks for this installation.")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION",
                               help="list, show, export or rebuild the shipped micro-benchmarks")
    one = actions.add_parser("list", parents=[common], formatter_class=_Formatter,
                             help="one line per shipped micro-benchmark")
    one.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    one = actions.add_parser("show", parents=[common], formatter_class=_Formatter,
                             help="a shipped micro-benchmark's card in words (card.md)")
    one.add_argument("name", help="a name from `micro list`")
    one = actions.add_parser("export", parents=[common], formatter_class=_Formatter,
                             help="write a shipped micro-benchmark as a folder (as build-micro writes one)")
    one.add_argument("name", help="a name from `micro list`")
    one.add_argument("--out", default=None, help="folder to write (new or empty; default ./NAME)")
    one.add_argument("--force", action="store_true", help="replace an existing micro-benchmark folder at --out")
    one = actions.add_parser("rebuild", parents=[common], formatter_class=_Formatter,
                             help="choose and store the shipped micro-benchmarks again (maintainers, in a clone)")
    one.add_argument("--bundle", action="append", default=None, help="only this bundle (repeatable)")
    one.add_argument("--jobs", type=_workers, default=1, help="workers of the protocol runs (-1: all cores)")
    p.set_defaults(func=cmd_micro)


def cmd_micro(args) -> int:
    from mbutils.results import micro_shipped as shipped

    if args.action == "list":
        table = shipped.summary()
        if args.format == "json":
            sys.stdout.write(json.dumps(table.astype(object).where(table.notna(), None).to_dict("records"),
                                        indent=1) + "\n")
            return 0
        for row in table.itertuples():
            cover = "" if row.coverage != row.coverage else f", interval coverage {100 * row.coverage:.0f}%"
            mdad = "not reached" if row.mdad != row.mdad else f"{row.mdad:g} points"
            print(f"{row.name}: {row.k} of {row.n_items} items of {row.bundle}, {row.selector}; MDAD {mdad} "
                  f"(random sampling {row.random_mdad:g}){cover}")
        return 0
    if args.action == "show":
        sys.stdout.write((shipped.load_micro(args.name).path / "card.md").read_text(encoding="utf-8"))
        return 0
    if args.action == "export":
        path = shipped.export_shipped(args.name, args.out or shipped.record(args.name)["name"], force=args.force)
        print(f"wrote {path}: shipped micro-benchmark {args.name} (score it with `python -m mbutils score {path} "
              "LOGS`; its card is card.md)")
        return 0
    for done in shipped.rebuild(args.bundle, jobs=args.jobs, progress=False):
        print(f"{done['name']}: {done['selector']}, MDAD {done['mdad']:g} points. {done['reason']}")
    return 0
