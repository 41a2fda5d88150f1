"""What every endpoint needs: the caller's session, its data sets, lattices and results, and
the helpers that turn user-given names into safe ones."""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath

from fastapi import Request, Response
from fastapi.responses import JSONResponse
from fastapi.templating import Jinja2Templates

from ..exceptions import DataError
from ._sessions import COOKIE, BuiltLattice, Dataset, Session, SessionStore

MB = 1024 * 1024
TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def store_of(request: Request) -> SessionStore:
    return request.app.state.sessions


def session_of(request: Request) -> Session | None:
    return store_of(request).get(request.cookies.get(COOKIE))


def session_for(request: Request, response: Response) -> Session:
    """The caller's session, created (and its cookie set) on first use."""
    session = session_of(request)
    if session is None:
        session = store_of(request).create(request.client.host if request.client else None)
        response.set_cookie(COOKIE, session.id, httponly=True, samesite="strict")
    return session


def dataset_of(session: Session | None, dataset_id: str) -> Dataset:
    if session is None or dataset_id not in session.datasets:
        raise DataError(f"unknown dataset {dataset_id!r} in this session; upload or pick a sample first")
    return session.datasets[dataset_id]


def lattice_of(session: Session | None, lattice_id: str) -> BuiltLattice:
    if session is None or lattice_id not in session.lattices:
        raise DataError(f"unknown lattice {lattice_id!r} in this session; build one first")
    return session.lattices[lattice_id]


def base_name(filename: str | None, default: str) -> str:
    """The last component of a client-side file name, under POSIX or Windows rules: what is
    shown to the user, never a path used here."""
    raw = filename or default
    return PureWindowsPath(PurePosixPath(raw).name).name or default


def stem_of(display_name: str) -> str:
    return Path(display_name).name.split(".")[0] or "data"
