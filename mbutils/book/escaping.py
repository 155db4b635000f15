"""Text from parameters and bundles put on a page exactly as written: never markup, never math.

Bundle, model, subtask and target-set names, provenance text and a reader's parameter values
reach titles, banners, notes and captions. :func:`literal` is the one way they are put there:
the result shows the very characters given, whether the page reads it as HTML (a note, a caption,
a table: an output of a code cell) or as MyST Markdown (a title, a sentence shown as Markdown):

* HTML's ``& < > " '`` are entities, so ``<svg onload=...>`` is text, not an element;
* with ``markdown=True`` the text is one line, and every character Markdown or MyST reads
  (emphasis, code spans, roles ``{name}`...```, substitutions ``{{ x }}``, dollar math,
  links, headings' ``#``) is a numeric character reference, which both read as a plain
  character;
* text holding a ``$`` or a backslash is wrapped in a span of the classes MathJax 2 and 3 skip
  (:data:`MATH_IGNORE`), so ``$x$`` or ``\\(x\\)`` is never typeset as a formula.
"""

from __future__ import annotations

import html
import re

#: Classes whose content MathJax never typesets (``tex2jax_ignore``: MathJax 2, ``mathjax_ignore``: MathJax 3).
MATH_IGNORE = "tex2jax_ignore mathjax_ignore"

#: Characters Markdown or MyST may read as markup anywhere in a line, written as numeric character references.
_MARKDOWN = {ord(c): f"&#{ord(c)};" for c in "&<>\"'\\`*_{}[]~|#$^"}
#: Characters that are markup only at the start of a line (a list, a MyST target or comment, an ordered
#: list's number): the first character of the text, if one of them, is written as a reference too.
_LINE_START = frozenset("-+=:%!()0123456789")
#: Line breaks and other control characters: in Markdown, a new line could start a block of its own.
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]+")


def literal(value, *, markdown: bool = False) -> str:
    """``value`` (any object, shown as ``str``) as a fragment of a page that shows exactly its characters.

    The fragment is HTML (an output of a code cell: a note, a caption, a banner); with
    ``markdown=True`` it may also be put into Markdown (a title, a sentence displayed as
    Markdown), on one line. Nothing in it is markup, a MyST role or substitution, or math.

    Examples
    --------
    >>> literal("<svg onload=alert(1)>")
    '&lt;svg onload=alert(1)&gt;'
    >>> literal("**bold** {{ x }}", markdown=True)
    '&#42;&#42;bold&#42;&#42; &#123;&#123; x &#125;&#125;'
    >>> literal("costs $5")
    '<span class="tex2jax_ignore mathjax_ignore">costs $5</span>'
    """
    text = str(value)
    if markdown:
        line = _CONTROL.sub(" ", text)
        shown = line.translate(_MARKDOWN)
        if line and line[0] in _LINE_START:
            shown = f"&#{ord(line[0])};{shown[1:]}"
    else:
        shown = html.escape(text, quote=True)
    if "$" in text or "\\" in text:
        shown = f'<span class="{MATH_IGNORE}">{shown}</span>'
    return shown
