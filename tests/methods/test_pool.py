"""mbutils.methods.pool.map_with_parent: results in task order, work shared, errors raised."""

import os
import time

import pytest

from mbutils.methods.pool import map_with_parent


def _square_where(x, pause):
    time.sleep(pause)
    return x * x, os.getpid()


def _fail_on(x, bad):
    if x == bad:
        raise ValueError(f"task {x} failed")
    time.sleep(0.05)
    return x


def test_results_come_back_in_task_order_and_both_processes_work():
    done = []
    out = map_with_parent(_square_where, [(x, 0.05) for x in range(40)], jobs=2, on_done=done.append)
    assert [value for value, _ in out] == [x * x for x in range(40)]
    assert sorted(done) == list(range(40))  # every task reported once
    pids = {pid for _, pid in out}
    assert os.getpid() in pids and len(pids) == 2  # the parent and one worker both took tasks


def test_one_job_runs_everything_here():
    out = map_with_parent(_square_where, [(x, 0.0) for x in range(5)], jobs=1)
    assert out == [(x * x, os.getpid()) for x in range(5)]


@pytest.mark.parametrize("bad", [0, 7])  # task 0 goes to the worker first; later tasks mostly run here
def test_the_first_error_is_raised_wherever_it_happened(bad):
    with pytest.raises(ValueError, match=f"task {bad} failed"):
        map_with_parent(_fail_on, [(x, bad) for x in range(20)], jobs=2)


def test_lokys_worker_restart_notice_is_kept_out_of_stderr_and_nothing_else_is():
    """A chapter's strict build fails on stderr; loky's notice that it replaced a worker (idle timeout, or its
    memory check) while tasks were queued changes no result, so map_with_parent silences that message only."""
    import warnings

    from mbutils.methods.pool import WORKER_RESTART_NOTICE

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert map_with_parent(abs, [(-1,), (-2,), (-3,)], jobs=2) == [1, 2, 3]
        warnings.warn(WORKER_RESTART_NOTICE + ". This can be caused by a too short worker timeout or by a memory "
                      "leak.", UserWarning)
        warnings.warn("another warning", UserWarning)
    assert [str(w.message) for w in caught] == ["another warning"]
