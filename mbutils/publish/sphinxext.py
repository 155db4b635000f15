"""The book's Sphinx hook (``extra_extensions: [mbutils.publish.sphinxext]`` in ``_config.yml``).

It keys Jupyter Book's execution cache and Sphinx's environment by profile, data path and
the package's source fingerprint, so switching profile or editing the code re-executes
the pages instead of serving numbers computed under other settings. It imports only
light modules (no numpy, no pandas), so starting Sphinx stays quick.

It also makes the book's copies from the one source (``MBUTILS_COPY``, set by ``python -m
mbutils book --copy``): ``students`` removes every solution (its text, code cells and
outputs; the exercises, their numbers and links stay) and every copy of the sources that
holds them; ``instructors`` shows every solution open. ``MBUTILS_EXECUTION_CACHE`` names the
folder whose execution cache a build reuses (another copy's ``_build``), so a second copy
does not execute the notebooks again. Both copies also write every computing chapter as a
notebook into the built book's ``notebooks/`` folder, with a zip to hand out, and each such
page links its own (:mod:`mbutils.publish.student_notebooks`: the students' notebooks hold a
stub in place of each solution). MathJax is served from the built book (the pinned
``sphinx-mathjax-offline`` package's files), not from a CDN, and the launch buttons open the
chapters' ``.ipynb`` form on the repository's ``notebooks`` branch (see
``.github/workflows/book.yml``), since Colab opens notebooks only. Pages the execution cache
lacks are executed two at a time before Sphinx reads them (:mod:`mbutils.publish.page_runs`), and
every build records its own times, which the pages that state times read
(:mod:`mbutils.publish.build_times`)."""

from __future__ import annotations

import hashlib
import os
import shutil
from importlib.util import find_spec
from pathlib import Path

from mbutils.base.version import __version__
from mbutils.data.datapath import pin_environment, signature
from mbutils.base.fingerprint import book_fingerprint
from mbutils.book.profiles import profile_name
from mbutils.publish import build_times
from mbutils.publish.page_runs import execute_pages
from mbutils.publish.publish import show_pdf_link
from mbutils.publish.student_notebooks import NOTEBOOK_FOLDER, ZIP_NAMES, computing_chapters, write_notebooks


def build_fingerprint() -> str:
    """Profile + data path (and what its folders hold) + package version and source: what a cached page's numbers depend
    on beyond the notebook's own source (so editing mbutils re-executes the pages)."""
    h = hashlib.sha256()
    for part in (profile_name(), os.environ.get("MBUTILS_DATA", ""), signature(), __version__, book_fingerprint()):
        h.update(part.encode() + b"\x1f")
    return f"{profile_name()}-{h.hexdigest()[:12]}"


COPIES = ("default", "students", "instructors")
COPY_ENV = "MBUTILS_COPY"
CACHE_ENV = "MBUTILS_EXECUTION_CACHE"
#: The branch the deployment workflow fills with every chapter as an .ipynb (launch buttons open it).
LAUNCH_BRANCH = "notebooks"
#: MathJax 3 inside the pinned sphinx-mathjax-offline package (requirements.txt), served from _static.
MATHJAX_PACKAGE = "sphinx-mathjax-offline"
MATHJAX_PATH = "mathjax/tex-chtml.js"


def book_copy() -> str:
    """Which copy this build makes: ``$MBUTILS_COPY`` (default, students or instructors)."""
    copy = os.environ.get(COPY_ENV, "").strip() or "default"
    if copy not in COPIES:
        raise ValueError(f"{COPY_ENV}={copy!r}: must be one of {', '.join(COPIES)}")
    return copy


def mathjax_folder() -> Path:
    """The ``static/mathjax`` folder of the installed sphinx-mathjax-offline package."""
    spec = find_spec(MATHJAX_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"the book serves MathJax from the {MATHJAX_PACKAGE} package: "
                           "pip install -r requirements.txt")
    folder = Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax"
    if not (folder / "tex-chtml.js").is_file():
        raise RuntimeError(f"{folder} holds no tex-chtml.js (a broken {MATHJAX_PACKAGE} install)")
    return folder


def _on_config_inited(app, config) -> None:
    pin_environment()  # before kernels start: they inherit this environment
    fingerprint = build_fingerprint()
    copy = book_copy()
    config.mbutils_build = fingerprint  # a change re-reads every page (rebuild="env")
    config.mbutils_copy = copy
    if not config.nb_execution_cache_path:
        cache_root = Path(os.environ.get(CACHE_ENV) or Path(app.outdir).parent).expanduser().resolve()
        config.nb_execution_cache_path = str(cache_root / f".jupyter_cache-{fingerprint}")
    mathjax_folder()  # fail now, not after the whole build, when the package is missing
    config.mathjax_path = MATHJAX_PATH  # relative: under the built book's _static/
    if copy == "students":  # no page may offer the sources, which hold the solutions
        config.html_copy_source = False
        config.html_show_sourcelink = False
        options = dict(config.html_theme_options or {})
        options["use_download_button"] = False
        options["launch_buttons"] = {}  # the launched notebooks hold the solutions too
        config.html_theme_options = options


def _solution_nodes(doctree):
    from sphinx_exercise.nodes import solution_end_node, solution_node, solution_start_node

    return [n for n in doctree.findall(lambda n: isinstance(n, (solution_node, solution_start_node, solution_end_node)))]


def _on_doctree_resolved(app, doctree, docname) -> None:
    """Students: drop every solution node (sphinx-exercise has merged each gated solution, its
    code cells and outputs included, into one node by now). Instructors: unfold them."""
    copy = app.config.mbutils_copy
    if copy == "default":
        return
    _link_notebook(app, doctree, docname, copy)
    for node in _solution_nodes(doctree):
        if copy == "students":
            node.parent.remove(node)
        else:
            node["classes"] = [c for c in node.get("classes", []) if c not in ("dropdown", "toggle")]


def _computing(app) -> set[str]:
    if not hasattr(app, "_mbutils_computing"):
        app._mbutils_computing = set(computing_chapters())
    return app._mbutils_computing


def _link_notebook(app, doctree, docname: str, copy: str) -> None:
    """A line under the page's title linking the page's notebook of this copy and the zip of all."""
    from docutils import nodes

    name = docname.rsplit("/", 1)[-1]
    section = next(iter(doctree.findall(nodes.section)), None)
    if name not in _computing(app) or section is None:
        return
    up = "../" * docname.count("/") + NOTEBOOK_FOLDER
    what = "with a stub to fill in for each exercise" if copy == "students" else "with every solution"
    para = nodes.paragraph(classes=["mbutils-notebook-link"])
    para += nodes.Text(f"This chapter as a notebook {what}: ")
    para += nodes.reference("", f"{name}.ipynb", refuri=f"{up}/{name}.ipynb")
    para += nodes.Text(" (every chapter: ")
    para += nodes.reference("", ZIP_NAMES[copy], refuri=f"{up}/{ZIP_NAMES[copy]}")
    para += nodes.Text(").")
    section.insert(1, para)


def _write_notebooks(app, exc) -> None:
    """The students' or instructors' copy: every computing chapter as a notebook, and their zip."""
    copy = app.config.mbutils_copy
    if exc is None and app.builder.format == "html" and copy != "default":
        write_notebooks(copy, Path(app.outdir) / NOTEBOOK_FOLDER)


def _copy_mathjax(app, exc) -> None:
    if exc is None and app.builder.format == "html":
        shutil.copytree(mathjax_folder(), Path(app.outdir) / "_static" / "mathjax", dirs_exist_ok=True)


def _pdf_link(app, exc) -> None:
    """The front page links the book's PDF only when one is in the output folder (book-pdf puts it
    there); otherwise its sentence stays an inert template (:func:`mbutils.publish.publish.show_pdf_link`)."""
    if exc is None and app.builder.format == "html":
        show_pdf_link(app.outdir, app.config.root_doc)


def _launch_notebooks(app, pagename, templatename, context, doctree) -> None:
    """Point the theme's Binder and Colab buttons at the chapter's ``.ipynb`` on the notebooks
    branch (the sources are MyST text, which Colab cannot open)."""
    branch = (app.config.html_theme_options or {}).get("repository_branch") or "master"
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in group.get("buttons", []):
            url = button.get("url")
            if not url:
                continue
            url = url.replace(f"/{branch}?urlpath=", f"/{LAUNCH_BRANCH}?urlpath=")
            url = url.replace(f"/blob/{branch}/", f"/blob/{LAUNCH_BRANCH}/")
            button["url"] = url[:-3] + ".ipynb" if url.endswith(".md") else url


def _dedupe_scripts(app, pagename, templatename, context, doctree) -> None:
    """Drop repeated inline scripts: sphinx-thebe registers its config script twice under
    Jupyter Book, and the second ``const THEBE_JS_URL`` is a JavaScript error on every page."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        # the copies differ only in filename None vs "" (inline scripts)
        key = (str(getattr(script, "filename", script) or ""),
               repr(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app):  # Sphinx's entry point for `extra_extensions: [mbutils.publish.sphinxext]`
    app.add_config_value("mbutils_build", "", "env")
    app.add_config_value("mbutils_copy", "default", "env")
    app.connect("config-inited", _on_config_inited, priority=400)
    app.connect("doctree-resolved", _on_doctree_resolved)
    app.connect("env-before-read-docs", execute_pages, priority=900)  # after myst-nb's set-up
    app.connect("html-page-context", _launch_notebooks, priority=600)  # after the theme's buttons (501)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    app.connect("build-finished", _copy_mathjax)
    app.connect("build-finished", _pdf_link)
    app.connect("build-finished", _write_notebooks)
    build_times.setup(app)  # the {mbutils-build-times} directive and the build's own record
    return {"parallel_read_safe": True, "parallel_write_safe": True}
