"""Incremental publication (two-step microaggregation): anonymize a base early, adjoin late rows, publish once.

- :class:`IncrementalMicroaggregation`: the state on disk (a DuckDB file), created from base
  data (:meth:`~IncrementalMicroaggregation.from_base`), reopened
  (:meth:`~IncrementalMicroaggregation.open`), fed increments
  (:meth:`~IncrementalMicroaggregation.add`) and published
  (:meth:`~IncrementalMicroaggregation.publish`);
- :func:`plan`: the critical, optimal and deadline ratios nu-, nu*, nu_end with a runtime model
  (:func:`fit_runtime_model` measures one on this machine) and the thesis' closed forms
  (:func:`critical_ratio`, :func:`optimal_ratio`, :func:`deadline_ratio`).
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._runtime import lazy as _lazy

if _TYPE_CHECKING:  # what type checkers see; at run time the names load on first use
    from ._plan import (
        VARSIGMA_MINUS,
        Plan,
        RuntimeModel,
        critical_ratio,
        deadline_ratio,
        earliest_finish,
        fit_runtime_model,
        optimal_ratio,
        plan,
    )
    from ._session import STRATEGIES, IncrementalMicroaggregation, IncrementalRelease

# loaded on first use: planning needs numpy only, a state file pandas, DuckDB and the kernels
__getattr__, __dir__ = _lazy.attach(__name__, {
    **dict.fromkeys(["VARSIGMA_MINUS", "Plan", "RuntimeModel", "critical_ratio", "deadline_ratio",
                     "earliest_finish", "fit_runtime_model", "optimal_ratio", "plan"], "._plan"),
    **dict.fromkeys(["STRATEGIES", "IncrementalMicroaggregation", "IncrementalRelease"], "._session"),
    # the internal API (not in ``__all__``): the state file's lock wait and the strategy names,
    # which the command line reads without loading the state
    "DEFAULT_WAIT": "._lock", "describe_as": "._lock", "STRATEGY_NAMES": "._strategy_names",
})

__all__ = [
    "IncrementalMicroaggregation",
    "IncrementalRelease",
    "STRATEGIES",
    "plan",
    "Plan",
    "RuntimeModel",
    "fit_runtime_model",
    "critical_ratio",
    "optimal_ratio",
    "deadline_ratio",
    "earliest_finish",
    "VARSIGMA_MINUS",
]
