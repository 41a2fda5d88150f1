"""A written part's published classes (what the whole release's k, l and t are verified from):
cells compared as the text a reader sees, counted on integer codes."""

from __future__ import annotations

from decimal import Decimal
from unittest import mock

import numpy as np
import pandas as pd
import pytest

from incrowd.publishing import written_classes


def _as_text(table: pd.DataFrame, qis: list[str], sensitive: dict) -> tuple[pd.DataFrame, dict]:
    """The definition: every cell written as text (missing: None), classes of equal text."""
    from incrowd.publishing._prepare import _sensitive_of

    keys = table[qis].astype(str).where(table[qis].notna(), None).astype(object)
    sizes = keys.groupby(qis, dropna=False, sort=False).size().rename("rows").reset_index()
    values = {}
    for name, whole in sensitive.items():
        pairs = keys.assign(__value__=_sensitive_of(table[name].reset_index(drop=True), whole).codes)
        values[name] = pairs.groupby([*qis, "__value__"], dropna=False, sort=False).size().rename("rows") \
            .reset_index()
    return sizes, values


def _sorted(frame: pd.DataFrame) -> list:
    # groupby gives a missing key as NaN, written_classes as None: both are the missing class
    return sorted(tuple("<missing>" if v is None or v != v else v for v in row)
                  for row in frame.astype(object).itertuples(index=False))


def _tricky(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    floats = rng.choice([0.0, -0.0, 1.5, np.nan, 37.25, 1e16], n)
    mixed = np.array([1, 1.0, "1", None, Decimal("1.0"), Decimal("1.00"), True, "x "], dtype=object)
    return pd.DataFrame({
        "mean": floats,
        "band": pd.Categorical(rng.choice(["20-29", "30-39", None], n)),
        "codes": pd.Categorical(rng.choice(3, n)).rename_categories([1, "1", 2]),
        "mixed": mixed[rng.integers(0, mixed.size, n)],
        "text": pd.array(rng.choice(["a", "b", None], n), dtype="string"),
        "whole": rng.integers(0, 3, n),
        "flag": rng.integers(0, 2, n).astype(bool),
        "s": rng.choice(["<=50K", ">50K"], n),
    })


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_classes_are_the_classes_of_the_cells_as_text(seed):
    table = _tricky(400, seed)
    whole = {"s": (["<=50K", ">50K"], False, np.array([200, 200]), False)}
    for qis in (["mean"], ["band", "codes"], ["mixed"], ["text", "whole", "flag"], list(table.columns[:-1]), []):
        got = written_classes(table, qis, whole)
        want = _as_text(table, qis, whole) if qis else \
            (pd.DataFrame({"rows": [len(table)]}), {"s": table.assign(__value__=(table["s"] == ">50K").astype(int))
                                                    .groupby("__value__").size().rename("rows").reset_index()})
        assert _sorted(got[0]) == _sorted(want[0]), qis
        assert _sorted(got[1]["s"]) == _sorted(want[1]["s"]), qis
    # 0.0 and -0.0 read apart, as do 1 and 1.0 and the categories 1 and "1" read alike
    sizes = written_classes(table, ["mean"], {})[0]
    assert {"0.0", "-0.0"} <= set(sizes["mean"])
    assert set(written_classes(table, ["codes"], {})[0]["codes"]) == {"1", "2"}
    assert {"1", "1.0", "True"} <= set(written_classes(table, ["mixed"], {})[0]["mixed"])


def test_each_distinct_value_is_written_as_text_once():
    # a written part of a large release holds a few thousand distinct values in 250,000 rows:
    # writing every cell as text to count its classes took a tenth of its release task
    rng = np.random.default_rng(3)
    n = 20000
    table = pd.DataFrame({"age": rng.integers(0, 50, n) + 0.5, "band": rng.choice(["a", "b", "c"], n),
                          "s": rng.choice(["x", "y"], n)})
    as_text = []
    series_astype, frame_astype = pd.Series.astype, pd.DataFrame.astype

    def counting(real):
        def astype(self, dtype, *args, **kwargs):
            if dtype is str:
                as_text.append(self.size)
            return real(self, dtype, *args, **kwargs)
        return astype

    with mock.patch.object(pd.Series, "astype", counting(series_astype)), \
            mock.patch.object(pd.DataFrame, "astype", counting(frame_astype)):
        sizes, values = written_classes(table, ["age", "band"], {"s": (["x", "y"], False, np.array([1, 1]), False)})
    assert int(sizes["rows"].sum()) == n and len(sizes) == 150
    assert int(values["s"]["rows"].sum()) == n
    assert sum(as_text) <= 50 + 3
