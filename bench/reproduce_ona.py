"""Reproduce Thaeter & Reischuk's (2021) ONA and ONA* rows (Table 1) and its ONA/ONA* tables on these data sets.

Run from the repository root: ``.venv/bin/python bench/reproduce_ona.py``. Writes the section
``ona`` of ``docs/reproduction.md`` (other sections of that file are left alone). Takes about
6-9 minutes on an idle 2-core machine (most of it the 100-run ONA fits for several seeds);
progress goes to stdout.

Published values are typed in from Thaeter & Reischuk ("Scalable k-anonymous
Microaggregation", SECRYPT 2021) in ``../shared/papers``:

* Table 1: information loss in % of MDAV, MDAV*, ONA (best of 100 runs) and ONA* (run once) on
  Census, Tarragona, EIA, Cloud1, Cloud2, k = 2, 3, 4, 5, 7, 10, to 2 decimals. The text
  extraction drops the stars: the rows are printed in the order MDAV, MDAV*, ONA, ONA*; the
  caption ("For ONA the best result out of 100 runs is stated, ONA*, MDAV and MDAV* are run only
  once") and the prose (ONA* improves on MDAV* in every cell) tell ONA and ONA* apart, and the
  rows agree with those typed into tests/test_ona.py.
* Appendix Table 2: statistics of 1000 ONA runs on Census per k (lowest, highest, median, mean,
  variance), with MDAV*'s loss.
* Appendix Table 3: ONA on Census, k = 10, with 10, 100 and 1000 runs (statistics and runtime).
* Appendix Table 4: "Runtime on EIA" of MDAV*, ONA (total of 100 runs) and ONA* (whole seconds,
  Java on an Intel Core i7 6850K).

Acceptance rule: ONA* within 3 % (relative) of every published cell; ONA, best
of 100 runs, within 5 %. ONA's main table uses ``random_state=0``; the evidence for the gaps
re-runs it with other ``random_state`` values and on row-permuted copies of the data.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    DATA_NOTES,
    DISPLAY,
    DOCS,
    TABLE1_2021,
    comparison_rows,
    fmt_gap,
    fmt_s,
    load,
    machine_line,
    md_table,
    median,
    now_utc,
    pass_fail,
    rel_gap,
    same2,
    same_groups,
    time_runs,
    update_section,
    yes_no,
)

from incrowd.cli._bench_entry import (
    ona_best_labels,  # noqa: E402
    standardize,  # noqa: E402
)
from incrowd.microaggregation import sst  # noqa: E402
from incrowd.microaggregation.greedy.mdav_star import MDAVStar  # noqa: E402
from incrowd.microaggregation.ona.ona import ONA, ONAStar, _use_tree  # noqa: E402

KS = [2, 3, 4, 5, 7, 10]
SETS = ["census", "tarragona", "eia", "cloud1", "cloud2"]
RUNS = 100  # the paper's mu
MAX_ROUNDS = 30  # the paper's cap on ONA's rounds
MAIN_SEED = 0  # random_state of the main ONA table
# random_state 0..S-1 per data set (Census: 10 x 100 = 1000 runs, for Tables 2 and 3; EIA is the
# slowest set, so fewer).
N_SEEDS = {"census": 10, "tarragona": 4, "eia": 2, "cloud1": 4, "cloud2": 4}
N_PERM_STAR = 10  # row permutations for ONA*
N_PERM_ONA = 2  # row permutations for ONA, only where no run of ours reaches the paper
TOL = {"ona-star": 0.03, "ona": 0.05}
NAMES = {"mdav-star": "MDAV*", "ona": "ONA", "ona-star": "ONA*"}

# ---------------------------------------------------------------------------------------------
# Published values, Thaeter & Reischuk (2021).

# Table 1, IL in %, columns k = 2, 3, 4, 5, 7, 10 (bench/_common/papers.py).
T1 = TABLE1_2021
# Thaeter & Reischuk (2018), Table 1 MDAV* (3 decimals) where Thaeter & Reischuk's (2021) MDAV* is inconsistent with it (see the
# section mdav-family); used only to explain ONA* gaps, since ONA* starts from MDAV*.
P001_MDAV_STAR = {("census", 4): 7.433, ("census", 10): 14.003, ("tarragona", 10): 34.743}

# Table 2: 1000 ONA runs on Census: k -> (lowest, highest, median, mean, variance), MDAV* IL.
T2 = {
    2: (3.43, 3.90, 3.63, 3.63, 0.01, 3.17),
    3: (5.42, 6.24, 5.70, 5.71, 0.01, 5.78),
    4: (6.94, 7.74, 7.25, 7.25, 0.02, 7.44),
    5: (8.12, 9.10, 8.47, 8.48, 0.02, 8.81),
    7: (10.04, 11.11, 10.43, 10.44, 0.03, 11.37),
    10: (12.36, 13.66, 12.77, 12.80, 0.04, 14.01),
}
# Table 3: ONA on Census, k = 10: runs -> (lowest, highest, median, mean, variance, runtime s).
T3 = {
    10: (12.54, 13.00, 12.74, 12.76, 0.02, 1),
    100: (12.41, 13.39, 12.79, 12.80, 0.04, 9),
    1000: (12.36, 13.66, 12.77, 12.80, 0.04, 100),
}
T3_MDAV_STAR = (14.01, 0)  # IL %, runtime s
# Table 4: runtime on EIA in whole seconds (ONA: total of 100 runs).
T4 = {
    "mdav-star": [2, 1, 1, 0, 0, 0],
    "ona": [162, 255, 138, 327, 41, 36],
    "ona-star": [2, 1, 1, 1, 0, 0],
}
# Prose of section 3: "The average improvement from MDAV* to ONA* is 11% over all experiments.
# While the average improvement from ONA to ONA* is just 3% ..." (from Table 1 these are the
# means of IL(MDAV*) / IL(ONA*) - 1 and IL(ONA) / IL(ONA*) - 1: 10.7 % and 2.7 %).
PROSE_AVG = {"mdav-star": 11.0, "ona": 3.0}

# The cells that miss the published value at 2 decimals when the prose below was written (ONA*
# only; ONA's misses are explained cell by cell from the computed evidence).
EXPECTED_STAR_MISSES = {("tarragona", 10)}


# ---------------------------------------------------------------------------------------------
# Helpers


def reaches(values: np.ndarray, published: float) -> np.ndarray:
    """Runs whose IL, printed to 2 decimals, is at most the published value."""
    return np.round(values, 2) <= published + 1e-9


def stats(values: np.ndarray) -> tuple[float, float, float, float, float]:
    return (float(values.min()), float(values.max()), float(np.median(values)),
            float(values.mean()), float(values.var()))


def moved_rows(a: np.ndarray, b: np.ndarray) -> list[int]:
    """Rows that change groups from partition a to partition b (group ids may differ): in each
    group of a, the rows outside the group of b that holds most of its rows."""
    moved = []
    for g in np.unique(a):
        rows = np.flatnonzero(a == g)
        vals, counts = np.unique(b[rows], return_counts=True)
        major = vals[np.argmax(counts)]
        moved += [int(r) for r in rows if b[r] != major]
    return sorted(moved)


def permutation(n: int, p: int) -> np.ndarray:
    return np.random.default_rng(1000 + p).permutation(n)


# ---------------------------------------------------------------------------------------------


def main() -> None:
    t_start = time.perf_counter()
    data = {ds: load(ds) for ds in SETS}
    # compile / load the numba kernels outside the timings
    small = data[SETS[0]][:60]
    ONA(k=3, runs=2, random_state=0).fit(small)
    ONAStar(k=3).fit(small)
    MDAVStar(k=3).fit(small)
    threads = numba.get_num_threads()

    star: dict[tuple, dict] = {}
    ona: dict[tuple, dict] = {}
    mstar: dict[tuple, dict] = {}
    for ds in SETS:
        X = data[ds]
        n = X.shape[0]
        for k in KS:
            t_cell = time.perf_counter()
            # ONA*: deterministic; time = median of 3 fits
            t_star, model = time_runs(lambda: ONAStar(k=k).fit(X), repeats=3, warmup=0)
            perm_il = [100 * ONAStar(k=k).fit(X[permutation(n, p)]).information_loss_
                       for p in range(N_PERM_STAR)]
            star[(ds, k)] = dict(il=100 * model.information_loss_, rounds=model.n_rounds_,
                                 converged=model.converged_, time=median(t_star),
                                 sizes=(int(model.group_sizes_.min()), int(model.group_sizes_.max())),
                                 perm=np.array(perm_il))
            t_md, model = time_runs(lambda: MDAVStar(k=k).fit(X), repeats=3, warmup=0)
            mstar[(ds, k)] = dict(il=100 * model.information_loss_, time=median(t_md))
            # ONA: best of 100 runs, random_state 0 .. N_SEEDS-1
            per_seed = []
            for s in range(N_SEEDS[ds]):
                t0 = time.perf_counter()
                m = ONA(k=k, runs=RUNS, max_rounds=MAX_ROUNDS, random_state=s).fit(X)
                dt = time.perf_counter() - t0
                per_seed.append(dict(best=100 * m.information_loss_,
                                     runs=100 * m.run_information_losses_,
                                     rounds=m.run_n_rounds_.copy(),
                                     converged=m.run_converged_.copy(), time=dt,
                                     best_rounds=m.n_rounds_, best_converged=m.converged_))
            ona[(ds, k)] = dict(seeds=per_seed, main=per_seed[MAIN_SEED],
                                pooled=np.concatenate([p["runs"] for p in per_seed]),
                                rounds=np.concatenate([p["rounds"] for p in per_seed]),
                                converged=np.concatenate([p["converged"] for p in per_seed]))
            print(f"{DISPLAY[ds]:9s} k={k:2d}: ONA* {star[(ds, k)]['il']:.4f} "
                  f"(paper {T1[ds]['ona-star'][KS.index(k)]:.2f}), ONA best-of-{RUNS} "
                  f"{per_seed[MAIN_SEED]['best']:.4f} (paper {T1[ds]['ona'][KS.index(k)]:.2f}), "
                  "seeds " + ", ".join(f"{p['best']:.3f}" for p in per_seed) + "; "
                  f"{time.perf_counter() - t_cell:.1f} s", flush=True)

    # ONA on row-permuted data, only where none of our pooled runs reaches the published value
    perm_ona: dict[tuple, list[float]] = {}
    for ds in SETS:
        X = data[ds]
        for i, k in enumerate(KS):
            if reaches(ona[(ds, k)]["pooled"], T1[ds]["ona"][i]).any():
                continue
            vals = []
            for p in range(N_PERM_ONA):
                m = ONA(k=k, runs=RUNS, max_rounds=MAX_ROUNDS, random_state=MAIN_SEED)
                vals.append(100 * m.fit(X[permutation(X.shape[0], p)]).information_loss_)
            perm_ona[(ds, k)] = vals
            print(f"{DISPLAY[ds]:9s} k={k:2d}: ONA on {N_PERM_ONA} row permutations: "
                  + ", ".join(f"{v:.4f}" for v in vals), flush=True)

    # Table 3's "10 runs": one execution with 10 runs
    t0 = time.perf_counter()
    ten = ONA(k=10, runs=10, max_rounds=MAX_ROUNDS, random_state=MAIN_SEED).fit(data["census"])
    ten_time = time.perf_counter() - t0
    ten_runs = 100 * ten.run_information_losses_

    # One non-converging ONA run, replayed round by round through the kernel (the run's seed is
    # the one ONA.fit draws from random_state), to show what happens at the round cap.
    cycle = None
    capped = [(int((~ona[key]["main"]["converged"]).sum()), key) for key in ona]
    n_capped, key = max(capped)
    if n_capped > 0:
        ds, k = key
        run = int(np.flatnonzero(~ona[key]["main"]["converged"])[0])
        seeds = np.random.default_rng(MAIN_SEED).integers(
            0, np.iinfo(np.uint64).max, size=RUNS, dtype=np.uint64, endpoint=True)[[run]]
        Z = np.ascontiguousarray(standardize(data[ds])[0])
        total = sst(Z)
        tree = _use_tree(Z.shape[0], k)
        labs, ils, rounds_list = [], [], list(range(MAX_ROUNDS - 2, MAX_ROUNDS + 3))
        for r in rounds_list:
            lab, cost, _, _, _ = ona_best_labels(Z, k, r, seeds, tree)
            labs.append(lab)
            ils.append(100 * float(cost[0]) / total)
        consistent = abs(ils[2] - ona[key]["main"]["runs"][run]) < 1e-9
        period2 = all(same_groups(labs[i], labs[i + 2]) for i in range(len(labs) - 2))
        moved = moved_rows(labs[2], labs[3])
        groups_before = {int(labs[2][r]) for r in moved}
        groups_after = {int(labs[3][r]) for r in moved}
        pair = len(moved) == 2 and len(groups_before) == 1 and len(groups_after) == 1
        cycle = dict(key=key, run=run, rounds=rounds_list, il=ils, period2=period2,
                     moved=moved, pair=pair, consistent=consistent)
        print(f"cycle check {DISPLAY[ds]} k={k} run {run}: IL "
              + ", ".join(f"{v:.6f}" for v in ils), flush=True)

    # ---- checks ---------------------------------------------------------------------------------
    n_checks = n_pass = 0
    failures: list[str] = []
    star_misses: set[tuple] = set()
    ona_misses: list[tuple] = []
    for ds in SETS:
        for i, k in enumerate(KS):
            for method, ours in (("ona-star", star[(ds, k)]["il"]), ("ona", ona[(ds, k)]["main"]["best"])):
                pub = T1[ds][method][i]
                ok = abs(rel_gap(ours, pub)) <= TOL[method]
                n_checks += 1
                n_pass += ok
                if not ok:
                    failures.append(f"{DISPLAY[ds]} k={k} {NAMES[method]}")
                if not same2(ours, pub):
                    (star_misses.add((ds, k)) if method == "ona-star" else ona_misses.append((ds, k)))

    # ---- header ---------------------------------------------------------------------------------
    out: list[str] = []
    out.append("## ONA and ONA*: Thaeter & Reischuk (2021), Table 1 (and appendix Tables 2-4)")
    out.append("")
    out.append(f"*Generated by `bench/reproduce_ona.py` on {now_utc()}.*")
    out.append("")
    out.append(f"- **Machine:** {machine_line()}. ONA's runs are spread over numba's {threads} "
               "threads (`prange` over the runs); ONA* and MDAV* are single-threaded. Times were "
               "measured while other jobs ran on the machine (ratios/times measured under load).")
    out.append("- **Data:** " + "; ".join(f"{DISPLAY[d]}: {DATA_NOTES[d]}" for d in SETS)
               + ". Read from `data_dir()`.")
    out.append(
        f"- **Methods:** `ONAStar(k=k)` (Thaeter & Reischuk (2021), Algorithm 3; deterministic; at most 100 "
        f"rounds, never reached) and `ONA(k=k, runs={RUNS}, max_rounds={MAX_ROUNDS}, "
        f"random_state={MAIN_SEED})` (Algorithm 2, best of {RUNS} seeded runs, at most "
        f"{MAX_ROUNDS} rounds per run as in the paper) of `incrowd.microaggregation.ona.ona`; "
        "`MDAVStar(k=k)` for context. `fit` standardizes every column to mean 0, variance 1; "
        "IL = SSE/SST on the standardized data, in %."
    )
    out.append("- **k:** 2, 3, 4, 5, 7, 10, the columns of Table 1.")
    out.append(
        "- **Published values:** Thaeter & Reischuk (SECRYPT 2021) Table 1 (IL to 2 "
        "decimals; the extraction drops the stars, the rows are MDAV, MDAV*, ONA, ONA* in that "
        "order), appendix Tables 2 and 3 (ONA run statistics on Census) and Table 4 (runtimes on "
        "EIA, whole seconds, Java on an Intel Core i7 6850K at 4 GHz, 32 GB RAM)."
    )
    out.append(
        f"- **Acceptance rule:** ONA* within {100 * TOL['ona-star']:.0f} % relative of every "
        f"published cell; ONA (best of {RUNS} runs, `random_state={MAIN_SEED}`) within "
        f"{100 * TOL['ona']:.0f} %. *Same at 2 dp* says whether ours rounds to the published "
        "value; it is reported, not required. Seed sensitivity: ONA is re-run with "
        "`random_state` = 0..S-1 (S = "
        + ", ".join(f"{N_SEEDS[d]} on {DISPLAY[d]}" for d in SETS)
        + f"), i.e. S independent best-of-{RUNS} results and S x {RUNS} pooled runs per cell."
    )
    out.append("")
    header_end = len(out)

    # ---- (a) Table 1 ----------------------------------------------------------------------------
    out.append("### (a) Information loss in %, ours vs Table 1")
    out.append("")
    for ds in SETS:
        rows = []
        for method in ("ona-star", "ona"):
            pub = T1[ds][method]
            if method == "ona-star":
                vals = [star[(ds, k)]["il"] for k in KS]
                rows += comparison_rows(["**ONA***"], vals, pub, "same at 2 dp")
            else:
                vals = [ona[(ds, k)]["main"]["best"] for k in KS]
                rows += comparison_rows(["**ONA**"], vals, pub, "same at 2 dp",
                                        ours_label=f"ours (best of {RUNS}, seed {MAIN_SEED})")
            rows.append(["", f"rule (≤ {100 * TOL[method]:.0f} %)"]
                        + [pass_fail(abs(rel_gap(v, p)) <= TOL[method]) for v, p in zip(vals, pub)])
            if method == "ona-star":
                rows.append(["", "rounds (last one changes nothing)"]
                            + [f"{star[(ds, k)]['rounds']}" + ("" if star[(ds, k)]["converged"] else " (cap)")
                               for k in KS])
            else:
                rows.append(["", f"best-of-{RUNS} over seeds 0..{N_SEEDS[ds] - 1}: min – max"]
                            + [f"{min(p['best'] for p in ona[(ds, k)]['seeds']):.3f} – "
                               f"{max(p['best'] for p in ona[(ds, k)]['seeds']):.3f}" for k in KS])
        rows.append(["MDAV*", "ours"] + [f"{mstar[(ds, k)]['il']:.4f}" for k in KS])
        rows.append(["", "published"] + [f"{v:.2f}" for v in T1[ds]["mdav-star"]])
        out.append(f"**{DISPLAY[ds]}**")
        out.append("")
        out.append(md_table(["method", ""] + [f"k={k}" for k in KS], rows, "ll" + "r" * len(KS)))
        out.append("")

    # ---- (b) ONA evidence -----------------------------------------------------------------------
    out.append(f"### (b) ONA: distribution of the runs, and seed sensitivity")
    out.append("")
    out.append(
        f"Per cell: the {RUNS} run losses of the main fit (`random_state={MAIN_SEED}`); how many "
        "of them reach the published value (print to 2 decimals as at most the published "
        f"value); the best-of-{RUNS} of each `random_state` 0..S-1 (sorted); the pooled S x "
        f"{RUNS} runs: how many reach the published value, and from that fraction q the chance "
        f"1 - (1 - q)^{RUNS} that one best-of-{RUNS} reaches it. *Runs at cap*: runs of the "
        f"pooled set that stopped at {MAX_ROUNDS} rounds without converging."
    )
    out.append("")
    rows = []
    cls: dict[tuple, str] = {}
    for ds in SETS:
        for i, k in enumerate(KS):
            c = ona[(ds, k)]
            pub = T1[ds]["ona"][i]
            main = c["main"]["runs"]
            bests = sorted(p["best"] for p in c["seeds"])
            pooled = c["pooled"]
            q = float(reaches(pooled, pub).mean())
            chance = 1 - (1 - q) ** RUNS
            at_cap = int((~c["converged"]).sum())
            lo, hi = round(bests[0], 2), round(bests[-1], 2)
            if lo <= pub <= hi:
                cls[(ds, k)] = "inside"
            elif pub < lo:
                cls[(ds, k)] = "ours higher"
            else:
                cls[(ds, k)] = "ours lower"
            c.update(q=q, chance=chance, bests=bests)
            rows.append([DISPLAY[ds], k, f"{pub:.2f}", f"{c['main']['best']:.4f}",
                         f"{main.min():.3f} / {np.median(main):.3f} / {main.max():.3f}",
                         f"{int(reaches(main, pub).sum())}/{main.size}",
                         ", ".join(f"{b:.3f}" for b in bests),
                         f"{int(reaches(pooled, pub).sum())}/{pooled.size}",
                         f"{100 * chance:.0f} %", f"{at_cap}/{pooled.size}", cls[(ds, k)]])
    out.append(md_table(["data", "k", "paper", "ours (seed 0)", "seed-0 runs min / median / max",
                         "seed-0 runs reaching paper", "best-of-100 per seed",
                         "pooled runs reaching paper", "P(best-of-100 reaches)", "runs at cap",
                         "paper vs our seed range"], rows, "lrrrrrlrrrl"))
    out.append("")
    out.append("*Paper vs our seed range*: *inside* when the published value lies between our "
               "lowest and highest best-of-100 (each rounded to 2 dp); *ours higher* / *ours "
               "lower* when every one of our best-of-100 results is above / below it.")
    out.append("")
    if perm_ona:
        out.append(
            f"Cells where none of our pooled runs reaches the published value, re-run as ONA "
            f"best-of-{RUNS} (`random_state={MAIN_SEED}`) on {N_PERM_ONA} random row "
            "permutations of the data (`numpy.random.default_rng(1000 + p).permutation(n)`). "
            "Permuting the rows changes only the order in which Algorithm 2's `foreach x ∈ X` "
            "visits the rows (and tie-breaking), which the paper does not fix:"
        )
        out.append("")
        rows = []
        for (ds, k), vals in perm_ona.items():
            pub = T1[ds]["ona"][KS.index(k)]
            rows.append([DISPLAY[ds], k, f"{pub:.2f}", f"{ona[(ds, k)]['pooled'].min():.4f}",
                         ", ".join(f"{v:.4f}" for v in vals),
                         f"{sum(reaches(np.array(vals), pub))}/{len(vals)}"])
        out.append(md_table(["data", "k", "paper", "our pooled min (row order as in the file)",
                             "best-of-100 on permuted rows", "reaching paper"], rows, "lrrrll"))
        out.append("")

    # ---- (c) Table 2 and 3 ----------------------------------------------------------------------
    out.append("### (c) ONA run statistics on Census: appendix Tables 2 and 3")
    out.append("")
    out.append(
        f"Ours: the {N_SEEDS['census'] * RUNS} runs of `ONA(k, runs={RUNS}, "
        f"random_state=s)` for s = 0..{N_SEEDS['census'] - 1} (independent runs; the paper's "
        "Table 2 has 1000 runs). Variance of the IL in %² (population variance). MDAV*: ours "
        "vs the paper's column."
    )
    out.append("")
    rows = []
    median_shift = {}
    for k in KS:
        o = stats(ona[("census", k)]["pooled"])
        p = T2[k]
        median_shift[k] = rel_gap(o[2], p[2])
        rows.append([k, "paper (1000 runs)"] + [f"{v:.2f}" for v in p[:5]] + [f"{p[5]:.2f}"])
        rows.append(["", f"ours ({ona[('census', k)]['pooled'].size} runs)"]
                    + [f"{v:.3f}" for v in o[:4]] + [f"{o[4]:.4f}", f"{mstar[('census', k)]['il']:.4f}"])
        rows.append(["", "ours / paper - 1"] + [fmt_gap(rel_gap(a, b)) for a, b in zip(o[:4], p[:4])]
                    + ["", ""])
    out.append(md_table(["k", "", "lowest IL", "highest IL", "median", "mean", "variance",
                         "MDAV* IL"], rows, "llrrrrrr"))
    out.append("")
    out.append("Table 3 (Census, k = 10, 10 / 100 / 1000 runs), statistics of the runs and the "
               "runtime of the whole execution:")
    out.append("")
    c10 = ona[("census", 10)]
    ours_t3 = {
        10: (stats(ten_runs), ten_time),
        100: (stats(c10["main"]["runs"]), c10["main"]["time"]),
        1000: (stats(c10["pooled"]), sum(p["time"] for p in c10["seeds"])),
    }
    rows = []
    for r in (10, 100, 1000):
        p = T3[r]
        o, t = ours_t3[r]
        rows.append([f"{r} runs", "paper"] + [f"{v:.2f}" for v in p[:5]] + [f"{p[5]} s"])
        rows.append(["", "ours"] + [f"{v:.3f}" for v in o[:4]] + [f"{o[4]:.4f}", fmt_s(t)])
    rows.append(["MDAV* (once)", "paper"] + [f"{T3_MDAV_STAR[0]:.2f}"] + [""] * 4
                + [f"{T3_MDAV_STAR[1]} s"])
    rows.append(["", "ours"] + [f"{mstar[('census', 10)]['il']:.4f}"] + [""] * 4
                + [fmt_s(mstar[("census", 10)]["time"])])
    out.append(md_table(["execution", "", "lowest IL", "highest IL", "median", "mean",
                         "variance", "runtime"], rows, "llrrrrrr"))
    out.append("")
    out.append(f"Ours: 10 runs = `ONA(k=10, runs=10, random_state={MAIN_SEED})` (the first 10 "
               f"runs of the 100-run fit); 100 runs = the main fit; 1000 runs = the "
               f"{N_SEEDS['census']} fits of 100 runs, runtime summed.")
    out.append("")

    # ---- (d) ONA* evidence ----------------------------------------------------------------------
    out.append("### (d) ONA*: rounds, group sizes, row-order sensitivity")
    out.append("")
    out.append(
        f"ONA* is deterministic for a given row order; its tie-breaking (clusters visited in "
        f"list order, members in row order, ties to the lowest cluster) is ours, not the "
        f"paper's. To show how much such arbitrary choices can move the result, ONA* was also "
        f"run on {N_PERM_STAR} random row permutations (`default_rng(1000 + p)`)."
    )
    out.append("")
    rows = []
    for ds in SETS:
        for i, k in enumerate(KS):
            s = star[(ds, k)]
            pub = T1[ds]["ona-star"][i]
            perm = s["perm"]
            rows.append([DISPLAY[ds], k, f"{pub:.2f}", f"{s['il']:.4f}", yes_no(same2(s["il"], pub)),
                         f"{s['rounds']}" + ("" if s["converged"] else " (cap)"),
                         f"{s['sizes'][0]}–{s['sizes'][1]}",
                         f"{perm.min():.4f} – {perm.max():.4f}",
                         f"{int(sum(same2(v, pub) for v in perm))}/{perm.size}",
                         f"{mstar[(ds, k)]['il']:.4f}", fmt_gap(rel_gap(s["il"], mstar[(ds, k)]["il"]))])
    out.append(md_table(["data", "k", "paper", "ours", "same at 2 dp", "rounds", "group sizes",
                         "permuted rows: min – max", "permuted = paper at 2 dp", "ours MDAV*",
                         "ONA* vs MDAV*"], rows, "lrrrcrrrrrr"))
    out.append("")

    # ---- (e) runtimes ---------------------------------------------------------------------------
    out.append("### (e) Runtimes")
    out.append("")
    out.append(
        f"Wall time of `fit` on the raw data (standardization included). ONA: one fit of "
        f"{RUNS} runs (`random_state={MAIN_SEED}`), {threads} threads; ONA* and MDAV*: median "
        "of 3 fits. Measured under load on a 2-core machine. The paper's times (Table 4, EIA "
        "only; Table 3, Census k = 10) are whole seconds of a Java implementation on an Intel "
        "Core i7 6850K: different machine, language and (probably) threading, so only the "
        "order of magnitude and the ratios between methods compare."
    )
    out.append("")
    rows = []
    for ds in SETS:
        for method in ("mdav-star", "ona", "ona-star"):
            cells = []
            for i, k in enumerate(KS):
                if method == "ona":
                    t = ona[(ds, k)]["main"]["time"]
                elif method == "ona-star":
                    t = star[(ds, k)]["time"]
                else:
                    t = mstar[(ds, k)]["time"]
                cell = fmt_s(t)
                if ds == "eia":
                    cell += f" / {T4[method][i]} s"
                elif ds == "census" and method == "ona" and k == 10:
                    cell += f" / {T3[100][5]} s"
                elif ds == "census" and method == "mdav-star" and k == 10:
                    cell += f" / {T3_MDAV_STAR[1]} s"
                cells.append(cell)
            label = NAMES[method] + (f" ({RUNS} runs)" if method == "ona" else "")
            rows.append([DISPLAY[ds], label] + cells)
    out.append(md_table(["data", "method"] + [f"k={k}" for k in KS], rows, "ll" + "r" * len(KS)))
    out.append("")
    out.append("Cells `ours / paper`: EIA from Table 4, Census k = 10 from Table 3; the paper "
               "prints no other runtimes for these data sets.")
    out.append("")
    eia_ratio_ours = [ona[("eia", k)]["main"]["time"] / star[("eia", k)]["time"] for k in KS]

    # ---- verdict (inserted after the header) ----------------------------------------------------
    def avg_impr(frm: str, src: str) -> float:
        vals = []
        for ds in SETS:
            for i, k in enumerate(KS):
                if src == "paper":
                    a, b = T1[ds][frm][i], T1[ds]["ona-star"][i]
                else:
                    a = mstar[(ds, k)]["il"] if frm == "mdav-star" else ona[(ds, k)]["main"]["best"]
                    b = star[(ds, k)]["il"]
                vals.append(a / b - 1)  # the paper's definition (see the verdict)
        return 100 * float(np.mean(vals))

    star_same = len(star) - len(star_misses)
    ona_same = len(ona) - len(ona_misses)
    worst_star = max(star, key=lambda key: abs(rel_gap(star[key]["il"], T1[key[0]]["ona-star"][KS.index(key[1])])))
    worst_ona = max(ona, key=lambda key: abs(rel_gap(ona[key]["main"]["best"], T1[key[0]]["ona"][KS.index(key[1])])))
    ws = rel_gap(star[worst_star]["il"], T1[worst_star[0]]["ona-star"][KS.index(worst_star[1])])
    wo = rel_gap(ona[worst_ona]["main"]["best"], T1[worst_ona[0]]["ona"][KS.index(worst_ona[1])])
    n_cls = {c: [key for key in cls if cls[key] == c] for c in ("inside", "ours higher", "ours lower")}
    star_better = sum(star[key]["il"] <= mstar[key]["il"] + 1e-12 for key in star)
    verdict = [
        "### Verdict",
        "",
        f"- **{n_pass} of {n_checks} rule checks pass**"
        + (f"; failing: {', '.join(failures)}." if failures else ".")
        + f" ONA*: largest gap {fmt_gap(ws)} ({DISPLAY[worst_star[0]]} "
        f"k={worst_star[1]}); ONA: largest gap {fmt_gap(wo)} ({DISPLAY[worst_ona[0]]} "
        f"k={worst_ona[1]}).",
        f"- **ONA*: {star_same} of {len(star)} cells equal the published value at 2 decimals**"
        + (": " + ", ".join(f"{DISPLAY[d]} k={k} ({star[(d, k)]['il']:.4f} vs "
                              f"{T1[d]['ona-star'][KS.index(k)]:.2f})" for d, k in sorted(star_misses))
           + " misses by one unit in the last digit (gap 1)." if star_misses else "."),
        f"- **ONA (best of {RUNS}, seed {MAIN_SEED}): {ona_same} of {len(ona)} cells equal at 2 "
        f"decimals.** ONA is randomized, so the 2-decimal value of one best-of-{RUNS} is not "
        f"reproducible (gap 2): over our seeds the published value lies inside the range of our "
        f"best-of-{RUNS} results in {len(n_cls['inside'])} cells, below all of them in "
        f"{len(n_cls['ours higher'])} and above all of them in {len(n_cls['ours lower'])}.",
        f"- ONA* is at least as good as our MDAV* in {star_better} of {len(star)} cells. Average "
        "improvement, as mean over the 30 cells of IL(other) / IL(ONA*) - 1 (the definition "
        "that turns Table 1 into the prose's figures), MDAV* → ONA*: ours "
        f"{avg_impr('mdav-star', 'ours'):.1f} %, from the published Table 1 "
        f"{avg_impr('mdav-star', 'paper'):.1f} % (prose: {PROSE_AVG['mdav-star']:.0f} %); ONA → "
        f"ONA*: ours {avg_impr('ona', 'ours'):.1f} %, published {avg_impr('ona', 'paper'):.1f} % "
        f"(prose: {PROSE_AVG['ona']:.0f} %).",
        f"- Runtime: ONA ({RUNS} runs) takes "
        f"{fmt_s(min(ona[key]['main']['time'] for key in ona))} – "
        f"{fmt_s(max(ona[key]['main']['time'] for key in ona))} per cell here (EIA: "
        + ", ".join(fmt_s(ona[('eia', k)]['main']['time']) for k in KS)
        + f"; paper: {', '.join(f'{t} s' for t in T4['ona'])}); ONA* at most "
        f"{fmt_s(max(star[key]['time'] for key in star))}.",
    ]
    if star_misses != EXPECTED_STAR_MISSES:
        verdict.append("- **Warning:** the ONA* cells that miss at 2 decimals are not the ones the "
                       "explanation below was written for; re-read the tables and update the prose.")
    verdict.append("")
    out[header_end:header_end] = verdict

    # ---- gaps explained -------------------------------------------------------------------------
    out.append("### Gaps explained")
    out.append("")
    star_lines = []
    for d, k in sorted(star_misses):
        s = star[(d, k)]
        i = KS.index(k)
        p1 = P001_MDAV_STAR.get((d, k))
        star_lines.append(
            f"{DISPLAY[d]} k={k}: ours {s['il']:.4f}, published {T1[d]['ona-star'][i]:.2f} "
            f"({fmt_gap(rel_gap(s['il'], T1[d]['ona-star'][i]))}); ONA* converged after "
            f"{s['rounds']} rounds. ONA* starts from MDAV*, and in this cell Thaeter & Reischuk's (2021) MDAV* "
            f"({T1[d]['mdav-star'][i]:.2f}) "
            + ("is itself not ours" if not same2(mstar[(d, k)]["il"], T1[d]["mdav-star"][i])
               else "rounds like ours")
            + f" ({mstar[(d, k)]['il']:.4f})"
            + (f", while Thaeter & Reischuk (2018) prints {p1:.3f}, i.e. ours" if p1 else "")
            + ", so the paper's ONA* most likely started from a slightly different MDAV* "
            "partition. "
            f"On {N_PERM_STAR} row permutations our ONA* gives {s['perm'].min():.4f} – "
            f"{s['perm'].max():.4f}"
        )
    perm_dev = max(float(np.max(np.abs(v["perm"] - v["il"]))) for v in star.values())
    perm_same2 = sum(all(same2(x, v["il"]) for x in v["perm"]) for v in star.values())
    out.append(
        "1. **ONA*: " + (f"{len(star_misses)} of {len(star)} cells one unit off in the last "
                         "printed digit.** " + "; ".join(star_lines) + ". "
                         if star_misses else "no cell off at 2 decimals.** ")
        + "The section *mdav-family* shows that Thaeter & Reischuk's (2021) MDAV* row is one unit above the "
        "original MDAV* paper (Thaeter & Reischuk, 2018) and ours in a few cells (probably a different MDAV* code in "
        "Thaeter & Reischuk (2021)); ONA* inherits its start from MDAV*, so such a difference can propagate to "
        "the last digit of ONA*. Our own tie-breaking hardly matters: on permuted rows ONA* "
        f"moves by at most {perm_dev:.2g} (IL in %) and rounds like ours in {perm_same2} of "
        f"{len(star)} cells ((d)). All cells are far "
        f"inside the {100 * TOL['ona-star']:.0f} % rule (largest gap {fmt_gap(ws)}, "
        f"{DISPLAY[worst_star[0]]} k={worst_star[1]}, where 2 decimals are a coarse grid: "
        f"{star[worst_star]['il']:.4f} rounds to "
        f"{T1[worst_star[0]]['ona-star'][KS.index(worst_star[1])]:.2f})."
    )

    def cell(key):
        return f"{DISPLAY[key[0]]} k={key[1]}"

    def pub_of(key):
        return T1[key[0]]["ona"][KS.index(key[1])]

    higher, lower, inside = n_cls["ours higher"], n_cls["ours lower"], n_cls["inside"]
    never = [key for key in ona if not reaches(ona[key]["pooled"], pub_of(key)).any()]
    perm_hit = [key for key in never if reaches(np.array(perm_ona[key]), pub_of(key)).any()]
    census_n = ona[("census", KS[0])]["pooled"].size
    med_shift = ", ".join(f"{fmt_gap(median_shift[k])} (k={k})" for k in KS)
    low_shift = ", ".join(
        f"{fmt_gap(rel_gap(float(ona[('census', k)]['pooled'].min()), T2[k][0]))} (k={k})" for k in KS)
    k4 = ("census", 4)
    out.append(
        f"2. **ONA: the 2nd decimal of a best-of-{RUNS} is luck.** {len(ona_misses)} of "
        f"{len(ona)} cells of the seed-{MAIN_SEED} table do not round to the published value: "
        + ", ".join(f"{cell(key)} ({ona[key]['main']['best']:.4f} vs {pub_of(key):.2f})"
                    for key in ona_misses)
        + f". Each run starts from a random k-member clustering and ends in its own local "
        f"optimum (the seed-{MAIN_SEED} runs spread over several percent, (b)); the best of "
        f"{RUNS} is the tail of that distribution and moves by tenths of a percent from one "
        f"`random_state` to the next (column *best-of-100 per seed*). The paper shows the same: "
        f"its Table 1 prints {pub_of(k4):.2f} for Census k=4, below the lowest of the 1000 runs "
        f"of its own Table 2 ({T2[4][0]:.2f}), so the two tables come from different executions. "
        f"Against our S best-of-{RUNS} results per cell: the published value lies inside their "
        f"range in {len(inside)} cells ({', '.join(cell(x) for x in inside) or 'none'}), below "
        f"all of them in {len(higher)} ({', '.join(cell(x) for x in higher) or 'none'}) and "
        f"above all of them in {len(lower)} ({', '.join(cell(x) for x in lower) or 'none'}); "
        "being outside a range of only S draws of a tail statistic is not unusual in itself. "
        + (f"In {len(never)} cells, however, none of our pooled runs reaches the published value ("
           + ", ".join(f"{cell(x)}: paper {pub_of(x):.2f}, our lowest of "
                       f"{ona[x]['pooled'].size} runs {ona[x]['pooled'].min():.4f}" for x in never)
           + ")"
           + (f"; Census k=4 is the cell where the paper's own 1000 runs (Table 2, lowest "
              f"{T2[4][0]:.2f}) do not reach its Table 1 value either" if k4 in never else "")
           + f". Re-running those on {N_PERM_ONA} row permutations (the visiting order of "
           f"`foreach x ∈ X`, which the paper does not fix) reaches the published value in "
           f"{len(perm_hit)} of them ({', '.join(cell(x) for x in perm_hit) or 'none'}; table "
           "under (b))"
           + (": the order of the rows alone moves a best-of-100 by about as much as the gap. "
              if perm_hit else ". ")
           if never else "")
        + f"There may also be a small systematic difference: on Census our {census_n} runs "
        f"have medians {med_shift} against the paper's 1000 runs (Table 2), and lowest values "
        f"{low_shift}. So our typical run is up to {100 * max(median_shift.values()):.2f} % "
        "worse for the larger k while our best runs are as good as theirs, which makes a given "
        "best-of-100 value a little less likely for us. Algorithm 2 leaves open how "
        "the random k-member start is drawn (ours: consecutive blocks of k rows of a random "
        "permutation, the n mod k rest joining the last block), the order in which rows are "
        "visited (ours: the file's row order), how the recursive ONA of a split is seeded, and "
        "whether centroids move after every single change (ours: yes); any of these can shift "
        "the distribution by a few tenths of a percent. Every cell is within "
        f"{100 * abs(wo):.1f} % of the paper ({cell(worst_ona)}), inside the "
        f"{100 * TOL['ona']:.0f} % rule."
    )
    cap_total = sum(int((~ona[key]["converged"]).sum()) for key in ona)
    run_total = sum(ona[key]["converged"].size for key in ona)
    conv_max = max(int(ona[key]["rounds"][ona[key]["converged"]].max()) for key in ona
                   if ona[key]["converged"].any())
    cap_cells = sorted(((int((~ona[key]["converged"]).sum()), key) for key in ona), reverse=True)
    cap_text = ", ".join(f"{cell(key)} {c}/{ona[key]['converged'].size}"
                         for c, key in cap_cells if c > 0)
    cycle_text = ""
    if cycle is not None:
        cycle_text = (
            f" We followed one capped run ({cell(cycle['key'])}, run {cycle['run']} of "
            f"`random_state={MAIN_SEED}`) round by round (`max_rounds` = "
            f"{cycle['rounds'][0]}..{cycle['rounds'][-1]}): its IL alternates "
            + " / ".join(f"{v:.6f}" for v in cycle["il"][:4])
            + f" %, the partition after round r+2 is "
            f"{'the same as' if cycle['period2'] else '**not** the same as'} after round r, and "
            f"{len(cycle['moved'])} rows (0-based rows {', '.join(map(str, cycle['moved']))} of "
            f"the file) change groups every round"
            + (", moving together between the same two clusters: the first one visited moves "
               "to the cluster with the nearest centroid (case 1), which drags that centroid "
               "towards the second one, which follows; one round later the same happens in the "
               "other direction" if cycle["pair"] else "")
            + ". Case 1 decides by distance to a centroid, not by the SSE, so Algorithm 2 as "
            "printed can cycle; the loss differs only in the 6th significant digit, so the cap "
            "does not affect the tables. (Not a defect of the implementation as far as we can "
            "tell: the kernel equals the plain reference `tests/reference.py` in the tests.)"
            + ("" if cycle["consistent"] else " (**Note:** the replayed run did not reproduce the "
               "estimator's loss for that run; the trace may be of a different run.)")
        )
    out.append(
        f"3. **Convergence.** {cap_total} of {run_total} ONA runs stopped at the {MAX_ROUNDS}-round "
        f"cap without converging ({cap_text or 'none'}); every other run converged within "
        f"{conv_max} rounds. The paper says the cap was reached 'very rarely'; here it is "
        f"reached in more than 2 % of the runs only in "
        + (", ".join(cell(key) for c, key in cap_cells if c > 0.02 * ona[key]["converged"].size)
           or "no cell")
        + f".{cycle_text} ONA* converged in every cell after "
        f"{min(v['rounds'] for v in star.values())}–{max(v['rounds'] for v in star.values())} "
        "rounds (the last round changes nothing), far below its cap of 100; every ONA* change "
        "lowers the SSE, so it cannot cycle."
    )
    eia_paper = [t for t in T4["ona"]]
    speed = [p / ona[("eia", k)]["main"]["time"] for k, p in zip(KS, eia_paper)]
    slow_k = max(KS, key=lambda k: ona[("eia", k)]["main"]["time"])
    cap_k = max(KS, key=lambda k: int((~ona[("eia", k)]["main"]["converged"]).sum()))
    out.append(
        f"4. **Runtimes.** ONA on EIA takes "
        + ", ".join(fmt_s(ona[('eia', k)]['main']['time']) for k in KS)
        + f" here for {RUNS} runs against the paper's {', '.join(f'{t} s' for t in eia_paper)}, "
        f"i.e. {min(speed):.0f}-{max(speed):.0f}x less (numba-compiled, {threads} threads over "
        "the runs, O(d) incremental cost updates and a k-d tree over the centroids when there "
        "are >= 800 clusters, against the authors' Java on an i7 6850K; their threading is not "
        "stated). The paper's times vary irregularly with k (327 s at k=5, 138 s at k=4)"
        + (f"; ours are highest where most runs hit the round cap (k={slow_k})"
           if slow_k == cap_k else "")
        + ". MDAV* and ONA* on EIA take "
        f"{fmt_s(max(mstar[('eia', k)]['time'] for k in KS))} and "
        f"{fmt_s(max(star[('eia', k)]['time'] for k in KS))} at most, against the paper's 0-2 "
        "whole seconds; the ranking is the same (MDAV* ≈ ONA* << ONA). Census k=10, 100 "
        f"ONA runs: {fmt_s(ona[('census', 10)]['main']['time'])} here, 9 s in the paper's Table "
        "3. All our times were taken with other jobs running on this 2-core machine."
    )
    out.append("")
    elapsed = time.perf_counter() - t_start
    out.append(f"*Script runtime: {elapsed:.1f} s.*")

    path = update_section(DOCS / "reproduction.md", "ona", "\n".join(out),
                          "Reproduction of published results")
    print("\n".join(out))
    print(f"\nwrote section 'ona' of {path} in {elapsed:.1f} s")
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
