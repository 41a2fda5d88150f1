"""Tasks spread over Python threads: each runs once, a failure or a cancel in any thread reaches
the caller and stops the others after their current task, and helpers see the caller's token."""

from __future__ import annotations

import threading

import pytest

from incrowd._runtime import _cancel
from incrowd._runtime._task_threads import run_on_threads
from incrowd.exceptions import BuildCancelled


@pytest.mark.parametrize("n_threads", [1, 2, 5])
@pytest.mark.parametrize("n_tasks", [0, 1, 7, 40])
def test_every_task_runs_exactly_once(n_tasks, n_threads):
    seen: list[int] = []
    lock = threading.Lock()

    def task(i: int) -> None:
        with lock:
            seen.append(i)

    run_on_threads(task, n_tasks, n_threads)
    assert sorted(seen) == list(range(n_tasks))


def test_a_failing_task_stops_the_rest_and_its_error_reaches_the_caller():
    started: list[int] = []

    def task(i: int) -> None:
        started.append(i)
        if i == 3:
            raise ValueError("task 3 failed")

    with pytest.raises(ValueError, match="task 3 failed"):
        run_on_threads(task, 100, 3)
    assert len(started) < 100


def test_helpers_see_the_callers_cancel_token():
    token = _cancel.CancelToken()
    seen: list[bool] = []
    lock = threading.Lock()
    release = threading.Barrier(2, timeout=10)

    def task(i: int) -> None:
        if i < 2:
            release.wait()  # both threads are inside a task at once
        with lock:
            seen.append(_cancel.active())
        if i == 1:
            token.cancel()

    with _cancel.cancellable(token), pytest.raises(BuildCancelled):
        run_on_threads(task, 50, 2)
    assert seen and all(seen)
    assert len(seen) < 50
