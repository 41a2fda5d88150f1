"""Reading and writing: tables (CSV, Parquet, Excel, Stata, SPSS, SAS), atomic writes,
compression, the missing-value vocabulary, and the check of what was written.

The public names (loaded on first use, so that importing one private module here loads no
pandas): :func:`read_table`, :func:`write_table`, :func:`table_format`, :func:`sniff_delimiter`,
:func:`resolve_roles`, :class:`ColumnRoles`, :func:`numeric_matrix`, :func:`column_numbers`,
:data:`NA_VALUES`.

The internal API (not public, not in ``__all__``): other packages of incrowd import what they
need of reading and writing from here, never from the ``_`` modules, also loaded on first use:

- atomic writes and paths (``_atomic``): ``atomic_output``, ``temp_path``, ``sweep_stale``,
  ``check_output_path``, ``check_input_file``, ``read_input_bytes``, ``is_stdout``;
- tables (``_tables``, ``_csv_text``, ``_na_values``): ``PARQUET_SUFFIXES``, ``CSV_DELIMITERS``,
  ``sniff_text``, ``Parse``, ``NA_HELP``;
- statistical files (``_statfiles``): ``StatMeta``, ``check_writable``, ``code_indices``,
  ``mark_changed``, ``coded_reason`` (why a column holds codes of categories),
  ``statfile_shape`` (rows and columns from the header alone),
  ``tag_codes`` (user-missing codes put back into NaN cells);
- DuckDB files (``_duckdb_file``): ``read_database``, ``write_database``, ``damaged``,
  ``DATABASE_SUFFIX`` (the suffix of a state or lattice file incrowd names itself);
- strict JSON (``_json``): ``json_dumps``;
- a release verified on the written file (``_written``): ``Promise``, ``Verification``,
  ``in_memory``, ``verify_frame``, ``write_release``;
- file formats (``_formats``, one module per format): ``FORMATS``, ``Format``, ``format_of``,
  ``suffix`` (a format's first suffix: the one a file incrowd names itself ends with),
  ``short_label`` (``SPSS (.sav)``), ``suffixes``, ``describe_formats``, ``upload_accept``,
  ``mime_types``, ``statistical_suffixes``, ``register_format``,
  ``unregister_format``: what the CLI help, the web upload and the spec read instead of their own
  suffix lists;
- modules given whole: ``arrow_types`` (Arrow types kept through Parquet and DuckDB),
  ``compression`` (compressed input; ``compression.suffix("gzip")`` is a compression's suffix).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._runtime import lazy as _lazy

if TYPE_CHECKING:
    from ._na_values import NA_VALUES
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
    from ._written import Verification as Verification  # public as incrowd.Verification

_LAZY = {
    **dict.fromkeys(["read_table", "write_table", "table_format", "sniff_delimiter", "resolve_roles",
                     "ColumnRoles", "numeric_matrix", "column_numbers", "PARQUET_SUFFIXES",
                     "CSV_DELIMITERS"], "._tables"),
    "NA_VALUES": "._na_values",  # the vocabulary alone: no pandas
}

#: the internal API (see above)
_INTERNAL = {
    **dict.fromkeys(["atomic_output", "temp_path", "sweep_stale", "check_output_path", "check_input_file",
                     "read_input_bytes", "is_stdout"], "._atomic"),
    "sniff_text": "._tables",
    "Parse": "._csv_text",
    "NA_HELP": "._na_values",
    **dict.fromkeys(["StatMeta", "check_writable", "code_indices", "mark_changed", "coded_reason"], "._statfiles"),
    "statfile_shape": "._statfiles:shape",
    **dict.fromkeys(["read_database", "write_database", "damaged", "DATABASE_SUFFIX"], "._duckdb_file"),
    "tag_codes": "._statfiles:_tag_cells",
    "json_dumps": "._json:dumps",
    **dict.fromkeys(["FORMATS", "Format", "format_of", "suffix", "short_label", "suffixes", "describe_formats", "upload_accept",
                     "mime_types", "statistical_suffixes", "register_format", "unregister_format"], "._formats"),
    **dict.fromkeys(["Promise", "Verification", "in_memory", "verify_frame", "write_release"], "._written"),
}
_MODULES = {"arrow_types": "._arrow_types", "compression": "._compression"}

__getattr__, __dir__ = _lazy.attach(__name__, {**_LAZY, **_INTERNAL}, modules=_MODULES)

__all__ = ["read_table", "write_table", "table_format", "sniff_delimiter", "resolve_roles", "ColumnRoles",
           "numeric_matrix", "column_numbers", "NA_VALUES"]
