"""The book's Sphinx hook (``extra_extensions: [mbutils.book.sphinxext]`` in ``_config.yml``).

It keys Jupyter Book's execution cache and Sphinx's environment by profile, data path and
the package's source fingerprint, so switching profile or editing the code re-executes
the pages instead of serving numbers computed under other settings. It imports only
light modules (no numpy, no pandas), so starting Sphinx stays quick."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from mbutils import __version__
from mbutils.data.datapath import pin_environment, signature
from mbutils.base.fingerprint import book_fingerprint
from mbutils.book.profiles import profile_name


def build_fingerprint() -> str:
    """Profile + data path (and what its folders hold) + package version and source: what a cached page's numbers depend
    on beyond the notebook's own source (so editing mbutils re-executes the pages)."""
    h = hashlib.sha256()
    for part in (profile_name(), os.environ.get("MBUTILS_DATA", ""), signature(), __version__, book_fingerprint()):
        h.update(part.encode() + b"\x1f")
    return f"{profile_name()}-{h.hexdigest()[:12]}"


def _on_config_inited(app, config) -> None:
    pin_environment()  # before kernels start: they inherit this environment
    fingerprint = build_fingerprint()
    config.mbutils_build = fingerprint  # a change re-reads every page (rebuild="env")
    if not config.nb_execution_cache_path:
        config.nb_execution_cache_path = str(Path(app.outdir).parent / f".jupyter_cache-{fingerprint}")


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


def setup(app):  # Sphinx's entry point for `extra_extensions: [mbutils.book.sphinxext]`
    app.add_config_value("mbutils_build", "", "env")
    app.connect("config-inited", _on_config_inited, priority=400)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
