"""The runtime every command shares: numba's cache and compile clock (``_compile``), compiling
ahead (``_warmup``), loading on first use (``_lazy``), cancellation (``_cancel``), compiled calls
spread over threads (``_task_threads``), process facts (``_process``) and the version
(``_version``). Nothing is imported here, so importing one of them loads only that one.
"""
