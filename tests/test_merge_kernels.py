"""The l/t merge's compiled steps choose exactly what their numpy forms choose.

``nearest_slots`` (the partner search: the block's live groups nearest to a failing group) and
``dense_status`` (each group's distinct values and distance from its value counts) replace
numpy forms that ran once per merge; a release must not change by a single merge, so each is
held equal to its numpy form on random data, and ``enforce_sensitive`` as a whole to the run
with the numpy forms patched back in. A large block searches a k-d tree of its centroids
(``centroid_nearest``) instead of scanning them: the tree's answer is held equal to the scan's
(every tie included), and the merges made on the tree to those made by the scan.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd._native import _sensitive as sensitive_module_native
from incrowd._native import centroid_nearest, centroid_tree, dense_status, nearest_slots
from incrowd.privacy import DistinctL, TCloseness
from incrowd.privacy import emd as _emd
from incrowd.publishing import _sensitive as sensitive_module
from incrowd.publishing._sensitive import SensitiveColumn, enforce_sensitive


def _numpy_nearest(cent: np.ndarray, lo: int, n: int, own: int) -> np.ndarray:
    """The partner search as numpy computed it: squared distances summed feature by feature."""
    dist = np.zeros(n)
    for j in range(cent.shape[0]):
        d = cent[j, lo:lo + n] - cent[j, lo + own]
        dist += d * d
    dist[own] = np.inf
    return np.flatnonzero(dist == dist.min())


def _numpy_status(counts, reference, ordered: bool, missing: bool):
    values = counts[:, :-1] if missing else counts
    return (values > 0).sum(axis=1), _emd.dense_distances(counts, reference, ordered)


_coordinate = st.one_of(st.integers(-3, 3).map(float), st.floats(-1e3, 1e3, allow_nan=False))


@settings(max_examples=200, deadline=None)
@given(data=st.data(), p=st.integers(1, 3), slots=st.integers(2, 40))
def test_nearest_slots_equal_the_numpy_search(data, p, slots):
    cent = np.array(data.draw(st.lists(_coordinate, min_size=p * slots, max_size=p * slots))).reshape(p, slots)
    lo = data.draw(st.integers(0, slots - 2))
    n = data.draw(st.integers(2, slots - lo))
    own = data.draw(st.integers(0, n - 1))
    np.testing.assert_array_equal(nearest_slots(cent, lo, n, own), _numpy_nearest(cent, lo, n, own))


@settings(max_examples=200, deadline=None)
@given(data=st.data(), m=st.integers(1, 6), groups=st.integers(1, 20), ordered=st.booleans(), missing=st.booleans())
def test_dense_status_equals_the_numpy_status(data, m, groups, ordered, missing):
    counts = np.array(data.draw(st.lists(st.integers(0, 50), min_size=m * groups, max_size=m * groups)),
                      dtype=np.int64).reshape(groups, m)
    reference = np.array(data.draw(st.lists(st.integers(1, 10_000), min_size=m, max_size=m)), dtype=np.int64)
    distinct, distance = dense_status(counts, reference, ordered, missing)
    want_distinct, want_distance = _numpy_status(counts, reference, ordered, missing)
    np.testing.assert_array_equal(distinct, want_distinct)
    np.testing.assert_array_equal(distance, want_distance)  # bit for bit: the same merges follow


def _numpy_partner_steps():
    """``enforce_sensitive`` with the numpy forms of both steps patched back in."""
    class NumpyCounts(sensitive_module._DenseCounts):
        def _status(self, counts):
            return _numpy_status(counts, self.reference, self.ordered, self.missing)

    return (mock.patch.object(sensitive_module, "nearest_slots", _numpy_nearest),
            mock.patch.object(sensitive_module, "_DenseCounts", NumpyCounts))


@st.composite
def _merge_case(draw):
    n = draw(st.integers(4, 120))
    n_groups = draw(st.integers(2, max(2, n // 2)))
    labels = np.array(draw(st.lists(st.integers(0, n_groups - 1), min_size=n, max_size=n)))
    block_of = {g: draw(st.integers(0, 2)) for g in np.unique(labels)}
    blocks = np.array([block_of[g] for g in labels])
    p = draw(st.integers(1, 3))
    points = np.array(draw(st.lists(_coordinate, min_size=n * p, max_size=n * p))).reshape(n, p)
    columns = []
    for j in range(draw(st.integers(1, 2))):
        m = draw(st.integers(2, 4))
        codes = np.array(draw(st.lists(st.integers(0, m - 1), min_size=n, max_size=n)))
        ref = np.bincount(codes, minlength=m) + np.array(draw(st.lists(st.integers(0, 3), min_size=m, max_size=m)))
        columns.append(SensitiveColumn(f"s{j}", codes, m, draw(st.booleans()), ref, missing=draw(st.booleans())))
    models = [DistinctL(draw(st.integers(2, 3)))]
    if draw(st.booleans()):
        models.append(TCloseness(draw(st.floats(0.05, 1.0))))
    return labels, points, columns, models, blocks


@settings(max_examples=150, deadline=None)
@given(case=_merge_case())
def test_the_merges_equal_those_of_the_numpy_steps(case):
    labels, points, columns, models, blocks = case
    compiled = enforce_sensitive(labels, points, columns, models, blocks=blocks)
    patches = _numpy_partner_steps()
    with patches[0], patches[1]:
        numpy_form = enforce_sensitive(labels, points, columns, models, blocks=blocks)
    np.testing.assert_array_equal(compiled[0], numpy_form[0])
    np.testing.assert_array_equal(compiled[1], numpy_form[1])


@settings(max_examples=300, deadline=None)
@given(data=st.data(), m=st.integers(1, 60), p=st.integers(1, 3), leaf=st.integers(1, 4),
       n_extra=st.integers(0, 5))
def test_the_tree_finds_the_nearest_points_and_every_tie(data, m, p, leaf, n_extra):
    # integer coordinates make ties at every distance; the scan over the live points is the definition
    points = np.array(data.draw(st.lists(_coordinate, min_size=m * p, max_size=m * p))).reshape(m, p)
    extra = np.array(data.draw(st.lists(_coordinate, min_size=n_extra * p, max_size=n_extra * p))).reshape(n_extra, p)
    q = np.array(data.draw(st.lists(_coordinate, min_size=p, max_size=p)))
    perm, lo, hi = centroid_tree(points, leaf)
    assert sorted(perm.tolist()) == list(range(m))
    alive = np.array(data.draw(st.lists(st.booleans(), min_size=m, max_size=m)), np.int8)
    exclude = data.draw(st.integers(-1, m - 1))
    exclude_extra = data.draw(st.integers(-1, n_extra - 1))
    # the buffer of extra points may hold more rows than are live: those past n_extra are not read
    room = np.vstack([extra, np.full((2, p), q)])
    got = centroid_nearest(points, leaf, perm, lo, hi, alive, q, exclude, room, n_extra, exclude_extra)
    candidates = [("tree", i) for i in range(m) if alive[i] and i != exclude] + \
        [("extra", j) for j in range(n_extra) if j != exclude_extra]

    def distance(kind, i):
        x = points[perm[i]] if kind == "tree" else extra[i]
        d = 0.0
        for j in range(p):
            d += (x[j] - q[j]) * (x[j] - q[j])
        return d

    want = set()
    if candidates:
        best = min(distance(*c) for c in candidates)
        want = {i if kind == "tree" else -1 - i for kind, i in candidates if distance(kind, i) == best}
    assert len(got) == len(set(got.tolist()))
    assert set(got.tolist()) == want


def test_the_tree_refuses_what_it_cannot_hold():
    points = np.array([[0.0], [1.0], [2.0]])
    perm, lo, hi = centroid_tree(points, 1)
    alive = np.ones(3, np.int8)
    with pytest.raises(ValueError, match="exclude"):
        centroid_nearest(points, 1, perm, lo, hi, alive, np.array([0.0]), 3, np.zeros((0, 1)))
    with pytest.raises(ValueError, match="at least one point"):
        centroid_tree(np.zeros((0, 1)), 1)
    with pytest.raises(ValueError, match="lo and hi hold"):
        sensitive_module_native.centroid_tree(points, 3, 1, perm, lo[:1], hi[:1])


@settings(max_examples=150, deadline=None)
@given(case=_merge_case(), with_infinity=st.booleans(), indexed=st.sampled_from([1, 4, 8]))
def test_the_merges_on_the_tree_equal_those_of_the_scan(case, with_infinity, indexed):
    # every block above `indexed` groups on the tree (rebuilt as its merged centroids pile up,
    # dropped when they fill its room after the block fell to a scan) against the numpy scan
    labels, points, columns, models, blocks = case
    if with_infinity:
        points = points.copy()
        points[0, 0] = np.inf  # its block's centroids are not all finite: that block scans
    with mock.patch.object(sensitive_module, "_INDEXED", indexed):
        on_tree = enforce_sensitive(labels, points, columns, models, blocks=blocks)
    patches = _numpy_partner_steps()
    with patches[0], patches[1], mock.patch.object(sensitive_module, "_INDEXED", 10**9):
        scanned = enforce_sensitive(labels, points, columns, models, blocks=blocks)
    np.testing.assert_array_equal(on_tree[0], scanned[0])
    np.testing.assert_array_equal(on_tree[1], scanned[1])


def test_a_block_that_falls_to_a_scan_after_its_tree_was_built_merges_as_the_scan():
    # 150 pairs of one-row groups, each pair at one point with the two sensitive values: every
    # group fails l = 2 and merges with its pair, 150 merges each moving a new centroid; past
    # `indexed` groups the block searches the tree, below it scans while the tree's room for
    # moved centroids fills
    rng = np.random.default_rng(5)
    n = 300
    labels = np.arange(n)
    points = np.repeat(rng.permutation(n // 2) * 10.0, 2)[:, None] * np.array([[1.0, 0.5]])
    codes = np.tile([0, 1], n // 2)
    columns = [SensitiveColumn("s", codes, 2, False, np.bincount(codes, minlength=2))]
    models = [DistinctL(2)]
    with mock.patch.object(sensitive_module, "_INDEXED", 200):
        on_tree = enforce_sensitive(labels, points, columns, models)
    patches = _numpy_partner_steps()
    with patches[0], patches[1], mock.patch.object(sensitive_module, "_INDEXED", 10**9):
        scanned = enforce_sensitive(labels, points, columns, models)
    np.testing.assert_array_equal(on_tree[0], scanned[0])
    assert np.unique(on_tree[0]).size == n // 2  # every pair merged
