"""Publish endpoints: one release over numeric and categorical quasi-identifiers together, as
``incrowd publish`` makes it. The request carries the release specification as the same dict
the Python API takes; a hierarchy in it, and a PRAM step's transition matrix, is named by the
file uploaded to this session, so the TOML shown beside the report is what the CLI reads from a
folder holding those files."""

from __future__ import annotations

import dataclasses
import functools
import secrets
import shlex
from pathlib import Path
from typing import Any, Mapping

from fastapi import APIRouter, File, Request, Response, UploadFile
from pydantic import BaseModel, ConfigDict

from .._runtime import check_cancelled
from ..exceptions import DataError, IncrowdError, ParameterError, VerificationError
from ..generalization import (
    DEFAULT_MAX_MEMORY,
    DEFAULT_MAX_NODES,
    attribute_from_filename,
    hierarchy_file_name,
)
from ..io import FORMATS, format_of, read_table
from ..perturbation import METHODS as PERTURB_METHODS
from ..perturbation import read_matrix
from ..privacy import verified_lines
from ..publishing import spec_to_toml
from ._context import base_name, dataset_of, session_for, session_of, stem_of
from ._job import Job, forget_finished
from ._negotiation import model_meanings, parsed_hierarchy, stored_hierarchy
from ._pool import heavy, pool_of
from ._report import offer
from ._sessions import Dataset, Result, Session

router = APIRouter()
SPEC_FILE = "release.toml"


@dataclasses.dataclass(frozen=True)
class ReleaseHierarchy:
    """A hierarchy file uploaded for the Publish page: kept in the session's folder, because the
    release reads its hierarchies from files, as the CLI does."""

    file: str
    path: Path
    attribute: str
    levels: int
    max_level: int
    values: int

    def describe(self) -> dict[str, Any]:
        return {"file": self.file, "attribute": self.attribute, "levels": self.levels,
                "max_level": self.max_level, "values": self.values}


@dataclasses.dataclass(frozen=True)
class ReleaseMatrix:
    """A PRAM transition matrix uploaded for a step of the Publish page (``matrix`` of a ``pram``
    step names it by its file name): kept in the session's folder, read again by the release."""

    file: str
    path: Path
    categories: list[str]

    def describe(self) -> dict[str, Any]:
        return {"file": self.file, "categories": list(self.categories)}


#: a transition matrix has a row and a column per category: a megabyte is thousands of them
MATRIX_LIMIT = 1024 * 1024


class PublishRequest(BaseModel):
    """A data set of this session and the release specification as a dict (``[privacy]``,
    ``[columns]``, ``[missing]``, ...), hierarchies named by their uploaded file names."""

    model_config = ConfigDict(extra="forbid")

    dataset: str
    spec: dict[str, Any]


def page_context() -> dict[str, Any]:
    """The choices the Publish page offers, named as the spec names them; each control's title is
    the key's meaning from the spec's key table (as the reference page gives it)."""
    from .._runtime import METHOD_NAMES
    from ..privacy import MODELS
    from ..publishing import MISSING_NUMERIC, PUBLISH_STRATEGIES, RISK_TARGET_KEYS, ROLES, spec_key

    return {"methods": list(METHOD_NAMES), "strategies": list(PUBLISH_STRATEGIES), "roles": list(ROLES),
            "missing_numeric": list(MISSING_NUMERIC),
            "suppression": list(spec_key("privacy", "suppression").choices),
            "missing_matches": list(spec_key("privacy", "missing_matches").choices),
            "metrics": list(spec_key("privacy", "metric").choices),
            "risk_targets": list(RISK_TARGET_KEYS),
            # the models beyond k, l and t, each one box: a number or an inline table as in the spec
            # every model but k, l and t, which have their own boxes
            "models": [key for key in MODELS if key not in ("k", "l", "t")],
            "household_ids": list(spec_key("privacy", "household_id").choices),
            "household_level_meaning": spec_key("column", "household_level").meaning.replace("`", ""),
            # the step editor is built from each method's declared parameters: a new method file
            # shows up here with no edit of the page
            "perturb_methods": [method.describe() for method in PERTURB_METHODS.values()],
            "perturb_meaning": {key: spec_key(section, key).meaning.replace("`", "") for section, key in
                                (("perturb", "strata"), ("privacy", "random_state"), ("benchmarks", "estimates"))},
            "meaning": model_meanings()}



# -- the specification as TOML: written by incrowd.publishing.spec_to_toml ----------------------------


def _without_nulls(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The spec as TOML can hold it: a key set to None (JSON null) is a key not given."""
    return {section: ({k: v for k, v in table.items() if v is not None} if isinstance(table, Mapping) else table)
            for section, table in spec.items() if table is not None}


def command_line(input_name: str, output_name: str, report_name: str) -> str:
    return shlex.join(["incrowd", "publish", input_name, "--spec", SPEC_FILE, "-o", output_name,
                       "--report", report_name])


# -- hierarchies ------------------------------------------------------------------------------

def _uploaded(session: Session) -> dict[str, ReleaseHierarchy]:
    return session.release_hierarchies


@router.post("/api/publish/hierarchies")
async def upload_hierarchies(request: Request, response: Response,
                             files: list[UploadFile] = File(...)) -> dict[str, Any]:
    """Upload ARX-style hierarchy files (CSV, one row per value, one column per level) for the
    categorical columns of a release; a column's spec names one by its file name. A file of the
    same name replaces the earlier one; one bad file keeps none of the batch."""
    session = session_for(request, response)
    batch: list[ReleaseHierarchy] = []
    try:
        for upload in files:
            display = base_name(upload.filename, hierarchy_file_name("hierarchy"))
            path = await stored_hierarchy(session, upload, display)
            attribute = attribute_from_filename(display) or display
            # recorded before it is read, so that a file that fails is removed with the batch
            batch.append(ReleaseHierarchy(display, path, attribute, 0, 0, 0))
            # only the file is kept, so nothing stays counted in the memory budget afterwards
            hierarchy, _ = await parsed_hierarchy(request, path, display, attribute)
            batch[-1] = dataclasses.replace(batch[-1], levels=hierarchy.depth, max_level=hierarchy.max_level,
                                            values=int(hierarchy.labels[0].size))
    except BaseException:
        for h in batch:
            h.path.unlink(missing_ok=True)
        raise
    kept = _uploaded(session)
    for h in batch:
        old = kept.pop(h.file, None)
        if old is not None and old.path != h.path:
            old.path.unlink(missing_ok=True)
        kept[h.file] = h
    return {"hierarchies": [h.describe() for h in kept.values()]}


@router.get("/api/publish/hierarchies")
def list_hierarchies(request: Request) -> dict[str, Any]:
    """The hierarchy files uploaded for releases in this session."""
    session = session_of(request)
    return {"hierarchies": [] if session is None else [h.describe() for h in _uploaded(session).values()]}


# -- PRAM transition matrices ------------------------------------------------------------------

@router.post("/api/publish/matrices")
async def upload_matrix(request: Request, response: Response, file: UploadFile = File(...)) -> dict[str, Any]:
    """Upload a PRAM transition matrix (CSV: the categories in the first row and the first
    column, each row summing to 1) for a ``pram`` step, whose ``matrix`` names it by its file
    name. A file of the same name replaces the earlier one; a bad file is refused in one line
    naming the problem and is not kept. Whether its categories are the column's is checked when
    the release runs (the step names the column)."""
    session = session_for(request, response)
    suffix = FORMATS["csv"].suffixes[0]  # a matrix file is CSV
    display = base_name(file.filename, f"matrix{suffix}")
    content = await file.read(MATRIX_LIMIT + 1)
    if len(content) > MATRIX_LIMIT:
        raise DataError(f"matrix file {display!r} is larger than {MATRIX_LIMIT // (1024 * 1024)} MB")
    path = session.new_file(suffix)
    path.write_bytes(content)
    try:
        categories, _ = read_matrix(str(path), "pram")
    except IncrowdError as exc:
        path.unlink(missing_ok=True)
        raise _renamed(exc, {str(path): display}) from None
    kept = session.release_matrices
    old = kept.pop(display, None)
    if old is not None:
        old.path.unlink(missing_ok=True)
    kept[display] = ReleaseMatrix(display, path, categories)
    return {"matrix": kept[display].describe(), "matrices": [m.describe() for m in kept.values()]}


@router.get("/api/publish/matrices")
def list_matrices(request: Request) -> dict[str, Any]:
    """The PRAM transition matrices uploaded for releases in this session."""
    session = session_of(request)
    return {"matrices": [] if session is None else [m.describe() for m in session.release_matrices.values()]}


def _with_server_paths(session: Session, spec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The spec with each hierarchy file name, and each step's matrix file name, replaced by
    where its upload is kept, and the map back from those paths to the names (for messages)."""
    spec, names = _with_matrix_paths(session, spec)
    columns = spec.get("columns")
    if not isinstance(columns, Mapping):
        return spec, names
    kept = _uploaded(session)
    resolved: dict[str, Any] = {}
    for column, entry in columns.items():
        if isinstance(entry, Mapping) and isinstance(entry.get("hierarchy"), str):
            entry = {**entry, "hierarchy": _kept_path(kept, entry["hierarchy"], f"column {column!r}: hierarchy",
                                                      names)}
        resolved[column] = entry
    return {**spec, "columns": resolved}, names


def _with_matrix_paths(session: Session, spec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The spec with each ``pram`` step's matrix file name replaced by where its upload is kept."""
    steps = spec.get("perturb")
    if not isinstance(steps, list):
        return spec, {}
    kept = session.release_matrices
    names: dict[str, str] = {}
    resolved = []
    for i, step in enumerate(steps, 1):
        if isinstance(step, Mapping) and isinstance(step.get("matrix"), str):
            step = {**step, "matrix": _kept_path(kept, step["matrix"], f"[[perturb]] step {i} ({step.get('method')}): "
                                                 "matrix", names)}
        resolved.append(step)
    return {**spec, "perturb": resolved}, names


def _kept_path(kept: Mapping[str, Any], name: str, what: str, names: dict[str, str]) -> str:
    """Where the upload ``name`` is kept (recorded in ``names``, for messages); ``what`` names the
    spec's entry in the error when it was not uploaded."""
    if name not in kept:
        uploaded = list(kept) or "none yet"
        raise ParameterError(f"{what} file {name!r} was not uploaded in this session; upload it first "
                             f"(uploaded: {uploaded})")
    path = str(kept[name].path)
    names[path] = name
    return path


# -- the release ------------------------------------------------------------------------------

def release_format(display_name: str) -> tuple[str, str]:
    """(suffix, media type) of the release of the file the user calls ``display_name``: the same
    format, labels and all, where incrowd writes it (a .sas7bdat is read, not written: its release
    is a SAS transport file), else CSV; a compressed CSV's release is a plain one."""
    fmt = format_of(display_name)
    if fmt is not None and fmt.name == "sas7bdat":
        fmt = FORMATS["xport"]
    if fmt is None or not fmt.written or not fmt.mime_types:
        fmt = FORMATS["csv"]
    # an SPSS file keeps its compression: a .zsav gives a .zsav
    suffix = next((s for s in fmt.suffixes if display_name.lower().endswith(s)), fmt.suffixes[0])
    if fmt.name == "parquet":
        suffix = fmt.suffixes[0]
    return suffix, fmt.mime_types[0]


def _renamed(exc: IncrowdError, names: dict[str, str]) -> IncrowdError:
    """``exc`` with every server path in its message replaced by the name the user knows."""
    text = str(exc)
    for path in sorted(names, key=len, reverse=True):
        text = text.replace(path, names[path])
    if text == str(exc):
        return exc
    for cls in (VerificationError, ParameterError, DataError):
        if isinstance(exc, cls):
            return cls(text)
    return DataError(text)


def verification_lines(report: Mapping[str, Any]) -> list[str]:
    """What was verified on the published table, one line per check (as the HTML report)."""
    return verified_lines(report.get("verification") or {})


def publish_in(session: Session, ds: Dataset, req: PublishRequest, *, max_nodes: int | None = DEFAULT_MAX_NODES,
               max_memory: int | None = DEFAULT_MAX_MEMORY) -> dict[str, Any]:
    """Run the release ``req`` asks for on ``ds`` and keep its table and report in ``session``:
    what the endpoint answers. The data is read again from the uploaded file as the CLI reads
    it (only the numeric columns parsed), so the CLI line shown gives the same release.
    ``max_nodes``, ``max_memory``: the server's lattice limits (``incrowd serve``)."""
    from ..publishing import check_spec_nodes, load_spec, publish, summary_lines

    spec = _without_nulls(req.spec)
    names = {str(ds.path): ds.display_name}
    try:
        resolved, file_names = _with_server_paths(session, spec)
        names.update(file_names)
        release_spec = load_spec(resolved, base_dir=session.folder)
        toml = spec_to_toml(spec)
        numeric = release_spec.names("numeric")
        check_spec_nodes(release_spec, max_nodes)  # before the data are read again
        data = read_table(ds.path, parse=numeric or None)
        check_cancelled()
        result = publish(data, release_spec, max_nodes=max_nodes, max_memory=max_memory)
        check_cancelled()
    except IncrowdError as exc:
        names[str(session.folder)] = "<server>"
        raise _renamed(exc, names) from None
    stem = stem_of(ds.display_name)
    suffix, media_type = release_format(ds.display_name)
    download, report_name = f"{stem}_release{suffix}", f"{stem}_report.html"
    table_path = session.new_file(suffix)
    # the input's delimiter, as the CLI keeps it
    sep = data.attrs.get("csv_sep") if format_of(table_path) is FORMATS["csv"] else None
    try:
        result.write(table_path, sep=sep)  # verified again on the file offered for download
    except IncrowdError as exc:
        raise _renamed(exc, {str(table_path): download}) from None
    report = result.summary()
    table_res = Result(table_path.stem, table_path, download, media_type)
    session.results[table_res.id] = table_res
    # the download is the full risk and utility report, with this summary in it (as --report)
    offered = offer(table_res, data, result.table, stem, **result.report_options())
    lines = summary_lines({**report, "input": ds.display_name})
    return {**report, **offered, "dataset": ds.id, "result": table_res.id,
            "lines": [list(line) for line in lines], "verified": verification_lines(report),
            "download": f"/api/results/{table_res.id}", "download_name": download,
            "command": command_line(ds.display_name, download, report_name),
            "spec_file": SPEC_FILE, "spec": spec, "spec_toml": toml,
            "hierarchy_files": sorted({name for path, name in file_names.items() if _is_kept(session, path, False)}),
            "matrix_files": sorted({name for path, name in file_names.items() if _is_kept(session, path, True)})}


def _is_kept(session: Session, path: str, matrix: bool) -> bool:
    """Whether ``path`` is where an upload of this session is kept: a matrix's, or a hierarchy's."""
    kept = session.release_matrices if matrix else _uploaded(session)
    return any(str(upload.path) == path for upload in kept.values())


@router.get("/api/publish/example/{dataset_id}")
@heavy
def example(dataset_id: str, request: Request) -> dict[str, Any]:
    """A starting specification for a data set of this session: each column's role guessed from
    the file's metadata and values, and the hierarchy files uploaded in this session proposed
    by name (what ``incrowd publish --example-spec`` prints); ``notes``: why each role, with
    the user-missing codes; ``hierarchies``: the file proposed for each column."""
    from ..generalization import propose_hierarchy_files
    from ..publishing import column_notes, example_spec, proposed_limit

    session = session_of(request)
    ds = dataset_of(session, dataset_id)
    spec = example_spec(ds.frame)
    # the uploads are kept under random names: they are proposed by the names the user gave
    # them, as --example-spec proposes the files beside the data (normalized names)
    uploaded = list(_uploaded(session)) if session is not None else []
    proposed = propose_hierarchy_files([str(c) for c in ds.frame.columns], uploaded)
    for column, file in proposed.items():
        entry = spec["columns"].get(column)
        role = entry if isinstance(entry, str) else (entry or {}).get("role")
        if role == "categorical":  # its other keys (household_level) kept
            spec["columns"][column] = {**(entry if isinstance(entry, dict) else {"role": role}), "hierarchy": file.name}
    if proposed and session is not None:
        # the limit --example-spec proposes with these hierarchies, read where they are kept
        spec["privacy"]["max_suppression"] = proposed_limit(ds.frame, _with_server_paths(session, spec)[0])
    return {"dataset": ds.id, "spec": spec, "notes": column_notes(ds.frame),
            "hierarchies": {column: file.name for column, file in proposed.items()}}


@router.post("/api/publish")
@heavy
def run_publish(req: PublishRequest, request: Request) -> dict[str, Any]:
    """Publish a data set of this session as the spec says; the release is verified (k over all
    quasi-identifiers, l and t where asked) and offered for download with its HTML report."""
    session = session_of(request)
    return publish_in(session, dataset_of(session, req.dataset), req, **_limits(request))


def _limits(request: Request) -> dict[str, int | None]:
    """The server's lattice limits, which bind a release's lattice as they bind a build's."""
    max_nodes, max_memory = request.app.state.lattice_limits
    return {"max_nodes": max_nodes, "max_memory": max_memory}


@router.post("/api/publish/jobs", status_code=202)
async def start_job(req: PublishRequest, request: Request) -> dict[str, Any]:
    """Queue a release (the fields of ``POST /api/publish``) and answer ``{"job": id}`` at once;
    poll ``GET /api/jobs/{id}``, cancel with ``DELETE /api/jobs/{id}``."""
    session = session_of(request)
    ds = dataset_of(session, req.dataset)
    forget_finished(session)
    job = Job(secrets.token_hex(8))
    pool_of(request).submit(job.run, session, ds, req, work=functools.partial(publish_in, **_limits(request)),
                            what="release")
    session.jobs[job.id] = job
    return {"job": job.id}
