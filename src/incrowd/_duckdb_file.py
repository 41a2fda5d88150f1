"""incrowd's DuckDB files (incremental state, lattice): written whole, read with clear refusals.

A file is a ``meta`` table of key / JSON value pairs (``format``, ``format_version``, ...) plus
named tables. Writing goes to a temporary name that is renamed into place, so a process killed
at any moment leaves the old file or the new one, never a mixture.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Mapping

import pandas as pd

from ._atomic import atomic_output
from .exceptions import DataError


def write_database(target: Path, meta: Mapping[str, Any], frames: Mapping[str, pd.DataFrame],
                   what: str, finish: Callable[[Any], Mapping[str, Any]] | None = None) -> Path:
    """Write ``meta`` and the frames (one table each) to ``target`` atomically.

    ``what`` names the file in errors ("state file", "lattice file"). ``finish(con)``, when
    given, runs once the tables are written and returns more meta entries (a checksum of what
    was written) to add before the file is renamed into place.
    """
    import duckdb

    if target.is_dir():
        raise DataError(f"{what} {str(target)!r} is a directory; expected a file name")
    if not target.parent.is_dir():
        raise DataError(f"{what} folder {str(target.parent)!r} does not exist")
    with atomic_output(target) as tmp:
        os.unlink(tmp)  # DuckDB creates the file itself; an empty file is not a database
        con = duckdb.connect(tmp)
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
            raise DataError(f"cannot write {what} {str(target)!r}: {exc}") from exc
        finally:
            con.close()
        wal = Path(tmp + ".wal")
        if wal.exists():  # checkpointed above; a stale log must not travel with the rename
            wal.unlink()
    return target


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
    if not p.exists():
        raise DataError(f"{what} {str(p)!r} does not exist")
    if p.is_dir() or p.stat().st_size == 0:
        raise damaged(what, p, "empty or a directory")
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
