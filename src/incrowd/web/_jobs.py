"""Microaggregation as a background job: ``POST /api/microaggregate/jobs`` queues it on the
worker pool and answers its id at once, ``GET /api/jobs/{id}`` tells its status and progress
(and its result once done), ``DELETE /api/jobs/{id}`` cancels it. A job belongs to the session
that started it; a session that ends or expires cancels its jobs, so a closed page does not
leave a kernel running. Kernels stop at their next check (:mod:`incrowd._runtime._cancel`): ONA between
batches of runs, MONA between parts, SUDA2 (a risk job) inside its search; one-call kernels (MDAV,
...) when the call returns."""

from __future__ import annotations

import logging
import secrets
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from ._context import dataset_of, error, session_of
from ._job import Job, forget_finished
from ._microaggregation import MicroaggregateRequest, microaggregate_in
from ._pool import pool_of

router = APIRouter()
_log = logging.getLogger(__name__)


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
    pool_of(request).submit(job.run, session, ds, req, work=microaggregate_in)  # a full pool answers 503 here
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
