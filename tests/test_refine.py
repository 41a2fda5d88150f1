"""Refine: local search from another method's partition (incrowd.Refine, method "refine")."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from typer.testing import CliRunner

from incrowd import METHODS, ONAStar, ParameterError, Refine, lower_bound, microaggregate
from incrowd.cli import app

pytestmark = pytest.mark.filterwarnings("ignore::incrowd.DataWarning")


@st.composite
def cases(draw):
    n = draw(st.integers(4, 70))
    m = draw(st.integers(1, 4))
    elements = st.one_of(st.integers(-3, 3).map(float),  # ties and duplicate rows
                         st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False))
    X = draw(arrays(np.float64, (n, m), elements=elements))
    k = draw(st.integers(2, max(2, n // 2)))
    start = draw(st.sampled_from(["ona-star", "mdav", "mdav-star", "mona"]))
    seed = draw(st.integers(0, 2**31))
    return X, k, start, seed


@settings(max_examples=40, deadline=None)
@given(case=cases())
def test_refine_invariants(case):
    X, k, start, seed = case
    n = X.shape[0]
    model = Refine(k=k, start=start, max_rounds=12, max_seconds=120.0, random_state=seed).fit(X)
    labels = model.labels_
    sizes = np.bincount(labels)
    # every row in exactly one group, groups of k..2k-1 rows (one group when n < 2k)
    assert labels.shape == (n,) and sizes.sum() == n and np.all(sizes > 0)
    assert sizes.min() >= k
    assert sizes.max() <= max(2 * k - 1, n if n < 2 * k else 0)
    assert 0.0 <= model.information_loss_ <= 1.0 + 1e-12
    # never worse than its start (the start's groups have at most 2k - 1 rows here)
    begin = microaggregate(X, k, start).information_loss
    assert model.start_information_loss_ == pytest.approx(begin, rel=1e-9, abs=1e-12)
    assert model.information_loss_ <= begin * (1 + 1e-9) + 1e-12
    # same seed, same groups
    again = Refine(k=k, start=start, max_rounds=12, max_seconds=120.0, random_state=seed).fit(X)
    np.testing.assert_array_equal(again.labels_, labels)
    # no partition loses less than the bound
    assert model.information_loss_ >= lower_bound(X, k) * (1 - 1e-9) - 1e-12


@st.composite
def pairs_of_3k(draw):
    k = draw(st.integers(2, 6))
    u = draw(st.integers(3 * k, 4 * k - 2))
    m = draw(st.integers(1, 4))
    elements = st.one_of(st.integers(-2, 2).map(float), st.floats(-100, 100, allow_nan=False))
    X = draw(arrays(np.float64, (u, m), elements=elements))
    a = draw(st.integers(max(k, u - (2 * k - 1)), min(2 * k - 1, u - k)))
    rows = np.array(draw(st.permutations(range(u))), np.int64)
    return X, k, rows[:a], rows[a:]


def _pair_state(X, k, A, B):
    from incrowd.microaggregation.refine._refine_kernel import group_costs

    cap = X.shape[0] // k
    mem = np.full((cap, 2 * k - 1), -1, np.int64)
    size = np.zeros(cap, np.int64)
    for g, rows in enumerate((A, B)):
        mem[g, :len(rows)] = np.sort(rows)
        size[g] = len(rows)
    cost = np.zeros(cap)
    cost[:2] = group_costs(X, mem[:2], size[:2])
    return mem, size, cost


def _sse(X, rows):
    return float(((X[rows] - X[rows].mean(axis=0)) ** 2).sum())


@settings(max_examples=60, deadline=None)
@given(case=pairs_of_3k())
def test_a_three_way_split_keeps_every_row_and_lowers_the_cost(case):
    from incrowd.microaggregation.refine._refine_kernel import split_round

    X, k, A, B = case
    mem, size, cost = _pair_state(X, k, A, B)
    before = cost[0] + cost[1]
    dirty = np.zeros(size.shape[0], np.bool_)
    G = split_round(X, k, mem, size, cost, np.array([[1], [0]], np.int64), 2, 0.0, dirty, 0)
    assert G in (2, 3)
    groups = [mem[g, :size[g]] for g in range(G)]
    assert sorted(np.concatenate(groups).tolist()) == list(range(X.shape[0]))
    assert all(k <= len(g) <= 2 * k - 1 for g in groups)
    # the kept costs are the groups' SSE, and a split is made only when it lowers their sum
    for g in range(G):
        assert cost[g] == pytest.approx(_sse(X, groups[g]), rel=1e-9, abs=1e-9)
    if G == 3:
        assert cost[:3].sum() < before
        assert dirty[:3].all()
    else:
        assert cost[0] + cost[1] == before and not dirty.any()


def test_three_clusters_held_as_two_groups_become_three():
    from incrowd.microaggregation.refine._refine_kernel import split_round

    k = 4
    rng = np.random.default_rng(5)
    X = np.concatenate([c + 0.01 * rng.standard_normal((k, 2)) for c in ((0, 0), (10, 0), (20, 0))])
    # group A: the first cluster and half the second; B: the rest
    mem, size, cost = _pair_state(X, k, np.arange(6), np.arange(6, 12))
    G = split_round(X, k, mem, size, cost, np.array([[1], [0]], np.int64), 2, 0.0,
                    np.zeros(3, np.bool_), 0)
    assert G == 3
    assert sorted(tuple(mem[g, :size[g]]) for g in range(3)) == [(0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10, 11)]


def test_refine_may_add_groups():
    # evenly spaced points in groups of 3 = 2k - 1 at k = 2: no pair re-partition helps (two
    # groups of 3 are already the best split of 6 points), three groups of 2 cost less
    from incrowd.microaggregation.refine.refine import refine_partition

    X = np.arange(90.0)[:, None]
    labels0 = np.arange(90) // 3

    out, info = refine_partition(X, 2, labels0, np.random.default_rng(0), 5, 60.0, kicks=False)
    assert np.bincount(out).shape[0] > 30
    assert np.bincount(out).min() >= 2 and np.bincount(out).max() <= 3


@settings(max_examples=25, deadline=None)
@given(case=cases())
def test_threshold_accepting_returns_the_best_partition_met(case):
    # past round 60 kicks may keep worse results; the run still returns groups of k..2k-1 rows,
    # is deterministic, and is never worse than where it stood at round 60 (the same search
    # up to there)
    from incrowd.microaggregation import information_loss
    from incrowd.microaggregation.refine.refine import THRESHOLD_AFTER

    X, k, start, seed = case
    n = X.shape[0]
    at_60 = Refine(k=k, start=start, max_rounds=THRESHOLD_AFTER, max_seconds=120.0, random_state=seed).fit(X)
    longer = Refine(k=k, start=start, max_rounds=THRESHOLD_AFTER + 40, max_seconds=120.0, random_state=seed).fit(X)
    sizes = np.bincount(longer.labels_)
    assert sizes.sum() == n and sizes.min() >= k
    assert sizes.max() <= max(2 * k - 1, n if n < 2 * k else 0)
    assert longer.information_loss_ <= at_60.information_loss_ * (1 + 1e-9) + 1e-12
    assert longer.information_loss_ == pytest.approx(
        information_loss(X, longer.labels_), rel=1e-9, abs=1e-12)
    again = Refine(k=k, start=start, max_rounds=THRESHOLD_AFTER + 40, max_seconds=120.0, random_state=seed).fit(X)
    np.testing.assert_array_equal(again.labels_, longer.labels_)


@pytest.mark.parametrize("shape, k, seed", [((90, 1), 2, 0), ((120, 2), 3, 1), ((200, 3), 4, 2), ((150, 2), 5, 3)])
def test_threshold_cycles_go_back_to_the_best_partition(monkeypatch, shape, k, seed):
    # short cycles (3, 6, 12, ... rounds) so that the walk is sent back to the best partition
    # many times, three-way splits changing the group count in between
    from incrowd.microaggregation import information_loss
    from incrowd.microaggregation.refine import refine as refine_module

    monkeypatch.setattr(refine_module, "THRESHOLD_FIRST_CYCLE", 3)
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal(shape), 1) if seed % 2 else rng.standard_normal(shape)
    n = X.shape[0]
    at_60 = Refine(k=k, start="mdav-star", max_rounds=60, max_seconds=600.0, random_state=seed).fit(X)
    longer = Refine(k=k, start="mdav-star", max_rounds=160, max_seconds=600.0, random_state=seed).fit(X)
    sizes = np.bincount(longer.labels_)
    assert sizes.sum() == n and sizes.min() >= k and sizes.max() <= 2 * k - 1
    assert longer.information_loss_ <= at_60.information_loss_ * (1 + 1e-9)
    assert longer.information_loss_ == pytest.approx(information_loss(X, longer.labels_), rel=1e-9)
    again = Refine(k=k, start="mdav-star", max_rounds=160, max_seconds=600.0, random_state=seed).fit(X)
    np.testing.assert_array_equal(again.labels_, longer.labels_)


def test_a_kick_within_the_threshold_is_kept():
    # with an unbounded threshold every kick is kept, worse or not, and the table stays a
    # valid partition with its costs; with none, only kicks that lower the SSE are
    from incrowd.microaggregation.refine._refine_kernel import MOVE_SWAP, group_costs, ils_kicks

    rng = np.random.default_rng(3)
    k = 3
    X = rng.standard_normal((60, 2))
    labels = np.arange(60) // k
    G = 20
    mem = np.full((G, 2 * k - 1), -1, np.int64)
    size = np.full(G, k, np.int64)
    for g in range(G):
        mem[g, :k] = np.flatnonzero(labels == g)
    cost = group_costs(X, mem, size)
    neigh = np.array([[(g + 1) % G, (g - 1) % G] for g in range(G)], np.int64)
    kept_all = ils_kicks(X, k, mem.copy(), size.copy(), cost.copy(), neigh, MOVE_SWAP, 0.0, 30, 1,
                         np.uint64(7), 10_000, 0, np.inf)
    assert kept_all == 30
    m2, s2, c2 = mem.copy(), size.copy(), cost.copy()
    total = c2.sum()
    kept_better = ils_kicks(X, k, m2, s2, c2, neigh, MOVE_SWAP, 0.0, 30, 1, np.uint64(7), 10_000, 0, 0.0)
    assert kept_better < 30
    assert c2.sum() <= total
    rows = np.concatenate([m2[g, :s2[g]] for g in range(G)])
    assert sorted(rows.tolist()) == list(range(60))
    np.testing.assert_allclose(c2, group_costs(X, m2, s2), rtol=1e-9, atol=1e-12)


def test_refine_lowers_ona_star_on_census(census_frame):
    X = census_frame.to_numpy(dtype=float)[:400]
    ona = ONAStar(k=4).fit(X)
    ref = Refine(k=4, random_state=0, max_rounds=20).fit(X)
    assert ref.start_information_loss_ == pytest.approx(ona.information_loss_)
    assert ref.information_loss_ < ona.information_loss_


def test_start_given_as_estimator_keeps_its_parameters():
    X = np.random.default_rng(3).standard_normal((120, 3))
    ref = Refine(k=3, start=METHODS["v-mdav"](k=9, gamma=0.5), max_rounds=3, random_state=1).fit(X)
    direct = microaggregate(X, 3, "v-mdav", gamma=0.5)
    assert ref.start_information_loss_ == pytest.approx(direct.information_loss)


def test_max_seconds_stops_the_search():
    X = np.random.default_rng(0).standard_normal((6000, 3))
    model = Refine(k=3, start="mdav", max_rounds=1_000_000, max_seconds=0.3, random_state=0).fit(X)
    assert model.stopped_by_ == "max_seconds" and model.n_rounds_ < 1_000_000


def _slow_refresh(monkeypatch, seconds):
    """Make the neighbour-list refresh take ``seconds`` longer; returns the list of (start,
    end) perf_counter readings of each refresh."""
    import time

    from incrowd.microaggregation.refine import refine as refine_module

    real = refine_module._neighbours
    calls = []

    def slow(*args, **kwargs):
        t = time.perf_counter()
        time.sleep(seconds)
        out = real(*args, **kwargs)
        calls.append((t, time.perf_counter()))
        return out

    monkeypatch.setattr(refine_module, "_neighbours", slow)
    return calls


def test_no_neighbour_refresh_after_the_last_round(monkeypatch):
    X = np.random.default_rng(1).standard_normal((300, 3))  # few columns: a refresh every round of the descent
    calls = _slow_refresh(monkeypatch, 0.0)
    model = Refine(k=3, start="mdav", max_rounds=3, max_seconds=600.0, random_state=0).fit(X)
    assert model.stopped_by_ == "max_rounds" and model.n_rounds_ == 3
    assert len(calls) == 3  # the start's lists, then after rounds 1 and 2


def test_a_refresh_that_would_pass_the_budget_is_not_started(monkeypatch):
    import time

    X = np.random.default_rng(2).standard_normal((300, 3))
    Refine(k=3, start="mdav", max_rounds=2, random_state=0).fit(X)  # compiled before the clock
    calls = _slow_refresh(monkeypatch, 0.25)
    t0 = time.perf_counter()
    model = Refine(k=3, start="mdav", max_rounds=1_000_000, max_seconds=1.5, random_state=0).fit(X)
    assert model.stopped_by_ == "max_seconds" and len(calls) >= 3
    # a refresh cannot be cut short, so none may start without the time to finish, judged by the
    # last one's length: each starts with at least 1.5 times that left. The budget's clock starts
    # after t0 and before the first refresh (the start's lists); 0.1 s covers the gap between the
    # search's clock reading and the wrapper's. The rule, not the refreshes' own lengths, is
    # checked: on a loaded machine a refresh can take longer than the one before it.
    first = calls[0][0]
    assert first >= t0
    lengths = [end - begin for begin, end in calls]
    for (start, _), length_before in zip(calls[1:], lengths):
        assert start + 1.5 * length_before <= first + 1.5 + 0.1



@pytest.mark.parametrize("params, name", [
    ({"max_seconds": 0}, "max_seconds"), ({"max_seconds": -1.0}, "max_seconds"),
    ({"max_seconds": float("nan")}, "max_seconds"), ({"max_seconds": "5"}, "max_seconds"),
    ({"max_rounds": 0}, "max_rounds"), ({"max_rounds": 2.5}, "max_rounds"),
    ({"start": "fast"}, "start"), ({"start": "refine"}, "start"), ({"start": Refine()}, "start"),
])
def test_bad_parameters_are_named(params, name):
    with pytest.raises(ParameterError, match=name):
        Refine(k=3, **params).fit(np.arange(30.0).reshape(15, 2))


def test_cli_refine_with_bound_json(tmp_path):
    rng = np.random.default_rng(5)
    path = tmp_path / "in.csv"
    pd.DataFrame(rng.normal(size=(80, 3)), columns=["a", "b", "c"]).to_csv(path, index=False)
    res = CliRunner().invoke(app, ["microaggregate", str(path), "-o", str(tmp_path / "out.csv"), "--k", "4",
                                   "--method", "refine", "--max-seconds", "30", "--max-rounds", "5",
                                   "--seed", "2", "--bound", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["method"] == "refine" and out["params"]["max_seconds"] == 30.0
    assert 0 < out["lower_bound"] <= out["information_loss"]
    assert out["gap"] == pytest.approx(out["information_loss"] / out["lower_bound"] - 1)
    plain = CliRunner().invoke(app, ["microaggregate", str(path), "-o", str(tmp_path / "o2.csv"), "--k", "4",
                                     "--json"])
    assert "lower_bound" not in json.loads(plain.stdout) and "gap" not in json.loads(plain.stdout)


def test_cli_refuses_max_seconds_for_other_methods(tmp_path):
    path = tmp_path / "in.csv"
    pd.DataFrame({"a": np.arange(20.0)}).to_csv(path, index=False)
    res = CliRunner().invoke(app, ["microaggregate", str(path), "-o", str(tmp_path / "o.csv"), "--k", "3",
                                   "--method", "mdav", "--max-seconds", "2"])
    assert res.exit_code == 2 and "max_seconds" in res.output
