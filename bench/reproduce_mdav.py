"""Reproduce the published information losses of the MDAV family.

Run from the repository root: ``.venv/bin/python bench/reproduce_mdav.py``. Writes the section
``mdav-family`` of ``docs/reproduction.md`` (other sections of that file are left alone).

Published values are typed in from the papers in ``../shared/papers``:

* Thaeter & Reischuk (SICHERHEIT 2018), Table 1: MDAV, MDAV+, V-MDAV (best gamma in
  0.0..2.0 step 0.1, gammas in Table 4), MDAV* on Census, Tarragona, EIA, k = 3, 4, 5, 7, 10, to
  3 decimals; Table 3 (relative differences) is used to cross-check the transcription; section 3
  has the worked 1-D example.
* Thaeter & Reischuk (SECRYPT 2021), Table 1: MDAV and MDAV* on Census, Tarragona,
  EIA, Cloud1, Cloud2, k = 2, 3, 4, 5, 7, 10, to 2 decimals (the star of "MDAV*" is lost in the
  text extraction; the appendix Table 2 repeats the MDAV* Census row and names it).

Acceptance rule: MDAV equals Thaeter & Reischuk (2021) at its 2 published decimals; MDAV+, V-MDAV and MDAV* are
within 3 % relative of the published value.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    DATA_NOTES,
    DISPLAY,
    DOCS,
    TABLE1_2021,
    fmt_gap,
    load,
    machine_line,
    md_table,
    now_utc,
    pass_fail,
    reference_module,
    rel_gap,
    same_at,
    update_section,
    yes_no,
)

import incrowd  # noqa: E402
from incrowd.cli._bench_entry import standardize  # noqa: E402
from incrowd.microaggregation import information_loss, sse, sst  # noqa: E402

KS_001 = [3, 4, 5, 7, 10]
KS_000 = [2, 3, 4, 5, 7, 10]
GAMMAS = [round(0.1 * i, 1) for i in range(21)]  # 0.0 .. 2.0
REL_TOL = 0.03

# ---------------------------------------------------------------------------------------------
# Published values (information loss in %), typed in from the papers.

# Thaeter & Reischuk (2018), Table 1 (a) CENSUS, (b) TARRAGONA, (c) EIA; columns k = 3, 4, 5, 7, 10.
P001 = {
    "census": {
        "mdav": [5.677, 7.537, 9.056, 11.608, 14.186],
        "mdav-plus": [5.662, 7.514, 9.007, 11.657, 14.073],
        "v-mdav": [5.662, 7.514, 8.978, 11.586, 14.043],
        "mdav-star": [5.782, 7.433, 8.809, 11.369, 14.003],
    },
    "tarragona": {
        "mdav": [16.922, 19.540, 22.459, 27.525, 33.195],
        "mdav-plus": [16.951, 19.767, 22.872, 28.255, 33.254],
        "v-mdav": [15.849, 19.695, 22.872, 28.249, 33.251],
        "mdav-star": [16.143, 19.189, 22.250, 28.399, 34.743],
    },
    "eia": {
        "mdav": [0.483, 0.672, 1.668, 2.187, 3.846],
        "mdav-plus": [0.488, 0.673, 1.775, 2.211, 3.547],
        "v-mdav": [0.465, 0.673, 1.056, 2.211, 2.794],
        "mdav-star": [0.449, 0.617, 0.911, 2.032, 2.633],
    },
}

# Thaeter & Reischuk (2018), Table 4: optimal gain factor gamma of V-MDAV; columns k = 3, 4, 5, 7, 10.
P001_GAMMA = {
    "census": [0.0, 0.0, 0.2, 0.1, 0.2],
    "tarragona": [0.3, 0.3, 0.0, 0.6, 0.3],
    "eia": [0.6, 0.0, 0.4, 0.0, 1.3],
}

# Thaeter & Reischuk (2018), Table 3: (a) "MDAV* versus MDAV" (1 decimal), (b) "MDAV* versus V-MDAV"
# (2 decimals), in % relative difference; columns k = 3, 4, 5, 7, 10. Used only to cross-check
# the transcription of Table 1.
P001_T3A = {
    "census": [1.8, -1.4, -2.7, -2.1, -1.3],
    "tarragona": [-4.6, -1.8, -0.9, 3.2, 4.7],
    "eia": [-7.0, -8.1, -45.4, -7.1, -31.5],
}
P001_T3B = {
    "census": [2.11, -1.08, -1.89, -1.87, -0.29],
    "tarragona": [1.85, -2.57, -2.72, 0.53, 4.49],
    "eia": [-3.40, -8.23, -13.71, -8.09, -5.77],
}

# Thaeter & Reischuk (2021), Table 1: columns k = 2, 3, 4, 5, 7, 10.
P000 = TABLE1_2021  # bench/_common/papers.py

# Thaeter & Reischuk (2018), section 3: the worked 1-D example.
EXAMPLE_VALUES = [1, 2, 3, 5, 6, 19, 20, 21, 98, 99, 100]
EXAMPLE_K = 3
EXAMPLE_SST = 17966.0  # "diversity" of the example
EXAMPLE = {  # method -> (params, published SSE, published IL %, published groups)
    "mdav-star": ({}, 21.2, 0.118, [[98, 99, 100], [1, 2, 3, 5, 6], [19, 20, 21]]),
    "v-mdav": ({"gamma": 1.1}, 258.8, 1.44, [[98, 99, 100], [1, 2, 3], [5, 6, 19, 20, 21]]),
}

NAMES = {"mdav": "MDAV", "mdav-plus": "MDAV+", "v-mdav": "V-MDAV", "mdav-star": "MDAV*"}

# The cells whose value does not agree with the published one at the published decimals, as
# they were when the prose below was written; if the computed set changes, the doc says so.
EXPECTED_DECIMAL_MISMATCHES = {
    ("census", 2, "mdav-star", "000"),
    ("cloud1", 3, "mdav-star", "000"),
    ("cloud2", 3, "mdav-star", "000"),
    ("cloud2", 7, "mdav-star", "000"),
}


# ---------------------------------------------------------------------------------------------
# Helpers


def il_percent(X: np.ndarray, k: int, method: str, **params) -> float:
    return 100.0 * incrowd.microaggregate(X, k, method, **params).information_loss


YEAR = {"000": "Thaeter & Reischuk (2021)", "001": "Thaeter & Reischuk (2018)"}  # how a source is cited


def decimals_of(value: float, source: str) -> int:
    return 3 if source == "001" else 2


def best_gamma(X: np.ndarray, k: int) -> tuple[float, float, list[float], dict[float, float]]:
    """(IL % at the best gamma, the smallest best gamma, all tied gammas, IL per gamma)."""
    per = {g: il_percent(X, k, "v-mdav", gamma=g) for g in GAMMAS}
    best = min(per.values())
    ties = [g for g in GAMMAS if per[g] == best]
    return best, ties[0], ties, per


# MDAV variants, only to show that none of the usual ones gives Thaeter & Reischuk's (2018) MDAV row. Plain
# numpy on standardized data, built from tests/reference.py's primitives.
def mdav_variant(X: np.ndarray, k: int, *, fixed_centroid: bool, two_groups: bool, q_from: str):
    ref = reference_module()
    n = X.shape[0]
    labels = np.full(n, -1)
    rem = np.arange(n)
    g = 0
    c0 = ref.seq_mean(X)

    def take(center):
        nonlocal rem, g
        d = ref.sq_dist(X, X[center])
        members = np.concatenate([[center], ref.nearest(d, rem[rem != center], k - 1)])
        labels[members] = g
        g += 1
        rem = rem[labels[rem] < 0]
        return d

    while rem.size >= 2 * k:
        c = c0 if fixed_centroid else ref.seq_mean(X[rem])
        dc = ref.sq_dist(X, c)
        dp = take(ref.farthest(dc, rem))
        if two_groups:
            take(ref.farthest(dp if q_from == "P" else dc, rem))
    if rem.size >= k:
        labels[rem] = g
    elif rem.size:
        labels[rem] = g - 1
    return labels


VARIANTS = [
    ("standard MDAV (this package, Rodriguez-Hoyos et al. (2020), Alg. 1)",
     dict(fixed_centroid=False, two_groups=True, q_from="P")),
    ("centroid of the whole data kept fixed", dict(fixed_centroid=True, two_groups=True, q_from="P")),
    ("one group per round (centroid recomputed)", dict(fixed_centroid=False, two_groups=False, q_from="P")),
    ("Q = farthest from the centroid, not from P", dict(fixed_centroid=False, two_groups=True, q_from="C")),
]


def table3_interval_ok(star: float, other: float, published: float, pub_decimals: int) -> bool:
    """Is Table 3's published relative difference consistent with the 3-decimal Table 1 values?

    Table 3 was computed from unrounded values, so allow each Table 1 value to be off by half a
    unit in its third decimal, and the Table 3 value by half a unit in its last decimal.
    """
    h = 0.0005
    lo = 100 * ((star - h) / (other + h) - 1)
    hi = 100 * ((star + h) / (other - h) - 1)
    half = 0.5 * 10.0 ** (-pub_decimals)
    return lo - half <= published <= hi + half


# ---------------------------------------------------------------------------------------------


def main() -> None:
    t_start = time.perf_counter()
    data = {name: load(name) for name in ("census", "tarragona", "eia", "cloud1", "cloud2")}
    mismatches: set[tuple] = set()
    n_checks = 0
    n_pass = 0
    failures: list[str] = []

    def rule(ds, k, method, source, ours, pub, kind):
        nonlocal n_checks, n_pass
        dec = decimals_of(pub, source)
        same = same_at(ours, pub, dec)
        if not same:
            mismatches.add((ds, k, method, source))
        if kind == "exact":
            ok = same
        elif kind == "3%":
            ok = abs(rel_gap(ours, pub)) <= REL_TOL
        else:
            return same, None
        n_checks += 1
        n_pass += ok
        if not ok:
            failures.append(f"{DISPLAY[ds]} k={k} {NAMES[method]} vs {YEAR[source]}")
        return same, ok

    out: list[str] = []
    out.append("## MDAV family: information loss vs the published values")
    out.append("")
    out.append(f"*Generated by `bench/reproduce_mdav.py` on {now_utc()}.*")
    out.append("")
    out.append(f"- **Machine:** {machine_line()}.")
    out.append(
        "- **Data:** "
        + "; ".join(f"{DISPLAY[d]}: {DATA_NOTES[d]}" for d in data)
        + ". Read from `bench/_common` `data_dir()`."
    )
    out.append(
        "- **Methods:** `incrowd.microaggregate(X, k, method)` with method `mdav`, `mdav-plus`, "
        "`v-mdav` (parameter `gamma`, best of 0.0, 0.1, ..., 2.0), `mdav-star`. Every column "
        "standardized to mean 0, variance 1; IL = SSE/SST on the standardized data, in %."
    )
    out.append(
        "- **k:** 3, 4, 5, 7, 10 (Thaeter & Reischuk (2018), Table 1) and 2, 3, 4, 5, 7, 10 (Thaeter & Reischuk (2021), Table 1; "
        "that table has no k = 6, 8, 9 columns); the tables below call them *2018 T1* and *2021 T1*."
    )
    out.append(
        "- **Acceptance rule:** MDAV must equal Thaeter & Reischuk's (2021) value at its 2 published decimals; "
        "MDAV+, V-MDAV and MDAV* must be within 3 % relative of the published value. "
        "*Same to published decimals* says whether our value rounds to the published one (3 "
        "decimals for Thaeter & Reischuk (2018), 2 for Thaeter & Reischuk (2021)); it is reported for every cell but is the "
        "rule only for MDAV. Rows marked *info* are not part of the rule."
    )
    out.append("")
    header_end = len(out)

    # ---- Table 1: Census, Tarragona, EIA at k = 3, 4, 5, 7, 10 --------------------------------
    gamma_rows = []
    main_tables = []
    ours_cache: dict[tuple, float] = {}
    for ds in ("census", "tarragona", "eia"):
        X = data[ds]
        rows = []
        for method in ("mdav", "mdav-plus", "v-mdav", "mdav-star"):
            for i, k in enumerate(KS_001):
                label = NAMES[method]
                if method == "v-mdav":
                    ours, g_best, ties, per = best_gamma(X, k)
                    g_pub = P001_GAMMA[ds][i]
                    tie_txt = f" (ties: {', '.join(f'{t:.1f}' for t in ties)})" if len(ties) > 1 else ""
                    label = f"V-MDAV γ={g_best:.1f} (paper γ={g_pub:.1f})"
                    gamma_rows.append([
                        DISPLAY[ds], k, f"{g_best:.1f}{tie_txt}", f"{g_pub:.1f}",
                        f"{ours:.4f}", f"{per[g_pub]:.4f}", f"{P001[ds]['v-mdav'][i]:.3f}",
                        yes_no(g_pub in ties),
                    ])
                else:
                    ours = il_percent(X, k, method)
                ours_cache[(ds, k, method)] = ours
                if method == "mdav":
                    pub0 = P000[ds]["mdav"][KS_000.index(k)]
                    same, ok = rule(ds, k, method, "000", ours, pub0, "exact")
                    rows.append([k, "MDAV", f"{ours:.4f}", f"{pub0:.2f}", "2021 T1",
                                 fmt_gap(rel_gap(ours, pub0)), yes_no(same), "equal at 2 dp",
                                 pass_fail(ok)])
                    pub1 = P001[ds]["mdav"][i]
                    same, _ = rule(ds, k, method, "001", ours, pub1, "info")
                    rows.append([k, "MDAV", f"{ours:.4f}", f"{pub1:.3f}", "2018 T1",
                                 fmt_gap(rel_gap(ours, pub1)), yes_no(same), "info", "—"])
                else:
                    pub1 = P001[ds][method][i]
                    same, ok = rule(ds, k, method, "001", ours, pub1, "3%")
                    rows.append([k, label, f"{ours:.4f}", f"{pub1:.3f}", "2018 T1",
                                 fmt_gap(rel_gap(ours, pub1)), yes_no(same), "within 3 %",
                                 pass_fail(ok)])
        main_tables.append((ds, rows))

    out.append("### Table 1. Census, Tarragona, EIA at k = 3, 4, 5, 7, 10")
    out.append("")
    header = ["k", "method", "ours IL %", "published IL %", "source", "rel. gap",
              "same to published decimals", "rule", "result"]
    for ds, rows in main_tables:
        out.append(f"**{DISPLAY[ds]}**: {DATA_NOTES[ds]}")
        out.append("")
        out.append(md_table(header, rows, "rlrrlrcll"))
        out.append("")

    out.append("**V-MDAV gain factor.** Best γ over 0.0, 0.1, ..., 2.0 (the smallest γ reaching the "
               "minimum; all tied γ listed), next to Thaeter & Reischuk (2018), Table 4, and our IL at the paper's γ.")
    out.append("")
    out.append(md_table(
        ["data", "k", "our best γ", "paper γ (T4)", "ours IL % at best γ", "ours IL % at paper γ",
         "paper IL % (T1)", "paper γ among our best"],
        gamma_rows, "lrllrrrc"))
    out.append("")

    # ---- Table 2: k = 2 ------------------------------------------------------------------------
    out.append("### Table 2. k = 2 on all five small data sets (Thaeter & Reischuk (2021), Table 1)")
    out.append("")
    rows = []
    for ds in ("census", "tarragona", "eia", "cloud1", "cloud2"):
        X = data[ds]
        for method in ("mdav", "mdav-star"):
            ours = il_percent(X, 2, method)
            pub = P000[ds][method][0]
            kind = "exact" if method == "mdav" else "3%"
            same, ok = rule(ds, 2, method, "000", ours, pub, kind)
            rows.append([DISPLAY[ds], NAMES[method], f"{ours:.4f}", f"{pub:.2f}",
                         fmt_gap(rel_gap(ours, pub)), yes_no(same),
                         "equal at 2 dp" if kind == "exact" else "within 3 %", pass_fail(ok)])
    out.append(md_table(["data", "method", "ours IL %", "published IL % (2021 T1)", "rel. gap",
                         "same to 2 dp", "rule", "result"], rows, "llrrrcll"))
    out.append("")

    # ---- Table 3: Cloud1/Cloud2 at k = 3..10 --------------------------------------------------
    out.append("### Table 3. Cloud1 and Cloud2 at k = 3..10 (Thaeter & Reischuk (2021), Table 1)")
    out.append("")
    out.append("Thaeter & Reischuk (2021) publishes k = 3, 4, 5, 7, 10; for k = 6, 8, 9 only our values are shown.")
    out.append("")
    rows = []
    for ds in ("cloud1", "cloud2"):
        X = data[ds]
        for method in ("mdav", "mdav-star"):
            for k in range(3, 11):
                ours = il_percent(X, k, method)
                if k in KS_000:
                    pub = P000[ds][method][KS_000.index(k)]
                    kind = "exact" if method == "mdav" else "3%"
                    same, ok = rule(ds, k, method, "000", ours, pub, kind)
                    rows.append([DISPLAY[ds], NAMES[method], k, f"{ours:.4f}", f"{pub:.2f}",
                                 fmt_gap(rel_gap(ours, pub)), yes_no(same),
                                 "equal at 2 dp" if kind == "exact" else "within 3 %",
                                 pass_fail(ok)])
                else:
                    rows.append([DISPLAY[ds], NAMES[method], k, f"{ours:.4f}", "—", "—", "—",
                                 "not published", "—"])
    out.append(md_table(["data", "method", "k", "ours IL %", "published IL % (2021 T1)",
                         "rel. gap", "same to 2 dp", "rule", "result"], rows, "llrrrrcll"))
    out.append("")

    # ---- Table 4: the worked 1-D example --------------------------------------------------------
    out.append("### Table 4. Worked 1-D example of Thaeter & Reischuk (2018) (section 3)")
    out.append("")
    x = np.asarray(EXAMPLE_VALUES, dtype=np.float64)
    our_sst = sst(x)
    out.append(
        f"Values {', '.join(str(v) for v in EXAMPLE_VALUES)}; k = {EXAMPLE_K}. Centroid "
        f"{x.mean():g} and SST {our_sst:g} (paper: 34 and {EXAMPLE_SST:g}). With one attribute, "
        "standardizing rescales every distance by the same factor, so the groups and IL are those "
        "of the raw values; SSE is reported in raw units."
    )
    out.append("")
    rows = []
    example_ok = True
    for method, params in (("mdav", {}), ("mdav-plus", {}), ("v-mdav", {"gamma": 1.1}),
                           ("v-mdav", {"gamma": 0.2}), ("mdav-star", {})):
        res = incrowd.microaggregate(x, EXAMPLE_K, method, **params)
        groups = [sorted(int(v) for v in x[res.labels == g]) for g in range(res.n_groups)]
        our_sse = sse(x, res.labels)
        il = 100 * res.information_loss
        name = NAMES[method] + (f" γ={params['gamma']}" if params else "")
        pub = EXAMPLE.get(method) if EXAMPLE.get(method, ({},))[0] == params else None
        if pub is not None:
            _, p_sse, p_il, p_groups = pub
            same_groups = sorted(map(tuple, groups)) == sorted(map(tuple, p_groups))
            ok = same_groups and abs(our_sse - p_sse) < 1e-9 * max(1.0, p_sse) + 1e-9 and same_at(
                il, p_il, 3 if p_il < 1 else 2)
            example_ok &= ok
            rows.append([name, " ".join("{" + ",".join(map(str, g)) + "}" for g in groups),
                         f"{our_sse:.4g}", f"{p_sse:g}", f"{il:.4f}", f"{p_il:g}", pass_fail(ok)])
        else:
            rows.append([name, " ".join("{" + ",".join(map(str, g)) + "}" for g in groups),
                         f"{our_sse:.4g}", "—", f"{il:.4f}", "—", "info"])
    out.append(md_table(["method", "groups (ours)", "ours SSE", "paper SSE", "ours IL %",
                         "paper IL %", "result"], rows, "llrrrrl"))
    out.append("")
    out.append(
        "The paper's V-MDAV walk-through lets 20 join G3 with d_in = d_out = 1 and keeps 5 out of "
        "G2 with d_in = 4, d_out = 1, so it needs 1 < γ ≤ 4; γ = 1.1 is the value Solanas et al. "
        "recommend for clustered data. With γ = 0.2 V-MDAV is MDAV+ here."
    )
    out.append("")

    # ---- Table 5: Thaeter & Reischuk (2018) vs Thaeter & Reischuk (2021) -----------------------
    out.append("### Table 5. Where Thaeter & Reischuk (2018) (3 decimals) and Thaeter & Reischuk (2021) (2 decimals) disagree")
    out.append("")
    out.append(
        "Both papers are by the same authors and publish MDAV and MDAV* on Census, Tarragona and "
        "EIA at k = 3, 4, 5, 7, 10. The two values are consistent when some true value prints as "
        "both, i.e. |v001 - v000| <= 0.0005 + 0.005 (a 3-decimal value ending in 5, such as "
        "27.525, may round either way). The inconsistent cells:"
    )
    out.append("")
    rows = []
    n_compared = 0
    inconsistent = {"mdav": 0, "mdav-star": 0}
    star_inconsistent = []  # (data, k, v001, v000, ours)
    for ds in ("census", "tarragona", "eia"):
        for method in ("mdav", "mdav-star"):
            for i, k in enumerate(KS_001):
                v1 = P001[ds][method][i]
                v0 = P000[ds][method][KS_000.index(k)]
                n_compared += 1
                if abs(v1 - v0) > 0.0055 + 1e-9:
                    inconsistent[method] += 1
                    ours = ours_cache[(ds, k, method)]
                    if method == "mdav-star":
                        star_inconsistent.append((ds, k, v1, v0, ours))
                    agree = [name for name, ok in (("Thaeter & Reischuk (2018)", same_at(ours, v1, 3)),
                                                   ("Thaeter & Reischuk (2021)", same_at(ours, v0, 2))) if ok]
                    rows.append([DISPLAY[ds], NAMES[method], k, f"{v1:.3f}", f"{v0:.2f}",
                                 f"{v0 - v1:+.3f}", f"{ours:.4f}", " and ".join(agree) or "neither"])
    out.append(md_table(["data", "method", "k", "Thaeter & Reischuk (2018)", "Thaeter & Reischuk (2021)", "2021 - 2018", "ours",
                         "ours equals (at its decimals)"], rows, "llrrrrrl"))
    out.append("")
    out.append(f"{len(rows)} of {n_compared} cells are inconsistent: {inconsistent['mdav']} of 15 "
               f"for MDAV, {inconsistent['mdav-star']} of 15 for MDAV*.")
    out.append("")

    # ---- Table 6: MDAV variants vs Thaeter & Reischuk's (2018) MDAV row ------------------------------------------
    out.append("### Table 6. MDAV variants against Thaeter & Reischuk's (2018) MDAV row")
    out.append("")
    out.append("Plain numpy (primitives of `tests/reference.py`) on standardized data, IL % to 3 "
               "decimals, k = 3, 4, 5, 7, 10. Cells equal to Thaeter & Reischuk (2018) at 3 decimals are in bold.")
    out.append("")
    rows = []
    for ds in ("census", "tarragona", "eia"):
        Z, _ = standardize(data[ds])
        rows.append([f"**{DISPLAY[ds]}**", "Thaeter & Reischuk (2018), Table 1"] + [f"{v:.3f}" for v in P001[ds]["mdav"]])
        rows.append(["", "Thaeter & Reischuk (2021), Table 1"] + [f"{P000[ds]['mdav'][KS_000.index(k)]:.2f}" for k in KS_001])
        for vname, kw in VARIANTS:
            cells = []
            for i, k in enumerate(KS_001):
                v = 100 * information_loss(Z, mdav_variant(Z, k, **kw), standardized=True)
                s = f"{v:.3f}"
                cells.append(f"**{s}**" if s == f"{P001[ds]['mdav'][i]:.3f}" else s)
            rows.append(["", vname] + cells)
    out.append(md_table(["data", "variant", "k=3", "k=4", "k=5", "k=7", "k=10"], rows, "llrrrrr"))
    out.append("")

    # ---- transcription cross-check ---------------------------------------------------------------
    t3_bad = []
    for ds in ("census", "tarragona", "eia"):
        for i, k in enumerate(KS_001):
            star = P001[ds]["mdav-star"][i]
            if not table3_interval_ok(star, P001[ds]["mdav"][i], P001_T3A[ds][i], 1):
                t3_bad.append(f"T3a {DISPLAY[ds]} k={k}")
            if not table3_interval_ok(star, P001[ds]["v-mdav"][i], P001_T3B[ds][i], 2):
                t3_bad.append(f"T3b {DISPLAY[ds]} k={k}")

    # ---- verdict and prose -----------------------------------------------------------------------
    not_001_mdav = mismatches - {(d, k, "mdav", "001") for d in P001 for k in KS_001}
    summary = [
        "### Verdict",
        "",
        f"- **{n_pass} of {n_checks} rule checks pass**"
        + (f"; failing: {', '.join(failures)}." if failures else "."),
        f"- Worked 1-D example of Thaeter & Reischuk (2018): "
        f"{'reproduced (groups, SSE and IL)' if example_ok else '**NOT reproduced**'}.",
        "- Transcription check: Thaeter & Reischuk's (2018) Table 3 (relative differences of MDAV* to MDAV and to "
        "V-MDAV) recomputed from the typed-in Table 1 values, allowing for the rounding of both: "
        + ("all 30 agree." if not t3_bad else f"**disagree at {', '.join(t3_bad)}**."),
        "- Cells not equal to the published value at the published decimals, apart from the MDAV "
        "row of Thaeter & Reischuk (2018) (gap 1 below): "
        + (", ".join(f"{DISPLAY[d]} k={k} {NAMES[m]} ({YEAR[s]})" for d, k, m, s in sorted(not_001_mdav))
           or "none")
        + ".",
    ]
    if not_001_mdav != EXPECTED_DECIMAL_MISMATCHES:
        summary.append(
            "- **Warning:** the set of cells that miss at the published decimals is not the one "
            "the explanations below were written for; re-read the tables and update the prose."
        )
    summary.append("")
    out[header_end:header_end] = summary

    mdav_gaps = {(d, k): rel_gap(ours_cache[(d, k, "mdav")], P001[d]["mdav"][i])
                 for d in P001 for i, k in enumerate(KS_001)}
    worst = max(mdav_gaps, key=lambda key: abs(mdav_gaps[key]))
    n_same_001 = sum(not any(m == (d, k, meth, "001") for m in mismatches)
                     for d in P001 for k in KS_001 for meth in ("mdav-plus", "v-mdav", "mdav-star"))
    n_gamma = sum(r[7] == "yes" for r in gamma_rows)
    out.append("### Gaps explained")
    out.append("")
    out.append(
        "1. **MDAV: Thaeter & Reischuk (2021) vs Thaeter & Reischuk (2018).** Our MDAV equals "
        "Thaeter & Reischuk's (2021) two-decimal values in "
        "all 30 published cells (Census, Tarragona, EIA, Cloud1, Cloud2 at k = 2, 3, 4, 5, 7, 10), "
        "as does the independent numpy MDAV described in the data README. Thaeter & Reischuk (2018), by the same "
        "authors three years earlier, prints another MDAV row: it is inconsistent with the 2021 "
        f"row in {inconsistent['mdav']} of 15 cells (Table 5), and ours differs from it by up to "
        f"{100 * abs(mdav_gaps[worst]):.2f} % relative ({DISPLAY[worst[0]]} k={worst[1]}: "
        f"{P001[worst[0]]['mdav'][KS_001.index(worst[1])]:.3f} vs {ours_cache[(worst[0], worst[1], 'mdav')]:.4f}), "
        "with gaps of both signs. Thaeter & Reischuk (2018) says it uses 'the MDAV specification from [D09]' "
        "(the encyclopedia entry); Thaeter & Reischuk (2021) does not say which MDAV it ran. None of the variants "
        "in Table 6 (centroid fixed, one group per round, Q farthest from the centroid) gives the "
        "2018 MDAV row, nor do the two tail rules or choosing Q before/after removing P's group "
        "(the data README tried those; they give the standard numbers on these sets). So the "
        "detail that differs in Thaeter & Reischuk's (2018) MDAV is unknown; since Thaeter & Reischuk's (2021) later row is "
        "matched exactly, we take it as the MDAV reference, as the acceptance rule says. A "
        "difference in the loss measure itself is unlikely: MDAV+, V-MDAV and MDAV* from the "
        "same table of Thaeter & Reischuk (2018) match us to 3 decimals (gap 2)."
    )
    out.append(
        "2. **MDAV+, V-MDAV and MDAV* against Thaeter & Reischuk (2018):** equal at all 3 published decimals in "
        f"{n_same_001} of 45 cells, and the paper's γ (Table 4) is among our best γ in "
        f"{n_gamma} of 15 cells. Census k=4 has a tie (γ = 0.0 and 0.1 both give 7.5140); the "
        "paper lists 0.0, the smallest, as we do."
    )
    out.append(
        "3. **MDAV* against Thaeter & Reischuk's (2021) two-decimal values.** Four cells do not round to the "
        "published value, each by one unit in the second decimal, all well within the 3 % rule "
        "and all with ours lower: Census k=2 (3.1632 vs 3.17), Cloud1 k=3 (2.1017 vs 2.11), "
        "Cloud2 k=3 (1.0929 vs 1.10), Cloud2 k=7 (2.4978 vs 2.51). Thaeter & Reischuk (2018) has no value for "
        "these cells (it has no k = 2 and no Cloud data). Where both papers publish MDAV*, the "
        f"2021 paper is inconsistent with Thaeter & Reischuk (2018) in {len(star_inconsistent)} cells (Table 5): "
        + "; ".join(f"{DISPLAY[d]} k={k} ({v1:.3f} in Thaeter & Reischuk (2018), {v0:.2f} in Thaeter & Reischuk (2021))"
                    for d, k, v1, v0, _ in star_inconsistent)
        + ". Thaeter & Reischuk's (2021) appendix Table 2 repeats the Census row with the same values as its "
        "Table 1 (7.44 and 14.01), so these are not typos of a single table. In those cells we "
        "equal Thaeter & Reischuk (2018) to 3 decimals ("
        + ", ".join(f"{o:.4f}" for *_, o in star_inconsistent)
        + "), and Thaeter & Reischuk (2021) is higher by "
        + ", ".join(sorted({f"{v0 - v1:+.3f}" for _, _, v1, v0, _ in star_inconsistent}))
        + ": the same direction as our four misses. So Thaeter & Reischuk's (2021) MDAV* numbers are not quite "
        "Thaeter & Reischuk's (2018) either. Our guess (neither paper says) is that Thaeter & Reischuk (2021) was run with "
        "another MDAV* code (Thaeter & Reischuk (2021) mentions Java implementations on an i7 6850K; Thaeter & Reischuk (2018) "
        "does not describe its code) whose tie-breaking or floating-point order flips an "
        "occasional extend-or-new-group decision, which moves the loss in the last printed "
        "digit. Ours matches the original MDAV* paper (2018) in every cell where it can be "
        "compared."
    )
    out.append(
        "4. **Thaeter & Reischuk's (2018) prose vs its Table 3.** Section 5.2 says Table 3a compares MDAV* with "
        "MDAV+, but its numbers are relative to MDAV (EIA k=5: (0.911 - 1.668) / 1.668 = -45.4 %, "
        "as printed; against MDAV+ it would be -48.7 %); the table's caption says MDAV. Table 3 "
        "was computed from unrounded losses (EIA k=4 in 3b: -8.23 % printed, -8.32 % from the "
        "rounded 0.617 and 0.673, -8.24 % from our unrounded 0.6173 and 0.6727), hence the "
        "interval test in the transcription check."
    )
    out.append(
        "5. **Worked example.** Reproduced exactly: V-MDAV with γ = 1.1 gives the groups of the "
        "paper's Figure 1 (SSE 258.8, IL 1.44 %), MDAV* those of Figure 2 (SSE 21.2 = 2 + 17.2 + "
        "2, IL 0.118 %)."
    )
    out.append("")
    elapsed = time.perf_counter() - t_start
    out.append(f"*Script runtime: {elapsed:.1f} s.*")

    path = update_section(DOCS / "reproduction.md", "mdav-family", "\n".join(out),
                          "Reproduction of published results")
    print("\n".join(out))
    print(f"\nwrote section 'mdav-family' of {path} in {elapsed:.1f} s")
    if failures or not example_ok or t3_bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
