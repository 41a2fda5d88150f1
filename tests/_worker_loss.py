"""Losing a Dask worker mid-run, for the tests that show a lost worker changes nothing."""

from __future__ import annotations

import os
import signal


class WorkerKiller:
    """A progress callback that kills one worker's process (SIGKILL) the first time a progress
    line starts with ``when``; :meth:`replaced` then waits for the nanny's fresh process."""

    def __init__(self, client, when: str):
        self.client, self.when = client, when
        self.pids = client.run(os.getpid)
        self.killed: list[int] = []

    def __call__(self, line: str) -> None:
        if line.startswith(self.when) and not self.killed:
            victim = sorted(self.pids.values())[0]
            os.kill(victim, signal.SIGKILL)
            self.killed.append(victim)

    def replaced(self) -> bool:
        """Whether a worker was killed and a new process stands in its place."""
        if not self.killed:
            return False
        self.client.wait_for_workers(2, timeout=60)
        return self.killed[0] not in self.client.run(os.getpid).values()
