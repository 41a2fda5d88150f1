"""Aligning a release with its original: by position, by the kept rows, or by the columns that
pass through; and the clear refusals when no alignment is possible."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from incrowd.reporting._align import align
from incrowd.exceptions import DataError


def _original():
    return pd.DataFrame({"id": [f"p{i}" for i in range(6)], "age": [20, 21, 30, 31, 40, 41],
                         "sex": ["m", "f", "m", "f", "m", "f"], "note": list("abcdef")})


def test_same_rows_align_by_position_and_identifiers_are_left_out():
    original = _original()
    release = original.drop(columns=["id"]).assign(age=[20.5, 20.5, 30.5, 30.5, 40.5, 40.5])
    a = align(original, release, ["age", "sex"], identifiers=["id"])
    assert a.kept.tolist() == list(range(6))
    assert a.numeric == ["age"] and a.categorical == ["sex"]
    assert "id" not in a.original.columns
    assert any("row i" in text for text in a.assumptions)


def test_fewer_rows_are_matched_in_order_on_the_columns_that_pass_through():
    original = _original()
    release = original.drop(columns=["id"]).iloc[[0, 2, 3, 5]].reset_index(drop=True)
    a = align(original, release, ["age", "sex"], identifiers=["id"])
    assert a.kept.tolist() == [0, 2, 3, 5]
    assert a.suppressed.tolist() == [False, True, False, False, True, False]


def test_kept_rows_are_taken_as_given_and_checked():
    original = _original()
    release = original.iloc[[1, 4]].reset_index(drop=True)
    assert align(original, release, ["age"], kept_rows=[1, 4]).kept.tolist() == [1, 4]
    with pytest.raises(DataError, match="kept_rows"):
        align(original, release, ["age"], kept_rows=[4, 1])


@pytest.mark.parametrize("make, words", [
    (lambda o: o.iloc[:3].assign(note=["x", "y", "z"]), "do not align"),
    (lambda o: pd.concat([o, o]), "more rows"),
    (lambda o: o[["age", "sex"]].iloc[:4], "no column besides the quasi-identifiers"),
])
def test_no_alignment_is_one_clear_error(make, words):
    original = _original()
    with pytest.raises(DataError, match=words):
        align(original, make(original), ["age", "sex"])


def test_unknown_columns_and_text_where_numbers_are_needed_are_named():
    original = _original()
    release = original.assign(age=["20-29"] * 2 + ["30-39"] * 2 + ["40-49"] * 2)
    with pytest.raises(DataError, match="'weight'"):
        align(original, release, ["age", "weight"])
    with pytest.raises(DataError, match="'age' is not numeric in the release"):
        align(original, release, ["age", "sex"], numeric=["age"])
    a = align(original, release, ["age", "sex"])  # not forced: measured as categorical, and said
    assert a.categorical == ["age", "sex"]
    assert any("generalized" in text for text in a.assumptions)
    assert np.array_equal(a.kept, np.arange(6))
    # named categorical by the caller (a hierarchy, or a spec's roles): no guess, nothing said
    coded = original.assign(sex=[1, 2, 1, 2, 1, 2])
    for named in ({"categorical": ["sex"]}, {"numeric": ["age"]}):
        b = align(coded, coded.assign(sex=["1", "2", "1", "2", "1", "2"]), ["age", "sex"], **named)
        assert b.categorical == ["sex"] and not any("generalized" in text for text in b.assumptions), named
    assert any("generalized" in text
               for text in align(coded, coded.assign(sex=["1", "2", "1", "2", "1", "*"]), ["age", "sex"]).assumptions)
