"""The book's pages executed several at a time, before Sphinx reads them one by one.

Jupyter Book (myst-nb in ``cache`` mode) executes each page when Sphinx reads it, so a build
runs its pages one after another, and most of a page's time is one core's work (a kernel,
figures, the single-threaded parts of an experiment). Just before Sphinx reads the pages it
has to read (its ``env-before-read-docs`` event), this hook executes every one of them whose
notebook the execution cache does not hold yet, ``MBUTILS_BOOK_PAGES`` at a time (default:
two, or one on a one-core machine; ``1`` leaves execution to myst-nb), and stores each
executed notebook in that cache exactly as myst-nb would. Sphinx then reads every page from the
cache. The results cache's locks make pages that need the same experiment wait for each
other instead of computing it twice.

A page that fails here is not stored: myst-nb then executes it itself, in order, and reports
the failure as it always does, so a strict build fails the same way with or without this hook.

While pages run, the build says where it is on stderr (:class:`Progress`): a line when a page
starts or ends, and one every :data:`HEARTBEAT_SECONDS` in between, each with the pages done of
all, the pages running and for how long, the time elapsed and an estimate of the time left.
"""

from __future__ import annotations

import heapq
import os
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from mbutils.book.profiles import profile_name

PAGES_ENV = "MBUTILS_BOOK_PAGES"

#: Pages started before the others, in every profile: on two cores a long page started last runs
#: alone at the end. One page's seconds from clean caches, measured on 2026-12-04 (a page that waits
#: for an experiment another page is computing, behind the results cache's lock, counts the wait):
#: quick: guidance 59, use_micro 35, adaptive 24, tables 20, synthetic 20, differences 18, the next 16
#: or less; paper, in this order: guidance 987, adaptive 818, bench_mmlu 761, target_sets 759,
#: sel_anchor 514, differences 361, sel_irt 332, sel_diversity 214, bench_mmlu_pro 187, use_micro
#: 181, the next 66 or less (48.4 minutes in all). The paper times are no lengths for a longest-first
#: order of its own: a page's experiments use every core, so its seconds depend on what runs beside
#: it. Started beside guidance instead of last (when it ran mostly alone), target_sets took 1,613 s,
#: and guidance 1,306 s (on a machine about a quarter slower that afternoon).
LONG_PAGES = ("chapters/guidance", "chapters/use_micro", "chapters/adaptive", "chapters/tables",
              "chapters/synthetic", "chapters/differences")


def start_order(docnames) -> list[str]:
    """The pages in the order they are started: :data:`LONG_PAGES` first, then the rest by name."""
    rank = {name: i for i, name in enumerate(LONG_PAGES)}
    return sorted(docnames, key=lambda name: (rank.get(name, len(rank)), name))


def pages_at_once() -> int:
    """``$MBUTILS_BOOK_PAGES``, else two (one on a one-core machine)."""
    value = os.environ.get(PAGES_ENV, "").strip()
    if not value:
        return min(2, os.cpu_count() or 1)
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{PAGES_ENV}={value!r}: give a whole number of pages, 1 or more")
    return int(value)


def _unexecuted(env, docnames):
    """(docname, path, notebook, read format) of each page to read that is a notebook and not cached."""
    from jupyter_cache import get_cache
    from myst_nb.core.read import create_nb_reader

    nb_config = env.mystnb_config
    cache = get_cache(nb_config.execution_cache_path)
    pending = []
    for docname in start_order(docnames):
        path = Path(env.doc2path(docname))
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        reader = create_nb_reader(str(path), env.myst_config, nb_config, text)
        if reader is None:  # plain Markdown
            continue
        notebook = reader.read(text)
        if "kernelspec" not in notebook.metadata or any(path.match(p) for p in nb_config.execution_excludepatterns):
            continue
        try:
            cache.match_cache_notebook(notebook)
        except KeyError:
            pending.append((docname, path, notebook, reader.read_fmt))
    return cache, pending


def _execute(path: Path, notebook, nb_config):
    """Execute one page in its own folder, its kernel under the book's kernel guard."""
    from jupyter_cache.executors.utils import single_nb_execution

    from mbutils.publish.chapters import kernel_manager_class

    with tempfile.TemporaryDirectory(prefix="mbutils-kernel-") as sockets:
        manager = kernel_manager_class(sockets)
        extra = {"kernel_manager_class": manager} if manager is not None else {}
        return single_nb_execution(notebook, cwd=str(path.parent), timeout=nb_config.execution_timeout,
                                   allow_errors=nb_config.execution_allow_errors, meta_override=True, **extra)


#: Seconds between two progress lines while pages run and none starts or ends.
HEARTBEAT_SECONDS = 30.0
#: A page's execution seconds on average, per profile, before any page of the build has finished
#: (then the pages done tell): the pages' seconds over the pages executed, from clean caches on the
#: shared 2-core machine, 2026-12-06: quick 317 s and 417 s over 20 pages (two builds), default
#: 1,079 s over 20; paper from the times of LONG_PAGES' comment (about 5,500 s over 20).
TYPICAL_PAGE_SECONDS = {"quick": 20.0, "default": 54.0, "paper": 275.0}


def _clock(seconds: float) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour on)."""
    seconds = int(round(max(seconds, 0.0)))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """Where the pages run ahead stand, written to ``stream`` (stderr) as one line per page started
    or finished, and every ``heartbeat`` seconds while a page runs (:meth:`beat`, from a thread).

    The estimate of the time left is when the ``workers`` would be done with the pages waiting and
    what the running ones still need, a page's work being the mean of the pages done so far that
    are not among the ``long`` ones (which start first and would make every page look long), or
    ``typical`` seconds before one is done: a rough guess, which firms up as pages finish.
    """

    def __init__(self, total: int, workers: int, typical: float, stream=None, clock=time.monotonic,
                 heartbeat: float = HEARTBEAT_SECONDS, long=()):
        self.total, self.workers, self.typical = total, max(1, workers), typical
        self.stream, self.clock, self.heartbeat = stream, clock, heartbeat
        self.long = frozenset(long)
        self.start = clock()
        self.running: dict[str, float] = {}
        self.durations: dict[str, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def status(self) -> str:
        now = self.clock()
        ran = [now - t for t in self.running.values()]
        usual = [d for name, d in self.durations.items() if name not in self.long]
        page = sum(usual) / len(usual) if usual else self.typical
        waiting = self.total - len(self.durations) - len(self.running)
        free = sorted([max(page - r, 0.0) for r in ran] + [0.0] * max(self.workers - len(ran), 0))
        for _ in range(waiting):  # each waiting page goes to the worker free first
            heapq.heapreplace(free, free[0] + page)
        left = max(free, default=0.0)
        guess = ("about " + (f"{left / 60:.0f} min" if left >= 90 else f"{max(left, 1):.0f} s") + " left"
                 if waiting + len(ran) else "none left")
        running = ", ".join(f"{name} ({_clock(now - t)})" for name, t in self.running.items()) or "none"
        return (f"{len(self.durations)}/{self.total} pages done, {_clock(now - self.start)} elapsed, {guess}; "
                f"running: {running}")

    def _say(self, text: str) -> None:
        stream = self.stream or sys.stderr
        stream.write(f"[mbutils] {text}\n")
        stream.flush()

    def started(self, name: str) -> None:
        with self._lock:
            self.running[name] = self.clock()
            self._say(f"started {name}: {self.status()}")

    def ended(self, name: str) -> None:
        """``name`` stopped running (said by its worker, before the next page starts there)."""
        with self._lock:
            if name in self.running:
                self.durations[name] = self.clock() - self.running.pop(name)

    def finished(self, name: str, what: str) -> None:
        """``name`` is done: ``what`` says how (``executed in 12 s``, or why myst-nb runs it again)."""
        self.ended(name)
        with self._lock:
            self._say(f"{what}: {self.status()}")

    def beat(self) -> None:
        """Until :meth:`stop`: a status line every ``heartbeat`` seconds while a page runs."""
        while not self._stop.wait(self.heartbeat):
            with self._lock:
                if self.running:
                    self._say(self.status())

    def stop(self) -> None:
        self._stop.set()


def _run_page(page, nb_config, progress: Progress):
    progress.started(page[0])
    try:
        return _execute(page[1], page[2], nb_config)
    finally:
        progress.ended(page[0])


def _store(cache, future, page, progress: Progress) -> None:
    """Put one executed page in the execution cache as myst-nb does; leave a failed one out."""
    from jupyter_cache.base import CacheBundleIn

    docname, path, notebook, fmt = page
    try:
        result = future.result()
    except Exception as err:  # myst-nb executes the page again and reports it
        progress.finished(docname, f"{docname} did not execute ({type(err).__name__}); myst-nb runs it")
        return
    if result.err is not None:
        progress.finished(docname, f"{docname} failed ({type(result.err).__name__}); myst-nb runs it again")
        return
    stage = cache.add_nb_to_project(str(path), read_data=fmt) if fmt else cache.add_nb_to_project(str(path))
    cache.cache_notebook_bundle(CacheBundleIn(notebook, stage.uri, data={"execution_seconds": result.time}),
                                check_validity=False, overwrite=True)
    progress.finished(docname, f"executed {docname} in {result.time:.0f} s")


def execute_pages(app, env, docnames) -> None:
    """Sphinx ``env-before-read-docs``: execute the uncached pages ``pages_at_once()`` at a time."""
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    nb_config = getattr(env, "mystnb_config", None)
    if nb_config is None or nb_config.execution_mode != "cache":
        return
    workers = pages_at_once()
    if workers < 2:
        return
    cache, pending = _unexecuted(env, docnames)
    if not pending:
        return

    logger.info(f"[mbutils] executing {len(pending)} pages, {workers} at a time")
    start = time.perf_counter()
    progress = Progress(len(pending), workers, TYPICAL_PAGE_SECONDS.get(profile_name(), 60.0), long=LONG_PAGES)
    threading.Thread(target=progress.beat, name="mbutils-progress", daemon=True).start()
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(_run_page, page, nb_config, progress): page for page in pending}
            try:
                for future in as_completed(futures):
                    _store(cache, future, futures[future], progress)
            except BaseException:  # interrupted: start no further page (the running ones end with their cells)
                for future in futures:
                    future.cancel()
                raise
    finally:
        progress.stop()
    logger.info(f"[mbutils] {len(pending)} pages executed in {time.perf_counter() - start:.0f} s")
