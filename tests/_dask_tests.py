"""What the Dask tests share: a two-worker local cluster per test module, a command run as a
whole process, and losing a worker mid-run (the tests that show a lost worker changes nothing)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import incrowd
from incrowd.distributed import connect


@pytest.fixture(scope="module")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with connect("local:2") as c:
            yield c


def cli(command: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``incrowd COMMAND ARGS`` as a process of its own, on this checkout's sources."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(incrowd.__file__).parents[1]),
                                                         os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "incrowd.cli", command, *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


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
