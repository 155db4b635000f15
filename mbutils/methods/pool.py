"""Map tasks over loky worker processes *and* this process, all pulling from one queue.

With ``jobs`` cores, a pool of ``jobs`` workers leaves the parent idle while every worker
first spends a second or two importing the scientific stack. Here the parent starts on
the first task at once, ``jobs - 1`` workers start meanwhile, and whoever is free takes
the next task, so no core waits for an import and the last tasks balance out. Results
come back in task order, so callers cannot tell how the work was shared.
"""

from __future__ import annotations

import threading
import warnings
from typing import Callable, Sequence

#: loky's notice when a worker left (its idle timeout, or its memory check after a large task) while tasks
#: were queued; loky starts another worker and no task is lost, so the tables are the same.
WORKER_RESTART_NOTICE = "A worker stopped while some jobs were given to the executor"


def quiet_worker_restarts() -> None:
    """Keep loky's worker-restart notice out of stderr (a chapter's stderr must stay clean: strict builds
    fail on it). Only that message is silenced; installing the filter again replaces it, not repeats it."""
    warnings.filterwarnings("ignore", message=WORKER_RESTART_NOTICE, category=UserWarning)


def map_with_parent(func: Callable, tasks: Sequence[tuple], jobs: int,
                    on_done: Callable[[int], None] = lambda index: None) -> list:
    """``[func(*task) for task in tasks]`` on this process and ``jobs - 1`` loky workers (none: all here).

    ``on_done(index)`` is called once per finished task (from a worker's callback thread or
    from this one), e.g. to advance a progress bar. The first exception, from either side,
    stops further dispatch and is raised here.
    """
    from joblib.externals.loky import get_reusable_executor

    n = len(tasks)
    results: list = [None] * n
    futures = []
    cond = threading.Condition()
    state = {"next": 0, "done": 0, "error": None}

    def take() -> int | None:
        with cond:
            if state["error"] is not None or state["next"] >= n:
                return None
            state["next"] += 1
            return state["next"] - 1

    def submit_next() -> None:
        index = take()
        if index is not None:
            future = executor.submit(func, *tasks[index])
            futures.append(future)
            future.add_done_callback(lambda f, i=index: finished(i, f))

    def finished(index: int, future) -> None:
        with cond:
            if future.cancelled() or future.exception() is not None:
                if state["error"] is None:
                    state["error"] = future.exception() if not future.cancelled() else RuntimeError("a task was cancelled")
                cond.notify_all()
                return
            results[index] = future.result()
            state["done"] += 1
            cond.notify_all()
        on_done(index)
        submit_next()

    workers = jobs - 1
    if workers > 0:
        quiet_worker_restarts()
    executor = get_reusable_executor(max_workers=workers) if workers > 0 else None
    try:
        for _ in range(workers):  # one task in flight per worker; each finished task sends the next
            submit_next()
        while (index := take()) is not None:
            value = func(*tasks[index])
            with cond:
                results[index] = value
                state["done"] += 1
            on_done(index)
        with cond:  # the workers' last tasks
            cond.wait_for(lambda: state["error"] is not None or state["done"] == n)
            error = state["error"]
        if error is not None:
            raise error
    except BaseException:
        with cond:
            state["error"] = state["error"] or RuntimeError("stopped")
        for future in list(futures):
            future.cancel()
        raise
    return results
