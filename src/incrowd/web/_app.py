"""The FastAPI application: server-rendered pages and JSON endpoints over the public API.

Endpoint and field names are the CLI's and the Python API's (``k``, ``method``,
``quasi_identifiers``, ``identifiers``, ``max_suppression``, ...). Errors come back as
``{"error": message}`` with the same message the CLI prints, never a stack trace.
"""

from __future__ import annotations

import contextlib
import shlex
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Optional

import pandas as pd
from fastapi import FastAPI, File, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, ConfigDict

from .. import __version__
from .._microaggregate import microaggregate
from ..data import read_table, write_table
from ..datasets import load_census
from ..exceptions import DataError, IncrowdError
from ..microaggregation import METHODS
from ._sessions import COOKIE, Dataset, Result, Session, SessionStore

MB = 1024 * 1024
_TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
_PREVIEW_ROWS = 10
_SUFFIXES = (".csv.gz", ".csv", ".parquet", ".pq")


class MicroaggregateRequest(BaseModel):
    """The fields of ``incrowd microaggregate`` (``--qi`` is ``quasi_identifiers``)."""

    model_config = ConfigDict(extra="forbid")

    dataset: str
    k: int
    method: str = "mdav"
    quasi_identifiers: Optional[list[str]] = None
    identifiers: Optional[list[str]] = None
    gamma: Optional[float] = None
    rho: Optional[float] = None
    runs: Optional[int] = None
    max_rounds: Optional[int] = None
    diagonals: Optional[str] = None
    split_2k: Optional[bool] = None
    seed: Optional[int] = None


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _safe_name(filename: str | None) -> tuple[str, str]:
    """(display name, suffix) of an uploaded file's name; directories in it are dropped."""
    raw = filename or "upload.csv"
    name = PureWindowsPath(PurePosixPath(raw).name).name or "upload.csv"
    lower = name.lower()
    suffix = next((s for s in _SUFFIXES if lower.endswith(s)), None)
    if suffix is None:
        raise DataError(f"file {name!r} is not CSV or Parquet; use .csv, .csv.gz or .parquet")
    return name, ".parquet" if suffix == ".pq" else suffix


def _columns(frame: pd.DataFrame) -> list[dict[str, str]]:
    return [{"name": str(c), "dtype": "numeric" if pd.api.types.is_numeric_dtype(frame[c]) else "text"}
            for c in frame.columns]


def _describe_dataset(ds: Dataset) -> dict[str, Any]:
    preview = ds.frame.head(_PREVIEW_ROWS)
    return {
        "dataset": ds.id,
        "name": ds.display_name,
        "rows": int(ds.frame.shape[0]),
        "columns": _columns(ds.frame),
        "preview": [[None if pd.isna(v) else (v.item() if hasattr(v, "item") else v) for v in row]
                    for row in preview.itertuples(index=False)],
    }


def _command_line(req: MicroaggregateRequest, input_name: str, output_name: str) -> tuple[str, str]:
    """The CLI line and the Python call that reproduce a microaggregation."""
    args = ["incrowd", "microaggregate", input_name, "-o", output_name, "--k", str(req.k), "--method", req.method]
    if req.quasi_identifiers:
        args += ["--qi", ",".join(req.quasi_identifiers)]
    if req.identifiers:
        args += ["--id", ",".join(req.identifiers)]
    params = {name: getattr(req, name) for name in ("gamma", "rho", "runs", "max_rounds", "diagonals")
              if getattr(req, name) is not None}
    for name, value in params.items():
        args += [f"--{name.replace('_', '-')}", str(value)]
    if req.split_2k is not None:
        args.append("--split-2k" if req.split_2k else "--no-split-2k")
        params["split_2k"] = req.split_2k
    if req.seed is not None:
        args += ["--seed", str(req.seed)]
    py_args = [f"k={req.k}", f"method={req.method!r}"]
    if req.quasi_identifiers:
        py_args.append(f"quasi_identifiers={req.quasi_identifiers!r}")
    if req.identifiers:
        py_args.append(f"identifiers={req.identifiers!r}")
    if req.seed is not None:
        py_args.append(f"random_state={req.seed}")
    py_args += [f"{name}={value!r}" for name, value in params.items()]
    python = (f"import incrowd\nresult = incrowd.microaggregate(incrowd.read_table({input_name!r}), "
              f"{', '.join(py_args)})\nincrowd.write_table(result.aggregated, {output_name!r})")
    return shlex.join(args), python


def create_app(*, max_upload_mb: float = 200, idle_seconds: float = 3600,
               data_dir: str | Path | None = None) -> FastAPI:
    """The web application. ``max_upload_mb``: largest accepted upload; ``idle_seconds``: a
    session idle this long is deleted with its files; ``data_dir``: a folder whose CSV and
    Parquet files are offered as samples beside the bundled Census data."""
    store = SessionStore(idle_seconds=idle_seconds)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI):
        yield
        store.close()  # every session folder goes with the server

    app = FastAPI(title="incrowd", version=__version__, lifespan=lifespan,
                  description="Microaggregation and generalization for microdata, in the browser.")
    app.state.sessions = store
    app.state.max_upload_bytes = int(max_upload_mb * MB)
    samples: dict[str, Path | None] = {"census": None}
    if data_dir is not None:
        folder = Path(data_dir)
        if not folder.is_dir():
            raise DataError(f"data folder {str(folder)!r} does not exist or is not a folder")
        for f in sorted(folder.iterdir()):
            if f.is_file() and f.name.lower().endswith(_SUFFIXES):
                samples.setdefault(f.name, f)

    @app.middleware("http")
    async def _sweep(request: Request, call_next):
        store.expire()  # idle sessions go on the next request, whoever makes it
        return await call_next(request)

    @app.exception_handler(IncrowdError)
    async def _incrowd_error(_request: Request, exc: IncrowdError) -> JSONResponse:
        return _error(400, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "request"
        got = first.get("input")
        return _error(400, f"{where}: {first.get('msg', 'invalid value')}; got {got!r}")

    def session_of(request: Request) -> Session | None:
        return store.get(request.cookies.get(COOKIE))

    def session_for(request: Request, response: Response) -> Session:
        session = session_of(request)
        if session is None:
            session = store.create()
            response.set_cookie(COOKIE, session.id, httponly=True, samesite="strict")
        return session

    def dataset_of(session: Session | None, dataset_id: str) -> Dataset:
        if session is None or dataset_id not in session.datasets:
            raise DataError(f"unknown dataset {dataset_id!r} in this session; upload or pick a sample first")
        return session.datasets[dataset_id]

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index(request: Request) -> HTMLResponse:
        response = _TEMPLATES.TemplateResponse(
            request, "microaggregate.html",
            {"methods": list(METHODS), "samples": list(samples), "version": __version__,
             "max_upload_mb": max_upload_mb})
        session_for(request, response)
        return response

    @app.get("/api/samples")
    async def list_samples() -> dict[str, list[str]]:
        """Names of the data sets offered as samples."""
        return {"samples": list(samples)}

    @app.post("/api/datasets/sample/{name}")
    def pick_sample(name: str, request: Request, response: Response) -> dict[str, Any]:
        """Load a sample into this session (by name from the list, never a path)."""
        if name not in samples:
            raise DataError(f"unknown sample {name!r}; samples: {list(samples)}")
        session = session_for(request, response)
        path = samples[name]
        frame = load_census() if path is None else read_table(path)
        stored = session.new_file(".parquet")
        write_table(frame, stored)
        ds = Dataset(stored.stem, f"{name}.csv" if path is None else name, stored, frame)
        session.datasets[ds.id] = ds
        return _describe_dataset(ds)

    @app.post("/api/datasets")
    async def upload(request: Request, response: Response, file: UploadFile = File(...)) -> Any:
        """Upload a CSV (delimiter detected, .gz accepted) or Parquet file."""
        limit = app.state.max_upload_bytes
        display, suffix = _safe_name(file.filename)
        session = session_for(request, response)
        target = session.new_file(suffix)
        size = 0
        with open(target, "wb") as out:
            while chunk := await file.read(MB):
                size += len(chunk)
                if size > limit:
                    out.close()
                    target.unlink(missing_ok=True)
                    return _error(413, f"file {display!r} is larger than the upload limit of "
                                       f"{limit / MB:g} MB; start the server with a larger "
                                       "--max-upload-mb or upload a smaller file")
                out.write(chunk)
        try:
            frame = read_table(target)
        except DataError as exc:
            target.unlink(missing_ok=True)
            raise DataError(str(exc).replace(str(target), display)) from None
        ds = Dataset(target.stem, display, target, frame)
        session.datasets[ds.id] = ds
        return _describe_dataset(ds)

    @app.get("/api/datasets/{dataset_id}")
    async def show_dataset(dataset_id: str, request: Request) -> dict[str, Any]:
        """Preview (first rows) and column types of a data set of this session."""
        return _describe_dataset(dataset_of(session_of(request), dataset_id))

    @app.post("/api/microaggregate")
    def run_microaggregate(req: MicroaggregateRequest, request: Request) -> dict[str, Any]:
        """Microaggregate a data set of this session; the result is verified k-anonymous and
        offered for download (this session only)."""
        session = session_of(request)
        ds = dataset_of(session, req.dataset)
        params = {name: getattr(req, name) for name in ("gamma", "rho", "runs", "max_rounds", "diagonals", "split_2k")
                  if getattr(req, name) is not None}
        result = microaggregate(ds.frame, req.k, req.method, quasi_identifiers=req.quasi_identifiers,
                                identifiers=req.identifiers, random_state=req.seed, **params)
        stem = Path(ds.display_name).name.split(".")[0] or "data"
        download = f"{stem}_{req.method}_k{req.k}.csv"
        path = session.new_file(".csv")
        write_table(result.aggregated, path, sep=",")
        res = Result(path.stem, path, download, "text/csv")
        session.results[res.id] = res
        command, python = _command_line(req, ds.display_name, download)
        return {**result.summary(), "dataset": ds.id, "result": res.id,
                "download": f"/api/results/{res.id}", "download_name": download,
                "command": command, "python": python}

    @app.get("/api/results/{result_id}")
    async def download(result_id: str, request: Request) -> Response:
        """Download a result this session produced."""
        session = session_of(request)
        if session is None or result_id not in session.results:
            return _error(404, f"no result {result_id!r} in this session")
        res = session.results[result_id]
        return FileResponse(res.path, media_type=res.media_type, filename=res.download_name)

    @app.delete("/api/session")
    async def end_session(request: Request) -> JSONResponse:
        """End this session now: its files are deleted."""
        session = session_of(request)
        if session is not None:
            store.end(session.id)
        response = JSONResponse({"ended": session is not None})
        response.delete_cookie(COOKIE)
        return response

    return app
