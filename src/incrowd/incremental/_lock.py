"""One writer at a time per state file: an OS lock on ``<state>.lock`` around every rewrite.

A state writer reads the file, changes it in memory and renames a new file into place; two
writers that overlap would each start from the same old file, and the later rename would drop
the earlier writer's rows. The lock (``fcntl.flock`` on POSIX, released by the OS when the holder
dies, so a killed writer never leaves it stuck) serialises the whole read-modify-write.

The lock file holds a note naming the holder (pid, host, command, start time) so that a refused
writer can say who is writing, and it is removed on release so that nothing is left beside the
state. Removing it is safe because a writer that locked a file which has since been removed (it
opened the name just before the previous holder removed it) sees that the name now points
elsewhere and starts over; without ``flock`` (not POSIX) ``filelock`` is used and the file stays.

The lock belongs to the file, not to the name it is reached by: the lock file sits beside the
resolved file (symbolic links and ``..`` followed), so writers through a link and through the
real name exclude each other. A state file with a second hard link is refused by every writer:
the new state is renamed into place, which would leave the other name holding the old state,
one state silently split into two files.
"""

from __future__ import annotations

import contextvars
import datetime as _dt
import json
import math
import os
import socket
import sys
import time
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
    """The lock file of ``state``: beside the file the name resolves to, so every name of it
    (a symbolic link, a path through a linked folder) shares one lock."""
    real = Path(os.path.realpath(state))
    return real.with_name(real.name + ".lock")


def check_single_link(state: Path) -> None:
    """Refuse a state file that has more than one name in the file system (hard links)."""
    try:
        links = os.stat(state).st_nlink
    except OSError:
        return  # not there yet (base), or unreadable: the writer reports that itself
    if links > 1:
        raise DataError(
            f"state file {str(state)!r} has {links} hard links; a write replaces the file, which "
            "would leave the other name(s) with the old state: keep one name (remove the other "
            "hard links, or make them symbolic links) and try again")


def _describe_holder(state: Path) -> str:
    try:
        note = json.loads(lock_path(state).read_text())
        who = f"pid {int(note['pid'])}"
        if note.get("host") and note["host"] != socket.gethostname():
            who += f" on {note['host']}"
        return f"{who} ({note.get('command') or 'incrowd'}, since {note.get('since', '?')})"
    except (OSError, ValueError, KeyError, TypeError):
        # the holder has not written its note yet, or it is not incrowd
        return "another process"


def _hint() -> str:
    return "try again or pass --wait" if _command.get() else "try again or pass a longer wait="


class _Timeout(Exception):
    pass


def _holder_note() -> bytes:
    return json.dumps({
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": _command.get() or " ".join([Path(sys.argv[0]).name or "python"] + sys.argv[1:])[:200],
        "since": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }).encode()


@contextmanager
def _flock(path: Path, wait: float) -> Iterator[None]:
    import fcntl

    deadline = time.monotonic() + wait
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() >= deadline:
                raise _Timeout from None
            time.sleep(0.02)
            continue
        try:
            mine = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            mine = False
        if mine:
            break
        os.close(fd)  # locked a file the previous holder had already removed: start over
    try:
        try:
            os.ftruncate(fd, 0)
            os.write(fd, _holder_note())
        except OSError:
            pass  # the note only helps a refused writer's message
        yield
    finally:
        try:
            path.unlink()  # while still locked, so no one can lock this file and think it current
        except OSError:
            pass
        os.close(fd)


@contextmanager
def _filelock(path: Path, wait: float) -> Iterator[None]:
    from filelock import FileLock, Timeout

    lock = FileLock(str(path))
    try:
        lock.acquire(timeout=wait)
    except Timeout:
        raise _Timeout from None
    try:
        yield
    finally:
        lock.release()


@contextmanager
def state_lock(state: str | os.PathLike, wait: float = DEFAULT_WAIT) -> Iterator[None]:
    """Hold the writer lock of ``state`` for the body; wait up to ``wait`` seconds for it.

    Raises :class:`StateLockedError` (naming the holder) when another writer keeps it longer.
    """
    wait = check_wait(wait)
    path = Path(state)
    if not path.parent.is_dir():  # filelock would create the folder; a state never does
        raise DataError(f"state file folder {str(path.parent)!r} does not exist")
    locker = _flock if os.name == "posix" else _filelock
    try:
        with locker(lock_path(path), wait):
            check_single_link(path)  # under the lock: no writer links and writes in between
            yield
    except _Timeout:  # raised only while acquiring: the body never sees this private type
        raise StateLockedError(
            f"state file {str(path)!r} is being written by {_describe_holder(path)}; {_hint()}"
        ) from None
