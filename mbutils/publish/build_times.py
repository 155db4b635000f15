"""Build times the book states, taken from its builds' own measurements, never written by hand.

Why: times typed into the text go stale (a page said "about 12 minutes" where a clean build on a
loaded 2-core machine took 18). So the build measures itself and the pages read the measures:

* every successful HTML build writes ``build-times.json`` into its ``_build`` folder, one record
  per profile: when it finished, the machine's cores, the pages run at once, the whole build's
  seconds, how many pages it executed, and each page's execution seconds (myst-nb's record of
  the run that produced the page's outputs, in this build or the one whose cache it reuses);
* the ``{mbutils-build-times}`` directive (``:show: profiles`` or ``:show: pages``) stands where
  a page states times. It becomes, when the page is written, a sentence per profile from the
  last measured build of that profile in this folder, or the list of this build's per-page
  seconds with their sum; where nothing was measured yet it says so instead of a number.
  Pages holding it are read again in every build, so their times are the latest.
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives

from mbutils.book.profiles import profile_name

TIMES_FILE = "build-times.json"
PROFILE_ORDER = ("quick", "default", "paper")


def times_path(outdir) -> Path:
    """``_build/build-times.json`` for the HTML folder ``outdir`` (``_build/html``)."""
    return Path(outdir).parent / TIMES_FILE


def load_times(outdir) -> dict:
    """profile -> the last measured build's record (empty when none was measured here)."""
    path = times_path(outdir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_record(outdir, profile: str, record: dict) -> Path:
    """Replace ``profile``'s record in ``build-times.json`` (atomically)."""
    data = load_times(outdir)
    data[profile] = record
    path = times_path(outdir)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)
    return path


def minutes(seconds: float) -> str:
    """``42 s`` under two minutes, else ``18 minutes`` (``1.6 hours`` from 90 minutes)."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.1f} hours"


def page_seconds(env) -> dict[str, float]:
    """docname -> execution seconds of each page myst-nb executed or took from its cache."""
    from myst_nb.sphinx_ import NbMetadataCollector

    out = {}
    for docname in sorted(NbMetadataCollector.get_doc_data(env)):
        data = NbMetadataCollector.get_exec_data(env, docname) or {}
        if data.get("succeeded") and data.get("runtime") is not None:
            out[docname] = float(data["runtime"])
    return out


def profile_sentences(times: dict) -> list[str]:
    """One sentence per profile: its last measured build here, or that none was measured."""
    out = []
    for profile in [*PROFILE_ORDER, *sorted(set(times) - set(PROFILE_ORDER))]:
        rec = times.get(profile)
        if not rec:
            out.append(f"{profile}: no build with this profile has been measured in this book folder yet.")
            continue
        pages = rec.get("pages") or {}
        executed = rec.get("executed_pages", 0)
        out.append(f"{profile}: the last build took {minutes(rec['build_seconds'])} "
                   f"({rec['finished'][:10]}, {rec['cores']} cores, {rec['pages_at_once']} pages at once), "
                   + (f"executing {executed} of its {len(pages)} computing pages; "
                      if executed else f"reusing the executed notebooks of its {len(pages)} computing pages; ")
                   + f"those pages take {minutes(sum(pages.values()))} of execution in all.")
    return out


class build_times_node(nodes.General, nodes.Element):
    """Placeholder, filled in when the page is written (:func:`fill`)."""


class BuildTimes(Directive):
    """``{mbutils-build-times}`` with ``:show: profiles`` (the default) or ``:show: pages``."""

    option_spec = {"show": lambda arg: directives.choice(arg, ("profiles", "pages"))}

    def run(self):
        env = self.state.document.settings.env
        if not hasattr(env, "mbutils_build_time_docs"):
            env.mbutils_build_time_docs = set()
        env.mbutils_build_time_docs.add(env.docname)
        return [build_times_node(show=self.options.get("show", "profiles"))]


def fill(app, doctree, docname) -> None:
    """Replace each placeholder with the measured times (``doctree-resolved``)."""
    for node in list(doctree.findall(build_times_node)):
        if node["show"] == "profiles":
            new = nodes.bullet_list()
            for sentence in profile_sentences(load_times(app.outdir)):
                new += nodes.list_item("", nodes.paragraph(text=sentence))
        else:
            seconds = page_seconds(app.env)
            if not seconds:
                new = nodes.paragraph(text="No page of this build has an execution time yet (myst-nb recorded "
                                           "none), so none is stated.")
            else:
                titles = {d: app.env.titles[d].astext() if d in app.env.titles else d for d in seconds}
                new = nodes.paragraph(text=(
                    f"Execution of each computing page in this build (profile {profile_name()}; the seconds "
                    f"of the run that produced its outputs, {minutes(sum(seconds.values()))} in all): "
                    + "; ".join(f"{titles[d]} {minutes(s)}" for d, s in
                                sorted(seconds.items(), key=lambda item: -item[1])) + "."))
        node.replace_self(new)


def record(app, exc) -> None:
    """``build-finished``: write this build's record for its profile (HTML builds that succeeded)."""
    if exc is not None or app.builder.format != "html":
        return
    from mbutils.publish.page_runs import pages_at_once

    started = getattr(app, "mbutils_started", None)
    if started is None:
        return
    from myst_nb.sphinx_ import NbMetadataCollector

    executed = [(NbMetadataCollector.get_exec_data(app.env, d) or {}).get("mtime") or 0.0
                for d in page_seconds(app.env)]
    save_record(app.outdir, profile_name(), {
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "cores": os.cpu_count() or 1, "pages_at_once": pages_at_once(),
        "build_seconds": round(time.monotonic() - started, 1),
        "executed_pages": sum(1 for d in executed if d >= getattr(app, "mbutils_wall_start", float("inf"))),
        "pages": {d: round(s, 1) for d, s in page_seconds(app.env).items()}})


def start(app, config) -> None:
    app.mbutils_started, app.mbutils_wall_start = time.monotonic(), time.time()


def reread(app, env, added, changed, removed) -> list[str]:
    """``env-get-outdated``: the pages stating times are read again in every build."""
    return sorted(getattr(env, "mbutils_build_time_docs", set()) - set(removed))


def merge(app, env, docnames, other) -> None:
    docs = getattr(other, "mbutils_build_time_docs", set())
    env.mbutils_build_time_docs = getattr(env, "mbutils_build_time_docs", set()) | docs


def purge(app, env, docname) -> None:
    getattr(env, "mbutils_build_time_docs", set()).discard(docname)


def setup(app) -> None:
    """Connect everything above (called by :mod:`mbutils.publish.sphinxext`)."""
    app.add_node(build_times_node)
    app.add_directive("mbutils-build-times", BuildTimes)
    app.connect("config-inited", start)
    app.connect("env-get-outdated", reread)
    app.connect("env-merge-info", merge)
    app.connect("env-purge-doc", purge)
    app.connect("doctree-resolved", fill)
    app.connect("build-finished", record)
