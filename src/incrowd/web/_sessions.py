"""Per-browser sessions: each has its own temporary folder, deleted when the session ends or
has been idle too long. Files inside get random names chosen here; no name or path from a
request ever reaches the filesystem. Sessions are bounded in number, in all and per client
address (``incrowd serve --max-sessions``, ``--max-sessions-per-client``): a client that
throws its cookie away on every request cannot fill the server with folders and data sets.
"""

from __future__ import annotations

import secrets
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..exceptions import DataError
from ..generalization import Hierarchy, Lattice
from ..io import DATABASE_SUFFIX, FORMATS, compression, statistical_suffixes
from ._lifecycle import new_root

COOKIE = "incrowd_session"
DEFAULT_MAX_SESSIONS = 500
DEFAULT_MAX_SESSIONS_PER_CLIENT = 20
#: the statistical files an upload may be (SPSS, Stata, SAS), as ``incrowd.read_table`` reads them
STATFILE_SUFFIXES = statistical_suffixes()


class TooManySessions(DataError):
    """A new session over one of the server's session limits (answered 429)."""

    status = 429


def stored_suffixes() -> tuple[str, ...]:
    """What a session stores: a data file in a registered format (a Parquet one as .parquet),
    a compressed CSV as uploaded, a state file, and the reports."""
    data = (s for f in FORMATS.values() for s in (f.suffixes[:1] if f.name == "parquet" else f.suffixes))
    compressed = (f"{f.suffixes[0]}{compression.suffix('gzip')}" for f in FORMATS.values() if f.compressible)
    return tuple(dict.fromkeys((*data, *compressed, DATABASE_SUFFIX, ".html", ".json")))


@dataclass
class Dataset:
    """An uploaded (or bundled) table: the name the user gave is shown, never used as a path."""

    id: str
    display_name: str
    path: Path
    frame: pd.DataFrame
    nbytes: int = 0  # memory the frame holds, counted against the server's budget


@dataclass
class Result:
    """A file this session produced and may download; ``before`` and ``after`` keep the
    tables for the before/after plot."""

    id: str
    path: Path
    download_name: str
    media_type: str
    before: pd.DataFrame | None = None
    after: pd.DataFrame | None = None
    # a release's disclosure-risk and utility report (web/_report.py), made on request
    report: Any = None


@dataclass
class UploadedHierarchy:
    """A hierarchy file the user uploaded, parsed and validated, for one attribute."""

    attribute: str
    display_name: str
    hierarchy: Hierarchy
    nbytes: int = 0  # memory it holds, counted against the server's budget


@dataclass
class BuiltLattice:
    """A lattice built in this session over one of its data sets."""

    id: str
    dataset: str
    lattice: Lattice
    hierarchy_sources: dict[str, str]
    intervals: dict[str, list[float]] = field(default_factory=dict)


@dataclass
class Session:
    id: str
    folder: Path
    last_seen: float = field(default_factory=time.monotonic)
    client: str | None = None  # the address that created it, for the per-client limit
    datasets: dict[str, Dataset] = field(default_factory=dict)
    results: dict[str, Result] = field(default_factory=dict)
    hierarchies: dict[str, UploadedHierarchy] = field(default_factory=dict)
    lattices: dict[str, BuiltLattice] = field(default_factory=dict)
    # cancel flags of the lattice builds running for this session
    builds: dict[str, threading.Event] = field(default_factory=dict)
    # background jobs of this session (web/_jobs.py), each with a cancel() method
    jobs: dict[str, Any] = field(default_factory=dict)
    # hierarchy files uploaded for releases (web/_publish.py), by file name, kept on disk
    release_hierarchies: dict[str, Any] = field(default_factory=dict)
    # PRAM transition matrices uploaded for releases' steps (web/_publish.py), by file name, on disk
    release_matrices: dict[str, Any] = field(default_factory=dict)

    def cancel_builds(self) -> int:
        flags = list(self.builds.values())
        for flag in flags:
            flag.set()
        return len(flags)

    def cancel_all(self) -> None:
        """Stop everything still running for this session: it is ending."""
        self.cancel_builds()
        for job in list(self.jobs.values()):
            job.cancel()

    def new_file(self, suffix: str) -> Path:
        """A fresh path inside this session's folder (random name, allowed suffix only)."""
        if suffix not in stored_suffixes():
            raise DataError(f"file type {suffix!r} is not accepted; use {', '.join(stored_suffixes())}")
        return self.folder / f"{secrets.token_hex(8)}{suffix}"


class SessionStore:
    """Sessions by cookie id, with a lock: the server runs requests on several threads."""

    def __init__(self, idle_seconds: float = 3600.0, root: Path | None = None,
                 max_sessions: int | None = DEFAULT_MAX_SESSIONS,
                 max_per_client: int | None = DEFAULT_MAX_SESSIONS_PER_CLIENT):
        for name, value in (("max_sessions", max_sessions), ("max_sessions_per_client", max_per_client)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise DataError(f"{name} must be a positive integer (or None for no limit); got {value!r}")
        self.idle_seconds = float(idle_seconds)
        self.max_sessions = max_sessions
        self.max_per_client = max_per_client
        self.root = new_root(root)  # one folder per server, swept after a crash
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def get(self, session_id: str | None) -> Session | None:
        self.expire()
        with self._lock:
            session = self._sessions.get(session_id or "")
            if session is not None:
                session.last_seen = time.monotonic()
            return session

    def create(self, client: str | None = None) -> Session:
        """A new session for ``client`` (its address), within the limits (TooManySessions)."""
        session_id = secrets.token_urlsafe(24)
        folder = self.root / secrets.token_hex(12)
        session = Session(session_id, folder, client=client)
        with self._lock:  # counted and added under one lock: parallel requests cannot all pass
            if self.max_sessions is not None and len(self._sessions) >= self.max_sessions:
                raise TooManySessions(f"the server holds {len(self._sessions)} sessions, its limit "
                                      f"(--max-sessions {self.max_sessions}); try again when one has ended "
                                      "or expired")
            if self.max_per_client is not None:
                mine = sum(1 for s in self._sessions.values() if s.client == client)
                if mine >= self.max_per_client:
                    raise TooManySessions(f"this client holds {mine} sessions, the limit per client "
                                          f"(--max-sessions-per-client {self.max_per_client}); keep the "
                                          "session cookie, or end a session (DELETE /api/session)")
            folder.mkdir(mode=0o700)
            self._sessions[session_id] = session
        return session

    def end(self, session_id: str) -> None:
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is not None:
            session.cancel_all()
            shutil.rmtree(session.folder, ignore_errors=True)

    def expire(self) -> None:
        """Delete sessions idle for longer than ``idle_seconds`` (checked on every request)."""
        now = time.monotonic()
        with self._lock:
            stale = [s for s in self._sessions.values() if now - s.last_seen > self.idle_seconds]
            for s in stale:
                del self._sessions[s.id]
        for s in stale:
            s.cancel_all()
            shutil.rmtree(s.folder, ignore_errors=True)

    def close(self) -> None:
        with self._lock:
            for s in self._sessions.values():
                s.cancel_all()
            self._sessions.clear()
        shutil.rmtree(self.root, ignore_errors=True)

    def memory_in_use(self) -> int:
        """Bytes held by the data sets and uploaded hierarchies of every session."""
        with self._lock:
            return sum(sum(ds.nbytes for ds in s.datasets.values()) + sum(h.nbytes for h in s.hierarchies.values())
                       for s in self._sessions.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)
