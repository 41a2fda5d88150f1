"""Web UI (optional extra ``incrowd[web]``): ``incrowd serve`` or :func:`create_app`."""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._runtime import lazy as _lazy
from ._app import create_app

if _TYPE_CHECKING:
    from ._guard import bound_hosts as bound_hosts
    from ._guard import split_host as split_host
    from ._lifecycle import serve as serve

#: the internal API (not in ``__all__``): what ``incrowd serve`` runs, so that the command line
#: names no private module of this package
__getattr__, __dir__ = _lazy.attach(__name__, {"bound_hosts": "._guard", "split_host": "._guard",
                                               "serve": "._lifecycle"})

__all__ = ["create_app"]
