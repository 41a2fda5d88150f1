"""Where a server keeps its sessions' files, and how it stops.

Each server keeps every session folder under one root folder in the system temporary directory,
named ``incrowd-serve-<pid>-<random>``: deleting the root deletes every upload and result. A
server killed before it could delete its root (a crash, SIGKILL) leaves it behind; the next
server that starts deletes roots whose process is gone, and never a live server's root or a
folder of any other name.

SIGTERM and SIGINT stop the server within a few seconds: it stops accepting, gives requests in
flight ``GRACE_SECONDS`` to finish, cancels lattice builds and queued jobs, deletes its root,
and exits even when a worker thread is still inside a kernel that cannot be interrupted.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path

ROOT_PREFIX = "incrowd-serve-"
_ROOT_NAME = re.compile(rf"^{re.escape(ROOT_PREFIX)}(\d+)-[A-Za-z0-9_]{{8}}$")
GRACE_SECONDS = 3


def _process_gone(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's process: alive
        return False
    except OSError:
        return False
    # a killed server not yet reaped by its parent is a zombie: it will never delete its root
    with contextlib.suppress(OSError, IndexError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat[stat.rindex(")") + 2] == "Z"
    return False


def sweep_stale_roots(parent: str | Path | None = None) -> list[Path]:
    """Delete the roots under ``parent`` (default: the system temporary directory) left by
    servers whose process no longer exists; returns them. Only folders of this user with the
    exact root name pattern are considered."""
    if os.name != "posix":  # os.kill(pid, 0) would terminate the process on Windows
        return []
    folder = Path(parent if parent is not None else tempfile.gettempdir())
    swept = []
    with contextlib.suppress(OSError):
        entries = list(os.scandir(folder))
        for entry in entries:
            match = _ROOT_NAME.match(entry.name)
            if match is None or int(match.group(1)) == os.getpid():
                continue
            try:
                if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != os.getuid():
                    continue
            except OSError:
                continue
            if _process_gone(int(match.group(1))):
                shutil.rmtree(entry.path, ignore_errors=True)
                swept.append(Path(entry.path))
    return swept


def new_root(parent: str | Path | None = None) -> Path:
    """This server's root folder (private to this user), after sweeping the stale ones."""
    sweep_stale_roots(parent)
    return Path(tempfile.mkdtemp(prefix=f"{ROOT_PREFIX}{os.getpid()}-", dir=parent))


def url_of(host: str, port: int) -> str:
    """The address a browser opens for a server bound to ``host``: a wildcard bind is reached on loopback."""
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def _announcing_server_class():
    import uvicorn

    class AnnouncingServer(uvicorn.Server):
        """Says where to point the browser once the socket is bound, on stderr, whatever stdout is
        (uvicorn's own line is silenced with its other start-up chatter at log level "warning")."""

        def __init__(self, config, url: str):
            super().__init__(config)
            self.url = url

        async def startup(self, sockets=None):
            await super().startup(sockets=sockets)
            if self.started:
                print(f"incrowd is serving on {self.url} (Ctrl+C stops it)", file=sys.stderr, flush=True)

    return AnnouncingServer


def serve(app, *, host: str, port: int) -> None:
    """Run ``app`` under uvicorn until SIGTERM or SIGINT, then clean up and exit promptly."""
    import uvicorn

    def stop(_sig, _frame):
        # uvicorn restores this handler once it has shut down and sends the signal again; it
        # also runs for a signal that comes before uvicorn took over. Either way: leave through
        # the cleanup below, not by dying of the signal or waiting on busy worker threads.
        raise SystemExit(0)

    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        config = uvicorn.Config(app, host=host, port=port, log_level="warning",
                                timeout_graceful_shutdown=GRACE_SECONDS)
        _announcing_server_class()(config, url_of(host, port)).run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        # the lifespan shutdown does this too, unless a second Ctrl+C skipped it
        app.state.pool.close()
        app.state.sessions.close()
        if app.state.pool.running:
            # a kernel still runs on a worker thread and cannot be interrupted; its session
            # folder is gone, so nothing it would write survives: leave without joining it
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)
