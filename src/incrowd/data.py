"""Deprecated: the readers and writers are in :mod:`incrowd.io`; the standardization is in
``incrowd._standardize`` (``incrowd.data`` keeps working for one release, with a warning).

``data_dir()`` (the benchmark data folder) moved to the benchmarks (``bench/_common``).
"""

from __future__ import annotations

import warnings

from ._standardize import Standardizer, group_means, standardize
from .io import *  # noqa: F403  (every public name of incrowd.io, as before)
from .io import __all__ as _io_names
from .io._csv_text import Parse
from .io._tables import CSV_DELIMITERS, PARQUET_SUFFIXES

warnings.warn("incrowd.data is deprecated and will be removed in the next release: read and write "
              "through incrowd.io (read_table, write_table, table_format, sniff_delimiter, resolve_roles, "
              "ColumnRoles, numeric_matrix, NA_VALUES); Standardizer, standardize and group_means are "
              "in incrowd._standardize", DeprecationWarning, stacklevel=2)

__all__ = [*_io_names, "Parse", "PARQUET_SUFFIXES", "CSV_DELIMITERS", "Standardizer", "standardize",
           "group_means"]
