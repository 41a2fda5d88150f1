"""Connecting to Dask: ``local:N`` starts a LocalCluster of N single-threaded worker processes;
anything else is the address of a running ``dask.distributed`` scheduler."""

from __future__ import annotations

import contextlib
import re
from typing import Iterator

from ..exceptions import ParameterError

_LOCAL = re.compile(r"^local:(\d+)$")


def _import_distributed():
    try:
        import distributed
    except ImportError as exc:
        raise ParameterError(
            f"scale-out needs the 'dask' extra ({exc.name} is missing): pip install 'incrowd[dask]'"
        ) from None
    return distributed


@contextlib.contextmanager
def connect(scheduler: str, *, memory_limit: str | None = None) -> Iterator["object"]:
    """A ``distributed.Client`` for ``--scheduler`` (``local:N`` or an address), closed after."""
    distributed = _import_distributed()
    spec = (scheduler or "").strip()
    match = _LOCAL.match(spec)
    if match:
        workers = int(match.group(1))
        if workers < 1:
            raise ParameterError(f"--scheduler local:N needs N >= 1 workers; got {spec!r}")
        kwargs = {"memory_limit": memory_limit} if memory_limit else {}
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None, **kwargs) as cluster:
            with distributed.Client(cluster) as client:
                yield client
        return
    if not spec or ":" not in spec:
        raise ParameterError(
            f"--scheduler must be 'local:N' or a scheduler address such as tcp://10.0.0.5:8786; got {scheduler!r}"
        )
    try:
        client = distributed.Client(spec, timeout="10s")
    except (OSError, TimeoutError) as exc:
        raise ParameterError(f"cannot reach the Dask scheduler at {spec!r}: {exc}") from None
    with client:
        yield client
