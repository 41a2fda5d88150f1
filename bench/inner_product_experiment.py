"""Experiment: Rodriguez-Hoyos et al.'s (2020) inner-product distance comparison in the MDAV kernel.

Run from the repository root: ``.venv/bin/python bench/inner_product_experiment.py``. Writes the
section ``inner-product`` of ``docs/benchmarks.md``.

Rodriguez-Hoyos et al. (2020) (F-MDAV, section 3.1) compares distances to a reference point c through

    0.5 * ||x||^2 - <x, c>  ( = 0.5 * (||x - c||^2 - ||c||^2) ),

with 0.5 * ||x||^2 precomputed once per row, which saves the subtraction per coordinate. The
ordering of the rows is the same as by ||x - c||^2 in exact arithmetic but not in floating
point, so the shipped kernel (``incrowd.microaggregation.mdav._mdav_kernel``) does not do this: it
stays bit-exact with plain MDAV. This file holds a copy of the shipped kernel in which only the
distance computation is changed, and measures (i) its speed and (ii) whether its groups differ
from the plain reference of ``tests/reference.py``.
"""

from __future__ import annotations

import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    DISPLAY,
    DOCS,
    fmt_range,
    fmt_s,
    gaussian,
    load,
    machine_line,
    md_table,
    median,
    now_utc,
    reference_module,
    same_groups,
    time_runs,
    update_section,
)

from incrowd._standardize import standardize  # noqa: E402
from incrowd.metrics import information_loss  # noqa: E402
from incrowd.microaggregation._kernels import (  # noqa: E402  (unchanged building blocks)
    _DEAD_FRACTION,
    centroid_alive,
    farthest_alive,
    nearest_alive,
)
from incrowd.microaggregation.mdav._mdav_kernel import mdav_labels  # noqa: E402

REPEATS = 5
SETS = ["census", "tarragona", "eia", "cloud1", "cloud2", "adult"]
KS = [2, 3, 5, 10]
GAUSS_N = 20_000
GAUSS_SEED = 1

# ---------------------------------------------------------------------------------------------
# The variant: microaggregation/mdav/_mdav_kernel.py with the distance pass replaced. Everything else (centroid,
# farthest/nearest selection with lowest-index ties, compaction, tail rule) is unchanged.


@njit(cache=True)
def ip_score_to(Xt, half_norm, n_slots, point, out):
    """out[i] = 0.5 * ||x_i||^2 - <x_i, point> for the first n_slots slots (Rodriguez-Hoyos et al. (2020), 3.1).

    Orders the slots as ||x_i - point||^2 does, up to rounding. Summed in column order.
    """
    m = Xt.shape[0]
    for i in range(n_slots):
        out[i] = half_norm[i]
    for j in range(m):
        pj = point[j]
        col = Xt[j]
        for i in range(n_slots):
            out[i] -= col[i] * pj


@njit(cache=True)
def compact_ip(Xt, half_norm, ids, slot_of, alive, n_slots):
    """``_kernels.compact`` that also moves the precomputed half norms."""
    m = Xt.shape[0]
    w = 0
    for i in range(n_slots):
        if alive[i]:
            if w != i:
                for j in range(m):
                    Xt[j, w] = Xt[j, i]
                half_norm[w] = half_norm[i]
                ids[w] = ids[i]
                slot_of[ids[w]] = w
            alive[w] = True
            w += 1
    for i in range(w, n_slots):
        alive[i] = False
    return w


@njit(cache=True)
def _take_group(Xt, ids, alive, labels, d, center_slot, k, sel, group):
    nearest_alive(d, alive, Xt.shape[1], center_slot, -1, k - 1, sel)
    labels[ids[center_slot]] = group
    alive[center_slot] = False
    for t in range(k - 1):
        s = sel[t]
        labels[ids[s]] = group
        alive[s] = False


@njit(cache=True)
def mdav_ip_labels(X, k):
    """``mdav_labels`` with distances compared as 0.5*||x||^2 - <x, c>."""
    n, m = X.shape
    labels = np.full(n, -1, np.int64)
    if n < 2 * k:
        labels[:] = 0
        return labels
    Xt = np.ascontiguousarray(X.T)
    half_norm = np.zeros(n)
    for j in range(m):
        col = Xt[j]
        for i in range(n):
            half_norm[i] += col[i] * col[i]
    for i in range(n):
        half_norm[i] *= 0.5
    ids = np.arange(n)
    slot_of = np.arange(n)
    alive = np.ones(n, np.bool_)
    d = np.empty(n)
    c = np.empty(m)
    point = np.empty(m)
    sel = np.empty(max(k - 1, 1), np.int64)
    n_slots = n
    n_live = n
    group = 0
    while n_live >= 2 * k:
        centroid_alive(Xt, alive, n_slots, n_live, c)
        ip_score_to(Xt, half_norm, n_slots, c, d)
        p = farthest_alive(d, alive, n_slots)
        for j in range(m):
            point[j] = Xt[j, p]
        ip_score_to(Xt, half_norm, n_slots, point, d)
        _take_group(Xt[:, :n_slots], ids, alive, labels, d, p, k, sel, group)
        group += 1
        q = farthest_alive(d, alive, n_slots)
        for j in range(m):
            point[j] = Xt[j, q]
        ip_score_to(Xt, half_norm, n_slots, point, d)
        _take_group(Xt[:, :n_slots], ids, alive, labels, d, q, k, sel, group)
        group += 1
        n_live -= 2 * k
        if n_slots - n_live > _DEAD_FRACTION * n_slots:
            n_slots = compact_ip(Xt, half_norm, ids, slot_of, alive, n_slots)
    if n_live >= k:
        rest = group
        group += 1
    else:
        rest = group - 1
    for i in range(n_slots):
        if alive[i]:
            labels[ids[i]] = rest
    return labels


# ---------------------------------------------------------------------------------------------
# Comparison helpers


def first_divergence(a: np.ndarray, b: np.ndarray) -> int:
    """Smallest group id whose member set differs (both labelings number groups by creation)."""
    g_max = int(max(a.max(), b.max()))
    order_a = np.argsort(a, kind="stable")
    order_b = np.argsort(b, kind="stable")
    starts_a = np.searchsorted(a[order_a], np.arange(g_max + 2))
    starts_b = np.searchsorted(b[order_b], np.arange(g_max + 2))
    for g in range(g_max + 1):
        ma = order_a[starts_a[g]:starts_a[g + 1]]
        mb = order_b[starts_b[g]:starts_b[g + 1]]
        if ma.shape != mb.shape or not np.array_equal(ma, mb):
            return g
    return -1


def rows_in_same_group(a: np.ndarray, b: np.ndarray) -> float:
    """Fraction of rows whose group (as a set of rows) is the same in both labelings."""
    pairs, inverse, counts = np.unique(np.stack([a, b]), axis=1, return_inverse=True,
                                       return_counts=True)
    size_a = np.bincount(a)[pairs[0]]
    size_b = np.bincount(b)[pairs[1]]
    same_pair = (counts == size_a) & (counts == size_b)
    return float(same_pair[inverse.ravel()].mean())


def _ip_scores(Z: np.ndarray, half_norm: np.ndarray, point: np.ndarray) -> np.ndarray:
    """numpy twin of ``ip_score_to`` with the same operation order (column by column)."""
    out = half_norm.copy()
    for j in range(Z.shape[1]):
        out -= Z[:, j] * point[j]
    return out


def _exact_sq_dist(Z: np.ndarray, row: int, point: np.ndarray) -> Fraction:
    """||Z[row] - point||^2 in exact rational arithmetic on the float64 values."""
    return sum((Fraction(float(Z[row, j])) - Fraction(float(point[j]))) ** 2
               for j in range(Z.shape[1]))


def diagnose(Z: np.ndarray, raw: np.ndarray, k: int) -> dict | None:
    """Replay plain MDAV (tests/reference.py primitives) and, at every decision, also take the
    inner-product decision on the same state; describe the first decision where they differ.

    For the two disputed rows it gives both float values and the exact squared distance, and
    which row each formula picks versus exact arithmetic with the lowest-index tie rule.
    """
    ref = reference_module()
    n, m = Z.shape
    half_norm = np.zeros(n)
    for j in range(m):
        half_norm += Z[:, j] * Z[:, j]
    half_norm *= 0.5
    labels = np.full(n, -1)
    rem = np.arange(n)
    g = 0

    def nearest_ip(scores, cand, cnt):
        return cand[np.argsort(scores[cand], kind="stable")[:cnt]]

    def result(what, a, b, point, want_far):
        # a: plain's pick, b: inner-product's pick (rows); decide with exact arithmetic.
        ea, eb = _exact_sq_dist(Z, a, point), _exact_sq_dist(Z, b, point)
        if ea == eb:
            exact_pick = min(a, b)
        elif want_far:
            exact_pick = a if ea > eb else b
        else:
            exact_pick = a if ea < eb else b
        d_plain = ref.sq_dist(Z[[a, b]], point)
        d_ip = _ip_scores(Z[[a, b]], half_norm[[a, b]], point)
        return {
            "group": g, "what": what, "rows": (a, b), "raw": (raw[a], raw[b]),
            "plain": tuple(d_plain), "ip": tuple(d_ip), "exact": (ea, eb),
            "exact_tie": ea == eb, "exact_pick": exact_pick,
        }

    while rem.size >= 2 * k:
        c = ref.seq_mean(Z[rem])
        dc = ref.sq_dist(Z, c)
        p = ref.farthest(dc, rem)
        p_ip = rem[int(np.argmax(_ip_scores(Z, half_norm, c)[rem]))]
        if p != p_ip:
            return result("P = farthest from the centroid", p, p_ip, c, True)
        for who in ("P", "Q"):
            if who == "Q":
                q = ref.farthest(d_center, rem)
                q_ip = rem[int(np.argmax(s_center[rem]))]
                if q != q_ip:
                    return result("Q = farthest from P", q, q_ip, Z[p], True)
                p = q
            d_center = ref.sq_dist(Z, Z[p])
            s_center = _ip_scores(Z, half_norm, Z[p])
            others = rem[rem != p]
            near = ref.nearest(d_center, others, k - 1)
            near_ip = nearest_ip(s_center, others, k - 1)
            only_plain = np.setdiff1d(near, near_ip)
            only_ip = np.setdiff1d(near_ip, near)
            if only_plain.size:
                return result(f"the {k - 1} nearest of {who}" if k > 2 else f"the nearest of {who}", int(only_plain[0]),
                              int(only_ip[0]), Z[p], False)
            members = np.concatenate([[p], near])
            labels[members] = g
            g += 1
            rem = rem[labels[rem] < 0]
    return None


def _fmt_raw(v: np.ndarray) -> str:
    return "(" + ", ".join(f"{x:g}" for x in v) + ")"


def main() -> None:
    t_start = time.perf_counter()
    ref = reference_module()

    # (i) speed on 50,000 x 15 Gaussian, k = 10
    Z, _ = standardize(gaussian(50_000, 15, seed=0))
    k = 10
    t_ship, lab_ship = time_runs(lambda: mdav_labels(Z, k), REPEATS)
    t_ip, lab_ip = time_runs(lambda: mdav_ip_labels(Z, k), REPEATS)
    same_50k = bool(np.array_equal(lab_ship, lab_ip))
    il_ship = 100 * information_loss(Z, lab_ship, standardized=True)
    il_ip = 100 * information_loss(Z, lab_ip, standardized=True)
    speed_rows = [
        ["shipped kernel (`mdav_labels`, ‖x − c‖²)", fmt_s(median(t_ship)),
         fmt_range(t_ship), f"{il_ship:.6f}", "1.00x"],
        ["inner-product variant (0.5·‖x‖² − ⟨x, c⟩)", fmt_s(median(t_ip)),
         fmt_range(t_ip), f"{il_ip:.6f}",
         f"{median(t_ship) / median(t_ip):.2f}x"],
    ]
    print(md_table(["kernel", f"median of {REPEATS}", "min – max", "IL %", "speed-up"],
                   speed_rows), flush=True)

    # (ii) groups vs the plain reference
    cases = [(name, load(name)) for name in SETS]
    cases.append(("gaussian", gaussian(GAUSS_N, 15, seed=GAUSS_SEED)))
    rows = []
    differing = []
    diag_rows = []
    t_ref_total = 0.0
    for name, raw in cases:
        Zc, _ = standardize(raw)
        for kk in KS:
            t0 = time.perf_counter()
            lab_ref = ref.mdav(Zc, kk)
            t_ref_total += time.perf_counter() - t0
            lab_fast = mdav_labels(Zc, kk)
            lab_ipc = mdav_ip_labels(Zc, kk)
            same = same_groups(lab_ref, lab_ipc)
            fast_ok = bool(np.array_equal(lab_ref, lab_fast))
            il_ref = 100 * information_loss(Zc, lab_ref, standardized=True)
            il_ipc = 100 * information_loss(Zc, lab_ipc, standardized=True)
            n_groups = int(lab_ref.max()) + 1
            if same:
                div, frac = "—", "100 %"
            else:
                differing.append((name, kk, il_ref, il_ipc))
                g = first_divergence(lab_ref, lab_ipc)
                div = f"{g} of {n_groups}"
                dg = diagnose(Zc, raw, kk)
                if dg is not None:
                    a, b = dg["rows"]
                    pick = {a: f"row {a}", b: f"row {b}"}
                    diag_rows.append([
                        DISPLAY.get(name, "Gaussian"), kk,
                        f"{dg['group']}" + ("" if dg["group"] == g else f" (labels: {g})"),
                        dg["what"],
                        f"{a} {_fmt_raw(dg['raw'][0])} / {b} {_fmt_raw(dg['raw'][1])}",
                        f"{float(dg['plain'][0])!r} / {float(dg['plain'][1])!r}",
                        f"{float(dg['ip'][0])!r} / {float(dg['ip'][1])!r}",
                        "equal" if dg["exact_tie"] else
                        (f"row {a} " + ("farther" if dg["exact"][0] > dg["exact"][1] else "closer")
                         + f" by {float(abs(dg['exact'][0] - dg['exact'][1])):.1e}"),
                        pick[dg["exact_pick"]],
                        "yes" if dg["exact_pick"] == a else "no",
                        "yes" if dg["exact_pick"] == b else "no",
                    ])
                frac = f"{100 * rows_in_same_group(lab_ref, lab_ipc):.1f} %"
            data_label = DISPLAY.get(name, f"Gaussian {GAUSS_N:,} x 15 (seed {GAUSS_SEED})")
            rows.append([data_label, kk, "yes" if same else "**no**", div, frac,
                         f"{il_ref:.4f}", f"{il_ipc:.4f}", f"{il_ipc - il_ref:+.4f}",
                         "yes" if fast_ok else "**NO**"])
            print(rows[-1], flush=True)

    elapsed = time.perf_counter() - t_start
    n_cases = len(rows)
    diff_sets = sorted({d for d, *_ in differing})
    better = sum(1 for *_, a, b in differing if b < a)
    worse = sum(1 for *_, a, b in differing if b > a)
    max_rel = max((abs(b - a) / a for *_, a, b in differing), default=0.0)

    out = [
        "## Inner-product distance comparison (Rodriguez-Hoyos et al. (2020), section 3.1)",
        "",
        f"*Generated by `bench/inner_product_experiment.py` on {now_utc()}; script runtime "
        f"{elapsed:.0f} s (of which {t_ref_total:.0f} s in the plain reference).*",
        "",
        f"- **Machine:** {machine_line()}; single-threaded numba kernels.",
        "- **Variant:** a copy of `_mdav_kernel.mdav_labels` in which each distance pass "
        "computes 0.5·‖x‖² − ⟨x, c⟩ with 0.5·‖x‖² precomputed per row (and moved along on "
        "compaction) instead of Σⱼ (xⱼ − cⱼ)². Centroids, farthest/nearest selection with "
        "lowest-index ties, distance reuse, compaction and the tail rule are unchanged.",
        "- **Data:** every column standardized (mean 0, variance 1), as `incrowd` does.",
        "",
        f"### (i) Speed: 50,000 x 15 standard Gaussian rows (seed 0), k = 10, median of "
        f"{REPEATS} after a warm-up",
        "",
        md_table(["kernel", "time", "min – max", "IL %", "speed-up"], speed_rows, "lrrrr"),
        "",
        f"Groups of the two kernels on this data: {'identical' if same_50k else '**different**'}.",
        "",
        f"### (ii) Groups vs the plain reference (`tests/reference.py`), k = {', '.join(map(str, KS))}",
        "",
        md_table(["data", "k", "same groups as reference", "first differing group",
                  "rows whose group is unchanged", "IL % reference", "IL % inner-product",
                  "difference", "shipped kernel = reference"], rows, "lrcrrrrrc"),
        "",
        (f"The inner-product variant forms **different groups in {len(differing)} of {n_cases} "
         f"cases** ({', '.join(DISPLAY.get(d, 'Gaussian') for d in diff_sets)}); its IL is lower "
         f"in {better} and higher in {worse} of them, by at most {100 * max_rel:.2f} % relative. "
         "The shipped kernel equals the reference in every case."
         if differing else
         f"The inner-product variant forms the same groups as the reference in all {n_cases} "
         "cases here; the shipped kernel does too."),
        "",
    ]
    # Sensitivity of Adult to a uniform rescale (no comparison changes in exact arithmetic).
    adult = load("adult")
    z0 = (adult - adult.mean(axis=0)) / adult.std(axis=0)
    z1 = (adult - adult.mean(axis=0)) / adult.std(axis=0, ddof=1)
    resc = []
    for kk in KS:
        l0 = mdav_labels(np.ascontiguousarray(z0), kk)
        l1 = mdav_labels(np.ascontiguousarray(z1), kk)
        resc.append((kk, same_groups(l0, l1), 100 * information_loss(adult, l0),
                     100 * information_loss(adult, l1)))

    out += [
        "### First divergence, diagnosed",
        "",
        "Plain MDAV is replayed with the reference's primitives; at each decision the "
        "inner-product decision is taken on the same state, with the same operation order as the "
        "numba variant. At the first decision where they differ, the two disputed rows (plain "
        "formula's pick / inner-product's pick; raw age, education-num, hours-per-week) with "
        "both float values and the exact squared distance of the float64 data (Python "
        "`Fraction`). *Exact pick* applies exact arithmetic and the lowest-index tie rule.",
        "",
        md_table(["data", "k", "group", "decision", "rows (raw values)", "plain ‖x − c‖²",
                  "inner-product score", "exact ‖x − c‖²", "exact pick", "plain agrees",
                  "inner-product agrees"], diag_rows, "lrrllllllcc"),
        "",
        "Uniform rescale check on Adult: standardizing with the sample deviation (ddof = 1) "
        "instead of the population one multiplies every column by the same factor, so no "
        "comparison changes in exact arithmetic; with the shipped (exact) kernel the groups "
        "still change: "
        + "; ".join(f"k={kk}: {'same groups' if same else 'different groups'}, IL {a:.4f} % vs "
                    f"{b:.4f} %" for kk, same, a, b in resc)
        + ".",
        "",
    ]
    out.extend(findings(median(t_ship), median(t_ip), differing, diag_rows, n_cases))
    body = "\n".join(out)
    path = update_section(DOCS / "benchmarks.md", "inner-product", body, "Benchmarks")
    print(body)
    print(f"\nwrote section 'inner-product' of {path} in {elapsed:.1f} s")


def findings(t_ship, t_ip, differing, diag_rows, n_cases) -> list[str]:
    ratio = t_ship / t_ip
    n_plain = sum(r[9] == "yes" for r in diag_rows)
    n_ip = sum(r[10] == "yes" for r in diag_rows)
    return [
        "### Findings",
        "",
        f"1. **No speed-up in numba.** The inner-product pass runs at {ratio:.2f}x the shipped "
        "pass on 50,000 x 15, k = 10. Per element and column the shipped loop does a "
        "subtraction, a multiplication and an addition, the variant a multiplication and a "
        "subtraction; both load the same column and update the same output vector, and the loop "
        "cost is in that traffic, not in the one arithmetic operation saved. Rodriguez-Hoyos et al.'s (2020) 1.54x "
        "comes from Matlab, where the change replaces elementwise temporaries with one "
        "BLAS matrix-vector product; in a compiled loop that fuses the three operations there "
        "is nothing comparable to gain (precomputing the norms and moving them on compaction "
        "costs a little on top).",
        "2. **Different groups on tie-rich data.** "
        + (f"The variant's groups differ from plain MDAV in {len(differing)} of {n_cases} "
           "cases, all on Adult (every k tested); on the CASC sets, Cloud and Gaussian data "
           "they are the same. "
           if differing and {d for d, *_ in differing} == {"adult"} else
           f"The variant's groups differ from plain MDAV in {len(differing)} of {n_cases} "
           "cases. ")
        + "Adult's three attributes are small integers, so many distinct rows lie at exactly "
        "the same distance from a centre in the raw data (e.g. ages 71 and 75 around 73). "
        "After standardization these distances are equal or differ in the last bits, and the "
        "decision is made by rounding. The two formulas round differently: ‖x − c‖² is a sum "
        "of small squares, so its absolute error is about ε·‖x − c‖², while 0.5·‖x‖² − ⟨x, "
        "c⟩ cancels two numbers of size ‖x‖² ≈ 10, with an error of about ε·‖x‖², often "
        "100x the other. In the first divergences above, the plain formula agrees with exact "
        f"arithmetic in {n_plain} of {len(diag_rows)} cases and the inner-product formula in "
        f"{n_ip}. Neither is exact in general, but only the plain formula is the textbook MDAV "
        "that other implementations (and our reference) compute.",
        "3. **Effect on utility is noise.** Information loss moves by well under 1 % relative, "
        "in both directions. What is lost is reproducibility: the same data and k no longer "
        "give the same groups as plain MDAV, and on Adult the groups already change under a "
        "harmless uniform rescaling (above), so results that differ only in rounding cannot be "
        "compared cell by cell.",
        "4. **Decision:** keep the exact distance pass, as `_kernels.py` does. The "
        "inner-product trick costs exactness on real integer-valued data and buys no speed in "
        "this kernel.",
        "",
    ]

if __name__ == "__main__":
    main()
