"""Helpers for tests that run the web app on 127.0.0.1: a free port, uvicorn in a thread, and a
bounded wait for a condition (a bound on how long a test may hang, not a timing claim)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Callable, Iterator


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(condition: Callable[[], object], seconds: float = 30.0, step: float = 0.02) -> bool:
    """True as soon as ``condition()`` holds; False when it still does not after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True


@contextlib.contextmanager
def serving(application) -> Iterator[str]:
    """``application`` on 127.0.0.1 (uvicorn in a thread); yields the base URL."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(application, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        assert wait_until(lambda: server.started)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        sock.close()
