"""The fast ONA* kernel (rows remember their neighbourhood; a change log says what moved) gives
the groups, rounds and convergence of the reference kernel, tie for tie, in every search mode,
with its passes on one thread or many, and with lists short enough to run out."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import benchmark_matrix, kernel_data
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd.microaggregation._adaptive import new_tuner
from incrowd.microaggregation._kernels import before
from incrowd.microaggregation.greedy._mdav_star_fast import mdav_star_best_labels
from incrowd.microaggregation.ona import _screen_source
from incrowd.microaggregation.ona._ona_kernel import ona_star_labels, start_labels
from incrowd.microaggregation.ona._ona_star_fast import (
    _CHUNKED,
    _WIDTHS,
    SMALL_CLUSTERS,
    _lane_norms,
    _lists_block,
    _lists_block_single,
    _log_change,
    _recent_changes,
    _single_margin,
    _update_block,
    _update_block_single,
    ona_star_best_labels,
    ona_star_fast_kernel,
    ona_star_fast_labels,
    single_centroids,
)
from incrowd.microaggregation.ona._screen_widths import screen_pairs, screen_width


def assert_same_as_reference(Z, k, *, list_sizes=(6,), spares=(-1,), threads=(False,), updates=((0.5, 32),)):
    Z = np.ascontiguousarray(Z)
    init = start_labels(Z, k, mdav_star_best_labels(Z, k)) if Z.shape[0] >= 2 * k else None
    expected = ona_star_labels(Z, k, 100)
    for use_tree in (False, True):
        for spare in spares:
            for size in list_sizes:
                for force in threads:
                    for share, walk_min in updates:
                        if init is None:
                            got = ona_star_fast_labels(Z, k, 100, use_tree, spare)
                        else:
                            got = ona_star_fast_kernel(Z, k, 100, use_tree, init, new_tuner(force), spare,
                                                       -1.0, None, size, share, walk_min)
                        np.testing.assert_array_equal(got[0], expected[0])
                        assert got[1:] == expected[1:]


@st.composite
def tie_heavy(draw):
    """Integer grids: copies of rows, clusters with identical centroids, exactly tied costs."""
    n = draw(st.integers(2, 90))
    m = draw(st.integers(1, 7))
    k = draw(st.integers(2, max(2, min(n, 6))))
    levels = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    X = np.random.default_rng(seed).integers(0, levels, (n, m)).astype(np.float64)
    std = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0), k


@settings(max_examples=120, deadline=None)
@given(tie_heavy())
def test_equals_reference_on_tie_heavy_data(data):
    Z, k = data
    # lists of 1 and 2 clusters run out and evict all the time; spare=0 grows every array;
    # (1.0, 0): every block of stale rows is updated from the log, however many changed
    assert_same_as_reference(Z, k, list_sizes=(1, 2, 6), spares=(-1, 0), updates=((0.5, 32), (1.0, 0)))


@pytest.mark.parametrize("kind", ["gauss", "ints", "copies", "tails"])
@pytest.mark.parametrize("m", [2, 9])
def test_equals_reference_on_one_thread_or_many(kind, m):
    # (0.0, 32): blocks only make lists afresh; (1.0, 0): every block of stale rows is updated
    Z = kernel_data(kind, 700, m, seed=m)
    assert_same_as_reference(Z, 3, list_sizes=(2, 6), threads=(False, True), updates=((0.0, 32), (0.5, 32), (1.0, 0)))


@pytest.mark.parametrize("name", ["census", "tarragona", "eia", "cloud1", "cloud2"])
@pytest.mark.parametrize("k", [2, 3, 5, 10])
def test_equals_reference_on_benchmark_files(name, k):
    assert_same_as_reference(benchmark_matrix(name), k)


def test_a_part_of_a_larger_set_keeps_the_callers_scale_and_stop_flag():
    Z = np.ascontiguousarray(kernel_data("ints", 400, 3, seed=5))
    for stop in (np.zeros(1, np.uint8), np.ones(1, np.uint8)):
        expected = ona_star_labels(Z, 4, 100, -1, 7.5, stop)
        got = ona_star_fast_labels(Z, 4, 100, False, -1, 7.5, stop)
        np.testing.assert_array_equal(got[0], expected[0])
        assert got[1:] == expected[1:]


def _block_lists(block, X, cent, size, K, rows, screen=_WIDTHS):
    n = X.shape[0]
    out = (np.empty((n, K), np.int64), np.empty((n, K)), np.zeros(n, np.int64), np.empty(n),
           np.empty(n, np.int64), np.full(n, -1, np.int64))
    nc = cent.shape[0]
    if block is _lists_block:
        block(X, rows, 0, rows.shape[0], cent, size, nc, out, 7)
    else:
        xmax = np.abs(X).max(axis=0)
        block(X, X.astype(np.float32), xmax, rows, 0, rows.shape[0], cent, single_centroids(cent), size, nc, out, 7,
              screen)
    cid, cd, ccnt, clb, clbg, cst = out
    return [(list(cid[r, : ccnt[r]]), list(cd[r, : ccnt[r]]), clb[r], clbg[r], cst[r]) for r in rows]


def _centroids_of(X, labels):
    nc = labels.max() + 1
    cent = np.zeros((nc, X.shape[1]))
    np.add.at(cent, labels, X)
    size = np.bincount(labels, minlength=nc)
    cent /= np.maximum(size, 1)[:, None]
    return cent, size.astype(np.int64)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 150), m=st.integers(1, 20), levels=st.integers(1, 6), scale=st.sampled_from([1e-3, 1.0, 1e6, 1e12]),
       offset=st.sampled_from([0.0, 1e4, 1e9]), K=st.sampled_from([1, 2, 6]), seed=st.integers(0, 2**32 - 1))
def test_single_precision_pass_makes_the_double_pass_lists(n, m, levels, scale, offset, K, seed):
    """The float32 screen with its margin keeps every list bit for bit, also where float32
    cannot tell the distances apart (large offsets, huge scales, tied integer grids)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, (n, m)).astype(np.float64) * scale + offset
    X += rng.standard_normal((n, m)) * scale * (seed % 2)
    cent, size = _centroids_of(X, rng.integers(0, max(1, n // 2), n))
    size[rng.random(size.shape[0]) < 0.1] = 0  # empty clusters are skipped by both passes
    rows = rng.permutation(n)[: min(n, 64)].astype(np.int64)
    double = _block_lists(_lists_block, X, cent, size, K, rows)
    # the screen written out for the column count (chunks beyond 16), in column chunks
    for screen in (_WIDTHS, _CHUNKED):
        assert _block_lists(_lists_block_single, X, cent, size, K, rows, screen) == double


def test_single_precision_pass_with_more_tied_centroids_than_it_keeps():
    """300 centroids at one distance from every row overflow the float32 candidates: those
    rows take the double full search and still get the same lists."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((64, 5))
    cent = np.vstack([np.full((300, 5), 50.0), rng.standard_normal((40, 5)) * 60])
    size = np.ones(cent.shape[0], np.int64)
    rows = np.arange(64, dtype=np.int64)
    for K in (1, 6):
        assert _block_lists(_lists_block_single, X, cent, size, K, rows) == _block_lists(_lists_block, X, cent, size, K, rows)


def test_a_first_use_takes_the_reference_for_data_it_runs_quickly(monkeypatch):
    """Until the fast kernel is compiled or cached, data of at most FIRST_USE_WORK take the
    reference (a few seconds, where the fast kernel compiles for over a minute); larger data,
    or any data once the fast kernel is ready, take the fast one. The groups are the same."""
    from incrowd.microaggregation.ona import _ona_star_fast as fast

    k = 2
    Z = np.ascontiguousarray(kernel_data("gauss", SMALL_CLUSTERS * k + 1, 3, seed=11))
    expected = ona_star_labels(Z, k, 100)
    taken = []
    monkeypatch.setattr(fast, "ona_star_labels", lambda *a: taken.append("reference") or ona_star_labels(*a))
    monkeypatch.setattr(fast, "ona_star_fast_labels",
                        lambda *a, **kw: taken.append("fast") or ona_star_fast_labels(*a, **kw))
    work = Z.shape[0] * (Z.shape[0] // k) * Z.shape[1]
    for ready, limit, kernel in ((False, work, "reference"), (True, work, "fast"), (False, work - 1, "fast")):
        monkeypatch.setattr(fast, "compiled_or_cached", lambda _kernel, ready=ready: ready)
        monkeypatch.setattr(fast, "FIRST_USE_WORK", limit)
        got = fast.ona_star_best_labels(Z, k, 100, False)
        assert taken.pop() == kernel
        np.testing.assert_array_equal(got[0], expected[0])
        assert got[1:] == expected[1:]


def test_start_labels_split_every_large_group_by_mdav_plus_in_list_order():
    """ONA*'s start: every group of >= 2k rows is replaced by MDAV+ of its rows (ascending); its
    first part keeps the label and the others are numbered on, group by group, part by part."""
    from incrowd.microaggregation.greedy._greedy_kernels import mdav_plus_labels

    k = 3
    rng = np.random.default_rng(8)
    X = np.ascontiguousarray(rng.normal(size=(40, 2)))
    init = np.repeat(np.arange(4), [3, 14, 5, 18])[rng.permutation(40)]  # groups 1 and 3 are large
    got = start_labels(X, k, init)
    expected = init.copy()
    new = 4
    for g in (1, 3):
        rows = np.flatnonzero(init == g)
        parts = mdav_plus_labels(np.ascontiguousarray(X[rows]), k)
        for p in range(1, parts.max() + 1):
            expected[rows[parts == p]] = new
            new += 1
    np.testing.assert_array_equal(got, expected)
    assert np.bincount(got).max() < 2 * k and new > 6
    small = np.repeat(np.arange(8), 5)
    assert start_labels(X, k, small) is small  # nothing to split: the labels as given


@pytest.mark.parametrize("clusters", [SMALL_CLUSTERS - 1, SMALL_CLUSTERS])
def test_the_kernel_chosen_by_size_gives_the_reference_groups(clusters):
    """Below SMALL_CLUSTERS clusters the reference kernel runs (faster there), from it the fast
    one: either way the groups, rounds and convergence of the reference."""
    k = 2
    Z = np.ascontiguousarray(kernel_data("gauss", clusters * k + 1, 6, seed=clusters))
    got = ona_star_best_labels(Z, k, 100, False)
    expected = ona_star_labels(Z, k, 100)
    np.testing.assert_array_equal(got[0], expected[0])
    assert got[1:] == expected[1:]


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 90), m=st.integers(1, 18), levels=st.integers(1, 5), K=st.sampled_from([1, 2, 6]),
       seed=st.integers(0, 2**32 - 1), single=st.booleans(), screen=st.sampled_from([_WIDTHS, _CHUNKED]),
       wide=st.booleans())
def test_an_updated_list_keeps_its_promise(n, m, levels, K, seed, single, screen, wide):
    """After clusters move, appear (copies of others: exact ties) and vanish, a block updated
    from the log holds for every row: listed distances are the current ones, and every
    cluster off the list has a (distance, id) pair at least the row's bound; the float32
    screened update gives the double update's lists, bit for bit."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, (n, m)).astype(np.float64)
    nc = int(rng.integers(1, 40))
    cent = rng.integers(0, levels, (nc, m)).astype(np.float64)
    size = np.ones(nc, np.int64)
    rows = rng.permutation(n)[: min(n, 64)].astype(np.int64)
    b = rows.shape[0]
    cid, cd, ccnt = np.empty((n, K), np.int64), np.empty((n, K)), np.zeros(n, np.int64)
    clb, clbg, cst = np.empty(n), np.empty(n, np.int64), np.full(n, -1, np.int64)
    lists = (cid, cd, ccnt, clb, clbg, cst)
    log, meta, last = np.empty(4 * nc + 8, np.int64), np.zeros(2, np.int64), np.full(nc, -1, np.int64)
    for g in range(nc):  # every cluster was created once
        _log_change(g, log, meta, last)
    half = b // 2  # rows stamped at two times, so the block's oldest stamp is not every row's
    _lists_block(X, rows[:half], 0, half, cent, size, nc, lists, int(meta[0]))
    for g in rng.choice(nc, size=int(rng.integers(0, nc + 1)), replace=False):
        change = rng.integers(0, 3)
        if change == 0:
            cent[g] += rng.integers(-1, 2, m)
        elif change == 1:
            cent[g] = cent[rng.integers(0, nc)]
        else:
            size[g] = 0
        _log_change(g, log, meta, last)
    _lists_block(X, rows[half:], 0, b - half, cent, size, nc, lists, int(meta[0]))
    for g in rng.choice(nc, size=int(rng.integers(0, nc + 1)), replace=False):
        if size[g] > 0:
            cent[g] = cent[g] + rng.integers(-1, 2, m) if rng.random() < 0.5 else cent[rng.integers(0, nc)]
            _log_change(g, log, meta, last)
    now = int(meta[0])
    # the block takes its changes from a pass's walk over its own rows, or over more rows with
    # older stamps (the changes since the block's own oldest stamp are then a suffix)
    if wide:
        cst[np.setdiff1d(np.arange(n), rows)[:3]] = 0
        walked = np.arange(n, dtype=np.int64)
        recent = _recent_changes(walked, n, cst, now, log, last, size, nc)
    else:
        recent = _recent_changes(rows, b, cst, now, log, last, size, nc)
    if single:
        twin = tuple(a.copy() for a in lists)
        done = _update_block_single(X, X.astype(np.float32), np.abs(X).max(axis=0), rows, 0, b, cent, single_centroids(cent),
                                    size, nc, lists, now, last, 1.0, screen, recent)
        _update_block(X, rows, 0, b, cent, size, nc, twin, now, last, 1.0, recent)
        for a, c in zip(lists, twin):
            np.testing.assert_array_equal(a[rows], c[rows])
    else:
        done = _update_block(X, rows, 0, b, cent, size, nc, lists, now, last, 1.0, recent)
    assert done >= 0
    for r in rows:
        assert cst[r] == now
        listed = {int(cid[r, q]): cd[r, q] for q in range(ccnt[r])}
        for g in range(nc):
            if size[g] == 0:
                assert g not in listed
                continue
            d = float(((X[r] - cent[g]) ** 2).sum())
            if g in listed:
                assert listed[g] == d
                assert before(d, g, clb[r], clbg[r])
            else:
                assert not before(d, g, clb[r], clbg[r])


def test_the_written_out_screens_are_what_their_generator_writes():
    """``_screen_widths.py`` is generated; an edit to either side without the other fails here."""
    assert _screen_source.TARGET.read_text() == _screen_source.source()


@pytest.mark.parametrize("m", [1, 4, 7, 8, 13, 16, 17])
def test_each_written_out_width_gives_the_reference_groups(m):
    """Column counts at and between the written-out widths (padded with zero columns up to the
    next one), and the first beyond the widest (which takes the chunks), give the reference's
    groups."""
    Z = kernel_data("gauss", 900, m, seed=m)
    assert_same_as_reference(Z, 3)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 64), m=st.integers(1, 16), scale=st.sampled_from([1e-3, 1.0, 1e6, 1e12]),
       offset=st.sampled_from([0.0, 1e4, 1e9]), seed=st.integers(0, 2**32 - 1))
def test_the_expanded_screen_stays_within_the_margin(n, m, scale, offset, seed):
    """|x|^2 + |c|^2 - 2 x.c in float32 against the double distance: within the row's margin,
    also for centroids at the rows themselves (cancellation) and far out on an offset."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, m)) * scale + offset
    cent = np.vstack([X[: min(n, 5)], rng.standard_normal((7, m)) * scale + offset])
    xmax = np.abs(np.vstack([X, cent])).max(axis=0)
    rows = np.arange(n, dtype=np.int64)
    Xt = np.zeros((screen_width(m), 64), np.float32)  # zero rows up to the written-out width
    Xt[:m, :n] = X.astype(np.float32).T
    ids = np.arange(cent.shape[0], dtype=np.int64)
    acc = np.empty((cent.shape[0] + 1, 64), np.float32)
    hit = np.empty(cent.shape[0] + 1, np.bool_)
    screen_pairs(Xt, _lane_norms(X, rows, 0, n), single_centroids(cent), ids, 0, ids.shape[0], acc,
                 np.full(64, np.inf, np.float32), hit)
    for r in range(n):
        margin = _single_margin(X, r, xmax)
        for g in range(cent.shape[0]):
            exact = float(((X[r] - cent[g]) ** 2).sum())
            assert abs(float(acc[g, r]) - exact) <= margin


def test_the_kernel_runs_one_combination_without_switches_or_counters():
    """The product kernel always runs its fastest techniques: no switches to turn one off and no
    per-round counters for benches (they lived here before and made every call carry them)."""
    import inspect

    from incrowd.microaggregation.ona import _ona_star_fast

    switches = [n for n in vars(_ona_star_fast) if n.startswith("USE_") or n in ("ALL_TECHNIQUES", "STATS_COLUMNS")]
    assert switches == []
    for fn in (ona_star_fast_kernel, ona_star_fast_labels):
        params = inspect.signature(getattr(fn, "py_func", fn)).parameters
        assert not {"techniques", "stats", "fast_start", "log_divisor"} & set(params)


def test_start_clusters_refuses_a_group_left_unsplit():
    """The cluster arrays hold fewer than 3k members per cluster: labels that still have a group
    of 2k rows or more (not passed through start_labels) are refused, not written past the end."""
    from incrowd.microaggregation.ona._ona_kernel import start_clusters

    X = np.ascontiguousarray(np.random.default_rng(3).normal(size=(30, 2)))
    with pytest.raises(ValueError, match="2k rows"):
        start_clusters(X, 3, np.repeat(np.arange(3), [6, 12, 12]), -1)
    assert start_clusters(X, 3, np.repeat(np.arange(6), 5), -1)[5] == 6
