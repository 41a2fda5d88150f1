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

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import incrowd
from incrowd import DataError, ParameterError, verify_k_anonymity, verify_l_diversity, verify_t_closeness
from incrowd import metrics


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
    from incrowd._emd import emd_by_class, emd_dense

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
    assert incrowd.verify_t_closeness is metrics.verify_t_closeness
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
