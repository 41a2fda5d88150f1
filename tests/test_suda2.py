"""SUDA2 (minimal sample uniques, SUDA and DIS scores) against a brute force and sdcMicro 5.8.0."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd.exceptions import ParameterError
from incrowd.reporting._suda2 import msu_counts, suda2

DATA = Path(__file__).parent / "data"


def brute_msus(rows: list[tuple]) -> list[list[int]]:
    """MSU sizes of each record by the definition, over every subset (None = missing: it matches
    nothing, and a record is never unique through a variable it lacks)."""
    n, m = len(rows), len(rows[0])
    unique = {}
    for k in range(0, m + 1):
        for subset in itertools.combinations(range(m), k):
            seen = Counter(tuple(row[j] for j in subset) for row in rows if all(row[j] is not None for j in subset))
            for r, row in enumerate(rows):
                key = tuple(row[j] for j in subset)
                unique[r, subset] = None not in key and seen[key] == 1
    out = [[] for _ in range(n)]
    for r in range(n):
        for k in range(1, m + 1):
            for subset in itertools.combinations(range(m), k):
                if unique[r, subset] and not any(unique[r, t] for t in itertools.combinations(subset, k - 1)):
                    out[r].append(k)
    return out


def brute_scores(rows: list[tuple]) -> np.ndarray:
    """Elliot et al.'s SUDA score: (M - size)! per MSU, M at least 3 as in sdcMicro."""
    m = max(len(rows[0]), 3)
    return np.array([sum(math.factorial(m - k) for k in sizes) for sizes in brute_msus(rows)], dtype=float)


def _frame(rows):
    return pd.DataFrame([[np.nan if v is None else v for v in row] for row in rows],
                        columns=[f"k{j}" for j in range(len(rows[0]))])


def _tables(missing: bool):
    cell = st.integers(1, 3)
    if missing:
        cell = st.one_of(cell, cell, st.none())
    return st.integers(1, 6).flatmap(
        lambda m: st.lists(st.tuples(*[cell] * m), min_size=1, max_size=14))


@settings(max_examples=40, deadline=None)
@given(_tables(missing=False))
def test_suda2_scores_equal_brute_force_msu_enumeration(rows):
    score, dis = suda2(_frame(rows))
    assert np.array_equal(score, brute_scores(rows))
    # sdcMicro's DIS is NaN where its count of uniques (those alone in a hash bucket) is 0
    assert np.all(np.isnan(dis) | ((dis > 0) & (dis <= 1)) | ((dis == 0) & (score == 0)))
    assert np.all(dis[score == 0] == 0)


@settings(max_examples=40, deadline=None)
@given(_tables(missing=True))
def test_suda2_with_missing_values_equals_brute_force(rows):
    score, _ = suda2(_frame(rows))
    assert np.array_equal(score, brute_scores(rows))


@settings(max_examples=40, deadline=None)
@given(_tables(missing=True))
def test_msu_counts_per_size_equal_brute_force(rows):
    frame = _frame(rows)
    codes = np.column_stack([pd.factorize(frame[c])[0] for c in frame.columns]).astype(np.int32)
    counts = msu_counts(codes)
    expected = np.zeros_like(counts)
    for r, sizes in enumerate(brute_msus(rows)):
        for k in sizes:
            expected[r, k - 1] += 1
    assert np.array_equal(counts, expected)


def test_suda2_larger_random_tables_equal_brute_force():
    """Groups large enough that the search follows them without looking for a record that can
    still have an MSU below."""
    rng = np.random.default_rng(7)
    for m, n in ((5, 80), (6, 60), (7, 40)):
        cells = rng.integers(1, 4, (n, m)).tolist()
        rows = [tuple(None if rng.random() < 0.08 else v for v in row) for row in cells]
        score, _ = suda2(_frame(rows))
        assert np.array_equal(score, brute_scores(rows))


def test_suda2_small_example_by_hand():
    # sdcMicro's own example. Record 0 is the only one with a=2: one MSU {a} of size 1, worth
    # (3 - 1)! = 2. Record 1 is the only one with b=3 and with c=6: {b} and {c}, 2 + 2. Record 2
    # shares a with record 1 and (b, c) with record 0, but (a, b) and (a, c) are its alone:
    # two MSUs of size 2, worth (3 - 2)! = 1 each.
    keys = pd.DataFrame({"a": [2, 1, 1], "b": [0, 3, 0], "c": [0, 6, 0]})
    score, _ = suda2(keys)
    assert score.tolist() == [2.0, 4.0, 2.0]


def test_suda2_scores_do_not_depend_on_column_order_or_value_labels():
    rng = np.random.default_rng(3)
    keys = pd.DataFrame(rng.integers(0, 4, (300, 5)), columns=list("abcde"))
    score, _ = suda2(keys)
    shuffled = keys[["d", "b", "e", "a", "c"]].astype(str).radd("v")
    assert np.array_equal(suda2(shuffled)[0], score)


def _peer(case: str) -> pd.DataFrame:
    return pd.read_csv(DATA / f"sdcmicro_suda2_{case}.csv.gz", comment="#", keep_default_na=False,
                       na_values=[""])


@pytest.mark.parametrize("case", ["testdata", "testdata_na", "testdata_two_keys", "adult"])
def test_suda2_equals_sdcmicro(case):
    """sdcMicro 5.8.0's suda2 on its testdata (seven keys; with missing values; two keys) and on
    4,000 Adult rows with eight keys: every score and DIS score to 1e-9."""
    peer = _peer(case)
    score, dis = suda2(peer.drop(columns=["score", "dis_score"]))
    assert (score > 0).sum() > 0
    np.testing.assert_allclose(score, peer["score"].to_numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(dis, peer["dis_score"].to_numpy(), rtol=0, atol=1e-9)


def test_suda2_missing_code_is_missing_like_nan():
    peer = _peer("testdata_na")
    keys = peer.drop(columns=["score", "dis_score"])
    coded = keys.fillna(-999).astype(np.int64)
    score, dis = suda2(coded, missing=-999)
    np.testing.assert_allclose(score, peer["score"].to_numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(dis, peer["dis_score"].to_numpy(), rtol=0, atol=1e-9)


def test_suda2_text_missing_code():
    keys = pd.DataFrame({"a": ["x", "?", "y", "y"], "b": ["p", "p", "?", "q"], "c": ["1", "1", "1", "1"]})
    by_code, _ = suda2(keys, missing="?")
    by_nan, _ = suda2(keys.replace("?", np.nan))
    assert np.array_equal(by_code, by_nan)
    assert np.array_equal(by_code, brute_scores([("x", "p", "1"), (None, "p", "1"), ("y", None, "1"), ("y", "q", "1")]))


def test_suda2_dis_fraction_changes_only_dis():
    peer = _peer("testdata")
    keys = peer.drop(columns=["score", "dis_score"])
    s1, d1 = suda2(keys)
    s2, d2 = suda2(keys, dis_fraction=0.1)
    assert np.array_equal(s1, s2)
    assert np.all(d2[s2 > 0] > d1[s1 > 0])


def test_suda2_edge_cases():
    score, dis = suda2(pd.DataFrame({"a": [], "b": []}))
    assert score.shape == (0,) and dis.shape == (0,)
    score, dis = suda2(pd.DataFrame({"a": [1], "b": [2], "c": [3]}))  # a lone record: no MSU
    assert score.tolist() == [0.0] and dis.tolist() == [0.0]
    score, dis = suda2(pd.DataFrame({"a": [1, 1, 2, 2], "b": [3, 3, 4, 4]}))  # no uniques
    assert score.tolist() == [0.0] * 4 and dis.tolist() == [0.0] * 4


@pytest.mark.parametrize("kwargs, word", [
    ({"dis_fraction": 0}, "dis_fraction"), ({"dis_fraction": 1.5}, "dis_fraction"),
    ({"dis_fraction": "x"}, "dis_fraction"),
])
def test_suda2_bad_parameters_name_the_parameter(kwargs, word):
    with pytest.raises(ParameterError, match=word):
        suda2(pd.DataFrame({"a": [1, 2]}), **kwargs)


def test_suda2_bad_keys():
    with pytest.raises(ParameterError, match="keys"):
        suda2(np.zeros((3, 3)))
    with pytest.raises(ParameterError, match="keys"):
        suda2(pd.DataFrame(index=range(3)))


def test_suda2_reads_categories_booleans_and_fractions_as_values():
    rows = [("a", True, 1.5), ("a", False, 1.5), ("b", True, 1.7), ("b", True, 1.5), ("a", True, 1.7)]
    keys = pd.DataFrame(rows, columns=["c", "b", "x"])
    keys["c"] = keys["c"].astype("category")
    score, _ = suda2(keys)
    assert np.array_equal(score, brute_scores(rows))
    assert score.sum() > 0


def brute_ihsn_scores(rows: list[tuple]) -> np.ndarray:
    """sdcMicro's original_scores = FALSE (the IHSN implementation): an MSU of size k among M
    keys weighs (2^(M-k) - 1) k! (M-k)! / M!, M at least 3 (Suda2.h, g_ab)."""
    m = max(len(rows[0]), 3)
    weight = {k: (2 ** (m - k) - 1) * math.factorial(k) * math.factorial(m - k) / math.factorial(m)
              for k in range(1, m + 1)}
    return np.array([sum(weight[k] for k in sizes) for sizes in brute_msus(rows)], dtype=float)


@settings(max_examples=30, deadline=None)
@given(_tables(missing=True))
def test_suda2_ihsn_scores_equal_brute_force(rows):
    score, dis = suda2(_frame(rows), original_scores=False)
    np.testing.assert_allclose(score, brute_ihsn_scores(rows), rtol=1e-12, atol=0)
    assert np.all(dis[score == 0] == 0)


@pytest.mark.parametrize("case", ["testdata_ihsn", "testdata_na_ihsn"])
def test_suda2_original_scores_false_equals_sdcmicro(case):
    """sdcMicro 5.8.0's suda2(original_scores = FALSE) on testdata (seven keys, and with missing
    values): every score and DIS score to 1e-9, directly and through incrowd.risk."""
    import incrowd

    peer = _peer(case)
    keys = peer.drop(columns=["score", "dis_score"])
    score, dis = suda2(keys, original_scores=False)
    np.testing.assert_allclose(score, peer["score"].to_numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(dis, peer["dis_score"].to_numpy(), rtol=0, atol=1e-9)
    # the default weights differ: the fixture tells the two apart
    assert not np.allclose(suda2(keys)[0], peer["score"].to_numpy())
    records = incrowd.risk(keys, list(keys.columns), suda_original_scores=False).records
    np.testing.assert_allclose(records["suda_score"], peer["score"].to_numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(records["suda_dis_score"], peer["dis_score"].to_numpy(), rtol=0, atol=1e-9)


def test_original_scores_must_be_a_bool():
    import incrowd

    keys = pd.DataFrame({"a": [1, 2, 2], "b": [1, 1, 2]})
    with pytest.raises(ParameterError, match="original_scores must be true or false"):
        suda2(keys, original_scores="no")
    with pytest.raises(ParameterError, match="suda_original_scores must be true or false"):
        incrowd.risk(keys, ["a", "b"], suda_original_scores=1)


def test_the_cli_takes_the_ihsn_scores(tmp_path):
    """``incrowd risk --suda-scores ihsn`` gives sdcMicro's suda2(original_scores = FALSE) scores
    for the riskiest records it prints, and says which weights it used."""
    import json

    from typer.testing import CliRunner

    from incrowd.cli import app

    peer = _peer("testdata_ihsn")
    keys = peer.drop(columns=["score", "dis_score"])
    keys.to_csv(tmp_path / "keys.csv", index=False)
    qi = ",".join(keys.columns)
    answers = {}
    for scores in ("original", "ihsn"):
        done = CliRunner().invoke(app, ["risk", str(tmp_path / "keys.csv"), "--qi", qi, "--json",
                                        "--suda-scores", scores])
        assert done.exit_code == 0, done.output
        answers[scores] = json.loads(done.output)
        assert answers[scores]["about"]["suda_scores"] == scores
    riskiest = answers["ihsn"]["riskiest"]
    assert riskiest
    for record in riskiest:
        assert record["suda_score"] == pytest.approx(peer["score"].iloc[record["row"] - 1], abs=1e-9)
    assert [r["suda_score"] for r in riskiest] != [r["suda_score"] for r in answers["original"]["riskiest"]]
    done = CliRunner().invoke(app, ["risk", str(tmp_path / "keys.csv"), "--qi", qi, "--suda-scores", "dis"])
    assert done.exit_code == 2 and "--suda-scores must be 'original' or 'ihsn'" in done.output



