"""Fresh processes and what /proc says about them.

A child prints its result as one JSON line, last (:func:`hand_back`); the parent reads that line
back (:func:`child_json`, :func:`run_child`, :func:`run_code`). Timing a method in a fresh
process keeps one run's caches, heap and compiled code out of the next.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def hand_back(result: object) -> None:
    """The child's side: print ``result`` as the last stdout line, as JSON."""
    print(json.dumps(result), flush=True)


def child_json(argv: list[str], *, timeout: float | None = None, env: dict | None = None,
               cwd: str | os.PathLike | None = None) -> dict:
    """Run ``argv`` in a fresh process; its last stdout line, read as JSON. Raises
    subprocess.CalledProcessError when it fails and subprocess.TimeoutExpired past ``timeout``
    (the child is killed)."""
    done = subprocess.run(list(map(str, argv)), capture_output=True, text=True, timeout=timeout, check=True,
                          env=env, cwd=cwd)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_child(script: str, *args: object, timeout: float | None = None, flag: str = "--one") -> dict:
    """Run ``python script --one *args`` in a fresh process; its last stdout line, read as JSON.
    Raises subprocess.TimeoutExpired past ``timeout`` (the child is killed)."""
    return child_json([sys.executable, script, flag, *args], timeout=timeout)


def run_code(code: str, *args: object, timeout: float | None = None, env: dict | None = None) -> dict:
    """Run ``python -c code *args`` in a fresh process; its last stdout line, read as JSON."""
    return child_json([sys.executable, "-c", code, *args], timeout=timeout, env=env)


class Burner:
    """A Python busy loop in its own process, keeping one core busy while the context is open."""

    pid = -1

    def __enter__(self):
        # The loop ends by itself if this process dies without killing it.
        self.proc = subprocess.Popen([sys.executable, "-c", f"import os\nwhile os.getppid() == {os.getpid()}: pass"])
        Burner.pid = self.proc.pid
        time.sleep(0.5)  # let it reach the run queue before the first timing
        return self

    def __exit__(self, *exc):
        alive = self.proc.poll() is None
        Burner.pid = -1
        self.proc.kill()
        self.proc.wait()
        if not alive:
            raise SystemExit("the CPU burner ended early; the contention figures are not valid")


def proc_status(field: str, pid: int | str = "self") -> int:
    """A size field of /proc/<pid>/status (VmRSS, VmHWM, ...) in bytes."""
    with open(f"/proc/{pid}/status", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not in /proc/{pid}/status")


def cpu_seconds(pid: int | str = "self") -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_tree(pid: int) -> list[int]:
    """A process and its live descendants (Linux /proc)."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
    return sorted(set(found))


def peak_rss_bytes(pid: int) -> int:
    """VmHWM of a process and its live children, summed (an upper bound on their joint peak)."""
    total = 0
    for p in process_tree(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def system_jiffies() -> tuple[int, int]:
    """(busy, total) CPU jiffies of the whole machine since boot, from /proc/stat."""
    with open("/proc/stat", encoding="utf-8") as fh:
        f = [int(v) for v in fh.readline().split()[1:]]
    idle = f[3] + f[4]  # idle + iowait
    total = sum(f[:8])  # guest time is already inside user
    return total - idle, total


def process_jiffies(pids: list[int]) -> int:
    """utime + stime of the processes (all their threads), from /proc/PID/stat."""
    used = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used += int(fields[11]) + int(fields[12])
    return used


class OthersMeter:
    """Cores kept busy by processes other than this bench's (workers, burner, itself) over a span:
    what "idle" really was on a shared machine."""

    def __init__(self, pids: list[int]):
        self.pids = pids
        self.cores = os.cpu_count() or 1

    def start(self) -> None:
        self.busy0, self.total0 = system_jiffies()
        self.ours0 = process_jiffies(self.pids)

    def cores_busy(self) -> float:
        busy, total = system_jiffies()
        ours = process_jiffies(self.pids)
        span = max(total - self.total0, 1)
        return max(0.0, (busy - self.busy0) - (ours - self.ours0)) / span * self.cores
