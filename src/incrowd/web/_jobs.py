"""Microaggregation as a background job: ``POST /api/microaggregate/jobs`` queues it on the
worker pool and answers its id at once, ``GET /api/jobs/{id}`` tells its status and progress
(and its result once done), ``DELETE /api/jobs/{id}`` cancels it. A job belongs to the session
that started it; a session that ends or expires cancels its jobs, so a closed page does not
leave a kernel running. Kernels stop at their next check (:mod:`incrowd._cancel`): ONA between
batches of runs, MONA between parts; one-call kernels (MDAV, ...) when the call returns."""

from __future__ import annotations

import logging
import secrets
import threading
from typing import Any, Callable

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from .._cancel import CancelToken, cancellable
from ..exceptions import BuildCancelled, IncrowdError
from ._context import dataset_of, error, session_of
from ._microaggregation import MicroaggregateRequest, microaggregate_in
from ._pool import pool_of
from ._sessions import Dataset, Session

router = APIRouter()
_log = logging.getLogger(__name__)
_FINISHED_KEPT = 20  # finished jobs a session keeps for polling; the oldest go first


class Job:
    """One job's state, written by its worker thread and read by the polling requests."""

    def __init__(self, job_id: str):
        self.id = job_id
        self.token = CancelToken()
        self.status = "queued"
        self.result: dict[str, Any] | None = None
        self.error: str | None = None
        self._lock = threading.Lock()

    def cancel(self) -> None:
        """Stop the job at its kernel's next check (any thread). A job still queued is marked
        cancelled at once; its worker, when it gets one, does nothing."""
        self.token.cancel()
        with self._lock:
            if self.status == "queued":
                self.status = "cancelled"

    @property
    def finished(self) -> bool:
        return self.status in ("done", "cancelled", "failed")

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"job": self.id, "status": self.status, "progress": self.token.progress}
        if self.status == "done":
            out["result"] = self.result
        if self.status == "failed":
            out["error"] = self.error
        return out

    def run(self, session: Session, ds: Dataset, req: Any,
            work: Callable[[Session, Dataset, Any], dict[str, Any]] = microaggregate_in,
            what: str = "microaggregation") -> None:
        """Run ``work(session, ds, req)`` (a microaggregation unless told otherwise) under this
        job's cancel token, keeping its answer or its error."""
        with self._lock:
            if self.status != "queued":
                return
            self.status = "running"
        try:
            with cancellable(self.token):
                result = work(session, ds, req)
        except BuildCancelled:
            self.status = "cancelled"
        except IncrowdError as exc:
            self.error, self.status = str(exc), "failed"
        except Exception:  # the job reports it; the worker thread must not die silently
            _log.exception("%s job %s failed", what, self.id)
            self.error, self.status = f"internal error in the {what}", "failed"
        else:
            if self.token.progress is not None:
                self.token.progress = 1.0
            self.result, self.status = result, "done"


def forget_finished(session: Session) -> None:
    finished = [j for j in session.jobs.values() if j.finished]
    for job in finished[: max(0, len(finished) - _FINISHED_KEPT)]:
        session.jobs.pop(job.id, None)


def _job_of(request: Request, job_id: str) -> Job | JSONResponse:
    session = session_of(request)
    if session is None or job_id not in session.jobs:
        return error(404, f"no job {job_id!r} in this session")
    return session.jobs[job_id]


@router.post("/api/microaggregate/jobs", status_code=202)
async def start_job(req: MicroaggregateRequest, request: Request) -> dict[str, Any]:
    """Queue a microaggregation (the fields of ``POST /api/microaggregate``) and answer
    ``{"job": id}`` at once; poll ``GET /api/jobs/{id}``."""
    session = session_of(request)
    ds = dataset_of(session, req.dataset)
    forget_finished(session)
    job = Job(secrets.token_hex(8))
    pool_of(request).submit(job.run, session, ds, req)  # a full pool answers 503 here
    session.jobs[job.id] = job
    return {"job": job.id}


@router.get("/api/jobs/{job_id}")
async def job_status(job_id: str, request: Request) -> Any:
    """``status`` (queued, running, done, cancelled or failed), ``progress`` (share done, or
    null where the method cannot tell), ``result`` when done, ``error`` when failed."""
    job = _job_of(request, job_id)
    return job if isinstance(job, JSONResponse) else job.describe()


@router.delete("/api/jobs/{job_id}")
async def cancel_job(job_id: str, request: Request) -> Any:
    """Cancel a job of this session; it stops at its kernel's next check (poll for
    ``cancelled``). A finished job is left as it is."""
    job = _job_of(request, job_id)
    if isinstance(job, JSONResponse):
        return job
    if not job.finished:
        job.cancel()
    return job.describe()
