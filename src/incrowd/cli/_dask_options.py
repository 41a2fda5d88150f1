"""The options of a run on Dask, shared by every command that takes ``--scheduler``."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

SchedulerOption = Annotated[
    Optional[str],
    typer.Option("--scheduler", help="Run on Dask (extra incrowd\\[dask]): 'local:N' starts N local "
                 "worker processes (N in [1, 4 x the cores]), else the tcp:// address of a running "
                 "scheduler (tcp://host:8786). "
                 "Without it everything runs in process.", show_default=False),
]
SchedulerTimeoutOption = Annotated[
    float,
    typer.Option("--scheduler-timeout", help="Seconds to wait for a scheduler address to answer as a "
                 "Dask scheduler (in (0, 3600]).", show_default=True),
]
MemoryLimitOption = Annotated[
    Optional[str],
    typer.Option("--memory-limit", help="With --scheduler local:N: each worker's memory (e.g. 2GiB); a worker "
                 "above it spills to disk, then is restarted.", show_default=False),
]


def check_scheduler(scheduler: str | None, timeout: float) -> None:
    """Refuse a malformed --scheduler or --scheduler-timeout before any input is read."""
    if scheduler is None:
        return
    from ..distributed import check_timeout, parse_scheduler

    parse_scheduler(scheduler)
    check_timeout(timeout)
