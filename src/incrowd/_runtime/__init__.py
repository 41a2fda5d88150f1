"""The runtime every command shares: numba's cache and compile clock (``_compile``), loading on
first use (``_lazy``), cancellation (``_cancel``), compiled calls
spread over threads (``_task_threads``), process facts (``_process``), the registry of execution
backends (``_backends``) and the version (``_version``).

``_runtime`` is private as a whole. Other packages import what they need from here, never from
its modules; each name is loaded on first use, so importing one loads only its module:

- cancellation: ``CancelToken``, ``cancellable``, ``check_cancelled``, and ``cancel`` (the
  module: ``stop_flag``, ``report_progress``);
- numba's cache and clocks: ``compile_clock``, ``compiled_so_far``, ``work_clock``,
  ``cache_directory``, ``compiled_or_cached``, ``prepare_cache``, ``enable_notice``,
  ``disable_notice``;
- ``run_on_threads``; ``__version__``;
- modules whose state is shared, given whole: ``lazy`` (``attach``, ``function``, ``module``),
  ``process`` (``program``, ``one_shot``), ``backends`` (``register``, ``get``).

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
}
_MODULES = {"lazy": "._lazy", "process": "._process", "backends": "._backends", "cancel": "._cancel"}

__getattr__, __dir__ = _lazy.attach(__name__, _LAZY, modules=_MODULES)
