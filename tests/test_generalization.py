"""Lattice histograms and negotiation against brute force (pandas), on ARX Adult and random data."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from _thresholds import as_models, thresholds  # noqa: E402
from benchdata import data_dir
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_hierarchies import random_hierarchy_rows
from reference import (
    brute_histograms,
    brute_negotiation,
    read_arx_hierarchy,
    suppressed_from,
)

from incrowd.exceptions import DataError, ParameterError
from incrowd.generalization import (
    Lattice,
    generalize,
    interval_hierarchy,
    load_hierarchies,
    max_suppression_count,
    negotiate,
    read_hierarchy,
)
from incrowd.generalization._hierarchy import hierarchy_from_rows

QIS = ["age", "sex", "race", "education"]
SENSITIVE = "occupation"


@pytest.fixture(scope="module")
def adult_arx():
    folder = data_dir() / "adult_arx"
    if not folder.is_dir():
        pytest.skip(f"benchmark data folder {folder} is absent (set INCROWD_DATA)")
    frame = pd.read_csv(folder / "adult.csv", sep=";")
    tables = {a: read_arx_hierarchy(folder / f"adult_hierarchy_{a}.csv") for a in QIS}
    return folder, frame, tables


@pytest.fixture(scope="module")
def adult_lattice(adult_arx):
    folder, frame, tables = adult_arx
    lattice = Lattice.build(frame, QIS, hierarchies=str(folder), sensitive=SENSITIVE)
    brute = {}
    for node in range(lattice.n_nodes):
        levels = lattice.level_dict(node)
        brute[tuple(levels.values())] = brute_histograms(frame, tables, levels, SENSITIVE)
    return lattice, brute


def test_every_node_histogram_equals_brute_force(adult_lattice):
    lattice, brute = adult_lattice
    assert lattice.n_nodes == 5 * 2 * 2 * 4 == len(brute)
    for node in range(lattice.n_nodes):
        levels = lattice.level_dict(node)
        k_hist, l_hist = brute[tuple(levels.values())]
        got = lattice.histogram(levels)
        assert got["class_sizes"] == k_hist, levels
        assert got["distinct_sensitive"] == l_hist, levels
        assert lattice.n_classes[node] == sum(k_hist.values())
        for k in (2, 5, 10, 50, 1000):
            assert lattice.suppressed(levels, k=k) == suppressed_from(k_hist, k, "k")
        for l in (2, 3, 5):
            assert lattice.suppressed(levels, models=thresholds(l=l)) == suppressed_from(l_hist, l, "l")


def test_lattice_shape(adult_lattice):
    lattice, _ = adult_lattice
    assert lattice.attributes == tuple(QIS)
    assert [lattice.hierarchies[a].max_level for a in QIS] == [4, 1, 1, 3]
    assert lattice.node_id({"age": 0, "sex": 0, "race": 0, "education": 0}) == 0
    assert lattice.node_id([4, 1, 1, 3]) == lattice.n_nodes - 1
    assert lattice.heights.max() == 9
    sub = lattice.sublattice({"age": 1, "education": 2})
    assert sub.size == 2 * 2 * 2 * 3
    assert all(lattice.levels[v][0] <= 1 and lattice.levels[v][3] <= 2 for v in sub)
    for v in range(lattice.n_nodes):  # ids sort like level vectors
        assert lattice.node_id(lattice.level_dict(v)) == v


def test_histograms_do_not_depend_on_the_build_path(adult_arx):
    """A partial lattice computes each node straight from the bottom classes; the full one rolls
    up along a spanning tree. Both must give the same histograms."""
    folder, frame, _ = adult_arx
    full = Lattice.build(frame, QIS, hierarchies=str(folder), sensitive=SENSITIVE)
    part = Lattice.build(frame, QIS, hierarchies=str(folder), sensitive=SENSITIVE, fraction=0.4)
    assert 0.4 * full.n_nodes <= part.materialized.sum() < full.n_nodes
    for node in np.flatnonzero(part.materialized):
        assert part.histogram(part.level_dict(node)) == full.histogram(full.level_dict(node))


def _check_answer(result, expected, lattice, criterion):
    def as_tuple(node):
        if node is None:
            return None
        return (tuple(node.levels.values()), node.suppressed, node.value)

    assert as_tuple(result.exact) == expected["exact"]
    if expected["exact"] is not None:
        assert result.status == "exact"
        assert all(v is None for v in result.relaxations.values())
        return
    assert result.status == "relaxed"
    for name in ("max_suppression", "height", "k"):
        assert as_tuple(result.relaxations[name]) == expected[name], name
    for node in [result.exact, *result.relaxations.values()]:
        if node is not None:
            assert node.height == sum(node.levels.values())
            assert node.classes > 0


def _grid(lattice):
    top = [lattice.hierarchies[a].max_level for a in lattice.attributes]
    return list(itertools.product(*[range(t + 1) for t in top]))


@pytest.mark.parametrize("partial", [None, 0.3, "runtime"])
def test_negotiation_equals_brute_force_k(adult_arx, adult_lattice, partial):
    folder, frame, _ = adult_arx
    full, brute = adult_lattice
    lattice = full if partial is None else Lattice.build(frame, QIS, hierarchies=str(folder),
                                                         sensitive=SENSITIVE, fraction=0.3)
    nodes = _grid(lattice)
    materialized = {tuple(lattice.levels[v]) for v in np.flatnonzero(lattice.materialized)}

    def supp(v, t):
        return suppressed_from(brute[v][0], t, "k")

    for vmax in nodes[::3]:
        for k, limit in itertools.product((2, 3, 10, 50, 200), (0, 30, 301, 3016)):
            available = None if partial is None else materialized | ({vmax} if partial == "runtime" else set())
            expected = brute_negotiation(nodes, supp, vmax, k, limit, lattice.n_rows, available)
            result = negotiate(lattice, k=k, max_levels=dict(zip(QIS, vmax)), max_suppression=limit,
                               runtime_histogram=partial == "runtime", metric="height")
            _check_answer(result, expected, lattice, "k")


def test_negotiation_equals_brute_force_l(adult_lattice):
    lattice, brute = adult_lattice
    nodes = _grid(lattice)

    def supp(v, t):
        return suppressed_from(brute[v][1], t, "l")

    for vmax in nodes[::2]:
        for l, limit in itertools.product((2, 3, 6, 9), (0, 30, 301, 3016)):
            expected = brute_negotiation(nodes, supp, vmax, l, limit, lattice.n_rows)
            result = negotiate(lattice, max_levels=dict(zip(QIS, vmax)), max_suppression=limit, metric="height",
                               models=thresholds(l=l))
            _check_answer(result, expected, lattice, "l")
            assert result.to_dict()["relaxations"]["l"] == result.to_dict()["relaxations"]["k"]


def test_json_shape_and_saved_lattice_answers_the_same(adult_lattice, tmp_path):
    lattice, _ = adult_lattice
    path = lattice.save(tmp_path / "L.duckdb")
    again = Lattice.open(path)
    for request in ({"k": 10, "max_levels": {"age": 2, "education": 1}, "max_suppression": "1%"},
                    {"k": 50, "max_levels": {"age": 1, "sex": 0}, "max_suppression": 0.001},
                    {"l": 3, "max_levels": {"age": 1}, "max_suppression": 30}):
        a = negotiate(lattice, **as_models(request)).to_dict()
        b = negotiate(again, **as_models(request)).to_dict()
        for key in ("status", "exact", "relaxations"):
            assert a[key] == b[key]
        assert a["status"] in ("exact", "relaxed")
        assert set(a["relaxations"]) >= {"max_suppression", "height", "k"}
        crit = "k" if "k" in request else "l"
        for node in [a["exact"], *a["relaxations"].values()]:
            if node is not None:
                assert set(node) >= {"levels", "height", "suppressed", crit}
    assert again.histogram({"age": 1, "sex": 0, "race": 1, "education": 2}) == \
        lattice.histogram({"age": 1, "sex": 0, "race": 1, "education": 2})


def test_generalize_matches_lattice_and_is_verified(adult_arx, adult_lattice):
    folder, frame, tables = adult_arx
    lattice, _ = adult_lattice
    levels = {"age": 2, "sex": 0, "race": 1, "education": 1}
    for k in (5, 50):
        result = generalize(frame, levels, k=k, hierarchies=str(folder))
        assert result.suppressed == lattice.suppressed(levels, k=k)
        assert result.table.shape[0] == frame.shape[0] - result.suppressed
        assert result.table.groupby(QIS).size().min() >= k
        assert set(result.table["age"]) <= set(tables["age"][2])
        assert result.verification["k_anonymity"]["ok"]
    result = generalize(frame, levels, sensitive=SENSITIVE, hierarchies=str(folder), models=thresholds(l=4))
    assert result.suppressed == lattice.suppressed(levels, models=thresholds(l=4))
    assert result.table.groupby(QIS)[SENSITIVE].nunique().min() >= 4
    # rows keep their order and the other columns their values
    assert np.all(np.diff(result.kept_rows) > 0) and result.kept_rows.size == result.table.shape[0]
    others = [c for c in frame.columns if c not in QIS]
    pd.testing.assert_frame_equal(result.table[others],
                                  frame.iloc[result.kept_rows][others].reset_index(drop=True))


# -- random data: every path against brute force ----------------------------------------------


def _random_case(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    m = draw(st.integers(1, 3))
    n = draw(st.integers(5, 120))
    frame = pd.DataFrame()
    tables = {}
    hier = {}
    for j in range(m):
        rows = random_hierarchy_rows(rng, j)
        card = len(rows)
        name = f"q{j}"
        hier[name] = hierarchy_from_rows(name, rows, f"random {name}")
        tables[name] = pd.DataFrame(rows)
        frame[name] = [f"a{j}v{c}" for c in rng.integers(0, card, size=n)]
    frame["s"] = rng.integers(0, 4, size=n)
    return frame, tables, hier


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_lattices_equal_brute_force(data):
    frame, tables, hier = _random_case(data.draw)
    qis = list(hier)
    fraction = data.draw(st.sampled_from([1.0, 0.5]))
    lattice = Lattice.build(frame, qis, hierarchies=hier, sensitive="s", fraction=fraction)
    nodes = _grid(lattice)
    brute = {v: brute_histograms(frame, tables, dict(zip(qis, v)), "s") for v in nodes}
    for node in np.flatnonzero(lattice.materialized):
        levels = lattice.level_dict(node)
        got = lattice.histogram(levels)
        k_hist, l_hist = brute[tuple(levels.values())]
        assert got["class_sizes"] == k_hist and got["distinct_sensitive"] == l_hist
    available = None if fraction == 1.0 else {tuple(lattice.levels[v]) for v in np.flatnonzero(lattice.materialized)}
    vmax = data.draw(st.sampled_from(nodes))
    limit = data.draw(st.integers(0, len(frame)))
    distinct = int(frame["s"].nunique())
    criterion = data.draw(st.sampled_from(["k", "l"])) if distinct >= 2 else "k"
    t = data.draw(st.integers(2, len(frame) if criterion == "k" else distinct))
    part = 0 if criterion == "k" else 1
    expected = brute_negotiation(nodes, lambda v, tt: suppressed_from(brute[v][part], tt, criterion),
                                 vmax, t, limit, len(frame), available)
    result = negotiate(lattice, **as_models({criterion: t}), max_levels=dict(zip(qis, vmax)), max_suppression=limit,
                       metric="height")
    _check_answer(result, expected, lattice, criterion)
    # applying the chosen node gives the suppression the lattice promised, verified
    best = result.exact or result.relaxations["height"]
    if best is not None:
        applied = generalize(frame, best.levels, hierarchies=hier, sensitive="s" if criterion == "l" else None,
                             **as_models({criterion: best.value}))
        assert applied.suppressed == best.suppressed


# -- bad input --------------------------------------------------------------------------------


def test_hierarchy_errors_name_file_row_and_value(tmp_path):
    path = tmp_path / "h_hierarchy_x.csv"
    path.write_text("a;A;*\nb;A\n")
    with pytest.raises(DataError, match=r"row 2: 2 levels, expected 3"):
        read_hierarchy(path)
    path.write_text("a;A;*\nb;A;*\na;B;*\n")
    with pytest.raises(DataError, match=r"value 'a' at level 0 has two parents, 'A' \(row 1\) and 'B' \(row 3\)"):
        read_hierarchy(path)
    path.write_text("a;A;*\nb;B;*\nc;B;X\n")
    with pytest.raises(DataError, match=r"value 'B' at level 1 has two parents"):
        read_hierarchy(path)
    path.write_text("")
    with pytest.raises(DataError, match="is empty"):
        read_hierarchy(path)
    path.write_text("a;A;*\nb;A;*\n")
    frame = pd.DataFrame({"x": ["a", "b", "c", "a"]})
    hier = load_hierarchies(tmp_path, ["x"])
    with pytest.raises(DataError, match=r"column 'x', data row 3: value 'c' is not in hierarchy file"):
        hier["x"].encode(frame["x"])
    with pytest.raises(DataError, match=r"no hierarchy file for attribute 'y'"):
        load_hierarchies(tmp_path, ["y"])
    with pytest.raises(DataError, match="missing value in data row 2"):
        hier["x"].encode(pd.Series(["a", None], name="x"))


def test_request_errors(adult_lattice):
    lattice, _ = adult_lattice
    with pytest.raises(ParameterError, match=r"k must be an integer in \[2, n_rows=30162\]; got 1"):
        negotiate(lattice, k=1)
    with pytest.raises(ParameterError, match="unknown attribute"):
        negotiate(lattice, k=5, max_levels={"salary": 1})
    with pytest.raises(ParameterError, match=r"level of 'age' must be an integer in \[0, 4\]; got 7"):
        negotiate(lattice, k=5, max_levels={"age": 7})
    for bad in ("150%", "-1", 1.5, -3, "lots", 30163):
        with pytest.raises(ParameterError, match="max_suppression must be"):
            negotiate(lattice, k=5, max_suppression=bad)
    with pytest.raises(ParameterError, match=r"give k \(k-anonymity\), l \(naive l-diversity\) or both"):
        negotiate(lattice)
    with pytest.raises(ParameterError, match=r"l=99 is larger than the number of distinct values of sensitive column "
                                              r"'occupation' \(\d+\)"):
        negotiate(lattice, k=5, models=thresholds(l=99))  # k and l together: each checked as alone


def test_max_suppression_forms():
    assert max_suppression_count("1%", 30162) == 301
    assert max_suppression_count("0.1%", 30162) == 30
    assert max_suppression_count(0.01, 30162) == 301
    assert max_suppression_count("301", 30162) == 301
    assert max_suppression_count(0, 30162) == 0
    assert max_suppression_count("100%", 30162) == 30162


def test_interval_hierarchy_nests_and_labels():
    col = pd.Series([3, 17, 22, 39, 40, 41, 99], name="age")
    h = interval_hierarchy(col, [5, 10, 20])
    assert h.depth == 5
    assert list(h.generalize(h.encode(col), 1)) == ["0-4", "15-19", "20-24", "35-39", "40-44", "40-44", "95-99"]
    assert list(h.generalize(h.encode(col), 3)) == ["0-19", "0-19", "20-39", "20-39", "40-59", "40-59", "80-99"]
    assert set(h.generalize(h.encode(col), 4)) == {"*"}
    with pytest.raises(ParameterError, match="multiple of the one before"):
        interval_hierarchy(col, [5, 7])
    floats = pd.Series([0.5, 1.25, 2.0], name="w")
    assert list(interval_hierarchy(floats, [1]).generalize(interval_hierarchy(floats, [1]).encode(floats), 1)) == \
        ["[0, 1)", "[1, 2)", "[2, 3)"]
