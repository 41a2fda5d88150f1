"""The library calls several commands share, loaded on first use.

pandas, DuckDB and numba load when a command runs, not for ``--help`` or ``--version``.
"""

from .._runtime import lazy as _lazy

read_table = _lazy.function("incrowd.io._tables", "read_table")
table_format = _lazy.function("incrowd.io._tables", "table_format")
write_table = _lazy.function("incrowd.io._tables", "write_table")
load_spec = _lazy.function("incrowd.publishing._spec", "load_spec")
