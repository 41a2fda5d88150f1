"""Web UI (optional extra ``incrowd[web]``): ``incrowd serve`` or :func:`create_app`."""

from ._app import create_app

__all__ = ["create_app"]
