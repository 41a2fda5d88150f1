"""``incrowd serve``: the web UI on this machine (optional extra ``incrowd[web]``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ..exceptions import ParameterError
from ..io import describe_formats
from ._console import echo_err, user_errors
from ._generalization import DEFAULT_MAX_MEMORY_TEXT, DEFAULT_MAX_NODES_TEXT, MaxMemoryOption, MaxNodesOption, lattice_limits


def serve_command(
    host: Annotated[str, typer.Option("--host", help="Address to bind; the default keeps the UI "
                                      "on this machine.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.")] = 8000,
    data_dir: Annotated[
        Optional[Path],
        typer.Option("--data-dir", help=f"Folder whose data files ({describe_formats()}) are offered as samples.",
                     show_default=False),
    ] = None,
    max_upload_mb: Annotated[float, typer.Option("--max-upload-mb", help="Largest upload accepted.")] = 200,
    idle_minutes: Annotated[float, typer.Option("--idle-minutes", help="A session idle this long is "
                                                "deleted with its files.")] = 60,
    max_cells: Annotated[int, typer.Option("--max-cells", help="Largest table one upload may decode to, in "
                                           "cells (rows x columns); checked while decoding.")] = 50_000_000,
    max_columns: Annotated[int, typer.Option("--max-columns", help="Most columns an upload may have; "
                                             "checked on the header line.")] = 10_000,
    max_decoded_mb: Annotated[float, typer.Option("--max-decoded-mb", help="Largest decoded (decompressed) "
                                                  "size of one upload.")] = 2048,
    memory_budget_mb: Annotated[float, typer.Option("--memory-budget-mb", help="Memory the data sets of all "
                                                    "sessions may hold together; beyond it uploads get 507.")] = 12288,
    max_nodes: MaxNodesOption = DEFAULT_MAX_NODES_TEXT,
    max_memory: MaxMemoryOption = DEFAULT_MAX_MEMORY_TEXT,
    max_sessions: Annotated[int, typer.Option("--max-sessions", help="Sessions the server holds at once; "
                                              "beyond them a new one gets 429.")] = 500,
    max_sessions_per_client: Annotated[int, typer.Option(
        "--max-sessions-per-client", help="Sessions one client address holds at once; beyond them a new "
        "one gets 429. Behind a reverse proxy every client has the proxy's address: raise it there.")] = 20,
    workers: Annotated[
        Optional[int],
        typer.Option("--workers", help="Heavy steps (parse, microaggregate, lattice build, negotiate, "
                     "generalize) run at once; default: the number of CPU cores.", show_default=False),
    ] = None,
    queue: Annotated[
        Optional[int],
        typer.Option("--queue", help="Heavy steps that may wait for a worker; beyond them a request "
                     "gets 503 with Retry-After. Default: twice --workers.", show_default=False),
    ] = None,
    allowed_host: Annotated[
        Optional[list[str]],
        typer.Option("--allowed-host", metavar="NAME[:PORT]", help="Another Host name to answer (NAME or NAME:PORT; repeatable), "
                     "e.g. the name a reverse proxy forwards; the bound address and the loopback "
                     "names are always answered; '*' answers any name (only behind a proxy that checks it).",
                     show_default=False),
    ] = None,
) -> None:
    """Serve the web UI until interrupted. Its pages: Microaggregation (/: microaggregate numeric
    columns), Generalization negotiation (/negotiate: lattice, k and suppression), and Publish
    (/publish: upload CSV, Parquet, SPSS, Stata or SAS; roles and hierarchies; the Risk step, the
    re-identification risk of the file as it is; the release in the uploaded format, verified;
    its risk and utility report). The URL to open is printed on stderr when the server is ready,
    whatever stdout is."""
    with user_errors():
        try:
            import uvicorn  # noqa: F401  (a missing extra is reported here, in one line)

            from ..web import bound_hosts, create_app, serve, split_host
        except ImportError as exc:
            raise ParameterError(
                f"the web UI needs the 'web' extra ({exc.name} is missing): pip install 'incrowd[web]'"
            ) from None
        _check_numbers(port, max_upload_mb, idle_minutes, workers, queue, (
            ("--max-cells", max_cells), ("--max-columns", max_columns), ("--max-decoded-mb", max_decoded_mb),
            ("--memory-budget-mb", memory_budget_mb), ("--max-sessions", max_sessions),
            ("--max-sessions-per-client", max_sessions_per_client)))
        node_limit, memory_limit = lattice_limits(max_nodes, max_memory)
        for entry in allowed_host or ():
            try:
                split_host(entry)
            except ValueError as exc:
                raise ParameterError(f"--allowed-host {entry!r}: {exc}") from None
        app = create_app(max_upload_mb=max_upload_mb, idle_seconds=60 * idle_minutes, data_dir=data_dir,
                         max_nodes=node_limit, max_memory=memory_limit, workers=workers, queue=queue,
                         allowed_hosts=bound_hosts(host, port, allowed_host or ()),
                         max_cells=max_cells, max_columns=max_columns, max_decoded_mb=max_decoded_mb,
                         memory_budget_mb=memory_budget_mb, max_sessions=max_sessions,
                         max_sessions_per_client=max_sessions_per_client)
    if host not in ("127.0.0.1", "localhost", "::1"):
        echo_err("warning", f"binding to {host}: other machines can reach the UI and its uploads; they must "
                 "use a name given with --allowed-host")
    serve(app, host=host, port=port)


def _check_numbers(port: int, max_upload_mb: float, idle_minutes: float, workers: int | None, queue: int | None,
                   positive: tuple[tuple[str, float], ...]) -> None:
    """Refuse a number ``serve`` cannot run with, naming its option."""
    if not 0 < port < 65536:
        raise ParameterError(f"--port must be in [1, 65535]; got {port}")
    if max_upload_mb <= 0 or idle_minutes <= 0:
        raise ParameterError("--max-upload-mb and --idle-minutes must be positive")
    for flag, value in positive:
        if value <= 0:
            raise ParameterError(f"{flag} must be positive; got {value:g}")
    if workers is not None and workers < 1:
        raise ParameterError(f"--workers must be at least 1; got {workers}")
    if queue is not None and queue < 0:
        raise ParameterError(f"--queue must be 0 or more; got {queue}")
