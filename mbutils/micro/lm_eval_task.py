"""Export a micro-benchmark as lm-evaluation-harness tasks: the original task, only the chosen documents.

lm-eval (0.4 series) task configs are YAML files. ``include: PATH`` loads another config
(PATH absolute, or relative to the including file's folder) and the including file's keys
override its keys; ``process_docs: !function MODULE.NAME`` names a function in
``MODULE.py`` next to the YAML file (else in an importable module of that name), applied to each
split's ``datasets.Dataset`` before documents are numbered, so a log's ``doc_id`` is the position in
the processed split.

For each lm-eval task the micro-benchmark draws from, :func:`write_lm_eval_tasks` writes, through a
YAML serialiser (no text of a bundle is templated into them):

* ``<task>.original_yaml``: the original task's configuration resolved into the folder, its includes
  merged as the harness merges them (:func:`merged_config`), without the keys that name it in the
  harness's index (``task``, ``tag``, ``group``). Its Python functions are named where the harness
  finds them on any installation: a function of the harness's own task code by its import path
  (``!function lm_eval.tasks.leaderboard.gpqa.utils.process_docs``, resolved by the pinned lm-eval),
  any other copied into ``functions/`` and named ``!function micro_docs.function_<j>``. It is not a
  ``.yaml`` file, so the harness never indexes it as a task of its own;
* ``<task>_micro.yaml``::

    include: <task>.original_yaml
    task: <task>_micro
    process_docs: !function micro_docs.process_<i>

plus ``micro_docs.json`` (the chosen documents, by a JSON serialiser) and ``micro_docs.py``, a
fixed copy of :mod:`mbutils.micro.lm_eval_filter`, which keeps those documents and stamps each
with its original index (``mbutils_doc_id``) and content fingerprint; :mod:`mbutils.micro.scoring`
matches logs by them. Every path in the folder is relative: a folder built on one machine runs on
another with the same lm-eval (the manifest seals content, not location).

The harness task and document of each item are what the bundle states
(:mod:`mbutils.data.bundle.harness`: items.csv columns ``lm_eval_task`` and ``doc_id``, or
provenance.json's ``lm_eval``, as the shipped leaderboard bundles give ``leaderboard_gpqa_main``,
``leaderboard_bbh_<subtask>`` and ``leaderboard_mmlu_pro``); a bundle that states nothing has them
read off its item ids: ``task:doc_id`` (the lm-eval importer's ids), else ``<subtask>_<digits>``.
A task name that becomes a file name must match :data:`TASK_NAME`; two that would be one file on a
case-insensitive file system, or one name once ``-`` and ``.`` read as ``_``, are refused.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import shutil
from pathlib import Path

import numpy as np
import yaml

from mbutils.base.errors import BundleError, NotDocuments
# The task-name rule is the bundle's (validate applies it too); the export uses it from there.
from mbutils.data.bundle.tasknames import (SUFFIX, TASK_NAME, check_distinct, check_exportable,  # noqa: F401
                                           check_task_name, item_documents, normalised, split_item)

MODULE = "micro_docs"
#: The header of every exported YAML file (fixed text: no data of the bundle).
HEADER = "# Written by mbutils build-micro; manifest.json of the micro-benchmark folder seals this file.\n"
#: The suffix of an original task's configuration resolved into the export (not ``.yaml``: the harness
#: indexes ``*.yaml`` files only, so it is read only through the micro task's include).
ORIGINAL = ".original_yaml"
#: The header of a resolved original configuration (fixed text).
ORIGINAL_HEADER = (HEADER + "# The original task's configuration, its includes merged as lm-evaluation-harness merges "
                   "them; the micro task includes it.\n")
#: The folder of the export that holds Python modules of a task's configuration that are no part of the harness.
FUNCTIONS = "functions"
#: How to install the harness the export is checked against (the package's extra pins it).
INSTALL = 'pip install "mbutils[harness]" (lm-eval==0.4.13)'
#: Keys that name a configuration in the harness's index; the micro task names itself.
NAMING_KEYS = ("task", "tag", "group", "task_list")


def documents(items, subtasks, chosen, parsed=None) -> tuple[dict[str, list[int]], dict[str, int]]:
    """Chosen doc_ids per task (increasing) and the documents each task has in the bundle."""
    parsed = [split_item(i, s) for i, s in zip(items, subtasks)] if parsed is None else list(parsed)
    bad = [str(items[c]) for c in chosen if parsed[c] is None]
    if bad:
        raise NotDocuments(f"items {', '.join(map(ascii, bad[:3]))} name no lm-eval document (ids look like "
                          "task:doc_id); the micro-benchmark cannot be exported for lm-evaluation-harness")
    per_task: dict[str, int] = {}
    for p in parsed:
        if p is not None:
            per_task[p[0]] = max(per_task.get(p[0], 0), p[1] + 1)
    docs: dict[str, list[int]] = {}
    for c in np.sort(np.asarray(chosen)):
        task, doc = parsed[c]
        docs.setdefault(task, []).append(doc)
    check_exportable(items, subtasks, "items of the micro-benchmark", parsed)
    return {t: sorted(v) for t, v in sorted(docs.items())}, {t: per_task[t] for t in sorted(docs)}


def _yaml_entry_path(entry) -> str | None:
    """The YAML path of a task-index entry: a dict before lm-eval 0.4.10, an object since."""
    value = entry.get("yaml_path") if isinstance(entry, dict) else getattr(entry, "yaml_path", None)
    return str(value) if value not in (None, -1, "") else None


def _configs_under(root: Path) -> dict[str, str]:
    """Task name -> the YAML file defining it, for every YAML under ``root`` (read once per export)."""

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*.yaml")):
        try:
            config = yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)
        except (yaml.YAMLError, UnicodeDecodeError, OSError, RecursionError):
            continue
        if isinstance(config, dict) and isinstance(config.get("task"), str):
            found.setdefault(config["task"], str(path.resolve()))
    return found


def find_task_yaml(task: str, tasks_dir: str | Path | None, required: bool = False, configs=None) -> str:
    """The YAML file defining ``task``: under ``tasks_dir`` if given (refused when absent), else in an
    installed lm_eval, else ``<task>.yaml`` next to the export (to be copied or linked there). With
    ``required`` (the bundle states that its items are documents of ``task``), a task the installed harness
    does not define is refused too."""
    if tasks_dir is not None:
        root = Path(tasks_dir)
        if not root.is_dir():
            raise BundleError(f"--lm-eval-tasks {tasks_dir}: no such folder of lm-eval task configs")
        found = (configs if configs is not None else _configs_under(root)).get(task)
        if found is None:
            raise BundleError(f"--lm-eval-tasks {tasks_dir}: no YAML file there defines task {task!r}; point it at "
                              "the folder holding that task's config (the harness's lm_eval/tasks, or a copy)")
        return found
    found = _declared_once(task) or _yaml_entry_path(harness_index().get(task) or {})
    if found is None and required and harness_installed():
        raise BundleError(f"the bundle says its items are documents of lm-eval task {task!r}, which the installed "
                          f"lm-evaluation-harness ({harness_version()}) does not define; install the version the "
                          f"bundle was built with ({INSTALL}), or give "
                          "--lm-eval-tasks DIR holding that task's YAML")
    return found or f"{task}.yaml"


def resolve_includes(tasks, tasks_dir=None, required: bool = False) -> dict[str, str]:
    """task -> the YAML its micro task includes (:func:`find_task_yaml`), every task looked up at once."""
    configs = _configs_under(Path(tasks_dir)) if tasks_dir is not None and Path(tasks_dir).is_dir() else None
    return {task: find_task_yaml(task, tasks_dir, required, configs) for task in tasks}


def harness_installed() -> bool:
    """Whether lm-evaluation-harness can be imported here."""
    try:
        import lm_eval.tasks  # noqa: F401  (optional: pip install "mbutils[harness]")
    except ImportError:
        return False
    return True


def harness_version() -> str:
    """``lm-eval X.Y.Z`` of the installed harness, or 'not installed'."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"lm-eval {version('lm_eval')}"
    except PackageNotFoundError:
        return "not installed"


@functools.cache
def harness_index() -> dict:
    """The installed harness's task index (task -> entry), read once per process (indexing its thousands
    of task configs takes seconds); empty when lm_eval is not installed."""
    try:
        from lm_eval.tasks import TaskManager  # optional: pip install "mbutils[harness]"
    except ImportError:
        return {}
    return dict(TaskManager().task_index)


#: A top-level ``task: NAME`` line of a harness config (quotes and a trailing comment allowed).
_TASK_LINE = re.compile(rb"^task:[ \t]*['\"]?([^\s'\"#]+)['\"]?[ \t]*(?:#.*)?$", re.M)


@functools.cache
def _task_lines() -> dict[str, tuple[str, ...]]:
    """task -> the installed harness's YAML files that declare it on a ``task:`` line.

    A text scan of the configs (about a second for lm-eval 0.4.13's 14,000 files) instead of the
    harness's own index (about five seconds, paid by every process that exports)."""
    try:
        import lm_eval.tasks  # optional: pip install "mbutils[harness]"
    except ImportError:
        return {}
    found: dict[str, list[str]] = {}
    for path in sorted(Path(lm_eval.tasks.__file__).parent.rglob("*.yaml")):
        try:
            text = path.read_bytes()
        except OSError:
            continue
        for match in _TASK_LINE.finditer(text):
            found.setdefault(match.group(1).decode("utf-8", "replace"), []).append(str(path))  # resolved when used
    return {task: tuple(paths) for task, paths in found.items()}


def _declared_once(task: str) -> str | None:
    """The one installed YAML that declares ``task``; None when none or several do (the harness's
    index then decides, as it would when running the task)."""
    paths = _task_lines().get(task, ()) if harness_installed() else ()
    return str(Path(paths[0]).resolve()) if len(paths) == 1 else None


class _Function(str):
    """A ``!function`` reference, so the serialiser writes the tag the harness reads."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Function, lambda dumper, value: dumper.represent_scalar("!function", str(value)))


def _dump(config: dict) -> str:
    """YAML text by the serialiser (ASCII only: every other character escaped)."""
    return yaml.dump(config, Dumper=_Dumper, sort_keys=False, allow_unicode=False, default_flow_style=False,
                     width=10**6)


def task_config(micro: str, include: str, index: int) -> str:
    """One exported task's YAML text, by the serialiser (ASCII only: every other character escaped)."""
    config = {"include": include, "task": micro, "process_docs": _Function(f"{MODULE}.process_{index}")}
    return HEADER + _dump(config)


# -- the original task's configuration, resolved into the export ------------------------------------

class Reference:
    """A ``!function NAME`` of a task configuration, with the folder of the file that names it (where the
    harness looks for ``MODULE.py`` first)."""

    __slots__ = ("folder", "name")

    def __init__(self, folder: Path, name: str):
        self.folder, self.name = Path(folder), str(name)

    def __eq__(self, other):
        return isinstance(other, Reference) and (self.folder, self.name) == (other.folder, other.name)

    def __hash__(self):
        return hash((self.folder, self.name))

    def __repr__(self):
        return f"Reference({str(self.folder)!r}, {self.name!r})"


def _config_loader(folder: Path):
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: Reference(folder, loader.construct_scalar(node)))
    return Loader


def merged_config(path, _seen: tuple = ()) -> dict:
    """The task configuration at ``path`` with its includes merged as lm-eval 0.4.13 merges them (each
    included file resolved first, in order, ``task_list`` not inherited; the including file's keys win);
    ``!function`` values as :class:`Reference`. A file that cannot be read, is no mapping, or includes itself
    is refused, naming it."""
    path = Path(path).expanduser().resolve()
    if path in _seen:
        raise BundleError(f"{path}: the task configuration includes itself (through {_seen[-1].name}); "
                          "the harness could not load it either")
    try:
        config = yaml.load(path.read_text(encoding="utf-8"), Loader=_config_loader(path.parent))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError) as err:
        raise BundleError(f"{path}: cannot read it as an lm-eval task configuration ({type(err).__name__}); "
                          "the task it defines cannot be exported") from None
    if not isinstance(config, dict):
        raise BundleError(f"{path}: an lm-eval task configuration is a YAML mapping; this file holds "
                          f"{type(config).__name__}")
    if "include" not in config:
        return config
    includes = config.pop("include")
    merged: dict = {}
    for include in includes if isinstance(includes, list) else [includes]:
        inner = merged_config(Path(include) if Path(str(include)).is_absolute() else path.parent / str(include),
                              (*_seen, path))
        inner.pop("task_list", None)
        merged.update(inner)
    merged.update(config)
    return merged


def _harness_module(file: Path) -> str | None:
    """The import path of ``file`` when it is a module of the installed lm_eval package that imports by that
    path (the harness resolves ``!function lm_eval.tasks...NAME`` on any installation of the same version),
    else None."""
    try:
        import lm_eval  # optional: pip install "mbutils[harness]"
    except ImportError:
        return None
    root = Path(lm_eval.__file__).resolve().parent
    try:
        relative = file.resolve().relative_to(root)
    except ValueError:
        return None
    dotted = ".".join(("lm_eval", *relative.with_suffix("").parts))
    try:
        spec = importlib.util.find_spec(dotted)
    except (ImportError, ValueError, AttributeError):
        return None
    origin = getattr(spec, "origin", None)
    return dotted if origin and Path(origin).resolve() == file.resolve() else None


class Functions:
    """The Python functions an export's configurations name, each where the harness will find it: the
    harness's own by import path, an importable module's as named, any other copied into the folder."""

    def __init__(self):
        self.copied: list[dict] = []        # {"file": "functions/<name>.py", "name": NAME}, micro_docs.json's list
        self.files: dict[Path, str] = {}    # source file -> its copy's path in the export

    def reference(self, ref: Reference) -> _Function:
        module, _, name = ref.name.rpartition(".")
        file = (ref.folder / (module.replace(".", "/") + ".py")) if module else None
        if file is None or not file.is_file():
            return _Function(ref.name)  # the harness imports MODULE by name, as it would from the original
        dotted = _harness_module(file)
        if dotted is not None:
            return _Function(f"{dotted}.{name}")
        file = file.resolve()
        if file not in self.files:
            stem = re.sub(r"[^A-Za-z0-9_]", "_", file.stem)[:60] or "module"
            taken = set(self.files.values())
            copy, n = f"{FUNCTIONS}/{stem}.py", 1
            while copy in taken:
                n += 1
                copy = f"{FUNCTIONS}/{stem}_{n}.py"
            self.files[file] = copy
        entry = {"file": self.files[file], "name": name}
        if entry not in self.copied:
            self.copied.append(entry)
        return _Function(f"{MODULE}.function_{self.copied.index(entry)}")

    def rewrite(self, value):
        """``value`` with every :class:`Reference` named where the harness finds it."""
        if isinstance(value, Reference):
            return self.reference(value)
        if isinstance(value, dict):
            return {key: self.rewrite(inner) for key, inner in value.items()}
        if isinstance(value, list):
            return [self.rewrite(inner) for inner in value]
        return value

    def write(self, folder: Path) -> None:
        """Copy the modules named into ``folder/functions/``."""
        for source, copy in self.files.items():
            (folder / copy).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, folder / copy)


def _as_written(value):
    """A configuration with its functions as ("function", NAME) pairs: what a round trip must keep."""
    if isinstance(value, _Function):
        return ("function", str(value))
    if isinstance(value, dict):
        return {key: _as_written(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_as_written(inner) for inner in value]
    return value


def original_config(task: str, path, functions: Functions) -> str:
    """The text of ``<task>.original_yaml``: the configuration at ``path`` (which defines ``task``) with its
    includes merged, without the keys that name it, its functions named where the harness finds them. The
    text is read back and must give the same configuration, or the export is refused."""
    config = merged_config(path)
    if config.get("task") != task:
        raise BundleError(f"{path}: defines task {str(config.get('task'))[:80]!r}, not {task!r} (a task_list or "
                          "a task renamed by an include?); give --lm-eval-tasks DIR holding a YAML file that defines "
                          f"{task!r} itself")
    body = functions.rewrite({key: value for key, value in config.items() if key not in NAMING_KEYS})
    text = ORIGINAL_HEADER + _dump(body)

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: ("function", loader.construct_scalar(node)))
    if yaml.load(text, Loader=Loader) != _as_written(body):
        raise BundleError(f"{path}: the configuration of task {task!r} does not survive being written as YAML "
                          "(a value the serialiser cannot keep); it cannot be exported")
    return text


def config_source(path: Path, tasks_dir=None) -> str:
    """Where an original configuration came from, without the machine's folders: the harness version and
    the file under its ``tasks/``, or the file under ``--lm-eval-tasks``."""
    path = Path(path).resolve()
    if tasks_dir is not None:
        try:
            return f"--lm-eval-tasks: {path.relative_to(Path(tasks_dir).resolve()).as_posix()}"
        except ValueError:
            pass
    try:
        import lm_eval.tasks  # optional: pip install "mbutils[harness]"

        return f"{harness_version()}: {path.relative_to(Path(lm_eval.tasks.__file__).resolve().parent).as_posix()}"
    except (ImportError, ValueError):
        return path.name


def write_lm_eval_tasks(folder: Path, items, subtasks, chosen, tasks_dir=None, *, parsed=None,
                        required: bool = False) -> dict[str, dict]:
    """Write ``<task>_micro.yaml`` and ``<task>.original_yaml`` per task, ``micro_docs.json``, ``micro_docs.py``
    (and ``functions/``, when a configuration names Python outside the harness) into ``folder``; returns the map
    micro task -> {"task", "docs", "n_docs", "include", "items", "config"} (kept in ``micro.json``; ``config``
    says where the original configuration came from, None when it was not found).

    ``parsed`` gives (task, doc_id) per item as the bundle states them (:func:`item_documents`; read off
    the item ids when None); ``required``: the bundle stated them, so every task must be one the harness
    (or ``tasks_dir``) defines."""
    parsed = [split_item(i, s) for i, s in zip(items, subtasks)] if parsed is None else list(parsed)
    docs, n_docs = documents(items, subtasks, chosen, parsed)
    original = resolve_includes(docs, tasks_dir, required)
    owner = {parsed[c]: str(items[c]) for c in chosen}
    folder.mkdir(parents=True, exist_ok=True)
    functions = Functions()
    tasks, entries = {}, []
    for index, (task, chosen_docs) in enumerate(docs.items()):
        micro = task + SUFFIX
        found = Path(original[task])
        if found.is_absolute():  # resolved into the folder, included by its relative name
            include, source = task + ORIGINAL, config_source(found, tasks_dir)
            (folder / include).write_text(original_config(task, found, functions), encoding="utf-8")
        else:  # not found: <task>.yaml beside the export, to be copied there (card.md says so)
            include, source = original[task], None
        (folder / f"{micro}.yaml").write_text(task_config(micro, include, index), encoding="utf-8")
        entry = {"task": task, "docs": chosen_docs, "n_docs": n_docs[task], "include": include}
        entries.append({"micro_task": micro, **entry})
        tasks[micro] = {**entry, "items": [owner[task, doc] for doc in chosen_docs], "config": source}
    functions.write(folder)
    listing = {"tasks": entries, **({"functions": functions.copied} if functions.copied else {})}
    (folder / f"{MODULE}.json").write_text(json.dumps(listing, indent=1) + "\n", encoding="utf-8")
    shutil.copyfile(Path(__file__).with_name("lm_eval_filter.py"), folder / f"{MODULE}.py")
    return tasks
