"""The one-call API and the estimators: results, parameters, and clear errors."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import incrowd
from incrowd import (
    MDAV,
    DataError,
    DataWarning,
    MDAVStar,
    ParameterError,
    VMDAV,
    microaggregate,
)


def test_result_fields(census_frame):
    r = microaggregate(census_frame, 5, "mdav-star")
    assert r.labels.shape == (1080,) and r.labels.dtype.kind == "i"
    assert r.group_sizes.sum() == 1080 and r.group_sizes.min() >= 5
    assert isinstance(r.table, pd.DataFrame) and r.table.shape == census_frame.shape
    assert 0 < r.information_loss < 1 and r.seconds > 0
    assert r.verification.ok and r.verification.min_class_size >= 5
    s = r.summary()
    assert s["rows"] == 1080 and s["groups"] == r.n_groups and s["k_anonymous"] is True
    assert s["information_loss_percent"] == pytest.approx(100 * r.information_loss)


def test_api_equals_estimator(census_frame):
    r = microaggregate(census_frame, 3, "mdav")
    est = MDAV(k=3).fit(census_frame)
    np.testing.assert_array_equal(r.labels, est.labels_)
    assert r.information_loss == est.information_loss_
    agg = est.fit_transform(census_frame)
    pd.testing.assert_frame_equal(agg, r.table)


def test_numpy_in_numpy_out():
    X = np.random.default_rng(0).normal(size=(50, 3))
    r = microaggregate(X, 5, "mdav-plus")
    assert isinstance(r.table, np.ndarray) and r.table.shape == X.shape
    assert r.quasi_identifiers is None
    # the column means survive aggregation exactly (up to rounding): centroids preserve sums
    np.testing.assert_allclose(r.table.mean(axis=0), X.mean(axis=0), atol=1e-12)


def test_estimator_is_sklearn_compatible():
    est = VMDAV(k=4, gamma=0.5)
    assert est.get_params() == {"k": 4, "gamma": 0.5, "random_state": None}
    from sklearn.base import clone

    assert clone(est).get_params() == est.get_params()
    labels = est.fit_predict(np.arange(20.0))
    assert np.bincount(labels).min() >= 4


@pytest.mark.parametrize(
    "k, message",
    [(1, r"k must be an integer in \[2, n_rows=10\]; got 1"),
     (11, r"k must be an integer in \[2, n_rows=10\]; got 11"),
     (2.5, r"k must be an integer in \[2, n_rows=10\]; got 2.5"),
     (True, r"got True")],
)
def test_bad_k(k, message):
    with pytest.raises(ParameterError, match=message):
        microaggregate(np.arange(10.0), k)


def test_unknown_method_lists_the_known_ones():
    with pytest.raises(ParameterError, match="unknown method 'mdav2'; known methods: mdav, mdav-plus, v-mdav, mdav-star, ona, ona-star, mondrian, mondrian-v, mondrian-v2d, mona, mona-2d, refine"):
        microaggregate(np.arange(10.0), 2, "mdav2")


def test_unknown_parameter_is_refused_not_ignored():
    with pytest.raises(ParameterError, match=r"method 'mdav' has no parameter\(s\) \['gamma'\]"):
        microaggregate(np.arange(10.0), 2, "mdav", gamma=0.3)
    with pytest.raises(ParameterError, match="gamma must be >= 0.0; got -1"):
        microaggregate(np.arange(10.0), 2, "v-mdav", gamma=-1)


def test_missing_value_names_column_and_row():
    frame = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [1.0, None, 3, np.nan]})
    with pytest.raises(DataError, match=r"column 'b' has a missing value in data row 2 \(2 such row"):
        microaggregate(frame, 2)


def test_non_numeric_text_names_column_and_row():
    frame = pd.DataFrame({"a": ["1", "2", "x3", "4"], "b": [1.0, 2, 3, 4]})
    with pytest.raises(DataError, match=r"column 'a' must be numeric; data row 3 holds 'x3'"):
        microaggregate(frame, 2)


def test_numeric_text_is_accepted():
    frame = pd.DataFrame({"a": ["1", "2", "3", "4"], "b": [1.0, 2, 3, 4]})
    assert microaggregate(frame, 2).verification.ok


def test_unknown_column():
    frame = pd.DataFrame({"a": [1.0, 2, 3, 4]})
    with pytest.raises(DataError, match=r"unknown quasi-identifier column 'z'; the data has columns \['a'\]"):
        microaggregate(frame, 2, quasi_identifiers=["z"])
    with pytest.raises(DataError, match="unknown identifier column 'id'"):
        microaggregate(frame, 2, identifiers="id")


def test_empty_frame():
    with pytest.raises(DataError, match="no rows"):
        microaggregate(pd.DataFrame({"a": []}), 2)


def test_array_with_nan_names_row_and_column():
    X = np.ones((5, 2))
    X[3, 1] = np.nan
    with pytest.raises(DataError, match="column 1 has a missing or infinite value in row 4"):
        MDAV(k=2).fit(X)


def test_constant_column_warns_and_still_works():
    frame = pd.DataFrame({"a": [1.0, 2, 3, 4, 5, 6], "c": [7.0] * 6})
    with pytest.warns(DataWarning, match=r"\['c'\] are constant"):
        r = microaggregate(frame, 3)
    assert "constant" in r.warnings[0]
    assert (r.table["c"] == 7.0).all()


def test_all_constant_data_has_zero_loss():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        r = microaggregate(np.full((6, 2), 3.0), 2, "mdav-star")
    assert r.information_loss == 0.0


def test_quasi_identifiers_with_array_is_an_error():
    with pytest.raises(ParameterError, match="name DataFrame columns"):
        microaggregate(np.ones((4, 2)), 2, quasi_identifiers=["a"])


def test_identifier_dropped_and_default_qis_exclude_it():
    frame = pd.DataFrame({"id": range(6), "x": [1.0, 2, 3, 10, 11, 12]})
    r = microaggregate(frame, 3, identifiers=["id"])
    assert list(r.table.columns) == ["x"]
    assert r.quasi_identifiers == ["x"] and r.identifiers == ["id"]
    assert r.table["x"].tolist() == [2.0, 2.0, 2.0, 11.0, 11.0, 11.0]


def test_non_numeric_default_qi_is_named():
    frame = pd.DataFrame({"x": [1.0, 2, 3, 4], "city": ["a", "b", "c", "d"]})
    with pytest.raises(DataError, match="column 'city' must be numeric"):
        microaggregate(frame, 2)


def test_public_names_are_exactly_these():
    assert sorted(incrowd.__all__) == sorted([
        "report", "Report", "risk", "RiskResult", "publish", "PublishResult", "perturb", "PerturbResult", "microaggregate", "MicroaggregationResult", "Verification",
        "METHODS", "MDAV", "MDAVPlus", "VMDAV",
        "MDAVStar", "ONA", "ONAStar", "Mondrian", "MondrianV", "MondrianV2D", "MONA", "MONA2D", "Refine",
        "lower_bound", "information_loss", "sse", "sst", "verify_k_anonymity", "verify_l_diversity", "verify_t_closeness",
        "read_table",
        "write_table", "IncrowdError", "ParameterError", "DataError", "VerificationError", "OutputWriteError",
            "StateLockedError",
        "IncrowdWarning", "DataWarning", "PrivacyWarning", "incremental", "generalization", "__version__",
    ])
    for name in incrowd.__all__:
        assert hasattr(incrowd, name)


def test_mdav_star_estimator_fit_transform_keeps_frame_shape(census_frame):
    out = MDAVStar(k=5).fit_transform(census_frame)
    assert out.shape == census_frame.shape and list(out.columns) == list(census_frame.columns)
    assert incrowd.verify_k_anonymity(out, None, 5).ok
