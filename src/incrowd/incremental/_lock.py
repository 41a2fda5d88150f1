"""One writer at a time per state file: an OS lock on ``<state>.lock`` around every rewrite.

A state writer reads the file, changes it in memory and renames a new file into place; two
writers that overlap would each start from the same old file, and the later rename would drop
the earlier writer's rows. The lock (``filelock``: ``fcntl.flock`` on POSIX, released by the OS
when the holder dies, so a killed writer never leaves it stuck) serialises the whole
read-modify-write. The lock file itself stays behind after release: deleting it while another
process waits on it would let a third process lock a new file of the same name.

While held, ``<state>.lock.holder`` names the holder (pid, host, command, start time) so that a
refused writer can say who is writing; the note is advisory and removed on release.
"""

from __future__ import annotations

import contextvars
import datetime as _dt
import json
import math
import os
import socket
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..exceptions import DataError, ParameterError, StateLockedError

#: seconds a writer waits for another writer by default (CLI --wait, API wait=)
DEFAULT_WAIT = 10.0

# What the holder note calls this process; the CLI sets "incrowd incremental add" and so on.
_command: contextvars.ContextVar[str | None] = contextvars.ContextVar("incrowd_lock_command", default=None)


@contextmanager
def describe_as(command: str) -> Iterator[None]:
    """Name the running command in holder notes and lock errors (the CLI's subcommand)."""
    token = _command.set(command)
    try:
        yield
    finally:
        _command.reset(token)


def check_wait(wait) -> float:
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not math.isfinite(wait) or wait < 0:
        raise ParameterError(f"wait must be a number of seconds >= 0; got {wait!r}")
    return float(wait)


def lock_path(state: Path) -> Path:
    return state.with_name(state.name + ".lock")


def holder_path(state: Path) -> Path:
    return state.with_name(state.name + ".lock.holder")


def _describe_holder(state: Path) -> str:
    try:
        note = json.loads(holder_path(state).read_text())
        who = f"pid {int(note['pid'])}"
        if note.get("host") and note["host"] != socket.gethostname():
            who += f" on {note['host']}"
        return f"{who} ({note.get('command') or 'incrowd'}, since {note.get('since', '?')})"
    except (OSError, ValueError, KeyError, TypeError):
        # the holder has not written its note yet, or it is not incrowd
        return "another process"


def _hint() -> str:
    return "try again or pass --wait" if _command.get() else "try again or pass a longer wait="


@contextmanager
def state_lock(state: str | os.PathLike, wait: float = DEFAULT_WAIT) -> Iterator[None]:
    """Hold the writer lock of ``state`` for the body; wait up to ``wait`` seconds for it.

    Raises :class:`StateLockedError` (naming the holder) when another writer keeps it longer.
    """
    from filelock import FileLock, Timeout

    wait = check_wait(wait)
    path = Path(state)
    if not path.parent.is_dir():  # filelock would create the folder; a state never does
        raise DataError(f"state file folder {str(path.parent)!r} does not exist")
    lock = FileLock(str(lock_path(path)))
    try:
        lock.acquire(timeout=wait)
    except Timeout:
        raise StateLockedError(
            f"state file {str(path)!r} is being written by {_describe_holder(path)}; {_hint()}"
        ) from None
    note = holder_path(path)
    try:
        try:
            note.write_text(json.dumps({
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "command": _command.get() or " ".join([Path(sys.argv[0]).name or "python"] + sys.argv[1:])[:200],
                "since": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            }))
        except OSError:
            pass  # the note only helps a refused writer's message
        yield
    finally:
        try:
            note.unlink()
        except OSError:
            pass
        lock.release()
