"""incrowd's DuckDB files (incremental state, lattice): written whole, read with clear refusals.

A file is a ``meta`` table of key / JSON value pairs (``format``, ``format_version``, ...) plus
named tables. Writing goes to a temporary name that is renamed into place, so a process killed
at any moment leaves the old file or the new one, never a mixture.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from ..exceptions import DataError
from ._atomic import as_write_error, atomic_output, check_input_file, is_stdout

if TYPE_CHECKING:  # frames come from the callers; reading a file needs no pandas
    import pandas as pd


def write_database(target: Path, meta: Mapping[str, Any], frames: Mapping[str, pd.DataFrame],
                   what: str, finish: Callable[[Any], Mapping[str, Any]] | None = None, *,
                   inputs: Iterable = ()) -> Path:
    """Write ``meta`` and the frames (one table each) to ``target`` atomically.

    ``what`` names the file in errors ("state file", "lattice file"); ``inputs`` are the files
    and folders it was made from, which it must not replace. ``finish(con)``, when given, runs
    once the tables are written and returns more meta entries (a checksum of what was written)
    to add before the file is renamed into place.
    """
    import duckdb

    if is_stdout(target):
        raise DataError(f"a {what} is a DuckDB database and cannot go to standard output ('-'); "
                        "name a file")
    shown = str(target)
    with atomic_output(target, inputs=inputs, what=what, create=False) as tmp:
        try:
            con = duckdb.connect(tmp)
        except Exception as exc:  # duckdb.IOException on a full disk or a read-only folder
            raise as_write_error(exc, shown, tmp, what) from None
        try:
            con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
            con.executemany("INSERT INTO meta VALUES (?, ?)",
                            [(key, json.dumps(value)) for key, value in meta.items()])
            for name, frame in frames.items():
                con.register("frame_view", frame)
                con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM frame_view')
                con.unregister("frame_view")
            if finish is not None:
                con.executemany("INSERT INTO meta VALUES (?, ?)",
                                [(key, json.dumps(value)) for key, value in finish(con).items()])
            con.execute("CHECKPOINT")
        except Exception as exc:  # DuckDB and pandas conversion errors; the user needs the file named
            raise as_write_error(exc, shown, tmp, what) from None
        finally:
            con.close()
        wal = Path(tmp + ".wal")
        if wal.exists():  # checkpointed above; a stale log must not travel with the rename
            wal.unlink()
    return target


#: how to make each kind of file, for the refusal of a file of another kind (a CSV, say)
#: the suffix of the DuckDB files incrowd writes (the incremental state, a lattice)
DATABASE_SUFFIX = ".duckdb"

_MAKE = {"lattice file": "build one with `incrowd lattice build`",
         "state file": "create one with `incrowd incremental base`"}


def _is_duckdb_database(path: Path) -> bool:
    """DuckDB's file header carries the magic bytes ``DUCK`` at offset 8."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(12)
    except OSError:
        return True  # let the open below report what is wrong with the file
    return head[8:12] == b"DUCK"


def damaged(what: str, path: Path, why: str) -> DataError:
    return DataError(f"{what} {str(path)!r} is damaged or not an incrowd {what}: {why}")


def read_database(path: str | os.PathLike, *, what: str, file_format: str, version: int,
                  rebuild: str, needed: Callable[[dict], set[str]],
                  read: Callable[[Any, dict], Any]) -> Any:
    """Open ``path`` read-only, check its format, version and tables (``needed(meta)``), and
    return ``read(con, meta)``; any failure inside becomes one DataError naming the file.

    ``rebuild`` tells the user how to make a file of the current version.
    """
    import duckdb

    p = Path(path)
    check_input_file(p, what)
    if p.stat().st_size == 0:
        raise damaged(what, p, "it is empty")
    if not _is_duckdb_database(p):
        make = _MAKE.get(what, rebuild)
        raise damaged(what, p, f"it is not a DuckDB database (a data file?); {make}")
    try:
        con = duckdb.connect(str(p), read_only=True)
    except Exception as exc:  # duckdb.IOException, SerializationException, ... on a bad file
        raise damaged(what, p, str(exc).splitlines()[0]) from exc
    try:
        tables = {row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if "meta" not in tables:
            raise damaged(what, p, "it has no 'meta' table")
        meta = {key: json.loads(value) for key, value in con.execute("SELECT key, value FROM meta").fetchall()}
        if meta.get("format") != file_format:
            raise damaged(what, p, f"format is {meta.get('format')!r}, expected {file_format!r}")
        if meta.get("format_version") != version:
            raise DataError(
                f"{what} {str(p)!r} has format version {meta.get('format_version')!r} (written by "
                f"incrowd {meta.get('incrowd_version', '?')}); this incrowd reads version {version} "
                f"only: {rebuild}"
            )
        missing = sorted(needed(meta) - tables)
        if missing:
            raise damaged(what, p, f"table(s) {missing} are missing")
        return read(con, meta)
    except DataError:
        raise
    except Exception as exc:  # a damaged file fails somewhere inside DuckDB
        raise damaged(what, p, str(exc).splitlines()[0]) from exc
    finally:
        con.close()
