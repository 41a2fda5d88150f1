"""Microaggregation methods, each an estimator and a name in :data:`METHODS`.

One subpackage per family (``mdav``, ``greedy``, ``ona``, ``mondrian``, ``refine``), each holding its
estimators and their numba kernels; the helpers every family shares sit here (``_estimator``: the
scikit-learn contract without scikit-learn; ``_base``: the estimator base and parameter checks;
``_kernels``: distances and group updates; ``_adaptive``: the thread tuner). Families import one
way: ``mondrian`` -> ``ona`` -> ``greedy`` -> ``mdav``. MDAV's family loads with the package (publish,
the incremental state and a plain ``microaggregate`` run it); the others, and :data:`METHODS`,
which holds them all, load when first named.

The internal API (not public, not in ``__all__``; the ``name as name`` imports): what
microaggregate, the incremental state, the Dask backend and compiling ahead take from here, so
that no other package names a private module of this one: the parameter checks and
``as_quasi_identifier_matrix`` of ``_base``, ``heap_sort_range``, the MDAV, Mondrian and ONA*
kernels they run (``mdav_labels``, the compiled extension's, and ``mdav_labels_jit``, numba's
copy for kernels that call it; ``directions`` and its rules, ``ona_star_fast_labels``, and
``mdav_fast_labels``, whose every variant compiling ahead calls), and
``lower_bound`` (public as ``incrowd.lower_bound``); and, loaded on first use (they need the I/O
and the verifiers), the one-call :func:`microaggregate` (public as ``incrowd.microaggregate``),
:class:`MicroaggregationResult`, ``make_estimator``, ``check_distributed_method`` and
``method_names``; the joint clustering of ``publish`` (``joint_labels``, ``group_lca``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._native import mdav_labels as mdav_labels
from .._runtime import METHOD_CLASSES
from .._runtime import lazy as _lazy
from ._base import MAX_ROUNDS as MAX_ROUNDS
from ._base import MicroaggregationEstimator
from ._base import as_quasi_identifier_matrix as as_quasi_identifier_matrix
from ._base import check_int as check_int
from ._base import check_k as check_k
from ._base import check_real as check_real
from ._measures import GroupSizeStats, group_size_stats, group_sizes, information_loss, sse, sst
from .mdav import MDAV

if _TYPE_CHECKING:
    from ._bound import lower_bound as lower_bound
    from ._kernels import heap_sort_range as heap_sort_range
    from ._microaggregate import MicroaggregationResult as MicroaggregationResult
    from ._microaggregate import check_distributed_method as check_distributed_method
    from ._microaggregate import make_estimator as make_estimator
    from ._microaggregate import method_names as method_names
    from ._microaggregate import microaggregate as microaggregate
    from .greedy import VMDAV, MDAVPlus, MDAVStar
    from .joint._joint import group_lca as group_lca
    from .joint._joint import joint_labels as joint_labels
    from .mdav._mdav_fast import mdav_fast_labels as mdav_fast_labels
    from .mdav._mdav_kernel import mdav_labels as mdav_labels_jit  # noqa: F401
    from .mondrian import MONA, MONA2D, Mondrian, MondrianV, MondrianV2D
    from .mondrian._mondrian_kernel import RULE_V2D as RULE_V2D
    from .mondrian._mondrian_kernel import RULE_VARIANCE as RULE_VARIANCE
    from .mondrian._mondrian_kernel import directions as directions
    from .ona import ONA, ONAStar
    from .ona._ona_star_fast import SMALL_CLUSTERS as SMALL_CLUSTERS
    from .ona._ona_star_fast import ona_star_fast_labels as ona_star_fast_labels
    from .refine import Refine

#: loaded on first use. MDAV (above) is what publish, the incremental state and a plain
#: ``microaggregate`` run; the other families and the table of every method load when one of
#: them is named, so a command that runs MDAV does not wait for the others' modules and kernels
_INTERNAL = {
    # MDAV's plain scan is the compiled extension's (``mdav_labels``, loaded with the package);
    # numba's copy stays for the kernels that call it from compiled code (the incremental
    # state's split of a grown group), and with the other numba kernels it loads on first use,
    # so that a command running only the extension's kernels never imports numba
    "mdav_labels_jit": ".mdav._mdav_kernel:mdav_labels",
    "heap_sort_range": "._kernels", "lower_bound": "._bound", "mdav_fast_labels": ".mdav._mdav_fast",
    **dict.fromkeys(["VMDAV", "MDAVPlus", "MDAVStar"], ".greedy"),
    **dict.fromkeys(["MONA", "MONA2D", "Mondrian", "MondrianV", "MondrianV2D"], ".mondrian"),
    **dict.fromkeys(["RULE_V2D", "RULE_VARIANCE", "directions"], ".mondrian._mondrian_kernel"),
    **dict.fromkeys(["ONA", "ONAStar"], ".ona"),
    **dict.fromkeys(["SMALL_CLUSTERS", "ona_star_fast_labels"], ".ona._ona_star_fast"),
    "Refine": ".refine",
    # microaggregate and what it shares with publish, the incremental state and the Dask backend
    # (importing it loads the I/O and the verifiers)
    **dict.fromkeys(["microaggregate", "MicroaggregationResult", "make_estimator", "check_distributed_method",
                     "method_names"], "._microaggregate"),
    # the joint clustering publish's joint strategy runs
    "group_lca": ".joint._joint", "joint_labels": ".joint._joint",
}

_attached_getattr, _attached_dir = _lazy.attach(__name__, _INTERNAL)

METHODS: dict[str, type[MicroaggregationEstimator]]
"""Each method's name (the word ``incrowd.microaggregate``, ``incrowd microaggregate --method``
and the web UI take) and its estimator class, in the order the documentation lists them; the
names and their order come from the one table, ``incrowd._runtime.METHOD_CLASSES``. Built on
first use, which loads every family."""


def __getattr__(name: str):
    if name != "METHODS":
        return _attached_getattr(name)
    loaded = globals()
    methods = {method: loaded.get(cls) or _attached_getattr(cls) for method, cls in METHOD_CLASSES.items()}
    loaded["METHODS"] = methods  # later lookups are plain attribute reads, and see additions
    return methods


def __dir__() -> list[str]:
    return sorted({*_attached_dir(), "METHODS"})


__all__ = [
    "METHODS",
    "MicroaggregationEstimator",
    "MDAV",
    "MDAVPlus",
    "VMDAV",
    "MDAVStar",
    "ONA",
    "ONAStar",
    "Mondrian",
    "MondrianV",
    "MondrianV2D",
    "MONA",
    "MONA2D",
    "Refine",
    "sse",
    "sst",
    "information_loss",
    "group_sizes",
    "group_size_stats",
    "GroupSizeStats",
]
