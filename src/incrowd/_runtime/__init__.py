"""The runtime every command shares: numba's cache and compile clock (``_compile``), loading on
first use (``_lazy``), cancellation (``_cancel``), compiled calls
spread over threads (``_task_threads``), process facts (``_process``), the registry of execution
backends (``_backends``), the version (``_version``), the one table of microaggregation method
names (``_methods``: read before anything heavy loads, so that ``incrowd --help`` lists them
without loading a kernel) and the plain numpy twins of a few kernels for a process that has not
started numba (``_small``).

``_runtime`` is private as a whole. Other packages import what they need from here, never from
its modules; each name is loaded on first use, so importing one loads only its module:

- cancellation: ``CancelToken``, ``cancellable``, ``check_cancelled``, and ``cancel`` (the
  module: ``stop_flag``, ``report_progress``);
- numba's cache and clocks: ``compile_clock``, ``compiled_so_far``, ``work_clock``,
  ``cache_directory``, ``compiled_or_cached``, ``prepare_cache``, ``enable_notice``,
  ``disable_notice``;
- ``run_on_threads``; ``__version__``;
- the method table: ``METHOD_CLASSES``, ``METHOD_NAMES``, ``DISTRIBUTED_METHODS`` and the caps on
  user numbers ``MAX_RUNS``, ``MAX_ROUNDS``, ``MAX_SEED``;
- modules whose state is shared, given whole: ``lazy`` (``attach``, ``function``, ``module``),
  ``process`` (``program``, ``one_shot``), ``backends`` (``register``, ``get``), ``small`` (the
  numpy twins: ``prefer_plain``, ``rank_swap``, ...).

Compiling ahead calls the algorithms, so it is not here: it is the command line's
(``incrowd warmup``, ``cli/_compile_ahead.py``).
"""

from __future__ import annotations

from . import _lazy

_LAZY = {
    **dict.fromkeys(["CancelToken", "cancellable", "check_cancelled"], "._cancel"),
    **dict.fromkeys(["compile_clock", "compiled_so_far", "work_clock", "cache_directory", "compiled_or_cached",
                     "prepare_cache", "enable_notice", "disable_notice"], "._compile"),
    "run_on_threads": "._task_threads",
    "__version__": "._version",
    **dict.fromkeys(["METHOD_CLASSES", "METHOD_NAMES", "DISTRIBUTED_METHODS", "MAX_RUNS", "MAX_ROUNDS", "MAX_SEED"],
                    "._methods"),
}
_MODULES = {"lazy": "._lazy", "process": "._process", "backends": "._backends", "cancel": "._cancel",
            "small": "._small"}

__getattr__, __dir__ = _lazy.attach(__name__, _LAZY, modules=_MODULES)
