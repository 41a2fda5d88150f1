"""A cancel token and progress report for long computations, set by whoever runs them (the web
app's job runner) and read by the kernels' outer Python loops, without a parameter in any
public signature. The token lives in a context variable: only the code run inside
:func:`cancellable` sees it, so other threads and callers are unaffected.

ONA checks the token before each of its runs; ONA* (alone and inside MONA) reads the token's
flag array between its rounds, SUDA2's search (a risk job) every 65,536 steps inside it,
without the GIL. Kernels whose
whole work is one compiled call without rounds (MDAV, V-MDAV, MDAV*, Mondrian) have no point to
stop at: a cancel takes effect when that call returns, and they report no progress."""

from __future__ import annotations

import contextlib
import contextvars
import threading
from typing import Iterator

import numpy as np

from ..exceptions import BuildCancelled


class CancelToken:
    """Set by :meth:`cancel` from any thread; ``progress`` is the share done (0..1) where the
    running kernel can tell, else None."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.progress: float | None = None
        # what a compiled kernel reads between its rounds (ONA*): it cannot wait on an Event
        self.flag = np.zeros(1, np.uint8)

    def cancel(self) -> None:
        self.flag[0] = 1
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


_TOKEN: contextvars.ContextVar[CancelToken | None] = contextvars.ContextVar("incrowd_cancel", default=None)


@contextlib.contextmanager
def cancellable(token: CancelToken) -> Iterator[CancelToken]:
    """Run the block with ``token`` visible to :func:`check_cancelled` and :func:`report_progress`."""
    reset = _TOKEN.set(token)
    try:
        yield token
    finally:
        _TOKEN.reset(reset)


def active() -> bool:
    """Whether a token is set: kernels then cut their work into steps they can stop between."""
    return _TOKEN.get() is not None


def check_cancelled() -> None:
    """Raise :class:`BuildCancelled` when the current token was cancelled."""
    token = _TOKEN.get()
    if token is not None and token.cancelled:
        raise BuildCancelled("the computation was cancelled")


def stop_flag() -> np.ndarray | None:
    """The current token's flag for a compiled kernel to read between rounds, or None."""
    token = _TOKEN.get()
    return None if token is None else token.flag


def report_progress(done: int, total: int) -> None:
    token = _TOKEN.get()
    if token is not None and total > 0:
        token.progress = min(1.0, done / total)
