"""The negotiation search run by the interpreter, for a process that answers one request.

Loading numba and the compiled search from its on-disk cache costs about half a second of CPU
in a fresh process; the same search run as plain Python takes about 10 ms on the 8-QI Adult
lattice (6480 nodes). ``incrowd negotiate`` answers one request and exits, so it runs the
plain twin (:func:`one_request`); a process that answers many (the API, the web UI) keeps the
compiled kernel.

The plain functions are made from ``_search.py``'s own source with ``njit`` as the identity,
so the two cannot drift apart; tests check equal answers.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib.abc
import importlib.util
import sys
from typing import Iterator

_SEARCH = "incrowd.generalization._search"
_IMPORT_LINE = "from numba import njit\n"


def _plain_namespace() -> dict:
    spec = importlib.util.find_spec(_SEARCH)
    loader = spec.loader if spec is not None else None
    source = loader.get_source(_SEARCH) if isinstance(loader, importlib.abc.InspectLoader) else None
    if spec is None or spec.origin is None or source is None:
        raise RuntimeError(f"the source of {_SEARCH} cannot be read (an install without .py files?)")
    if _IMPORT_LINE not in source:  # the twin would import numba after all: fail loudly here
        raise RuntimeError(f"{_SEARCH} no longer imports njit as {_IMPORT_LINE.strip()!r}")
    namespace = {"__name__": __name__ + ".twin", "njit": lambda *args, **kwargs: (lambda f: f)}
    # the import line becomes an empty one, so tracebacks point at _search.py's own lines
    exec(compile(source.replace(_IMPORT_LINE, "\n", 1), spec.origin, "exec"), namespace)
    return namespace


_twin = _plain_namespace()
FIELDS = _twin["FIELDS"]
plain_negotiate_kernel = _twin["negotiate_kernel"]
plain_negotiate_kernel.signatures = ()  # never compiles, so _negotiate never times a second call

_one_request: contextvars.ContextVar[bool] = contextvars.ContextVar("incrowd_one_request", default=False)


@contextlib.contextmanager
def one_request() -> Iterator[None]:
    """Inside: answer with the plain search unless the compiled one is loaded already."""
    token = _one_request.set(True)
    try:
        yield
    finally:
        _one_request.reset(token)


# The plain search visits a node in microseconds where the compiled one takes nanoseconds: past
# this many nodes its worst case (every node visited) would cost more than starting numba.
PLAIN_MAX_NODES = 100_000


def search_kernel(n_nodes: int = 0):
    """The kernel for this call: the compiled one, or the plain twin inside :func:`one_request`
    while the compiled module has not been loaded in this process and the lattice has at most
    ``PLAIN_MAX_NODES`` nodes."""
    if _one_request.get() and _SEARCH not in sys.modules and n_nodes <= PLAIN_MAX_NODES:
        return plain_negotiate_kernel
    from ._search import negotiate_kernel

    return negotiate_kernel
