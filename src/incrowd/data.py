"""Deprecated: the readers and writers are in :mod:`incrowd.io`; the standardization is in
``incrowd._standardize`` (``incrowd.data`` keeps working for one release, with a warning).

``data_dir()`` (the benchmark data folder) moved to the benchmarks (``bench/_common``).
"""

from __future__ import annotations

import warnings

from ._standardize import Standardizer, group_means, standardize
from .io._csv_text import NA_VALUES, Parse
from .io._tables import (
    CSV_DELIMITERS,
    PARQUET_SUFFIXES,
    ColumnRoles,
    column_numbers,
    numeric_matrix,
    read_table,
    resolve_roles,
    sniff_delimiter,
    table_format,
    write_table,
)

warnings.warn("incrowd.data is deprecated and will be removed in the next release: read and write "
              "through incrowd.io (read_table, write_table, table_format, sniff_delimiter, resolve_roles, "
              "ColumnRoles, numeric_matrix, NA_VALUES); Standardizer, standardize and group_means are "
              "in incrowd._standardize", DeprecationWarning, stacklevel=2)

__all__ = ["read_table", "write_table", "table_format", "sniff_delimiter", "resolve_roles", "ColumnRoles",
           "column_numbers", "numeric_matrix", "NA_VALUES", "Parse", "PARQUET_SUFFIXES", "CSV_DELIMITERS",
           "Standardizer", "standardize", "group_means"]
