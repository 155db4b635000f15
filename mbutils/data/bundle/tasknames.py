"""The lm-eval task names a bundle's items export under, and the rule that refuses unusable ones.

``build-micro`` exports a micro-benchmark as one lm-evaluation-harness task per harness task its items
are documents of, and the task's name becomes a file name. It refuses, before any work, a name that
cannot be one (:data:`TASK_NAME`), two names that would be one file on a case-insensitive file system
or one task once ``-`` and ``.`` read as ``_`` (``Alpha`` and ``alpha``), a task named like another's
export (``<task>_micro``), and two items naming one document. ``validate`` applies the same name rule
(:func:`names_fault`) so that a bundle is refused by both or by neither; the document rule stays
``build-micro``'s alone (``validate`` accepts two distinct item ids naming one document).

The task and document of an item are what the bundle states (:mod:`mbutils.data.bundle.harness`),
else read off its id: ``task:doc_id`` (the lm-eval importer's ids), else ``<subtask>_<digits>``.
"""

from __future__ import annotations

import re

from mbutils.base.errors import BundleError

#: The suffix of an exported task's name: ``<task>_micro``.
SUFFIX = "_micro"
#: Names that become lm-eval task names and file names: ASCII letters, digits, '_', '-', '.'.
TASK_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,99}")
#: What to do about an unusable task name read off the bundle's items or subtasks.
RENAME = "rename the items or subtasks of the bundle"


def task_name_fault(name) -> str | None:
    """Why ``name`` cannot become a task and file name (one clause, the name escaped); None if it can."""
    text = str(name)
    if TASK_NAME.fullmatch(text):
        return None
    shown = ascii(text[:60]) + ("..." if len(text) > 60 else "")
    return (f"task name {shown} cannot name an lm-eval task or file: use 1 to 100 ASCII letters, digits, '_', '-' "
            "or '.' (not starting with '-' or '.')")


def check_task_name(name, where: str = "") -> str:
    """``name`` when it may become a task and file name; else one message saying why not."""
    fault = task_name_fault(name)
    if fault:
        raise BundleError(f"{where}{fault}; {RENAME}")
    return str(name)


def normalised(name) -> str:
    """The form two names must not share: case folded, '-' and '.' read as '_'."""
    return re.sub(r"[-.]", "_", str(name).casefold())


def first_lookalike(names) -> tuple[str, str] | None:
    """The first two names that differ but share their :func:`normalised` form (earlier one first)."""
    seen: dict[str, str] = {}
    for name in names:
        other = seen.setdefault(normalised(name), str(name))
        if other != str(name):
            return other, str(name)
    return None


def lookalike_fault(first: str, second: str, what: str = "task names") -> str:
    return (f"{what} {ascii(first)} and {ascii(second)} differ only in case or in '-', '.' versus '_': exported, "
            "they would be one file or one task. Rename one of them")


def check_distinct(names, what: str = "task names") -> None:
    """Refuse names that differ only in case or in '-', '.' versus '_' (one file on some systems)."""
    pair = first_lookalike(names)
    if pair:
        raise BundleError(lookalike_fault(*pair, what))


def suffix_clash(tasks) -> str | None:
    """The first task (sorted) named like another task's export, ``<task>_micro``; None if none is."""
    tasks = set(tasks)
    clash = sorted(t for t in tasks if t.endswith(SUFFIX) and t[: -len(SUFFIX)] in tasks)
    return clash[0] if clash else None


def suffix_fault(task: str) -> str:
    return (f"task {task!r} is the name the export gives task {task[:-len(SUFFIX)]!r}'s micro-benchmark; rename "
            "one of them")


def split_item(item: str, subtask: str) -> tuple[str, int] | None:
    """(task, doc_id) of an item id, or None when it names no document."""
    head, sep, tail = str(item).rpartition(":")
    if sep and tail.isascii() and tail.isdigit() and len(tail) <= 12:
        return head, int(tail)
    match = re.fullmatch(r"(.+)_([0-9]{1,12})", str(item))
    if match and match[1] == str(subtask):
        return match[1], int(match[2])
    return None


def item_documents(items, subtasks, harness=None) -> list[tuple[str, int] | None]:
    """(task, doc_id) of every item, or None for an item that is no document: as the bundle states it
    (a :class:`~mbutils.data.bundle.harness.HarnessMap` with tasks), else read off the item ids."""
    if harness is not None and harness.tasks is not None:
        return [None if task is None else (str(task), int(doc)) for task, doc in zip(harness.tasks, harness.docs)]
    return list(map(split_item, items, subtasks))


def names_fault(parsed) -> tuple[list[int], str] | None:
    """The first reason the task names of ``parsed`` (per item: (task, doc_id) or None) cannot be exported:
    the positions of the items whose names clash (the first item of each task) and one message; None when
    every name is usable. The order is :func:`check_exportable`'s, so both name the same fault."""
    first: dict[str, int] = {}
    for position, doc in enumerate(parsed):
        if doc is not None:
            first.setdefault(doc[0], position)
    for task, position in first.items():
        fault = task_name_fault(task)
        if fault:
            return [position], f"{fault}; {RENAME}"
    pair = first_lookalike(first)
    if pair:
        return [first[pair[0]], first[pair[1]]], lookalike_fault(*pair)
    clash = suffix_clash(first)
    if clash:
        return [first[clash], first[clash[: -len(SUFFIX)]]], suffix_fault(clash)
    return None


def check_exportable(items, subtasks, where: str = "items.csv", parsed=None) -> None:
    """Before any work: the task names the bundle's items would export under are usable and distinct, no
    task is another's exported name (``<task>_micro``), and no two items name one document."""
    parsed = list(map(split_item, items, subtasks)) if parsed is None else list(parsed)
    tasks = dict.fromkeys(p[0] for p in parsed if p is not None)
    for task in tasks:
        check_task_name(task, f"{where}: ")
    check_distinct(tasks)
    clash = suffix_clash(tasks)
    if clash:
        raise BundleError(f"{where}: {suffix_fault(clash)}")
    owner: dict[tuple[str, int], str] = {}
    for item, doc in zip(items, parsed):
        if doc is not None and owner.setdefault(doc, str(item)) != str(item):
            raise BundleError(f"{where}: items {ascii(owner[doc])} and {ascii(str(item))} both name document "
                              f"{doc[1]} of task {doc[0]!r}; a document can be one item only: remove or rename one")
