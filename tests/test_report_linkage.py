"""Distance-based record linkage through a k-d tree: the same credit, ties included, as the
plain definition and as the blocked scan it replaces on few columns."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd.reporting._risk import _distance_linkage, _tree_linkage, record_linkage


def _credit_plain(xs, xms, i, tol=1e-12):
    d = [math.sqrt(sum((xms[i, j] - xs[h, j]) ** 2 for j in range(xs.shape[1]))) for h in range(xs.shape[0])]
    ties = [h for h in range(len(d)) if d[h] <= min(d) * (1 + tol)]
    return (1 / len(ties)) if i in ties else 0.0


def test_tree_linkage_shares_ties_with_duplicated_originals():
    # duplicates in the original (rows 4, 5 and 7), masked records midway between originals
    x = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0], [5.0, 5.0], [5.0, 5.0], [9.0, 1.0], [5.0, 5.0]])
    xm = np.array([[1.0, 0.0], [2.0, 0.0], [1.0, 1.0], [2.0, 2.0], [5.0, 5.0], [5.0, 5.1], [7.0, 3.0], [4.0, 4.0]])
    rows = np.arange(8)
    got = _tree_linkage(x, xm, rows, 1e-12)
    expected = [_credit_plain(x, xm, i) for i in range(8)]
    assert got.tolist() == pytest.approx(expected, abs=1e-15)
    # row 0 ties two originals, row 2 four, rows 4, 5 and 7 the three equal originals
    assert expected[0] == 0.5 and expected[2] == 0.25 and expected[4] == pytest.approx(1 / 3)


def test_record_linkage_is_exact_on_every_row_by_default_with_few_columns():
    rng = np.random.default_rng(4)
    x = np.round(rng.normal(size=(30_000, 3)), 1)  # many equal originals, as integer ages are
    xm = x + rng.normal(scale=0.3, size=x.shape)
    res = record_linkage(x, xm, global_linkage=False)
    assert res["distance_method"] == "exact" and res["distance_rows"] == 30_000
    rows = np.arange(0, 30_000, 997)
    mean, sd = x.mean(axis=0), x.std(axis=0, ddof=1)
    xs, xms = (x - mean) / sd, (xm - mean) / sd
    blocked = _distance_linkage(xs, xms, rows, 1e-12)
    assert _tree_linkage(xs, xms, rows, 1e-12).tolist() == pytest.approx(blocked.tolist(), abs=1e-15)
    # asked for, the sample is still taken
    sampled = record_linkage(x, xm, global_linkage=False, max_exact=1000, distance_sample=50)
    assert sampled["distance_method"] == "sampled" and sampled["distance_rows"] == 50


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 12), st.integers(1, 3), st.integers(0, 10_000), st.booleans())
def test_tree_linkage_equals_the_plain_definition(n, p, seed, grid):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, size=(n, p)).astype(float) if grid else rng.normal(size=(n, p))
    xm = (rng.integers(0, 5, size=(n, p)) / 2.0) if grid else x + rng.normal(scale=0.5, size=(n, p))
    rows = np.arange(n)
    got = _tree_linkage(x, xm, rows, 1e-12)
    assert got.tolist() == pytest.approx([_credit_plain(x, xm, i) for i in range(n)], abs=1e-12)
    assert got.tolist() == pytest.approx(_distance_linkage(x, xm, rows, 1e-12).tolist(), abs=1e-12)


def test_a_cancelled_report_stops_between_measures(monkeypatch):
    import pandas as pd

    import incrowd
    from incrowd._runtime import CancelToken, cancellable
    from incrowd.exceptions import BuildCancelled
    from incrowd.reporting import _risk

    token = CancelToken()
    ran = []

    def drisk(x, xm, **kw):  # the web's cancel arrives while a measure runs
        token.cancel()
        return 0.0

    monkeypatch.setattr(_risk, "drisk", drisk)
    monkeypatch.setattr(_risk, "record_linkage", lambda *a, **kw: ran.append("linkage") or {})
    x = pd.DataFrame({"a": np.arange(20.0), "b": np.arange(20.0) % 7})
    with cancellable(token), pytest.raises(BuildCancelled):
        incrowd.report(x, x, ["a", "b"], figures=False)
    assert ran == []
