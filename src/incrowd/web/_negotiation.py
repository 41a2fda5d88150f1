"""Negotiation endpoints, named as the CLI commands: upload hierarchies, ``lattice build``,
``negotiate`` (with a per-height view of where the answer lies), ``generalize``."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import secrets
import shlex
import threading
import time
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np
from fastapi import APIRouter, File, Form, Request, Response, UploadFile
from pydantic import BaseModel, ConfigDict, StrictInt

from ..exceptions import BuildCancelled, DataError, ParameterError, VerificationError, name_list
from ..generalization import (
    Hierarchy,
    Lattice,
    Negotiation,
    attribute_from_filename,
    generalization_promise,
    generalize,
    hierarchy_file_name,
    hierarchy_suffix,
    negotiate,
    read_hierarchy,
    verified_as_written,
)
from ..generalization import partial_fraction as _fraction
from ..io import suffix, write_release
from ._context import MB, base_name, dataset_of, error, lattice_of, session_for, session_of, stem_of, store_of
from ._pool import heavy, pool_of
from ._report import offer
from ._sessions import BuiltLattice, Result, Session, UploadedHierarchy
from ._upload_limits import UploadRefused

router = APIRouter()
_HIERARCHY_LIMIT = 50 * MB
_LATTICES_KEPT = 4
_WATCH_SECONDS = 0.2


class LatticeBuildRequest(BaseModel):
    """The fields of ``incrowd lattice build``; hierarchies come from this session's uploads,
    or from ``intervals`` (attribute -> nested widths) for numeric columns."""

    model_config = ConfigDict(extra="forbid")

    dataset: str
    quasi_identifiers: list[str]
    intervals: Optional[dict[str, list[float]]] = None
    sensitive: Optional[str] = None
    partial: Optional[Union[float, str]] = None


class NegotiateRequest(BaseModel):
    """The fields of ``incrowd negotiate``: ``max_levels`` is v_max (attributes left out may
    go to their top); ``max_suppression`` a count, a fraction or a percentage such as "1%"."""

    model_config = ConfigDict(extra="forbid")

    lattice: str
    k: Optional[StrictInt] = None  # strict: a JSON string "5" is not an integer
    l: Optional[StrictInt] = None
    t: Optional[float] = None  # t-closeness, with k, l or both, as the CLI's --t
    # more privacy models, as the spec's [privacy] keys write them ({"entropy_l": 2}), as --model
    models: Optional[dict[str, Any]] = None
    max_levels: Optional[dict[str, StrictInt]] = None
    max_suppression: Union[int, float, str] = 0
    runtime_histogram: bool = False
    metric: str = "loss"  # what an answer minimizes (incrowd.generalization.METRICS)


class GeneralizeRequest(BaseModel):
    """The fields of ``incrowd generalize``, applied to the data set a lattice was built on."""

    model_config = ConfigDict(extra="forbid")

    lattice: str
    levels: dict[str, StrictInt]
    k: Optional[StrictInt] = None
    l: Optional[StrictInt] = None
    identifiers: Optional[list[str]] = None


@router.post("/api/hierarchies")
async def upload_hierarchies(request: Request, response: Response,
                             files: list[UploadFile] = File(...),
                             attribute: Optional[str] = Form(None)) -> dict[str, Any]:
    """Upload ARX-style hierarchy files (CSV, one row per value, one column per level). The
    attribute is ``attribute`` (one file) or read off the name (``age`` or ARX's
    ``<dataset>_hierarchy_age``, a CSV file)."""
    if attribute is not None and len(files) != 1:
        raise ParameterError("attribute names one hierarchy; upload one file with it, or name the files "
                             f"'{hierarchy_file_name('<attribute>')}'")
    session = session_for(request, response)
    parsed: list[UploadedHierarchy] = []
    for upload in files:
        display = base_name(upload.filename, hierarchy_file_name("hierarchy"))
        name = attribute or attribute_from_filename(display)
        if not name:
            raise DataError(f"cannot tell the attribute of hierarchy file {display!r}; name it "
                            f"'{hierarchy_file_name('<attribute>')}'")
        path = await stored_hierarchy(session, upload, display)
        try:
            # what it holds afterwards is counted in the memory budget with the data sets
            hierarchy, held = await parsed_hierarchy(request, path, display, name)
        finally:
            path.unlink(missing_ok=True)
        parsed.append(UploadedHierarchy(name, display, dataclasses.replace(hierarchy, source=f"file {display!r}"),
                                        held))
    for h in parsed:  # all or nothing: one bad file keeps none of the batch
        session.hierarchies[h.attribute] = h
    return {"hierarchies": [_describe_hierarchy(h) for h in session.hierarchies.values()]}


async def stored_hierarchy(session: Session, upload: UploadFile, display: str) -> Path:
    """An uploaded hierarchy file written to a new file of the session, refused above the size limit."""
    content = await upload.read(_HIERARCHY_LIMIT + 1)
    if len(content) > _HIERARCHY_LIMIT:
        raise DataError(f"hierarchy file {display!r} is larger than {_HIERARCHY_LIMIT // MB} MB")
    path = session.new_file(hierarchy_suffix())
    path.write_bytes(content)
    return path


async def parsed_hierarchy(request: Request, path: Path, display: str, attribute: str) -> tuple[Hierarchy, int]:
    """The hierarchy of ``attribute`` in an uploaded file and the bytes it holds: bounded while
    scanned, its parsing peak reserved in the memory budget; an error names the upload, not the
    session's file."""
    try:
        return await pool_of(request).run(
            request.app.state.upload_limits.read_hierarchy, path, display, store_of(request),
            functools.partial(read_hierarchy, attribute=attribute))
    except UploadRefused:
        raise
    except DataError as exc:
        raise DataError(str(exc).replace(str(path), display)) from None


def _describe_hierarchy(h: UploadedHierarchy) -> dict[str, Any]:
    return {"attribute": h.attribute, "file": h.display_name, "levels": h.hierarchy.depth,
            "max_level": h.hierarchy.max_level, "values": int(h.hierarchy.labels[0].size)}


@router.get("/api/hierarchies")
def list_hierarchies(request: Request) -> dict[str, Any]:
    """The hierarchies uploaded in this session."""
    session = session_of(request)
    return {"hierarchies": [] if session is None else [_describe_hierarchy(h) for h in session.hierarchies.values()]}


def _build_command(req: LatticeBuildRequest, data_name: str, sources: dict[str, str]) -> str:
    args = ["incrowd", "lattice", "build", data_name, "-o", f"{stem_of(data_name)}.lattice",
            "--qi", ",".join(req.quasi_identifiers)]
    if any(src != "intervals" for src in sources.values()):
        args += ["--hierarchies", "hierarchies/"]
    for attr, widths in (req.intervals or {}).items():
        args += ["--intervals", f"{attr}={','.join(f'{w:g}' for w in widths)}"]
    if req.sensitive:
        args += ["--sensitive", req.sensitive]
    if req.partial is not None:
        args += ["--partial", str(req.partial)]
    return shlex.join(args)


@router.post("/api/lattice/build")
async def start_lattice_build(req: LatticeBuildRequest, request: Request) -> Any:
    """Build the generalization lattice of a data set's quasi-identifiers (every node's
    suppression histograms); kept in this session for negotiation. The server's size limits
    refuse it before any work; it stops between nodes on ``/api/lattice/cancel`` or when the
    client goes away (answer 409, nothing kept)."""
    session = session_of(request)
    ds = dataset_of(session, req.dataset)
    intervals = dict(req.intervals or {})
    missing = [q for q in req.quasi_identifiers if q not in intervals and q not in session.hierarchies]
    if missing:
        raise ParameterError(f"no hierarchy for quasi-identifier(s) {missing}: upload a hierarchy "
                             "file or give interval widths")
    given = {q: session.hierarchies[q].hierarchy for q in req.quasi_identifiers if q not in intervals}
    fraction = 1.0 if req.partial is None else (
        _fraction(req.partial) if isinstance(req.partial, str) else _fraction(f"{req.partial!r}"))
    max_nodes, max_memory = request.app.state.lattice_limits
    cancel = threading.Event()
    build_id = secrets.token_hex(8)
    session.builds[build_id] = cancel
    work = functools.partial(Lattice.build, ds.frame, req.quasi_identifiers, hierarchies=given,
                             intervals=intervals, sensitive=req.sensitive, fraction=fraction,
                             source=ds.display_name, max_nodes=max_nodes, max_memory=max_memory,
                             cancel=cancel)
    # a worker thread builds; this task watches the client meanwhile, so a closed tab or a
    # dropped connection stops the build instead of leaving it to grow
    try:
        future = pool_of(request).submit(work)
        while not future.done():
            await asyncio.wait({future}, timeout=_WATCH_SECONDS)
            if not future.done() and await request.is_disconnected():
                cancel.set()
        lattice = future.result()
    except BuildCancelled:
        return error(409, "the lattice build was cancelled; nothing was kept")
    except asyncio.CancelledError:
        cancel.set()
        raise
    finally:
        session.builds.pop(build_id, None)
    sources = {q: "intervals" if q in intervals else session.hierarchies[q].display_name
               for q in req.quasi_identifiers}
    built = BuiltLattice(_new_id(session.lattices), ds.id, lattice, sources, intervals)
    session.lattices[built.id] = built
    return {**lattice.describe(), "lattice": built.id, "dataset": ds.id, "hierarchy_files": sources,
            "command": _build_command(req, ds.display_name, sources)}


@router.post("/api/lattice/cancel")
async def cancel_builds(request: Request) -> dict[str, Any]:
    """Stop this session's running lattice builds (each stops at its next node)."""
    # async: it runs on the event loop, as the build endpoint that adds and removes the flags
    session = session_of(request)
    return {"cancelled": 0 if session is None else session.cancel_builds()}


def _new_id(taken: dict) -> str:
    # a session keeps its few newest lattices: each holds histograms of every node in memory
    while len(taken) >= _LATTICES_KEPT:
        del taken[next(iter(taken))]
    return secrets.token_hex(8)


def level_view(lattice: Lattice, answer: Negotiation) -> list[dict[str, Any]]:
    """Per height, top first: nodes, nodes within v_max, built ones, those meeting the request,
    the least suppression within v_max, and which answers lie there."""
    heights = lattice.heights
    vmax = lattice.level_vector(answer.max_levels)
    within = np.all(lattice.levels <= vmax, axis=1)
    k, models = answer.request()
    supp = lattice.suppressed_all(k=k, models=models)
    built = within & (supp >= 0)
    meet = built & (supp <= answer.max_suppression) & (supp < lattice.n_rows)
    marks: dict[int, list[str]] = {}
    if answer.exact is not None:
        marks.setdefault(answer.exact.height, []).append("exact")
    for name, node in answer.relaxations.items():
        if node is not None:
            label = answer.criterion if name == "k" and not answer.thresholds else name
            marks.setdefault(node.height, []).append(label)
    rows = []
    for h in range(int(heights.max()), -1, -1):
        at = heights == h
        least = supp[at & built]
        rows.append({"height": h, "nodes": int(at.sum()), "within": int((at & within).sum()),
                     "built": int((at & built).sum()), "meet": int((at & meet).sum()),
                     "least_suppressed": int(least.min()) if least.size else None,
                     "answers": marks.get(h, [])})
    return rows


def page_context() -> dict[str, Any]:
    """The privacy models the Negotiation page offers beside k and l (those a lattice can judge:
    none that needs the sampling weights or a population table), each with the spec's meaning."""
    from ..privacy import MODELS
    weighted = ("k_map", "max_population_uniqueness", "delta_presence", "differential_privacy")
    return {"models": [key for key in MODELS if key not in ("k", "l", "t", *weighted)],
            "meaning": model_meanings()}


def model_meanings() -> dict[str, str]:
    """The title of each ``[privacy]`` key on the Negotiation and Publish pages: its meaning in
    the spec's key table, else (a model a caller registered) its first docstring line."""
    from ..privacy import MODELS
    from ..publishing import SPEC_KEYS

    return {**{key: (model.__doc__ or key).strip().splitlines()[0] for key, model in MODELS.items()},
            **{e.name: e.meaning.replace("`", "") for e in SPEC_KEYS if e.section == "privacy"}}


def _threshold_models(req: NegotiateRequest | GeneralizeRequest) -> list:
    """The request's fields ``l`` and ``t`` (those it has and sets) as privacy models, read as the spec reads them."""
    from ..privacy import models_from_spec

    return models_from_spec({key: getattr(req, key) for key in ("l", "t") if getattr(req, key, None) is not None})


def request_models(entries: dict[str, Any] | None, k: int | None) -> list:
    """The request's ``models`` (spec keys to values) as privacy models."""
    if not entries:
        return []
    from ..privacy import other_models

    return other_models(entries, k)


def _negotiate_command(req: NegotiateRequest, lattice_file: str) -> str:
    args = ["incrowd", "negotiate", lattice_file]
    for name in ("k", "l", "t"):
        if getattr(req, name) is not None:
            args += [f"--{name}", str(getattr(req, name))]
    from ..publishing import toml_value

    for key, value in (req.models or {}).items():
        args += ["--model", f"{key}={toml_value(value, f'models: {key}')}"]
    if req.max_levels:
        args += ["--max-levels", ",".join(f"{a}={v}" for a, v in req.max_levels.items())]
    args += ["--max-suppression", str(req.max_suppression)]
    if req.runtime_histogram:
        args.append("--runtime-histogram")
    args += ["--metric", req.metric]
    return shlex.join(args)


@router.post("/api/negotiate")
@heavy
def run_negotiate(req: NegotiateRequest, request: Request) -> dict[str, Any]:
    """Answer a request on a lattice of this session: the exact node, or the three relaxations
    (max_suppression, height, k or l), each with its suppression and height."""
    t0 = time.perf_counter()
    built = lattice_of(session_of(request), req.lattice)
    answer = negotiate(built.lattice, k=req.k, max_levels=req.max_levels or {},
                       max_suppression=req.max_suppression, runtime_histogram=req.runtime_histogram,
                       metric=req.metric, models=_threshold_models(req) + request_models(req.models, req.k))
    view = level_view(built.lattice, answer)
    data_name = built.lattice.source or f"data{suffix('csv')}"
    return {**answer.to_dict(), "lattice": built.id, "view": view,
            "server_seconds": time.perf_counter() - t0,
            "command": _negotiate_command(req, f"{stem_of(data_name)}.lattice")}


def _generalize_command(req: GeneralizeRequest, built: BuiltLattice, data_name: str, output: str) -> str:
    lattice = built.lattice
    args = ["incrowd", "generalize", data_name, "-o", output,
            "--levels", ",".join(f"{a}={v}" for a, v in req.levels.items())]
    for name in ("k", "l"):
        if getattr(req, name) is not None:
            args += [f"--{name}", str(getattr(req, name))]
    if lattice.sensitive:
        args += ["--sensitive", lattice.sensitive]
    if any(src != "intervals" for src in built.hierarchy_sources.values()):
        args += ["--hierarchies", "hierarchies/"]
    for attr, widths in built.intervals.items():
        args += ["--intervals", f"{attr}={','.join(f'{w:g}' for w in widths)}"]
    if req.identifiers:
        args += ["--id", ",".join(req.identifiers)]
    return shlex.join(args)


@router.post("/api/generalize")
@heavy
def run_generalize(req: GeneralizeRequest, request: Request) -> dict[str, Any]:
    """Apply a node (levels) to the data set the lattice was built on: generalize, suppress the
    classes below k (or l), verify, and offer the table for download (this session only)."""
    session = session_of(request)
    built = lattice_of(session, req.lattice)
    ds = dataset_of(session, built.dataset)
    lattice = built.lattice
    unknown = [a for a in req.levels if a not in lattice.attributes]
    if unknown:
        raise ParameterError(f"unknown attribute(s) {name_list(unknown)}; the lattice has attributes "
                             f"{name_list(lattice.attributes)}")
    result = generalize(ds.frame, req.levels, k=req.k, sensitive=lattice.sensitive,
                        hierarchies=dict(lattice.hierarchies), quasi_identifiers=list(lattice.attributes),
                        identifiers=req.identifiers, models=_threshold_models(req))
    if result.table.shape[0] == 0:
        raise DataError("every row would be suppressed; choose higher levels or a smaller k/l")
    levels_tag = "".join(str(v) for v in result.levels.values())
    privacy = f"k{req.k}" if req.k is not None else f"l{req.l}"
    download = f"{stem_of(ds.display_name)}_{levels_tag}_{privacy}{suffix('csv')}"
    path = session.new_file(suffix("csv"))
    try:  # verified again on the file offered for download
        record = write_release(result.table, path, generalization_promise(result), sep=",")
    except VerificationError as exc:  # the download's name, never the server's path
        raise VerificationError(str(exc).replace(str(path), download)) from None
    verified_as_written(result, record)
    res = Result(path.stem, path, download, "text/csv")
    session.results[res.id] = res
    report = offer(res, ds.frame, result.table, stem_of(download), quasi_identifiers=list(result.levels),
                   sensitive=[lattice.sensitive] if lattice.sensitive else None, identifiers=req.identifiers,
                   kept_rows=result.kept_rows, k=result.k, hierarchies=dict(lattice.hierarchies),
                   release_summary=result.summary())
    return {**result.summary(), **report, "lattice": built.id, "result": res.id,
            "download": f"/api/results/{res.id}", "download_name": download,
            "command": _generalize_command(req, built, ds.display_name, download)}
