"""The bounded worker pool: every CPU-heavy step of the web app (parse and profile an upload,
microaggregate, build a lattice, negotiate, generalize) runs on one of ``workers`` threads, so
the event loop keeps answering everyone else. At most ``queue`` more jobs wait for a thread;
beyond that a request is refused at once with 503 and ``Retry-After`` instead of waiting
without bound."""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from .._runtime import CancelToken, cancellable

RETRY_AFTER_SECONDS = 5
#: how often a heavy endpoint looks whether its client is still there
WATCH_SECONDS = 0.2


def default_workers() -> int:
    return os.cpu_count() or 1


class PoolFull(Exception):
    """Every worker is busy and the queue is full."""


class WorkerPool:
    """``workers`` threads and room for ``queue`` waiting jobs. A job keeps its place until its
    thread is done, even when the request that started it was cancelled: the slot counts the
    CPU actually in use, not the requests still waiting for an answer."""

    def __init__(self, workers: int | None = None, queue: int | None = None):
        self.workers = default_workers() if workers is None else int(workers)
        self.queue = 2 * self.workers if queue is None else int(queue)
        if self.workers < 1:
            raise ValueError(f"workers must be at least 1; got {self.workers}")
        if self.queue < 0:
            raise ValueError(f"queue must be 0 or more; got {self.queue}")
        self._executor = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="incrowd-work")
        self._lock = threading.Lock()
        self._admitted = 0
        self._running = 0
        self._closed = False

    @property
    def admitted(self) -> int:
        """Jobs running or waiting for a thread."""
        with self._lock:
            return self._admitted

    @property
    def running(self) -> int:
        """Jobs on a thread now."""
        with self._lock:
            return self._running

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> asyncio.Future:
        """Start ``fn`` on a worker (or queue it) and return an awaitable of its result; raises
        :class:`PoolFull` at once when there is no room. Call from the event loop."""
        with self._lock:
            if self._closed or self._admitted >= self.workers + self.queue:
                raise PoolFull
            self._admitted += 1
        try:
            future = self._executor.submit(self._track, functools.partial(fn, *args, **kwargs))
        except RuntimeError:  # the executor was shut down meanwhile
            self._release()
            raise PoolFull from None
        future.add_done_callback(self._release)
        return asyncio.wrap_future(future)

    async def run(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        return await self.submit(fn, *args, **kwargs)

    def _track(self, work: Callable[[], Any]) -> Any:
        with self._lock:
            self._running += 1
        try:
            return work()
        finally:
            with self._lock:
                self._running -= 1

    def _release(self, _future: Future | None = None) -> None:
        with self._lock:
            self._admitted -= 1

    def close(self) -> None:
        """Refuse new jobs and drop the queued ones; running ones finish on their own threads
        (the caller decides whether to wait for them)."""
        with self._lock:
            self._closed = True
        self._executor.shutdown(wait=False, cancel_futures=True)


def pool_of(request: Request) -> WorkerPool:
    return request.app.state.pool


def heavy(endpoint: Callable[..., Any]) -> Callable[..., Any]:
    """Make a blocking endpoint (it takes ``request``) run on the app's worker pool, under a
    cancel token that is cancelled when the client goes away: a kernel that checks it (ONA
    between runs, MONA between parts) stops and frees its worker instead of computing an answer
    nobody will read."""

    @functools.wraps(endpoint)
    async def on_pool(*args: Any, **kwargs: Any) -> Any:
        request: Request = kwargs["request"]
        token = CancelToken()

        def work() -> Any:
            with cancellable(token):
                return endpoint(*args, **kwargs)

        future = pool_of(request).submit(work)
        try:
            while not future.done():
                await asyncio.wait({future}, timeout=WATCH_SECONDS)
                if not future.done() and await request.is_disconnected():
                    token.cancel()
            return future.result()
        except BaseException:
            token.cancel()  # the request task was cancelled (shutdown) or failed: stop the work
            raise

    return on_pool


def install(app: FastAPI, workers: int | None, queue: int | None) -> WorkerPool:
    """Give ``app`` its pool and the 503 answer for a full one."""
    pool = WorkerPool(workers, queue)
    app.state.pool = pool

    @app.exception_handler(PoolFull)
    async def _busy(_request: Request, _exc: PoolFull) -> JSONResponse:
        return JSONResponse(
            {"error": f"the server is busy ({pool.workers} jobs running, {pool.queue} waiting); "
                      f"try again in a few seconds or start it with more --workers or a longer --queue"},
            status_code=503, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})

    return pool
