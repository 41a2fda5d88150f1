"""Microaggregation endpoints: run a method on a data set of the session, report, plot, and
show the CLI line and Python call that reproduce the result."""

from __future__ import annotations

import shlex
from typing import Any, Optional

import numpy as np
from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from .._runtime import MAX_SEED, check_cancelled
from ..exceptions import DataError, ParameterError, VerificationError
from ..io import FORMATS, Promise, format_of, write_release
from ..microaggregation import microaggregate
from ..privacy import KAnonymity, ReleaseCheck
from ._context import dataset_of, session_of, stem_of
from ._pool import heavy
from ._publish import release_format
from ._report import offer
from ._sessions import Dataset, Result, Session

router = APIRouter()
_PARAMS = ("gamma", "rho", "runs", "max_rounds", "max_seconds", "start", "diagonals", "split_2k")
_MAX_POINTS = 5000


class MicroaggregateRequest(BaseModel):
    """The fields of ``incrowd microaggregate`` (``--qi`` is ``quasi_identifiers``)."""

    model_config = ConfigDict(extra="forbid")

    dataset: str
    # strict: a JSON string "5" or 5.0 is not the integer the CLI reads, and the range is the CLI's
    k: StrictInt
    method: str = "mdav"
    quasi_identifiers: Optional[list[str]] = None
    identifiers: Optional[list[str]] = None
    gamma: Optional[float] = None
    rho: Optional[float] = None
    runs: Optional[StrictInt] = None
    max_rounds: Optional[StrictInt] = None
    max_seconds: Optional[float] = None
    start: Optional[str] = None
    diagonals: Optional[str] = None
    split_2k: Optional[bool] = None
    seed: Optional[StrictInt] = Field(default=None, ge=0, le=MAX_SEED)
    bound: bool = False


def command_line(req: MicroaggregateRequest, input_name: str, output_name: str) -> tuple[str, str]:
    """The CLI line and the Python call that reproduce a microaggregation."""
    args = ["incrowd", "microaggregate", input_name, "-o", output_name, "--k", str(req.k), "--method", req.method]
    if req.quasi_identifiers:
        args += ["--qi", ",".join(req.quasi_identifiers)]
    if req.identifiers:
        args += ["--id", ",".join(req.identifiers)]
    params = {name: getattr(req, name) for name in _PARAMS[:-1] if getattr(req, name) is not None}
    for name, value in params.items():
        args += [f"--{name.replace('_', '-')}", str(value)]
    if req.split_2k is not None:
        args.append("--split-2k" if req.split_2k else "--no-split-2k")
        params["split_2k"] = req.split_2k
    if req.seed is not None:
        args += ["--seed", str(req.seed)]
    if req.bound:
        args.append("--bound")
    py_args = [f"k={req.k}", f"method={req.method!r}"]
    if req.quasi_identifiers:
        py_args.append(f"quasi_identifiers={req.quasi_identifiers!r}")
    if req.identifiers:
        py_args.append(f"identifiers={req.identifiers!r}")
    if req.seed is not None:
        py_args.append(f"random_state={req.seed}")
    if req.bound:
        py_args.append("bound=True")
    py_args += [f"{name}={value!r}" for name, value in params.items()]
    python = (f"import incrowd\nresult = incrowd.microaggregate(incrowd.read_table({input_name!r}), "
              f"{', '.join(py_args)})\nincrowd.write_table(result.table, {output_name!r})")
    return shlex.join(args), python


@router.post("/api/microaggregate")
@heavy
def run_microaggregate(req: MicroaggregateRequest, request: Request) -> dict[str, Any]:
    """Microaggregate a data set of this session; the result is verified k-anonymous and
    offered for download (this session only)."""
    session = session_of(request)
    return microaggregate_in(session, dataset_of(session, req.dataset), req)


def microaggregate_in(session: Session, ds: Dataset, req: MicroaggregateRequest) -> dict[str, Any]:
    """Run ``req`` on ``ds`` and keep the result in ``session``: what the endpoint answers."""
    params = {name: getattr(req, name) for name in _PARAMS if getattr(req, name) is not None}
    result = microaggregate(ds.frame, req.k, req.method, quasi_identifiers=req.quasi_identifiers,
                            identifiers=req.identifiers, random_state=req.seed, bound=req.bound, **params)
    # a job cancelled during a kernel that cannot stop midway ends here, keeping nothing
    check_cancelled()
    # the upload's own format, as the Publish page gives it: a labelled .sav comes back a .sav
    # with its value labels, missing codes and measures (the aggregated columns' labels dropped)
    suffix, media_type = release_format(ds.display_name)
    download = f"{stem_of(ds.display_name)}_{req.method}_k{req.k}{suffix}"
    path = session.new_file(suffix)
    qis = tuple(result.quasi_identifiers)  # verified again on the file offered for download
    try:
        written = write_release(result.table, path, Promise(qis, ReleaseCheck((KAnonymity(result.k),)), finite=qis),
                                sep="," if format_of(path) is FORMATS["csv"] else None)
    except VerificationError as exc:  # the download's name, never the server's path
        raise VerificationError(str(exc).replace(str(path), download)) from None
    res = Result(path.stem, path, download, media_type, before=ds.frame, after=result.table)
    session.results[res.id] = res
    command, python = command_line(req, ds.display_name, download)
    report = offer(res, ds.frame, result.table, stem_of(download), quasi_identifiers=result.quasi_identifiers,
                   identifiers=result.identifiers, k=result.k,
                   release_summary={**result.summary(), "verification": written})
    return {**result.summary(), "verification": written, **report, "dataset": ds.id, "result": res.id,
            "download": f"/api/results/{res.id}", "download_name": download,
            "scatter": f"/api/results/{res.id}/scatter",
            "command": command, "python": python}


@router.get("/api/results/{result_id}/scatter")
def scatter(result_id: str, x: str, y: str, request: Request, points: int = 2000) -> dict[str, Any]:
    """Two quasi-identifiers before and after microaggregation, for the same rows (a seeded
    sample of at most ``points`` rows)."""
    session = session_of(request)
    if session is None or result_id not in session.results or session.results[result_id].before is None:
        raise DataError(f"no microaggregation result {result_id!r} in this session")
    res = session.results[result_id]
    if not 1 <= points <= _MAX_POINTS:
        raise ParameterError(f"points must be an integer in [1, {_MAX_POINTS}]; got {points}")
    for axis, name in (("x", x), ("y", y)):
        if name not in res.after.columns or not np.issubdtype(res.after[name].dtype, np.number):
            raise DataError(f"{axis}: {name!r} is not a numeric column of the result")
    n = res.after.shape[0]
    rows = np.sort(np.random.default_rng(0).choice(n, size=min(points, n), replace=False))

    def pairs(frame) -> list[list[float]]:
        return frame[[x, y]].iloc[rows].astype(float).to_numpy().round(6).tolist()

    return {"x": x, "y": y, "rows": int(n), "shown": int(rows.size),
            "before": pairs(res.before), "after": pairs(res.after)}
