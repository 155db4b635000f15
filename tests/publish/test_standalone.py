"""The standalone page of run-chapter: MyST roles and directives as plain Markdown
(:mod:`mbutils.publish.standalone`), on strings and on one executed chapter."""

from __future__ import annotations

import re

import nbformat
from nbconvert.filters.markdown_mistune import markdown2html_mistune

from conftest import real_bundle
from mbutils.publish.book_index import Book, book_index, page_labels, read_bib
from mbutils.publish.chapters import run_chapter
from mbutils.publish.standalone import escape, format_plain_text, glued_values, plain_markdown, plain_notebook

GLUED = {
    "pool": {"text/plain": "'the pool of 58 models'"},
    "tau": {"text/plain": "0.41999"},
    "np_tau": {"text/plain": "np.float64(0.41999)"},
    "count": {"text/plain": "'12'"},
    "fig-x": {"text/markdown": '<a href="#fig-x" class="mbutils-ref">Figure 5.2</a>',
              "text/plain": "<IPython.core.display.Markdown object>"},
    "evil": {"text/plain": "'<img src=x onerror=alert(1)>'"},
    "stars": {"text/plain": "'*not* emphasis, [no](link), $no math$'"},
}
BOOK = Book(titles={"measures": "Measuring reliability"},
            labels={"ex-other": ("sel_random", "A selector of your own"), "noise-rule": ("measures", "One noise rule")},
            citations={"lord1980": ("Lord", "1980"), "reckase2009": ("Reckase", "2009")})


def md(text: str, **kw) -> str:
    return plain_markdown(text, GLUED, **{"book": BOOK, **kw})


def rendered(text: str, **kw) -> str:
    """The HTML nbconvert makes of the transformed text (as the standalone page does)."""
    return markdown2html_mistune(md(text, **kw))


# --------------------------------------------------------------------------- glue


def test_glue_text_strips_the_quotes_of_a_string():
    assert md("Here {glue:text}`pool:s`.") == "Here the pool of 58 models."
    assert md("Here {glue:text}`pool`.") == "Here the pool of 58 models."


def test_glue_text_applies_the_format_spec_as_myst_nb_does():
    assert md("{glue:text}`tau:.2f`") == "0.42"
    assert md("{glue:text}`count:.1f`") == "12.0"  # a string holding a number, formatted as a float
    assert md("{glue:text}`count:d`") == "12"
    assert md("{glue:text}`tau:.0%`") == "42%"
    assert md("{glue:text}`np_tau:.1f`") == "0.4"  # numpy 2 repr
    assert format_plain_text("'abc'", ".1f") == "abc"  # a spec the value does not fit: unformatted


def test_glue_md_is_pasted_as_it_is():
    assert md("see {glue:md}`fig-x`.") == 'see <a href="#fig-x" class="mbutils-ref">Figure 5.2</a>.'
    assert md("see {glue:md}`fig-x:myst`.") == 'see <a href="#fig-x" class="mbutils-ref">Figure 5.2</a>.'
    assert md("{glue}`fig-x`") == '<a href="#fig-x" class="mbutils-ref">Figure 5.2</a>'


def test_a_malicious_glued_value_never_becomes_html():
    html = rendered("Value: {glue:text}`evil`.")
    assert "<img" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    html = rendered("{glue:text}`stars`")
    assert "<em>" not in html and "<a" not in html and "*not* emphasis, [no](link)" in html
    assert "\\$no math\\$" in html  # MathJax (processEscapes) shows an escaped dollar as is


def test_a_missing_key_is_marked_not_fatal():
    html = rendered("Value: {glue:text}`nope:.1f` and {glue:md}`gone`.")
    assert "[missing: nope]" in html and "[missing: gone]" in html
    other_page = rendered("{glue:text}`chapters/bench_gpqa.md::other_key:s`", page="measures")
    assert "[missing: chapters/bench_gpqa.md::other_key]" in other_page  # another page's values are not here
    assert md("{glue:text}`chapters/measures.md::pool:s`", page="measures") == "the pool of 58 models"


def test_glued_values_are_read_from_scrapbook_outputs():
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("glue('k', 3)")
    cell.outputs = [nbformat.v4.new_output(
        "display_data", data={"application/papermill.record/text/plain": "3"},
        metadata={"scrapbook": {"name": "k", "mime_prefix": "application/papermill.record/"}}),
        nbformat.v4.new_output("display_data", data={"text/plain": "not glued"})]
    nb.cells = [cell]
    assert glued_values(nb) == {"k": {"text/plain": "3"}}


# --------------------------------------------------------------------------- roles


def test_term_doc_and_ref_show_their_text():
    assert md("{term}`MDAD` and {term}`the curve <agreement curve>`") == "MDAD and the curve"
    assert md("{doc}`measures`, {doc}`these <measures>`, {doc}`unknown`") == "Measuring reliability, these, unknown"
    assert md("{doc}`measures`", book=Book()) == "measures"
    assert md("{ref}`the rule <noise-rule>` and {ref}`noise-rule`") == "the rule and One noise rule"
    assert md("{ref}`genindex`") == "Index"
    assert md("{ref}`no-such-label`") == "no-such-label"


def test_a_ref_to_this_page_links_to_its_anchor():
    text = "(here)=\n## Here\n\nSee {ref}`here` and {ref}`ex-a`.\n\n```{exercise} Try\n:label: ex-a\n\nDo it.\n```"
    out = md(text)
    assert '<a id="here"></a>' in out and '<strong id="ex-a">Exercise: Try</strong>' in out
    assert 'See <a href="#here">Here</a> and <a href="#ex-a">Try</a>.' in out


def test_citations():
    assert md("{cite:p}`lord1980,reckase2009`") == "(Lord, 1980; Reckase, 2009)"
    assert md("{cite:t}`lord1980`") == "Lord (1980)"
    assert md("{cite:p}`a,b`", book=Book()) == "(a; b)"
    assert md("{cite:t}`a`", book=Book()) == "a"


def test_the_books_references_read_as_author_and_year():
    from conftest import REPO

    refs = read_bib(REPO / "references.bib")
    assert refs["yauney2025"] == ("Yauney et al.", "2025")
    assert refs["bardenet2020monte"] == ("Bardenet and Hardy", "2020")
    index = book_index([REPO / "chapters"])
    assert index.citations["yauney2025"] == ("Yauney et al.", "2025")
    assert index.titles["measures"] and index.labels["noise-rule"][0] == "measures"


def test_code_spans_and_fenced_code_are_untouched():
    text = ("Write `{glue:text}` roles, ``{term}`MDAD` `` and `{doc}`; a real {term}`MDAD`.\n\n"
            "```python\nx = '{glue:text}`pool`'\n```\n\n~~~\n{cite:p}`lord1980`\n~~~")
    out = md(text)
    assert out == text.replace("a real {term}`MDAD`", "a real MDAD")
    assert md("\\{term}`x` stays a code span") == "\\{term}`x` stays a code span"
    assert md("an `unclosed {term}`MDAD`") == "an `unclosed {term}`MDAD`"  # the span opens before the role


# --------------------------------------------------------------------------- directives


EXERCISE = """## Exercises

```{exercise} Predict, then *simulate*
:label: ex-one

Predict {glue:text}`tau:.2f`, then check.
```

```{solution-start} ex-one
:class: dropdown
```

The answer is {term}`MDAD`.

```{solution-end}
```
"""


def test_exercise_and_solution():
    out = md(EXERCISE)
    assert "```" not in out and ":label:" not in out and ":class:" not in out
    html = markdown2html_mistune(out)
    assert '<strong id="ex-one">Exercise: Predict, then <em>simulate</em></strong>' in html
    assert "<p>Predict 0.42, then check.</p>" in html
    assert "<strong>Solution</strong>" in html and "The answer is MDAD." in html


def test_a_directive_after_a_paragraph_starts_a_block():
    html = markdown2html_mistune(md("Text.\n```{exercise} T\nBody.\n```\nMore."))
    assert "<p>Text.</p>" in html and "<p><strong>Exercise: T</strong></p>" in html and "<p>More.</p>" in html


def test_other_directives_keep_their_body():
    assert md("```{bibliography}\n```").strip() == ""
    out = md("```{note}\nA {term}`MDAD` note.\n```")
    assert "<strong>Note</strong>" in out and "A MDAD note." in out and "```" not in out
    out = md("```{foo} arg\n:opt: 1\n\nJust the body.\n```")
    assert out.strip() == "Just the body."
    out = md(":::{admonition} Careful\nColon fences too.\n:::")
    assert "<strong>Careful</strong>" in out and "Colon fences too." in out and ":::" not in out
    code = md("```{code-block} python\nx = {glue:text}`tau`\n```")
    assert code.strip() == "```python\nx = {glue:text}`tau`\n```"


def test_nested_fences_in_a_directive():
    out = md("````{exercise} Code\n```python\nprint('{term}`x`')\n```\n````")
    assert "```python\nprint('{term}`x`')\n```" in out and "````" not in out


def test_glossary_terms_are_bold():
    out = md("```{glossary}\nMDAD\n  The minimum detectable ability difference; see {doc}`measures`.\n\n"
             "Seen half\n  The half of the items.\n```")
    assert "**MDAD**: The minimum detectable ability difference; see Measuring reliability." in out
    assert "**Seen half**: The half of the items." in out


def test_targets_and_comments():
    out = md("(my-label)=\n# Title\n% a comment\ntext")
    assert out.split("\n") == ['<a id="my-label"></a>', "# Title", "text"]
    assert page_labels("---\nx: 1\n---\n# Page\n\n(t)=\n## Sec\n")[0] == "Page"


def test_plain_notebook_leaves_the_notebook_alone():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("See {ref}`ex-b`."),
                nbformat.v4.new_markdown_cell("```{exercise} Later\n:label: ex-b\n\nBody\n```"),
                nbformat.v4.new_code_cell("x = '{term}`MDAD`'")]
    out = plain_notebook(nb, page="p", book=Book())
    assert nb.cells[0].source == "See {ref}`ex-b`."
    assert out.cells[0].source == 'See <a href="#ex-b">Later</a>.'  # a label in a later cell
    assert out.cells[2].source == "x = '{term}`MDAD`'"


def test_escape():
    assert escape("a<b & 'c'") == "a&lt;b &amp; &#x27;c&#x27;"
    assert escape("x_1 *y*") == "x\\_1 \\*y\\*"


# --------------------------------------------------------------------------- one real chapter


def test_run_chapter_writes_plain_html(tmp_path, monkeypatch):
    real_bundle("gpqa")
    monkeypatch.setenv("MBUTILS_JOBS", "1")
    params = {"data": "gpqa", "fig1_data": "gpqa", "runs": 2, "sizes": "10,25", "sources": 60, "targets": 12,
              "seed": 0}
    html_path = run_chapter("measures", params, tmp_path, profile="quick")
    page = html_path.read_text(encoding="utf-8")
    for raw in ("{glue", "{term}", "{doc}", "{ref}", "{cite:", "```{exercise", "{solution-", ":label:"):
        assert raw not in page, raw
    nb = nbformat.read(tmp_path / "measures.ipynb", as_version=4)
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "{glue:text}`measures_toy_mdad:s`" in source  # the notebook on disk keeps its MyST
    glued = glued_values(nb)
    used = re.findall(r"\{glue:text\}`([\w-]+):s`", source)
    assert used
    for key in used:
        value = format_plain_text(glued[key]["text/plain"], "s")
        assert value in page.replace("&#x27;", "'"), key
    assert re.search(r"\d+(\.\d)? points\s+here", page)  # a glued number in its sentence
    assert "Exercise: " in page and "(Yauney et al., 2025)" in page


def test_python_roles_show_the_objects_name_in_code():
    from mbutils.publish.standalone import plain_markdown

    text = plain_markdown("See {py:func}`~mbutils.mdad_table`, {py:class}`mbutils.Protocol` and {func}`len`.", {})
    assert "<code>mdad_table()</code>" in text and "<code>mbutils.Protocol</code>" in text
    assert "<code>len()</code>" in text and "~" not in text
