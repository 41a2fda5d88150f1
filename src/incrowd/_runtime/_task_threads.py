"""Independent compiled calls spread over Python threads: each thread takes the next task when
it finishes one, so a thread beside another process's work simply does fewer tasks instead of
being the one the others wait for.

The tasks must be compiled calls that release the GIL (``nogil=True``) to run side by side.
Each helper thread runs in a copy of the caller's context, so it sees the caller's cancel token
(:mod:`incrowd._runtime._cancel`), which is checked before every task."""

from __future__ import annotations

import contextvars
import threading
from typing import Callable

from . import _cancel


def run_on_threads(task: Callable[[int], None], n_tasks: int, n_threads: int) -> None:
    """Call ``task(i)`` once for each i in ``range(n_tasks)``, in ascending order of start, on
    ``n_threads`` threads (the calling one included). The first error or cancel raised by a
    task stops the others after their current task and is raised here."""
    lock = threading.Lock()
    state = {"next": 0}
    errors: list[BaseException] = []

    def work() -> None:
        while True:
            _cancel.check_cancelled()
            with lock:
                i = state["next"]
                if i >= n_tasks:
                    return
                state["next"] = i + 1
            task(i)

    def guarded() -> None:
        try:
            work()
        except BaseException as exc:  # re-raised in the calling thread
            with lock:
                errors.append(exc)
                state["next"] = n_tasks

    n_helpers = max(0, min(n_threads, n_tasks) - 1)
    helpers = [threading.Thread(target=contextvars.copy_context().run, args=(guarded,), daemon=True)
               for _ in range(n_helpers)]
    for t in helpers:
        t.start()
    try:
        work()
    finally:
        with lock:
            state["next"] = n_tasks  # a failed or cancelled call stops the helpers after their task
        for t in helpers:
            t.join()
    if errors:
        raise errors[0]
