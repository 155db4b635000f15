"""The document filter of an exported micro-benchmark, copied unchanged into its ``lm_eval/`` as ``micro_docs.py``.

It is a fixed file: nothing of a bundle is ever written into it. What it keeps comes from
``micro_docs.json`` beside it (written by a JSON serialiser): per micro task, the original
task's configuration (``include``, a file of the folder), the chosen document indices (increasing)
and the size of the split they index; and the Python functions of a task's own configuration that
are no part of lm-evaluation-harness, copied into the folder's ``functions/``. Each exported
``<task>_micro.yaml`` names ``process_docs: !function micro_docs.process_<i>``; the harness loads
that name from this module, and :func:`__getattr__` answers it (and ``function_<j>``, the j-th
copied function, which a configuration names as ``!function micro_docs.function_<j>``).

``process_<i>`` applies the original task's own ``process_docs`` (found through its
``include`` chain, as the harness resolves it), keeps the chosen documents and stamps each
with its index in the original split (field ``mbutils_doc_id``), its content fingerprint
(``mbutils_doc_sha256``, :func:`fingerprint`) and the micro task's identity (``mbutils_micro``,
:func:`identity`), so that ``score`` matches a log's documents by their index, never by position,
and refuses documents whose content is not the content the micro-benchmark chose, or a log of
another micro-benchmark. A split of another size (a few-shot source, or another version of the
dataset) is returned unchanged and unstamped; a log of it is refused by ``score``.

A document's fingerprint is the SHA-256 of its canonical JSON (keys sorted, no spaces, UTF-8),
restricted to the fields the dataset itself has (the split's columns before the task's own
``process_docs``, whose added fields may be drawn at random, as GPQA's shuffled choices are).

It needs only the standard library and PyYAML (a dependency of the harness), not mbutils.
"""

import hashlib
import importlib
import importlib.util
import json
import os
import sys
import types

STAMP = "mbutils_doc_id"
FINGERPRINT = "mbutils_doc_sha256"
IDENTITY = "mbutils_micro"
HERE = os.path.dirname(os.path.abspath(__file__))
TASKS_FILE = "micro_docs.json"
_MODULES = {}


def fingerprint(doc, fields=None):
    """SHA-256 (hex) of ``doc``'s canonical JSON, restricted to ``fields`` when it holds any of them
    (else every field but the stamps); values JSON cannot hold are written as their ``str``."""
    keys = [k for k in (fields or ()) if k in doc] or [k for k in doc if not str(k).startswith("mbutils_")]
    text = json.dumps({str(k): doc[k] for k in keys}, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def identity(task, n_docs, docs):
    """A micro task's identity: 16 hex digits of the SHA-256 of its task, split size and chosen documents."""
    text = json.dumps({"docs": [int(d) for d in docs], "n_docs": int(n_docs), "task": str(task)}, sort_keys=True,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _listing():
    with open(os.path.join(HERE, TASKS_FILE), encoding="utf-8") as handle:
        return json.load(handle)


def _tasks():
    return _listing()["tasks"]


class _Function:
    """A ``!function MODULE.NAME`` reference, resolved like the harness: MODULE.py beside the YAML, else
    an importable module (the harness's own task code, by its import path)."""

    def __init__(self, folder, name):
        self.folder, self.name = folder, name

    def load(self):
        module, _, function = self.name.rpartition(".")
        path = os.path.join(self.folder, module.replace(".", os.sep) + ".py")
        if os.path.abspath(path) == os.path.abspath(__file__):
            return __getattr__(function)
        if os.path.isfile(path):
            spec = importlib.util.spec_from_file_location(module, path)
            loaded = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(loaded)
        else:
            loaded = importlib.import_module(module)
        return getattr(loaded, function)


def _read(path):
    import yaml

    folder = os.path.dirname(path)

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: _Function(folder, loader.construct_scalar(node)))
    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=Loader) or {}


def _original_process_docs(path):
    """The process_docs the harness would use for the YAML at path (following include), or None."""
    path = path if os.path.isabs(path) else os.path.join(HERE, path)
    config = _read(path)
    if "process_docs" in config:
        value = config["process_docs"]
        return value.load() if isinstance(value, _Function) else None
    includes = config.get("include") or []
    for include in reversed([includes] if isinstance(includes, str) else list(includes)):
        found = include if os.path.isabs(include) else os.path.join(os.path.dirname(path), include)
        inner = _original_process_docs(found)
        if inner is not None:
            return inner
    return None


def _copied_function(number):
    """The ``number``-th function ``micro_docs.json`` lists: NAME of a module copied into the folder, run
    from its source (no bytecode is written beside it) and loaded once per process."""
    entry = _listing()["functions"][number]
    path = os.path.normpath(os.path.join(HERE, entry["file"]))
    if os.path.dirname(path) != os.path.join(HERE, "functions"):
        raise AttributeError(f"function_{number}")
    module = _MODULES.get(path)
    if module is None:
        name = "mbutils_micro_functions_" + hashlib.sha256(path.encode("utf-8")).hexdigest()[:16]
        module = types.ModuleType(name)
        module.__file__ = path
        with open(path, "rb") as handle:
            code = compile(handle.read(), path, "exec", dont_inherit=True)
        sys.modules[name] = module
        exec(code, module.__dict__)  # noqa: S102 -- the task's own function, sealed in the folder
        _MODULES[path] = module
    return getattr(module, entry["name"])


def _columns(dataset):
    names = getattr(dataset, "column_names", None)
    return list(names) if isinstance(names, (list, tuple)) else None


def keep(index, dataset):
    """The chosen documents of micro task ``index``, each stamped with its original index, its content
    fingerprint and the micro task's identity."""
    task = _tasks()[index]
    fields = _columns(dataset)
    inner = _original_process_docs(task["include"])
    if inner is not None:
        dataset = inner(dataset)
    if len(dataset) != task["n_docs"]:
        return dataset
    docs = list(task["docs"])
    kept = dataset.select(docs)
    prints = [fingerprint(doc, fields) for doc in kept]
    name = identity(task["task"], task["n_docs"], docs)
    return kept.add_column(STAMP, docs).add_column(FINGERPRINT, prints).add_column(IDENTITY, [name] * len(docs))


def __getattr__(name):
    """``process_<i>``: the filter of the i-th micro task of ``micro_docs.json``; ``function_<j>``: the j-th
    function copied into the folder."""
    head, _, number = name.partition("_")
    if head == "function" and number.isdigit():
        return _copied_function(int(number))
    if head != "process" or not number.isdigit():
        raise AttributeError(name)

    def process(dataset):
        return keep(int(number), dataset)

    process.__name__ = name
    return process
