"""Local suppression (single cells blanked until k holds) and the k check it is held to.

- the wildcard count (a missing value matches any value) is sdcMicro's ``freqCalc``: against a
  brute force and against sdcMicro's own figures on testdata with missing keys;
- ``local_suppression`` reaches k under both meanings of a missing value, blanks only cells
  that had a value, and leaves no blank that could be restored (hypothesis), is never below the
  optimum found by brute force on tiny tables, and blanks fewer cells than sdcMicro's
  ``localSuppression`` on sdcMicro's testdata (fixture ``tests/data/sdcmicro_local_suppression.json``,
  made by ``bench/peers/local_suppression_vs_sdcmicro.py``);
- ``[privacy] suppression = "cells"`` end to end through ``incrowd publish``, the written file
  read back with the csv module and k counted there with the same meaning of a missing value.
"""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from incrowd.cli import app
from incrowd.exceptions import IncrowdError, ParameterError, VerificationError
from incrowd.generalization import LocalSuppressionResult, local_suppression
from incrowd.privacy import verify_k_anonymity
from incrowd.values import match_counts, wildcard_counts

DATA = Path(__file__).resolve().parent / "data"
TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


def _brute_counts(codes: np.ndarray, wildcard: bool, weights=None) -> np.ndarray:
    """Matches (or weight sums) per row, pair by pair, with sdcMicro 5.8.0 freqCalc's rules for
    rows missing everywhere: such a row gets the whole sample, and with two or more columns it
    counts for no row missing nowhere (with one column freqCalc adds it to every value)."""
    n, m = codes.shape
    w = np.ones(n, dtype=np.int64) if weights is None else np.asarray(weights)
    out = np.zeros(n, dtype=w.dtype)
    for i in range(n):
        if wildcard and (codes[i] < 0).all():
            out[i] = w.sum()
            continue
        for j in range(n):
            if wildcard:
                if m > 1 and (codes[j] < 0).all() and (codes[i] >= 0).all():
                    continue
                same = all(codes[i, c] == codes[j, c] or codes[i, c] < 0 or codes[j, c] < 0 for c in range(m))
            else:
                same = bool((codes[i] == codes[j]).all())
            out[i] += w[j] * same
    return out


tables = st.integers(1, 4).flatmap(lambda m: st.lists(
    st.lists(st.integers(-1, 2), min_size=m, max_size=m), min_size=1, max_size=14))


@settings(max_examples=60, deadline=None)
@given(tables)
def test_wildcard_counts_match_brute_force(rows):
    codes = np.asarray(rows, dtype=np.int64)
    assert wildcard_counts(codes).tolist() == _brute_counts(codes, True).tolist()


def test_wildcard_counts_one_key_counts_the_missing_rows_for_every_value():
    # freqCalc with one key adds the missing rows to every value (its special case for one key)
    codes = np.array([[0], [0], [1], [-1]])
    assert wildcard_counts(codes).tolist() == [3, 3, 2, 4]
    assert wildcard_counts(codes).dtype == np.int64


@settings(max_examples=60, deadline=None)
@given(tables.flatmap(lambda rows: st.tuples(st.just(rows), st.lists(
    st.floats(0.5, 500.0, allow_nan=False), min_size=len(rows), max_size=len(rows)))))
def test_wildcard_counts_with_float_weights_match_brute_force_and_the_sample_risk(case):
    from incrowd.privacy import sample_risk

    rows, weights = case
    codes = np.asarray(rows, dtype=np.int64)
    w = np.asarray(weights)
    expected = _brute_counts(codes, True, w)
    np.testing.assert_allclose(wildcard_counts(codes, w), expected, rtol=1e-12)
    # the sample risk's fk and Fk are the same counting
    fk, Fk = sample_risk.frequencies(codes, w)
    assert fk.tolist() == _brute_counts(codes, True).tolist()
    np.testing.assert_allclose(Fk, expected, rtol=1e-12)


def test_wildcard_counts_match_sdcmicro_freqcalc_with_missing_keys():
    # sdcMicro 5.8.0 freqCalc fk on testdata with missing key cells (engineer-made fixture of
    # bench/peers/risk_vs_sdcmicro.R)
    frame = pd.read_csv(DATA / "sdcmicro_testdata_na_risk.csv.gz", comment="#")
    assert frame[TESTDATA_KEYS].isna().any().any()
    got = match_counts(frame, TESTDATA_KEYS, missing_matches="any")
    assert np.array_equal(got, frame["fk"].to_numpy(np.int64))


def _frame(rows) -> tuple[pd.DataFrame, list[str]]:
    codes = np.asarray(rows, dtype=float)
    codes[codes < 0] = np.nan
    names = [f"q{j}" for j in range(codes.shape[1])]
    return pd.DataFrame(codes, columns=names), names


def _restorable(res: LocalSuppressionResult, data: pd.DataFrame, names, k: int) -> list[tuple[int, str]]:
    """Blanked cells whose value could be given back with k still holding."""
    out = []
    for i, j in zip(*np.nonzero(res.mask)):
        trial = res.table.copy()
        trial.iloc[i, trial.columns.get_loc(names[j])] = data.iloc[i][names[j]]
        if match_counts(trial, names, missing_matches=res.missing_matches).min() >= k:
            out.append((int(i), names[j]))
    return out


@pytest.mark.parametrize("missing_matches", ["any", "itself"])
@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 4).flatmap(lambda m: st.lists(
    st.lists(st.integers(-1, 3), min_size=m, max_size=m), min_size=3, max_size=16)), k=st.integers(2, 3))
def test_k_holds_only_valued_cells_blanked_and_no_blank_restorable(missing_matches, rows, k):
    data, names = _frame(rows)
    res = local_suppression(data, names, k, missing_matches=missing_matches)
    assert match_counts(res.table, names, missing_matches=missing_matches).min() >= k
    assert verify_k_anonymity(res.table, names, k, missing_matches=missing_matches).ok
    # a blank only where the input had a value; every other cell as it was
    assert not (res.mask & data[names].isna().to_numpy()).any()
    kept = ~res.mask
    assert np.array_equal(data[names].to_numpy()[kept], res.table[names].to_numpy()[kept], equal_nan=True)
    assert res.total == int(res.mask.sum()) == sum(res.suppressed.values())
    assert _restorable(res, data, names, k) == []


def _fast_min_count(codes: np.ndarray, wildcard: bool) -> int:
    """The fewest matches of a row, on a tiny code matrix (all pairs at once)."""
    a = codes
    if wildcard:
        miss = a < 0
        eq = ((a[:, None, :] == a[None, :, :]) | miss[:, None, :] | miss[None, :, :]).all(axis=2)
        every, complete = miss.all(axis=1), ~miss.any(axis=1)
        if a.shape[1] > 1:  # sdcMicro: an all-missing row counts for no complete one
            eq &= ~(complete[:, None] & every[None, :])
        counts = eq.sum(axis=1)
        counts[every] = a.shape[0]
    else:
        counts = (a[:, None, :] == a[None, :, :]).all(axis=2).sum(axis=1)
    return int(counts.min())


def _optimum(codes: np.ndarray, k: int, wildcard: bool) -> int:
    cells = [(i, j) for i in range(codes.shape[0]) for j in range(codes.shape[1]) if codes[i, j] >= 0]
    for size in range(len(cells) + 1):
        for chosen in itertools.combinations(cells, size):
            trial = codes.copy()
            for i, j in chosen:
                trial[i, j] = -1
            if _fast_min_count(trial, wildcard) >= k:
                return size
    raise AssertionError("no suppression reaches k")


@pytest.mark.parametrize("missing_matches", ["any", "itself"])
@pytest.mark.parametrize("seed", range(6))
def test_never_below_the_brute_force_optimum_on_tiny_tables(missing_matches, seed):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, size=(5, 3))
    data, names = _frame(codes)
    k = 2
    best = _optimum(codes, k, missing_matches == "any")
    res = local_suppression(data, names, k, missing_matches=missing_matches)
    assert match_counts(res.table, names, missing_matches=missing_matches).min() >= k
    assert res.total >= best
    # the wildcard lets one blank fix several records: the greedy is at most one cell off here
    if missing_matches == "any":
        assert res.total <= best + 1


@pytest.mark.parametrize("missing_matches", ["any", "itself"])
def test_the_result_does_not_depend_on_the_order_of_the_rows(missing_matches):
    rng = np.random.default_rng(3)
    data, names = _frame(rng.integers(0, 4, size=(80, 3)))
    base = local_suppression(data, names, 3, missing_matches=missing_matches)
    perm = rng.permutation(80)
    again = local_suppression(data.iloc[perm].reset_index(drop=True), names, 3, missing_matches=missing_matches)
    assert again.suppressed == base.suppressed
    # the same released rows (which of several equal rows gets a blank may differ)
    def rows(table):
        return sorted(map(str, table[names].itertuples(index=False)))
    assert rows(again.table) == rows(base.table)


def test_importance_orders_the_columns_blanked():
    # two records unique in a and in b alike: blanking either column fixes both; the less
    # important one is blanked (importance 1 = most important, suppressed last)
    data = pd.DataFrame({"a": [1, 1, 1, 2, 2, 2, 1, 2], "b": [1, 1, 1, 2, 2, 2, 2, 1]})
    first = local_suppression(data, ["a", "b"], 3, importance={"a": 1, "b": 2})
    second = local_suppression(data, ["a", "b"], 3, importance={"a": 2, "b": 1})
    assert first.suppressed == {"a": 0, "b": 2}
    assert second.suppressed == {"a": 2, "b": 0}


@pytest.mark.parametrize(("importance", "message"), [
    ({"a": 1, "zz": 2}, r"importance names \['zz'\]"),
    ({"a": 1}, r"importance gives no number for \['b'\]"),
    ({"a": 1, "b": 3}, r"importance of 'b' must be an integer from 1 .* to 2; got 3"),
    ({"a": True, "b": 2}, r"importance of 'a' must be an integer"),
])
def test_importance_is_checked_alike_in_the_call_and_in_a_spec(tmp_path, importance, message):
    """The argument and the spec key take the same numbers and refuse the same ones, in the same words."""
    from incrowd.publishing import load_spec

    data = pd.DataFrame({"a": [1, 2, 3, 4], "b": [1, 1, 2, 2]})
    with pytest.raises(ParameterError, match=message):
        local_suppression(data, ["a", "b"], 2, importance=importance)
    table = ", ".join(f"{name} = {str(value).lower()}" for name, value in importance.items())
    spec = tmp_path / "release.toml"
    spec.write_text(f'[privacy]\nk = 2\nsuppression = "cells"\nimportance = {{ {table} }}\n'
                    '[columns]\na = "categorical"\nb = "categorical"\n')
    with pytest.raises(ParameterError, match=message):
        load_spec(spec)


def test_limit_and_bad_arguments_are_one_clear_error():
    data = pd.DataFrame({"a": [1, 2, 3, 4], "b": [1, 1, 2, 2]})
    with pytest.raises(ParameterError, match="limit of 1 cells"):
        local_suppression(data, ["a", "b"], 2, limit=1)
    with pytest.raises(ParameterError, match="missing_matches"):
        local_suppression(data, ["a"], 2, missing_matches="some")
    with pytest.raises(ParameterError, match="importance of 'a'"):
        local_suppression(data, ["a", "b"], 2, importance={"a": 3, "b": 1})
    with pytest.raises(IncrowdError, match="'c'"):
        local_suppression(data, ["a", "c"], 2)
    with pytest.raises(IncrowdError, match="only 4 rows"):
        local_suppression(data, ["a"], 5)


def test_fewer_cells_than_sdcmicro_on_testdata():
    ref = json.loads((DATA / "sdcmicro_local_suppression.json").read_text(encoding="utf-8"))
    frame = pd.read_csv(DATA / "sdcmicro_testdata_risk.csv.gz", comment="#")[TESTDATA_KEYS]
    for entry in ref["testdata"]:
        importance = entry["importance"] or None
        res = local_suppression(frame, TESTDATA_KEYS, entry["k"], importance=importance)
        assert match_counts(res.table, TESTDATA_KEYS, missing_matches="any").min() >= entry["k"]
        assert res.total < entry["sdcmicro_cells"], entry


# ---------------------------------------------------------------------------------------------
# [privacy] suppression = "cells" through incrowd publish


def _small(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    n = 60
    frame = pd.DataFrame({
        "id": range(n), "sex": rng.choice(["f", "m"], n),
        "region": rng.choice(list("abcde"), n, p=[.4, .3, .2, .05, .05]),
        "job": rng.choice(["x", "y", "z", "w"], n, p=[.5, .3, .15, .05]),
        "age": rng.integers(20, 70, n), "income": rng.integers(1, 5, n)})
    path = tmp_path / "small.csv"
    frame.to_csv(path, index=False)
    return path


SPEC = """[privacy]
k = 3
max_suppression = "50%"
suppression = "cells"
{extra}
[columns]
id = "identifier"
sex = "categorical"
region = "categorical"
job = "categorical"
{more}
"""


def _read_written(path: Path) -> pd.DataFrame:
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    # the file's own text: an empty field is the blank
    return pd.DataFrame(rows[1:], columns=rows[0]).replace("", np.nan)


@pytest.mark.parametrize("missing_matches,more", [("any", ""), ("itself", 'age = "numeric"')])
def test_publish_cells_verified_on_the_written_file(tmp_path, missing_matches, more):
    data = _small(tmp_path)
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.format(extra=f'missing_matches = "{missing_matches}"\nimportance = {{ sex = 1, region = 2, '
                                      'job = 3 }', more=more), encoding="utf-8")
    out = tmp_path / "out.csv"
    done = CliRunner().invoke(app, ["publish", str(data), "--spec", str(spec), "-o", str(out), "--json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["suppression"] == "cells" and report["suppressed"] == 0
    assert report["verification"]["verified_on"] == "written file"
    written = _read_written(out)
    assert written.shape[0] == 60
    qis = ["sex", "region", "job"] + (["age"] if more else [])
    blanks = int(written[["sex", "region", "job"]].isna().sum().sum())
    assert blanks == sum(report["suppressed_cells"].values()) > 0
    assert match_counts(written, qis, missing_matches=missing_matches).min() >= 3
    if missing_matches == "any":
        # the wildcard release is not k-anonymous when a blank is a value of its own: the
        # promise must be verified with the meaning it was made with
        assert match_counts(written, qis, missing_matches="itself").min() < 3
        assert report["verification"]["promise"]["missing_matches"] == "any"


@pytest.mark.parametrize("extra,more,needle", [
    ('suppression = "columns"', "", "suppression must be one of"),
    ('missing_matches = "any"', 'age = "numeric"', "needs every quasi-identifier categorical"),
    ("importance = { sex = 1, region = 2 }", "", "no number for ['job']"),
    ("max_suppressed_cells = 1", "", "max_suppressed_cells=1"),
])
def test_publish_cells_refuses_with_one_line(tmp_path, extra, more, needle):
    data = _small(tmp_path)
    spec = tmp_path / "spec.toml"
    text = SPEC.format(extra=extra, more=more)
    if extra.startswith("suppression"):
        text = text.replace('suppression = "cells"\n', "", 1)
    spec.write_text(text, encoding="utf-8")
    out = tmp_path / "out.csv"
    done = CliRunner().invoke(app, ["publish", str(data), "--spec", str(spec), "-o", str(out)])
    assert done.exit_code == 2, done.output
    assert needle in done.output and "Traceback" not in done.output
    assert not out.exists()


def test_written_file_verifier_uses_the_promised_meaning_of_missing():
    from incrowd.io._written import Promise, verify_frame
    from incrowd.privacy import KAnonymity, ReleaseCheck

    table = pd.DataFrame({"a": ["x", "", "y", "y"], "b": ["1", "1", "2", "2"]})
    # row 0 matches row 1 only through the blank: 2 matches with the wildcard, 1 without
    assert verify_frame(table, Promise(("a", "b"), ReleaseCheck((KAnonymity(2),), missing_matches="any")), what="t")["k_anonymity"]["ok"]
    with pytest.raises(VerificationError, match="not 2-anonymous"):
        verify_frame(table, Promise(("a", "b"), ReleaseCheck((KAnonymity(2),))), what="t")
    with pytest.raises(VerificationError, match="matching any value: data row"):
        verify_frame(table, Promise(("a", "b"), ReleaseCheck((KAnonymity(3),), missing_matches="any")), what="t")
