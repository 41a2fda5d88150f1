"""Values: what every layer above does to a column's values before it counts, clusters or
compares them.

Internal (not public API; other packages import these names from here, never from the modules,
and each loads on first use): :class:`Standardizer`, :func:`standardize` and :func:`group_means`,
the overflow-safe scaling every clustering runs on and the centroids in the data's units, which
the estimators, ``publish``, the incremental state, the report and the information-loss
measures share.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._runtime import lazy as _lazy

if _TYPE_CHECKING:
    from ._standardize import Standardizer as Standardizer
    from ._standardize import group_means as group_means
    from ._standardize import standardize as standardize

_INTERNAL = dict.fromkeys(["Standardizer", "standardize", "group_means"], "._standardize")

__getattr__, __dir__ = _lazy.attach(__name__, _INTERNAL)

__all__: list[str] = []
