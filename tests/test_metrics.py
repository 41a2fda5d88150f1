from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from incrowd import ParameterError, information_loss, sse, sst, verify_k_anonymity
from incrowd.microaggregation import group_size_stats


def test_sse_sst_by_hand():
    X = np.array([[0.0], [2.0], [10.0], [14.0]])
    labels = np.array([0, 0, 1, 1])
    assert sse(X, labels) == 1 + 1 + 4 + 4
    assert sst(X) == pytest.approx((6.5**2) + (4.5**2) + (3.5**2) + (7.5**2))
    assert information_loss(X, labels) == pytest.approx(10 / sst(X))


def test_information_loss_extremes():
    X = np.random.default_rng(0).normal(size=(30, 3))
    assert information_loss(X, np.arange(30)) == 0.0
    assert information_loss(X, np.zeros(30, dtype=int)) == pytest.approx(1.0)


def test_information_loss_is_on_standardized_data():
    X = np.random.default_rng(1).normal(size=(40, 2))
    labels = np.repeat(np.arange(10), 4)
    scaled = X * np.array([1000.0, 0.001])
    assert information_loss(scaled, labels) == pytest.approx(information_loss(X, labels))


def test_labels_must_match_rows():
    with pytest.raises(ParameterError, match="one group id per row"):
        sse(np.ones((3, 1)), [0, 0])


def test_group_size_stats():
    s = group_size_stats([0, 0, 0, 1, 1, 1, 1, 2, 2, 2])
    assert (s.n_groups, s.min, s.max) == (3, 3, 4)
    assert s.histogram == {3: 2, 4: 1}


def test_verify_k_anonymity_on_published_table():
    table = pd.DataFrame({"a": [1, 1, 1, 2, 2], "b": [5, 5, 5, 6, 6], "c": list("vwxyz")})
    report = verify_k_anonymity(table, ["a", "b"], 2)
    assert report.ok and bool(report) and report.min_class_size == 2 and report.n_classes == 2
    bad = verify_k_anonymity(table, ["a", "b"], 3)
    assert not bad and bad.n_rows_in_small_classes == 2
    # a sensitive column is no quasi-identifier: including it breaks anonymity
    assert not verify_k_anonymity(table, ["a", "c"], 2)


def test_verify_k_anonymity_counts_missing_values_as_a_value():
    table = pd.DataFrame({"a": [np.nan, np.nan, 1.0]})
    assert verify_k_anonymity(table, ["a"], 1).n_classes == 2
    assert not verify_k_anonymity(table, ["a"], 2)


def test_verify_k_anonymity_array():
    assert verify_k_anonymity(np.array([[1.0, 2], [1, 2], [3, 4], [3, 4]]), None, 2)
    assert not verify_k_anonymity(np.array([[1.0, 2], [1, 2], [3, 4], [3, 5]]), None, 2)
