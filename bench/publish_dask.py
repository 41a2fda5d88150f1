"""Publish Adult resampled with jitter on Dask (``local:4``, 2 GiB per worker) and in one process.

Run from the repository root: ``.venv/bin/python bench/publish_dask.py [rows ...] [--in-process N]``
(default ``1000000``; the in-process run at ``--in-process`` rows, default 1,000,000). Writes the
section ``publish-dask`` of ``docs/scale-out.md``.

Data: as ``bench/risk_dask.py`` generates it (Adult's rows drawn with replacement, ``age`` and
``hours-per-week`` jittered), the rows with an unknown (``?``) categorical value dropped from the
draw as ARX's Adult drops them. The spec: generalize-then-microaggregate, k = 5, l = 2 in
``income``, at most 1 % of the rows suppressed; categorical QIs the seven of ARX's hierarchies
(sex, race, marital-status, education, native-country, workclass, occupation), numeric QIs
``age`` and ``hours-per-week`` (MDAV inside each class).

Each run is a fresh process, warmed up by the same release of 3,000 rows and MDAV on 20,000 rows
(every process: the kernels of large classes): the in-process one reads
the whole dataset, publishes it and writes one Parquet file (verified as written); the Dask one
starts a LocalCluster of 4 single-threaded workers with ``memory_limit="2GiB"`` and publishes the
folder into a Parquet dataset (``publish(folder, spec, scheduler=client, output=...)``). Seconds
exclude generating the data and starting the cluster; they include reading and writing.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _common import data_dir  # noqa: E402
from _common.machine import machine_line, now_utc  # noqa: E402
from _common.output import md_table, update_section  # noqa: E402
from _common.processes import hand_back  # noqa: E402
from risk_dask import MEMORY, WORKERS, _peak_gib, in_process_and_on_dask  # noqa: E402

CATEGORICAL = ["sex", "race", "marital-status", "education", "native-country", "workclass", "occupation"]


def spec() -> dict:
    columns: dict = {a: {"role": "categorical", "hierarchy": str(data_dir() / "adult_arx" /
                                                                  f"adult_hierarchy_{a}.csv")}
                     for a in CATEGORICAL}
    columns.update({"age": "numeric", "hours-per-week": "numeric", "income": "sensitive"})
    return {"privacy": {"k": 5, "l": 2, "max_suppression": "1%"}, "columns": columns}


def _frame(folder: str) -> pd.DataFrame:
    from incrowd.io import read_table

    return pd.concat([read_table(p) for p in sorted(Path(folder).glob("*.parquet"))], ignore_index=True)


def warm_kernels() -> None:
    """Compile (or load from numba's cache) MDAV's kernels for large classes, serial and threaded:
    the 3,000-row warm-up's classes are too small to reach them, and a class of a million-row
    release is not."""
    import numba
    import numpy as np

    import incrowd

    X = np.random.default_rng(0).integers(17, 90, (20_000, 2)).astype(float)
    before = numba.get_num_threads()
    try:
        for threads in sorted({1, before}):
            numba.set_num_threads(threads)
            incrowd.MDAV(k=5).fit(X)
    finally:
        numba.set_num_threads(before)


def one_in_process(folder: str) -> dict:
    import incrowd

    first = pd.read_parquet(next(Path(folder).glob("*.parquet"))).head(3000)
    incrowd.publish(first, spec())  # warm-up: imports, kernels
    warm_kernels()
    t = time.perf_counter()
    result = incrowd.publish(_frame(folder), spec())
    out = Path(tempfile.mkdtemp(prefix="incrowd-publish-")) / "release.parquet"
    result.write(out)
    seconds = time.perf_counter() - t
    shutil.rmtree(out.parent)
    return {"seconds": seconds, "peak_gib": _peak_gib(), "summary": _figures(result.summary())}


def _figures(summary: dict) -> dict:
    return {k: summary[k] for k in ("rows_out", "suppressed", "classes", "min_class_size", "levels")}


def one_dask(folder: str) -> dict:
    import warnings

    import incrowd
    from incrowd.distributed import connect

    warnings.simplefilter("ignore")
    out = Path(tempfile.mkdtemp(prefix="incrowd-publish-dask-"))
    with connect(f"local:{WORKERS}", memory_limit=MEMORY) as client:
        pids = client.run(os.getpid)
        sample = [pd.read_parquet(next(Path(folder).glob("*.parquet"))).head(3000)] * 2
        incrowd.publish(sample, spec(), scheduler=client, output=out / "warm")  # imports on every worker
        client.run(warm_kernels)
        phases: list[tuple[str, float]] = []
        t = time.perf_counter()

        def progress(line: str) -> None:
            phase = line.split(":")[0]
            if not phases or phases[-1][0] != phase:
                phases.append((phase, time.perf_counter()))
                # on stderr as it starts: a long run shows where it is (the parent passes it on)
                print(f"{phases[-1][1] - t:8.1f} s  {phase}", file=sys.stderr, flush=True)

        result = incrowd.publish(folder, spec(), scheduler=client, output=out / "release", progress=progress)
        seconds = time.perf_counter() - t
        peaks = sorted(client.run(_peak_gib).values())
        restarted = len(set(pids.values()) - set(client.run(os.getpid).values()))
        bounds = [p[1] for p in phases] + [t + seconds]
        steps = [(name, b - a) for (name, a), b in zip(phases, bounds[1:])]
    shutil.rmtree(out)
    return {"seconds": seconds, "peak_gib": _peak_gib(), "worker_peaks_gib": peaks, "phases": steps,
            "restarted": restarted, "summary": _figures(result.summary())}


def _check(rows: int, a: dict, b: dict) -> str:
    return (f"At {rows:,} rows the node, the rows published, the suppressed rows and the classes are "
            f"{'equal' if a == b else 'NOT equal'} in process and on Dask.")


def main() -> None:
    if sys.argv[1:2] == ["--one"]:
        hand_back((one_in_process if sys.argv[2] == "in-process" else one_dask)(sys.argv[3]))
        return
    rows_out, phase_rows, checks = in_process_and_on_dask(
        __file__, "incrowd-publish-dask-", lambda s: [f"{s['rows_out']:,}", f"{s['classes']:,}"], _check,
        known=CATEGORICAL)
    body = "\n".join([
        f"Written by `bench/publish_dask.py` on {now_utc()}. Machine: {machine_line()}. The machine is shared "
        "with other work: its load is part of every figure.",
        "",
        "Adult resampled with jitter; generalize-then-microaggregate, k = 5, l = 2 (income), 1 % suppression, "
        "seven categorical QIs with ARX's hierarchies, age and hours-per-week microaggregated (MDAV). "
        "Throughput per core: rows / seconds / cores.",
        "",
        md_table(["rows", "run", "seconds", "rows/s per core", "peak memory GiB (per process)", "rows published",
                  "classes"], rows_out, "llrrrrr"),
        "",
        *checks,
        "",
        "Dask phases (as the progress names them):",
        "",
        md_table(["rows", "phase", "seconds"], phase_rows, "llr"),
    ])
    update_section(ROOT / "docs" / "scale-out.md", "publish-dask", body, "Scale-out on Dask")
    print(body)


if __name__ == "__main__":
    main()
