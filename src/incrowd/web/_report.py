"""The disclosure-risk and utility report of every release the web UI makes.

A release endpoint calls :func:`offer`: the original and the release are kept beside the
result, and its answer gains the URLs of the report. The report is made once, on the worker
pool, by whichever comes first: the page's follow-up job (``POST .../report/jobs``, polled and
cancelled as every job), the blocking ``POST .../report``, or a download (``GET .../report.html``
or ``.json``). The release itself stays as fast as before: measuring risk takes seconds on
tables that are released in a fraction of that, and a caller of the API may not want it.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse

from .._runtime import check_cancelled
from ..exceptions import DataError
from ._context import error, session_of
from ._job import Job, forget_finished
from ._pool import heavy, pool_of
from ._sessions import Result, Session

router = APIRouter()
HTML_LINK = "Download the risk and utility report (HTML)"


@dataclass
class PendingReport:
    """What the report of one result needs until it is made, then where it lies."""

    original: Any
    release: Any
    options: dict[str, Any]
    stem: str
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    made: dict[str, Any] | None = None
    html_path: Any = None
    json_path: Any = None

    @property
    def html_name(self) -> str:
        return f"{self.stem}_report.html"

    @property
    def json_name(self) -> str:
        return f"{self.stem}_report.json"


def offer(res: Result, original, release, stem: str, **options: Any) -> dict[str, Any]:
    """Keep what the report of ``res`` needs (``options``: the keyword arguments of
    :func:`incrowd.report`) and answer the fields a release answer adds to point at it."""
    res.report = PendingReport(original, release, dict(options), stem)
    base = f"/api/results/{res.id}/report"
    return {"report": base, "report_job": f"{base}/jobs",
            "report_download": f"{base}.html", "report_name": res.report.html_name,
            "report_json": f"{base}.json", "report_json_name": res.report.json_name}


def _pending(session: Session | None, result_id: str) -> PendingReport:
    res = None if session is None else session.results.get(result_id)
    pending = getattr(res, "report", None)
    if pending is None:
        raise DataError(f"no release {result_id!r} with a report in this session")
    return pending


def _not_here(session: Session | None, result_id: str) -> JSONResponse | None:
    """404, as for any download, when this session has no such release (another session's
    included)."""
    res = None if session is None else session.results.get(result_id)
    if getattr(res, "report", None) is None:
        return error(404, f"no release {result_id!r} with a report in this session")
    return None


def make(session: Session, result_id: str) -> dict[str, Any]:
    """The report of a result of ``session``, made on first call (the others wait for it):
    its headline figures, its assumptions and its download links."""
    from ..reporting import report, summary_points

    pending = _pending(session, result_id)
    with pending.lock:
        if pending.made is None:
            check_cancelled()
            made = report(pending.original, pending.release, **pending.options)
            check_cancelled()
            html_path, json_path = session.new_file(".html"), session.new_file(".json")
            made.to_html(html_path)
            json_path.write_text(made.to_json() + "\n", encoding="utf-8")
            base = f"/api/results/{result_id}/report"
            pending.made = {
                "result": result_id,
                "verdict": list(made.verdict),
                "points": summary_points(made.risk, made.utility),
                "assumptions": list(made.assumptions),
                "about": made.about,
                "report_download": f"{base}.html", "report_name": pending.html_name,
                "report_json": f"{base}.json", "report_json_name": pending.json_name,
            }
            pending.html_path, pending.json_path = html_path, json_path
            # the tables are only needed to make the report: a long session keeps no copies
            pending.original = pending.release = None
        return pending.made


@router.post("/api/results/{result_id}/report")
@heavy
def make_report(result_id: str, request: Request) -> Any:
    """The disclosure-risk and utility report of a release of this session: headline figures
    (``points``, each in [0, 1]), ``assumptions``, and the HTML and JSON download links."""
    session = session_of(request)
    return _not_here(session, result_id) or make(session, result_id)


@router.post("/api/results/{result_id}/report/jobs", status_code=202)
async def start_report_job(result_id: str, request: Request) -> Any:
    """Make the report as a background job: answers ``{"job": id}`` at once; poll
    ``GET /api/jobs/{id}`` (its result is what ``POST .../report`` answers)."""
    session = session_of(request)
    if (missing := _not_here(session, result_id)) is not None:
        return missing
    forget_finished(session)
    job = Job(secrets.token_hex(8))
    pool_of(request).submit(job.run, session, None, result_id,
                            work=lambda s, _ds, rid: make(s, rid), what="report")
    session.jobs[job.id] = job
    return {"job": job.id}


def _download(session: Session | None, result_id: str, html: bool) -> Any:
    if (missing := _not_here(session, result_id)) is not None:
        return missing
    make(session, result_id)
    pending = _pending(session, result_id)
    if html:
        return FileResponse(pending.html_path, media_type="text/html", filename=pending.html_name)
    return FileResponse(pending.json_path, media_type="application/json", filename=pending.json_name)


@router.get("/api/results/{result_id}/report.html")
@heavy
def download_html(result_id: str, request: Request) -> Any:
    """The report as one self-contained HTML page (an attachment; made first if need be)."""
    return _download(session_of(request), result_id, html=True)


@router.get("/api/results/{result_id}/report.json")
@heavy
def download_json(result_id: str, request: Request) -> Any:
    """The report's measures as JSON (an attachment; made first if need be)."""
    return _download(session_of(request), result_id, html=False)
