"""Risk and publish of 10,000,000 rows on Dask (``local:4``, 2 GiB per worker), against both in
one process at 1,000,000 rows, in one script.

Run from the repository root: ``.venv/bin/python bench/dask_ten_million.py [--rows N]
[--publish-rows N] [--in-process N] [--publish-timeout S]`` (defaults 10,000,000 rows for both
Dask phases, 1,000,000 in process, no timeout). Writes ``bench/results/dask_ten_million.json``
and the section ``dask-ten-million`` of ``docs/scale-out.md``.

Data: one Parquet dataset of 500,000-row files, generated as ``bench/publish_dask.py`` does it
(Adult's rows drawn with replacement, the rows with an unknown categorical value left out as ARX's
Adult leaves them out, ``age`` and ``hours-per-week`` jittered, a weight ``w``, ``income`` the
sensitive column). File i depends only on i, so a run on fewer rows reads the dataset's first
files: the 1,000,000-row in-process runs read the first two files of the 10,000,000-row dataset.

Phases, each in a fresh process (warmed up as the two benchmarks warm up, in every worker too):
``risk`` as ``bench/risk_dask.py`` measures it (ARX's eight quasi-identifiers as keys, weight
``w``); ``publish`` as ``bench/publish_dask.py`` does it (k = 5, l = 2 in income, 1 %
suppression, seven categorical QIs with ARX's hierarchies, age and hours-per-week microaggregated).
Per phase: seconds, throughput per core (rows / seconds / cores: one core in process, the
machine's usable cores on Dask, as they are shared by the four workers), the peak RSS of the
process and of each worker (``ru_maxrss``, read in each worker at the end) and the workers the
nanny restarted (a worker over its limit is restarted; its new process would show only its own
peak).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _common.machine import machine_line, now_utc  # noqa: E402
from _common.output import md_table, update_section  # noqa: E402
from publish_dask import CATEGORICAL  # noqa: E402
from risk_dask import BLOCK, MEMORY, WORKERS, child, generate  # noqa: E402

SCRIPTS = {"risk": str(ROOT / "bench" / "risk_dask.py"), "publish": str(ROOT / "bench" / "publish_dask.py")}


def _subset(data: Path, rows: int, into: Path) -> Path:
    """A folder of the dataset's first files holding ``rows`` rows (links, not copies)."""
    into.mkdir()
    for i in range(-(-rows // BLOCK)):
        name = f"part-{i:05d}.parquet"
        os.symlink(data / name, into / name)
    return into


def _option(args: list[str], name: str, default):
    if name not in args:
        return default
    at = args.index(name)
    value = args[at + 1]
    del args[at:at + 2]
    return type(default)(value) if default is not None else float(value)


def main() -> None:
    args = sys.argv[1:]
    rows = _option(args, "--rows", 10_000_000)
    publish_rows = [int(n) for n in str(_option(args, "--publish-rows", str(rows))).split(",")]
    in_process = _option(args, "--in-process", 1_000_000)
    timeout = _option(args, "--publish-timeout", None)
    largest = max(rows, *publish_rows, in_process)
    for n in (rows, *publish_rows, in_process):
        if n % BLOCK:
            raise SystemExit(f"row counts are whole files of {BLOCK:,} rows")
    cores = min(WORKERS, len(os.sched_getaffinity(0)))
    work = Path(tempfile.mkdtemp(prefix="incrowd-ten-million-"))
    runs = []
    try:
        data = work / "data"
        t = time.perf_counter()
        generate(largest, data, known=CATEGORICAL)
        print(f"generated in {time.perf_counter() - t:.0f} s", flush=True)
        plan = [("risk", "in-process", in_process), ("publish", "in-process", in_process),
                ("risk", "dask", rows), *(("publish", "dask", n) for n in publish_rows)]
        for phase, kind, n in plan:
            folder = data if n == largest else _subset(data, n, work / f"{phase}-{kind}-{n}")
            limit = timeout if (phase, kind) == ("publish", "dask") else None
            try:
                result = child(kind, folder, SCRIPTS[phase], timeout=limit)
            except SystemExit as failed:  # the run's own error (a worker killed over its limit, ...)
                result = {"failed": str(failed).strip().splitlines()[-1]}
            runs.append({"phase": phase, "run": kind, "rows": n, "cores": 1 if kind == "in-process" else cores,
                         **result})
            print(phase, kind, n, {k: v for k, v in result.items() if k != "summary"}, flush=True)
            if folder != data:
                shutil.rmtree(folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = {"written": now_utc(), "machine": machine_line(), "load_average_after": os.getloadavg(),
           "workers": WORKERS, "memory_limit": MEMORY, "runs": runs}
    path = ROOT / "bench" / "results" / "dask_ten_million.json"
    path.write_text(json.dumps(out, indent=1, default=str) + "\n", encoding="utf-8")
    update_section(ROOT / "docs" / "scale-out.md", "dask-ten-million", _table(out), "Scale-out on Dask")
    print(_table(out))


def _table(out: dict) -> str:
    base = {r["phase"]: r for r in out["runs"] if r["run"] == "in-process"}
    lines = []
    for r in out["runs"]:
        name = "in process" if r["run"] == "in-process" else f"Dask local:{out['workers']}, {out['memory_limit']} per worker"
        if "timed_out" in r or "failed" in r:
            why = f"over {r['timed_out']:.0f}" if "timed_out" in r else f"failed: {r['failed']}"
            if "last_said" in r:
                why += f" (then in: {r['last_said']})"
            lines.append([r["phase"], f"{r['rows']:,}", name, why, "", "", ""])
            continue
        per_core = r["rows"] / r["seconds"] / r["cores"]
        ratio = per_core / (base[r["phase"]]["rows"] / base[r["phase"]]["seconds"])
        peaks = " / ".join(f"{p:.2f}" for p in r.get("worker_peaks_gib", [r["peak_gib"]]))
        if "worker_peaks_gib" in r:
            peaks += f" (client {r['peak_gib']:.2f}; {r['restarted']} restarted)"
        lines.append([r["phase"], f"{r['rows']:,}", name, f"{r['seconds']:.1f}", f"{per_core:,.0f}", f"{ratio:.2f}",
                      peaks])
    return "\n".join([
        f"Written by `bench/dask_ten_million.py` on {out['written']}. Machine: {out['machine']}. Load average "
        f"after the run: {' / '.join(f'{x:.1f}' for x in out['load_average_after'])} (1 / 5 / 15 minutes); the "
        "machine is shared with other work and its load is part of every figure.",
        "",
        md_table(["phase", "rows", "run", "seconds", "rows/s per core", "per core / in process",
                  "peak memory GiB (workers)"], lines, "lrlrrrl"),
    ])


if __name__ == "__main__":
    main()
