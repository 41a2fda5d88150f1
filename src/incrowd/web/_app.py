"""The FastAPI application: server-rendered pages and JSON endpoints over the public API.

Endpoint and field names are the CLI's and the Python API's (``k``, ``method``,
``quasi_identifiers``, ``identifiers``, ``max_suppression``, ...). Errors come back as
``{"error": message}`` with the same message the CLI prints, never a stack trace.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
from fastapi import FastAPI, File, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response

from .._runtime import __version__
from ..datasets import load_census
from ..exceptions import DataError, IncrowdError
from ..generalization import DEFAULT_MAX_MEMORY, DEFAULT_MAX_NODES, check_max_nodes, parse_size
from ..io import (
    FORMATS,
    compression,
    describe_formats,
    format_of,
    statistical_suffixes,
    suffixes,
    upload_accept,
    write_table,
)
from ..io import suffix as format_suffix
from ..microaggregation import METHODS
from . import _jobs, _microaggregation, _negotiation, _pool, _publish, _report, _risk
from ._body_limit import BodyLimit
from ._context import MB, TEMPLATES, base_name, dataset_of, error, session_for, session_of
from ._errors import JSONErrors, Scrubber, read_user_table
from ._guard import LOOPBACK, TEST_CLIENT_HOST, Guard, csp_nonce
from ._sessions import (
    COOKIE,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_MAX_SESSIONS_PER_CLIENT,
    Dataset,
    SessionStore,
    TooManySessions,
)
from ._upload_limits import (
    DEFAULT_MAX_CELLS,
    DEFAULT_MAX_COLUMNS,
    DEFAULT_MAX_DECODED_MB,
    DEFAULT_MEMORY_BUDGET_MB,
    UploadLimits,
    UploadRefused,
)

_PREVIEW_ROWS = 10


def _safe_name(filename: str | None) -> tuple[str, str]:
    """(display name, suffix) of an uploaded file's name; directories in it are dropped."""
    name = base_name(filename, f"upload{format_suffix('csv')}")
    lower = name.lower()
    suffix = next((s for s in sorted(_upload_suffixes(), key=len, reverse=True) if lower.endswith(s)), None)
    if suffix is None:
        titles = list(dict.fromkeys(f.title.split()[0] for f in FORMATS.values()))
        raise DataError(f"file {name!r} is not {', '.join(titles[:-1])} or {titles[-1]}; use "
                        f"{', '.join(_upload_suffixes())}")
    fmt = format_of(lower)
    # a Parquet file is stored under its first suffix, the one a session accepts
    return name, fmt.suffixes[0] if fmt is not None and fmt.name == "parquet" else suffix


def _upload_suffixes() -> tuple[str, ...]:
    """Every suffix an upload or a sample may have: the registered ones, and a compressible
    format's first one gzipped."""
    gz = compression.suffix("gzip")
    return tuple(dict.fromkeys((*suffixes(), *(f"{f.suffixes[0]}{gz}" for f in FORMATS.values() if f.compressible))))


def _columns(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Each column's name and type; a statistical file's variable label too, when it has one."""
    meta = frame.attrs.get("statfile")
    described = (meta.get("columns") or {}) if isinstance(meta, dict) else {}
    out: list[dict[str, Any]] = []
    for c in frame.columns:
        column: dict[str, Any] = {"name": str(c),
                                  "dtype": "numeric" if pd.api.types.is_numeric_dtype(frame[c]) else "text"}
        info = described.get(str(c)) or {}
        if info.get("label"):
            column["label"] = str(info["label"])
        if info.get("value_labels"):
            column["value_labels"] = len(info["value_labels"])
        out.append(column)
    return out


def _describe_dataset(ds: Dataset) -> dict[str, Any]:
    preview = ds.frame.head(_PREVIEW_ROWS)
    rows = [[None if pd.isna(v) else (v.item() if hasattr(v, "item") else v) for v in row]
            for row in preview.itertuples(index=False)]
    _show_user_missing(preview, rows)
    return {
        "dataset": ds.id,
        "name": ds.display_name,
        "rows": int(ds.frame.shape[0]),
        "columns": _columns(ds.frame),
        "preview": rows,
    }


def _show_user_missing(preview: pd.DataFrame, rows: list[list[Any]]) -> None:
    """A statistical file's user-missing cells shown by the code the file holds (99, ``.a``):
    they are values of their own, not empty cells."""
    from ..io import code_indices

    meta = preview.attrs.get("statfile")
    described = (meta.get("columns") or {}) if isinstance(meta, dict) else {}
    for j, name in enumerate(preview.columns):
        codes = (described.get(str(name)) or {}).get("missing_codes")
        if not codes or not pd.api.types.is_float_dtype(preview[name].dtype):
            continue
        for i, index in enumerate(code_indices(preview[name].to_numpy()).tolist()):
            if 0 <= index < len(codes):
                code = codes[index]
                rows[i][j] = f".{code}" if isinstance(code, str) else (int(code) if float(code).is_integer() else code)


class _SweepIdle:
    """Deletes idle sessions on every request, whoever makes it. A plain ASGI middleware:
    Starlette's ``BaseHTTPMiddleware`` would hide a client's disconnect from the lattice build,
    which must stop when its client goes away."""

    def __init__(self, app, store: SessionStore):
        self.app = app
        self.store = store

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            self.store.expire()
        await self.app(scope, receive, send)


def create_app(*, max_upload_mb: float = 200, idle_seconds: float = 3600,
               data_dir: str | Path | None = None, max_nodes: int | None = DEFAULT_MAX_NODES,
               max_memory: int | str | None = DEFAULT_MAX_MEMORY, workers: int | None = None,
               queue: int | None = None, allowed_hosts: list[str] | None = None,
               max_cells: int | None = DEFAULT_MAX_CELLS, max_columns: int | None = DEFAULT_MAX_COLUMNS,
               max_decoded_mb: float | None = DEFAULT_MAX_DECODED_MB,
               memory_budget_mb: float | None = DEFAULT_MEMORY_BUDGET_MB,
               max_sessions: int | None = DEFAULT_MAX_SESSIONS,
               max_sessions_per_client: int | None = DEFAULT_MAX_SESSIONS_PER_CLIENT) -> FastAPI:
    """The web application. ``max_upload_mb``: largest accepted upload; ``idle_seconds``: a
    session idle this long is deleted with its files; ``data_dir``: a folder whose data files
    (CSV, Parquet, SPSS, Stata, SAS) are offered as samples beside the bundled Census data; ``max_nodes`` and
    ``max_memory``: the lattice size limits of :meth:`Lattice.build` (None lifts one);
    ``workers``: heavy steps run at once (default: the CPU count); ``queue``: more that may wait
    for a worker (default twice ``workers``), beyond which a request gets 503;
    ``allowed_hosts``: the Host names answered ("name" or "name:port"; ``incrowd serve`` passes
    its bound address), by default the loopback names on any port and TestClient's;
    ``max_cells``, ``max_columns``, ``max_decoded_mb``: bounds on one upload's decoded table,
    checked while decoding; ``memory_budget_mb``: the data sets and hierarchies of all sessions
    together; ``max_sessions``, ``max_sessions_per_client``: sessions held at once, in all and
    per client address (a new one beyond either gets 429)."""
    store = SessionStore(idle_seconds=idle_seconds, max_sessions=max_sessions,
                         max_per_client=max_sessions_per_client)
    app = FastAPI(title="incrowd", version=__version__, lifespan=_lifespan,
                  description="Microaggregation and generalization for microdata, in the browser.")
    app.state.sessions = store
    pool = _pool.install(app, workers, queue)
    app.state.max_upload_bytes = int(max_upload_mb * MB)
    app.state.upload_limits = UploadLimits.from_options(max_cells, max_columns, max_decoded_mb, memory_budget_mb)
    app.state.lattice_limits = (check_max_nodes(max_nodes), parse_size(max_memory, "max_memory"))
    samples = _samples(data_dir)
    _add_middleware(app, store, samples, data_dir, allowed_hosts)
    _add_error_handlers(app)
    _add_pages(app, samples, max_upload_mb)
    _add_dataset_routes(app, samples, store, pool)
    for page in (_microaggregation, _jobs, _negotiation, _publish, _report, _risk):
        app.include_router(page.router)
    _add_session_routes(app, store)
    return app


@contextlib.asynccontextmanager
async def _lifespan(app: FastAPI):
    """Lifecycle: when the server stops, the workers stop and every session folder goes."""
    yield
    app.state.pool.close()
    app.state.sessions.close()


def _samples(data_dir: str | Path | None) -> dict[str, Path | None]:
    """The data sets offered as samples: the bundled Census (None) and the data files of
    ``data_dir`` (CSV, Parquet, SPSS, Stata, SAS), by name."""
    samples: dict[str, Path | None] = {"census": None}
    if data_dir is not None:
        folder = Path(data_dir)
        if not folder.is_dir():
            raise DataError(f"data folder {str(folder)!r} does not exist or is not a folder")
        for f in sorted(folder.iterdir()):
            if f.is_file() and f.name.lower().endswith(_upload_suffixes()):
                samples.setdefault(f.name, f)
    return samples


def _add_middleware(app: FastAPI, store: SessionStore, samples: dict[str, Path | None],
                    data_dir: str | Path | None, allowed_hosts: list[str] | None) -> None:
    """Middleware, innermost first: idle sessions swept, the body limit, errors as JSON with
    server paths scrubbed, and the Host and origin guard outermost."""
    app.add_middleware(_SweepIdle, store=store)
    app.add_middleware(BodyLimit, limit=app.state.max_upload_bytes)
    app.add_middleware(JSONErrors, scrub=Scrubber({str(p): n for n, p in samples.items() if p is not None},
                                                  [store.root, data_dir]))
    app.add_middleware(Guard, allowed_hosts=[*LOOPBACK, TEST_CLIENT_HOST] if allowed_hosts is None
                       else allowed_hosts)


def _add_error_handlers(app: FastAPI) -> None:
    """Every refusal answers ``{"error": message}`` with the CLI's message and its status."""

    @app.exception_handler(IncrowdError)
    async def _incrowd_error(_request: Request, exc: IncrowdError) -> JSONResponse:
        return error(400, str(exc))

    @app.exception_handler(TooManySessions)
    async def _too_many_sessions(_request: Request, exc: TooManySessions) -> JSONResponse:
        return error(exc.status, str(exc))

    @app.exception_handler(UploadRefused)
    async def _upload_refused(_request: Request, exc: UploadRefused) -> JSONResponse:
        return error(exc.status, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "request"
        got = first.get("input")
        return error(400, f"{where}: {first.get('msg', 'invalid value')}; got {got!r}")


def _add_pages(app: FastAPI, samples: dict[str, Path | None], max_upload_mb: float) -> None:
    """The server-rendered pages: microaggregation, negotiation, publishing."""

    def page(request: Request, template: str, **context: Any) -> HTMLResponse:
        response = TEMPLATES.TemplateResponse(
            request, template,
            {"samples": list(samples), "version": __version__, "csp_nonce": csp_nonce(request),
             "max_upload_mb": max_upload_mb, "upload_accept": upload_accept(),
             "upload_formats": describe_formats(), **context})
        session_for(request, response)
        return response

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def microaggregation_page(request: Request) -> HTMLResponse:
        return page(request, "microaggregate.html", methods=list(METHODS), active="microaggregate")

    @app.get("/negotiate", response_class=HTMLResponse, include_in_schema=False)
    async def negotiation_page(request: Request) -> HTMLResponse:
        return page(request, "negotiate.html", active="negotiate", **_negotiation.page_context())

    @app.get("/publish", response_class=HTMLResponse, include_in_schema=False)
    async def publish_page(request: Request) -> HTMLResponse:
        return page(request, "publish.html", active="publish", **_publish.page_context())


def _add_dataset_routes(app: FastAPI, samples: dict[str, Path | None], store: SessionStore,
                        pool: _pool.WorkerPool) -> None:
    """The data sets of a session: the samples, uploads, and a preview."""

    @app.get("/api/samples")
    async def list_samples() -> dict[str, list[str]]:
        """Names of the data sets offered as samples."""
        return {"samples": list(samples)}

    @app.post("/api/datasets/sample/{name}")
    @_pool.heavy
    def pick_sample(name: str, request: Request, response: Response) -> dict[str, Any]:
        """Load a sample into this session (by name from the list, never a path)."""
        if name not in samples:
            raise DataError(f"unknown sample {name!r}; samples: {list(samples)}")
        session = session_for(request, response)
        path = samples[name]
        frame = load_census() if path is None else read_user_table(path, name)
        statfile = next((s for s in statistical_suffixes() if name.lower().endswith(s)), None)
        stored = session.new_file(statfile or format_suffix("parquet"))
        if statfile and path is not None:  # its labels and formats are what its release is written back with
            shutil.copyfile(path, stored)
        else:
            write_table(frame, stored)
        ds = Dataset(stored.stem, f"{name}{format_suffix('csv')}" if path is None else name, stored, frame)
        session.datasets[ds.id] = ds
        return _describe_dataset(ds)

    @app.post("/api/datasets")
    async def upload(request: Request, response: Response, file: UploadFile = File(...)) -> Any:
        """Upload a CSV (delimiter detected, .gz accepted), Parquet, SPSS (.sav, .zsav), Stata (.dta)
        or SAS (.sas7bdat, .xpt) file; a statistical file keeps its labels for its release."""
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
                    return error(413, f"file {display!r} is larger than the upload limit of "
                                      f"{limit / MB:g} MB; start the server with a larger "
                                      "--max-upload-mb or upload a smaller file")
                out.write(chunk)
        def parse() -> tuple[Dataset, dict[str, Any]]:
            frame, nbytes = app.state.upload_limits.read(
                target, display, store, lambda path, **_: read_user_table(path, display))
            ds = Dataset(target.stem, display, target, frame, nbytes)
            return ds, _describe_dataset(ds)

        try:
            ds, described = await pool.run(parse)
        except (DataError, _pool.PoolFull):
            target.unlink(missing_ok=True)
            raise
        session.datasets[ds.id] = ds
        return described

    @app.get("/api/datasets/{dataset_id}")
    async def show_dataset(dataset_id: str, request: Request) -> dict[str, Any]:
        """Preview (first rows) and column types of a data set of this session."""
        return _describe_dataset(dataset_of(session_of(request), dataset_id))


def _add_session_routes(app: FastAPI, store: SessionStore) -> None:
    """A session's results to download, and ending it."""

    @app.get("/api/results/{result_id}")
    async def download(result_id: str, request: Request) -> Response:
        """Download a result this session produced."""
        session = session_of(request)
        if session is None or result_id not in session.results:
            return error(404, f"no result {result_id!r} in this session")
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
