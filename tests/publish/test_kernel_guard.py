"""A chapter's kernel under run-chapter (mbutils.publish.kernel_guard): scheduled at the caller's niceness,
gone with its workers when run-chapter is killed, and a cell that outlives --timeout named with the limit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import MYST_FRONT_MATTER
from helpers import run_cli as run

SLOW_CHAPTER = MYST_FRONT_MATTER + """# Slow

```{code-cell} ipython3
:tags: [parameters]
seconds = 60
record = ""
```

```{code-cell} ipython3
x = 1
```

```{code-cell} ipython3
import os, pathlib, time
from joblib import Parallel, delayed
pids = set(Parallel(n_jobs=2)(delayed(os.getpid)() for _ in range(8)))
if record:
    pathlib.Path(record).write_text(" ".join(map(str, {os.getpid(), *pids})))
time.sleep(seconds)
```
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()


@pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="no scheduling autogroups (Linux) here")
def test_a_niced_callers_kernel_session_is_scheduled_niced():
    """The kernel manager starts each kernel in a session of its own, which Linux schedules as a group
    at full weight whatever its nice values; the guard gives the group the caller's niceness."""
    from mbutils.publish import kernel_guard

    show = [sys.executable, "-c", "print(open('/proc/self/autogroup').read())"]
    done = subprocess.run([sys.executable, "-I", kernel_guard.__file__, str(os.getpid()), *show], capture_output=True,
                          text=True, check=True, start_new_session=True, preexec_fn=lambda: os.nice(7))
    assert done.stdout.strip().endswith("nice 7"), done.stdout
    plain = subprocess.run([sys.executable, "-I", kernel_guard.__file__, str(os.getpid()), *show],
                           capture_output=True, text=True, check=True, start_new_session=True)
    assert plain.stdout.strip().endswith("nice 0"), plain.stdout


@pytest.mark.skipif(sys.platform != "linux", reason="process-group guard checked on Linux")
def test_killed_run_chapter_takes_its_kernel_and_workers_along(tmp_path):
    chapter = tmp_path / "slow.md"
    chapter.write_text(SLOW_CHAPTER)
    record = tmp_path / "pids"
    proc = subprocess.Popen([sys.executable, "-m", "mbutils", "run-chapter", str(chapter), "--out",
                             str(tmp_path / "out"), "--quiet", "-p", "record", str(record)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (record.exists() and record.read_text()) and time.monotonic() < deadline:
        time.sleep(0.2)
    pids = [int(p) for p in record.read_text().split()]
    assert len(pids) >= 2  # the kernel and at least one worker
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 15
    while any(map(_alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(map(_alive, pids)), [p for p in pids if _alive(p)]


def test_a_cell_timeout_names_the_cell_and_the_limit(tmp_path):
    chapter = tmp_path / "slow.md"
    chapter.write_text(SLOW_CHAPTER)
    code, _, err = run("run-chapter", chapter, "--out", tmp_path / "out", "--quiet", "--timeout", "3")
    assert code == 1
    assert "code cell 3 of 3 ('import os, pathlib, time')" in err and "--timeout 3 seconds" in err
    assert "Here is a preview" not in err
