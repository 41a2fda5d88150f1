"""Connecting to Dask: ``local:N`` starts a LocalCluster of N single-threaded worker processes;
anything else is the address of a running ``dask.distributed`` scheduler."""

from __future__ import annotations

import contextlib
import logging
from typing import Iterator

from ..exceptions import ParameterError
from ._scheduler import DEFAULT_TIMEOUT, check_timeout, parse_scheduler, probe_scheduler


def _import_distributed():
    try:
        import distributed
    except ImportError as exc:
        raise ParameterError(
            f"scale-out needs the 'dask' extra ({exc.name} is missing): pip install 'incrowd[dask]'"
        ) from None
    return distributed


@contextlib.contextmanager
def _workers_ignore_ctrl_c() -> Iterator[None]:
    """Start the local workers with Ctrl-C ignored: a new process inherits an ignored signal
    (blocking it would not do: the process that spawns them may be a thread Dask started before).

    A terminal sends Ctrl-C to every process of the command, the workers too; a worker would die
    with a traceback of its own. This process alone stops the run: it cancels the tasks and
    closes the cluster, which ends the workers. A Ctrl-C in the second or two the workers take to
    start is lost; the next one stops the run."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set a handler; the command line runs there
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def connect(scheduler: str, *, memory_limit: str | None = None,
            timeout: float = DEFAULT_TIMEOUT) -> Iterator[object]:
    """A ``distributed.Client`` for ``--scheduler`` (``local:N`` or a tcp:// address), closed after.

    The value is checked before anything starts (:func:`parse_scheduler`); an address must
    answer as a Dask scheduler within ``timeout`` seconds (CLI ``--scheduler-timeout``).
    """
    spec = parse_scheduler(scheduler)
    timeout = check_timeout(timeout)
    distributed = _import_distributed()
    if memory_limit is not None:
        _check_memory_limit(memory_limit, spec.workers is not None)
    if spec.workers is not None:
        kwargs = {"memory_limit": memory_limit} if memory_limit else {}
        with _workers_ignore_ctrl_c():
            # Dask's own log lines (a task cancelled by Ctrl-C, a worker or the scheduler closing
            # while the other still talks, logged up to CRITICAL) mean nothing to the user: a
            # task's error reaches the client and is raised there, as incrowd's one line or, for a
            # fault of incrowd's, its traceback. Above CRITICAL silences them all
            cluster = distributed.LocalCluster(n_workers=spec.workers, threads_per_worker=1, processes=True,
                                               dashboard_address=None, silence_logs=logging.CRITICAL + 1,
                                               **kwargs)
        with cluster:
            with distributed.Client(cluster) as client:
                yield client
        return
    probe_scheduler(spec, timeout)
    try:
        client = distributed.Client(spec.address, timeout=f"{timeout}s")
    except (OSError, TimeoutError) as exc:
        raise ParameterError(f"cannot reach the Dask scheduler at {spec.address}: {exc}") from None
    with client:
        yield client


def _check_memory_limit(memory_limit, local: bool) -> None:
    """A worker's memory as Dask reads it (``2GiB``, ``500MB``), for the workers incrowd starts."""
    from dask.utils import parse_bytes

    if not local:
        raise ParameterError("--memory-limit bounds the workers that --scheduler local:N starts; a running "
                             "scheduler's workers were given theirs when they started")
    try:
        size = parse_bytes(memory_limit) if isinstance(memory_limit, str) else None
    except (ValueError, TypeError):
        size = None
    if size is None or size < 2**26:
        raise ParameterError(f"--memory-limit must be a size of at least 64MiB, such as 2GiB or 500MB; got "
                             f"{memory_limit!r}")
