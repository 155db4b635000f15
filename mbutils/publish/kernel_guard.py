"""Run a chapter's kernel so that it, and every worker it starts, ends with ``run-chapter``.

    python -m mbutils.publish.kernel_guard PARENT_PID KERNEL_COMMAND...

The kernel manager starts each kernel in a session of its own, with this guard as the session's
leader. A ``run-chapter`` killed outright (SIGKILL) cannot stop its kernel: ipykernel notices its
lost parent and exits, but the joblib workers an experiment started would live on until their idle
timeout, holding the caller's pipes. The guard watches the process that started it and, once it is
gone, kills the whole process group, workers included. Otherwise it only waits: interrupts reach
the kernel (the manager signals the group), a termination is passed on, and the kernel's exit
status becomes the guard's.

A niced caller's kernel stays niced: where Linux schedules each session as a group of its own
(autogroups), a new session competes at full weight whatever its processes' nice values, so the
guard gives its session's group its own niceness.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

POLL_SECONDS = 0.5


def _parent_alive(parent: int) -> bool:
    return os.getppid() == parent


def keep_priority() -> None:
    """This session's scheduling group takes this process's niceness (Linux autogroups; else nothing)."""
    niceness = os.nice(0)
    if niceness > 0:
        try:
            with open("/proc/self/autogroup", "w") as group:
                group.write(str(niceness))
        except OSError:  # no autogroups here, or not allowed: the nice value alone applies
            pass


def main(argv: list[str]) -> int:
    parent, command = int(argv[0]), argv[1:]
    keep_priority()
    if os.getpgrp() != os.getpid():  # started outside a session of its own: lead a group, so the kill below hits only ours
        os.setpgid(0, 0)
    signal.signal(signal.SIGINT, lambda *_: None)  # the interrupt is the kernel's (a handler, not SIG_IGN: not inherited)
    kernel = subprocess.Popen(command)
    signal.signal(signal.SIGTERM, lambda *_: kernel.terminate())
    while kernel.poll() is None:
        if not _parent_alive(parent):
            os.killpg(os.getpgrp(), signal.SIGKILL)  # the kernel, its workers and this guard
        time.sleep(POLL_SECONDS)
    return kernel.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
