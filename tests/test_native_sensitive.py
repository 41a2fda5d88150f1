"""The compiled extension's kernels of l and t (``_sensitive.c``), of local suppression
(``_suppression.c``) and of the sum of squared deviations (``_measures.c``): each against a brute
force of its definition and against the numba kernel it replaced (kept here, loop for loop, as
the reference), bit for bit: random shapes, ties, no row and one row, and the errors of a bad
call."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from incrowd._native import dense_status, match_combinations, nearest_slots, sensitive_counts, squared_deviations

# ------------------------------------------------------------------------------------------------
# The numba kernels as they were before the extension took them over


@njit(cache=True)
def _old_sensitive_counts(class_of, n_classes, pair_b, pair_val, pair_cnt, reference, ordered, missing, with_t,
                          distinct_out, distance):
    m = reference.size
    n_pairs = pair_b.size
    start = np.zeros(n_classes + 1, np.int64)
    for p in range(n_pairs):
        start[class_of[pair_b[p]] + 1] += 1
    for c in range(n_classes):
        start[c + 1] += start[c]
    fill = start[:n_classes].copy()
    order = np.empty(n_pairs, np.int64)
    for p in range(n_pairs):
        c = class_of[pair_b[p]]
        order[fill[c]] = p
        fill[c] += 1
    n_ref = np.int64(0)
    r_cum = np.empty(m, np.int64)
    for i in range(m):
        n_ref += reference[i]
        r_cum[i] = n_ref
    scratch = np.zeros(m, np.int64)
    with_t = with_t and m > 1
    for c in range(n_classes):
        distinct = 0
        s = np.int64(0)
        for e in range(start[c], start[c + 1]):
            p = order[e]
            v = pair_val[p]
            if scratch[v] == 0 and not (missing and v == m - 1):
                distinct += 1
            scratch[v] += pair_cnt[p]
            s += pair_cnt[p]
        distinct_out[c] = distinct
        if with_t and s > 0:
            num = np.int64(0)
            if ordered:
                cum = np.int64(0)
                for i in range(m - 1):
                    cum += scratch[i]
                    num += abs(cum * n_ref - r_cum[i] * s)
                den = s * n_ref * (m - 1)
            else:
                for e in range(start[c], start[c + 1]):
                    v = pair_val[order[e]]
                    if scratch[v] != 0:
                        r = reference[v]
                        num += abs(scratch[v] * n_ref - r * s) - r * s
                        scratch[v] = 0
                num += s * n_ref
                den = 2 * s * n_ref
            distance[c] = num / den
        elif with_t:
            distance[c] = 0.0
        for e in range(start[c], start[c + 1]):
            scratch[pair_val[order[e]]] = 0
    return distinct_out, distance


@njit(cache=True)
def _old_nearest_slots(cent, lo, n, own):
    p = cent.shape[0]
    out = np.empty(n, dtype=np.int64)
    found = 0
    best = np.inf
    for i in range(n):
        if i == own:
            continue
        d = 0.0
        for j in range(p):
            t = cent[j, lo + i] - cent[j, lo + own]
            d += t * t
        if d < best:
            best = d
            out[0] = i
            found = 1
        elif d == best:
            out[found] = i
            found += 1
    return out[:found]


@njit(cache=True)
def _old_dense_status(counts, reference, ordered, missing):
    g, m = counts.shape
    distinct = np.zeros(g, dtype=np.int64)
    distance = np.zeros(g, dtype=np.float64)
    n_ref = 0
    for v in range(m):
        n_ref += reference[v]
    counted = m - 1 if missing else m
    for r in range(g):
        size = 0
        for v in range(m):
            c = counts[r, v]
            size += c
            if v < counted and c > 0:
                distinct[r] += 1
        if m == 1 or size == 0:
            continue
        num = 0
        if ordered:
            cum = 0
            ref_cum = 0
            for v in range(m - 1):
                cum += counts[r, v]
                ref_cum += reference[v]
                num += abs(cum * n_ref - ref_cum * size)
            distance[r] = num / (size * n_ref * (m - 1))
        else:
            for v in range(m):
                num += abs(counts[r, v] * n_ref - reference[v] * size)
            distance[r] = num / (2 * size * n_ref)
    return distinct, distance


@njit(cache=True)
def _old_match_kernel(U, row, c, value, match_src, match_dest):
    for i in range(U.shape[0]):
        mism = 0
        at_c = False
        for j in range(U.shape[1]):
            u = U[i, j]
            if u >= 0 and row[j] >= 0 and u != row[j]:
                mism += 1
                if j == c:
                    at_c = True
        match_src[i] = mism == 0
        if value < 0:
            match_dest[i] = mism == 0 or (mism == 1 and at_c)
        else:
            match_dest[i] = mism == 0 and (U[i, c] < 0 or U[i, c] == value)


@njit(cache=True)
def _old_neumaier_add(total, comp, x):
    t = total + x
    if abs(total) >= abs(x):
        comp += (total - t) + x
    else:
        comp += (x - t) + total
    return t, comp


@njit(cache=True)
def _old_squared_deviations(X, group, centers):
    total = 0.0
    comp = 0.0
    for i in range(X.shape[0]):
        row = 0.0
        c = group[i]
        for j in range(X.shape[1]):
            d = X[i, j] - centers[c, j]
            row += d * d
        total, comp = _old_neumaier_add(total, comp, row)
    return total + comp


# ------------------------------------------------------------------------------------------------
# Brute forces of the definitions


def _emd(counts: list[int], reference: list[int], ordered: bool) -> Fraction:
    """The earth mover's distance of a class's value counts to the reference distribution, exact:
    ordered, the mean over the m - 1 steps of the cumulative shares' gaps; unordered, half the
    summed gaps of the shares."""
    s, n = sum(counts), sum(reference)
    p = [Fraction(c, s) for c in counts]
    q = [Fraction(r, n) for r in reference]
    m = len(counts)
    if ordered:
        gaps, cp, cq = Fraction(0), Fraction(0), Fraction(0)
        for i in range(m - 1):
            cp, cq = cp + p[i], cq + q[i]
            gaps += abs(cp - cq)
        return gaps / (m - 1)
    return sum((abs(a - b) for a, b in zip(p, q)), Fraction(0)) / 2


def _class_figures(per_value: list[int], reference: list[int], ordered: bool, missing: bool,
                   with_t: bool) -> tuple[int, float | None]:
    m = len(reference)
    distinct = sum(1 for v, c in enumerate(per_value) if c > 0 and not (missing and v == m - 1))
    if not with_t or m == 1:
        return distinct, None
    if sum(per_value) == 0:
        return distinct, 0.0
    # small integers: numerator and denominator are exact doubles, so one division rounds as the
    # exact fraction does
    return distinct, float(_emd(per_value, reference, ordered))


# ------------------------------------------------------------------------------------------------
# sensitive_counts


@st.composite
def _pairs(draw):
    """Bottom classes grouped into classes, their (bottom class, value, rows) pairs in any order
    (a value met in two bottom classes of one class, classes without a pair), a reference."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_bottom = draw(st.integers(0, 30))
    n_classes = draw(st.integers(0 if n_bottom == 0 else 1, max(n_bottom, 1) + 2))
    m = draw(st.integers(1, 6))
    class_of = rng.integers(0, max(n_classes, 1), n_bottom) if n_classes else np.zeros(0, np.int64)
    n_pairs = draw(st.integers(0, 3 * n_bottom)) if n_bottom else 0
    pair_b = rng.integers(0, n_bottom, n_pairs) if n_bottom else np.zeros(0, np.int64)
    pair_val = rng.integers(0, m, n_pairs)
    pair_cnt = rng.integers(1, 9, n_pairs)
    reference = rng.integers(1, 30, m)
    return (class_of.astype(np.int64), n_classes, pair_b.astype(np.int64), pair_val.astype(np.int64),
            pair_cnt.astype(np.int64), reference.astype(np.int64), draw(st.booleans()), draw(st.booleans()),
            draw(st.booleans()))


@settings(max_examples=300, deadline=None)
@given(_pairs())
def test_sensitive_counts_equal_the_definition_and_numba_s_kernel(case):
    class_of, n_classes, pair_b, pair_val, pair_cnt, reference, ordered, missing, with_t = case
    distinct = np.full(n_classes, -7, np.int64)
    distance = np.full(n_classes, -1.0)
    got = sensitive_counts(class_of, n_classes, pair_b, pair_val, pair_cnt, reference, ordered, missing, with_t,
                           distinct, distance)
    assert got[0] is distinct and got[1] is distance  # written in place, as numba's
    old_distinct = np.full(n_classes, -7, np.int64)
    old_distance = np.full(n_classes, -1.0)
    _old_sensitive_counts(class_of, n_classes, pair_b, pair_val, pair_cnt, reference, ordered, missing, with_t,
                          old_distinct, old_distance)
    np.testing.assert_array_equal(distinct, old_distinct)
    assert distance.tobytes() == old_distance.tobytes()  # bit for bit
    m = reference.size
    for c in range(n_classes):
        per_value = [0] * m
        for b, v, n in zip(pair_b.tolist(), pair_val.tolist(), pair_cnt.tolist()):
            if class_of[b] == c:
                per_value[v] += n
        want_distinct, want_distance = _class_figures(per_value, reference.tolist(), ordered, missing, with_t)
        assert distinct[c] == want_distinct
        assert distance[c] == (-1.0 if want_distance is None else want_distance)  # untouched without t


def test_sensitive_counts_refuse_codes_outside_their_ranges():
    class_of = np.array([0, 1], np.int64)
    pair_b = np.array([0, 1], np.int64)
    value = np.array([0, 1], np.int64)
    count = np.array([1, 1], np.int64)
    reference = np.array([2, 3], np.int64)

    def call(class_of=class_of, n_classes=2, pair_b=pair_b, value=value, reference=reference,
             distinct=None, distance=None):
        sensitive_counts(class_of, n_classes, pair_b, value, count, reference, False, False, True,
                         np.zeros(n_classes, np.int64) if distinct is None else distinct,
                         np.zeros(n_classes) if distance is None else distance)

    call()
    with pytest.raises(ValueError, match=r"class_of\[1\] = 1 is not a class"):
        call(n_classes=1)
    with pytest.raises(ValueError, match=r"pair_b\[1\] = 2 is not a bottom class"):
        call(pair_b=np.array([0, 2], np.int64))
    with pytest.raises(ValueError, match=r"pair_val\[0\] = -1 is not a value of reference"):
        call(value=np.array([-1, 1], np.int64))
    with pytest.raises(ValueError, match="distinct_out must be a writable C-contiguous int64 array"):
        call(distinct=np.zeros(2, np.int32))
    with pytest.raises(ValueError, match="distance must be a writable C-contiguous float64 array"):
        call(distance=np.zeros(4)[::2])
    with pytest.raises(ValueError, match="distance holds 8 bytes; expected 16"):
        call(distance=np.zeros(1))
    with pytest.raises(ValueError, match="pair_val holds 24 bytes; expected 16"):
        call(value=np.array([0, 1, 1], np.int64))


# ------------------------------------------------------------------------------------------------
# dense_status


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 12), st.integers(1, 6), st.booleans(), st.booleans())
def test_dense_status_equals_the_definition_and_numba_s_kernel(seed, groups, m, ordered, missing):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, (groups, m)) * (rng.random((groups, m)) < 0.6)  # empty groups and values
    reference = rng.integers(1, 20, m).astype(np.int64)
    distinct, distance = dense_status(counts, reference, ordered, missing)
    old_distinct, old_distance = _old_dense_status(counts.astype(np.int64), reference, ordered, missing)
    np.testing.assert_array_equal(distinct, old_distinct)
    assert distance.tobytes() == old_distance.tobytes()
    for r in range(groups):
        want_distinct, want_distance = _class_figures(counts[r].tolist(), reference.tolist(), ordered, missing, True)
        assert distinct[r] == want_distinct
        assert distance[r] == (want_distance or 0.0)


def test_dense_status_checks_its_shapes():
    with pytest.raises(ValueError, match="counts must be two-dimensional"):
        dense_status(np.zeros(3, np.int64), np.ones(3, np.int64), False, False)
    with pytest.raises(ValueError, match="reference holds 2 values; counts has 3 columns"):
        dense_status(np.zeros((1, 3), np.int64), np.ones(2, np.int64), False, False)


# ------------------------------------------------------------------------------------------------
# nearest_slots

_coordinate = st.one_of(st.integers(-2, 2).map(float), st.floats(-1e3, 1e3, allow_nan=False))


def _summed_squares(diff: np.ndarray) -> float:
    total = 0.0
    for x in diff.tolist():
        total += x * x
    return total


@settings(max_examples=300, deadline=None)
@given(data=st.data(), p=st.integers(1, 3), slots=st.integers(2, 30))
def test_nearest_slots_equal_the_definition_and_numba_s_kernel(data, p, slots):
    cent = np.array(data.draw(st.lists(_coordinate, min_size=p * slots, max_size=p * slots))).reshape(p, slots)
    lo = data.draw(st.integers(0, slots - 2))
    n = data.draw(st.integers(2, slots - lo))
    own = data.draw(st.integers(0, n - 1))
    got = nearest_slots(cent, lo, n, own)
    np.testing.assert_array_equal(got, _old_nearest_slots(cent, lo, n, own))
    d = {i: _summed_squares(cent[:, lo + i] - cent[:, lo + own]) for i in range(n) if i != own}
    assert got.tolist() == [i for i in sorted(d) if d[i] == min(d.values())]  # every tie, ascending


def test_nearest_slots_edges_and_errors():
    cent = np.array([[0.0, 1.0, 1.0, 5.0]])
    assert nearest_slots(cent, 0, 4, 0).tolist() == [1, 2]  # a tie: both
    assert nearest_slots(cent, 3, 1, 0).tolist() == []  # alone in its block
    assert nearest_slots(np.asfortranarray(np.vstack([cent, cent])), 1, 3, 0).tolist() == [1]
    with pytest.raises(ValueError, match="are not all among cent's 4"):
        nearest_slots(cent, 2, 3, 0)
    with pytest.raises(ValueError, match="are not all among cent's 4"):
        nearest_slots(cent, 0, 2, 2)
    with pytest.raises(ValueError, match="cent must be two-dimensional"):
        nearest_slots(cent[0], 0, 2, 0)


# ------------------------------------------------------------------------------------------------
# match_combinations


def _matches(u: list[int], row: list[int]) -> bool:
    """A missing value (-1) matches any value."""
    return all(a < 0 or b < 0 or a == b for a, b in zip(u, row))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 25), st.integers(1, 5), st.integers(-1, 2))
def test_match_combinations_equal_the_definition_and_numba_s_kernel(seed, size, m, value):
    rng = np.random.default_rng(seed)
    U = rng.integers(-1, 3, (size, m)).astype(np.int64)
    row = rng.integers(-1, 3, m).astype(np.int64)
    c = int(rng.integers(0, m))
    src, dest = match_combinations(U, row, c, value)
    old_src, old_dest = np.empty(size, np.bool_), np.empty(size, np.bool_)
    _old_match_kernel(U, row, c, value, old_src, old_dest)
    np.testing.assert_array_equal(src, old_src)
    np.testing.assert_array_equal(dest, old_dest)
    assert src.dtype == dest.dtype == np.bool_
    # the definition: the record moves from row to row with cell c blanked (value -1), or restores
    # a blanked cell c to value
    moved = row.copy()
    if value >= 0:
        row[c] = -1
        src, dest = match_combinations(U, row, c, value)
    moved[c] = value
    assert src.tolist() == [_matches(u, row.tolist()) for u in U.tolist()]
    assert dest.tolist() == [_matches(u, moved.tolist()) for u in U.tolist()]


def test_match_combinations_checks_its_call():
    U = np.zeros((2, 3), np.int64)
    with pytest.raises(ValueError, match="row holds 2 values; U has 3 columns"):
        match_combinations(U, np.zeros(2, np.int64), 0, -1)
    with pytest.raises(ValueError, match="column 3 is not one of the 3 columns"):
        match_combinations(U, np.zeros(3, np.int64), 3, -1)
    with pytest.raises(ValueError, match="U must be two-dimensional"):
        match_combinations(U[0], np.zeros(3, np.int64), 0, -1)


# ------------------------------------------------------------------------------------------------
# squared_deviations

_value = st.one_of(st.integers(-3, 3).map(float), st.floats(-1e6, 1e6, allow_nan=False))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), n=st.integers(0, 40), m=st.integers(0, 4), g=st.integers(1, 5))
def test_squared_deviations_equal_the_definition_and_numba_s_kernel(data, n, m, g):
    X = np.array(data.draw(st.lists(_value, min_size=n * m, max_size=n * m)), dtype=np.float64).reshape(n, m)
    centers = np.array(data.draw(st.lists(_value, min_size=g * m, max_size=g * m)), dtype=np.float64).reshape(g, m)
    group = np.array(data.draw(st.lists(st.integers(0, g - 1), min_size=n, max_size=n)), dtype=np.int64)
    got = squared_deviations(X, group, centers)
    old = _old_squared_deviations(X, group, centers)
    assert np.float64(got).tobytes() == np.float64(old).tobytes()
    # the definition: each row's squares in column order, the rows summed with Neumaier's
    # compensation in row order; the compensated sum is as close as the exact sum allows
    total = comp = 0.0
    rows = []
    for i in range(n):
        row = 0.0
        for j in range(m):
            d = float(X[i, j]) - float(centers[group[i], j])
            row += d * d  # (numpy's scalar ** 2 may round differently)
        rows.append(row)
        t = total + row
        comp += (total - t) + row if abs(total) >= abs(row) else (row - t) + total
        total = t
    assert got == total + comp
    assert got == pytest.approx(math.fsum(rows), rel=1e-15, abs=0.0)


def test_squared_deviations_checks_its_call():
    X = np.ones((2, 2))
    with pytest.raises(ValueError, match=r"group\[1\] = 2 is not a row of centers \(2 rows\)"):
        squared_deviations(X, np.array([0, 2]), np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"group\[0\] = -1 is not a row of centers"):
        squared_deviations(X, np.array([-1, 0]), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="centers has 3 columns; X has 2"):
        squared_deviations(X, np.array([0, 0]), np.zeros((1, 3)))
    with pytest.raises(ValueError, match="X holds 32 bytes; expected 48"):
        squared_deviations(X, np.array([0, 0, 0]), np.zeros((1, 2)))
    assert squared_deviations(X[:1], np.array([0]), np.zeros((1, 2))) == 2.0  # one row
