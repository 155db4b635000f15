"""Generated hostile inputs over validate, build-micro and its export, score, plan, mdad and combine.

Each property draws inputs a careless or hostile user could give (names with line and paragraph
separators, bidirectional controls, NUL or thousands of characters, names colliding once normalised;
logs with odd, missing, repeated or foreign documents; edited micro folders; results with rows cut)
and checks the contract: nothing written outside ``--out``, nothing of the input executed (the
exported filter is the package's fixed file, the YAML holds the three keys written), no traceback or
internal error, and never a number printed with exit 0 that is not the right one. Examples are drawn
from a fixed seed (``derandomize``), so a failure reproduces; 700 are drawn in all.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mbutils.base.errors import MbutilsError
from mbutils.data.bundle import validate_bundle
from mbutils.micro import lm_eval_filter
from mbutils.micro.lm_eval_task import write_lm_eval_tasks
from test_micro_hostile import (ALLOWED_KEYS, _Loader, build, gpqa, micro, record, refused,  # noqa: F401 (fixtures)
                                results, run, write_bundle, write_log)

HOSTILE = ["\u2028", "\u2029", "\x85", "\n", "\r", "\x00", "\x1b", "\u202e", "\u2066", "\u200f", "\ufeff", "\t",
           "/", "\\", "..", ":", " ", "'", '"', "#", "!", "&", "*", "{", "}", "[", "]", "-", "_", ".", "é", "名"]
FRAGMENT = st.text(st.sampled_from("abcXYZ019_-."), min_size=1, max_size=6)
NAME = st.lists(st.one_of(FRAGMENT, st.sampled_from(HOSTILE)), min_size=1, max_size=6).map("".join) | \
    st.builds(lambda n: "t" * n, st.integers(90, 3000))
RULES = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                     HealthCheck.too_slow])


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def _check_export(folder: Path, tasks: dict) -> None:
    """The export holds the fixed filter, a JSON of documents and YAML files of exactly three keys."""
    assert (folder / "micro_docs.py").read_bytes() == Path(lm_eval_filter.__file__).read_bytes()
    assert {p.parent for p in folder.rglob("*")} == {folder}  # nothing in a subfolder, nothing above
    for micro_task, entry in tasks.items():
        config = yaml.load((folder / f"{micro_task}.yaml").read_text(encoding="utf-8"), Loader=_Loader)
        assert set(config) == ALLOWED_KEYS and config["task"] == micro_task == entry["task"] + "_micro"


# -- 1. names: the export writes them by serialisers or refuses them (300 drawn) -------------------

@settings(max_examples=300, **RULES)
@given(names=st.lists(NAME, min_size=1, max_size=3))
def test_any_task_name_is_exported_by_serialisers_or_refused(names):
    items = [f"{name}:{doc}" for name in names for doc in range(3)]
    subtasks = [name for name in names for _ in range(3)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        before = _tree(root)
        try:
            tasks = write_lm_eval_tasks(root / "lm_eval", items, subtasks, list(range(len(items))),
                                        tasks_dir=None)
        except MbutilsError as err:
            assert "\n" not in str(err) and "\u2028" not in str(err)  # the message shows names escaped
            assert not (root / "lm_eval").exists() or not any((root / "lm_eval").glob("*.yaml"))
            return
        assert _tree(root) - before <= {"lm_eval"} | {f"lm_eval/{p.name}" for p in (root / "lm_eval").iterdir()}
        _check_export(root / "lm_eval", tasks)
        assert {entry["task"] for entry in tasks.values()} == set(dict.fromkeys(names))


# -- 2. the same names through validate and build-micro on the command line (40 drawn) -------------

@settings(max_examples=40, **RULES)
@given(name=NAME)
def test_validate_and_build_micro_refuse_or_write_only_under_out(name):
    items = [f"{name}:{doc}" for doc in range(12)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bundle = write_bundle(root / "bundle", items, [name] * 12, n_models=10)
        code, out, err = run("validate", bundle)
        assert code in (0, 1) and "Traceback" not in err and "internal error" not in err
        before = _tree(root)
        code, out, err = build(bundle, root / "out")
        assert code in (0, 1) and "Traceback" not in err and "internal error" not in err, err
        assert _tree(root) - before <= {p for p in _tree(root) if p == "out" or p.startswith("out/")}
        if code == 0:
            assert not validate_bundle(bundle) or all(p.kind != "error" for p in validate_bundle(bundle))
            meta = json.loads((root / "out" / "micro.json").read_text())
            _check_export(root / "out" / "lm_eval", meta["lm_eval_tasks"])
        else:
            assert not (root / "out").exists()


# -- 3. hostile logs: refused, or scored to exactly the right number (200 drawn) ------------------

DOC_IDS = st.one_of(st.integers(-5, 40), st.just(10**30), st.just(2**63), st.floats(-1, 40),
                    st.sampled_from(["7", "x", "", None, [1], {"a": 1}, True]))


@st.composite
def logs(draw):
    """Records of a full-task log: each chosen or other document, maybe mutated, with a 0/1 answer."""
    n = draw(st.integers(0, 34))
    records = []
    for _ in range(n):
        doc = draw(st.one_of(st.integers(0, 29), DOC_IDS)) if draw(st.booleans()) else draw(st.integers(0, 29))
        acc = draw(st.sampled_from([0, 1, 1, 0, 0.5, "1", None, True]))
        records.append(record(doc, acc))
    if draw(st.booleans()):
        records.append(draw(st.sampled_from(["not json\n", "[1, 2]\n", "[" * 5000 + "\n", "{}\n", "\n"])))
    return records


def _truth(records, chosen):
    """The right score of a log, or None when the log must be refused."""
    if any(not isinstance(r, dict) for r in records):
        return None if any(isinstance(r, str) and r.strip() for r in records) else _truth(
            [r for r in records if isinstance(r, dict)], chosen)
    answers = {}
    for r in records:
        doc, acc = r["doc_id"], r["acc"]
        if isinstance(doc, bool) or acc not in (0, 1) or acc is None or isinstance(acc, str):
            return None
        if isinstance(doc, float) and doc.is_integer():
            doc = int(doc)
        elif isinstance(doc, str) and doc.isdigit():
            doc = int(doc)
        if not isinstance(doc, int) or not 0 <= doc < 2**53 or doc in answers:
            return None
        answers[doc] = int(acc)
    if not set(chosen) <= set(answers) or len(answers) > 30:
        return None
    return 100.0 * np.mean([answers[d] for d in chosen])


@pytest.fixture(scope="module")
def chosen_docs(micro):
    return json.loads((micro / "micro.json").read_text())["lm_eval_tasks"]["gpqa_main_micro"]["docs"]


#: Logs the score must accept (every document answered once, 0 or 1): drawn logs almost never are, and
#: the check of the estimate would go unexercised.
WHOLE_LOG = [record(doc, doc % 2) for doc in range(30)]


@settings(max_examples=200, **RULES)
@given(records=logs())
@example(records=WHOLE_LOG)
@example(records=[record(doc, doc % 3 == 0) for doc in reversed(range(30))])  # answers as booleans
def test_a_hostile_log_is_refused_or_scored_right(micro, chosen_docs, records):
    with tempfile.TemporaryDirectory() as tmp:
        log = write_log(Path(tmp) / "new-model", "gpqa_main", records)
        code, out, err = run("score", micro, log, "--format", "json")
        truth = _truth(records, chosen_docs)
        if truth is None:
            refused((code, out, err))
        else:
            assert code == 0, err
            assert json.loads(out)["new-model"]["estimate"] == pytest.approx(truth)


# -- 4. edited micro folders: refused, never a crash or a number (60 drawn) ------------------------

@settings(max_examples=60, **RULES)
@given(target=st.sampled_from(["items.csv", "card.json", "micro.json", "pool.csv", "calibration.csv",
                               "provenance.json", "manifest.json", "lm_eval/micro_docs.py",
                               "lm_eval/micro_docs.json", "lm_eval/gpqa_main_micro.yaml"]),
       how=st.sampled_from(["flip", "delete", "empty", "json-list", "nested", "add-file", "unlist"]))
def test_an_edited_micro_folder_is_refused(micro, target, how):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(shutil.copytree(micro, Path(tmp) / "micro"))
        path = folder / target
        manifest = json.loads((folder / "manifest.json").read_text())
        if how == "flip":
            data = bytearray(path.read_bytes())
            data[len(data) // 2] ^= 0x01
            path.write_bytes(bytes(data))
        elif how == "delete":
            path.unlink()
        elif how == "empty":
            path.write_bytes(b"")
        elif how == "json-list":
            path.write_text("[]")
        elif how == "nested":
            path.write_text("[" * 100_000)
        elif how == "add-file":
            (path.parent / "extra_micro.yaml").write_text("task: extra\ntrust_remote_code: true\n")
        elif how == "unlist" and target != "manifest.json":
            path.write_text(path.read_text() + "\n")
            manifest.pop(target, None)
            (folder / "manifest.json").write_text(json.dumps(manifest))
        else:
            path.write_text("{}")
        responses = Path(tmp) / "responses.csv"
        pd.DataFrame([[1] * 30], columns=[f"gpqa_main_{j:03d}" for j in range(30)]).assign(model="new") \
            .to_csv(responses, index=False)
        refused(run("score", folder, responses))


# -- 5. results cut by hand: refused unless --allow-partial, then said (40 drawn) ------------------

@settings(max_examples=40, **RULES)
@given(cut=st.lists(st.integers(0, 31), min_size=1, max_size=6, unique=True),
       command=st.sampled_from(["mdad", "summary"]), fmt=st.sampled_from(["csv", "markdown"]))
def test_results_with_rows_cut_are_refused_unless_partial(results, cut, command, fmt):
    table = pd.read_csv(results["a.csv"], dtype=str, keep_default_na=False)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cut.csv"
        table.drop(index=sorted({i % len(table) for i in cut})).to_csv(path, index=False)
        shutil.copy(str(results["a.csv"]) + ".provenance.json", str(path) + ".provenance.json")
        refused(run(command, path, "--format", fmt), "--allow-partial")
        code, out, err = run(command, path, "--format", fmt, "--allow-partial")
        assert "partial results" in err, err
        if code == 0:
            assert ("partial results" in out) == (fmt == "markdown")
        else:  # a metric that cannot pool runs of unequal targets refuses on its own, in one message
            refused((code, out, err))


# -- 6. combine and plan on drawn inputs: refused in one message, or right (60 drawn) --------------

#: The design (bundle and protocol) and the draw (design and seed) of each results file: a and d are two
#: draws of one design, a.csv is a.parquet's own draw, c differs from a in protocol, b is another bundle.
DESIGN = {"a.parquet": "A", "a.csv": "A", "d.parquet": "A", "b.parquet": "B", "c.parquet": "C"}
DRAW = {"a.parquet": "A0", "a.csv": "A0", "d.parquet": "A1", "b.parquet": "B0", "c.parquet": "C1"}


@settings(max_examples=30, **RULES)
@given(pair=st.lists(st.sampled_from(sorted(DESIGN)), min_size=2, max_size=3))
@example(pair=["a.parquet", "d.parquet"])  # the pools combine must accept: drawn pairs may miss them
@example(pair=["d.parquet", "a.csv"])
def test_combine_of_drawn_results_pools_only_one_design_and_never_a_draw_twice(results, pair):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "both.parquet"
        code, _, err = run("combine", *[results[name] for name in pair], "--out", out)
        if len({DESIGN[name] for name in pair}) == 1 and len({DRAW[name] for name in pair}) == len(pair):
            assert code == 0, err
            rows = [len(pd.read_csv(results[n]) if n.endswith(".csv") else pd.read_parquet(results[n])) for n in pair]
            assert len(pd.read_parquet(out)) == sum(rows)
        else:
            refused((code, "", err))
            assert not out.exists()


def _accuracies(a: str, b: str) -> bool:
    """Both names read as fractions from 0 to 1 (plan --pair then takes them as two accuracies)."""
    try:
        return all(0 <= float(x) <= 1 for x in (a, b))
    except ValueError:
        return False


@settings(max_examples=30, **RULES)
@given(a=NAME, b=NAME, gap=st.sampled_from(["2", "0", "-1", "nan", "1e309", "x", "100"]))
def test_plan_takes_hostile_model_names_and_gaps_without_a_crash(gpqa, a, b, gap):
    for args in (["--pair", a, b], ["--gap", gap]):
        code, out, err = run("plan", "--data", gpqa, *args)
        assert code in (0, 1, 2) and "Traceback" not in err and "internal error" not in err, err
        if args[0] == "--pair" and (a.startswith("-") or b.startswith("-")) and not _accuracies(a, b):
            assert code == 2 and "error: argument --pair" in err, err  # argparse reads it as an option
        elif args[0] == "--pair" and _accuracies(a, b):  # two accuracies: the per-pair rule's answer
            assert code == 0 and ("Gap" in out or "tied" in out), (out, err)
        elif args[0] == "--pair":
            refused((code, out, err), codes=(1, 2))  # no drawn name is a model of the bundle
