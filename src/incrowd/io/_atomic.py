"""Safe output: the one place where incrowd decides whether and how a file may be written.

- An output that is one of the inputs (after resolving symbolic links and ``..``, or the same
  file through a hard link) is refused, and so is an output inside an input folder.
- Only regular files are replaced. A symbolic link is followed and the file it names is
  replaced (the link stays); a FIFO, device, socket, directory, link loop or dangling link is
  refused, also when it appears in place of the target while the new file is being written.
- The new content goes to a hidden temporary file beside the target (``.NAME.<pid>.<hex>.tmp``)
  that is renamed over the target only when complete. Every failure, Ctrl-C and SIGTERM
  included, removes the temporary and any companion (DuckDB's ``.wal``); after a kill -9 the
  old file is intact and the next write to the same target sweeps temporaries whose process is
  gone.
- Write failures raise :class:`OutputWriteError` naming the path the user gave and the reason,
  never the temporary name.
- Inputs the same way (:func:`check_input_file`): only a regular file (or a link to one) is
  read; a FIFO, device, socket or directory is refused by its kind before anything opens it.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import shutil
import signal
import stat
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from ..exceptions import DataError, IncrowdError, OutputWriteError

#: the output name meaning standard output (only where the format is text)
STDOUT = "-"

#: companions a writer may leave beside its file (DuckDB's write-ahead log)
_COMPANIONS = (".wal",)

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def is_stdout(path: str | os.PathLike | None) -> bool:
    return path is not None and os.fspath(path) == STDOUT


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def check_input_file(path: str | os.PathLike, what: str) -> None:
    """Refuse an input that is not a regular file (or a link to one) before anything opens it:
    opening a FIFO waits for a writer that may never come, a device never ends, and a folder
    is no file; each is named by its kind, never called missing."""
    shown = os.fspath(path)
    try:
        st = os.stat(shown)
    except FileNotFoundError:
        if os.path.islink(shown):
            raise DataError(f"{what} {shown!r} is a symbolic link to a missing file "
                            f"({os.readlink(shown)!r})") from None
        raise DataError(f"{what} {shown!r} does not exist") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise DataError(f"{what} {shown!r} is a symbolic link loop") from None
        raise DataError(f"cannot read {what} {shown!r}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise DataError(f"{what} {shown!r} is {_kind(st.st_mode)}; expected a regular file")


def read_input_bytes(path: str | os.PathLike, what: str) -> bytes:
    """The content of a regular input file. It is opened without blocking and checked again on
    the open descriptor, so a FIFO put in its place after the check is refused, not waited on."""
    check_input_file(path, what)
    shown = os.fspath(path)
    try:
        fd = os.open(shown, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise DataError(f"cannot read {what} {shown!r}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fh.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise DataError(f"{what} {shown!r} is {_kind(mode)}; expected a regular file")
        try:
            return fh.read()
        except OSError as exc:
            raise DataError(f"cannot read {what} {shown!r}: {exc.strerror or exc}") from None


def _same(a: str, b: str) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)  # hard links
    except OSError:
        return False


def _inside(child: str, folder: str) -> bool:
    real_child, real_folder = os.path.realpath(child), os.path.realpath(folder)
    return os.path.commonpath([real_child, real_folder]) == real_folder


def _refuse_inputs(shown: str, path: str, inputs: Iterable, what: str) -> None:
    for item in inputs:
        if item is None:
            continue
        given = os.fspath(item)
        if not given or is_stdout(given) or not os.path.exists(given):
            continue
        if _same(path, given):
            raise DataError(f"{what} {shown!r} is the input {given!r}; incrowd never overwrites its "
                            "input: choose another output name")
        if os.path.isdir(given) and _inside(path, given):
            raise DataError(f"{what} {shown!r} is inside the input folder {given!r}; choose an "
                            "output outside it")


def check_output_path(path: str | os.PathLike, *, inputs: Iterable = (), what: str = "output") -> Path:
    """Refuse an output that cannot be written safely; return the file to be replaced.

    The result is the resolved path (a symbolic link is followed, so its target is replaced
    and the link stays). ``inputs`` are files or folders the command reads.
    """
    shown = os.fspath(path)
    _refuse_inputs(shown, shown, inputs, what)
    try:
        st = os.lstat(shown)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputWriteError.of(exc, shown, what) from None
    if st is not None and stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(shown)
        except FileNotFoundError:
            raise DataError(f"{what} {shown!r} is a symbolic link to a missing file "
                            f"({os.readlink(shown)!r}); name the file itself") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise DataError(f"{what} {shown!r} is a symbolic link loop") from None
            raise OutputWriteError.of(exc, shown, what) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise DataError(f"{what} {shown!r} is a directory; expected a file name")
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise DataError(f"{what} {shown!r} is {_kind(st.st_mode)}; incrowd replaces regular files "
                        "only")
    target = Path(os.path.realpath(shown))
    if not target.parent.is_dir():
        parent = os.path.dirname(shown) or "."
        raise DataError(f"output directory {parent!r} does not exist")
    return target


# ---------------------------------------------------------------------------------------------
# Temporary names and the sweep of those left by killed processes


def temp_path(target: Path) -> Path:
    return target.parent / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return True  # not ours to judge
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def sweep_stale(target: Path) -> list[Path]:
    """Remove temporaries of ``target`` whose writing process no longer exists."""
    pattern = re.compile(rf"^\.{re.escape(target.name)}\.(\d+)\.[0-9a-f]{{8}}\.tmp(\.wal)?$")
    removed: list[Path] = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    for entry in entries:
        m = pattern.match(entry.name)
        if m is None or int(m.group(1)) == os.getpid() or _pid_alive(int(m.group(1))):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            pass  # another process swept it first, or we may not: not our business now
    return removed


def remove_temporary(tmp: str | os.PathLike) -> None:
    tmp = os.fspath(tmp)
    for name in (tmp, *(tmp + c for c in _COMPANIONS)):
        try:
            if os.path.isdir(name) and not os.path.islink(name):
                shutil.rmtree(name, ignore_errors=True)
            else:
                os.unlink(name)
        except FileNotFoundError:
            pass


# ---------------------------------------------------------------------------------------------
# Signals: SIGTERM and SIGHUP during a write raise, so the temporary is removed on the way out


class _Terminated(BaseException):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum, frame):
    raise _Terminated(signum)


@contextmanager
def _signals_raise() -> Iterator[None]:
    # Only where the signal would kill the process anyway (default handler, main thread): a
    # server that installed its own handlers keeps them.
    installed = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if sig is not None and signal.getsignal(sig) == signal.SIG_DFL:
                installed[sig] = signal.signal(sig, _raise_terminated)
    try:
        yield
    finally:
        for sig, previous in installed.items():
            signal.signal(sig, previous)


def _die_of(signum: int) -> None:
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


# ---------------------------------------------------------------------------------------------
# Writing


def _new_file_mode(target: Path) -> int:
    if target.exists():
        return target.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask  # what open() gives a new file


def _create(tmp: Path) -> None:
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _sync(path: Path) -> None:
    if path.is_file():
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _recheck(target: Path, shown: str, what: str) -> None:
    """The target must still be a regular file (or absent) at the moment of the rename."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise DataError(f"{what} {shown!r} became a symbolic link while it was being written; "
                        "it was left as it is")
    if not stat.S_ISREG(st.st_mode):
        raise DataError(f"{what} {shown!r} became {_kind(st.st_mode)} while it was being written; "
                        "it was left as it is")


def as_write_error(exc: BaseException, shown: str, tmp: str | os.PathLike, what: str = "output") -> IncrowdError:
    """``exc`` from writing the temporary ``tmp`` as an error about the user's path."""
    if isinstance(exc, IncrowdError):
        return exc
    return OutputWriteError.of(exc, shown, what, hide=os.fspath(tmp))


@contextmanager
def atomic_output(path: str | os.PathLike, *, inputs: Iterable = (), what: str = "output",
                  create: bool = True) -> Iterator[str]:
    """Yield a temporary path beside the target; on success it replaces ``path``.

    ``create=False`` leaves creating the temporary to the writer (DuckDB refuses an empty file).
    """
    shown = os.fspath(path)
    target = check_output_path(shown, inputs=inputs, what=what)
    sweep_stale(target)
    tmp = temp_path(target)
    with _signals_raise():
        try:
            try:
                _create(tmp)
            except OSError as exc:
                raise OutputWriteError.of(exc, shown, what, hide=str(tmp)) from None
            if not create:
                os.unlink(tmp)
            try:
                yield str(tmp)
                os.chmod(tmp, _new_file_mode(target))
                _sync(tmp)
                _recheck(target, shown, what)
                os.replace(tmp, target)
            except OSError as exc:
                raise as_write_error(exc, shown, tmp, what) from None
        except _Terminated as exc:
            remove_temporary(tmp)
            _die_of(exc.signum)
            raise
        except BaseException:
            remove_temporary(tmp)
            raise


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the flush at exit does not fail a second time."""
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file descriptor (captured stdout)
        pass


def write_csv_stdout(data: bytes) -> None:
    """A table's CSV bytes on standard output; a reader that leaves early is one clear error."""
    import sys

    try:
        sys.stdout.flush()
        out, view = sys.stdout.buffer, memoryview(data)
        while view:  # unbuffered stdout (python -u) is a raw file: one write may take only a part
            view = view[out.write(view) or 0:]
        out.flush()
    except BrokenPipeError:
        _silence_stdout()
        raise OutputWriteError("cannot write to standard output: the reader closed the pipe") from None


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    with atomic_output(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")
    return Path(path)
