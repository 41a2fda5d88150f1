"""What the Dask tests share: a two-worker local cluster per test module, a command run as a
whole process, losing a worker mid-run (the tests that show a lost worker changes nothing), and
the comparison of a report made on Dask with the in-process one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import json
import warnings
from pathlib import Path

import pytest

import incrowd
from incrowd.distributed import connect
from incrowd.reporting import Report


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


#: what the in-process report has and the one on Dask leaves out (no hierarchy: no height or NCP)
LEFT_OUT_UTILITY = {"height", "mean_height", "ncp", "mean_ncp", "mean_ncp_columns", "ncp_undefined",
                    "mean_ncp_all_rows"}


def _close(here, there, where: str) -> None:
    if isinstance(here, dict):
        assert set(here) == set(there), where
        for key in here:
            _close(here[key], there[key], f"{where}.{key}")
    elif isinstance(here, list):
        assert len(here) == len(there), where
        for i, (a, b) in enumerate(zip(here, there)):
            _close(a, b, f"{where}[{i}]")
    elif isinstance(here, float) and isinstance(there, float):
        assert there == pytest.approx(here, rel=1e-9, abs=1e-12, nan_ok=True), where
    else:
        assert here == there, where


def assert_same_report(here: Report | dict, there: Report | dict) -> None:
    """``there`` (on Dask) has ``here``'s figures, but those it says it left out; each a
    :class:`Report` or a report's JSON file as read (both compared as the JSON holds them)."""
    here, there = (json.loads(x.to_json()) if isinstance(x, Report) else x for x in (here, there))
    _close(here["risk"]["classes"], there["risk"]["classes"], "risk.classes")
    assert set(here["utility"]) == set(there["utility"])
    if "numeric" in here["utility"]:
        _close(here["utility"]["numeric"], there["utility"]["numeric"], "utility.numeric")
    if "categorical" in here["utility"]:
        mine = {k: v for k, v in here["utility"]["categorical"].items() if k not in LEFT_OUT_UTILITY}
        _close(mine, there["utility"]["categorical"], "utility.categorical")
    for key in ("rows_original", "rows_release", "suppressed", "quasi_identifiers", "numeric", "categorical", "k",
                "threshold"):
        assert there["about"][key] == here["about"][key], key
    left_out = there["about"]["left_out"]
    assert "verdict" in left_out and there["verdict"] == []
    assert ("drisk, drisk_rmd, record_linkage" in left_out) == ("drisk" in here["risk"])
