"""Deprecated: the package is :mod:`incrowd.publishing` (``incrowd.release`` keeps working for one
release, with a ``DeprecationWarning``)."""

import warnings as _warnings

from ..publishing import ColumnSpec, PublishResult, ReleaseSpec, example_spec, example_toml, load_spec, publish

_warnings.warn("incrowd.release is deprecated and will be removed in the next release; import from "
               "incrowd.publishing (or incrowd.publish / incrowd.PublishResult)", DeprecationWarning, stacklevel=2)

__all__ = ["publish", "PublishResult", "ReleaseSpec", "ColumnSpec", "load_spec", "example_spec", "example_toml"]
