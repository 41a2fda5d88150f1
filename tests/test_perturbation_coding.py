"""Top and bottom coding and rounding on a table and on a column: every result checked against a
brute force of the definition (sdcMicro's ``topBotCoding``, R's ``base * round(x / base)``, cell
by cell in doubles) on integer, float, nullable-integer and missing-valued columns, with the type
each column is written in, the count of changed cells and the caller's frame untouched."""

from __future__ import annotations

import math
import struct

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd.perturbation import perturb, perturb_values

#: a NaN carrying a payload, as a user-missing code rides in a float column
PAYLOAD_NAN = struct.unpack("<d", struct.pack("<Q", 0x7FF8_0000_0000_0009))[0]
DTYPES = ["int64", "int32", "uint8", "float64", "float32", "Int64", "float64 with missing"]


def _column(values: list[int], dtype: str, missing: list[bool]) -> pd.Series:
    if dtype == "Int64":
        return pd.Series(pd.array([None if m else v for v, m in zip(values, missing)], dtype="Int64"))
    if dtype == "float64 with missing":
        x = np.array(values, np.float64) / 4   # quarters: halves and fractions to round
        x[np.array(missing, bool)] = PAYLOAD_NAN
        return pd.Series(x)
    if dtype.startswith("float"):
        return pd.Series(np.array(values, np.float64) / 4, dtype=dtype)
    info = np.iinfo(dtype)
    return pd.Series(np.clip(values, info.min, info.max).astype(dtype))


def _brute(column: pd.Series, step: dict) -> tuple[np.ndarray, int, int]:
    """The definition, one cell at a time in doubles: the new values in the type the step writes
    them (an integer column stays integer while every value is a whole number its type holds; a
    nullable one is written as float64), the cells changed and the cells beyond the limit."""
    old = [math.nan if pd.isna(v) else float(v) for v in column]
    new, beyond = [], 0
    for v in old:
        if math.isnan(v):
            new.append(v)
        elif step["method"] == "round":
            base = float(step["base"])
            q = v / base   # Python's round: a half to the even number; a zero keeps q's sign, as in R
            new.append(base * math.copysign(float(round(q)), q))
        elif (v > step["value"]) if step["method"] == "top_code" else (v < step["value"]):
            beyond += 1
            new.append(float(step["value"] if step.get("replacement") is None else step["replacement"]))
        else:
            new.append(v)
    dtype = column.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iu" and all(
            v.is_integer() and np.iinfo(dtype).min <= v <= np.iinfo(dtype).max for v in new):
        out = np.array([int(v) for v in new], dtype)
    else:
        floats = isinstance(dtype, np.dtype) and dtype.kind == "f"
        out = np.array(new, dtype if floats else np.float64)   # float32 stays float32
        if floats:
            gone = column.isna().to_numpy()
            out[gone] = column.to_numpy()[gone]   # a missing cell keeps its own NaN, bit for bit
    # a cell changed where its written value differs (a cell missing on both sides did not)
    changed = sum(1 for a, b in zip(old, map(float, out)) if not (math.isnan(a) and math.isnan(b)) and a != b)
    return out, changed, beyond


def _same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


steps = st.one_of(
    st.fixed_dictionaries({"method": st.sampled_from(["top_code", "bottom_code"]),
                           "value": st.one_of(st.integers(-300, 300), st.integers(-1200, 1200).map(lambda v: v / 4)),
                           "replacement": st.one_of(st.none(), st.integers(-400, 400),
                                                    st.integers(-1600, 1600).map(lambda v: v / 4))}),
    st.fixed_dictionaries({"method": st.just("round"),
                           "base": st.one_of(st.integers(1, 50), st.sampled_from([0.5, 0.25, 2.5, 7.3]))}),
)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.integers(-300, 300), min_size=0, max_size=40), dtype=st.sampled_from(DTYPES),
       step=steps, data=st.data())
def test_coding_and_rounding_equal_the_definition_in_every_column_type(values, dtype, step, data):
    missing = data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values)))
    column = _column(values, dtype, missing)
    frame = pd.DataFrame({"key": np.arange(len(values)), "x": column.array, "label": ["a"] * len(values)},
                         index=pd.RangeIndex(10, 10 + len(values)))
    frame.attrs["note"] = "kept"
    before = frame.copy(deep=True)
    before_bytes = frame["x"].to_numpy(copy=True)
    expected, changed, beyond = _brute(column, step)

    result = perturb(frame, [{"columns": ["x"], **step}])

    got = result.table["x"].to_numpy()
    assert _same_bytes(got, expected), (got, expected)
    assert result.steps[0].cells_changed == changed
    if step["method"] != "round":
        assert result.steps[0].details[f"{step['method'].split('_')[0]}_coded"] == beyond
    assert list(result.table.columns) == ["key", "x", "label"]
    assert result.table.index.equals(frame.index) and result.table.attrs == {"note": "kept"}
    assert result.table["key"].equals(before["key"]) and result.table["label"].equals(before["label"])
    # the caller's frame as it was, cell for cell and bit for bit
    pd.testing.assert_frame_equal(frame, before)
    assert frame["x"].dtype == before["x"].dtype
    assert _same_bytes(np.asarray(frame["x"].to_numpy()), np.asarray(before_bytes))

    # a column given alone: the same values, of the kind given
    params = {k: v for k, v in step.items() if k != "method"}
    alone = perturb_values(column.to_numpy() if isinstance(column.dtype, np.dtype) else column,
                           step["method"], **params)
    assert _same_bytes(np.asarray(alone.to_numpy() if isinstance(alone, pd.Series) else alone), expected)


def test_an_integer_column_past_2_to_the_53_keeps_every_value_coding_leaves():
    # a float64 round trip would turn 2**53 + 1 into 2**53: an identifier-sized amount or a
    # count in cents is an exact integer, and only the cells beyond the limit may change
    big = np.array([2**53 + 1, 2**62 + 3, 5, -(2**60) - 1], np.int64)
    frame = pd.DataFrame({"x": big})
    out = perturb(frame, [{"columns": ["x"], "method": "bottom_code", "value": 10}])
    assert out.table["x"].dtype == np.int64
    assert out.table["x"].tolist() == [2**53 + 1, 2**62 + 3, 10, 10]
    assert out.steps[0].cells_changed == 2
    top = perturb_values(big, "top_code", value=2**62, replacement=2**62)
    assert top.dtype == np.int64 and top.tolist() == [2**53 + 1, 2**62, 5, -(2**60) - 1]
    assert frame["x"].tolist() == big.tolist()


def test_a_column_no_cell_of_which_changes_is_not_copied():
    # top coding above the largest value changes nothing: the new table shares that column with
    # the input (pandas copies on write, so neither side can change the other's)
    frame = pd.DataFrame({"x": np.arange(1_000, dtype=np.float64), "y": np.arange(1_000)})
    out = perturb(frame, [{"columns": ["x", "y"], "method": "top_code", "value": 5_000}])
    assert out.steps[0].cells_changed == 0 and out.steps[0].details["top_coded"] == 0
    assert np.shares_memory(out.table["x"].to_numpy(), frame["x"].to_numpy())
    assert np.shares_memory(out.table["y"].to_numpy(), frame["y"].to_numpy())
    out.table.loc[0, "x"] = -1.0
    assert frame.loc[0, "x"] == 0.0


def test_rounding_equals_numpys_arithmetic_bit_for_bit_at_the_edges():
    # halves to the even multiple, signed zeros, 2**52 and past it, infinities and a NaN's payload:
    # the one-pass kernel against numpy's division, rint and product, cell for cell
    rng = np.random.default_rng(7)
    edges = [-0.3, -0.0, 0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 2.0**52, 2.0**52 - 0.5, -(2.0**52) + 0.5, 2.0**53 + 2,
             4503599627370495.5, 1e300, -1e300, np.inf, -np.inf, PAYLOAD_NAN, 5e-324]
    x = np.concatenate([edges, rng.normal(0, 1e6, 20_000), rng.integers(-10**6, 10**6, 20_000) + 0.5,
                        rng.integers(-10**5, 10**5, 20_000) * 1000.0 + 500.0])
    for base in [1, 1000, 0.25, 7.3, 3, 1e-3]:
        got = perturb_values(x, "round", base=base)
        want = np.multiply(float(base), np.round(np.divide(x, float(base))))
        want[np.isnan(x)] = x[np.isnan(x)]
        assert got.tobytes() == want.tobytes(), base
        whole = np.concatenate([[0, 1, -1, 2**62, -(2**63), 2**63 - 1, 499, 500, 1500, -500], rng.integers(-10**9, 10**9, 5_000)])
        ints = perturb_values(whole, "round", base=base)
        floats = np.multiply(float(base), np.round(np.divide(whole.astype(np.float64), float(base))))
        if float(base).is_integer() and floats.min() >= -(2**63) and floats.max() < 2**63:
            assert ints.dtype == np.int64 and ints.tolist() == floats.astype(np.int64).tolist(), base
        else:
            assert ints.dtype == np.float64 and ints.tobytes() == floats.tobytes(), base
