"""Deprecated: the readers and writers are in :mod:`incrowd.io`; the standardization helpers
are internal (``incrowd.data`` keeps working for one release, with a warning).

``data_dir()`` (the benchmark data folder) moved to the benchmarks (``bench/_common``).
"""

from __future__ import annotations

import warnings

from ._standardize import Standardizer, group_means, standardize
from .io import *  # noqa: F403  (every public name of incrowd.io, as before)
from .io import CSV_DELIMITERS, PARQUET_SUFFIXES, Parse
from .io import __all__ as _io_names

warnings.warn("incrowd.data is deprecated and will be removed in the next release: read and write "
              "through incrowd.io (read_table, write_table, table_format, sniff_delimiter, resolve_roles, "
              "ColumnRoles, numeric_matrix, NA_VALUES); Standardizer, standardize and group_means are "
              "internal and will not stay public (microaggregate and publish standardize the "
              "quasi-identifiers themselves)", DeprecationWarning, stacklevel=2)

__all__ = [*_io_names, "Parse", "PARQUET_SUFFIXES", "CSV_DELIMITERS", "Standardizer", "standardize",
           "group_means"]
