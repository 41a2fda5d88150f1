"""Connecting to Dask: ``local:N`` starts a LocalCluster of N single-threaded worker processes;
anything else is the address of a running ``dask.distributed`` scheduler."""

from __future__ import annotations

import contextlib
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
def connect(scheduler: str, *, memory_limit: str | None = None,
            timeout: float = DEFAULT_TIMEOUT) -> Iterator[object]:
    """A ``distributed.Client`` for ``--scheduler`` (``local:N`` or a tcp:// address), closed after.

    The value is checked before anything starts (:func:`parse_scheduler`); an address must
    answer as a Dask scheduler within ``timeout`` seconds (CLI ``--scheduler-timeout``).
    """
    spec = parse_scheduler(scheduler)
    timeout = check_timeout(timeout)
    distributed = _import_distributed()
    if spec.workers is not None:
        kwargs = {"memory_limit": memory_limit} if memory_limit else {}
        with distributed.LocalCluster(n_workers=spec.workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None, **kwargs) as cluster:
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
