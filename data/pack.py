"""Pack the real result folders into this data/ folder, compactly and losslessly.

    python data/pack.py SOURCE_FOLDER          # e.g. the folder the bundles were delivered in

Every CSV file is stored gzip-compressed (``responses.csv`` -> ``responses.csv.gz``, level 9,
no timestamp, so packing twice gives the same bytes); JSON and text files are copied as
they are. Each folder gets a ``provenance.json``: where the data comes from, its licence,
what was derived and how, and for every file the SHA-256 and size of its *uncompressed*
bytes. ``tests/project/test_shipped_data.py`` decompresses every file and checks those hashes, so
the shipped copy is byte-for-byte the delivered one. The bundle reader reads ``.csv.gz``
files directly; nothing is ever unpacked on disk. The shipped-data section of
``data/README.md`` is rewritten from the provenance records.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: What we know of each delivered folder: its origin, its licence and what was derived.
SOURCES = {
    "gpqa": {
        "title": "GPQA (main), Open LLM Leaderboard v2 per-item correctness",
        "source": "the authors' extraction of the Open LLM Leaderboard v2 per-item results, "
                  "released with the code of Yauney, Warraich & Swayamdipta (2025)",
        "licence": "MIT",
        "derived": "0/1 correctness per model and item (item = gpqa_main_NNN, one subtask); "
                   "target_sets.json holds the paper's fixed target-model sets "
                   "(7b_instruct, 7b_base, 70b_instruct, 70b_base)",
    },
    "bbh-leaderboard": {
        "title": "BBH, Open LLM Leaderboard v2 per-item correctness",
        "source": "Open LLM Leaderboard v2 details as collected by the PredictaBoard project",
        "licence": "GPL-3.0 (the licence of the collecting repository)",
        "derived": "0/1 correctness of the latest run per model; item = subtask:doc_id over the "
                   "24 leaderboard BBH subtasks",
    },
    "mmlu-pro-leaderboard": {
        "title": "MMLU-Pro, Open LLM Leaderboard v2 per-item correctness",
        "source": "Open LLM Leaderboard v2 details as collected by the PredictaBoard project",
        "licence": "GPL-3.0 (the licence of the collecting repository)",
        "derived": "0/1 correctness of the latest run per model (5-shot log-likelihood scoring); "
                   "item = category:doc_id, doc_id = position in the test split; categories joined "
                   "from the test split in question-id order",
    },
    "musr-leaderboard": {
        "title": "MuSR, Open LLM Leaderboard v2 per-item correctness",
        "source": "Open LLM Leaderboard v2 details as collected by the PredictaBoard project",
        "licence": "GPL-3.0 (the licence of the collecting repository)",
        "derived": "0/1 correctness (acc_norm, the leaderboard's MuSR metric) of the latest run per model; "
                   "item = subtask:doc_id over the 3 leaderboard MuSR subtasks (murder_mysteries 250, "
                   "object_placements 256, team_allocation 250 documents)",
    },
    "math-hard-leaderboard": {
        "title": "MATH level 5 (MATH-Hard), Open LLM Leaderboard v2 per-item correctness",
        "source": "Open LLM Leaderboard v2 details as collected by the PredictaBoard project",
        "licence": "GPL-3.0 (the licence of the collecting repository)",
        "derived": "0/1 exact match (exact_match of the 4-shot generation, the leaderboard's MATH metric) of the "
                   "latest run per model; item = subtask:doc_id over the 7 leaderboard MATH-Hard subtasks (1,324 "
                   "level-5 problems); subtask beginner_algebra_hard is the leaderboard's algebra_hard, named as "
                   "the collecting repository names it",
    },
    "ifeval-leaderboard": {
        "title": "IFEval, Open LLM Leaderboard v2 per-prompt correctness",
        "source": "Open LLM Leaderboard v2 details as collected by the PredictaBoard project",
        "licence": "GPL-3.0 (the licence of the collecting repository)",
        "derived": "0/1 prompt-level strict accuracy (prompt_level_strict_acc, the metric the leaderboard reports "
                   "for IFEval and the one the collecting script reads per prompt) of the latest run per model; "
                   "item = ifeval:doc_id over the 541 prompts",
    },
    "mmlu-pro-tiger-lab": {
        "title": "MMLU-Pro, chain-of-thought outputs of TIGER-AI-Lab's evaluation",
        "source": "TIGER-AI-Lab/MMLU-Pro published evaluation results (eval_results)",
        "licence": "Apache-2.0",
        "derived": "5-shot chain-of-thought answers scored exactly (pred == answer; an unparsed "
                   "answer counts as wrong); an empty cell is an item missing from that model's "
                   "output file (three models miss items)",
    },
    "paper-results": {
        "title": "The paper's published result tables (not a bundle)",
        "source": "the processed results released with the code of Yauney, Warraich & "
                  "Swayamdipta (2025), the tables the paper's figures were drawn from",
        "licence": "MIT",
        "derived": "unchanged; per benchmark (gpqa, bbh, mmlu-pro, mmlu) an MDAD, an estimation "
                   "and a correctness table; values are fractions (see README.md in the folder)",
    },
}

PROVENANCE = "provenance.json"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pack_folder(source: Path, target: Path, about: dict) -> dict:
    """Write ``source``'s files into ``target`` (CSV gzipped) and return the provenance record."""
    files = {}
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.iterdir()):
        if not path.is_file():
            continue
        data = path.read_bytes()
        if path.suffix == ".csv":
            stored = path.name + ".gz"
            with open(target / stored, "wb") as out, \
                    gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=9, mtime=0) as gz:
                gz.write(data)
        else:
            stored = path.name
            shutil.copyfile(path, target / stored)
        files[path.name] = {"stored_as": stored, "bytes": len(data), "sha256": sha256(data)}
    record = {**kept_keys(target), **about, "files": files}
    if (target / "responses.csv.gz").is_file():
        record["content_hash"] = bundle_hash(target)
    (target / PROVENANCE).write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return record


#: Keys pack_folder computes itself; any other key of an existing provenance.json is kept as it is.
COMPUTED = ("files", "content_hash")


def kept_keys(target: Path) -> dict:
    """What an existing ``provenance.json`` in ``target`` records beyond what packing computes (``lm_eval``,
    ``answer_options`` and any key added since): re-packing must not drop what others wrote there."""
    path = target / PROVENANCE
    if not path.is_file():
        return {}
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise SystemExit(f"error: {path}: cannot read the existing provenance record ({err}); fix or remove it")
    if not isinstance(old, dict):
        raise SystemExit(f"error: {path}: the existing provenance record is not a JSON object; fix or remove it")
    return {key: value for key, value in old.items() if key not in COMPUTED}


def bundle_hash(folder: Path) -> str:
    """The bundle hash results are keyed by (``Benchmark.content_hash``; incomplete models dropped)."""
    from mbutils.data.bundle import load_bundle

    return load_bundle(folder, missing="drop_models").content_hash


START, END = "<!-- shipped-data:start (written by data/pack.py) -->", "<!-- shipped-data:end -->"


def shipped_table(root: Path = HERE) -> str:
    """The README's account of every shipped folder, rendered from the provenance records."""
    out = []
    for name in SOURCES:
        record = json.loads((root / name / PROVENANCE).read_text(encoding="utf-8"))
        stored = sum((root / name / f["stored_as"]).stat().st_size for f in record["files"].values())
        raw = sum(f["bytes"] for f in record["files"].values())
        out += [f"### `{name}`", "",
                f"- **What**: {record['title']}.",
                f"- **Source**: {record['source']}.",
                f"- **Licence**: {record['licence']}.",
                f"- **Derived**: {record['derived']}.",
                f"- **Stored**: {raw:,} bytes in {stored:,} ({len(record['files'])} files).",
                *([f"- **Bundle hash** (`Benchmark.content_hash`, the key results are cached by): "
                   f"`{record['content_hash']}`"] if "content_hash" in record else []),
                "", "| file | stored as | bytes | SHA-256 of the uncompressed file |", "|---|---|---|---|"]
        out += [f"| `{file}` | `{info['stored_as']}` | {info['bytes']:,} | `{info['sha256']}` |"
                for file, info in record["files"].items()]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def update_readme(root: Path = HERE) -> None:
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    readme.write_text(f"{head}{START}\n{shipped_table(root)}{END}{tail}", encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="folder holding the delivered folders (gpqa, ...)")
    args = parser.parse_args(argv)
    missing = [name for name in SOURCES if not (args.source / name).is_dir()]
    if missing:
        print(f"error: {args.source} lacks {', '.join(missing)}", file=sys.stderr)
        return 1
    for name, about in SOURCES.items():
        record = pack_folder(args.source / name, HERE / name, about)
        raw = sum(f["bytes"] for f in record["files"].values())
        stored = sum((HERE / name / f["stored_as"]).stat().st_size for f in record["files"].values())
        print(f"{name}: {len(record['files'])} files, {raw:,} bytes -> {stored:,} bytes")
    update_readme()
    return 0


if __name__ == "__main__":
    sys.exit(main())
