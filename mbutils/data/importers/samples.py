"""The lm-evaluation-harness samples format as the importers read it, and the importers' options.

Both sources hold the same thing, lm-evaluation-harness *samples*: one record per
(model, task, document). Both are turned into a :class:`~mbutils.data.bundle.Benchmark` by one
code path: :mod:`~mbutils.data.importers.records` reads a file's records,
:mod:`~mbutils.data.importers.task_table` turns them into arrays and
:mod:`~mbutils.data.importers.assemble` stacks the files into the matrix.

Format followed (facts read from the lm-evaluation-harness 0.4 series source:
``evaluator.evaluate`` builds the records, ``loggers.EvaluationTracker.save_results_samples``
writes them; the Open LLM Leaderboard v2 pushed the same files to the hub):

- ``--log_samples --output_path OUT`` writes ``OUT/<model_name_sanitized>/`` holding
  ``results_<time>.json`` and one ``samples_<task>_<time>.jsonl`` per task, where
  ``<time>`` is ``datetime.isoformat()`` with ``:`` replaced by ``-``. The leaderboard's
  2024 runs named the samples files ``.json`` (still one record per line); the earliest
  0.4 tracker wrote one JSON array. All three are read.
- A record has ``doc_id``, ``doc``, ``target`` (written as ``str(target)``),
  ``arguments`` (``{"gen_args_<i>": {"arg_0": context, "arg_1": continuation}}``, one entry
  per request; earlier logs: a list of ``[context, continuation]``), ``resps``,
  ``filtered_resps``, ``filter``, ``metrics``, ``doc_hash``, ``prompt_hash``,
  ``target_hash``, and one field per metric (``acc``, ``acc_norm``, ``exact_match``, ...).
  A document appears once per filter. A record without ``filter`` is of the filter ``"none"`` (the
  harness's name for a task without filters; ``records.filter_name``). A filter asked for
  (``--filter``) that a file does not record is refused, naming the file and the filters it records
  (``records.watch_filters``; ``score`` reads its logs through it), never read as the one it records.
- For ``multiple_choice`` tasks ``filtered_resps`` holds one ``[loglikelihood, is_greedy]``
  pair per choice (as strings since the tracker sanitises lists, numbers before). The
  continuation scored for choice *i* is ``target_delimiter + choice_i``. ``acc`` is the
  argmax of the log-likelihoods, ``acc_norm`` the argmax of log-likelihood divided by
  ``len(choice)`` in characters (the choice string without the delimiter), ``acc_bytes``
  the same with the UTF-8 byte length.
- The results file holds ``model_name`` (tracker), ``config.model_args`` (e.g.
  ``pretrained=org/name,dtype=...``) and ``configs[task].target_delimiter``.
- Leaderboard details live in the dataset ``open-llm-leaderboard/<org>__<name>-details``:
  the same files under ``<org>__<name>/`` (main branch), and the hub's Parquet conversion
  of each config ``<org>__<name>__<task>`` under ``<config>/latest/*.parquet`` on the
  ``refs/convert/parquet`` branch, whose columns are the record fields above.

Mapping to the bundle (documented choices):

- correctness = the chosen metric field (must be 0/1 or a boolean per record);
- subtask = the task name (leaderboard: without its ``leaderboard_`` prefix; MMLU-Pro: the
  document's ``category``, the 14 categories the paper uses);
- item id = ``f"{task}:{doc_id}"``. ``doc_id`` is readable and stable for a fixed dataset;
  ``doc_hash`` is not used as the id (GPQA's options are shuffled when the harness builds
  its documents, so the hash can change with the run) but, when present, it is checked:
  two models with different hashes for one id saw different documents;
- model name = the results file's ``model_name``, else ``pretrained=`` (or ``peft=``,
  ``delta=``, ``model=``, ``path=``, ``engine=``, the harness's own order) in
  ``config.model_args``, else the folder name; leaderboard: the name asked for;
- confidence = probability of the gold answer = softmax over the per-choice scores at the
  gold index, the scores being the log-likelihoods, divided by the choice's character
  length for ``acc_norm`` (byte length for ``acc_bytes``), exactly the numbers the
  harness takes the argmax of. Gold index = the position of ``target`` among the choices
  (the harness's rule for string targets), else ``int(target)``; when both readings exist
  and differ, the one that agrees with the logged metric wins. Choices are the
  continuations with one leading ``target_delimiter`` removed (from the results file; the
  harness default ``" "`` when unknown). Generative tasks have no confidence."""

from __future__ import annotations

import re

from mbutils.base.errors import BundleError
from mbutils.base.validation import check_choice

SAMPLES_RE = re.compile(
    r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.jsonl?$")


RESULTS_RE = re.compile(r"^results_(?P<stamp>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.json$")


DEFAULT_DELIMITER = " "  # the harness's default target_delimiter


MODEL_ARG_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")


ITEM_POLICIES = ("same", "common")


DOC_CHECKS = ("error", "warn", "ignore")


LISTED = 5


#: Document ids beyond this are no index of a dataset (and would overflow the arrays).
MAX_DOC_ID = 2**53


def check_option(value, allowed: tuple, what: str) -> None:
    """Refuse a value not in ``allowed`` with a :class:`BundleError` naming the choices."""
    check_choice(value, allowed, what, BundleError)
