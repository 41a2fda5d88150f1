"""t-closeness: the earth mover's distance against a transport LP and pycanon, and the merge
step that makes every group l-diverse and t-close.

pycanon (1.3.6, ``pycanon.anonymity.utils.aux_anonymity``) measures t with the same two
distances: ``aux_t_closeness_num`` (numeric columns) is the ordered distance over the sorted
distinct values of the table's own column, ``aux_t_closeness_str`` (string columns) the equal
distance; its reference is always the table's own column. It differs from
``verify_t_closeness`` where:

* a quasi-identifier is missing: pycanon groups with ``groupby(dropna=True)`` and leaves those
  rows out of every class; incrowd makes them a class of their own (as ``verify_k_anonymity``);
* the sensitive column takes one value: pycanon divides by m - 1 = 0; incrowd reports 0;
* a release suppressed rows: pycanon cannot take the original column as the reference;
* it selects classes with ``iloc`` on index labels, so it needs a default RangeIndex.

The agreement tests stay where the definitions coincide; the first difference is pinned by a
test so that a change in pycanon shows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from benchdata import data_dir
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import incrowd
from incrowd import DataError, ParameterError, privacy, verify_k_anonymity, verify_l_diversity, verify_t_closeness

# ---------------------------------------------------------------------------------------------
# brute force: EMD as a transport problem


def _lp_emd(q: np.ndarray, p: np.ndarray, ordered: bool) -> float:
    m = p.size
    if m == 1:
        return 0.0
    idx = np.arange(m)
    ground = np.abs(idx[:, None] - idx[None, :]) / (m - 1) if ordered else (idx[:, None] != idx[None, :]) * 1.0
    rows = np.zeros((m, m * m))
    cols = np.zeros((m, m * m))
    for i in range(m):
        rows[i, i * m:(i + 1) * m] = 1.0
        cols[i, i::m] = 1.0
    res = linprog(ground.ravel(), A_eq=np.vstack([rows, cols]), b_eq=np.concatenate([q, p]),
                  bounds=(0, None), method="highs")
    assert res.status == 0
    return float(res.fun)


def _values_in_order(reference: list) -> list:
    present = sorted({v for v in reference if v is not None})
    return present + ([None] if any(v is None for v in reference) else [])


def _brute_force(qi: list, values: list, reference: list, ordered: bool) -> list[float]:
    order = _values_in_order(reference)
    pos = {v: i for i, v in enumerate(order)}
    p = np.bincount([pos[v] for v in reference], minlength=len(order)) / len(reference)
    out = []
    for key in dict.fromkeys(qi):
        members = [pos[v] for k, v in zip(qi, values) if k == key]
        q = np.bincount(members, minlength=len(order)) / len(members)
        out.append(_lp_emd(q, p, ordered))
    return out


_qi_value = st.one_of(st.integers(0, 3), st.none())
_sens_value = st.one_of(st.integers(0, 5), st.none())


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(st.tuples(_qi_value, _sens_value), min_size=1, max_size=40),
    extra=st.lists(_sens_value, max_size=10),
    ordered=st.booleans(),
    t=st.floats(0.01, 1.0),
)
def test_distance_matches_transport_lp(rows, extra, ordered, t):
    qi = [r[0] for r in rows]
    values = [r[1] for r in rows]
    reference = values + extra  # a reference that may hold more rows (suppressed ones)
    table = pd.DataFrame({"q": pd.array(qi, dtype="Int64"), "s": pd.array(values, dtype="Int64")})
    report = verify_t_closeness(table, ["q"], "s", t, ordered=ordered,
                                reference=pd.Series(pd.array(reference, dtype="Int64")))
    expected = _brute_force(qi, values, reference, ordered)
    assert report.n_classes == len(expected)
    assert report.max_distance == pytest.approx(max(expected), abs=1e-7)
    assert report.ordered is ordered
    far = [d > t + 1e-7 for d in expected]
    close = [d < t - 1e-7 for d in expected]
    if all(close):
        assert report.ok
    if any(far):
        assert not report.ok


@settings(max_examples=30, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 2), st.sampled_from(["lo", "mid", "hi", "top"])),
                     min_size=1, max_size=40))
def test_ordinal_order_matches_transport_lp(rows):
    order = ["lo", "mid", "hi", "top"]
    qi = [r[0] for r in rows]
    values = [r[1] for r in rows]
    report = verify_t_closeness(pd.DataFrame({"q": qi, "s": values}), ["q"], "s", 1.0, ordered=order)
    rank = {v: i for i, v in enumerate(order)}
    expected = _brute_force(qi, [rank[v] for v in values], [rank[v] for v in values], True)
    assert report.ordered and report.max_distance == pytest.approx(max(expected), abs=1e-7)


def test_sparse_and_dense_kernels_agree():
    from incrowd.privacy._emd import emd_by_class, emd_dense

    rng = np.random.default_rng(7)
    for _ in range(200):
        m, n, g = int(rng.integers(1, 9)), int(rng.integers(1, 80)), int(rng.integers(1, 12))
        codes, classes = rng.integers(0, m, n), rng.integers(0, g, n)
        ref = np.bincount(codes, minlength=m) + rng.integers(0, 3, m)
        ref[ref == 0] = 1
        counts = np.zeros((g, m), np.int64)
        np.add.at(counts, (classes, codes), 1)
        for ordered in (True, False):
            np.testing.assert_allclose(emd_dense(counts, ref, ordered),
                                       emd_by_class(classes, codes, g, ref, ordered), atol=1e-14)


# ---------------------------------------------------------------------------------------------
# semantics, boundaries, errors


def test_numeric_defaults_to_ordered_and_text_to_equal():
    table = pd.DataFrame({"q": [0, 0, 1, 1], "n": [1, 2, 3, 9], "s": ["a", "b", "c", "d"]})
    numeric = verify_t_closeness(table, ["q"], "n", 1.0)
    text = verify_t_closeness(table, ["q"], "s", 1.0)
    assert numeric.ordered and not text.ordered
    # values 1,2 | 3,9 against 1,2,3,9: cumulative gaps 1/4, 1/2, 1/4 over m-1 = 3
    assert numeric.max_distance == pytest.approx(1 / 3)
    assert text.max_distance == pytest.approx(0.5)
    assert verify_t_closeness(table, ["q"], "n", 1.0, ordered=False).max_distance == pytest.approx(0.5)
    assert verify_t_closeness(table, ["q"], "s", 1.0, ordered=True).max_distance == pytest.approx(1 / 3)


def test_class_exactly_at_t_passes_and_just_above_fails():
    # both classes are 3/10 from the reference: income 1 in 1/5 and 4/5 of them, 1/2 overall
    table = pd.DataFrame({"q": [0] * 5 + [1] * 5, "income": [0, 0, 0, 0, 1, 1, 1, 1, 1, 0]})
    at = verify_t_closeness(table, ["q"], "income", 0.3)
    assert at.max_distance == 0.3 and at.ok and at.n_rows_in_far_classes == 0
    below = verify_t_closeness(table, ["q"], "income", 0.29999999)
    assert not below.ok and below.n_rows_in_far_classes == 10 and not bool(below)


def test_reference_with_suppressed_rows_changes_the_answer():
    original = pd.DataFrame({"q": [0, 0, 1, 1, 2, 2], "s": ["x", "x", "x", "y", "y", "y"]})
    published = original.iloc[:4]  # the class {y, y} was suppressed
    alone = verify_t_closeness(published, ["q"], "s", 0.5)
    against_original = verify_t_closeness(published, ["q"], "s", 0.5, reference=original["s"])
    assert alone.max_distance == pytest.approx(0.25)  # p = (3/4, 1/4)
    assert against_original.max_distance == pytest.approx(0.5)  # p = (1/2, 1/2)
    assert against_original.n_rows == 4 and against_original.n_classes == 2


def test_missing_values_are_values_of_their_own():
    table = pd.DataFrame({"q": [None, None, 1.0, 1.0], "s": [None, "a", "a", "a"]})
    report = verify_t_closeness(table, ["q"], "s", 1.0)
    assert report.n_classes == 2  # missing QI: its own class, not dropped
    # class of the missing QI: (a 1/2, missing 1/2) vs (3/4, 1/4) -> 1/4
    assert report.max_distance == pytest.approx(0.25)


def test_report_shape_and_empty_table():
    table = pd.DataFrame({"q": [0, 1], "s": [1, 2]})
    report = verify_t_closeness(table, ["q"], "s", 0.4)
    assert report.to_dict() == {"t": 0.4, "ok": False, "n_rows": 2, "n_classes": 2, "max_distance": 0.5,
                                "n_rows_in_far_classes": 2, "ordered": True}
    empty = verify_t_closeness(table.iloc[:0], ["q"], "s", 0.5)
    assert empty.ok and empty.n_rows == 0 and empty.n_classes == 0
    assert verify_t_closeness(table, [], "s", 0.5).n_classes == 1


def test_exported_where_the_other_verifiers_are():
    assert incrowd.verify_t_closeness is privacy.verify_t_closeness
    assert "verify_t_closeness" in incrowd.__all__


@pytest.mark.parametrize("t", [0, -0.1, 1.5, float("nan"), True, "0.2", None])
def test_t_outside_unit_interval_is_named(t):
    table = pd.DataFrame({"q": [0, 1], "s": [1, 2]})
    with pytest.raises(ParameterError, match=r"t must be a number in \(0, 1\]"):
        verify_t_closeness(table, ["q"], "s", t)


def test_unknown_columns_and_foreign_values_are_named():
    table = pd.DataFrame({"q": [0, 1], "s": ["a", "b"]})
    with pytest.raises(DataError, match="unknown column.*'nope'"):
        verify_t_closeness(table, ["nope"], "s", 0.5)
    with pytest.raises(DataError, match="unknown column.*'salary'"):
        verify_t_closeness(table, ["q"], "salary", 0.5)
    with pytest.raises(DataError, match="column 's': value 'b'"):
        verify_t_closeness(table, ["q"], "s", 0.5, reference=["a", "a"])
    with pytest.raises(DataError, match="value 'b' is not in the order"):
        verify_t_closeness(table, ["q"], "s", 0.5, ordered=["a", "c"])
    mixed = pd.DataFrame({"q": [0, 1], "s": pd.Series(["a", 1], dtype=object)})
    with pytest.raises(DataError, match="cannot be sorted"):
        verify_t_closeness(mixed, ["q"], "s", 0.5, ordered=True)


# ---------------------------------------------------------------------------------------------
# pycanon, the outside verifier


pycanon = pytest.importorskip("pycanon")
from pycanon import anonymity  # noqa: E402


@settings(max_examples=30, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 3), st.sampled_from("ab"), st.integers(0, 6)),
                  min_size=2, max_size=40),
    text=st.booleans(),
)
def test_pycanon_agrees_on_k_l_and_t(rows, text):
    frame = pd.DataFrame(rows, columns=["age", "sex", "income"])
    if text:
        frame["income"] = frame["income"].map(lambda v: f"c{v}")
    if frame["income"].nunique() < 2:
        return  # pycanon divides by m - 1 = 0
    qi = ["age", "sex"]
    ours_t = verify_t_closeness(frame, qi, "income", 1.0)
    assert ours_t.ordered is (not text)
    assert anonymity.t_closeness(frame, qi, ["income"]) == pytest.approx(ours_t.max_distance, abs=1e-9)
    assert anonymity.l_diversity(frame, qi, ["income"]) == verify_l_diversity(frame, qi, "income", 1).min_distinct
    assert anonymity.k_anonymity(frame, qi) == verify_k_anonymity(frame, qi, 1).min_class_size


def test_pycanon_leaves_rows_with_a_missing_quasi_identifier_out():
    frame = pd.DataFrame({"q": [0.0, 0.0, 0.0, 0.0, None, None], "s": ["a", "a", "b", "b", "a", "a"]})
    # p = (2/3, 1/3); class 0 (1/2, 1/2) is 1/6 away, the class of the missing QI (1, 0) 1/3
    assert verify_t_closeness(frame, ["q"], "s", 1.0).max_distance == pytest.approx(1 / 3)
    assert anonymity.t_closeness(frame, ["q"], ["s"]) == pytest.approx(1 / 6)


def test_one_sensitive_value_is_distance_zero_where_pycanon_divides_by_zero():
    frame = pd.DataFrame({"q": [0, 0, 1], "s": [4, 4, 4]})
    assert verify_t_closeness(frame, ["q"], "s", 0.01).max_distance == 0.0
    with pytest.raises(ZeroDivisionError):
        anonymity.t_closeness(frame, ["q"], ["s"])


# ---------------------------------------------------------------------------------------------
# enforce_sensitive: merge groups until every group is l-diverse and t-close

from unittest import mock  # noqa: E402

from incrowd.privacy import DistinctL, TCloseness  # noqa: E402
from incrowd.publishing import _sensitive as sensitive_module  # noqa: E402
from incrowd.publishing._sensitive import SensitiveColumn, enforce_sensitive  # noqa: E402


def _merging(l=None, t=None) -> list:
    """distinct l and t as the models enforce_sensitive merges groups for."""
    return ([DistinctL(l)] if l is not None else []) + ([TCloseness(t)] if t is not None else [])


@st.composite
def _release_case(draw):
    n = draw(st.integers(2, 60))
    n_groups = draw(st.integers(1, max(1, n // 2)))
    labels = np.array(draw(st.lists(st.integers(0, n_groups - 1), min_size=n, max_size=n))) * 3 + 1
    block_of = {g: draw(st.integers(0, 2)) for g in np.unique(labels)}
    blocks = np.array([block_of[g] for g in labels]) if draw(st.booleans()) else None
    p = draw(st.integers(0, 2))
    points = np.array(draw(st.lists(st.integers(-2, 2), min_size=n * p, max_size=n * p)), float).reshape(n, p)
    columns = []
    for j in range(draw(st.integers(1, 2))):
        m = draw(st.integers(1, 4))
        codes = np.array(draw(st.lists(st.integers(0, m - 1), min_size=n, max_size=n)))
        extra = np.array(draw(st.lists(st.integers(0, 3), min_size=m, max_size=m)))
        ref = np.bincount(codes, minlength=m) + extra
        columns.append(SensitiveColumn(f"s{j}", codes, m, draw(st.booleans()), ref))
    l = draw(st.one_of(st.none(), st.integers(2, 3)))
    t = draw(st.one_of(st.none(), st.floats(0.05, 1.0))) if l is not None else draw(st.floats(0.05, 1.0))
    return labels, points, columns, l, t, blocks


def _passes(frame: pd.DataFrame, by: str, columns, l, t) -> bool:
    for c in columns:
        if l is not None and not verify_l_diversity(frame, [by], c.name, l):
            return False
        reference = pd.Series(np.repeat(np.arange(c.n_values), c.reference_counts))
        if t is not None and not verify_t_closeness(frame, [by], c.name, t, ordered=c.ordered, reference=reference):
            return False
    return True


def _frame(labels, columns, blocks) -> pd.DataFrame:
    frame = pd.DataFrame({"g": labels, "block": 0 if blocks is None else blocks})
    for c in columns:
        frame[c.name] = c.codes
    return frame


@settings(max_examples=40, deadline=None)
@given(case=_release_case())
def test_enforce_sensitive_makes_every_group_pass_inside_its_block(case):
    labels, points, columns, l, t, blocks = case
    new, failed = enforce_sensitive(labels, points, columns, _merging(l, t), blocks=blocks)
    frame = _frame(labels, columns, blocks)
    # failed rows are exactly the rows of the blocks that fail as a whole
    block_ok = {b: _passes(part, "block", columns, l, t) for b, part in frame.groupby("block")}
    np.testing.assert_array_equal(failed, ~frame["block"].map(block_ok).to_numpy(bool))
    np.testing.assert_array_equal(new[failed], labels[failed])
    # every group of the rest passes, measured by the verifiers against the reference
    published = _frame(new, columns, blocks)[~failed]
    assert _passes(published, "g", columns, l, t)
    # groups only grow: each old group lies whole in one new group, named by its lowest old id
    for old, part in pd.DataFrame({"old": labels, "new": new}).groupby("old"):
        assert part["new"].nunique() == 1
    for new_id, part in pd.DataFrame({"old": labels, "new": new, "block": frame["block"]}).groupby("new"):
        assert new_id == part["old"].min()
        assert part["block"].nunique() == 1  # merges never cross blocks
    again = enforce_sensitive(labels, points, columns, _merging(l, t), blocks=blocks)
    np.testing.assert_array_equal(again[0], new)
    np.testing.assert_array_equal(again[1], failed)
    # the per-group sparse counts (columns with many values) merge exactly as the dense matrix
    with mock.patch.object(sensitive_module, "_DENSE_CELLS", 0):
        sparse = enforce_sensitive(labels, points, columns, _merging(l, t), blocks=blocks)
    np.testing.assert_array_equal(sparse[0], new)
    np.testing.assert_array_equal(sparse[1], failed)


def test_groups_that_pass_are_left_alone():
    labels = np.array([0, 0, 1, 1, 2, 2])
    col = SensitiveColumn("s", np.array([0, 1, 0, 1, 1, 0]), 2, False, np.array([3, 3]))
    new, failed = enforce_sensitive(labels, np.zeros((6, 1)), [col], _merging(2, 0.01))
    np.testing.assert_array_equal(new, labels)
    assert not failed.any()


def test_a_failing_group_merges_with_the_nearest_group():
    # group 5 (all "a") fails l = 2; group 9 is nearer than group 2
    labels = np.array([2, 2, 5, 5, 9, 9])
    points = np.array([[-5.0], [-5.0], [1.0], [1.0], [2.0], [2.0]])
    col = SensitiveColumn("s", np.array([0, 1, 0, 0, 0, 1]), 2, False, np.array([4, 2]))
    new, _ = enforce_sensitive(labels, points, [col], _merging(2))
    np.testing.assert_array_equal(new, [2, 2, 5, 5, 5, 5])


def test_without_features_the_partner_is_the_union_closest_to_passing():
    # no numeric quasi-identifier: every group is as near. Against (1/2, 1/2) with t = 0.3,
    # group 0 (a a) is 1/2 away; with group 1 (a a a b) it would be 1/3 away, with group 2 (a b b) 1/10
    labels = np.array([0, 0, 1, 1, 1, 1, 2, 2, 2])
    col = SensitiveColumn("s", np.array([0, 0, 0, 0, 0, 1, 0, 1, 1]), 2, False, np.array([5, 5]))
    new, failed = enforce_sensitive(labels, np.zeros((9, 0)), [col], _merging(t=0.3))
    np.testing.assert_array_equal(new, [0, 0, 1, 1, 1, 1, 0, 0, 0])
    assert not failed.any()


def test_a_block_that_fails_as_a_whole_is_returned_as_failed_and_untouched():
    labels = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    blocks = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    col = SensitiveColumn("s", np.array([0, 0, 0, 1, 0, 0, 0, 0]), 2, False, np.array([7, 1]))
    new, failed = enforce_sensitive(labels, np.zeros((8, 1)), [col], _merging(2), blocks=blocks)
    np.testing.assert_array_equal(failed, [False] * 4 + [True] * 4)
    np.testing.assert_array_equal(new, [0, 0, 0, 0, 2, 2, 3, 3])


def test_enforce_sensitive_checks_its_parameters():
    col = SensitiveColumn("s", np.array([0, 1]), 2, False, np.array([1, 1]))
    with pytest.raises(ParameterError, match="t must be a number in"):
        enforce_sensitive(np.array([0, 0]), np.zeros((2, 1)), [col], _merging(t=1.5))
    with pytest.raises(ParameterError, match="one block"):
        enforce_sensitive(np.array([0, 0]), np.zeros((2, 1)), [col], _merging(2), blocks=np.array([0, 1]))
    bad = SensitiveColumn("s", np.array([0, 1]), 2, False, np.array([1, 0]))
    with pytest.raises(ParameterError, match="'s'.*row 1"):
        enforce_sensitive(np.array([0, 0]), np.zeros((2, 1)), [bad], _merging(2))


def test_merged_release_agrees_with_pycanon():
    rng = np.random.default_rng(3)
    n = 60
    labels = np.repeat(np.arange(12), 5)
    points = rng.normal(size=(n, 2))
    income = rng.choice(["<=50K", ">50K"], size=n, p=[0.75, 0.25])
    codes = (income == ">50K").astype(np.int64)
    col = SensitiveColumn("income", codes, 2, False, np.bincount(codes, minlength=2))
    new, failed = enforce_sensitive(labels, points, [col], _merging(2, 0.2))
    assert not failed.any()
    frame = pd.DataFrame({"g": new, "income": income})
    assert anonymity.l_diversity(frame, ["g"], ["income"]) >= 2
    assert anonymity.t_closeness(frame, ["g"], ["income"]) <= 0.2 + 1e-12
    assert anonymity.k_anonymity(frame, ["g"]) >= 5


# ---------------------------------------------------------------------------------------------
# through incrowd.publish: the published table checked by pycanon

from pathlib import Path  # noqa: E402

_DATA = Path(data_dir())
_FULL = _DATA / "adult_arx" / "full"
_QIS = ["age", "hours-per-week", "sex", "race", "marital-status", "education", "native-country"]


def _check_sensitive_release(result, original: pd.Series, qis, l, t):
    table = result.table.reset_index(drop=True)
    canon = table.astype({c: str for c in qis})  # pycanon groups on plain values
    name = original.name
    verification = result.summary()["verification"]
    if l is not None:
        ours = verify_l_diversity(table, qis, name, 1)
        assert anonymity.l_diversity(canon, qis, [name]) == ours.min_distinct >= l
        assert verification["l_diversity"][name]["ok"]
    if t is not None:
        # the release measures against the whole input; pycanon can only take the published rows
        against_input = verify_t_closeness(table, qis, name, t, reference=original)
        assert against_input.ok and against_input.max_distance <= t + 1e-12
        assert verification["t_closeness"][name]["max_distance"] == pytest.approx(against_input.max_distance)
        assert verification["t_closeness"][name]["ordered"] is pd.api.types.is_numeric_dtype(original)
        if table[name].nunique() > 1:  # pycanon divides by m - 1
            published_only = verify_t_closeness(table, qis, name, t).max_distance
            assert anonymity.t_closeness(canon, qis, [name]) == pytest.approx(published_only)


_STRATEGIES = ["generalize-then-microaggregate", "joint"]


@pytest.mark.skipif(not (_DATA / "adult.csv.gz").exists(), reason="benchmark data folder not found")
@pytest.mark.parametrize("strategy", _STRATEGIES)
def test_adult_release_with_l_and_t_agrees_with_pycanon(strategy):
    part = incrowd.read_table(_DATA / "adult.csv.gz").head(3000)
    columns = {"age": "numeric", "hours-per-week": "numeric", "income": "sensitive"}
    for name in ("sex", "race", "marital-status", "education", "native-country"):
        columns[name] = {"role": "categorical", "hierarchy": str(_FULL / f"adult_full_hierarchy_{name}.csv")}
    spec = {"privacy": {"k": 5, "l": 2, "t": 0.2, "max_suppression": "1%", "strategy": strategy,
                        "allow_full_suppression": True}, "columns": columns}
    result = incrowd.publish(part, spec)
    _check_sensitive_release(result, part["income"], _QIS, 2, 0.2)


@st.composite
def _sensitive_tables(draw):
    n = draw(st.integers(10, 50))
    rng = np.random.default_rng(draw(st.integers(0, 10_000)))
    frame = pd.DataFrame({"x": rng.normal(size=n).round(1), "c": rng.choice(["u", "v", "w"], n),
                          "s": rng.choice(["a", "b", "c"], n, p=draw(st.sampled_from([None, [0.7, 0.2, 0.1]])))})
    if draw(st.booleans()):  # a numeric sensitive column: the ordered distance
        frame["s"] = frame["s"].map({"a": 10, "b": 20, "c": 35}).astype(np.int64)
    l = draw(st.one_of(st.none(), st.integers(2, 3)))
    t = draw(st.one_of(st.none(), st.sampled_from([0.15, 0.3, 0.6]))) if l else draw(st.sampled_from([0.15, 0.3, 0.6]))
    return frame, l, t


@pytest.mark.parametrize("strategy", _STRATEGIES)
@settings(max_examples=20, deadline=None)
@given(case=_sensitive_tables())
def test_random_releases_are_l_diverse_and_t_close(case, strategy):
    frame, l, t = case
    if l is not None and frame["s"].nunique() < l:
        return
    privacy = {"k": 2, "max_suppression": "100%", "strategy": strategy, "l": l, "t": t,
               "allow_full_suppression": True}
    spec = {"privacy": {key: v for key, v in privacy.items() if v is not None},
            "columns": {"x": "numeric", "c": {"role": "categorical"}, "s": "sensitive"}}
    result = incrowd.publish(frame, spec)
    assert result.table.shape[0] == frame.shape[0] - result.suppressed
    if result.table.shape[0]:
        _check_sensitive_release(result, frame["s"], ["x", "c"], l, t)


def test_a_group_exactly_at_t_is_not_merged():
    labels = np.repeat([0, 1], 5)
    col = SensitiveColumn("income", np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 0]), 2, False, np.array([5, 5]))
    at, _ = enforce_sensitive(labels, np.zeros((10, 1)), [col], _merging(t=0.3))  # both groups 0.3 away
    np.testing.assert_array_equal(at, labels)
    below, _ = enforce_sensitive(labels, np.zeros((10, 1)), [col], _merging(t=0.29))
    np.testing.assert_array_equal(below, np.zeros(10))
