"""Each perturbation method, incrowd against sdcMicro 5.8.0, as calls and as whole processes, on
sdcMicro's ``testdata`` (4,580 rows), testdata resampled by household to 1,000,000 rows and UCI
Adult resampled to 1,000,000 rows.

Run from the repository root (sdcMicro 5.8.0 built in LIBDIR)::

    PYTHONPATH=src .venv/bin/python bench/perturbation_scale_vs_sdcmicro.py --rlib /work/rlib [--timeout 120]

Each (tool, data, method) is one fresh process (``python`` or ``Rscript``) that reads the data from
a CSV (pandas with pyarrow's reader and writer; R with data.table's ``fread`` and ``fwrite``, both
multi-threaded: pandas' own writer takes seconds on a million rows), runs the method once, writes
the result as a CSV, then runs it again, 5 times on testdata and once on a million rows. Top and
bottom coding and rounding are given a column alone on both sides (R's vector ``d$x``; a numpy array
to ``perturb_values``) and give back the column; every other method is given the table, and each
side writes what its call gives back (sdcMicro's ``rankSwap`` and ``recordSwap`` the whole data
frame, the others the changed columns). "call" is the median of those runs (numba's kernels compiled
before, in an earlier process: a cached kernel is loaded, as a user's second run loads it; the
column calls, tens of milliseconds on a million rows, run 5 times there too); "process" is the
process's wall time less those runs: start, reading, the first call, writing. The ratio is
sdcMicro's time over incrowd's (above 1: incrowd is faster). A process past ``--timeout`` seconds is
reported as such.

``--data testdata`` (or ``adult``, ``resampled``) runs only those data sets; ``--rounds N`` runs each
pair of processes N times interleaved (incrowd, sdcMicro, incrowd, ...) and reports their medians;
``--baseline-src DIR`` adds a third process to each round, incrowd from another source tree (the
code before a change), for a side-by-side before/after on the same loaded machine.

``top_code (table)``, ``bottom_code (table)`` and ``round (table)`` are the same calls on a table
on both sides (R's ``topBotCoding(d, ..., column = "income")``, or ``d$x`` replaced in a copy of the
data frame; ``perturb`` on the DataFrame), each giving back a new table, which each process
writes whole; before them, a line gives the floor of such a call in pandas: a shallow copy of the
frame and one column set (measured in this process).

Exact MDAV (``microaggregation``) beyond testdata runs only where ``--methods`` names it, at each
of ``--rows`` (e.g. ``--rows 100000 250000 1000000 --timeout 900``): each process times its one
call (incrowd's after numba's kernels are loaded on 20,000 of the rows), compares the values both
sides published and their information loss, and ``--write-docs`` writes that table with each
side's growth exponent into the perturbation guide.

Adult has no households: record swapping runs on testdata only. sdcMicro's ROMM draws one n x n
matrix (cubic in the rows): it runs on testdata only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import REPO, data_dir, machine_line, md_table, now_utc, update_section  # noqa: E402
from perturbation_million import resampled  # noqa: E402

#: per data set: three amounts, one categorical column for PRAM, two predictors for shuffling
DATASETS = {
    "testdata": {"numeric": ["income", "expend", "savings"], "category": "roof", "by": ["age", "sex"],
                 "top": 90_000_000, "bottom": 1_000_000, "base": 1000},
    "adult": {"numeric": ["fnlwgt", "capital_gain", "hours_per_week"], "category": "workclass",
              "by": ["age", "education_num"], "top": 1_000_000, "bottom": 20_000, "base": 1000},
}
SMALL_ONLY = {"microaggregation", "noise (romm)"}
HOUSEHOLDS_ONLY = {"record_swap"}


def steps(p: dict) -> dict[str, tuple[dict, str]]:
    """method -> (incrowd's step, sdcMicro's call on the data frame ``d``)."""
    num, first = p["numeric"], p["numeric"][0]
    r_num = "c(" + ", ".join(f'"{c}"' for c in num) + ")"
    return {
        "top_code": ({"columns": [first], "method": "top_code", "value": p["top"]},
                     f'out <- topBotCoding(d${first}, value = {p["top"]}, replacement = {p["top"]}, kind = "top")'),
        "bottom_code": ({"columns": [first], "method": "bottom_code", "value": p["bottom"]},
                        f'out <- topBotCoding(d${first}, value = {p["bottom"]}, replacement = {p["bottom"]}, '
                        'kind = "bottom")'),
        "round": ({"columns": [first], "method": "round", "base": p["base"]},
                  f'out <- {p["base"]} * round(d${first} / {p["base"]})'),
        "noise (additive)": ({"columns": num, "method": "noise", "amount": 50},
                             f'out <- addNoise(d[, {r_num}], noise = 50, method = "additive")$xm'),
        "noise (correlated)": ({"columns": num, "method": "noise", "amount": 10, "kind": "correlated"},
                               f'out <- addNoise(d[, {r_num}], method = "correlated2", delta = 0.1)$xm'),
        "noise (romm)": ({"columns": num, "method": "noise", "amount": 1, "kind": "romm"},
                         f'out <- addNoise(d[, {r_num}], method = "ROMM", p = 0.01)$xm'),
        "rank_swap": ({"columns": num, "method": "rank_swap", "p": 5},
                      f'out <- rankSwap(d, variables = {r_num}, P = 5, TopPercent = 0, BottomPercent = 0, '
                      'seed = 1)'),
        "shuffle": ({"columns": num[:2], "method": "shuffle", "by": p["by"]},
                    f'out <- shuffle(d, {num[0]} + {num[1]} ~ {p["by"][0]} + {p["by"][1]}, method = "ds")$shuffled'),
        "pram": ({"columns": [p["category"]], "method": "pram", "pd": 0.8},
                 f'd${p["category"]} <- factor(d${p["category"]}); '
                 f'out <- pram(d, variables = "{p["category"]}", pd = 0.8, alpha = 0.5)${p["category"]}_pram'),
        "record_swap": ({"columns": ["urbrur", "water"], "method": "record_swap", "hierarchy": ["urbrur", "water"],
                         "similarity": ["electcon"], "rate": 0.1, "risk_variables": ["sex"], "risk_threshold": 1.0,
                         "household": "ori_hid"},
                        'out <- recordSwap(d, hid = "ori_hid", hierarchy = c("urbrur", "water"), '
                        'similar = list("electcon"), swaprate = 0.1, k_anonymity = 0, risk_variables = c("sex"), '
                        'seed = 1)'),
        # the same three on a table: each side given the whole table, giving back a new table
        "top_code (table)": ({"columns": [first], "method": "top_code", "value": p["top"]},
                             f'out <- topBotCoding(d, value = {p["top"]}, replacement = {p["top"]}, kind = "top", '
                             f'column = "{first}")'),
        "bottom_code (table)": ({"columns": [first], "method": "bottom_code", "value": p["bottom"]},
                                f'out <- topBotCoding(d, value = {p["bottom"]}, replacement = {p["bottom"]}, '
                                f'kind = "bottom", column = "{first}")'),
        "round (table)": ({"columns": [first], "method": "round", "base": p["base"]},
                          f'out <- d; out${first} <- {p["base"]} * round(out${first} / {p["base"]})'),
        "microaggregation": ({"columns": num, "method": "microaggregation", "k": 3},
                             f'out <- microaggregation(d[, {r_num}], aggr = 3, method = "mdav")$mx'),
    }


R_SCRIPT = """
.libPaths("{rlib}"); suppressMessages(library(sdcMicro))
d <- as.data.frame(data.table::fread("{data}"))
t0 <- Sys.time(); {call}; first <- as.numeric(Sys.time() - t0, units = "secs")
data.table::fwrite(as.data.frame(out), "{out}")
s <- c(); for (i in seq_len({repeats})) {{ t0 <- Sys.time(); {call}; s <- c(s, as.numeric(Sys.time() - t0, units = "secs")) }}
writeLines(as.character(if ({repeats} == 0) c(first, 0) else c(median(s), sum(s))), "{info}")
"""

PY_SCRIPT = """
import json, sys, time
import pandas as pd
import pyarrow as pa
import pyarrow.csv
from incrowd.perturbation import perturb, perturb_values
d = pd.read_csv({data!r}, engine="pyarrow")
step = json.loads({step!r})
column, whole = {column!r}, {whole!r}
if column:  # a column alone, as R is given d$x and gives back the vector
    x = d[column].to_numpy()
    params = {{k: v for k, v in step.items() if k not in ("columns", "method")}}
    call = lambda: perturb_values(x, step["method"], **params)
    written = lambda r: pd.DataFrame({{column: r}})
else:  # a table; what R's call gives back is written: the whole table or the changed columns
    call = lambda: perturb(d, [step])
    written = lambda r: r.table if whole else r.table[step["columns"]]
if {repeats} == 0 and not column:  # one timed call: numba's kernels loaded before it, on 20,000 rows
    perturb(d.head(20000), [step])
t0 = time.perf_counter(); result = call(); first = time.perf_counter() - t0
pyarrow.csv.write_csv(pa.Table.from_pandas(written(result), preserve_index=False), {out!r})
s = []
for _ in range({repeats}):
    t0 = time.perf_counter(); call(); s.append(time.perf_counter() - t0)
s.sort()
open({info!r}, "w").write(f"{{first}} 0" if not s else f"{{s[len(s) // 2]}} {{sum(s)}}")
"""

#: the methods R runs on a column alone (``d$x``, a vector back): incrowd's call is
#: ``perturb_values`` on the column's array; the methods whose R call gives back the whole data
#: frame: incrowd writes the whole table too (any other: the changed columns, as R's ``out``)
COLUMN_CALLS = {"top_code", "bottom_code", "round"}
TABLE_CALLS = {f"{method} (table)" for method in COLUMN_CALLS}
WHOLE_TABLE = {"rank_swap", "record_swap", *TABLE_CALLS}


def run(command: list[str], info: Path, timeout: float, env=None) -> tuple[float, float] | None:
    """(call, process) seconds of one fresh process, or None past the timeout."""
    t0 = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, timeout=timeout, env=env, text=True)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode:
        sys.exit(f"{command[0]} failed:\n{done.stderr}")
    wall = time.perf_counter() - t0
    call, repeated = (float(v) for v in info.read_text().split())
    return call, wall - repeated


def median(runs: list[tuple[float, float] | None]) -> tuple[float, float] | None:
    """(call, process): each the median over the runs, None if any run was past the timeout."""
    if any(r is None for r in runs):
        return None
    return float(np.median([r[0] for r in runs])), float(np.median([r[1] for r in runs]))


def adult(rows: int, seed: int = 0) -> pd.DataFrame:
    d = pd.read_csv(data_dir() / "adult.csv.gz", skipinitialspace=True)
    d.columns = [c.replace("-", "_") for c in d.columns]
    if rows <= len(d):
        return d
    return d.iloc[np.random.default_rng(seed).integers(0, len(d), rows)].reset_index(drop=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rlib", default="/work/rlib")
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000],
                        help="the rows of the resampled data sets, one or several sizes (e.g. 100000 250000 1000000)")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--methods", nargs="*")
    parser.add_argument("--data", nargs="*", choices=["testdata", "resampled", "adult"],
                        default=["testdata", "resampled", "adult"])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--baseline-src", type=Path)
    parser.add_argument("--write-docs", action="store_true",
                        help=f"write the MDAV table into {DOCS.relative_to(REPO)} (its section {SECTION})")
    args = parser.parse_args()
    sizes = sorted(set(args.rows))
    frames: dict[str, Callable[[], pd.DataFrame]] = {}
    if "testdata" in args.data:
        frames["testdata"] = lambda: pd.read_csv(data_dir() / "testdata.csv")
    for rows in sizes:   # built when their turn comes: a million rows each
        if "resampled" in args.data:
            frames[f"testdata x {rows:,}"] = partial(resampled, rows)
        if "adult" in args.data:
            frames[f"adult x {rows:,}"] = partial(adult, rows)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    sides = {"incrowd": env}
    if args.baseline_src:
        sides["baseline"] = {**os.environ, "PYTHONPATH": str(args.baseline_src.resolve())}
    started = f"{now_utc()}, load average {os.getloadavg()[0]:.1f}"
    lines = ["| data | method | " + " | ".join(f"{side} call (ms) / process (s)" for side in sides)
             + " | sdcMicro call (ms) / process (s) | ratio call / process | load |",
             "|---|---|" + "---:|" * (len(sides) + 3)]
    mdav: list[list[object]] = []
    compiled: set[tuple[str, str]] = set()
    calls: dict[tuple[str, str], dict[int, float]] = {}   # (data, side) -> rows -> MDAV call seconds

    def shown(t: tuple[float, float] | None) -> str:
        return f"> {args.timeout:.0f} s (whole process)" if t is None else f"{t[0] * 1e3:.4g} / {t[1]:.2f}"

    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for label, build in frames.items():
            kind = label.split()[0]
            wanted = [m for m in steps(DATASETS[kind]) if not args.methods or m in args.methods]
            if not wanted:
                continue
            frame = build()
            data = folder / f"{kind}_{len(frame)}.csv"
            frame.to_csv(data, index=False)
            if TABLE_CALLS & set(wanted):
                lines.append(f"| {label} | floor of a table call: {_floor(frame, DATASETS[kind]['numeric'][0])} |")
                print(lines[-1], flush=True)
            for method, (step, r_call) in steps(DATASETS[kind]).items():
                if method not in wanted:
                    continue
                # exact MDAV is quadratic on both sides: beyond testdata only where it is named
                quadratic = method in SMALL_ONLY and len(frame) > 10_000
                if (quadratic and not (method == "microaggregation" and args.methods)) or \
                        (method in HOUSEHOLDS_ONLY and kind != "testdata"):
                    continue
                info = folder / "info.txt"
                outs = {side: folder / f"out_{side}.csv" for side in [*sides, "sdcMicro"]}
                for out in outs.values():
                    out.unlink(missing_ok=True)
                # a quadratic call on many rows is timed once: the process's one call
                repeats = 0 if quadratic else 5 if len(frame) < 100_000 or method in COLUMN_CALLS | TABLE_CALLS else 1
                scripts = {}
                for side in sides:
                    scripts[side] = folder / f"run_{side}.py"
                    scripts[side].write_text(PY_SCRIPT.format(
                        data=str(data), step=json.dumps(step), out=str(outs[side]), info=str(info), repeats=repeats,
                        column=step["columns"][0] if method in COLUMN_CALLS else None,
                        whole=method in WHOLE_TABLE), encoding="utf-8")
                    if label == "testdata" or (quadratic and (side, method) not in compiled):
                        # compile (or load) numba's kernels before any timed process (a quadratic
                        # method on 20,000 of the rows: MDAV's threaded passes start at 16,384)
                        small = folder / "small.csv"
                        frame.head(20_000).to_csv(small, index=False)
                        warm = folder / "warm.py"
                        warm.write_text(PY_SCRIPT.format(
                            data=str(small), step=json.dumps(step), out=str(folder / "warm.csv"),
                            info=str(folder / "warm.txt"), repeats=1,
                            column=step["columns"][0] if method in COLUMN_CALLS else None,
                            whole=method in WHOLE_TABLE), encoding="utf-8")
                        subprocess.run([sys.executable, str(warm)], check=True, capture_output=True, env=sides[side])
                        compiled.add((side, method))
                r_script = folder / "run.R"
                r_script.write_text(R_SCRIPT.format(rlib=args.rlib, data=data, call=r_call, out=outs["sdcMicro"],
                                                    info=info, repeats=repeats),
                                    encoding="utf-8")
                load = os.getloadavg()[0]
                times: dict[str, list] = {name: [] for name in [*sides, "sdcMicro"]}
                for _ in range(args.rounds):
                    for side, side_env in sides.items():
                        times[side].append(run([sys.executable, str(scripts[side])], info, args.timeout, side_env))
                    times["sdcMicro"].append(run(["Rscript", str(r_script)], info, args.timeout))
                medians = {name: median(t) for name, t in times.items()}
                mine, theirs = medians["incrowd"], medians["sdcMicro"]
                ratio = ("" if mine is None or theirs is None else
                         f"{theirs[0] / max(mine[0], 1e-9):.2f} / {theirs[1] / max(mine[1], 1e-9):.2f}")
                cells = " | ".join(shown(medians[name]) for name in [*sides, "sdcMicro"])
                lines.append(f"| {label} | {method} | {cells} | {ratio} | {load:.1f} |")
                print(lines[-1], flush=True)
                if method == "microaggregation":
                    for side in ("incrowd", "sdcMicro"):
                        if medians[side] is not None:
                            calls.setdefault((kind, side), {})[len(frame)] = medians[side][0]
                    mdav.append([kind, f"{len(frame):,}", _seconds(mine, args.timeout),
                                 _seconds(theirs, args.timeout), ratio or "-",
                                 *_same_groups(outs["incrowd"], outs["sdcMicro"], frame[step["columns"]]),
                                 f"{load:.1f}"])
    print("\n".join(lines))
    if mdav:
        table = md_table(["data", "rows", "incrowd call / process (s)", "sdcMicro call / process (s)",
                          "ratio call / process", "published values equal",
                          "information loss, incrowd / sdcMicro", "load average"], mdav, "llrrrlrl")
        growth = "; ".join(f"{kind} {side} {exponent}" for (kind, side), by_rows in calls.items()
                           if (exponent := _growth(by_rows)))
        body = (f"Exact MDAV microaggregation (k = 3) of the amounts, jointly, side by side "
                f"(`bench/perturbation_scale_vs_sdcmicro.py --methods microaggregation --rows "
                f"{' '.join(map(str, sizes))} --timeout {args.timeout:.0f}`, started {started}; "
                f"{machine_line()}). A process past {args.timeout / 60:.0f} min is stopped.\n\n{table}\n\n"
                f"Growth exponent of the call (t ~ n^e, between the sizes both sides finished): {growth or '-'}.")
        print(body)
        if args.write_docs:
            update_section(DOCS, SECTION, body, "Perturbation")
    return 0


#: where ``--write-docs`` puts the MDAV table
DOCS = REPO / "docs" / "guide" / "perturbation.md"
SECTION = "perturbation-mdav-scale"


def _floor(frame: pd.DataFrame, name: str) -> str:
    """What pandas itself costs a call that gives back a new table with one column replaced:
    ``copy(deep=False)`` and one column set by position (the median of 201 in this process)."""
    values = frame[name].to_numpy(dtype=np.float64, copy=True)
    where = frame.columns.get_loc(name)
    seconds = []
    for _ in range(201):
        t0 = time.perf_counter()
        new = frame.copy(deep=False)
        new.isetitem(where, values)
        seconds.append(time.perf_counter() - t0)
    return f"copy(deep=False) + isetitem {np.median(seconds) * 1e6:.1f} us"


def _seconds(t: tuple[float, float] | None, timeout: float) -> str:
    return f"past {timeout / 60:.0f} min" if t is None else f"{t[0]:.3g} / {t[1]:.3g}"


def _same_groups(mine: Path, theirs: Path, original: pd.DataFrame) -> tuple[str, str]:
    """How many published cells are equal on both sides (to 1e-9: R writes 15 digits), and the
    information loss of each side (the sum of squared changes of the standardized values,
    what MDAV keeps small: incrowd's over sdcMicro's)."""
    if not (mine.exists() and theirs.exists()):
        return "-", "-"
    a, b = pd.read_csv(mine).to_numpy(float), pd.read_csv(theirs).to_numpy(float)
    if a.shape != b.shape:
        return f"shapes differ {a.shape} / {b.shape}", "-"
    equal = int(np.isclose(a, b, rtol=1e-9, atol=0).sum())
    x = original.to_numpy(float)
    sd = x.std(axis=0)
    loss = [float((((y - x) / sd) ** 2).sum()) for y in (a, b)]
    return ("all" if equal == a.size else f"{equal:,} of {a.size:,}"), f"{loss[0] / loss[1]:.5f}"


def _growth(by_rows: dict[int, float]) -> str:
    """e in t ~ n^e between the largest and the smallest size timed beyond testdata."""
    sizes = sorted(n for n in by_rows if n > 10_000)
    if len(sizes) < 2:
        return ""
    lo, hi = sizes[0], sizes[-1]
    return f"{np.log(by_rows[hi] / by_rows[lo]) / np.log(hi / lo):.2f} ({lo:,} to {hi:,} rows)"


if __name__ == "__main__":
    sys.exit(main())
