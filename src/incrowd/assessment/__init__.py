"""Deprecated: the package is :mod:`incrowd.reporting` (``incrowd.assessment`` keeps working for one
release, with a ``DeprecationWarning``)."""

import warnings as _warnings

from ..reporting import Report, report

_warnings.warn("incrowd.assessment is deprecated and will be removed in the next release; import from "
               "incrowd.reporting (or incrowd.report / incrowd.Report)", DeprecationWarning, stacklevel=2)

__all__ = ["report", "Report"]
