"""Bounds on what one upload may become in memory, checked while decoding rather than after:
a few hundred kilobytes of gzip or Parquet can stand for hundreds of millions of rows. A CSV's
header line is read alone first (up to a byte bound) and its fields counted against
``max_columns``; then the decoded stream is read in chunks, counting bytes and lines, and
stops as soon as ``max_decoded_bytes`` or ``max_cells`` (rows x columns) is passed. A Parquet
file is judged from its footer (row count, columns, uncompressed size) before any row is read,
an SPSS, Stata or SAS file from its header (rows and columns, read through ``incrowd.io``).
Across sessions, the frames held stay within ``memory_budget``; an upload that would pass it is
refused with 507."""

from __future__ import annotations

import csv
import lzma
import sys
import threading
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from ..exceptions import DataError
from ..generalization import Hierarchy
from ..io import compression as _compression
from ..io import read_table, sniff_text, statfile_shape, table_format
from ._sessions import SessionStore

MB = 1024 * 1024
DEFAULT_MAX_CELLS = 50_000_000
DEFAULT_MAX_COLUMNS = 10_000
DEFAULT_MAX_DECODED_MB = 2048
DEFAULT_MEMORY_BUDGET_MB = 12288  # half of a 24 GiB server: the methods copy what they work on
_CHUNK = MB
_HEADER_BYTES_PER_COLUMN = 1024
_CELL_BYTES = 8  # a parsed cell holds at least a number or a pointer
_DAMAGED = (EOFError, OSError, zlib.error, lzma.LZMAError, ValueError)
# parsing a hierarchy file (text, lines, csv rows of Python strings, then the level arrays)
# peaks near 220 bytes a cell plus the text: a 38 MB file of 4.8 million cells took 1.05 GB
_HIERARCHY_BYTES_PER_CELL = 256
_HIERARCHY_BYTES_PER_BYTE = 4


class UploadRefused(DataError):
    """An upload over one of the server's limits; ``status`` is the HTTP answer (413 or 507)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _too_large(display: str, what: str, flag: str) -> UploadRefused:
    return UploadRefused(413, f"file {display!r} {what} ({flag}); start the server with a larger {flag} "
                              "or upload a smaller file")


def _count(n: int | None) -> str:
    return f"{n:,}"


@dataclass(frozen=True)
class UploadLimits:
    """The server's per-upload bounds (None lifts one) and its memory budget for all sessions."""

    max_cells: int | None = DEFAULT_MAX_CELLS
    max_columns: int | None = DEFAULT_MAX_COLUMNS
    max_decoded_bytes: int | None = DEFAULT_MAX_DECODED_MB * MB
    memory_budget: int | None = DEFAULT_MEMORY_BUDGET_MB * MB
    # uploads being parsed hold their estimate here, so that parallel uploads cannot all pass
    _reserved: list[int] = field(default_factory=lambda: [0], repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def from_options(cls, max_cells, max_columns, max_decoded_mb, memory_budget_mb) -> UploadLimits:
        for name, value in (("max_cells", max_cells), ("max_columns", max_columns),
                            ("max_decoded_mb", max_decoded_mb), ("memory_budget_mb", memory_budget_mb)):
            if value is not None and not value > 0:
                raise DataError(f"{name} must be positive (or None for no limit); got {value!r}")
        return cls(None if max_cells is None else int(max_cells),
                   None if max_columns is None else int(max_columns),
                   None if max_decoded_mb is None else int(max_decoded_mb * MB),
                   None if memory_budget_mb is None else int(memory_budget_mb * MB))

    # -- checks before the table is read ------------------------------------------------------

    def _check_shape(self, display: str, rows: int, columns: int, exact: bool) -> None:
        if self.max_columns is not None and columns > self.max_columns:
            raise _too_large(display, f"has {_count(columns)} columns, more than the limit of "
                                      f"{_count(self.max_columns)}", "--max-columns")
        if self.max_cells is not None and rows * columns > self.max_cells:
            rows_text = f"{_count(rows)} rows" if exact else f"more than {_count(rows)} rows"
            raise _too_large(display, f"decodes to {rows_text} x {_count(columns)} columns, more than the limit "
                                      f"of {_count(self.max_cells)} cells", "--max-cells")

    def _check_bytes(self, display: str, decoded: int) -> None:
        if self.max_decoded_bytes is not None and decoded > self.max_decoded_bytes:
            raise _too_large(display, f"decodes to more than {self.max_decoded_bytes / MB:g} MB",
                             "--max-decoded-mb")

    def check_csv(self, path: Path, display: str) -> int:
        """The memory a CSV will take at least once parsed (its decoded size, or 8 bytes a cell),
        within the bounds (UploadRefused as soon as one is passed)."""
        decoded, lines, columns = self._scan_csv(path, display)
        return max(decoded, max(lines - 1, 0) * columns * _CELL_BYTES)

    def _scan_csv(self, path: Path, display: str) -> tuple[int, int, int]:
        """(decoded bytes, lines, columns of the first line) of a delimited file, read in chunks
        and refused as soon as a bound is passed; zeros where only the reader can say what is
        wrong with it."""
        reader = _compression.open_decoded(path)
        if reader is None:
            return 0, 0, 0
        header_bound = max(64 * 1024, (self.max_columns or 0) * _HEADER_BYTES_PER_COLUMN)
        with reader:
            try:
                buf = b""
                while b"\n" not in buf and len(buf) <= header_bound:
                    chunk = reader.read(_CHUNK)
                    if not chunk:
                        break
                    buf += chunk
                end = buf.find(b"\n")
                if end < 0 and len(buf) > header_bound:
                    raise _too_large(display, f"has a first line longer than {header_bound:,} bytes without "
                                              f"a line end; at most {_count(self.max_columns)} columns are "
                                              "accepted", "--max-columns")
                line = (buf if end < 0 else buf[:end]).decode("utf-8", errors="replace").lstrip("\ufeff")
                delimiter = sniff_text(buf[:64 * 1024].decode("utf-8", errors="replace").lstrip("\ufeff"))
                columns = max(1, len(next(csv.reader([line.rstrip("\r")], delimiter=delimiter), [])))
                self._check_shape(display, 0, columns, exact=False)
                decoded, lines = len(buf), buf.count(b"\n")
                while True:
                    self._check_bytes(display, decoded)
                    self._check_shape(display, max(lines - 1, 0), columns, exact=False)
                    chunk = reader.read(_CHUNK)
                    if not chunk:
                        return decoded, lines, columns
                    decoded += len(chunk)
                    lines += chunk.count(b"\n")
            except UploadRefused:
                raise
            except _DAMAGED:
                return 0, 0, 0  # a damaged stream: read_table refuses it with its own message

    def check_parquet(self, path: Path, display: str) -> int:
        """The memory a Parquet file will take at least, from its footer, within the bounds."""
        import pyarrow.parquet as pq

        try:
            meta = pq.read_metadata(path)
        except Exception:  # not Parquet at all: read_table names the file
            return 0
        self._check_shape(display, meta.num_rows, meta.num_columns, exact=True)
        size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        self._check_bytes(display, size)
        return max(size, meta.num_rows * meta.num_columns * _CELL_BYTES)

    def check_statfile(self, path: Path, display: str) -> int:
        """The memory an SPSS, Stata or SAS file will take at least, from its header (read by
        incrowd.io, as the table will be), within the bounds. A format that does not record its
        row count is judged by its size on disk: its rows are at least as many bytes."""
        try:
            rows, columns = statfile_shape(path)
        except DataError as exc:
            raise DataError(str(exc).replace(str(path), display)) from None
        on_disk = path.stat().st_size
        self._check_shape(display, rows or 0, columns, exact=rows is not None)
        estimate = max(on_disk, (rows or 0) * columns * _CELL_BYTES)
        self._check_bytes(display, estimate)
        return estimate

    # -- the memory budget across sessions ----------------------------------------------------

    def _check_budget(self, store: SessionStore, display: str, adding: int) -> None:
        if self.memory_budget is None:
            return
        used = store.memory_in_use() + self._reserved[0]
        if used + adding > self.memory_budget:
            raise UploadRefused(507, f"file {display!r} needs about {adding / MB:.1f} MB, and the server's memory "
                                     f"budget of {self.memory_budget / MB:g} MB holds {used / MB:.1f} MB of "
                                     "other data (--memory-budget-mb); try again later or upload a smaller file")

    def _within_budget(self, store: SessionStore, display: str, estimate: int, parse: Callable[[], object]):
        """``parse()`` with ``estimate`` bytes reserved in the budget while it runs."""
        with self._lock:
            self._check_budget(store, display, estimate)
            self._reserved[0] += estimate
        try:
            return parse()
        finally:
            with self._lock:
                self._reserved[0] -= estimate

    def read(self, path: Path, display: str, store: SessionStore,
             reader: Callable[..., pd.DataFrame] = read_table) -> tuple[pd.DataFrame, int]:
        """The table of an uploaded file and the bytes it holds, every bound checked on the way;
        ``reader`` reads it once the checks before reading have passed."""
        fmt = table_format(path)
        if fmt == "parquet":
            estimate = self.check_parquet(path, display)
        elif fmt != "csv":
            estimate = self.check_statfile(path, display)
        else:
            estimate = self.check_csv(path, display)
        frame = self._within_budget(store, display, estimate, lambda: reader(path, parse=True))
        self._check_shape(display, frame.shape[0], frame.shape[1], exact=True)
        held = int(frame.memory_usage(deep=True, index=True).sum())
        self._check_budget(store, display, held)
        return frame, held

    def read_hierarchy(self, path: Path, display: str, store: SessionStore,
                       reader: Callable[[Path], Hierarchy]) -> tuple[Hierarchy, int]:
        """A hierarchy file parsed by ``reader`` within the upload bounds (columns = levels,
        cells = values x levels, decoded bytes; checked while the file is scanned) and the
        memory budget: parsing one holds Python strings for every cell, far more than the
        file's bytes, so that peak is reserved before it starts. Returns the hierarchy and the
        bytes it holds once parsed."""
        decoded, lines, columns = self._scan_csv(path, display)
        cells = (lines + 1) * max(columns, 1)  # no header; a last line may lack its line end
        self._check_shape(display, lines + 1, max(columns, 1), exact=False)
        estimate = _HIERARCHY_BYTES_PER_CELL * cells + _HIERARCHY_BYTES_PER_BYTE * decoded
        hierarchy = self._within_budget(store, display, estimate, lambda: reader(path))
        held = hierarchy_nbytes(hierarchy)
        self._check_budget(store, display, held)
        return hierarchy, held


def hierarchy_nbytes(hierarchy: Hierarchy) -> int:
    """Memory a parsed hierarchy holds: its label arrays (with their strings) and parent maps."""
    held = sum(int(p.nbytes) for p in hierarchy.parents)
    for labels in hierarchy.labels:
        held += int(labels.nbytes) + sum(sys.getsizeof(v) for v in labels.tolist())
    return held
