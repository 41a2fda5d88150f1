"""Reading and writing: tables (CSV, Parquet, Excel, Stata, SPSS, SAS), atomic writes,
compression, the missing-value vocabulary, and the check of what was written.

The public names (loaded on first use, so that importing one private module here loads no
pandas): :func:`read_table`, :func:`write_table`, :func:`table_format`, :func:`sniff_delimiter`,
:func:`resolve_roles`, :class:`ColumnRoles`, :func:`numeric_matrix`, :func:`column_numbers`,
:data:`NA_VALUES`. They were in ``incrowd.data`` before 0.x (that module still re-exports them,
with a ``DeprecationWarning``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._runtime import _lazy

if TYPE_CHECKING:
    from ._csv_text import NA_VALUES
    from ._tables import (
        ColumnRoles,
        column_numbers,
        numeric_matrix,
        read_table,
        resolve_roles,
        sniff_delimiter,
        table_format,
        write_table,
    )

_LAZY = {
    **dict.fromkeys(["read_table", "write_table", "table_format", "sniff_delimiter", "resolve_roles",
                     "ColumnRoles", "numeric_matrix", "column_numbers", "PARQUET_SUFFIXES",
                     "CSV_DELIMITERS"], "._tables"),
    "NA_VALUES": "._csv_text",
}

__getattr__, __dir__ = _lazy.attach(__name__, _LAZY)

__all__ = ["read_table", "write_table", "table_format", "sniff_delimiter", "resolve_roles", "ColumnRoles",
           "numeric_matrix", "column_numbers", "NA_VALUES"]
