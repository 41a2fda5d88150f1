"""The incremental thesis' experiments (section 5.2): relative increment time tau+ and distortion delta vs nu.

Writes docs/incremental.md (the whole file) and docs/figures/incremental_*.png.

For each data set (50,000 x 15 standard Gaussian rows; the 48,842 UCI Adult rows with their 6
numeric attributes, shuffled), k = 10, and nu = 0.05 .. 0.95: the first (1 - nu) n rows are the
base (MDAV, stored in a state file), the rest is adjoined by every strategy from a copy of the
same base state, and the release is compared with one-shot MDAV on all rows. tau+ = time of
the increment algorithm / time of one-shot MDAV (medians of repeated runs; the state file
I/O is reported separately, it is not part of the algorithm).

The measurements are also written to bench/results/incremental.json; ``--from-json`` redraws
the page and figures from that file without measuring again.

Usage: .venv/bin/python bench/reproduce_incremental.py [--quick] [--from-json]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from _common import (  # noqa: E402
    DOCS, FIGURES, data_dir, load_json, machine_line, md_table, median, now_utc, pyplot, save_figure, save_json,
    update_section, write_markdown,
)

from incrowd import microaggregate  # noqa: E402
from incrowd.incremental import IncrementalMicroaggregation, fit_runtime_model, plan  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "incremental.json"
K = 10
NUS = [round(0.05 * i, 2) for i in range(1, 20)]
VARIANTS = [  # (label, strategy, inertial)
    ("2mdav", "2mdav", False),
    ("nn", "nn", False),
    ("nn-split-mid", "nn-split-mid", False),
    ("nn-split-end", "nn-split-end", False),
    ("nn (inertial)", "nn", True),
    ("nn-split-mid (inertial)", "nn-split-mid", True),
    ("nn-split-end (inertial)", "nn-split-end", True),
]
TIMED = ("2mdav", "nn-split-end")  # repeated for tau+; the others are timed once
ADULT_NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]


def gaussian_frame() -> pd.DataFrame:
    X = np.random.default_rng(0).standard_normal((50_000, 15))
    return pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(15)])


def adult_frame() -> pd.DataFrame:
    path = data_dir() / "adult.csv.gz"
    if not path.exists():
        raise SystemExit(f"{path} not found; set INCROWD_DATA to the folder holding adult.csv.gz")
    frame = pd.read_csv(path)[ADULT_NUMERIC].astype(np.float64)
    order = np.random.default_rng(0).permutation(frame.shape[0])  # random arrival order
    return frame.iloc[order].reset_index(drop=True)


def run_dataset(name: str, frame: pd.DataFrame, nus: list[float], repeats: int, work: Path) -> dict:
    n = frame.shape[0]
    qis = list(frame.columns)
    # warm-up: compile every kernel outside the timings
    warm = IncrementalMicroaggregation.from_base(frame.iloc[:200], work / "warm.duckdb", K, overwrite=True)
    for _, strategy, inertial in VARIANTS:
        shutil.copy(work / "warm.duckdb", work / "warm2.duckdb")
        IncrementalMicroaggregation.open(work / "warm2.duckdb").add(frame.iloc[200:400], strategy, inertial=inertial)
    del warm
    one_shot_times = []
    for _ in range(repeats):
        res = microaggregate(frame, K, "mdav")
        one_shot_times.append(res.seconds)
    t_one = median(one_shot_times)
    d_one = res.information_loss
    rows = []
    for nu in nus:
        n0 = int(round((1 - nu) * n))
        base_path = work / f"{name}-base.duckdb"
        base_times = []
        for _ in range(repeats):
            session = IncrementalMicroaggregation.from_base(frame.iloc[:n0], base_path, K, overwrite=True)
            base_times.append(session.batches[0]["seconds"])
        t0 = median(base_times)
        entry = {"nu": nu, "n0": n0, "tau0": t0 / t_one, "variants": {}}
        for label, strategy, inertial in VARIANTS:
            times, io_times = [], []
            for _ in range(repeats if label in TIMED else 1):
                path = work / f"{name}-inc.duckdb"
                shutil.copy(base_path, path)
                t_wall = time.perf_counter()
                session = IncrementalMicroaggregation.open(path)
                report = session.add(frame.iloc[n0:], strategy, inertial=inertial)
                wall = time.perf_counter() - t_wall
                times.append(report["seconds"])
                io_times.append(wall - report["seconds"])
            dist = session.distortion()
            entry["variants"][label] = {
                "tau_plus": median(times) / t_one,
                "io_seconds": median(io_times),
                "delta": dist["DT"] / d_one - 1.0,
                "DT": dist["DT"],
                "D0": dist["D0"],
                "D_plus": dist["D_plus"],
                "groups": session.n_groups,
                "splits": report["splits"],
            }
        rows.append(entry)
        print(f"{name} nu={nu:.2f}: tau0={entry['tau0']:.3f} "
              + " ".join(f"{lab}: d={v['delta'] * 100:.2f}% t+={v['tau_plus']:.3f}"
                         for lab, v in entry["variants"].items() if lab in TIMED), flush=True)
    return {"name": name, "n": n, "m": len(qis), "t_one": t_one, "D": d_one, "rows": rows}


def fit_exponent(nus, taus) -> tuple[float, float]:
    """tau+ = a * nu^b on log-log axes (least squares)."""
    b, log_a = np.polyfit(np.log(nus), np.log(taus), 1)
    return float(np.exp(log_a)), float(b)


def draw(result: dict, path: Path, title: str) -> None:
    nus = [r["nu"] for r in result["rows"]]
    fig, (ax1, ax2) = pyplot().subplots(1, 2, figsize=(11, 4.2), dpi=110)
    grid = np.linspace(min(nus), max(nus), 200)
    ax1.plot(grid, grid**2, color="0.6", ls="--", label="ν² (thesis model)")
    ax1.plot(grid, [1 - (1 - g) ** 2 + g for g in grid], color="0.8", ls=":",
             label="bound τ̄0 + τ− (ς = 1)")
    for label, style in (("2mdav", dict(marker="o", color="C0")),
                         ("nn-split-end", dict(marker="s", color="C3"))):
        ax1.plot(nus, [r["variants"][label]["tau_plus"] for r in result["rows"]], label=label, **style)
    ax1.set_xlabel("ν (increment share)")
    ax1.set_ylabel("τ+ = t_increment / t_one-shot")
    ax1.set_ylim(0, 1.05)
    ax1.grid(True, alpha=0.3)
    ax1.legend(fontsize=8, loc="upper left")
    ax1.set_title("relative increment time")
    styles = {"2mdav": "o-", "nn": "^-", "nn-split-mid": "v-", "nn-split-end": "s-",
              "nn (inertial)": "^:", "nn-split-mid (inertial)": "v:", "nn-split-end (inertial)": "s:"}
    for label in styles:
        ax2.plot(nus, [100 * r["variants"][label]["delta"] for r in result["rows"]], styles[label],
                 label=label, ms=4)
    ax2.set_xlabel("ν (increment share)")
    ax2.set_ylabel("δ = DT/D − 1 in %")
    ax2.set_yscale("symlog", linthresh=10)
    ax2.grid(True, alpha=0.3)
    ax2.legend(fontsize=7)
    ax2.set_title("relative distortion")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    save_figure(fig, path)


def section(result: dict, label: str, figure: str) -> str:
    rows_t, rows_d = [], []
    for r in result["rows"]:
        v = r["variants"]
        rows_t.append([f"{r['nu']:.2f}", f"{r['n0']:,}", f"{r['tau0']:.3f}",
                       f"{v['2mdav']['tau_plus']:.4f}", f"{r['nu'] ** 2:.4f}",
                       f"{v['nn-split-end']['tau_plus']:.4f}", f"{v['nn']['tau_plus']:.4f}",
                       f"{v['nn-split-mid']['tau_plus']:.4f}",
                       f"{v['nn-split-end']['io_seconds']:.2f}"])
        rows_d.append([f"{r['nu']:.2f}"] + [f"{100 * v[lab]['delta']:.2f}" for lab, _, _ in VARIANTS])
    nus = np.array([r["nu"] for r in result["rows"]])
    a, b = fit_exponent(nus, np.array([r["variants"]["2mdav"]["tau_plus"] for r in result["rows"]]))
    text = [
        f"### {label}: n = {result['n']:,}, m = {result['m']}, k = {K}",
        "",
        f"One-shot MDAV: D = {100 * result['D']:.4f} %, t = {result['t_one']:.3f} s (median).",
        f"2mdav's tau+ fitted as a * nu^b: a = {a:.3f}, b = {b:.3f} (the thesis' model: a = 1, b = 2).",
        "",
        f"![tau+ and delta against nu]({figure})",
        "",
        "Relative times (tau0 = base MDAV / one-shot; tau+ = increment algorithm / one-shot; the "
        "last column is the state-file I/O of one `add`, open + save, not part of tau+):",
        "",
        md_table(["nu", "base rows", "tau0", "tau+ 2mdav", "nu^2", "tau+ nn-split-end", "tau+ nn",
                  "tau+ nn-split-mid", "add I/O s"], rows_t, "rrrrrrrrr"),
        "",
        "Relative distortion delta = DT/D - 1 in % (D: one-shot MDAV on all rows):",
        "",
        md_table(["nu"] + [lab for lab, _, _ in VARIANTS], rows_d, "r" * (1 + len(VARIANTS))),
    ]
    return "\n".join(text)


def at(result: dict, nu: float, label: str) -> dict:
    return next(r for r in result["rows"] if abs(r["nu"] - nu) < 1e-9)["variants"][label]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 values of nu, 1 repeat (a smoke run)")
    parser.add_argument("--from-json", action="store_true", help=f"redraw from {RESULTS.name}")
    args = parser.parse_args()
    if args.from_json:
        saved = load_json(RESULTS)
    else:
        saved = measure(args.quick)
        if not args.quick:
            save_json(RESULTS, saved)
    render(saved)


def measure(quick: bool) -> dict:
    nus = [0.05, 0.1, 0.5] if quick else NUS
    repeats = 1 if quick else 3
    warnings.simplefilter("ignore")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="incrowd-incremental-") as tmp:
        work = Path(tmp)
        gauss = run_dataset("gaussian", gaussian_frame(), nus, repeats, work)
        adult = run_dataset("adult", adult_frame(), nus, repeats, work)
    model = fit_runtime_model("mdav", K, columns=15, sizes=(4000, 8000, 16000, 32000))
    return {
        "gaussian": gauss, "adult": adult, "model": model.to_dict(), "repeats": repeats,
        "quick": quick, "seconds": time.perf_counter() - started, "when": now_utc(),
        "machine": machine_line(),
    }


def render(saved: dict) -> None:
    from incrowd.incremental import RuntimeModel

    gauss, adult, repeats = saved["gaussian"], saved["adult"], saved["repeats"]
    md = saved["model"]
    model = RuntimeModel(exponent=md["exponent"], coefficient=md["coefficient"], source=md["source"])
    p_fit = plan(50_000, varsigma=5, tau_end=0.5, model=model)
    p_thesis = plan(50_000, varsigma=5, tau_end=0.5)
    quick = saved["quick"]

    draw(gauss, FIGURES / "incremental_gaussian.png", "50,000 x 15 standard Gaussian, k = 10 (our runs)")
    draw(adult, FIGURES / "incremental_adult.png", "48,842 x 6 Adult (numeric attributes), k = 10 (our runs)")

    g10 = {lab: at(gauss, 0.1, lab) for lab in ("2mdav", "nn-split-end", "nn-split-end (inertial)", "nn")}
    a_g, b_g = fit_exponent(np.array([r["nu"] for r in gauss["rows"]]),
                            np.array([r["variants"]["2mdav"]["tau_plus"] for r in gauss["rows"]]))
    nnse_max_s = max(r["variants"]["nn-split-end"]["tau_plus"] for r in gauss["rows"]) * gauss["t_one"]
    adult_max = max(r["variants"]["2mdav"]["tau_plus"] for r in adult["rows"])
    nnse_small_ms = 1000 * gauss["rows"][0]["variants"]["2mdav"]["tau_plus"] * gauss["t_one"]
    compare_rows = [
        ["Gaussian, nu = 0.10: delta of nn-split-end", "about 2 %", f"{100 * g10['nn-split-end']['delta']:.2f} %"],
        ["Gaussian, nu = 0.10: delta of 2mdav", "about 5 %", f"{100 * g10['2mdav']['delta']:.2f} %"],
        ["2mdav: tau+ against nu", "tau+ ~ nu^2", f"tau+ = {a_g:.2f} nu^{b_g:.2f}"],
        ["nn-split-end: tau+ for large nu", "stays below 10 %",
         f"max {100 * max(r['variants']['nn-split-end']['tau_plus'] for r in gauss['rows']):.1f} %"],
        ["inertial coefficient", "no real improvement, sometimes worse",
         f"nn-split-end at nu = 0.10: {100 * g10['nn-split-end']['delta']:.2f} % plain, "
         f"{100 * g10['nn-split-end (inertial)']['delta']:.2f} % inertial"],
        ["plain nn (no splitting)", "not a practical method; delta grows fast with nu",
         f"{100 * at(gauss, 0.5, 'nn')['delta']:.1f} % at nu = 0.5, "
         f"{100 * at(gauss, 0.9, 'nn')['delta']:.0f} % at nu = 0.9" if not quick else "n/a (quick run)"],
    ]
    body = [
        "# Incremental publication: the incremental thesis' experiments on our implementation",
        "",
        f"Generated by `bench/reproduce_incremental.py` on {saved['when']}, measuring for "
        f"{saved['seconds']:.0f} s (raw figures: `bench/results/incremental.json`).",
        f"Machine: {saved['machine']}.",
        "",
        "Method: base = MDAV (`incrowd.incremental.IncrementalMicroaggregation.from_base`), "
        "increment = each strategy of `add` started from a copy of the same base state file; "
        "one-shot = MDAV on all rows (`incrowd.microaggregate`). Distortion is SSE/SST on the "
        "quasi-identifiers standardized over all rows (DT = the release's information loss, D = "
        "one-shot MDAV's), delta = DT/D - 1 (the incremental thesis, section 3.2.4). tau0 and tau+ are the "
        f"base and increment algorithm times over the one-shot time, medians of {repeats} runs "
        "(2mdav and nn-split-end; the other strategies once). Data: `numpy.random.default_rng(0)"
        ".standard_normal((50000, 15))`; Adult = adult.csv.gz (adult.data + adult.test), the 6 "
        "numeric attributes " + ", ".join(ADULT_NUMERIC) + ", rows shuffled with "
        "`default_rng(0).permutation` (the thesis' second data set, 50,000 rows of 'Large "
        "Census', is not available here; Adult has 48,842 rows).",
        "",
        "## Comparison with the thesis' findings",
        "",
        md_table(["finding", "thesis", "ours"], compare_rows, "lll"),
        "",
        "Why ours differ where they do:",
        "",
        "- *Time ratios.* Our one-shot MDAV is the fast exact kernel ("
        f"{gauss['t_one']:.2f} s on the Gaussian data; the thesis' MDAV took 46.12 s, Table 5.2), "
        "so every cost of the increment that MDAV's speed-ups do not touch weighs more in tau+. "
        "nn-split-end's nearest-centroid scan is O(n+ * n0/k * m) and is what dominates its time: "
        f"in seconds it takes at most {nnse_max_s:.2f} s here over all nu, against up to 10 % of "
        "46 s = 4.6 s in the thesis, i.e. it is not slower than the thesis' in absolute terms, but "
        f"our one-shot run is {46.12 / gauss['t_one']:.0f}x faster, which inflates the ratio.",
        f"- *2mdav against nu^2.* tau+ = {a_g:.2f} nu^{b_g:.2f} on the Gaussian data, while MDAV "
        f"timed directly from 4,000 to 32,000 rows grows as n^{md['exponent']:.2f} (the planner "
        "row below): the increment's MDAV runs on rows standardized by the base's parameters, and "
        "the one-shot time in the denominator is a median of three noisy runs, so the ratios "
        "scatter around nu^2 rather than tracing it." 
        + f" For small nu the increment takes only milliseconds (nu = 0.05: {nnse_small_ms:.1f} ms "
        "for 2mdav), where timer and call overheads are a visible share of tau+.",
        "- *Adult's times.* MDAV's time on Adult depends on the rows, not only on their number "
        "(its attributes are heavily tied, and how fast the partial selection of the k-1 "
        "nearest runs depends on the ties), and one-shot timings on this shared 2-core machine "
        "vary by tens of percent between runs; so for large nu, where the increment and the one-shot are "
        f"nearly the same size, 2mdav's tau+ on Adult scatters around 1 (max {adult_max:.2f}) "
        "instead of following nu^2 closely; the Gaussian rows follow it more closely.",
        "- *Distortion.* delta depends on the data and on the arrival order, not on the machine; "
        "the Gaussian rows follow the thesis' recipe exactly, so the Gaussian deltas are the ones "
        "to compare. Adult's numeric attributes are heavily tied (age, education-num and "
        "hours-per-week take few values; capital-gain and capital-loss are mostly 0), which makes "
        "MDAV's one-shot D small and relative changes large.",
        "",
        "## The planner on this machine",
        "",
        "`incrowd incremental plan --rows 50000 --varsigma 5 --tau-end 0.5` (the thesis' running "
        "example: a 10-hour vote, a one-shot run of 2 hours, a one-hour deadline) with the thesis' "
        "quadratic model and with MDAV timed on this machine (4,000 .. 32,000 Gaussian rows, "
        "15 columns, k = 10):",
        "",
        md_table(
            ["model", "exponent", "nu-", "nu*", "nu_end (tau_end = 0.5)", "predicted one-shot"],
            [["thesis t ~ n^2", "2", f"{p_thesis.nu_minus:.4f}", f"{p_thesis.nu_star:.4f}",
              f"{p_thesis.nu_end:.4f}", "-"],
             ["fitted here", f"{model.exponent:.3f}", f"{p_fit.nu_minus:.4f}", f"{p_fit.nu_star:.4f}",
              "none" if p_fit.nu_end is None else f"{p_fit.nu_end:.4f}",
              f"{p_fit.seconds_one_shot:.2f} s"]],
            "lrrrrr"),
        "",
        "## Gaussian data",
        "",
        section(gauss, "Gaussian", "figures/incremental_gaussian.png"),
        "",
        "## Adult",
        "",
        section(adult, "Adult", "figures/incremental_adult.png"),
    ]
    write_markdown(DOCS / "incremental.md", "\n".join(body))
    if not quick:
        rows = [["the incremental thesis, Fig. 5.9 / ch. 6"] + row for row in compare_rows[:5]]
        rows.append(["the incremental thesis, Fig. 6.1, 6.2", "planner: nu* = nu- (varsigma = 5), nu_end (tau_end = 0.5)",
                     "0.146, 0.072",
                     f"{p_thesis.nu_star:.4f}, {p_thesis.nu_end:.4f} (closed form; tests/test_incremental_plan.py)"])
        update_section(
            DOCS / "reproduction.md", "incremental",
            "## Incremental publication (the incremental thesis)\n\n"
            f"Written by `bench/reproduce_incremental.py` ({saved['when']}; machine: {saved['machine']}). "
            "Data: 50,000 x 15 standard Gaussian rows (`default_rng(0)`), k = 10, base = MDAV; full "
            "tables, Adult, and plots in [incremental.md](incremental.md).\n\n"
            + md_table(["source", "finding", "thesis", "ours"], rows, "llll"),
            "Reproduction of the papers' figures",
        )
    print(f"wrote {DOCS / 'incremental.md'}")


if __name__ == "__main__":
    main()
