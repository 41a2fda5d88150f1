"""Attack-based risk (anonymeter's singling-out, linkability and inference attacks).

Small tables and few attacks: the figures are anonymeter's, these tests check what incrowd adds
(control split, column handling, seeds, the result's fields) and constructed cases with a known
ordering of risks.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from incrowd.reporting._attacks import attacks
from incrowd.exceptions import DataError, IncrowdError, ParameterError

# hyphens as in Adult: anonymeter evaluates singling-out queries as pandas expressions
QIS = ["age", "hours-per-week", "marital-status", "zip"]
SECRET = "income-class"
SMALL = dict(n_attacks=40, max_attempts=300)
ATTACKS = ("univariate", "multivariate", "linkability", "inference")


def _table(n: int = 200, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.normal(40, 12, n).round(2),
        "hours-per-week": rng.normal(38, 9, n).round(2),
        "marital-status": rng.choice(["Married-civ-spouse", "Never-married", "Divorced", "Widowed"], n),
        "zip": rng.integers(1000, 1100, n),
        "income-class": rng.choice(["<=50K", ">50K", "unknown"], n),
        "other": rng.normal(size=n),
    })


def _constant_qis(table: pd.DataFrame) -> pd.DataFrame:
    out = table.copy()
    out["age"] = 0.0
    out["hours-per-week"] = 0.0
    out["marital-status"] = "*"
    out["zip"] = 0
    return out


def _parts(result: dict) -> dict:
    so = result["singling_out"]
    return {"univariate": so["univariate"], "multivariate": so["multivariate"],
            "linkability": result["linkability"], "inference": result["inference"]}


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return _table()


@pytest.fixture(scope="module")
def same(table) -> dict:
    return attacks(table, table.copy(), quasi_identifiers=QIS, secret=SECRET, **SMALL)


@pytest.fixture(scope="module")
def constant(table) -> dict:
    return attacks(table, _constant_qis(table), quasi_identifiers=QIS, secret=SECRET, **SMALL)


def test_result_has_every_field_with_risks_in_unit_interval(same, constant):
    for result in (same, constant):
        assert json.loads(json.dumps(result)) == result  # plain JSON types only
        assert result["method"] == "anonymeter" and result["anonymeter_version"]
        assert result["n_attacks"] == 40 and result["confidence"] == 0.95
        for name, part in _parts(result).items():
            lo, hi = part["ci"]
            assert 0.0 <= lo <= part["risk"] <= hi <= 1.0, name
            for rate in ("attack_rate", "control_rate", "baseline_rate"):
                assert 0.0 <= part[rate]["value"] <= 1.0 and part[rate]["error"] >= 0.0, (name, rate)
            assert part["n_attacks"] == 40
            assert 0 <= part["n_success"] <= 40 and 0 <= part["n_baseline"] <= 40
        assert result["linkability"]["aux_cols"] == [["age", "hours-per-week"], ["marital-status", "zip"]]
        assert result["inference"]["aux_cols"] == QIS and result["inference"]["regression"] is False
        assert isinstance(result["warnings"], list)


def test_release_equal_to_original_is_riskier_than_constant_quasi_identifiers(same, constant):
    # an intruder finds each training row itself in an unchanged release, and nothing in a
    # release where every quasi-identifier is one value
    for name in ("linkability", "inference"):
        assert same[name]["risk"] >= 0.5, name
        assert constant[name]["risk"] <= 0.1, name
        assert same[name]["risk"] - constant[name]["risk"] >= 0.4, name


def test_column_names_with_hyphens_give_working_singling_out_queries(same):
    # without safe names every query would fail inside anonymeter and count as no success
    assert same["singling_out"]["multivariate"]["n_success"] > 0
    assert same["singling_out"]["univariate"]["n_success"] > 0
    assert not any("failed queries" in w for w in same["warnings"])


def test_fixed_seed_gives_the_same_result_and_restores_random_state(table):
    from anonymeter.evaluators import linkability_evaluator as lk
    from anonymeter.evaluators import singling_out_evaluator as so

    rng_before, links_before = so.rng, lk._random_links
    np.random.seed(12345)
    expected_draw = np.random.random()
    np.random.seed(12345)
    release = table.copy()
    release["age"] = release["age"].round(-1)
    first = attacks(table, release, quasi_identifiers=QIS, secret=SECRET, random_state=7, **SMALL)
    assert np.random.random() == expected_draw  # numpy's global generator is left as it was
    assert so.rng is rng_before and lk._random_links is links_before
    second = attacks(table, release, quasi_identifiers=QIS, secret=SECRET, random_state=7, **SMALL)
    assert first == second


def test_risk_is_anonymeters_residual_success_of_wilson_rates(same, constant):
    """anonymeter/stats/confidence.py: Wilson score rates, residual (a - c) / (1 - c), clipped."""
    z = norm.ppf(0.5 * (1 + 0.95))

    def wilson(n, s):
        rate = (s + 0.5 * z * z) / (n + z * z)
        err = z / (n + z * z) * math.sqrt(s * (n - s) / n + 0.25 * z * z)
        return rate, err

    for result in (same, constant):
        for name, part in _parts(result).items():
            n = part["n_attacks"]
            a, da = wilson(n, part["n_success"])
            c, dc = wilson(n, part["n_control"])
            b, _ = wilson(n, part["n_baseline"])
            resid = (a - c) / (1 - c)
            err = math.sqrt((da / abs(1 - c)) ** 2 + (dc * (a - 1) / (1 - c) ** 2) ** 2)
            clip = lambda x: min(max(x, 0.0), 1.0)  # noqa: E731
            assert part["attack_rate"]["value"] == pytest.approx(a, abs=1e-9)
            assert part["control_rate"]["value"] == pytest.approx(c, abs=1e-9)
            assert part["baseline_rate"]["value"] == pytest.approx(b, abs=1e-9)
            assert part["risk"] == pytest.approx(clip(resid), abs=1e-9), name
            assert part["ci"] == pytest.approx([clip(resid - err), clip(resid + err)], abs=1e-9)


def test_held_out_control_drops_the_matching_release_rows(same):
    split = same["split"]
    assert split["control"] == "held_out" and split["control_fraction"] == 0.3
    assert split["n_control"] == 60 and split["n_training"] == 140 and split["n_original"] == 200
    assert "held out" in split["note"] and "dropped" in split["note"]


def test_given_control_attacks_the_whole_release(table):
    control = _table(80, seed=9)
    result = attacks(table, table.copy(), quasi_identifiers=QIS, secret=SECRET, control=control, **SMALL)
    assert result["split"]["control"] == "given"
    assert result["split"]["n_training"] == 200 and result["split"]["n_control"] == 80
    assert result["linkability"]["risk"] >= 0.5


def test_generalized_labels_in_the_release_are_compared_as_labels(table):
    # numeric in the original, interval labels in the release: anonymeter needs one type a column
    release = table.copy()
    release["age"] = pd.cut(release["age"], [-np.inf, 30, 40, 50, np.inf]).astype(str)
    result = attacks(table, release, quasi_identifiers=QIS, secret=SECRET, **SMALL)
    assert 0.0 <= result["inference"]["risk"] <= 1.0


def test_without_secret_or_second_quasi_identifier_the_attack_is_none(table):
    result = attacks(table, table.copy(), quasi_identifiers=["age"], n_attacks=20, max_attempts=100)
    assert result["linkability"] is None and result["inference"] is None
    assert result["singling_out"]["multivariate"]["n_cols"] == 1


def test_n_attacks_is_capped_by_the_rows_available(table):
    result = attacks(table, table.copy(), quasi_identifiers=QIS, secret=SECRET, n_attacks=10_000,
                     max_attempts=100)
    assert result["n_attacks_requested"] == 10_000 and result["n_attacks"] == 60


def test_numpy_scalars_as_parameters_still_give_plain_json(table):
    result = attacks(table, table.copy(), quasi_identifiers=QIS, n_attacks=np.int64(20),
                     random_state=np.int64(3), confidence=np.float64(0.9),
                     control_fraction=np.float64(0.25), max_attempts=100)
    assert json.loads(json.dumps(result)) == result
    assert type(result["random_state"]) is int and result["random_state"] == 3


@pytest.mark.parametrize("kwargs, words", [
    (dict(quasi_identifiers=["age", "postcode"]), ["postcode"]),
    (dict(quasi_identifiers=QIS, secret="salary"), ["salary"]),
])
def test_unknown_column_is_a_data_error_naming_it(table, kwargs, words):
    with pytest.raises(DataError) as err:
        attacks(table, table.copy(), **kwargs)
    for word in words:
        assert word in str(err.value)


def test_release_with_other_row_count_is_a_data_error(table):
    with pytest.raises(DataError, match=r"release has 199 rows and the original 200"):
        attacks(table, table.iloc[1:], quasi_identifiers=QIS)


@pytest.mark.parametrize("kwargs, name", [
    (dict(n_attacks=0), "n_attacks"),
    (dict(control_fraction=1.0), "control_fraction"),
    (dict(confidence=1.5), "confidence"),
    (dict(random_state=-1), "random_state"),
    (dict(secret="age"), "secret"),
])
def test_bad_parameter_is_a_parameter_error_naming_it(table, kwargs, name):
    with pytest.raises(ParameterError, match=name):
        attacks(table, table.copy(), quasi_identifiers=QIS, **kwargs)


def test_missing_anonymeter_is_one_clear_error(table, monkeypatch):
    monkeypatch.setitem(sys.modules, "anonymeter.evaluators", None)
    with pytest.raises(IncrowdError, match="anonymeter"):
        attacks(table, table.copy(), quasi_identifiers=QIS)
