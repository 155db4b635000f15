"""The document filter of an exported micro-benchmark, copied unchanged into its ``lm_eval/`` as ``micro_docs.py``.

It is a fixed file: nothing of a bundle is ever written into it. What it keeps comes from
``micro_docs.json`` beside it (written by a JSON serialiser): per micro task, the original
task's YAML, the chosen document indices (increasing) and the size of the split they index.
Each exported ``<task>_micro.yaml`` names ``process_docs: !function micro_docs.process_<i>``;
the harness loads that name from this module, and :func:`__getattr__` answers it.

``process_<i>`` applies the original task's own ``process_docs`` (found through its
``include`` chain, as the harness resolves it), keeps the chosen documents and stamps each
with its index in the original split (field ``mbutils_doc_id``), so that ``score`` matches a
log's documents by that index and never by position. A split of another size (a few-shot
source, or another version of the dataset) is returned unchanged and unstamped; a log of it
is refused by ``score``.

It needs only the standard library and PyYAML (a dependency of the harness), not mbutils.
"""

import importlib.util
import json
import os

STAMP = "mbutils_doc_id"
HERE = os.path.dirname(os.path.abspath(__file__))
TASKS_FILE = "micro_docs.json"


def _tasks():
    with open(os.path.join(HERE, TASKS_FILE), encoding="utf-8") as handle:
        return json.load(handle)["tasks"]


class _Function:
    """A ``!function MODULE.NAME`` reference, resolved like the harness: MODULE.py beside the YAML."""

    def __init__(self, folder, name):
        self.folder, self.name = folder, name

    def load(self):
        module, _, function = self.name.rpartition(".")
        path = os.path.join(self.folder, module.replace(".", os.sep) + ".py")
        spec = importlib.util.spec_from_file_location(module, path)
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
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


def keep(index, dataset):
    """The chosen documents of micro task ``index``, each stamped with its original index."""
    task = _tasks()[index]
    inner = _original_process_docs(task["include"])
    if inner is not None:
        dataset = inner(dataset)
    if len(dataset) != task["n_docs"]:
        return dataset
    return dataset.select(task["docs"]).add_column(STAMP, list(task["docs"]))


def __getattr__(name):
    """``process_<i>``: the filter of the i-th micro task of ``micro_docs.json``."""
    head, _, number = name.partition("_")
    if head != "process" or not number.isdigit():
        raise AttributeError(name)

    def process(dataset):
        return keep(int(number), dataset)

    process.__name__ = name
    return process
