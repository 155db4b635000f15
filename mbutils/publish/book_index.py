"""What a standalone page knows of the book around it: page titles, labels and citations.

:func:`book_index` reads them from the chapter folders and ``references.bib`` for the plain
Markdown of :mod:`mbutils.publish.standalone` (a ``{doc}`` link's title, a ``{ref}``'s text, a
``{cite}``'s authors and year); :func:`page_labels` reads one page's title and labels.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: MyST block syntax (the transform in :mod:`mbutils.publish.standalone` reads the same blocks)
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
DIRECTIVE = re.compile(r"^\{(?P<name>[A-Za-z0-9_:+.-]+)\}\s*(?P<arg>.*)$")
OPTION = re.compile(r"^\s*:(?P<key>[A-Za-z0-9_-]+):\s*(?P<value>.*)$")
TARGET = re.compile(r"^\s*\((?P<label>[^()\s]+)\)=\s*$")
_HEADING = re.compile(r"^(?P<level>#{1,6})\s+(?P<text>.*?)\s*#*\s*$")


@dataclass(frozen=True)
class Book:
    """What the transform knows about the rest of the book (all optional).

    ``titles``: page name -> title (for ``{doc}`name```); ``labels``: label -> (page, title)
    for exercises and ``(label)=`` targets; ``citations``: bibtex key -> (authors, year).
    """

    titles: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    citations: Mapping[str, tuple[str, str]] = field(default_factory=dict)


def book_index(dirs: list[Path]) -> Book:
    """Titles, labels and references read from the chapter folders (the chapter path, for
    run-chapter) and ``references.bib`` beside them or one folder up; the first folder wins a name."""
    titles: dict[str, str] = {}
    labels: dict[str, tuple[str, str]] = {}
    bibs: list[Path] = []
    for d in dirs:
        for path in sorted(Path(d).glob("*.md")):
            if path.stem in titles:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            title, found = page_labels(text)
            titles[path.stem] = title or path.stem
            for label, label_title in found.items():
                labels.setdefault(label, (path.stem, label_title))
        for bib in (Path(d) / "references.bib", Path(d).parent / "references.bib"):
            if bib.is_file() and bib.resolve() not in bibs:
                bibs.append(bib.resolve())
    citations: dict[str, tuple[str, str]] = {}
    for bib in bibs:
        for key, value in read_bib(bib).items():
            citations.setdefault(key, value)
    return Book(titles, labels, citations)


def page_labels(text: str) -> tuple[str | None, dict[str, str]]:
    """A page's title (its first ``#`` heading) and its labels: exercise ``:label:`` -> title,
    ``(label)=`` target -> the heading after it."""
    lines = text.split("\n")
    if lines and lines[0].strip() == "---":  # front matter
        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), 0)
        lines = lines[end + 1:]
    title, labels, pending, fence = None, {}, None, None
    for i, line in enumerate(lines):
        m = FENCE.match(line)
        if fence:
            if m and m["fence"][0] == fence[0] and len(m["fence"]) >= len(fence) and not m["info"].strip():
                fence = None
            continue
        if m and (m["fence"][0] != ":" or m["info"].lstrip().startswith("{")):
            fence = m["fence"]
            d = DIRECTIVE.match(m["info"].strip())
            if d and d["name"] == "exercise":
                for option in lines[i + 1:]:
                    o = OPTION.match(option)
                    if not o:
                        break
                    if o["key"] == "label":
                        labels[o["value"].strip()] = d["arg"].strip() or "Exercise"
            continue
        if t := TARGET.match(line):
            pending = t["label"]
        elif h := _HEADING.match(line):
            heading = h["text"].strip()
            if title is None and h["level"] == "#":
                title = heading
            if pending:
                labels[pending], pending = heading, None
    return title, labels


def read_bib(path: Path) -> dict[str, tuple[str, str]]:
    """Key -> (authors as cited, year) of a BibTeX file; empty when pybtex cannot read it."""
    try:
        from pybtex.database import parse_file
        from pybtex.richtext import Text
    except ImportError:
        return {}
    try:
        data = parse_file(str(path), bib_format="bibtex")
    except Exception:  # a broken file only costs the author names: the keys are shown
        return {}

    def plain(latex: str) -> str:
        try:
            return Text.from_latex(latex).render_as("text")
        except Exception:
            return latex.replace("{", "").replace("}", "")

    out = {}
    for key, entry in data.entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [plain(" ".join(p.prelast_names + p.last_names)) for p in people]
        if not names:
            authors = key
        elif len(names) == 1:
            authors = names[0]
        elif len(names) == 2:
            authors = f"{names[0]} and {names[1]}"
        else:
            authors = f"{names[0]} et al."
        out[key] = (authors, plain(entry.fields.get("year", "")))
    return out
