"""Cost per model of growing a leaderboard bundle with ``import leaderboard`` (not a test).

    python benchmarks/bench_import.py [--models 4] [--benchmark bbh|mmlu-pro|both] [--tmp DIR]

The hub cannot be reached from every machine, so download time is not measured. Instead
the script writes, in a temporary folder, Open LLM Leaderboard v2 details in the real raw
layout (``<org>__<name>-details/<org>__<name>/samples_<task>_<time>.json`` plus
``results_<time>.json``, records as ``tests/fixtures/importer_fixtures.py`` writes them)
at full size: BBH's 24 subtasks (5,761 documents, each subtask with its harness choices)
and MMLU-Pro's 12,032 documents in 14 categories with 10 options. Assumption: a record's
prompt is ~3,000 characters for BBH (3-shot) and ~4,000 for MMLU-Pro (5-shot), filler
text, logged once per choice in ``arguments`` as the harness does. It then times
``import_leaderboard`` (``LocalSource``, ``progress=False``) on 1 and on N models; the
per-model figures are the slope (t_N - t_1) / (N - 1). The files were just written, so
they are read from the page cache: the times are parse + assemble, not disk reads. Bundle
bytes per model: how much ``responses.csv`` (and ``confidence.csv``, which the importer
derives from the log-likelihoods) grow per model as ``save_bundle`` writes them, plain and
gzipped (level 9, as ``data/pack.py`` stores them). Times are wall clock and CPU time
(they differ when the machine is busy). The temporary folder is removed at the end.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import resource
import shutil
import string
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mbutils.data.bundle import CONFIDENCE, RESPONSES, save_bundle
from mbutils.data.importers import LocalSource, import_leaderboard, leaderboard_benchmark

STAMP = "2024-06-26T15-48-21.123456"
PROMPT_CHARS = {"bbh": 3000, "mmlu-pro": 4000}     # assumed mean prompt length (few-shot examples + question)
QUESTION_CHARS = {"bbh": 400, "mmlu-pro": 350}     # of which the document's own question text
OPTION_CHARS = 30                                  # MMLU-Pro: mean length of one option's text
AB = [f"({c})" for c in string.ascii_uppercase]
# BBH subtask -> (documents, choices), the choices as in the harness's leaderboard bbh_mc task files.
BBH = {
    "boolean_expressions": (250, ["False", "True"]), "causal_judgement": (187, ["Yes", "No"]),
    "date_understanding": (250, AB[:6]), "disambiguation_qa": (250, AB[:3]),
    "formal_fallacies": (250, ["valid", "invalid"]), "geometric_shapes": (250, AB[:11]),
    "hyperbaton": (250, AB[:2]), "logical_deduction_five_objects": (250, AB[:5]),
    "logical_deduction_seven_objects": (250, AB[:7]), "logical_deduction_three_objects": (250, AB[:3]),
    "movie_recommendation": (250, AB[:6]), "navigate": (250, ["Yes", "No"]),
    "object_counting": (250, [str(i) for i in range(19)]), "penguins_in_a_table": (146, AB[:5]),
    "reasoning_about_colored_objects": (250, AB[:18]), "ruin_names": (250, AB[:6]),
    "salient_translation_error_detection": (250, AB[:6]), "snarks": (178, AB[:2]),
    "sports_understanding": (250, ["yes", "no"]), "temporal_sequences": (250, AB[:4]),
    "tracking_shuffled_objects_five_objects": (250, AB[:5]),
    "tracking_shuffled_objects_seven_objects": (250, AB[:7]),
    "tracking_shuffled_objects_three_objects": (250, AB[:3]), "web_of_lies": (250, ["Yes", "No"]),
}
MMLU_PRO = {"biology": 717, "business": 789, "chemistry": 1132, "computer science": 410, "economics": 844,
            "engineering": 969, "health": 818, "history": 381, "law": 1101, "math": 1351, "other": 924,
            "philosophy": 499, "physics": 1299, "psychology": 798}


@dataclass
class Task:
    """One samples file's documents, with each record's model-independent JSON pre-serialised."""

    name: str
    delimiter: str
    metric: str
    lengths: np.ndarray       # (choices,) characters of each choice: the acc_norm divisor
    gold: np.ndarray          # (documents,) gold index
    heads: list[str]          # '{"doc_id": .., "doc": .., "target": .., "arguments": ..'
    tails: list[str]          # ', "filter": .., "metrics": .., hashes, "<metric>": '
    prompt_chars: int = 0
    field_bytes: dict | None = None


class Filler:
    """Slices of a long random-word text: stands in for the few-shot prompts and questions."""

    def __init__(self, rng: np.random.Generator, n_words: int = 300_000):
        letters = np.array(list(string.ascii_lowercase))
        vocab = ["".join(rng.choice(letters, k)) for k in rng.integers(2, 10, size=3000)]
        words = rng.choice(vocab, n_words)
        seps = np.where(rng.random(n_words) < 0.06, "\n", " ")
        self.text = "".join(w + s for w, s in zip(words.tolist(), seps.tolist()))
        self.rng = rng

    def __call__(self, n: int) -> str:
        start = int(self.rng.integers(0, len(self.text) - n))
        return self.text[start:start + n]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def make_task(name: str, metric: str, delimiter: str, choices: list[str], docs_and_prompts) -> Task:
    heads, tails, gold, chars = [], [], [], 0
    fields = {"doc": 0, "arguments": 0, "resps + filtered_resps": 0, "other": 0}
    for doc_id, (doc, context, target, g) in enumerate(docs_and_prompts):
        doc_json = json.dumps(doc, ensure_ascii=False)
        args_json = json.dumps({f"gen_args_{i}": {"arg_0": context, "arg_1": delimiter + c}
                                for i, c in enumerate(choices)}, ensure_ascii=False)
        head = f'{{"doc_id": {doc_id}, "doc": {doc_json}, "target": {json.dumps(target)}, "arguments": {args_json}'
        tail = (f', "filter": "none", "metrics": ["{metric}"], '
                f'"doc_hash": "{sha(json.dumps(doc, indent=2, ensure_ascii=False))}", '
                f'"prompt_hash": "{sha(context)}", "target_hash": "{sha(target)}", "{metric}": ')
        heads.append(head)
        tails.append(tail)
        gold.append(g)
        chars += len(context)
        fields["doc"] += len(doc_json.encode())
        fields["arguments"] += len(args_json.encode())
        fields["other"] += len((head + tail).encode()) - len(doc_json.encode()) - len(args_json.encode())
    return Task(name, delimiter, metric, np.array([len(c) for c in choices], dtype=float), np.array(gold),
                heads, tails, chars, fields)


def bbh_tasks(fill: Filler, rng: np.random.Generator) -> list[Task]:
    tasks = []
    for full in leaderboard_benchmark("bbh").tasks:
        sub = full.removeprefix("leaderboard_bbh_")
        n, choices = BBH[sub]
        shots = "".join(f"Q: {fill(PROMPT_CHARS['bbh'] // 3 - 140)}\nA: {choices[0]}\n\n" for _ in range(3))
        prefix = f"A {sub.replace('_', ' ')} task.\n\n" + shots
        prefix = prefix[: PROMPT_CHARS["bbh"] - QUESTION_CHARS["bbh"]]

        def documents():
            for _ in range(n):
                g = int(rng.integers(len(choices)))
                question = fill(int(QUESTION_CHARS["bbh"] * rng.uniform(0.5, 1.5)))
                doc = {"input": question, "target": choices[g]}
                yield doc, f"{prefix}Q: {question}\nA:", choices[g], g

        tasks.append(make_task(full, "acc_norm", " ", choices, documents()))
    return tasks


def mmlu_pro_tasks(fill: Filler, rng: np.random.Generator) -> list[Task]:
    letters = list(string.ascii_uppercase[:10])
    budget = PROMPT_CHARS["mmlu-pro"] - QUESTION_CHARS["mmlu-pro"] - 10 * (OPTION_CHARS + 4) - len("Answer:")
    prefixes = {cat: (f"The following are multiple choice questions (with answers) about {cat}.\n\n"
                      + fill(budget))[:budget] + "\n\n" for cat in MMLU_PRO}

    def documents():
        qid = 70
        for cat, n in MMLU_PRO.items():
            for _ in range(n):
                g = int(rng.integers(10))
                question = fill(int(QUESTION_CHARS["mmlu-pro"] * rng.uniform(0.5, 1.5)))
                options = [fill(int(OPTION_CHARS * rng.uniform(0.3, 1.7))) for _ in range(10)]
                doc = {"question_id": qid, "question": question, "options": options, "answer": letters[g],
                       "answer_index": g, "cot_content": "", "category": cat, "src": f"ori_mmlu-{cat}"}
                text = question + "\n" + "".join(f"{letters[i]}. {o}\n" for i, o in enumerate(options))
                qid += 1
                yield doc, prefixes[cat] + text + "Answer:", letters[g], g

    return [make_task("leaderboard_mmlu_pro", "acc", "", letters, documents())]


def model_lines(task: Task, skill: float, rng: np.random.Generator) -> tuple[list[str], int]:
    """One model's records; correctness planted from a 1-parameter logistic model."""
    n, k = len(task.gold), len(task.lengths)
    div = task.lengths if task.metric == "acc_norm" else np.ones(k)
    lls = -rng.gamma(2.0, 2.0, size=(n, k))
    rows = np.arange(n)
    scores = lls / div
    others = np.where(np.arange(k) == task.gold[:, None], -np.inf, scores).max(axis=1)
    want = rng.random(n) < 1.0 / (1.0 + np.exp(-(skill - rng.normal(size=n))))
    factor = rng.uniform(0.3, 0.9, size=n)  # others are negative: x * 0.5 is above x, x / 0.5 below
    lls[rows, task.gold] = div[task.gold] * np.where(want, others * factor, others / factor)
    pred = np.argmax(lls / div, axis=1)
    value = pred == task.gold
    lines = []
    for i in range(n):
        pairs = [[str(ll), str(j == pred[i])] for j, ll in enumerate(lls[i].tolist())]
        lines.append(f'{task.heads[i]}, "resps": {json.dumps([[p] for p in pairs])}, '
                     f'"filtered_resps": {json.dumps(pairs)}{task.tails[i]}{float(value[i])}}}\n')
    return lines, int(value.sum())


def write_details(root: Path, models: list[str], tasks: list[Task], rng: np.random.Generator):
    """The details repos of ``models``; returns bytes per model and planted correct counts."""
    sizes, planted = [], []
    for model in models:
        stem = model.replace("/", "__")
        folder = root / f"{stem}-details" / stem
        folder.mkdir(parents=True)
        info = {"model_name": model, "config": {"model": "hf", "model_args": f"pretrained={model}"},
                "results": {t.name: {"alias": t.name} for t in tasks},
                "configs": {t.name: {"task": t.name, "output_type": "multiple_choice",
                                     "target_delimiter": t.delimiter} for t in tasks}}
        (folder / f"results_{STAMP}.json").write_text(json.dumps(info, indent=2) + "\n")
        skill, correct = rng.normal(), 0
        for task in tasks:
            lines, right = model_lines(task, skill, rng)
            correct += right
            if model == models[0]:
                task.field_bytes["resps + filtered_resps"] = sum(len(x) for x in lines) - sum(
                    len(h) + len(t) for h, t in zip(task.heads, task.tails))
            with open(folder / f"samples_{task.name}_{STAMP}.json", "w", encoding="utf-8") as f:
                f.writelines(lines)
        sizes.append(sum(p.stat().st_size for p in folder.iterdir()))
        planted.append(correct)
    return sizes, planted


def timed_import(models: list[str], benchmark: str, root: Path):
    wall, cpu = time.perf_counter(), time.process_time()
    bench = import_leaderboard(models, benchmark, source=LocalSource(root), progress=False)
    return bench, time.perf_counter() - wall, time.process_time() - cpu


def bundle_bytes(bench, folder: Path) -> dict[str, tuple[int, int, int]]:
    """file -> (plain bytes, gzip bytes, plain bytes of the header line)."""
    save_bundle(bench, folder)
    out = {}
    for name in (RESPONSES, CONFIDENCE):
        path = folder / name
        if path.exists():
            data = path.read_bytes()
            out[name] = (len(data), len(gzip.compress(data, 9, mtime=0)), data.index(b"\n") + 1)
    return out


def per_model(one, many, n: int, header_gz: int) -> tuple[float, float]:
    """Bytes one more model adds to a file: the slope from 1 to n models (n = 1: the file minus its header)."""
    if n > 1:
        return (many[0] - one[0]) / (n - 1), (many[1] - one[1]) / (n - 1)
    return one[0] - one[2], one[1] - header_gz


def run(benchmark: str, n_models: int, base: Path, seed: int) -> dict:
    rng = np.random.default_rng([seed, len(benchmark)])
    root = base / benchmark
    t0 = time.perf_counter()
    fill = Filler(rng)
    tasks = bbh_tasks(fill, rng) if benchmark == "bbh" else mmlu_pro_tasks(fill, rng)
    models = [f"bench-org/model-{i}" for i in range(n_models)]
    sizes, planted = write_details(root, models, tasks, rng)
    n_items = sum(len(t.gold) for t in tasks)
    print(f"{benchmark}: wrote details of {n_models} models x {n_items} documents "
          f"({sum(sizes) / 2**20:,.0f} MiB) in {time.perf_counter() - t0:.1f} s; mean prompt "
          f"{sum(t.prompt_chars for t in tasks) / n_items:,.0f} chars (assumed ~{PROMPT_CHARS[benchmark]:,})")
    fields = {k: sum(t.field_bytes[k] for t in tasks) for k in tasks[0].field_bytes}
    total = sum(fields.values())
    print(f"  samples bytes of one model by field: "
          + ", ".join(f"{k} {v / total:.1%}" for k, v in sorted(fields.items(), key=lambda kv: -kv[1])))

    one, wall1, cpu1 = timed_import(models[:1], benchmark, root)
    many, wall, cpu = (one, wall1, cpu1) if n_models == 1 else timed_import(models, benchmark, root)
    got = many.correct.sum(axis=1).tolist()
    if got != planted or many.n_items != n_items:
        raise SystemExit(f"{benchmark}: the import disagrees with the generated details "
                         f"({got} correct vs {planted} planted)")
    print(f"  import 1 model: wall {wall1:.2f} s cpu {cpu1:.2f} s; {n_models} models: wall {wall:.2f} s "
          f"cpu {cpu:.2f} s; confidences {'derived' if many.has_confidence else 'absent'}")
    b1, bn = bundle_bytes(one, base / f"{benchmark}-b1"), bundle_bytes(many, base / f"{benchmark}-bn")
    row = {"benchmark": benchmark, "items": n_items, "details": np.mean(sizes),
           "wall": (wall - wall1) / (n_models - 1) if n_models > 1 else wall1,
           "cpu": (cpu - cpu1) / (n_models - 1) if n_models > 1 else cpu1}
    for name in (RESPONSES, CONFIDENCE):
        if name in b1:
            header = Path(base / f"{benchmark}-b1" / name).read_bytes()[: b1[name][2]]
            row[name] = per_model(b1[name], bn[name], n_models, len(gzip.compress(header, 9, mtime=0)))
    for path in (root, base / f"{benchmark}-b1", base / f"{benchmark}-bn"):
        shutil.rmtree(path, ignore_errors=True)
    return row


def print_table(rows: list[dict], n_models: int) -> None:
    slope = f"slope 1->{n_models} models" if n_models > 1 else "1 model"
    print(f"\nper model ({slope}); bundle bytes plain / gzip -9")
    print(f"{'benchmark':10s} {'items':>6s} {'details MB':>10s} {'wall s':>7s} {'cpu s':>6s} "
          f"{'responses.csv B':>17s} {'confidence.csv B':>18s}")
    for r in rows:
        conf = r.get(CONFIDENCE)
        print(f"{r['benchmark']:10s} {r['items']:6d} {r['details'] / 1e6:10.1f} {r['wall']:7.2f} {r['cpu']:6.2f} "
              f"{r[RESPONSES][0]:8,.0f} /{r[RESPONSES][1]:7,.0f} "
              + (f"{conf[0]:9,.0f} /{conf[1]:7,.0f}" if conf else f"{'-':>18s}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=4, help="models per benchmark (default 4)")
    parser.add_argument("--benchmark", choices=["bbh", "mmlu-pro", "both"], default="both")
    parser.add_argument("--tmp", default=None, help="where to write the temporary details (default: the system's)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.models < 1:
        parser.error("--models must be at least 1")
    base = Path(tempfile.mkdtemp(prefix="bench_import-", dir=args.tmp))
    try:
        names = ["bbh", "mmlu-pro"] if args.benchmark == "both" else [args.benchmark]
        rows = [run(name, args.models, base, args.seed) for name in names]
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print_table(rows, args.models)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory of this process: {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
