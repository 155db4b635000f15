"""A chapter's MyST Markdown as plain Markdown, for the standalone page of ``run-chapter``.

The book (Sphinx, myst-nb, sphinx-exercise, sphinxcontrib-bibtex) understands roles such as
``{glue:text}`key:.1f``` and directives such as ```` ```{exercise} ````; nbconvert, which
writes the single HTML page of :func:`mbutils.publish.chapters.run_chapter`, shows them raw.
:func:`plain_notebook` gives a copy of an executed notebook whose Markdown cells say the same
thing in plain Markdown:

* ``{glue:text}`` / ``{glue}``: the glued ``text/plain`` value, formatted as myst-nb does,
  HTML- and Markdown-escaped (glued values come from data files and never become live HTML);
  ``{glue:md}``: the glued Markdown as it is (the package writes it); a key the notebook did
  not glue: a visible ``[missing: key]``;
* ``{term}``, ``{doc}``, ``{ref}`` and any other role: their display text (a ``{doc}`` without
  text: the page's title when a chapter folder has it, else its name; a ``{ref}`` without
  text: the exercise's or section's title; a link when the label is on this page);
* ``{cite:p}`a,b``` -> "(A, 2024; B, 2020)", ``{cite:t}`a``` -> "A (2024)" from the book's
  ``references.bib`` (the keys when it cannot be read);
* ``{exercise}``: a bold "Exercise: Title" then the body; ``{solution-start}``: a bold
  "Solution"; ``{solution-end}``: removed; ``{glossary}``: bold terms; code directives: plain
  fenced code; any other directive: its body without the fence lines;
* ``(label)=`` targets become anchors and ``%`` comment lines are dropped.

Code spans and fenced code are left exactly as they are. The notebook itself is not changed.
What a page knows of the rest of the book (titles, labels, citations) is read by
:mod:`mbutils.publish.book_index`.
"""

from __future__ import annotations

import copy
import html
import re
from ast import literal_eval
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mbutils.publish.book_index import DIRECTIVE, FENCE, OPTION, TARGET, Book, page_labels

GLUE_PREFIX = "application/papermill.record/"
#: sphinx's own labels, which no page defines
BUILTIN_LABELS = {"genindex": "Index", "modindex": "Module Index", "search": "Search Page"}
CODE_DIRECTIVES = {"code", "code-block", "sourcecode", "code-cell"}
TITLED_DIRECTIVES = {"admonition", "dropdown", "topic", "sidebar", "card", "tab-item"}
ADMONITIONS = {"note", "warning", "tip", "important", "hint", "caution", "attention", "danger", "error",
               "seealso"}

_COMMENT = re.compile(r"^\s*%")
_ROLE = re.compile(r"\{(?P<name>[A-Za-z0-9_:+.-]+)\}$")
_EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
_SAFE_ID = re.compile(r"^[A-Za-z0-9_.:-]+$")
_NUMPY = re.compile(r"^(?:np|numpy)\.[a-z]+[0-9]*\((?P<inner>.*)\)$", re.S)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]~|#])")


# --------------------------------------------------------------------------- values


def escape(text: str) -> str:
    """``text`` as Markdown that shows exactly these characters: no HTML, no emphasis, no math."""
    text = _MD_SPECIAL.sub(r"\\\1", str(text).replace("\r", "").replace("\n", " "))
    # '$' as entities: Markdown sees no math, MathJax (processEscapes) sees an escaped dollar
    return html.escape(text, quote=True).replace("$", "&#92;&#36;")


def format_plain_text(text: str, spec: str) -> str:
    """A glued ``text/plain`` value under a format spec, as myst-nb's ``glue:text`` shows it:
    a repr'd string loses its quotes, ``.1f`` formats a float, ``d`` an int. A value the spec
    does not fit is shown unformatted."""
    try:
        value = literal_eval(text)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        numpy = _NUMPY.match(text.strip())  # numpy 2 scalars: 'np.float64(0.35)'
        try:
            value = literal_eval(numpy["inner"]) if numpy else text
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            value = text
    if spec == "":
        return str(value)
    kind = spec[-1]
    try:
        if kind == "s":
            value = str(value)
        elif kind in "bcdoxX":
            value = int(value)
        elif kind in "eEfFgGn%":
            value = float(value)
        return format(value, spec)
    except (TypeError, ValueError, OverflowError):
        return str(value)


def glued_values(nb) -> dict[str, dict[str, str]]:
    """Key -> {mime type: data} of every value the executed notebook glued (myst-nb/scrapbook)."""
    found: dict[str, dict[str, str]] = {}
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            record = output.get("metadata", {}).get("scrapbook")
            if not isinstance(record, Mapping) or "name" not in record:
                continue
            prefix = record.get("mime_prefix", GLUE_PREFIX)
            data = {mime[len(prefix):]: value for mime, value in output.get("data", {}).items()
                    if mime.startswith(prefix)}
            found[str(record["name"])] = {m: "".join(v) if isinstance(v, list) else str(v) for m, v in data.items()}
    return found


# --------------------------------------------------------------------------- the transform


@dataclass
class _Context:
    glued: Mapping[str, Mapping[str, str]]
    book: Book
    page: str | None
    local: Mapping[str, str]  # labels defined on this page -> title


def plain_markdown(text: str, glued: Mapping[str, Mapping[str, str]] | None = None, *, page: str | None = None,
                   book: Book | None = None, local_labels: Mapping[str, str] | None = None) -> str:
    """MyST Markdown ``text`` as plain Markdown; ``glued`` is :func:`glued_values` of the notebook.

    ``page`` is the chapter's name (for ``page.md::key`` glue and in-page links),
    ``local_labels`` the labels on the page (label -> title; default: those in ``text``).
    """
    if local_labels is None:
        local_labels = page_labels(text)[1]
    ctx = _Context(glued or {}, book or Book(), page, local_labels)
    return _blocks(text, ctx)


def plain_notebook(nb, page: str | None = None, book: Book | None = None):
    """A copy of notebook ``nb`` whose Markdown cells are plain Markdown (see the module)."""
    out = copy.deepcopy(nb)
    markdown = [c for c in out.cells if c.cell_type == "markdown"]
    local: dict[str, str] = {}
    for cell in markdown:
        local.update(page_labels(cell.source)[1])
    glued = glued_values(nb)
    for cell in markdown:
        cell.source = plain_markdown(cell.source, glued, page=page, book=book, local_labels=local)
    return out


def _blocks(text: str, ctx: _Context) -> str:
    lines = text.split("\n")
    out: list[str] = []
    prose: list[str] = []

    def flush():
        if prose:
            out.append(_inline("\n".join(prose), ctx))
            prose.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        if m and m["fence"][0] == "`" and "`" in m["info"]:
            m = None  # '```x```' is a code span, not a fence (CommonMark)
        directive = DIRECTIVE.match(m["info"].strip()) if m else None
        if m and (directive or m["fence"][0] != ":"):
            flush()
            end = _closing(lines, i + 1, m["fence"])
            body = lines[i + 1:end]
            if directive:  # a block of its own, as the fence made it
                out += ["", _directive(directive["name"], directive["arg"].strip(), body, m["indent"], ctx), ""]
            else:  # fenced code: exactly as it is
                out.append("\n".join(lines[i:end + 1]))
            i = end + 1
            continue
        if t := TARGET.match(line):
            flush()
            out.append(_anchor(t["label"]) or "")
        elif not _COMMENT.match(line):
            prose.append(line)
        i += 1
    flush()
    return "\n".join(out)


def _closing(lines: list[str], start: int, fence: str) -> int:
    """Index of the line closing ``fence`` (CommonMark: same character, at least as long, no
    info string); the end of the text when none does."""
    for j in range(start, len(lines)):
        m = FENCE.match(lines[j])
        if m and m["fence"][0] == fence[0] and len(m["fence"]) >= len(fence) and not m["info"].strip():
            return j
    return len(lines)


def _directive(name: str, arg: str, body: list[str], indent: str, ctx: _Context) -> str:
    options: dict[str, str] = {}
    if body and body[0].strip() == "---":  # YAML options block
        end = next((j for j in range(1, len(body)) if body[j].strip() == "---"), None)
        if end is not None:
            for line in body[1:end]:
                key, _, value = line.partition(":")
                options[key.strip()] = value.strip()
            body = body[end + 1:]
    else:
        while body and (o := OPTION.match(body[0])):
            options[o["key"]] = o["value"].strip()
            body = body[1:]
    while body and not body[0].strip():
        body = body[1:]
    if name in CODE_DIRECTIVES:  # code stays code, untouched
        longest = max((len(r) for line in body for r in re.findall(r"`+", line)), default=0)
        fence = "`" * max(3, longest + 1)
        return "\n".join([f"{indent}{fence}{arg.split()[0] if arg else ''}", *body, f"{indent}{fence}"])
    if name == "math":
        return "\n".join([f"{indent}$$", *body, f"{indent}$$"])
    if name == "solution-end":
        return ""
    if name == "glossary":
        return _glossary(body, indent, ctx)
    inner = _blocks("\n".join(body), ctx)
    label = options.get("label") or options.get("name")
    if name == "exercise":
        heading = "Exercise: " + _inline(arg, ctx) if arg else "Exercise"
    elif name in ("solution-start", "solution"):
        heading = "Solution"
    elif name in TITLED_DIRECTIVES and arg:
        heading = _inline(arg, ctx)
    elif name in ADMONITIONS:
        heading = {"seealso": "See also"}.get(name, name.capitalize()) + (": " + _inline(arg, ctx) if arg else "")
    else:
        return inner
    ident = f' id="{html.escape(label)}"' if label and _SAFE_ID.match(label) else ""
    return f"{indent}<strong{ident}>{heading}</strong>" + (f"\n\n{inner}" if inner.strip() else "")


def _glossary(body: list[str], indent: str, ctx: _Context) -> str:
    """``Term`` lines and indented definitions as "**Term**: definition" paragraphs."""
    entries: list[tuple[list[str], list[str]]] = []
    for line in body:
        if not line.strip():
            continue
        if line[:1] not in (" ", "\t"):
            if not entries or entries[-1][1]:
                entries.append(([], []))
            entries[-1][0].append(line.strip())
        elif entries:
            entries[-1][1].append(line.strip())
    paragraphs = [f"{indent}**{'; '.join(_inline(t, ctx) for t in terms)}**: " + _inline(" ".join(text), ctx)
                  for terms, text in entries]
    return "\n\n".join(paragraphs)


def _inline(text: str, ctx: _Context) -> str:
    """Roles replaced; code spans (and everything else) left as they are."""
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        j = _next_backtick(text, i)
        if j < 0:
            out.append(text[i:])
            break
        run = j
        while run < n and text[run] == "`":
            run += 1
        width = run - j
        close = _closing_run(text, run, width)
        if close < 0:  # no closing run: literal backticks
            out.append(text[i:run])
            i = run
            continue
        before = text[i:j]
        role = _ROLE.search(before)
        if role and not _escaped(before, role.start()):
            content = text[run:close]
            if content.startswith(" ") and content.endswith(" ") and content.strip():
                content = content[1:-1]
            out.append(before[:role.start()])
            out.append(_role(role["name"], content, ctx))
        else:
            out.append(text[i:close + width])
        i = close + width
    return "".join(out)


def _escaped(text: str, pos: int) -> bool:
    """Whether the character at ``pos`` follows an odd number of backslashes."""
    k = pos
    while k > 0 and text[k - 1] == "\\":
        k -= 1
    return (pos - k) % 2 == 1


def _next_backtick(text: str, start: int) -> int:
    j = text.find("`", start)
    while j >= 0 and _escaped(text, j):
        j = text.find("`", j + 1)
    return j


def _closing_run(text: str, start: int, width: int) -> int:
    """Start of the next run of exactly ``width`` backticks (backslashes do not escape in code)."""
    j = start
    while (j := text.find("`", j)) >= 0:
        k = j
        while k < len(text) and text[k] == "`":
            k += 1
        if k - j == width:
            return j
        j = k
    return -1


#: Python-domain roles: shown as the object's name in code type, as Sphinx shows them.
_PY_ROLES = frozenset({"func", "class", "meth", "mod", "attr", "obj", "data", "exc"})


def _role(name: str, content: str, ctx: _Context) -> str:
    if name in ("glue", "glue:any", "glue:text", "glue:md"):
        return _glue(name, content, ctx)
    if name.startswith("cite"):
        return _cite(name, content, ctx)
    if name == "math":
        return f"${content}$"
    explicit = _EXPLICIT.match(content)
    text, target = (explicit["text"], explicit["target"]) if explicit else (None, content.strip())
    if name == "doc":
        if text is not None:
            return escape(text)
        title = ctx.book.titles.get(target.removesuffix(".md"))
        return _inline(title, _Context({}, Book(), ctx.page, {})) if title else escape(target)  # a title is Markdown
    if name in ("ref", "numref"):
        local = ctx.local.get(target)
        if text is None:
            title = local or (ctx.book.labels.get(target, ("", ""))[1]) or BUILTIN_LABELS.get(target, target)
            shown = _inline(title, _Context({}, Book(), ctx.page, {}))  # a title is Markdown
        else:
            shown = escape(text)
        if local is not None and _SAFE_ID.match(target):
            return f'<a href="#{html.escape(target)}">{shown}</a>'
        return shown
    if text is None and name.split(":")[-1] in _PY_ROLES:  # {py:func}`~mbutils.mdad_table` -> mdad_table()
        shown = target.lstrip("~")
        shown = shown.rpartition(".")[2] if target.startswith("~") else shown
        return f"<code>{html.escape(shown)}{'()' if name.split(':')[-1] in ('func', 'meth') else ''}</code>"
    return escape(text if text is not None else content)  # term, abbr, any other role: its text


def _glue(name: str, content: str, ctx: _Context) -> str:
    key, sep, spec = content.strip().rpartition(":")
    if not sep or spec.startswith(":") or key.endswith(":"):
        key, spec = content.strip(), None
    if spec is not None and _lookup(key, ctx) is None and _lookup(content.strip(), ctx) is not None:
        key, spec = content.strip(), None  # a key with a colon in it
    data = _lookup(key, ctx)
    if data is None:
        return f"\\[missing: {escape(key)}\\]"
    if name == "glue:md" or (name != "glue:text" and "text/markdown" in data):
        if "text/markdown" in data:
            return data["text/markdown"]
    if "text/plain" not in data:
        return f"\\[missing: {escape(key)} (no text)\\]"
    fmt = "s" if spec is None or name == "glue:md" else spec
    return escape(format_plain_text(data["text/plain"], fmt))


def _lookup(key: str, ctx: _Context) -> Mapping[str, str] | None:
    doc, sep, local = key.rpartition("::")
    if sep:  # 'chapters/page.md::key': only this page's values are here
        if ctx.page is None or Path(doc).stem != ctx.page:
            return None
        key = local
    return ctx.glued.get(key)


def _cite(name: str, content: str, ctx: _Context) -> str:
    keys = [k.strip() for k in content.split(",") if k.strip()]
    found = [ctx.book.citations.get(k) for k in keys]
    if name in ("cite:t", "cite:ts", "cite:ct", "cite:cts"):
        return "; ".join(escape(f"{c[0]} ({c[1]})" if c else k) for k, c in zip(keys, found))
    if name in ("cite:author", "cite:authors", "cite:authorpar"):
        return "; ".join(escape(c[0] if c else k) for k, c in zip(keys, found))
    if name in ("cite:year", "cite:yearpar"):
        return "; ".join(escape(c[1] if c else k) for k, c in zip(keys, found))
    inner = "; ".join(escape(f"{c[0]}, {c[1]}" if c else k) for k, c in zip(keys, found))
    return inner if name in ("cite:alp", "cite:als") else f"({inner})"


def _anchor(label: str) -> str | None:
    return f'<a id="{html.escape(label)}"></a>' if _SAFE_ID.match(label) else None
