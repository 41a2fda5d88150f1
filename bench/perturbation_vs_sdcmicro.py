"""incrowd's perturbation methods against sdcMicro's, side by side in one run on sdcMicro's
``testdata`` (4,580 persons in 1,000 households).

Run from the repository root (sdcMicro 5.8.0 built in LIBDIR)::

    PYTHONPATH=src .venv/bin/python bench/perturbation_vs_sdcmicro.py --rlib /work/rlib [--write-peer]

Top and bottom coding and rounding are timed as two kinds of call on both sides: on a column
alone (R's numeric vector ``d$income``; a numpy array given to ``perturb_values``), each side
giving back the new column; and on a table (R's data.frame, ``topBotCoding(d, column = ...)``;
a DataFrame given to ``perturb``), each side giving back a new table.

For each method, interleaved: one ``Rscript`` process runs sdcMicro's call (timed inside R,
the median of the calls after one warm-up call, at least 5 and half a second of them, the data
loaded before), then this process runs incrowd's (timed the same way, numba compiled before);
``--rounds`` times (3), the ratio that of the two sides' medians over the rounds. It prints the methods table: method,
sdcMicro function, the equality or property checked on both outputs, and the time ratio
(sdcMicro / incrowd: above 1, incrowd is faster).

``--write-peer`` writes ``tests/data/sdcmicro_perturbation_testdata.csv.gz``: sdcMicro's output of
top and bottom coding, rounding and microaggregation (mdav, k = 3, mean) on testdata, the peer
figures tests/test_perturbation.py compares with, cell by cell.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "testdata.csv"
PEER = ROOT / "tests" / "data" / "sdcmicro_perturbation_testdata.csv.gz"
NUMERIC = ["income", "expend", "savings"]

#: the calls, with the same parameters on both sides
TOP = {"value": 90_000_000, "replacement": 90_000_000}
BOTTOM = {"value": 5_000_000, "replacement": 0}
BASE = 100_000
#: the methods timed on a column alone and on a table: their column and parameters
COLUMN = {"top_code": ("income", TOP), "bottom_code": ("expend", BOTTOM), "round": ("savings", {"base": BASE})}
SEEDS = 100

R_COMMON = """
.libPaths("{rlib}"); suppressMessages(library(sdcMicro))
d <- read.csv("{data}")
timeit <- function(f) {{ f(); t <- c(); while (length(t) < {least} || (sum(t) < {budget} && length(t) < {most})) {{
  t0 <- Sys.time(); r <- f(); t <- c(t, as.numeric(Sys.time() - t0, units = "secs")) }}; list(r = r, s = median(t)) }}
out <- list()
"""

R_CALLS = {
    "top_code": """
x <- timeit(function() topBotCoding(d$income, value = {top[value]}, replacement = {top[replacement]}, kind = "top"))
y <- timeit(function() topBotCoding(d, value = {top[value]}, replacement = {top[replacement]}, kind = "top",
  column = "income"))
write.csv(data.frame(top_code = x$r), "{tmp}/out.csv", row.names = FALSE)
out$seconds <- x$s; out$table_seconds <- y$s; out$table_equal <- identical(y$r$income, x$r)
""",
    "bottom_code": """
x <- timeit(function() topBotCoding(d$expend, value = {bottom[value]}, replacement = {bottom[replacement]},
  kind = "bottom"))
y <- timeit(function() topBotCoding(d, value = {bottom[value]}, replacement = {bottom[replacement]},
  kind = "bottom", column = "expend"))
write.csv(data.frame(bottom_code = x$r), "{tmp}/out.csv", row.names = FALSE)
out$seconds <- x$s; out$table_seconds <- y$s; out$table_equal <- identical(y$r$expend, x$r)
""",
    "round": """
x <- timeit(function() {base} * round(d$savings / {base}))
y <- timeit(function() {{ e <- d; e$savings <- {base} * round(e$savings / {base}); e }})
write.csv(data.frame(round = x$r), "{tmp}/out.csv", row.names = FALSE)
out$seconds <- x$s; out$table_seconds <- y$s; out$table_equal <- identical(y$r$savings, x$r)
""",
    "microaggregation": """
x <- timeit(function() microaggregation(d[, c("income", "expend", "savings")], aggr = 3, method = "mdav",
  measure = "mean")$mx)
write.csv(x$r, "{tmp}/out.csv", row.names = FALSE); out$seconds <- x$s
""",
    "noise": """
v <- c("income", "expend", "savings")
x <- timeit(function() addNoise(d[, v], noise = 50, method = "additive")$xm)
added <- matrix(0, 3, 3)
for (s in 1:{seeds}) {{ set.seed(s); m <- addNoise(d[, v], noise = 50, method = "additive")$xm
  added <- added + cov(as.matrix(m) - as.matrix(d[, v])) / {seeds} }}
expected <- diag((0.5 * apply(d[, v], 2, sd))^2)
out$seconds <- x$s; out$ratio <- diag(added) / diag(expected)
""",
    "rank_swap": """
x <- timeit(function() rankSwap(d, variables = "income", P = 5, TopPercent = 0, BottomPercent = 0, seed = 1))
write.csv(data.frame(income = x$r$income), "{tmp}/out.csv", row.names = FALSE); out$seconds <- x$s
""",
    "shuffle": """
x <- timeit(function() shuffle(d, income + expend ~ age + sex, method = "ds")$shuffled)
write.csv(x$r[, c("income", "expend")], "{tmp}/out.csv", row.names = FALSE); out$seconds <- x$s
""",
    "pram": """
d$roof <- factor(d$roof)
x <- timeit(function() pram(d, variables = "roof", pd = 0.8, alpha = 0.5))
before <- table(d$roof); after <- 0
for (s in 1:{seeds}) {{ set.seed(s); p <- pram(d, variables = "roof", pd = 0.8, alpha = 0.5)
  after <- after + table(p$roof_pram) / {seeds} }}
out$seconds <- x$s; out$largest_change <- max(abs(after - before) / as.numeric(before))
""",
    "record_swap": """
x <- timeit(function() recordSwap(d, hid = "ori_hid", hierarchy = c("urbrur", "water"), similar = list("electcon"),
  swaprate = 0.1, k_anonymity = 0, risk_variables = c("sex"), seed = 1))
r <- x$r
moved <- tapply(r$water != d$water[match(r$ori_hid, d$ori_hid)] | r$urbrur != d$urbrur[match(r$ori_hid, d$ori_hid)],
  r$ori_hid, any)
out$seconds <- x$s; out$swap_rate <- mean(moved)
""",
}


def run_r(method: str, rlib: str, tmp: Path) -> tuple[dict, pd.DataFrame | None]:
    script = R_COMMON.format(rlib=rlib, data=DATA, least=LEAST, budget=BUDGET, most=MOST) + R_CALLS[method].format(
        tmp=tmp, top=TOP, bottom=BOTTOM, base=BASE, seeds=SEEDS) + \
        f'writeLines(jsonlite::toJSON(out, auto_unbox = TRUE, digits = 15), "{tmp}/out.json")\n'
    (tmp / "run.R").write_text(script, encoding="utf-8")
    (tmp / "out.csv").unlink(missing_ok=True)
    subprocess.run(["Rscript", str(tmp / "run.R")], check=True, capture_output=True)
    info = json.loads((tmp / "out.json").read_text())
    frame = pd.read_csv(tmp / "out.csv") if (tmp / "out.csv").exists() else None
    return info, frame


#: each side times a call the same way: one warm-up call, then calls until LEAST of them and
#: BUDGET seconds in all (at most MOST calls); the median. A call of a few microseconds is timed
#: hundreds of times, so that the median is that of a calm moment on both sides
LEAST, BUDGET, MOST = 5, 0.5, 2000


def timeit(f) -> tuple[object, float]:
    f()
    times: list[float] = []
    result = None
    while len(times) < LEAST or (sum(times) < BUDGET and len(times) < MOST):
        t0 = time.perf_counter()
        result = f()
        times.append(time.perf_counter() - t0)
    return result, float(np.median(times))


def incrowd_side(method: str, d: pd.DataFrame) -> tuple[dict, pd.DataFrame | None]:
    from incrowd import perturb
    from incrowd.perturbation import perturb_values

    def one(steps, **kw):
        return lambda: perturb(d, steps, **kw)

    if method in COLUMN:
        # both kinds of call, as sdcMicro is timed: a column alone (R's vector, a numpy array
        # here) and a table (R's data.frame, a DataFrame here), each giving back the same kind
        name, params = COLUMN[method]
        column = d[name].to_numpy()
        r, s = timeit(lambda: perturb_values(column, method, **params))
        t, table_s = timeit(one([{"columns": [name], "method": method, **params}]))
        return ({"seconds": s, "table_seconds": table_s,
                 "table_equal": bool(np.array_equal(t.table[name].to_numpy(), r, equal_nan=True))},
                pd.DataFrame({method: r}))
    if method == "microaggregation":
        r, s = timeit(one([{"columns": NUMERIC, "method": "microaggregation", "k": 3}]))
        return {"seconds": s}, r.table[NUMERIC]
    if method == "noise":
        _, s = timeit(one([{"columns": NUMERIC, "method": "noise", "amount": 50}]))
        added = np.zeros((3, 3))
        for seed in range(SEEDS):
            m = perturb(d, [{"columns": NUMERIC, "method": "noise", "amount": 50}], random_state=seed).table
            added += np.cov((m[NUMERIC].to_numpy() - d[NUMERIC].to_numpy()).T) / SEEDS
        expected = (0.5 * d[NUMERIC].std().to_numpy()) ** 2
        return {"seconds": s, "ratio": list(np.diag(added) / expected)}, None
    if method == "rank_swap":
        r, s = timeit(one([{"columns": ["income"], "method": "rank_swap", "p": 5}]))
        return {"seconds": s}, r.table[["income"]]
    if method == "shuffle":
        r, s = timeit(one([{"columns": ["income", "expend"], "method": "shuffle", "by": ["age", "sex"]}]))
        return {"seconds": s}, r.table[["income", "expend"]]
    if method == "pram":
        _, s = timeit(one([{"columns": ["roof"], "method": "pram", "pd": 0.8}]))
        before = d["roof"].value_counts().sort_index()
        after = 0
        for seed in range(SEEDS):
            t = perturb(d, [{"columns": ["roof"], "method": "pram", "pd": 0.8}], random_state=seed).table
            after = after + t["roof"].value_counts().reindex(before.index, fill_value=0) / SEEDS
        return {"seconds": s, "largest_change": float((abs(after - before) / before).max())}, None
    if method == "record_swap":
        step = {"columns": ["urbrur", "water"], "method": "record_swap", "hierarchy": ["urbrur", "water"],
                "similarity": ["electcon"], "rate": 0.1, "risk_variables": ["sex"], "risk_threshold": 1.0,
                "household": "ori_hid"}
        r, s = timeit(one([step]))
        moved = (r.table[["urbrur", "water"]] != d[["urbrur", "water"]]).any(axis=1).groupby(d["ori_hid"]).any()
        return {"seconds": s, "swap_rate": float(moved.mean())}, None
    raise KeyError(method)


CHECKS = {
    "top_code": ("topBotCoding(kind = \"top\")", "equal to the cell"),
    "bottom_code": ("topBotCoding(kind = \"bottom\")", "equal to the cell"),
    "round": ("R: base * round(x / base)", "equal to the cell"),
    "microaggregation": ("microaggregation(method = \"mdav\")", "equal to the cell"),
    "noise": ("addNoise(method = \"additive\")", f"added variance / expected over {SEEDS} seeds"),
    "rank_swap": ("rankSwap", "a permutation; largest rank distance (window 5 %)"),
    "shuffle": ("shuffle(method = \"ds\")", "a permutation; Spearman income-age before, after"),
    "pram": ("pram", f"largest relative change of a category's mean count over {SEEDS} seeds"),
    "record_swap": ("recordSwap", "households swapped (rate 0.1)"),
}


def rank_distance(old: np.ndarray, new: np.ndarray) -> int:
    """The largest distance between a row's rank before and the rank of the value it holds now
    (ties: the nearest rank the value holds)."""
    ordered = np.sort(old)
    position = np.empty(old.size, np.int64)
    position[np.argsort(old, kind="stable")] = np.arange(old.size)
    lo = np.searchsorted(ordered, new, "left")
    hi = np.searchsorted(ordered, new, "right") - 1
    return int(np.where(position < lo, lo - position, np.where(position > hi, position - hi, 0)).max())


def measured(method: str, frame: pd.DataFrame, d: pd.DataFrame) -> dict:
    """The property checked, measured on one side's output."""
    if method == "rank_swap":
        new = frame["income"].to_numpy(float)
        old = d["income"].to_numpy(float)
        return {"permutation": bool(np.array_equal(np.sort(new), np.sort(old))),
                "max_rank_distance": rank_distance(old, new)}
    return {"permutation": all(np.array_equal(np.sort(frame[c].to_numpy(float)), np.sort(d[c].to_numpy(float)))
                               for c in ("income", "expend")),
            "spearman_before": float(d["income"].corr(d["age"], method="spearman")),
            "spearman_after": float(frame["income"].corr(d["age"], method="spearman"))}


def property_text(method: str, mine: dict, theirs: dict, equal: bool | None) -> str:
    if equal is not None:
        return "equal" if equal else "DIFFERENT"
    if method == "noise":
        return (f"incrowd {', '.join(f'{v:.3f}' for v in mine['ratio'])}; "
                f"sdcMicro {', '.join(f'{v:.3f}' for v in theirs['ratio'])}")
    if method == "rank_swap":
        return (f"incrowd {mine['permutation']}, {mine['max_rank_distance']}; "
                f"sdcMicro {theirs['permutation']}, {theirs['max_rank_distance']}")
    if method == "shuffle":
        return (f"incrowd {mine['permutation']}, {mine['spearman_before']:.3f} -> {mine['spearman_after']:.3f}; "
                f"sdcMicro {theirs['permutation']}, {theirs['spearman_before']:.3f} -> {theirs['spearman_after']:.3f}")
    if method == "pram":
        return f"incrowd {mine['largest_change']:.4f}; sdcMicro {theirs['largest_change']:.4f}"
    if method == "record_swap":
        return f"incrowd {mine['swap_rate']:.3f}; sdcMicro {theirs['swap_rate']:.3f}"
    return ""


def _ratio(theirs: float, mine: float) -> str:
    return f"{theirs / max(mine, 1e-9):.2f} ({theirs * 1e6:.0f} / {mine * 1e6:.0f} us)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rlib", default="/work/rlib")
    parser.add_argument("--write-peer", action="store_true")
    parser.add_argument("--methods", nargs="*", default=list(CHECKS))
    parser.add_argument("--rounds", type=int, default=3,
                        help="times each method runs on both sides, interleaved (sdcMicro, incrowd, sdcMicro, ...); "
                             "the ratio is that of the two sides' medians over the rounds")
    args = parser.parse_args()
    d = pd.read_csv(DATA)
    peer = {}
    rows = ["| method | sdcMicro function | equality or property checked | result | "
            "time ratio (sdcMicro / incrowd, microseconds a call) |",
            "|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for method in args.methods:
            their_seconds, my_seconds, their_table, my_table = [], [], [], []
            for _ in range(args.rounds):
                theirs, their_frame = run_r(method, args.rlib, tmp)
                mine, my_frame = incrowd_side(method, d)
                their_seconds.append(theirs["seconds"])
                my_seconds.append(mine["seconds"])
                their_table.append(theirs.get("table_seconds", 0.0))
                my_table.append(mine.get("table_seconds", 0.0))
            theirs["seconds"], mine["seconds"] = float(np.median(their_seconds)), float(np.median(my_seconds))
            equal = None
            if method in ("rank_swap", "shuffle"):
                mine.update(measured(method, my_frame, d))
                theirs.update(measured(method, their_frame, d))
            elif their_frame is not None and my_frame is not None:
                equal = bool(np.allclose(their_frame.to_numpy(float), my_frame.to_numpy(float), rtol=1e-12, atol=0))
                for column in their_frame.columns:
                    peer[f"{method}_{column}" if method == "microaggregation" else method] = their_frame[column]
            function, what = CHECKS[method]
            timing = _ratio(theirs["seconds"], mine["seconds"])
            if method in COLUMN:
                theirs["table_seconds"] = float(np.median(their_table))
                mine["table_seconds"] = float(np.median(my_table))
                equal = equal and bool(theirs["table_equal"]) and mine["table_equal"]
                timing = (f"column {timing}; table {_ratio(theirs['table_seconds'], mine['table_seconds'])}")
            rows.append(f"| {method} | `{function}` | {what} | {property_text(method, mine, theirs, equal)} | "
                        f"{timing} |")
            print(rows[-1], flush=True)
    print("\n".join(rows))
    if args.write_peer:
        table = pd.DataFrame(peer)
        with gzip.open(PEER, "wt", encoding="utf-8") as out:
            out.write("# peer figures: sdcMicro 5.8.0's output on testdata, written by "
                      "bench/perturbation_vs_sdcmicro.py --write-peer\n")
            table.to_csv(out, index=False)
        print(f"wrote {PEER}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
