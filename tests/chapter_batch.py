"""Chapters run by ``run_chapter`` in a background process at low priority, for session fixtures.

The suite's largest fixtures execute every chapter several times (the shape runs, the synthetic
runs of test_chapters, the clone's runs). Started with the session's first test, such a batch soaks
up the core the one-core tests leave idle. Its process is niced and lowers the weight of its
session's scheduling group (Linux schedules every session as a group of its own at full weight,
whatever the nice values inside; chapter kernels do the same through
:mod:`mbutils.publish.kernel_guard`), so the tests and the quick book's build keep priority. It has
its own environment (a snapshot), so it neither sees nor changes what a running test sets in
``os.environ``.

    python tests/chapter_batch.py SPEC.json

SPEC lists the runs and the number of ``workers`` (runs at a time). A run is a chapter (``chapter``,
``params``, ``out``, ``html``, ``timeout``: :func:`mbutils.publish.chapters.run_chapter`) or a command
(``command``, ``cwd``, ``timeout``). The result of each is written to ``<spec folder>/done/<index>.json``
as soon as it ends: for a chapter ``{"path": ...}`` (the HTML page with ``html``, else the executed
notebook) or ``{"error": ...}``; for a command ``{"returncode": ..., "stderr": ...}``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

#: How much lower the batch's priority is than the tests' (``nice``: 19 is the lowest). At 10 a
#: batch gets about a tenth of a core the tests want, so a kernel it starts under full load is
#: still up within seconds (papermill allows 60); at 19 (a sixtieth) it need not be.
NICENESS = 10


class BackgroundProcess:
    """A command started now in a session of its own, its output in a temporary file: the suite's
    background work (the quick book's build, the batches) waits for it with a deadline and, cut
    short, ends it with every process it started (kernels, workers)."""

    def __init__(self, command: list[str], env: dict):
        self._start = time.perf_counter()
        self._log = tempfile.TemporaryFile(mode="w+")
        self._proc = subprocess.Popen(command, env=env, stdout=self._log, stderr=subprocess.STDOUT, text=True,
                                      start_new_session=True)  # its own process group: stop() ends it all

    def wait(self, timeout: float) -> tuple[str, float, bool]:
        """(output, minutes since the start, whether it was stopped at the deadline) once it ends;
        ``timeout`` counts from the start."""
        late = False
        try:
            self._proc.wait(max(timeout - (time.perf_counter() - self._start), 1))
        except subprocess.TimeoutExpired:
            self.stop()
            late = True
        self._log.seek(0)
        return self._log.read(), (time.perf_counter() - self._start) / 60, late

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode

    def stop(self) -> None:
        """End the process and its group if it still runs (a session cut short)."""
        if self._proc.poll() is None:
            os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()


class ChapterRunFailed(RuntimeError):
    """A run of the batch raised; the message is the exception's, with its type."""


class ChapterBatch(BackgroundProcess):
    """``run_chapter`` over ``runs`` in a niced background process, started now.

    ``runs``: (key, chapter, params, out folder, html) tuples; ``env``: the process's whole
    environment. :meth:`results` waits and returns ``{key: path or ChapterRunFailed}``.
    """

    def __init__(self, runs: list[tuple], env: dict, folder: Path, *, workers: int = 2, timeout: int = 900):
        self._keys = [run[0] for run in runs]
        self._start_batch([{"chapter": chapter, "params": params, "out": str(out), "html": html, "timeout": timeout}
                           for _, chapter, params, out, html in runs], env, folder, workers)

    def _start_batch(self, specs: list[dict], env: dict, folder: Path, workers: int) -> None:
        self._folder = Path(folder)
        (self._folder / "done").mkdir(parents=True, exist_ok=True)
        spec = {"workers": workers, "runs": specs}
        (self._folder / "spec.json").write_text(json.dumps(spec, default=str), encoding="utf-8")
        super().__init__([sys.executable, __file__, str(self._folder / "spec.json")], env)

    def results(self, timeout: float = 3600) -> dict:
        """Every run's path or error, once the process has ended (a crash of the batch itself fails)."""
        out = {}
        for key, result in self._results(timeout).items():
            out[key] = (result if isinstance(result, ChapterRunFailed) else Path(result["path"]) if "path" in result
                        else ChapterRunFailed(result["error"]))
        return out

    def _results(self, timeout: float) -> dict:
        """key -> the run's result dict, or ChapterRunFailed when the batch ended before it."""
        log = self.wait(timeout)[0]
        out = {}
        for index, key in enumerate(self._keys):
            done = self._folder / "done" / f"{index}.json"
            out[key] = (json.loads(done.read_text(encoding="utf-8")) if done.is_file() else ChapterRunFailed(
                f"the batch ended (exit {self.returncode}) before this run finished:\n{log[-3000:]}"))
        return out


class CommandBatch(ChapterBatch):
    """Commands (``key -> argument list``) run in ``cwd`` by a niced background process, started now;
    :meth:`results` waits and returns ``{key: (exit code, stderr)}``."""

    def __init__(self, commands: dict, cwd: Path, env: dict, folder: Path, *, workers: int = 2,
                 timeout: int = 1500):
        self._keys = list(commands)
        self._start_batch([{"command": [str(a) for a in command], "cwd": str(cwd), "timeout": timeout}
                           for command in commands.values()], env, folder, workers)

    def results(self, timeout: float = 3600) -> dict:
        out = {}
        for key, result in self._results(timeout).items():
            if isinstance(result, ChapterRunFailed):
                raise result
            out[key] = (result["returncode"], result["stderr"])
        return out


def _run(index: int, run: dict, done: Path) -> None:
    if "command" in run:
        try:
            ran = subprocess.run(run["command"], cwd=run["cwd"], capture_output=True, text=True,
                                 timeout=run["timeout"])
            result = {"returncode": ran.returncode, "stderr": ran.stderr}
        except subprocess.TimeoutExpired:
            result = {"returncode": -1, "stderr": f"timed out after {run['timeout']} s"}
    else:
        from mbutils.publish.chapters import run_chapter

        try:
            path = run_chapter(run["chapter"], run["params"], run["out"], timeout=run["timeout"], html=run["html"])
            result = {"path": str(path)}
        except Exception as err:  # reported by the test of this run
            result = {"error": f"{type(err).__name__}: {err}"}
    partial = done / f".{index}.json"
    partial.write_text(json.dumps(result), encoding="utf-8")
    partial.replace(done / f"{index}.json")  # whole or absent


def main(spec_path: str) -> None:
    from mbutils.publish.kernel_guard import keep_priority

    os.nice(NICENESS)  # inherited by every kernel and worker the runs start
    keep_priority()  # this process leads a session, which Linux may schedule as a group at full weight
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    done = Path(spec_path).parent / "done"
    with ThreadPoolExecutor(max_workers=spec["workers"]) as pool:
        list(pool.map(_run, range(len(spec["runs"])), spec["runs"], [done] * len(spec["runs"])))


if __name__ == "__main__":
    main(sys.argv[1])
