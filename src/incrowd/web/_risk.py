"""The Risk step of the Publish page: the re-identification risk of an uploaded file as it is,
before it is protected, measured by :func:`incrowd.risk` as ``incrowd risk`` measures it (the
file read again as the CLI reads it, so the figures and the command line shown agree). It runs as
a background job: ``POST /api/risk/jobs`` answers its id, ``GET /api/jobs/{id}`` its progress
and result, ``DELETE /api/jobs/{id}`` cancels it between measures and inside SUDA2's search,
which runs without the GIL so the server keeps answering meanwhile."""

from __future__ import annotations

import secrets
import shlex
from typing import Any, Literal, Optional

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from .._runtime import check_cancelled
from ..exceptions import BuildCancelled, DataError, IncrowdError, ParameterError
from ..io import read_table
from ._context import dataset_of, session_of
from ._job import Job, forget_finished
from ._pool import heavy, pool_of
from ._sessions import Dataset, Session

router = APIRouter()


class RiskRequest(BaseModel):
    """A data set of this session and the fields of :func:`incrowd.risk`."""

    model_config = ConfigDict(extra="forbid")

    dataset: str
    quasi_identifiers: list[str]
    weight: Optional[str] = None
    household: Optional[str] = None
    population: Optional[float] = None
    threshold: float = 0.2
    suda_scores: Literal["original", "ihsn"] = "original"
    suda: bool = True
    suda_max_size: Optional[int] = Field(default=None, ge=1)


def command_line(req: RiskRequest, input_name: str) -> str:
    """The ``incrowd risk`` line that measures the same."""
    args = ["incrowd", "risk", input_name, "--qi",
            ",".join(f'"{q}"' if "," in q else q for q in req.quasi_identifiers)]
    for flag, value in (("--weight", req.weight), ("--household", req.household)):
        if value:
            args += [flag, value]
    if req.population is not None:
        args += ["--population", f"{req.population:g}"]
    if req.threshold != 0.2:
        args += ["--threshold", f"{req.threshold:g}"]
    if req.suda_scores != "original":
        args += ["--suda-scores", req.suda_scores]
    if not req.suda:
        args += ["--no-suda"]
    elif req.suda_max_size is not None:
        args += ["--suda-max-size", str(req.suda_max_size)]
    return shlex.join(args)


def risk_in(session: Session, ds: Dataset, req: RiskRequest) -> dict[str, Any]:
    """The risk of ``ds`` as ``req`` asks: what the endpoint answers (``summary``, ``about``,
    the riskiest records, the lines ``incrowd risk`` prints and its command line)."""
    from ..reporting import risk, risk_lines

    try:
        check_cancelled()
        data = read_table(ds.path)
        check_cancelled()
        result = risk(data, req.quasi_identifiers, weight=req.weight or None, household=req.household or None,
                      population=req.population, threshold=req.threshold,
                      suda_original_scores=req.suda_scores == "original", suda=req.suda,
                      suda_max_size=req.suda_max_size)
        check_cancelled()
    except BuildCancelled:
        raise
    except IncrowdError as exc:
        text = str(exc).replace(str(ds.path), ds.display_name)
        raise (ParameterError if isinstance(exc, ParameterError) else DataError)(text) from None
    out = result.to_dict(value_labels=True)
    return {**out, "dataset": ds.id, "lines": [list(line) for line in risk_lines(result)],
            "command": command_line(req, ds.display_name)}


@router.post("/api/risk")
@heavy
def run_risk(req: RiskRequest, request: Request) -> dict[str, Any]:
    """The re-identification risk of a data set of this session (blocking; the page uses the job)."""
    session = session_of(request)
    ds = dataset_of(session, req.dataset)  # refuses a request without a session
    assert session is not None
    return risk_in(session, ds, req)


@router.post("/api/risk/jobs", status_code=202)
async def start_job(req: RiskRequest, request: Request) -> dict[str, Any]:
    """Queue the risk of a data set (the fields of ``POST /api/risk``) and answer ``{"job": id}``
    at once; poll ``GET /api/jobs/{id}``, cancel with ``DELETE /api/jobs/{id}``."""
    session = session_of(request)
    ds = dataset_of(session, req.dataset)  # refuses a request without a session
    assert session is not None
    forget_finished(session)
    job = Job(secrets.token_hex(8))
    pool_of(request).submit(job.run, session, ds, req, work=risk_in, what="risk assessment")
    session.jobs[job.id] = job
    return {"job": job.id}
