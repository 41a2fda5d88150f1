"""The machine the numbers come from: CPU, memory, versions, time, the checkout."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess

import numpy as np
import pandas as pd

from .paths import REPO


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _ram_gib() -> float | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024**2
    except OSError:
        pass
    return None


def machine() -> dict[str, str]:
    """CPU, cores, RAM, OS and the versions that matter for the numbers."""
    import numba

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        usable = os.cpu_count() or 0
    ram = _ram_gib()
    return {
        "cpu": _cpu_model(),
        "cores": f"{usable} usable ({os.cpu_count()} logical CPUs)",
        "ram": f"{ram:.1f} GiB" if ram is not None else "unknown",
        "os": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "pandas": pd.__version__,
    }


def machine_line() -> str:
    m = machine()
    return (
        f"{m['cpu']}, {m['cores']}, {m['ram']} RAM; {m['os']}; Python {m['python']}, "
        f"numpy {m['numpy']}, numba {m['numba']}, pandas {m['pandas']}"
    )


def now_utc() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def git_state(where: str | os.PathLike = REPO, paths: tuple[str, ...] = ("src",)) -> dict:
    """Commit of the checkout at ``where`` and the uncommitted changes under ``paths``
    (``git status --short``); None and [] outside a git checkout."""
    def run(*args):
        try:
            done = subprocess.run(["git", *args], capture_output=True, text=True, cwd=where)
        except OSError:
            return None
        return done.stdout.strip() if done.returncode == 0 else None
    return {"commit": run("rev-parse", "HEAD"), "modified": (run("status", "--short", *paths) or "").splitlines()}
