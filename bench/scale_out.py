"""MONA_rho on Dask against one process, and a worked plan for a billion rows.

Run from the repository root: ``.venv/bin/python bench/scale_out.py`` (defaults: 10,000,000 x 13
standard Gaussian rows, k = 10, rho = 0.5, a LocalCluster of 2 single-threaded worker processes).
Writes ``docs/scale-out.md`` and ``bench/results/scale_out.json``. Takes about half an hour on a
2-core machine; ``--rows 1000000`` for a quick look.

The data are generated block by block from (seed, block index), on the workers for the Dask run
and concatenated in one process for the in-process run, so both see the same rows and no block
passes through the client. Peak memory is each process's peak resident set (``ru_maxrss``): the
in-process run is a fresh Python process; the workers are fresh processes of a new LocalCluster.
The Dask labels are compared with the in-process labels (SHA-256 of the label array).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DOCS, REPO, child_json, hand_back, machine_line, md_table, now_utc, write_markdown  # noqa: E402

RESULTS = REPO / "bench" / "results" / "scale_out.json"


def gaussian_block(seed: int, index: int, rows: int, cols: int) -> np.ndarray:
    return np.random.default_rng([seed, index]).standard_normal((rows, cols))


def block_sizes(n: int, block_rows: int) -> list[int]:
    count = -(-n // block_rows)
    return [len(b) for b in np.array_split(np.arange(n), count)]


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def in_process(args) -> dict:
    from incrowd import MONA

    t0 = time.perf_counter()
    X = np.concatenate([gaussian_block(args.seed, i, r, args.cols)
                        for i, r in enumerate(block_sizes(args.rows, args.block_rows))])
    t1 = time.perf_counter()
    est = MONA(args.k, rho=args.rho).fit(X)
    t2 = time.perf_counter()
    return {"generate_s": t1 - t0, "fit_s": t2 - t1, "information_loss": est.information_loss_,
            "groups": est.n_groups_, "labels_sha256": hashlib.sha256(est.labels_.tobytes()).hexdigest(),
            "peak_rss_gib": peak_rss_gib(), "input_gib": X.nbytes / 1024**3}


def on_dask(args) -> dict:
    import distributed

    from incrowd.distributed import mona

    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        sizes = block_sizes(args.rows, args.block_rows)
        t0 = time.perf_counter()
        blocks = [client.submit(gaussian_block, args.seed, i, r, args.cols) for i, r in enumerate(sizes)]
        distributed.wait(blocks)
        t1 = time.perf_counter()
        rounds = []
        result = mona(blocks, args.k, client=client, rho=args.rho, part_rows=args.part_rows,
                      on_round=lambda i: rounds.append(time.perf_counter()))
        t2 = time.perf_counter()
        peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2)
    return {"generate_s": t1 - t0, "fit_s": t2 - t1, "phases_s": result.seconds,
            "information_loss": result.information_loss, "groups": result.n_groups,
            "labels_sha256": hashlib.sha256(result.labels.tobytes()).hexdigest(),
            "blocks": len(sizes), "leaf_parts": result.leaf_parts, "distributed_cuts": result.distributed_cuts,
            "rounds": len(rounds), "ona_parts": result.ona_parts,
            "worker_peak_rss_gib": sorted(peaks.values()), "client_peak_rss_gib": peak_rss_gib()}


def leaf_cost(part_rows_at_scale: int, cols: int, k: int, seed: int) -> dict:
    """ONA* on one part of the size MONA_rho hands it at the planned scale (seconds per row)."""
    from incrowd.cli._bench_entry import compile_clock
    from incrowd.cli._bench_entry import RULE_VARIANCE
    from incrowd.microaggregation.mondrian.mona import mona_part_labels

    Z = np.random.default_rng(seed).standard_normal((part_rows_at_scale, cols))
    # load the kernels the timed part takes: ONA*'s fast kernel from 320 clusters on
    warm = min(part_rows_at_scale, 400 * k)
    mona_part_labels(Z[:warm].copy(), k, RULE_VARIANCE, warm, 1.0)
    with compile_clock() as clock:  # whatever the warm-up missed compiles outside the figure
        t0 = time.perf_counter()
        mona_part_labels(Z, k, RULE_VARIANCE, part_rows_at_scale, 1.0)
        seconds = time.perf_counter() - t0 - clock.seconds
    return {"part_rows": part_rows_at_scale, "seconds": seconds, "seconds_per_row": seconds / part_rows_at_scale,
            "compile_seconds_left_out": clock.seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--cols", type=int, default=13)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--rho", type=float, default=0.5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--block-rows", type=int, default=500_000)
    parser.add_argument("--part-rows", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mode", choices=["all", "in-process"], default="all")
    args = parser.parse_args()
    if args.mode == "in-process":
        hand_back(in_process(args))
        return
    local = child_json([sys.executable, __file__, "--mode", "in-process", "--rows", args.rows, "--cols", args.cols,
                        "--k", args.k, "--rho", args.rho, "--block-rows", args.block_rows, "--seed", args.seed])
    print("in process:", local, flush=True)
    dask_run = on_dask(args)
    print("dask:", dask_run, flush=True)
    billion = 1_000_000_000
    leaf = leaf_cost(int(billion ** args.rho) * 3 // 4, args.cols, args.k, args.seed)
    print("leaf at 1e9:", leaf, flush=True)
    record = {"args": vars(args), "in_process": local, "dask": dask_run, "leaf_at_1e9": leaf,
              "machine": machine_line(), "when": now_utc()}
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(record, indent=2) + "\n")
    write_markdown(DOCS / "scale-out.md", render(record))


def render(r: dict) -> str:
    a, local, dk, leaf = r["args"], r["in_process"], r["dask"], r["leaf_at_1e9"]
    n, d = a["rows"], a["cols"]
    same = local["labels_sha256"] == dk["labels_sha256"]
    ph = dk["phases_s"]
    rows = [
        ["in process (`incrowd.MONA`)", f"{local['fit_s']:.1f}", "1 process", f"{local['peak_rss_gib']:.2f}",
         f"{100 * local['information_loss']:.4f}", local["groups"]],
        [f"Dask LocalCluster, {a['workers']} workers x 1 thread", f"{dk['fit_s']:.1f}",
         f"{dk['blocks']} blocks of {a['block_rows']:,} rows",
         " / ".join(f"{g:.2f}" for g in dk["worker_peak_rss_gib"]) + f" (client {dk['client_peak_rss_gib']:.2f})",
         f"{100 * dk['information_loss']:.4f}", dk["groups"]],
    ]
    table = md_table(["run", "seconds", "data layout", "peak memory GiB (per process)", "IL %", "groups"], rows,
                     align="lrlrrr")
    phases = md_table(["phase", "seconds", "per row (µs)"],
                      [[p, f"{ph[p]:.1f}", f"{1e6 * ph[p] / n:.2f}"] for p in ("standardize", "cuts", "leaves", "labels")],
                      align="lrr")
    # the plan: costs per row measured here, scaled to 1e9 rows
    N = 1_000_000_000
    workers_plan = 100
    part_rows_plan = a["part_rows"]
    cut_rounds_plan = int(np.ceil(np.log2(N / part_rows_plan)))
    rounds_here = max(dk["rounds"], 1)
    std_per_row = ph["standardize"] / n
    cut_per_row_round = ph["cuts"] / n / rounds_here
    label_per_row = ph["labels"] / n
    leaf_per_row_1e9 = leaf["seconds_per_row"]
    serial_plan = {
        "standardize": std_per_row * N,
        "cuts": cut_per_row_round * N * cut_rounds_plan,
        "leaves": leaf_per_row_1e9 * N,
        "labels": label_per_row * N,
    }
    plan_rows = [[p, f"{serial_plan[p] / 3600:.1f}", f"{serial_plan[p] / workers_plan / 60:.1f}"] for p in serial_plan]
    total_serial = sum(serial_plan.values())
    plan_rows.append(["total", f"{total_serial / 3600:.1f}", f"{total_serial / workers_plan / 60:.1f}"])
    plan = md_table(["phase", "core-hours at the measured per-row cost", f"minutes on {workers_plan} workers"],
                    plan_rows, align="lrr")
    block_gib = a["block_rows"] * d * 8 / 1024**3
    return f"""# Scale-out on Dask

Written by `bench/scale_out.py` on {r['when']}. Machine: {r['machine']}.

## MONA_{a['rho']} on {n:,} x {d} Gaussian rows, k = {a['k']}

Data: standard Gaussian blocks of {a['block_rows']:,} rows, block i drawn by
`numpy.random.default_rng([{a['seed']}, i])`, generated on the workers for the Dask run and
concatenated in one process for the in-process run ({local['input_gib']:.2f} GiB of float64).
Dask: `incrowd.distributed.mona` on a LocalCluster of {a['workers']} worker processes with one
thread each, parts of at most {a['part_rows']:,} rows finished on one worker. Both runs use the
same 2 cores. Seconds exclude generating the data.

{table}

**Same groups:** {"yes, the label arrays are identical (SHA-256 " + local['labels_sha256'][:16] + "...)" if same else "NO: the label arrays differ"}.
The information losses agree to rounding: the in-process value sums SSE row by row, the
distributed one from per-group sums.

Dask phases ({dk['rounds']} rounds of distributed cuts ({dk['distributed_cuts']} cuts), then
{dk['leaf_parts']} leaf parts finished on single workers, {dk['ona_parts']} ONA* parts in all):

{phases}

Peak memory: the in-process run holds the data, its standardized copy and the Mondrian
kernel's two working buffers (about 4x the input); a Dask worker holds its share of the blocks
and their standardized copies, the part ids, one round's sorted projections and, in the leaf
phase, the leaves it finishes.

## A worked plan for 1,000,000,000 rows

Same shape ({d} columns, k = {a['k']}, rho = {a['rho']}); 100 single-threaded workers with
16 GiB each (an assumption: a mid-size cluster; the per-row costs are this machine's cores). Input: a Parquet dataset of 2,000 files of 500,000 rows
({block_gib:.2f} GiB per block in float64; {N * d * 8 / 1024**3:.0f} GiB in all).

* **Part sizes.** MONA hands ONA* the parts of at most n^rho = {int(N ** a['rho']):,} rows (here
  {int(n ** a['rho']):,}); with parts of at most {part_rows_plan:,} rows finished on one worker, the
  distributed phase makes ceil(log2(1e9 / {part_rows_plan:,})) = {cut_rounds_plan} rounds of cuts and
  hands out about {2 ** cut_rounds_plan:,} leaf parts of about {N // 2 ** cut_rounds_plan:,} rows.
* **Memory per worker.** Its 20 blocks and their standardized copies: 20 x {block_gib:.2f} GiB x 2
  = {20 * block_gib * 2:.1f} GiB, plus one round's sorted projections (20 x {a['block_rows'] * 8 / 1024**2:.0f} MiB)
  and, in the leaf phase, one leaf part being finished ({part_rows_plan * d * 8 * 4 / 1024**3:.2f} GiB with the
  kernel's buffers): well inside 16 GiB.
* **Shuffles.** No shuffle during the cuts: each round moves only per-part sums (one chain of
  tasks over the blocks), samples of the projections and counts; rows tied with a median move
  their keys to the client. One all-to-all shuffle moves each leaf's rows to its worker
  ({N * d * 8 / 1024**3:.0f} GiB in all), and one moves the labels back to the blocks ({N * 8 / 1024**3:.0f} GiB).
* **Expected time**, from the per-row costs measured above (standardize, cuts per round,
  labels) and ONA* measured on one part of {leaf['part_rows']:,} rows, the size the leaves reach
  at 1e9 ({1e6 * leaf['seconds_per_row']:.1f} µs per row, after a warm-up of the same kernels; any compile
  left out):

{plan}

The chains that fold sums in row order are sequential over the blocks: per round, 2,000 short
tasks one after another (about 1 ms of scheduling each, about 2 s per chain, a few chains per
round), which the minutes above do not include; at this scale a tree of partial folds with the
order kept would take their place. The client also holds the per-group sums (1e8 groups x {d}
columns x 8 bytes x 2 = {1e8 * d * 16 / 1024**3:.0f} GiB); at this scale they would be summed on the
workers, per leaf, since every group lies inside one leaf.

## The seam for other engines

Every task is a function in `incrowd.distributed._blocks` or `incrowd.distributed._kernels`:
a pure function of numpy arrays (row blocks, part ids, per-part sums) returning numpy arrays.
The driver (`incrowd.distributed._mona.mona`) only orders them. Another engine can run the same
functions: Spark with `mapInPandas` over the blocks in row order (the folds need the blocks in
order, passing the running sums along), Ray with one task per block. The guarantees (the
single-machine groups; recomputation after a lost worker) hold as long as the engine keeps the
block order and re-runs a lost task with the same inputs.
"""


if __name__ == "__main__":
    main()
