"""The example command: small offline examples to try the package's loops on."""

from __future__ import annotations

from mbutils.cli.common import Formatter


def example_parser(sub, common) -> None:
    """``example harness --out DIR``: the offline lm-evaluation-harness loop's materials."""
    p = sub.add_parser("example", parents=[common], formatter_class=Formatter,
                       help="write a small offline example to try a loop on (example harness --out DIR)",
                       description="Write a small example into a new folder. `example harness --out DIR`: a "
                       "60-question multiple-choice arithmetic benchmark as JSON lines "
                       "(data/arithmetic_questions.jsonl), its lm-evaluation-harness task "
                       "(tasks/arithmetic_questions.yaml: dataset_path json, data_files), and a bundle of the 0/1 "
                       "answers of 30 synthetic models on it (toy-arithmetic/, whose items.csv states each item's "
                       "harness task and document), so that build-micro, lm_eval --model dummy and score run "
                       "without the network, from DIR, in about a minute; it prints the commands (also in "
                       "DIR/example.json). The harness is the package's extra: pip install \"mbutils[harness]\".")
    actions = p.add_subparsers(dest="example", required=True, metavar="EXAMPLE", help="harness")
    one = actions.add_parser("harness", parents=[common], formatter_class=Formatter,
                             help="a local benchmark, its bundle and its lm-eval task: build-micro, lm_eval and "
                             "score offline")
    one.add_argument("--out", required=True, help="folder to write (new or empty; see --force)")
    one.add_argument("--force", action="store_true", help="replace an earlier example folder at --out")
    p.set_defaults(func=cmd_example)


def cmd_example(args) -> int:
    from mbutils.micro.example import BUNDLE, COMMANDS, DATA, N_MODELS, TASK, questions, write_harness_example

    path = write_harness_example(args.out, force=args.force)
    print(f"wrote {path}: {len(questions())} multiple-choice questions ({DATA}), their lm-eval task {TASK} "
          f"(tasks/{TASK}.yaml) and the answers of {N_MODELS} synthetic models ({BUNDLE}/, a bundle). Run the loop "
          "offline, from that folder (lm_eval is the harness: pip install \"mbutils[harness]\"):")
    print(f"  cd {path}")
    for command in COMMANDS:
        print(f"  {command}")
    return 0
