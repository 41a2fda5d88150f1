"""publish's node search with l and t: the compiled node kernels against the numpy lines they
replace, the lower bound that prunes with t, and the chosen node against a brute force over
every node of small lattices."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd._native import sensitive_counts
from incrowd.exceptions import ParameterError
from incrowd.generalization._node_classes import node_classes
from incrowd.privacy import emd as _emd
from incrowd.publishing import _gtm, load_spec
from incrowd.publishing._prepare import prepare


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 60), st.integers(0, 3), st.integers(1, 4))
def test_node_classes_numbers_the_classes_as_np_unique(seed, n, m, top):
    rng = np.random.default_rng(seed)
    leaves = rng.integers(1, 7, m)
    codes0 = np.column_stack([rng.integers(0, w, n) for w in leaves]).astype(np.int64) if m else \
        np.zeros((n, 0), np.int64)
    first_key = rng.integers(0, top, n).astype(np.int64)
    # one map per column: level-0 code -> a random coarser code
    widths = rng.integers(1, 7, m).astype(np.int64)
    maps = np.zeros((max(m, 1), int(leaves.max(initial=1))), np.int64)
    for j in range(m):
        maps[j, : leaves[j]] = rng.integers(0, widths[j], leaves[j])
    class_of, first, g = node_classes(codes0, first_key, maps, np.arange(m, dtype=np.int64), widths)
    key = first_key.copy()
    for j in range(m):
        key = key * widths[j] + maps[j, codes0[:, j]]
    _, want_first, want = np.unique(key, return_index=True, return_inverse=True)
    assert g == want_first.size
    assert np.array_equal(class_of, want.ravel())
    assert np.array_equal(first, want_first)


@st.composite
def _pairs(draw):
    rng = np.random.default_rng(draw(st.integers(0, 10_000)))
    n_bottom = draw(st.integers(1, 40))
    n_classes = draw(st.integers(1, n_bottom))
    m = draw(st.integers(1, 6))
    class_of = np.concatenate([np.arange(n_classes), rng.integers(0, n_classes, n_bottom - n_classes)])
    rng.shuffle(class_of)
    # (bottom, value) pairs, each at most once, sorted as the bottom's np.unique makes them
    present = rng.random((n_bottom, m)) < 0.5
    present[np.arange(n_bottom), rng.integers(0, m, n_bottom)] = True
    b, v = np.nonzero(present)
    counts = rng.integers(1, 9, b.size)
    reference = rng.integers(1, 30, m)
    return (class_of.astype(np.int64), n_classes, b.astype(np.int64), v.astype(np.int64), counts.astype(np.int64),
            reference.astype(np.int64), draw(st.booleans()), draw(st.booleans()), draw(st.integers(0, 4)))


@settings(max_examples=80, deadline=None)
@given(_pairs())
def test_sensitive_counts_equals_the_numpy_counts_and_distances(case):
    class_of, n_classes, b, v, counts, reference, ordered, missing, l = case
    got = np.zeros(n_classes, dtype=np.int64)
    distance = np.zeros(n_classes)
    sensitive_counts(class_of, n_classes, b, v, counts, reference, ordered, missing, True, got, distance)
    fail_l = got < l if l else np.zeros(n_classes, dtype=bool)
    m = reference.size
    keys, where = np.unique(class_of[b] * m + v, return_inverse=True)
    per_pair = np.bincount(where.ravel(), weights=counts).astype(np.int64)
    cls, val = keys // m, keys % m
    distinct = np.bincount(cls[val != m - 1] if missing else cls, minlength=n_classes)
    assert np.array_equal(got, distinct)
    assert np.array_equal(fail_l, distinct < l if l else np.zeros(n_classes, dtype=bool))
    # the same float, not a close one: a class exactly at t must land on the same side
    assert np.array_equal(distance, _emd.emd_pairs(cls, val, per_pair, n_classes, reference, ordered))


@st.composite
def _releases(draw):
    n = draw(st.integers(20, 150))
    rng = np.random.default_rng(draw(st.integers(0, 10_000)))
    frame = {}
    hierarchies = {}
    for c in range(draw(st.integers(1, 3))):
        values = [f"v{c}{i}" for i in range(draw(st.integers(2, 7)))]
        frame[f"c{c}"] = rng.choice(values, n)
        depth = draw(st.integers(1, 3))
        hierarchies[f"c{c}"] = [[v] + [f"g{c}{level}_{i >> level}" for level in range(1, depth)] + ["*"]
                                for i, v in enumerate(values)]
    # half the sensitive values follow c0, so classes lie near or far from the whole's distribution
    follows = np.array([int(x[2:]) for x in frame["c0"]]) % 3
    codes = np.where(rng.random(n) < 0.5, follows, rng.integers(0, 3, n))
    ordered = draw(st.booleans())
    frame["s"] = codes if ordered else np.array(["a", "b", "c"])[codes]
    privacy = draw(st.sampled_from([{"l": 2}, {"t": 0.1}, {"t": 0.2}, {"t": 0.3}, {"l": 2, "t": 0.15}, {}]))
    privacy.update(k=draw(st.integers(2, 4)), max_suppression=draw(st.sampled_from(["0%", "5%", "10%", "30%"])),
                   metric=draw(st.sampled_from(["loss", "loss", "discernibility", "entropy"])),
                   allow_full_suppression=True)
    return pd.DataFrame(frame), hierarchies, privacy


def _prepared(tmp_path_factory, case):
    frame, hierarchies, privacy = case
    folder = tmp_path_factory.mktemp("h")
    columns = {"s": "sensitive"}
    for name, rows in hierarchies.items():
        path = folder / f"{name}.csv"
        path.write_text("\n".join(";".join(r) for r in rows) + "\n")
        columns[name] = {"role": "categorical", "hierarchy": str(path)}
    return prepare(frame, load_spec({"privacy": privacy, "columns": columns}))


def _grid(prep):
    ranges = _gtm._ranges(prep)
    grids = np.meshgrid(*[np.arange(lo, hi + 1) for lo, hi in ranges], indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1).astype(np.int64)


def _numpy_bottom(prep):
    bottom = _gtm._bottom(prep)
    bottom.compiled = False  # the numpy lines, as before the kernels
    return bottom


def _judge(prep, bottom, node):
    levels = dict(zip(prep.categorical, node.tolist()))
    class_of, n_classes = _gtm._classes(prep, bottom, levels)
    excess = np.zeros(n_classes)
    monotone, far, sizes = _gtm._fails(prep, bottom, class_of, n_classes, None, excess)
    return levels, class_of, n_classes, monotone, far, sizes, excess


@settings(max_examples=40, deadline=None)
@given(_releases())
def test_compiled_and_numpy_node_judgements_are_the_same(tmp_path_factory, case):
    prep = _prepared(tmp_path_factory, case)
    fast, plain = _gtm._bottom(prep), _numpy_bottom(prep)
    assert _gtm._compiled(prep, fast) is not None
    for node in _grid(prep):
        a, b = _judge(prep, fast, node), _judge(prep, plain, node)
        for x, y in zip(a[1:], b[1:]):
            assert np.array_equal(x, y)


@settings(max_examples=40, deadline=None)
@given(_releases())
def test_the_t_floor_bounds_the_suppression_of_every_node_below(tmp_path_factory, case):
    """The pruning's promise: no node at or below a node suppresses fewer rows than its floor."""
    prep = _prepared(tmp_path_factory, case)
    bottom = _numpy_bottom(prep)
    grid = _grid(prep)
    judged = [_judge(prep, bottom, node) for node in grid]
    supp = np.array([int(j[5][j[3] | j[4]].sum()) for j in judged])
    for node, j in zip(grid, judged):
        floor = _gtm._t_floor(j[5], j[3], j[6])
        below = np.all(grid <= node, axis=1)
        assert supp[below].min() >= floor


def _brute(prep):
    """The least (metric, height, suppression, lattice order) over every node within the limit."""
    bottom = _numpy_bottom(prep)
    tables = _gtm._metric_tables(prep, bottom)
    limit = min(_gtm.max_suppression_count(prep.spec.max_suppression, prep.n), prep.n - 1)
    grid = _grid(prep)
    parts = tables.parts(grid)
    best = None
    for v, node in enumerate(grid):
        levels, class_of, n_classes, monotone, far, sizes, _ = _judge(prep, bottom, node)
        bad = monotone | far
        supp = int(sizes[bad].sum())
        if supp > limit:
            continue
        gen, major = _gtm._class_facts(prep, bottom, levels, class_of, n_classes, False)
        value = tables.values(node, {name: p[v] for name, p in parts.items()}, sizes, bad, gen, major)[
            prep.spec.metric]
        key = (value, int(node.sum()), supp, v)
        if best is None or key < best[0]:
            best = (key, levels)
    return best


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(_releases())
def test_the_chosen_node_equals_a_brute_force_over_every_node(tmp_path_factory, case):
    prep = _prepared(tmp_path_factory, case)
    best = _brute(prep)
    if best is None:
        with pytest.raises(ParameterError):
            _gtm.choose(prep)
        return
    choice = _gtm.choose(prep)
    assert choice.levels == best[1]
