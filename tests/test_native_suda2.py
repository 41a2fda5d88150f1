"""SUDA2's kernels in the compiled extension (``_suda2.c``): each against a brute force of its
definition and against the numba kernel it replaced (kept here, loop for loop, as the reference),
bit for bit: random tables with missing values and ties, no record and one record, a cancel, a
work budget, and the errors of a bad call."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from test_suda2 import brute_msus

from incrowd._native import counting_order, dis_scores, msu_search, record_hashes
from incrowd.reporting._suda2 import _suffix_classes

# ------------------------------------------------------------------------------------------------
# The numba kernels as they were before the extension took them over

#: groups of up to this many records are checked for a record that can still have an MSU below
_SMALL = 8
#: steps between two looks at the cancel flag and the budget inside the compiled search
_CHECK_EVERY = 1 << 16


@njit(cache=True)
def _old_counting_order(classes, sizes):
    """Records ordered by class number (a counting sort, stable)."""
    start = np.empty(sizes.shape[0], dtype=np.int64)
    total = 0
    for g in range(sizes.shape[0]):
        start[g] = total
        total += sizes[g]
    rows = np.empty(classes.shape[0], dtype=np.int64)
    for i in range(classes.shape[0]):
        g = classes[i]
        rows[start[g]] = i
        start[g] += 1
    return rows


@njit(cache=True)
def _old_hashes(raw):
    """sdcMicro's 16-bit rotate-and-add hash of each record's values (``raw[variable, record]``)."""
    m, n = raw.shape
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        h = 0
        for j in range(m):
            carry = h & 0x8000
            h = ((h << 1) + raw[j, i]) & 0xFFFF
            if carry:
                h = (h + 1) & 0xFFFF
        out[i] = h
    return out


@njit(cache=True)
def _old_dis_kernel(score, q, odds):
    n = score.shape[0]
    adj = 0.0
    for i in range(n):  # in record order, as sdcMicro sums
        if score[i] != 0.0:
            adj += 1.0 / score[i] ** q
    out = np.zeros(n)
    for i in range(n):
        if score[i] != 0.0:
            out[i] = 1.0 / (1.0 + odds / (score[i] ** q * adj))
    return out


@njit(cache=True, nogil=True)
def _old_msu_kernel(codes, cards, suffix, max_size, stop, budget):
    """Depth-first over the prefix tree of variable sets, a node's children (one more, larger
    variable) in decreasing order of that variable: then every proper subset of a set comes
    before the set, so a record found unique on a set is an MSU exactly when none of its MSUs
    found so far is a subset of it.

    ``codes[v, r]`` is record r's code of variable v. A group is followed only while one of its
    records is unique on the group's variables plus all larger ones (``suffix[v, r]``: records
    equal on variables v.. share a number): every set below the node lies within those, and
    only a record unique there can be unique on one of them, and only while none of its MSUs
    found so far lies inside the group's variables. A variable that does not split a
    group adds nothing below it (the smaller set is unique wherever the larger one is).

    Sets of more than ``max_size`` variables are not searched. ``work`` counts the records
    visited and the MSUs compared; every ``_CHECK_EVERY`` of them the kernel reads ``stop[0]``
    (a cancel) and compares ``work`` with ``budget`` (0: no budget), and returns at once with
    ``status`` 1 (cancelled) or 2 (over budget) and the counts found so far. It holds no Python
    object, so it runs without the GIL."""
    m, n = codes.shape
    out = np.zeros((n, m), dtype=np.int64)
    status = 0
    work = np.int64(0)
    if n < 2:  # a lone record is unique on the empty set: it has no MSU
        return out, status, work
    check_at = np.int64(0)
    maxcard = 1
    for j in range(m):
        maxcard = max(maxcard, cards[j])
    count = np.zeros(maxcard, dtype=np.int64)
    start = np.zeros(maxcard, dtype=np.int64)
    distinct = np.empty(maxcard, dtype=np.int64)
    # node at depth d: its records grouped, group g at recs[d, bounds[d, g]:bounds[d, g + 1]]
    recs = np.empty((m + 1, n), dtype=np.int32)
    bounds = np.empty((m + 1, n + 1), dtype=np.int64)
    ngroups = np.zeros(m + 1, dtype=np.int64)
    for i in range(n):
        recs[0, i] = i
    bounds[0, 0] = 0
    bounds[0, 1] = n
    ngroups[0] = 1
    # the MSUs found so far, a list per record
    head = np.full(n, -1, dtype=np.int64)
    nxt = np.empty(max(16, n), dtype=np.int64)
    msk = np.empty(max(16, n), dtype=np.int64)
    nfound = 0
    st_mask = np.zeros(m + 1, dtype=np.int64)
    st_next = np.zeros(m + 1, dtype=np.int64)  # next variable to add, counting down
    st_low = np.zeros(m + 1, dtype=np.int64)  # smallest variable a child may add
    st_next[0] = m - 1
    depth = 0
    buf = np.empty(n, dtype=np.int32)
    while depth >= 0:
        v = st_next[depth]
        if v < st_low[depth]:
            depth -= 1
            continue
        st_next[depth] = v - 1
        child_mask = st_mask[depth] | (np.int64(1) << v)
        size = 0
        x = child_mask
        while x:
            x &= x - 1
            size += 1
        keep_children = v < m - 1 and size < max_size
        d1 = depth + 1
        col = codes[v]
        below = suffix[v + 1]
        kept = 0
        kg = 0
        bounds[d1, 0] = 0
        for g in range(ngroups[depth]):
            a = bounds[depth, g]
            b = bounds[depth, g + 1]
            if work >= check_at:
                if stop[0] != 0:
                    status = 1
                elif budget > 0 and work > budget:
                    status = 2
                if status != 0:
                    break
                check_at = work + _CHECK_EVERY
            work += b - a
            # the group split by v's value (a record missing v leaves it), by counting, in O(size)
            nb = 0
            nd = 0
            for t in range(a, b):
                r = recs[depth, t]
                c = col[r]
                if c >= 0:
                    if count[c] == 0:
                        distinct[nd] = c
                        nd += 1
                    count[c] += 1
                    buf[nb] = r
                    nb += 1
            if nd == 1 and nb == b - a:  # v does not split the group
                count[distinct[0]] = 0
                continue
            off = kept
            for t in range(nd):
                c = distinct[t]
                start[c] = off
                off += count[c]
            for t in range(nb):
                r = buf[t]
                c = col[r]
                recs[d1, start[c]] = r
                start[c] += 1
            for t in range(nd):
                c = distinct[t]
                q = start[c]
                p = q - count[c]
                count[c] = 0
                if q - p == 1:
                    r = recs[d1, p]
                    inside, steps = _old_msu_inside(head, nxt, msk, r, child_mask)
                    work += steps
                    if not inside:
                        if nfound == nxt.shape[0]:
                            nxt = _old_grow(nxt)
                            msk = _old_grow(msk)
                        msk[nfound] = child_mask
                        nxt[nfound] = head[r]
                        head[r] = nfound
                        nfound += 1
                        out[r, size - 1] += 1
                elif keep_children:
                    # in a small group, look for a record unique on the group's variables and
                    # all later ones, without an MSU inside the group's variables; a large
                    # group nearly always has one, and looking would cost more than it saves
                    live = q - p > _SMALL
                    u = p
                    while not live and u < q:
                        r = recs[d1, u]
                        alone = True
                        work += q - p
                        for w in range(p, q):
                            if w != u and below[recs[d1, w]] == below[r]:
                                alone = False
                                break
                        if alone:
                            inside, steps = _old_msu_inside(head, nxt, msk, r, child_mask)
                            work += steps
                            live = not inside
                        u += 1
                    if live:
                        if kept != p:
                            for u in range(p, q):
                                recs[d1, kept + u - p] = recs[d1, u]
                        kept += q - p
                        kg += 1
                        bounds[d1, kg] = kept
        if status != 0:
            break
        if keep_children and kg > 0:
            ngroups[d1] = kg
            st_mask[d1] = child_mask
            st_next[d1] = m - 1
            st_low[d1] = v + 1
            depth = d1
    return out, status, work


@njit(cache=True, nogil=True)
def _old_msu_inside(head, nxt, msk, r, child_mask):
    """Whether one of record r's MSUs found so far lies inside the variables of ``child_mask``
    (then r's unique set there is not minimal), and the list entries read (the work counted)."""
    steps = 0
    e = head[r]
    while e >= 0:
        steps += 1
        if (msk[e] & child_mask) == msk[e]:
            return True, steps
        e = nxt[e]
    return False, steps


@njit(cache=True, nogil=True)
def _old_grow(a):
    b = np.empty(a.shape[0] * 2, dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


# ------------------------------------------------------------------------------------------------


@st.composite
def _codes(draw):
    """codes[variable, record]: dense codes per variable (-1 missing), and the rows as tuples."""
    m = draw(st.integers(1, 5))
    n = draw(st.integers(0, 40))
    rows = [tuple(draw(st.sampled_from([None, 0, 1, 2])) for _ in range(m)) for _ in range(n)]
    frame = pd.DataFrame(rows, columns=[f"v{j}" for j in range(m)], dtype=object)
    codes = np.array([pd.factorize(frame[c])[0] for c in frame.columns], dtype=np.int32).reshape(m, n)
    return codes, rows


def _search(codes: np.ndarray, max_size: int, stop=None, budget: int = 0):
    m, n = codes.shape
    cards = np.maximum(codes.max(axis=1).astype(np.int64) + 1, 1) if n else np.ones(m, np.int64)
    flag = np.zeros(1, np.uint8) if stop is None else stop
    args = (codes, cards, _suffix_classes(codes), max_size, flag, budget)
    return msu_search(*args), _old_msu_kernel(*args)


@settings(max_examples=300, deadline=None)
@given(_codes(), st.integers(1, 5))
def test_msu_search_equals_the_definition_and_numba_s_kernel(case, max_size):
    codes, rows = case
    (got, status, work), (old, old_status, old_work) = _search(codes, max_size)
    np.testing.assert_array_equal(got, old)
    assert (status, work) == (old_status, old_work) and status == 0
    expected = np.zeros_like(got)
    for r, sizes in enumerate(brute_msus(rows) if rows else []):
        for k in sizes:
            if k <= max_size:
                expected[r, k - 1] += 1
    np.testing.assert_array_equal(got, expected)


def test_msu_search_stops_on_its_flag_and_its_budget():
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 4, (8, 3000)).astype(np.int32)
    (full, status, work), _ = _search(codes, 8)
    assert status == 0 and work > 1 << 17 and full.sum() > 0
    (got, status, steps), (old, old_status, old_steps) = _search(codes, 8, budget=work // 2)
    assert (status, steps) == (old_status, old_steps) and status == 2 and work // 2 < steps < work
    np.testing.assert_array_equal(got, old)
    (got, status, steps), (old, old_status, old_steps) = _search(codes, 8, stop=np.ones(1, np.uint8))
    assert (status, steps, got.sum()) == (old_status, old_steps, old.sum()) == (1, 0, 0)


def test_msu_search_checks_its_call():
    codes = np.zeros((2, 3), np.int32)
    suffix = _suffix_classes(codes)
    flag = np.zeros(1, np.uint8)
    with pytest.raises(ValueError, match=r"codes\[1, 2\] = 5 is not -1 or a code below cards\[1\] = 1"):
        bad = codes.copy()
        bad[1, 2] = 5
        msu_search(bad, np.ones(2, np.int64), suffix, 2, flag, 0)
    with pytest.raises(ValueError, match="codes must be m x n and suffix"):
        msu_search(codes, np.ones(2, np.int64), suffix[:2], 2, flag, 0)
    with pytest.raises(ValueError, match="stop must be a C-contiguous uint8 array"):
        msu_search(codes, np.ones(2, np.int64), suffix, 2, np.zeros(1, np.int64), 0)
    with pytest.raises(ValueError, match="cards holds 8 bytes; expected 16"):
        msu_search(codes, np.ones(1, np.int64), suffix, 2, flag, 0)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 6), st.integers(0, 50))
def test_record_hashes_equal_the_definition_and_numba_s_kernel(seed, m, n):
    raw = np.random.default_rng(seed).integers(0, 70_000, (m, n)).astype(np.int64)
    got = record_hashes(raw)
    np.testing.assert_array_equal(got, _old_hashes(raw))
    for i in range(n):  # the 16 bits rotated left by one, the value added, 16 bits kept
        h = 0
        for j in range(m):
            h = (((h << 1) | (h >> 15)) + int(raw[j, i])) & 0xFFFF
        assert got[i] == h
    assert got.shape == (n,) and ((got >= 0) & (got < 1 << 16)).all()


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 40), st.floats(0.5, 1.5), st.floats(0.0, 1e3))
def test_dis_scores_equal_the_definition_and_numba_s_kernel(seed, n, q, odds):
    rng = np.random.default_rng(seed)
    score = np.round(rng.random(n) * 20) * (rng.random(n) < 0.5)  # zeros and ties
    got = dis_scores(score, q, odds)
    assert got.tobytes() == _old_dis_kernel(score, q, odds).tobytes()
    adj = 0.0
    for s in score.tolist():
        if s != 0.0:
            adj += 1.0 / math.pow(s, q)
    want = [1.0 / (1.0 + odds / (math.pow(s, q) * adj)) if s != 0.0 else 0.0 for s in score.tolist()]
    assert got.tolist() == want


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 60), st.integers(1, 8))
def test_counting_order_equals_a_stable_sort_and_numba_s_kernel(seed, n, g):
    classes = np.random.default_rng(seed).integers(0, g, n).astype(np.int64)
    sizes = np.bincount(classes, minlength=g).astype(np.int64)
    got = counting_order(classes, sizes)
    np.testing.assert_array_equal(got, _old_counting_order(classes, sizes))
    np.testing.assert_array_equal(got, np.argsort(classes, kind="stable"))
    if n:
        with pytest.raises(ValueError, match="is not a class"):
            counting_order(classes + g, sizes)
    with pytest.raises(ValueError, match=r"sizes sum to \d+; classes holds"):
        counting_order(classes, sizes + 1)
