"""Wall time, CPU time and peak memory of a command, over its whole process tree.

Worker processes (loky, Dask, Ray) count too: a poller sums the resident memory of the
command and all its descendants every 50 ms and keeps the peak; CPU time is the user +
system time of the command and of every descendant it waited for (``RUSAGE_CHILDREN``).
"""

from __future__ import annotations

import os
import resource
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")


def _tree(pid: int) -> list[int]:
    pids, stack = [], [pid]
    while stack:
        p = stack.pop()
        pids.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                stack.extend(int(c) for c in (task / "children").read_text().split())
            except OSError:
                pass
    return pids


def _rss(pids: list[int]) -> int:
    total = 0
    for p in pids:
        try:
            total += int(Path(f"/proc/{p}/statm").read_text().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            pass
    return total


@dataclass
class Measurement:
    command: str
    seconds: float
    cpu_seconds: float
    peak_mb: float
    returncode: int
    details: dict = field(default_factory=dict)  # e.g. seconds per book page


def measure(cmd: list[str], env: dict | None = None, cwd: str | None = None) -> Measurement:
    """Run ``cmd`` to completion; raises if it fails (a benchmark of a failure means nothing)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = tempfile.TemporaryFile()  # kept for the message of a failure (pytest reports on stdout)
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.PIPE)
    peak = 0
    done = threading.Event()

    def poll():
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _rss(_tree(proc.pid)))
            time.sleep(0.05)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    _, err = proc.communicate()
    done.set()
    thread.join()
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        out.seek(0)
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{err.decode()[-2000:]}\n--- stdout:\n"
                           f"{out.read().decode(errors='replace')[-6000:]}")
    return Measurement(" ".join(cmd), seconds, cpu, peak / 2**20, proc.returncode)
