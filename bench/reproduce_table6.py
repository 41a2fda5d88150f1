"""Reproduce Thaeter & Reischuk's (2021) Table 6 (every row) and redraw its Figure 2 from our own runs.

Run from the repository root: ``.venv/bin/python bench/reproduce_table6.py``. Writes the
section ``table6`` of ``docs/reproduction.md`` (other sections are left alone) and the figures
``docs/figures/figure2_adult.png`` and ``docs/figures/figure2_credit.png`` (atomically). Takes
about 8-10 minutes on a 2-core machine, most of it ONA* on Credit Card (one run per k); progress
goes to stdout.

* Table 6 of Thaeter & Reischuk ("Scalable k-anonymous Microaggregation", SECRYPT
  2021, appendix): information loss in % (2 decimals) and runtime (whole seconds, Java on an
  Intel Core i7 6850K) of MDAV*, ONA*, Mondrian, Mondrian V, Mondrian V2D, MONA_0.5 and
  MONA 2D_0.5 on Adult (48,842 x 3: age, education-num, hours-per-week) and Credit Card
  (30,000 x 24: every attribute but ID), k = 2, 3, 4, 5, 7, 10. The numbers below were typed in
  from the paper's text (``../shared/papers/000_*.txt``); the extraction loses the stars, the
  rows are MDAV*, ONA*, MONDRIAN, MONDRIAN V, MONDRIAN V2D, MONA_0.5, MONA 2D_0.5. They are kept
  in ``bench/_common/papers.py``, with the other published values.
* The Mondrian rows are shown with the estimators' default (``split_2k=True``) and with
  ``split_2k=False``, the rule of the table; the tie study behind them is in the section
  ``mondrian`` (``bench/reproduce_mondrian.py``) and is not repeated here.
* MONA experiments: which reading of Algorithm 6 the published MONA rows come from (ONA* on
  re-standardized parts, value cuts, the hand-over rule, the row order ONA* sees, ...), computed
  by small numpy helpers below on top of the library's kernels.
* Figure 2: IL against rho = 0, 0.1, ..., 1 at k = 10 on both data sets, with the runtime per
  rho beside Thaeter & Reischuk (2021), Table 5 (MONA runtimes on Credit Card).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from incrowd import (  # noqa: E402
    MDAVStar,
    MONA,
    MONA2D,
    Mondrian,
    MondrianV,
    MondrianV2D,
    ONAStar,
)
from incrowd.cli._bench_entry import standardize  # noqa: E402
from incrowd.cli._bench_entry import (  # noqa: E402
    RULE_V2D,
    RULE_VARIANCE,
    mondrian_labels,
)
from incrowd.cli._bench_entry import ona_star_labels, sst_per_row  # noqa: E402
from incrowd.microaggregation.mondrian.mona import split_limit  # noqa: E402

from _common import (  # noqa: E402
    DOCS,
    FIGURES,
    TABLE5_2021,
    TABLE6_2021,
    TABLE6_2021_SECONDS,
    comparison_rows,
    fmt_gap,
    fmt_s,
    il_percent,
    load_adult,
    load_credit,
    machine_line,
    md_table,
    median,
    now_utc,
    pyplot,
    rel_gap,
    same2,
    same_groups,
    save_figure,
    time_runs,
    update_section,
)
from reproduce_mondrian import DATA_NOTES, _project, _scores  # noqa: E402

KS = [2, 3, 4, 5, 7, 10]
SETS = ["adult", "credit"]
DISPLAY = {"adult": "Adult", "credit": "Credit Card"}
METHODS = ["mdav*", "ona*", "mondrian", "mondrian-v", "mondrian-v2d", "mona", "mona2d"]
NAMES = {
    "mdav*": "MDAV*", "ona*": "ONA*", "mondrian": "Mondrian", "mondrian-v": "Mondrian V",
    "mondrian-v2d": "Mondrian V2D", "mona": "MONA_0.5", "mona2d": "MONA 2D_0.5",
}
RHO = 0.5
FAST_REPEATS = 5  # Mondrian and MONA: median of 5 after one untimed run
RHOS = [round(0.1 * i, 1) for i in range(11)]
FIG_K = 10
PERM_SEEDS = 5  # random row orders inside the parts (order-sensitivity experiments)
# TABLE6_QUICK=1: a smoke test on the first 3,000 rows of each file; prints, writes nothing.
QUICK = bool(os.environ.get("TABLE6_QUICK"))

# Thaeter & Reischuk (2021), appendix Table 6: information loss in %, k = 2, 3, 4, 5, 7, 10.
PUBLISHED = TABLE6_2021  # bench/_common/papers.py
# Table 6, "Runtime on Adult" / "Runtime on Credit Card": whole seconds as printed.
PUBLISHED_SECONDS = TABLE6_2021_SECONDS
# Thaeter & Reischuk (2021), Table 5: runtimes (whole seconds) of MONA_rho and MONA 2D_rho on Credit Card; only
# rho = 0.3..1 are printed. Column k = 10 (the k of Figure 2) and all k for reference.
TABLE_5 = TABLE5_2021

MONDRIAN_CLASSES = {"mondrian": Mondrian, "mondrian-v": MondrianV, "mondrian-v2d": MondrianV2D}


def n_equal(vals, pub) -> int:
    return sum(same2(v, p) for v, p in zip(vals, pub))


def max_gap(vals, pub) -> float:
    return max(abs(v / p - 1) for v, p in zip(vals, pub))


# ---------------------------------------------------------------------------------------------
# MONA variants (plain numpy on top of the kernels)


def parts_positional(Z, k, rule, limit, diag_weight=1.0, split_2k=True):
    """The parts of MONA's cut phase, each as its rows in the part's own order.

    Position cuts with ties kept in the parent's order (a stable sort at every node), as the
    Mondrian kernel does; ``rule`` is "variance" or "v2d" (``diag_weight`` 1: x_a +- x_b, 0.5:
    unit vectors). A part of at most ``limit`` rows, or one Mondrian would not cut any more, is
    a leaf. The order of a leaf is the order of its parent's cut projection (what a list-based
    implementation hands to ONA*).
    """
    smallest = 2 * k if split_2k else 2 * k + 1
    out = []
    stack = [np.arange(Z.shape[0])]
    while stack:
        order = stack.pop()
        m = order.size
        if m <= limit or m < smallest:
            out.append(order)
            continue
        sc, dirs = _scores(Z[np.sort(order)], rule, diag_weight)
        p = _project(Z[order], dirs[int(np.argmax(sc))])
        ranked = np.argsort(p, kind="stable")
        stack.append(order[ranked[m // 2:]])
        stack.append(order[ranked[: m // 2]])
    return out


def parts_value(Z, k, limit, mode):
    """MONA's cut phase with value cuts (Mondrian V directions); each part in row order.

    ``mode`` "le": Algorithm 6 as printed, left = rows with x <= the median (the element at
    position floor(m/2) of the sorted projection); "strict": LeFevre's cut between distinct
    values (< or <= that element) nearer to m/2. When the cut leaves fewer than k rows on a
    side, the next best direction is tried; when none allows a cut, the part is a leaf (handed
    to ONA* whatever its size).
    """
    out = []
    stack = [np.arange(Z.shape[0])]
    while stack:
        rows = stack.pop()
        m = rows.size
        if m <= limit or m < 2 * k:
            out.append(rows)
            continue
        sc, dirs = _scores(Z[rows], "variance", 1.0)
        halves = None
        for t in np.argsort(-sc, kind="stable"):
            p = _project(Z[rows], dirs[t])
            pivot = np.sort(p)[m // 2]
            le, lt = int((p <= pivot).sum()), int((p < pivot).sum())
            if mode == "le":
                r, mask = le, p <= pivot
            else:
                ok = [c for c in (lt, le) if k <= c <= m - k]
                r = min(ok, key=lambda c: (abs(c - m / 2), c)) if ok else 0
                mask = p <= pivot if r == le else p < pivot
            if k <= r <= m - k:
                halves = (rows[mask], rows[~mask])
                break
        if halves is None:
            out.append(rows)
            continue
        stack.append(halves[1])
        stack.append(halves[0])
    return out


def parts_of_labels(labels):
    order = np.argsort(labels, kind="stable")
    bounds = np.searchsorted(labels[order], np.arange(labels.max() + 2))
    return [order[bounds[p]: bounds[p + 1]] for p in range(bounds.size - 1)]


def _restandardize(S):
    mu, sd = S.mean(axis=0), S.std(axis=0)
    return np.ascontiguousarray(np.where(sd > 0, (S - mu) / np.where(sd > 0, sd, 1.0), 0.0))


def ona_on_parts(Z, k, parts, *, order="row", space="global", X=None, rng=None):
    """Labels of MONA's ONA* phase on the given parts.

    ``order``: the row order ONA* sees, "row" (ascending row index, the library's), "given"
    (the part's order from :func:`parts_positional`) or "random" (``rng``); ``space``: "global"
    (the globally standardized rows, the library's), "restd" (each part standardized again)
    or "raw" (original units ``X``). Parts of fewer than 2k rows are one group.
    """
    labels = np.empty(Z.shape[0], np.int64)
    nxt = 0
    scale_z = sst_per_row(Z)
    for rows in parts:
        if order == "row":
            rows = np.sort(rows)
        elif order == "random":
            rows = rng.permutation(rows)
        if rows.size < 2 * k:
            labels[rows] = nxt
            nxt += 1
            continue
        if space == "global":
            sub, scale = np.ascontiguousarray(Z[rows]), scale_z
        elif space == "restd":
            sub = _restandardize(Z[rows])
            scale = float(sub.shape[1])  # SST/n of a standardized part (a floor for rounding)
        else:
            sub, scale = np.ascontiguousarray(X[rows]), sst_per_row(X)
        lab, _, _ = ona_star_labels(sub, k, 100, -1, scale)
        labels[rows] = lab + nxt
        nxt += int(lab.max()) + 1
    return labels


# ---------------------------------------------------------------------------------------------
# Figure 2


def draw_figure2(ds, curves, path, n_rows, dims):
    """curves: label -> (values per rho, style dict)."""
    fig, ax = pyplot().subplots(figsize=(6.6, 4.4), dpi=120)
    for label, (vals, style) in curves.items():
        ax.plot(RHOS, vals, label=label, **style)
    ax.set_xlabel("split limit exponent ρ")
    ax.set_ylabel("information loss in %")
    ax.set_xticks(RHOS)
    ax.set_title(f"{DISPLAY[ds]}: n = {n_rows:,}, d = {dims}, k = {FIG_K} (our runs)")
    ax.grid(True, alpha=0.3)
    # lower left: empty in both panels (the curves start high and end low)
    ax.legend(fontsize=8, loc="lower left", bbox_to_anchor=(0.0, 0.07), framealpha=0.9)
    fig.tight_layout()
    save_figure(fig, path)


# ---------------------------------------------------------------------------------------------


def main() -> None:
    t_start = time.perf_counter()
    raw = {"adult": load_adult(), "credit": load_credit()}
    if QUICK:
        raw = {ds: np.ascontiguousarray(X[:3000]) for ds, X in raw.items()}
    Z = {ds: np.ascontiguousarray(standardize(X)[0]) for ds, X in raw.items()}
    for ds in SETS:
        assert QUICK or raw[ds].shape == {"adult": (48842, 3), "credit": (30000, 24)}[ds]
    small = raw["adult"][:300]
    for cls in (MDAVStar, ONAStar, Mondrian, MondrianV, MondrianV2D, MONA, MONA2D):
        cls(k=2).fit(small)  # load / compile the numba kernels
    print(f"loaded and compiled in {time.perf_counter() - t_start:.1f} s", flush=True)

    # ---- Table 6 ---------------------------------------------------------------------------
    il: dict[tuple, float] = {}  # (ds, method, setting, k) -> IL %
    secs: dict[tuple, float] = {}
    labels_of: dict[tuple, np.ndarray] = {}
    models: dict[tuple, object] = {}

    def run(ds, method, setting, k, make, repeats):
        # one run only for the slow methods: no untimed warm-up either
        times, model = time_runs(lambda: make().fit(raw[ds]), repeats, 1 if repeats > 1 else 0)
        key = (ds, method, setting, k)
        il[key] = 100 * model.information_loss_
        secs[key] = median(times)
        labels_of[key] = model.labels_
        models[key] = model
        print(f"  {DISPLAY[ds]:12s} {NAMES[method]:13s} {setting:16s} k={k:2d}: IL {il[key]:8.4f} %"
              f"  {fmt_s(secs[key])}", flush=True)

    for ds in SETS:
        for k in KS:
            run(ds, "mdav*", "", k, lambda: MDAVStar(k=k), 1)
            run(ds, "ona*", "", k, lambda: ONAStar(k=k), 1)
            for method, cls in MONDRIAN_CLASSES.items():
                run(ds, method, "split_2k=True", k, lambda: cls(k=k), FAST_REPEATS)
                run(ds, method, "split_2k=False", k, lambda: cls(k=k, split_2k=False),
                    FAST_REPEATS)
            run(ds, "mona", "default", k, lambda: MONA(k=k, rho=RHO), FAST_REPEATS)
            run(ds, "mona", "split_2k=False", k, lambda: MONA(k=k, rho=RHO, split_2k=False), 1)
            run(ds, "mona2d", "default", k, lambda: MONA2D(k=k, rho=RHO), FAST_REPEATS)
            run(ds, "mona2d", "unit", k, lambda: MONA2D(k=k, rho=RHO, diagonals="unit"),
                FAST_REPEATS)
            run(ds, "mona2d", "unit, split_2k=False", k,
                lambda: MONA2D(k=k, rho=RHO, diagonals="unit", split_2k=False), 1)
    t_table = time.perf_counter() - t_start
    print(f"Table 6 runs done at {t_table:.0f} s", flush=True)

    # Which settings are shown in the main table (MONA with split_2k=False only if it differs)
    mona_s2k_same = all(same_groups(labels_of[(ds, "mona", "default", k)],
                                    labels_of[(ds, "mona", "split_2k=False", k)])
                        for ds in SETS for k in KS)
    mona2d_s2k_same = all(same_groups(labels_of[(ds, "mona2d", "unit", k)],
                                      labels_of[(ds, "mona2d", "unit, split_2k=False", k)])
                          for ds in SETS for k in KS)
    SHOWN = [
        ("mdav*", "", "MDAVStar(k)"),
        ("ona*", "", "ONAStar(k)"),
        ("mondrian", "split_2k=True", "Mondrian(k) (default, split_2k=True)"),
        ("mondrian", "split_2k=False", "Mondrian(k, split_2k=False)"),
        ("mondrian-v", "split_2k=True", "MondrianV(k) (default)"),
        ("mondrian-v", "split_2k=False", "MondrianV(k, split_2k=False)"),
        ("mondrian-v2d", "split_2k=True", "MondrianV2D(k) (default)"),
        ("mondrian-v2d", "split_2k=False", "MondrianV2D(k, split_2k=False)"),
        ("mona", "default", "MONA(k, rho=0.5) (default)"),
    ]
    if not mona_s2k_same:
        SHOWN.append(("mona", "split_2k=False", "MONA(k, rho=0.5, split_2k=False)"))
    SHOWN += [
        ("mona2d", "default", "MONA2D(k, rho=0.5) (default, diagonals=\"sum\")"),
        ("mona2d", "unit", "MONA2D(k, rho=0.5, diagonals=\"unit\")"),
    ]
    # the setting that stands for each published row in the verdict
    MATCHING = {"mdav*": "", "ona*": "", "mondrian": "split_2k=False",
                "mondrian-v": "split_2k=False", "mondrian-v2d": "split_2k=False",
                "mona": "default", "mona2d": "unit"}

    def vals(ds, method, setting):
        return [il[(ds, method, setting, k)] for k in KS]

    # ---- MONA experiments ------------------------------------------------------------------
    print("MONA experiments", flush=True)
    exp: dict[tuple, list] = {}  # (ds, label) -> IL per k, or (min, max) per k
    part_info: dict[tuple, str] = {}
    part_max: dict[str, int] = {}
    limit = {ds: split_limit(Z[ds].shape[0], RHO) for ds in SETS}
    checks_ok = True
    for ds in SETS:
        Zd, Xd, lim = Z[ds], raw[ds], limit[ds]
        rows = {key: [] for key in ("restd", "value-le", "value-strict", "given", "raw",
                                    "perm", "2limit", "lt", "v2d-sum")}
        for k in KS:
            pos = parts_positional(Zd, k, "variance", lim)
            kern = mondrian_labels(Zd, k, RULE_VARIANCE, False, True, lim)
            lab_pos = np.empty(Zd.shape[0], np.int64)
            for i, r in enumerate(pos):
                lab_pos[r] = i
            checks_ok &= same_groups(lab_pos, kern)
            checks_ok &= same_groups(ona_on_parts(Zd, k, pos),
                                     labels_of[(ds, "mona", "default", k)])
            sizes = [r.size for r in pos]
            part_info[(ds, "position")] = f"{len(pos)} parts of {min(sizes)}–{max(sizes)} rows"
            part_max[ds] = max(part_max.get(ds, 0), max(sizes))
            # (c) |X| < n^rho instead of <= n^rho: parts of at most limit - 1 rows
            kern_lt = mondrian_labels(Zd, k, RULE_VARIANCE, False, True, lim - 1)
            rows["lt"].append(same_groups(kern, kern_lt))
            rows["restd"].append(il_percent(Zd, ona_on_parts(Zd, k, pos, space="restd")))
            for mode in ("le", "strict"):
                vp = parts_value(Zd, k, lim, mode)
                vs = [r.size for r in vp]
                part_info[(ds, "value-" + mode)] = f"{len(vp)} parts of {min(vs)}–{max(vs)} rows"
                rows["value-" + mode].append(il_percent(Zd, ona_on_parts(Zd, k, vp)))
            rows["given"].append(il_percent(Zd, ona_on_parts(Zd, k, pos, order="given")))
            rows["raw"].append(il_percent(Zd, ona_on_parts(Zd, k, pos, space="raw", X=Xd)))
            perm = [il_percent(Zd, ona_on_parts(Zd, k, pos, order="random",
                                            rng=np.random.default_rng(seed)))
                    for seed in range(PERM_SEEDS)]
            rows["perm"].append((min(perm), max(perm)))
            big = parts_positional(Zd, k, "variance", 2 * lim)
            bs = [r.size for r in big]
            part_info[(ds, "2limit")] = f"{len(big)} parts of {min(bs)}–{max(bs)} rows"
            rows["2limit"].append(il_percent(Zd, ona_on_parts(Zd, k, big)))
            rows["v2d-sum"].append(il[(ds, "mona2d", "default", k)])
            print(f"  {DISPLAY[ds]} k={k} done", flush=True)
        for key, v in rows.items():
            exp[(ds, key)] = v
        # MONA 2D with unit diagonals: sensitivity to the row order inside the parts
        spread = []
        for k in KS:
            parts = parts_of_labels(mondrian_labels(Zd, k, RULE_V2D, True, True, lim))
            perm = [il_percent(Zd, ona_on_parts(Zd, k, parts, order="random",
                                            rng=np.random.default_rng(seed)))
                    for seed in range(PERM_SEEDS)]
            spread.append((min(perm), max(perm)))
        exp[(ds, "2d-unit-perm")] = spread
    t_exp = time.perf_counter() - t_start
    print(f"experiments done at {t_exp:.0f} s", flush=True)

    # ---- Figure 2 --------------------------------------------------------------------------
    print("Figure 2", flush=True)
    fig_il: dict[tuple, list] = {}
    fig_t: dict[tuple, list] = {}
    fig_rounds: dict[tuple, list] = {}
    rho1_same = True
    for ds in SETS:
        ona_key = (ds, "ona*", "", FIG_K)
        flat = {
            "mondrian-v": MondrianV(k=FIG_K).fit(raw[ds]),
            "mondrian-v2d": MondrianV2D(k=FIG_K).fit(raw[ds]),
        }
        for key, model in flat.items():
            fig_il[(ds, key)] = [100 * model.information_loss_] * len(RHOS)
        fig_il[(ds, "ona*")] = [il[ona_key]] * len(RHOS)
        for curve, make in (("mona", lambda r: MONA(k=FIG_K, rho=r)),
                            ("mona2d", lambda r: MONA2D(k=FIG_K, rho=r)),
                            ("mona2d-unit", lambda r: MONA2D(k=FIG_K, rho=r, diagonals="unit"))):
            ils, ts, rounds = [], [], []
            for rho in RHOS:
                if rho == 1.0 and ds == "credit":
                    # MONA_1 = ONA* exactly (one part: the whole data set); reuse the Table 6 run
                    ils.append(il[ona_key])
                    ts.append(secs[ona_key])
                    rounds.append(models[ona_key].n_rounds_)
                    continue
                if rho >= 0.9:
                    t0 = time.perf_counter()
                    model = make(rho).fit(raw[ds])
                    times = [time.perf_counter() - t0]
                else:
                    times, model = time_runs(lambda: make(rho).fit(raw[ds]), 3, 0)
                if rho == 1.0:
                    rho1_same &= same_groups(model.labels_, labels_of[ona_key])
                if rho == 0.0:
                    base = flat["mondrian-v2d" if curve.startswith("mona2d") else "mondrian-v"]
                    if curve != "mona2d-unit":
                        rho1_same &= same_groups(model.labels_, base.labels_)
                ils.append(100 * model.information_loss_)
                ts.append(median(times))
                rounds.append(model.n_rounds_)
            fig_il[(ds, curve)] = ils
            fig_t[(ds, curve)] = ts
            fig_rounds[(ds, curve)] = rounds
            print(f"  {DISPLAY[ds]} {curve}: " + " ".join(f"{v:.3f}" for v in ils), flush=True)
        curves = {
            "Mondrian V": (fig_il[(ds, "mondrian-v")], dict(color="tab:blue", ls="-")),
            "Mondrian V2D (x_a ± x_b score)": (fig_il[(ds, "mondrian-v2d")],
                                               dict(color="tab:orange", ls="-")),
            "ONA*": (fig_il[(ds, "ona*")], dict(color="tab:green", ls="-")),
            "MONA_ρ": (fig_il[(ds, "mona")], dict(color="tab:red", marker="o", ms=4)),
            "MONA 2D_ρ (default, x_a ± x_b score)": (fig_il[(ds, "mona2d")],
                                                      dict(color="tab:purple", marker="s", ms=4)),
            "MONA 2D_ρ (unit diagonals, as Table 6)": (fig_il[(ds, "mona2d-unit")],
                                                        dict(color="tab:purple", ls="--",
                                                             marker="^", ms=4, alpha=0.7)),
        }
        png = (Path("/tmp") if QUICK else FIGURES) / f"figure2_{ds}.png"
        draw_figure2(ds, curves, png, raw[ds].shape[0], raw[ds].shape[1])
    t_fig = time.perf_counter() - t_start
    print(f"figures done at {t_fig:.0f} s", flush=True)

    # ---- Markdown --------------------------------------------------------------------------
    out: list[str] = []
    out.append("## Table 6 (every row) and Figure 2 of Thaeter & Reischuk (2021)")
    out.append("")
    out.append(f"*Generated by `bench/reproduce_table6.py` on {now_utc()}.*")
    out.append("")
    out.append(f"- **Machine:** {machine_line()}. Measured while other work ran on the same "
               "2 cores, so the runtimes are noisy (the IL values are not).")
    out.append("- **Data:** " + "; ".join(f"{DISPLAY[d]}: {DATA_NOTES[d]}" for d in SETS)
               + ". Read from `data_dir()`.")
    out.append(
        "- **Methods:** the estimators `MDAVStar`, `ONAStar`, `Mondrian`, `MondrianV`, "
        "`MondrianV2D`, `MONA`, `MONA2D` (`from incrowd import ...`), `fit` on the raw values "
        "(each column standardized to mean 0, variance 1 inside); IL = SSE/SST on the "
        f"standardized data, in %. MONA: rho = {RHO}, split limit floor(n^rho) = "
        f"{limit['adult']} rows on Adult, {limit['credit']} on Credit Card."
    )
    out.append("- **k:** 2, 3, 4, 5, 7, 10, the columns of Table 6; Figure 2 at k = 10.")
    out.append(
        "- **Published values:** Thaeter & Reischuk (SECRYPT 2021), appendix "
        "Table 6 (IL to 2 decimals; runtimes in whole seconds, Java, Intel Core i7 6850K at "
        "4 GHz), Table 5 (MONA runtimes on Credit Card) and Figure 2 (curves only, no numbers "
        "printed), typed in from the paper's text. *Rounds to published*: ours printed to 2 "
        "decimals equals the published value. Relative gap = ours / published - 1."
    )
    out.append(
        "- **Related section:** the Mondrian rows and the study of the median-cut and tie "
        "rules behind them are in section `mondrian` (`bench/reproduce_mondrian.py`); not "
        "repeated here."
    )
    out.append("")

    # verdict
    verdict = ["### Verdict", ""]
    for ds in SETS:
        parts_txt = []
        for method in METHODS:
            setting = MATCHING[method]
            v = vals(ds, method, setting)
            parts_txt.append(f"{NAMES[method]} {n_equal(v, PUBLISHED[ds][method])}/6")
        verdict.append(f"- **{DISPLAY[ds]}**, cells that round to the published value (setting "
                       "that stands for the row, see the table): " + ", ".join(parts_txt) + ".")
    tot_default = sum(n_equal(vals(ds, m, s), PUBLISHED[ds][m]) for ds in SETS
                      for m, s in [("mdav*", ""), ("ona*", ""), ("mondrian", "split_2k=True"),
                                   ("mondrian-v", "split_2k=True"),
                                   ("mondrian-v2d", "split_2k=True"), ("mona", "default"),
                                   ("mona2d", "default")])
    tot_match = sum(n_equal(vals(ds, m, MATCHING[m]), PUBLISHED[ds][m]) for ds in SETS
                    for m in METHODS)
    verdict.append(
        f"- In all, **{tot_match} of 84 cells** round to the published value with "
        "`split_2k=False` for the three Mondrian rows and `diagonals=\"unit\"` for MONA 2D; "
        f"with every estimator's defaults, {tot_default} of 84."
    )
    def count_txt(setting, methods):
        return ", ".join(f"{DISPLAY[ds]} {NAMES[m]} "
                         f"{n_equal(vals(ds, m, setting), PUBLISHED[ds][m])}/6"
                         for ds in SETS for m in methods)
    verdict.append(
        "- **Mondrian rows:** the defaults (`split_2k=True`, groups of k..2k-1 rows) do not "
        "reproduce the table (" + count_txt("split_2k=True", MONDRIAN_CLASSES) + "); "
        "`split_2k=False` (groups of k..2k) is the table's rule ("
        + count_txt("split_2k=False", MONDRIAN_CLASSES) + "); see Gaps explained for the "
        "cells it misses."
    )
    mona_gaps = {ds: [x / p - 1 for x, p in zip(vals(ds, "mona", "default"),
                                               PUBLISHED[ds]["mona"]) if not same2(x, p)]
                 for ds in SETS}
    verdict.append(
        "- **MONA_0.5:** our default: " + ", ".join(
            f"{DISPLAY[ds]} {6 - len(mona_gaps[ds])}/6"
            + (f" (misses {100 * min(mona_gaps[ds]):+.1f} to {100 * max(mona_gaps[ds]):+.1f} %)"
               if mona_gaps[ds] else "") for ds in SETS)
        + ". No other reading of Algorithm 6 we tried does better on both data sets "
        "(experiments in (c)). `split_2k=False` changes nothing "
        f"({'identical groups in all 12 cells' if mona_s2k_same else 'it DOES change groups'})."
    )
    verdict.append(
        "- **MONA 2D_0.5:** the published row was computed with the **unit-vector diagonal "
        "score** (`MONA2D(diagonals=\"unit\")`, the paper's prose), not with the x_a +- x_b "
        "score that reproduces the Mondrian V2D row and that is our default. Default: "
        + ", ".join(f"{DISPLAY[ds]} {n_equal(vals(ds, 'mona2d', 'default'), PUBLISHED[ds]['mona2d'])}/6"
                    for ds in SETS)
        + "; unit: "
        + ", ".join(f"{DISPLAY[ds]} {n_equal(vals(ds, 'mona2d', 'unit'), PUBLISHED[ds]['mona2d'])}/6"
                    for ds in SETS)
        + ". We keep the default (it matches the Mondrian V2D row and loses less); the unit "
        "score is one parameter away."
    )
    ona_adult = max(secs[("adult", "ona*", "", k)] for k in KS)
    verdict.append(
        f"- **Runtimes:** ONA* takes at most {fmt_s(ona_adult)} per k on Adult here (paper: "
        "116-538 s) and "
        f"{fmt_s(max(secs[('credit', 'ona*', '', k)] for k in KS))} on Credit Card (paper: "
        "106-292 s); MDAV* at most "
        f"{fmt_s(max(secs[(ds, 'mdav*', '', k)] for ds in SETS for k in KS))} (paper: 40-223 "
        "s); every Mondrian and MONA_0.5 cell is well under a second, as in the paper (0-2 s)."
    )
    verdict.append("")
    out += verdict

    # (a) IL table
    out.append("### (a) Information loss in %, ours vs Table 6")
    out.append("")
    out.append(
        "Four lines per setting: ours (4 decimals), the published value, the relative gap and "
        "whether ours rounds to it. The Mondrian rows are shown twice: with the estimators' "
        "default `split_2k=True` (parts of exactly 2k rows are split, groups of k..2k-1 rows) "
        "and with `split_2k=False` (groups of k..2k), which is the rule the table was computed "
        "with. MONA 2D is shown with our default diagonal score and with "
        "`diagonals=\"unit\"`, which is what the table was computed with."
        + (" MONA with `split_2k=False` is not shown: it gives the same groups as the default "
           "in all 12 cells (the parts handed to ONA* have "
           + " and ".join(part_info[(ds, "position")].split(" parts of ")[1] for ds in SETS)
           + ", far above 2k)." if mona_s2k_same else "")
    )
    out.append("")
    for ds in SETS:
        rows = []
        for method, setting, label in SHOWN:
            v = vals(ds, method, setting)
            pub = PUBLISHED[ds][method]
            rows += comparison_rows([f"**{NAMES[method]}**", f"`{label}`"], v, pub, "rounds to published")
        out.append(f"**{DISPLAY[ds]}**")
        out.append("")
        out.append(md_table(["row", "estimator", ""] + [f"k={k}" for k in KS], rows,
                            "lll" + "r" * len(KS)))
        out.append("")

    # (b) runtimes
    out.append("### (b) Runtime, ours beside Table 6's")
    out.append("")
    out.append(
        f"Ours: wall time of `fit` on the raw data (standardization, clustering, centroids, "
        f"IL). Mondrian rows and MONA: median of {FAST_REPEATS} runs after one untimed run; "
        "MDAV* and ONA*: one run (expensive). Paper: whole seconds as printed (Java, i7 "
        "6850K). The Mondrian and MONA 2D times are those of the setting that reproduces the "
        "table (`split_2k=False`, `diagonals=\"unit\"`); MONA's is the default's. Cells: "
        "`ours / paper`."
    )
    out.append("")
    time_rows = []
    for ds in SETS:
        for method in METHODS:
            setting = MATCHING[method]
            time_rows.append([DISPLAY[ds], NAMES[method]]
                             + [f"{fmt_s(secs[(ds, method, setting, k)])} / "
                                f"{PUBLISHED_SECONDS[ds][method][i]} s"
                                for i, k in enumerate(KS)])
    out.append(md_table(["data", "method"] + [f"k={k}" for k in KS], time_rows,
                        "ll" + "r" * len(KS)))
    out.append("")
    speed = [PUBLISHED_SECONDS[ds][m][i] / secs[(ds, m, "", k)] for ds in SETS
             for m in ("mdav*", "ona*") for i, k in enumerate(KS)]
    out.append(f"MDAV* and ONA*: ours is {min(speed):.0f}-{max(speed):.0f}x faster than the "
               "published times (numba against the authors' Java, different machines; only the "
               "order of magnitude compares).")
    out.append("")

    # (c) MONA experiments
    out.append("### (c) MONA: which reading of Algorithm 6 gives the published rows")
    out.append("")
    out.append(
        "Each line is MONA_0.5 (Mondrian V cuts) computed with one change to our reading, on "
        "all six k; *equal* counts the cells that round to the published row. Our reading "
        "(`incrowd.microaggregation.mondrian.mona`): a part of more than floor(n^rho) rows is cut by "
        "position at the median exactly as by Mondrian V; a part of at most floor(n^rho) rows "
        "goes to ONA*, which sees the part's rows of the globally standardized data in "
        "ascending row order. The variants are computed by numpy helpers in this script on top "
        f"of the kernels; they give exactly the estimator's parts and groups for our reading "
        f"(checked in all 12 cells: {'yes' if checks_ok else '**NO**'})."
    )
    out.append("")
    exp_lines = [
        ("ours (default)", "mona-default", "position cut; " + part_info[("adult", "position")]
         + " (Adult), " + part_info[("credit", "position")] + " (Credit Card)"),
        ("(a) each part standardized again before ONA*", "restd",
         "ONA* distances in the part's own units; IL still measured globally"),
        ("(b) value cut `x <= median` (Algorithm 6 as printed)", "value-le",
         "next best direction when a side would get < k rows; "
         + part_info[("adult", "value-le")] + " / " + part_info[("credit", "value-le")]),
        ("(b') value cut between distinct values nearest the median (LeFevre)", "value-strict",
         part_info[("adult", "value-strict")] + " / " + part_info[("credit", "value-strict")]),
        ("(d1) ONA* sees the part in the order of the last Mondrian sort", "given",
         "instead of ascending row index"),
        (f"(d2) ONA* sees the part in a random order ({PERM_SEEDS} seeds, min–max)", "perm",
         "how much ONA*'s tie-breaking by row order matters"),
        ("(d3) ONA* on the original units (no standardization)", "raw", ""),
        ("(d4) split limit 2 floor(n^rho): parts twice as large", "2limit",
         part_info[("adult", "2limit")] + " / " + part_info[("credit", "2limit")]),
        ("(d5) Mondrian V2D cuts instead (= our MONA 2D, x_a +- x_b score)", "v2d-sum",
         "not a reading of MONA; shown because it coincides with the published Adult row"),
    ]
    rows = []
    for label, key, note in exp_lines:
        for ds in SETS:
            pub = PUBLISHED[ds]["mona"]
            if key == "mona-default":
                v = vals(ds, "mona", "default")
            else:
                v = exp[(ds, key)]
            if key == "perm":
                cells = [f"{a:.4f}–{b:.4f}" for a, b in v]
                eq = sum(same2(a, p) or same2(b, p) or (a < p < b) for (a, b), p in zip(v, pub))
                eq_txt = f"{eq}/6 (any seed)"
                gap_txt = ""
            else:
                cells = [f"{x:.4f}" for x in v]
                eq_txt = f"{n_equal(v, pub)}/6"
                gap_txt = f"{100 * max_gap(v, pub):.1f} %"
            rows.append([label if ds == "adult" else "", DISPLAY[ds]] + cells
                        + [eq_txt, gap_txt, note if ds == "adult" else ""])
    for ds in SETS:
        rows.append(["*published (Table 6)*", DISPLAY[ds]]
                     + [f"{x:.2f}" for x in PUBLISHED[ds]["mona"]] + ["", "", ""])
    out.append(md_table(["variant", "data"] + [f"k={k}" for k in KS]
                        + ["equal", "largest gap", "note"], rows, "ll" + "r" * len(KS) + "rrl"))
    out.append("")
    lt_same = all(all(exp[(ds, "lt")]) for ds in SETS)
    out.append(
        "(c) The printed hand-over rule `|X| < n^rho` instead of our `|X| <= n^rho`: the parts "
        f"are the same in all 12 cells ({'identical groups' if lt_same else '**groups differ**'}"
        f"), because the largest part ({part_max['adult']} rows on Adult, {part_max['credit']} "
        f"on Credit Card) is below the limit ({limit['adult']}, {limit['credit']}). It matters only when n^rho falls "
        "between the sizes of two depths of the cut tree, and at rho = 1, where `<` would cut "
        "the root once and MONA_1 would no longer be ONA*."
    )
    out.append("")
    rows = []
    for ds in SETS:
        pub = PUBLISHED[ds]["mona2d"]
        for label, v in (("default (x_a +- x_b score)", vals(ds, "mona2d", "default")),
                         ("`diagonals=\"unit\"`", vals(ds, "mona2d", "unit"))):
            rows.append([label, DISPLAY[ds]] + [f"{x:.4f}" for x in v]
                        + [f"{n_equal(v, pub)}/6", f"{100 * max_gap(v, pub):.2f} %"])
        sp = exp[(ds, "2d-unit-perm")]
        eq = sum(same2(a, p) or same2(b, p) or (a < p < b) for (a, b), p in zip(sp, pub))
        rows.append([f"`\"unit\"`, ONA* rows in random order ({PERM_SEEDS} seeds, min–max)",
                     DISPLAY[ds]] + [f"{a:.4f}–{b:.4f}" for a, b in sp]
                    + [f"{eq}/6 (any seed)", ""])
        rows.append(["*published (Table 6)*", DISPLAY[ds]] + [f"{x:.2f}" for x in pub] + ["", ""])
    out.append("MONA 2D_0.5, diagonal score:")
    out.append("")
    out.append(md_table(["variant", "data"] + [f"k={k}" for k in KS] + ["equal", "largest gap"],
                        rows, "ll" + "r" * len(KS) + "rr"))
    out.append("")

    # (d) Figure 2
    out.append(f"### (d) Figure 2 redrawn: IL against rho at k = {FIG_K}")
    out.append("")
    out.append(
        "Our runs of Thaeter & Reischuk's (2021) Figure 2 (the paper prints only the curves). Mondrian V, "
        "Mondrian V2D and ONA* do not depend on rho (flat lines); MONA_0 is Mondrian V and "
        "MONA 2D_0 Mondrian V2D, MONA_1 = MONA 2D_1 = ONA* (the whole data set is one part; "
        f"checked: {'identical groups' if rho1_same else '**groups differ**'}; on Credit Card "
        "the rho = 1 points reuse the ONA* run of the table). The dashed curve is MONA 2D with "
        "the unit-vector diagonal score that Table 6's MONA 2D row was computed with. At "
        "k = 10 `split_2k` does not matter for Mondrian V / V2D on these data (same IL)."
    )
    out.append("")
    for ds in SETS:
        out.append(f"![Figure 2, {DISPLAY[ds]}](figures/figure2_{ds}.png)")
        out.append("")
    for ds in SETS:
        rows = []
        for rho_i, rho in enumerate(RHOS):
            lim = split_limit(raw[ds].shape[0], rho)
            row = [f"{rho:.1f}", f"{lim:,}"]
            for curve in ("mona", "mona2d", "mona2d-unit"):
                row.append(f"{fig_il[(ds, curve)][rho_i]:.3f}")
            for curve in ("mona", "mona2d", "mona2d-unit"):
                t = fmt_s(fig_t[(ds, curve)][rho_i])
                if ds == "credit" and rho >= 0.3:
                    paper = TABLE_5["mona" if curve == "mona" else "mona2d"][rho][-1]
                    t += f" / {paper} s" if curve != "mona2d-unit" else ""
                row.append(t)
            rows.append(row)
        consts = (f"Mondrian V {fig_il[(ds, 'mondrian-v')][0]:.3f}, Mondrian V2D "
                  f"{fig_il[(ds, 'mondrian-v2d')][0]:.3f}, ONA* {fig_il[(ds, 'ona*')][0]:.3f}")
        out.append(f"**{DISPLAY[ds]}**, k = {FIG_K} (flat lines: {consts}):")
        out.append("")
        hdr_t = "time" + (" / Table 5" if ds == "credit" else "")
        out.append(md_table(["rho", "floor(n^rho)", "MONA IL %", "MONA 2D IL %",
                             "MONA 2D unit IL %", f"MONA {hdr_t}", f"MONA 2D {hdr_t}",
                             "MONA 2D unit time"], rows, "rrrrrrrr"))
        out.append("")
    out.append(
        "Times: `fit` wall time, median of 3 runs for rho <= 0.8, one run for rho >= 0.9. "
        "Table 5 (Credit Card, k = 10 column, whole seconds, Java) prints rho = 0.3..1 only; "
        "the paper's MONA 2D at 1.0 is ONA*'s 98-106 s."
    )
    out.append("")

    # Gaps explained
    out.append("### Gaps explained")
    out.append("")
    g = 1

    def cells_missed(ds, method, setting):
        v = vals(ds, method, setting)
        pub = PUBLISHED[ds][method]
        return [(k, x, p) for k, x, p in zip(KS, v, pub) if not same2(x, p)]

    def missed_txt(ds, method, setting):
        miss = cells_missed(ds, method, setting)
        if not miss:
            return "all six cells round to the published value"
        return ", ".join(f"k={k}: {x:.4f} vs {p:.2f} ({fmt_gap(rel_gap(x, p))})" for k, x, p in miss)

    out.append(
        f"{g}. **MDAV* and ONA*.** Adult: MDAV* {missed_txt('adult', 'mdav*', '')}; ONA* "
        f"{missed_txt('adult', 'ona*', '')}. Credit Card: MDAV* "
        f"{missed_txt('credit', 'mdav*', '')}; ONA* {missed_txt('credit', 'ona*', '')}. "
        "A miss of 0.01 with a gap under 0.1 % is the last printed digit: ONA* is "
        "deterministic but its result depends on tie-breaking (row visiting order, lowest "
        "cluster id on equal distances) that the paper does not specify; section `ona` (d) "
        "shows last-digit misses of the same kind on the Table 1 data sets and how much the row "
        "order moves ONA*. So ONA* itself is as published, on both data sets, and can be "
        "ruled out as the source of the larger MONA gaps below."
    )
    g += 1
    s2k_true = sum(n_equal(vals(ds, m, "split_2k=True"), PUBLISHED[ds][m]) for ds in SETS
                   for m in MONDRIAN_CLASSES)
    s2k_false = sum(n_equal(vals(ds, m, "split_2k=False"), PUBLISHED[ds][m]) for ds in SETS
                    for m in MONDRIAN_CLASSES)
    mv = [x / p - 1 for x, p in zip(vals("adult", "mondrian-v", "split_2k=False"),
                                    PUBLISHED["adult"]["mondrian-v"])]
    other_adult = sum(n_equal(vals("adult", m, "split_2k=False"), PUBLISHED["adult"][m])
                      for m in ("mondrian", "mondrian-v2d"))
    out.append(
        f"{g}. **Mondrian rows: the defaults do not reproduce the table, `split_2k=False` "
        f"does** ({s2k_true}/36 cells with the default, {s2k_false}/36 with "
        "`split_2k=False`). The table's values repeat in the pattern of cutting only parts of "
        "more than 2k rows (Adult k = 3, 4, 5 equal; Credit Card k = 2, 3 and 4, 5 equal); the "
        "default also cuts parts of exactly 2k rows (groups of k..2k-1, as the paper's prose "
        "says) and loses less (e.g. Adult Mondrian k = 3: "
        f"{il[('adult', 'mondrian', 'split_2k=True', 3)]:.4f} % vs "
        f"{il[('adult', 'mondrian', 'split_2k=False', 3)]:.4f} %). Section `mondrian` has the "
        "full study. Two rows keep gaps with `split_2k=False`: "
        f"Mondrian V on Adult ({missed_txt('adult', 'mondrian-v', 'split_2k=False')}: ours "
        f"is {100 * min(mv):.0f}-{100 * max(mv):.0f} % higher; none of the cut and tie rules in "
        "section `mondrian` (d) reproduces it, nor did the variance score variants we tried "
        "(sample variance, second moment about the global mean, mean absolute deviation, raw "
        "units), and we found no explanation: the same cut with range or V2D directions "
        f"rounds to the table in {other_adult}/12 Adult cells, and the same Mondrian V rule "
        f"matches Credit Card in {n_equal(vals('credit', 'mondrian-v', 'split_2k=False'), PUBLISHED['credit']['mondrian-v'])}/6); "
        "and Mondrian V2D on Credit Card "
        f"({missed_txt('credit', 'mondrian-v2d', 'split_2k=False')}: a few 1e-4 from the "
        "rounding boundary, i.e. last-digit noise)."
    )
    g += 1
    adult_mona = vals("adult", "mona", "default")
    restd = exp[("adult", "restd")]
    vle = exp[("adult", "value-le")]
    vst = exp[("adult", "value-strict")]
    perm = exp[("adult", "perm")]
    out.append(
        f"{g}. **MONA_0.5 on Credit Card: no gap** "
        f"({missed_txt('credit', 'mona', 'default')}). This confirms our reading of "
        "Algorithm 6 on the data set without massive ties: positional median cuts as in "
        "Mondrian V down to parts of at most floor(n^rho) rows, then ONA* on each part in the "
        "globally standardized space. Every alternative of (c) breaks that match: "
        f"re-standardizing the parts (a) gives {exp[('credit', 'restd')][0]:.2f}-"
        f"{exp[('credit', 'restd')][-1]:.2f} % (k = 2..10, +{100 * (exp[('credit', 'restd')][0] / PUBLISHED['credit']['mona'][0] - 1):.0f} % at k = 2), "
        f"the printed value cut (b) {exp[('credit', 'value-le')][0]:.2f}-"
        f"{exp[('credit', 'value-le')][-1]:.2f} %, LeFevre's strict cut (b') "
        f"{exp[('credit', 'value-strict')][0]:.2f}-{exp[('credit', 'value-strict')][-1]:.2f} %, "
        f"ONA* in raw units (d3) {exp[('credit', 'raw')][0]:.2f}-{exp[('credit', 'raw')][-1]:.2f} %, "
        f"twice as large parts (d4) {exp[('credit', '2limit')][0]:.2f}-"
        f"{exp[('credit', '2limit')][-1]:.2f} %; the hand-over rule `<` vs `<=` (c) makes no "
        "difference. The ONA* phase works as published: ONA* on the whole Credit Card "
        "data matches its own row (1.)."
    )
    g += 1
    am = [x / p - 1 for x, p in zip(adult_mona, PUBLISHED["adult"]["mona"])
          if not same2(x, p)]
    am_txt = f"{100 * min(am):.1f}-{100 * max(am):.1f} %" if am else "0 %"
    out.append(
        f"{g}. **MONA_0.5 on Adult: ours is {am_txt} higher where it misses, unexplained** "
        f"({missed_txt('adult', 'mona', 'default')}). What we ruled out: "
        f"(a) re-standardizing each part makes it worse ({restd[0]:.4f}-{restd[-1]:.4f} %); "
        f"(b) the printed value cut `x <= median` makes it far worse ({vle[0]:.4f}-{vle[-1]:.4f} %, "
        "Adult's many equal values give very uneven parts) and LeFevre's strict cut "
        f"overshoots below the table ({vst[0]:.4f}-{vst[-1]:.4f} %, "
        f"{n_equal(vst, PUBLISHED['adult']['mona'])}/6) while breaking Credit Card; "
        "(c) `<` vs `<=` gives the same parts; the row order ONA* sees moves the result by at "
        f"most {max(b - a for a, b in perm):.4f} points (d1, d2: k = 10 spans "
        f"{perm[-1][0]:.4f}-{perm[-1][1]:.4f} % against the published 0.46); ONA* in raw units "
        f"(d3) is far worse. Larger parts (d4) come close "
        f"({', '.join(f'{x:.4f}' for x in exp[('adult', '2limit')])}; "
        f"{n_equal(exp[('adult', '2limit')], PUBLISHED['adult']['mona'])}/6) but the same rule "
        "breaks Credit Card, so it is not the paper's rule. The ONA* phase is not the "
        "cause: ONA* on the whole of Adult matches its row (1.), and no row order in the "
        "parts gets near 0.46 at k = 10. That leaves the Mondrian V cut phase on Adult, the one "
        "ingredient that also misses on its own: the published Mondrian V row on Adult is "
        f"{100 * min(mv):.0f}-{100 * max(mv):.0f} % *below* ours (2.), the same sign and similar size as this gap, while on Credit Card "
        "both Mondrian V and MONA match. So whatever the authors' Mondrian V did differently "
        "on Adult's tied values, we have not found it. For the record, (d5) MONA with "
        "Mondrian V2D cuts (our MONA 2D default) rounds to the published MONA row in "
        f"{n_equal(exp[('adult', 'v2d-sum')], PUBLISHED['adult']['mona'])}/6 Adult cells; "
        "it does not on Credit Card "
        f"({n_equal(vals('credit', 'mona2d', 'default'), PUBLISHED['credit']['mona'])}/6), so "
        "we read it as a coincidence of the 2-decimal rounding on small values, not as the "
        "explanation. We keep our default."
    )
    g += 1
    u_notes = []
    for (a, b), k, x, p in zip(exp[("credit", "2d-unit-perm")], KS,
                               vals("credit", "mona2d", "unit"), PUBLISHED["credit"]["mona2d"]):
        if same2(x, p):
            continue
        reached = same2(a, p) or same2(b, p) or a < p < b
        u_notes.append(
            f"k={k}: {x:.4f} vs {p:.2f} ({fmt_gap(rel_gap(x, p))}), "
            + (f"reached by some random row orders inside the parts ({a:.4f}-{b:.4f})"
               if reached else
               f"not reached by the random row orders ({a:.4f}-{b:.4f}), a last-digit "
               "residual of the size of ONA*'s own on Credit Card (1.)"))
    u_miss = "; ".join(u_notes) if u_notes else "none"
    d_c = vals("credit", "mona2d", "default")
    out.append(
        f"{g}. **MONA 2D_0.5: the table used the unit-vector diagonal score.** With our default "
        "(x_a +- x_b, which reproduces the Mondrian V2D row) Credit Card is "
        f"{100 * (1 - max(x / p for x, p in zip(d_c, PUBLISHED['credit']['mona2d']))):.0f}-"
        f"{100 * (1 - min(x / p for x, p in zip(d_c, PUBLISHED['credit']['mona2d']))):.0f} % "
        f"below the table ({d_c[0]:.2f} vs 6.87 at k = 2): on 24 attributes the x_a +- x_b score "
        "counts the 552 diagonals twice as much as the unit-vector score, so more cuts are "
        "diagonal and the parts handed to ONA* are more compact. With "
        "`diagonals=\"unit\"` (the 1/sqrt(2) of the paper's prose) Adult rounds to the table "
        f"in {n_equal(vals('adult', 'mona2d', 'unit'), PUBLISHED['adult']['mona2d'])}/6 cells and "
        f"Credit Card in {n_equal(vals('credit', 'mona2d', 'unit'), PUBLISHED['credit']['mona2d'])}/6; "
        f"the remaining misses are in the last printed digit ({u_miss}). So the authors' "
        "MONA 2D and Mondrian V2D code used different diagonal scores. Our default stays "
        "`\"sum\"` (consistent with Mondrian V2D, and lower loss); `MONA2D(diagonals=\"unit\")` "
        "gives the table's row."
    )
    g += 1
    t5_ratio = [TABLE_5[c][rho][-1] / fig_t[("credit", c)][RHOS.index(rho)]
                for c in ("mona", "mona2d") for rho in (0.6, 0.7, 0.8, 0.9, 1.0)]
    t_growth = fig_t[("credit", "mona")][RHOS.index(0.9)] / fig_t[("credit", "mona")][RHOS.index(0.6)]
    p_growth = TABLE_5["mona"][0.9][-1] / TABLE_5["mona"][0.6][-1]
    out.append(
        f"{g}. **Runtimes.** The paper's are whole seconds of a Java implementation on an "
        "Intel i7 6850K; ours are numba-compiled kernels on a shared 2-core AMD EPYC VM. "
        f"MDAV* and ONA* are {min(speed):.0f}-{max(speed):.0f}x faster here (for ONA*: O(d) "
        "incremental cost updates and a k-d tree over the centroids); the Mondrian and "
        "MONA_0.5 cells take milliseconds here and 0-2 whole seconds in the paper, so only the "
        "ranking compares, and it is the same (Mondrian < MONA_0.5 < MDAV* <= ONA*). "
        "Figure 2 on Credit Card, k = 10: from rho = 0.6 to 0.9 our MONA time grows "
        f"{t_growth:.0f}x, Table 5's {p_growth:.0f}x (Lemma 2: O(n^(1+rho) d), a factor "
        f"n^0.3 = {30000 ** 0.3:.0f}); where Table 5 prints at least 1 s (rho >= 0.6) ours "
        f"is {min(t5_ratio):.0f}-{max(t5_ratio):.0f}x lower."
    )
    out.append("")
    elapsed = time.perf_counter() - t_start
    out.append(f"*Script runtime: {elapsed:.0f} s ({elapsed / 60:.1f} min), with other jobs on "
               "the machine.*")

    print("\n".join(out))
    if QUICK:
        print(f"\nquick mode: nothing written ({elapsed:.1f} s)")
        return
    path = update_section(DOCS / "reproduction.md", "table6", "\n".join(out),
                          "Reproduction of published results")
    print(f"\nwrote section 'table6' of {path} and {FIGURES}/figure2_*.png in {elapsed:.1f} s")
    if not checks_ok or not rho1_same:
        sys.exit(1)


if __name__ == "__main__":
    main()
