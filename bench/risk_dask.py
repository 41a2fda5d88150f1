"""The risk of Adult resampled with jitter, on Dask (``local:4``, 2 GiB per worker) and in one process.

Run from the repository root: ``.venv/bin/python bench/risk_dask.py [rows ...] [--in-process N]``
(default ``1000000``; the in-process run at ``--in-process`` rows, default 1,000,000). Writes the
section ``risk-dask`` of ``docs/scale-out.md``.

Data: Adult's rows drawn with replacement (seed 0), ``age`` and ``hours-per-week`` moved by a
uniform jitter of +-2 years and hours (rounded, kept in range), a weight ``w`` = fnlwgt / 1,000
(at least 1) jittered by +-5 %, ``income`` the sensitive column. The keys are ARX's eight
quasi-identifiers of Adult (age, sex, race, marital-status, education, native-country,
workclass, occupation); the weight makes fk, Fk and the Benedetti-Franconi risk. Written as a
Parquet dataset of 500,000-row files, generated block by block (the generator never holds the
whole dataset). SUDA2 is left out (``suda=False``): on eight keys of a resampled file its search
is exponential and skipped by its work budget either way.

Each run is a fresh process (its peak RSS from ``ru_maxrss``), warmed up by the same measure on
2,000 rows (imports and compiled kernels loaded, in every worker too): the in-process one reads
the whole dataset and calls :func:`incrowd.risk`; the Dask one starts a LocalCluster of 4 single-threaded
workers with ``memory_limit="2GiB"`` and calls ``incrowd.risk(folder, ..., scheduler=client)``;
each worker's peak RSS is read in the worker at the end. Seconds exclude generating the data and,
for Dask, starting the cluster; they include reading the partitions.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _common import data_dir  # noqa: E402
from _common.machine import machine_line, now_utc  # noqa: E402
from _common.output import md_table, update_section  # noqa: E402
from _common.processes import hand_back  # noqa: E402

KEYS = ["age", "sex", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
BLOCK = 500_000
WORKERS, MEMORY = 4, "2GiB"


def generate(rows: int, folder: Path, known: list[str] | None = None) -> None:
    """``known``: columns whose unknown value (Adult's ``?``) drops the row first, as ARX's Adult does."""
    adult = pd.read_csv(data_dir() / "adult.csv.gz")
    if known:
        adult = adult[~adult[known].isin(["?"]).any(axis=1)].reset_index(drop=True)
    folder.mkdir(parents=True)
    for i, start in enumerate(range(0, rows, BLOCK)):
        rng = np.random.default_rng([0, i])
        take = min(BLOCK, rows - start)
        part = adult.iloc[rng.integers(0, len(adult), take)].reset_index(drop=True)
        for column, low, high in (("age", 17, 90), ("hours-per-week", 1, 99)):
            moved = part[column].to_numpy() + rng.integers(-2, 3, take)
            part[column] = np.clip(moved, low, high)
        part["w"] = np.maximum(1.0, part["fnlwgt"].to_numpy() / 1000 * rng.uniform(0.95, 1.05, take))
        part[[*KEYS, "hours-per-week", "capital-gain", "income", "w"]].to_parquet(
            folder / f"part-{i:05d}.parquet", index=False)


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def one_in_process(folder: str) -> dict:
    import incrowd
    from incrowd.io import read_table

    files = sorted(Path(folder).glob("*.parquet"))
    incrowd.risk(read_table(files[0]).head(2000), KEYS, weight="w", suda=False)  # warm-up: imports, kernels
    t = time.perf_counter()
    frame = pd.concat([read_table(p) for p in files], ignore_index=True)
    result = incrowd.risk(frame, KEYS, weight="w", suda=False)
    seconds = time.perf_counter() - t
    return {"seconds": seconds, "peak_gib": _peak_gib(), "summary": result.summary()}


def one_dask(folder: str) -> dict:
    import warnings

    import incrowd
    from incrowd.distributed import connect

    warnings.simplefilter("ignore")
    with connect(f"local:{WORKERS}", memory_limit=MEMORY) as client:
        pids = client.run(os.getpid)  # the workers are up
        sample = [pd.read_parquet(next(Path(folder).glob("*.parquet"))).head(2000)] * WORKERS * 2
        incrowd.risk(sample, KEYS, weight="w", suda=False, scheduler=client)  # warm-up: imports on every worker
        phases: list[tuple[str, float]] = []
        t = time.perf_counter()

        def progress(line: str) -> None:
            phase = line.split(":")[0]
            if not phases or phases[-1][0] != phase:
                phases.append((phase, time.perf_counter()))

        result = incrowd.risk(folder, KEYS, weight="w", suda=False, scheduler=client, progress=progress)
        seconds = time.perf_counter() - t
        peaks = sorted(client.run(_peak_gib).values())
        # a worker restarted for going over its limit would show only its new process's peak
        restarted = len(set(pids.values()) - set(client.run(os.getpid).values()))
        bounds = [p[1] for p in phases] + [t + seconds]
        steps = [(name, b - a) for (name, a), b in zip(phases, bounds[1:])]
    return {"seconds": seconds, "peak_gib": _peak_gib(), "worker_peaks_gib": peaks, "phases": steps,
            "restarted": restarted, "summary": result.summary()}


def child(kind: str, folder: Path, script: str = __file__, src: Path = ROOT / "src",
          timeout: float | None = None) -> dict:
    """One run in a fresh process (``src``: the incrowd it imports). Past ``timeout`` seconds the
    run and its cluster's processes are killed and the answer is ``{"timed_out": timeout}``."""
    with tempfile.TemporaryFile("w+") as err, subprocess.Popen(
            [sys.executable, script, "--one", kind, str(folder)], stdout=subprocess.PIPE, stderr=err, text=True,
            start_new_session=True, env={**os.environ, "PYTHONPATH": str(src)}) as run:
        try:
            out, _ = run.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)  # the child leads its own session: its workers go too
            run.communicate()
            err.seek(0)
            said = [line for line in err.read().splitlines() if line.strip()]
            return {"timed_out": timeout, **({"last_said": said[-1].strip()} if said else {})}
        err.seek(0)
        if run.returncode != 0:
            raise SystemExit(err.read()[-3000:])
    return json.loads(out.strip().splitlines()[-1])


def in_process_and_on_dask(script: str, prefix: str, columns: Callable[[dict], list[str]],
                           check: Callable[[int, dict, dict], str], known: list[str] | None = None
                           ) -> tuple[list[list[str]], list[list[str]], list[str]]:
    """Run ``script``'s ``--one`` children on data of each size the command line names (and the
    in-process size, ``--in-process N``, default 1,000,000), one fresh process each: the table's
    rows (``columns(result)`` the script's own figures), the Dask phases, and per size run both
    ways ``check(rows, in_process, dask)``."""
    args = sys.argv[1:]
    in_process_rows = 1_000_000
    if "--in-process" in args:
        at = args.index("--in-process")
        in_process_rows = int(args[at + 1])
        del args[at:at + 2]
    sizes = [int(a) for a in args] or [1_000_000]
    work = Path(tempfile.mkdtemp(prefix=prefix))
    rows_out: list[list[str]] = []
    phase_rows: list[list[str]] = []
    checks: list[str] = []
    try:
        for rows in sorted(set(sizes) | {in_process_rows}):
            folder = work / f"adult-{rows}"
            generate(rows, folder, known=known)
            runs = [("in process", child("in-process", folder, script))] if rows == in_process_rows else []
            if rows in sizes:
                runs.append((f"Dask local:{WORKERS}, {MEMORY} per worker", child("dask", folder, script)))
            for name, r in runs:
                cores = 1 if name == "in process" else min(WORKERS, len(os.sched_getaffinity(0)))
                peaks = " / ".join(f"{p:.2f}" for p in r.get("worker_peaks_gib", [r["peak_gib"]]))
                client = f" (client {r['peak_gib']:.2f}; {r['restarted']} workers restarted)" \
                    if "worker_peaks_gib" in r else ""
                rows_out.append([f"{rows:,}", name, f"{r['seconds']:.1f}", f"{rows / r['seconds'] / cores:,.0f}",
                                 peaks + client, *columns(r["summary"])])
                for phase, secs in r.get("phases", []):
                    phase_rows.append([f"{rows:,}", phase, f"{secs:.1f}"])
            if len(runs) == 2:
                checks.append(check(rows, runs[0][1]["summary"], runs[1][1]["summary"]))
            shutil.rmtree(folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return rows_out, phase_rows, checks


def _check(rows: int, a: dict, b: dict) -> str:
    same = all(a[k] == b[k] for k in ("sample_uniques", "k_violations", "records_above_threshold"))
    return (f"At {rows:,} rows the counts (sample uniques, k violations, records above the threshold) are "
            f"{'equal' if same else 'NOT equal'} and the global risks differ by "
            f"{abs(a['global_risk'] - b['global_risk']) / a['global_risk']:.1e} (relative).")


def main() -> None:
    if sys.argv[1:2] == ["--one"]:
        hand_back((one_in_process if sys.argv[2] == "in-process" else one_dask)(sys.argv[3]))
        return
    rows_out, phase_rows, checks = in_process_and_on_dask(
        __file__, "incrowd-risk-dask-", lambda s: [f"{s['global_risk']:.10g}", f"{s['sample_uniques']:,}"], _check)
    body = "\n".join([
        f"Written by `bench/risk_dask.py` on {now_utc()}. Machine: {machine_line()}. The machine is shared "
        "with other work: its load is part of every figure.",
        "",
        "Adult resampled with jitter, keys ARX's eight quasi-identifiers, weight `w`, SUDA2 left out; "
        f"a Parquet dataset of {BLOCK:,}-row files. Throughput per core: rows / seconds / cores "
        "(the in-process run uses one core; the workers share the machine's usable cores).",
        "",
        md_table(["rows", "run", "seconds", "rows/s per core", "peak memory GiB (per process)", "global risk",
                  "sample uniques"], rows_out, "llrrrrr"),
        "",
        *checks,
        "",
        "Dask phases (as the progress names them):",
        "",
        md_table(["rows", "phase", "seconds"], phase_rows, "llr"),
    ])
    update_section(ROOT / "docs" / "scale-out.md", "risk-dask", body, "Scale-out on Dask")
    print(body)


if __name__ == "__main__":
    main()
