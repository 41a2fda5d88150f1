"""Execution backends by name: a layer below the orchestration looks a backend up here, and the
backend registers itself when its package is imported, so no lower layer imports it.

``incrowd.distributed`` (the Dask backend, optional extra ``incrowd[dask]``) registers as
``"dask"``: :func:`get` imports it by name (``importlib``) on first use and returns what it
registered, an object with ``fit(estimator, values, scheduler)`` (a MONA run on the cluster)
and ``build_lattice(data, quasi_identifiers, *, client, **kwargs)``.
"""

from __future__ import annotations

import importlib
from typing import Any

#: backend name -> the package that registers it when imported
KNOWN = {"dask": "incrowd.distributed"}

_registered: dict[str, Any] = {}


def register(name: str, backend: Any) -> None:
    """Make ``backend`` the one :func:`get` returns for ``name`` (a backend's package calls this
    when it is imported)."""
    _registered[name] = backend


def get(name: str) -> Any:
    """The backend registered as ``name``, importing its package first if need be."""
    if name not in _registered:
        package = KNOWN.get(name)
        if package is None:
            raise KeyError(f"unknown execution backend {name!r}; known: {', '.join(KNOWN)}")
        importlib.import_module(package)  # registers it
    return _registered[name]
