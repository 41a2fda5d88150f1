"""The report's measures on codes give what their row-by-row definitions give.

The report spells and compares categorical values once per distinct value, parses a column of
numbers written as text once per distinct text, groups the release by its quasi-identifiers
once for every measure and queries the k-d tree once per distinct masked record. Each is
checked here against a plain recomputation, row by row, on small random data: missing cells,
withheld rows, unchanged columns, suppressed cells and a labelled column of codes included.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd.generalization._hierarchy import hierarchy_from_rows, value_labels
from incrowd.io import NA_VALUES, column_numbers
from incrowd.reporting._utility import categorical_utility, categorical_utility_of_release

TEXT = hierarchy_from_rows("c", [["a1", "A", "*"], ["a2", "A", "*"], ["a3", "A", "*"], ["b1", "B", "*"]],
                           "(test)")
CODES = hierarchy_from_rows("n", [["1", "low", "*"], ["2", "low", "*"], ["3", "high", "*"], ["4", "high", "*"],
                                  ["5", "high", "*"]], "(test)")
#: the labelled file's new codes of the generalized groups, as a release of codes writes them
GROUP_CODES = {"low": 10.0, "high": 11.0, "*": 12.0}
LABELS = {10.0: "low", 11.0: "high", 12.0: "*", 1.0: "one"}


def _spelled(column: pd.Series) -> list:
    """Each cell as a hierarchy file spells it (the column's spelling), None where missing."""
    present = ~column.isna().to_numpy()
    out = [None] * len(column)
    spelled = value_labels(column[present].reset_index(drop=True).infer_objects()) if present.any() else []
    for i, text in zip(np.flatnonzero(present), spelled):
        out[i] = str(text)
    return out


def _ancestor(h, leaf: str, level: int) -> tuple[str, int]:
    """(label of ``leaf``'s ancestor at ``level``, how many leaves it covers), by walking up."""
    leaves = [str(v) for v in h.labels[0]]

    def up(i: int) -> int:
        node = i
        for L in range(level):
            node = int(h.parents[L][node])
        return node

    node = up(leaves.index(leaf))
    return str(h.labels[level][node]), sum(up(j) == node for j in range(len(leaves)))


def _plain(original: pd.DataFrame, release: pd.DataFrame, hierarchies: dict, withheld: np.ndarray,
           labels: dict) -> dict:
    """categorical_utility's definitions, row by row."""
    published = [i for i in range(len(original)) if not withheld[i]]
    out: dict = {"changed_share": {}, "suppressed_cells": {}, "ncp": {}, "height": {}, "frequencies": {}}
    for name in release.columns:
        orig = _spelled(original[name].reset_index(drop=True))
        pub = [("*" if v is None else v) for v in _spelled(release[name].reset_index(drop=True))]
        same = [orig[i] == pub[i] or (orig[i] is None and release[name].isna().iloc[i]) for i in range(len(orig))]
        out["changed_share"][name] = (sum(not same[i] for i in published) / len(published)) if published else 0.0
        spelled_labels = {str(value_labels(pd.Series([c])).tolist()[0]): t for c, t in labels.get(name, {}).items()}
        # "*" is a suppressed cell, as a labelled file writes it too: a code labelled "*"
        out["suppressed_cells"][name] = sum(orig[i] is not None and "*" in (pub[i], spelled_labels.get(pub[i]))
                                            for i in published)
        before = Counter("(missing)" if v is None else v for v in orig)
        # a cell missing before and after is shown missing, not suppressed
        after = Counter("(missing)" if orig[i] is None and release[name].isna().iloc[i] else pub[i] for i in published)
        out["frequencies"][name] = {v: (before.get(v, 0), after.get(v, 0)) for v in set(before) | set(after)}
        rows = [i for i in published if orig[i] is not None]
        h = hierarchies.get(name)
        costs, heights = [], []
        for i in rows:
            if h is None:
                costs.append(0.0 if same[i] else (1.0 if pub[i] == "*" else None))
                continue
            label = spelled_labels.get(pub[i], pub[i])
            for level in range(h.depth):
                ancestor, covers = _ancestor(h, orig[i], level)
                if ancestor in (pub[i], label):
                    costs.append(covers / h.labels[0].size if covers > 1 else 0.0)
                    heights.append(level / h.max_level)
                    break
            else:
                assert "*" in (pub[i], label)
                costs.append(1.0)
                heights.append(1.0)
        unknown = any(c is None for c in costs)
        out["ncp"][name] = None if unknown or not rows else sum(costs) / len(rows)
        if h is not None:
            out["height"][name] = sum(heights) / len(rows) if rows else None
    return out


@st.composite
def _tables(draw):
    n = draw(st.integers(1, 30))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    leaves = ["a1", "a2", "a3", "b1"]
    c = [None if rng.random() < 0.15 else leaves[int(rng.integers(4))] for _ in range(n)]
    c_out = []
    for v in c:
        level = int(rng.integers(0, 4))  # 3: a missing (suppressed) cell
        c_out.append(None if level == 3 or (v is None and level == 0) else
                     (v if level == 0 else ("*" if level == 2 or v is None else _ancestor(TEXT, v, 1)[0])))
    u = [None if rng.random() < 0.2 else str(rng.choice(["x", "y", "z"])) for _ in range(n)]
    s = [str(rng.choice(["p", "q"])) for _ in range(n)]
    s_out = ["*" if rng.random() < 0.3 else v for v in s]
    codes = rng.integers(1, 6, size=n)
    code_out = []
    for v in codes:
        level = int(rng.integers(0, 3))
        code_out.append(float(v) if level == 0 else GROUP_CODES[_ancestor(CODES, str(v), level)[0]])
    original = pd.DataFrame({"c": pd.Series(c, dtype="str"), "u": pd.Series(u, dtype="str"), "s": s,
                             "n": codes.astype(np.int64)})
    release = pd.DataFrame({"c": pd.Series(c_out, dtype="str"), "u": pd.Series(u, dtype="str"), "s": s_out,
                            "n": np.asarray(code_out, dtype=np.float64)})
    withheld = rng.random(n) < draw(st.sampled_from([0.0, 0.2, 0.6]))
    return original, release, withheld


@settings(max_examples=60, deadline=None)
@given(_tables())
def test_categorical_utility_on_codes_equals_the_row_by_row_definition(tables):
    original, release, withheld = tables
    hierarchies = {"c": TEXT, "n": CODES}
    labels = {"n": LABELS}
    got = categorical_utility(original, release, hierarchies, withheld, value_labels=labels)
    plain = _plain(original, release, hierarchies, withheld, labels)
    for field in ("changed_share", "ncp", "height"):
        assert got[field].keys() == plain[field].keys()
        for name, value in plain[field].items():
            assert got[field][name] == (None if value is None else pytest.approx(value, abs=1e-12)), (field, name)
    assert got["suppressed_cells"] == plain["suppressed_cells"]
    for name, table in plain["frequencies"].items():
        shown = {row["value"]: (row["original"], row["release"]) for row in got["frequencies"][name]}
        assert shown == table
        totals = [sum(v) for v in shown.values()]
        assert totals == sorted(totals, reverse=True)
    # a column published unchanged: nothing changed, nothing lost
    if (~withheld & original["u"].notna().to_numpy()).any():
        assert got["changed_share"]["u"] == 0.0 and got["ncp"]["u"] == 0.0 and got["suppressed_cells"]["u"] == 0


@settings(max_examples=40, deadline=None)
@given(_tables())
def test_the_reports_release_of_published_rows_gives_the_same_figures(tables):
    # the report passes the published rows and their original rows, not a release with its
    # withheld rows filled in as missing objects (spelled row by row): the same figures
    original, release, withheld = tables
    kept = np.flatnonzero(~withheld)
    filled = release.astype(object)
    filled.loc[withheld, :] = None
    hierarchies = {"c": TEXT, "n": CODES}
    labels = {"n": LABELS}
    expected = categorical_utility(original, filled, hierarchies, withheld, value_labels=labels)
    got = categorical_utility_of_release(original, release.iloc[kept].reset_index(drop=True), kept, hierarchies,
                                         value_labels=labels)
    assert got == expected


def test_codes_of_a_labelled_file_meet_the_hierarchy_by_label_row_by_row():
    # an original read from a statistical file (value labels in its metadata) meets the
    # hierarchy cell by cell as before; a stray published value still names its data row
    from incrowd.exceptions import DataError

    original = pd.DataFrame({"n": [1.0, 2.0, 3.0, 5.0]})
    original.attrs["statfile"] = {"columns": {"n": {"value_labels": [[1.0, "one"], [2.0, "two"]]}}}
    release = pd.DataFrame({"n": [1.0, 10.0, 11.0, 12.0]})
    got = categorical_utility(original, release, {"n": CODES}, None, value_labels={"n": LABELS})
    assert got["ncp"]["n"] == pytest.approx((0 + 2 / 5 + 3 / 5 + 1) / 4)
    with pytest.raises(DataError, match="'n', data row 3"):
        categorical_utility(original, pd.DataFrame({"n": [1.0, 10.0, 10.0, 12.0]}), {"n": CODES}, None,
                            value_labels={"n": LABELS})


def test_float_codes_spell_as_their_column_does():
    # a column of whole numbers is spelled as integers, one with a fraction by repr; -0.0 and
    # 0.0 are one number to a hash but two spellings to repr
    original = pd.DataFrame({"f": [0.0, -0.0, 1.5, 0.0]})
    got = categorical_utility(original, original.copy(), None, None)
    rows = {r["value"]: r["original"] for r in got["frequencies"]["f"]}
    assert rows == {"0.0": 2, "-0.0": 1, "1.5": 1} and got["changed_share"]["f"] == 0.0
    whole = categorical_utility(pd.DataFrame({"f": [2.0, 3.0]}), pd.DataFrame({"f": [2.0, np.nan]}), None, None)
    assert {r["value"]: (r["original"], r["release"]) for r in whole["frequencies"]["f"]} == \
        {"2": (1, 1), "3": (1, 0), "*": (0, 1)}


# --- numbers written as text ---

_CELLS = st.sampled_from(["1", "2.5", " 3", "1e3", "-0", "-0.0", "x", "inf", "", "NA", "N/A", "?", None, "7", "007",
                          "9007199254740993", "99999999999999999999"])


def _whole_column(column: pd.Series):
    """(values, (first bad row, count) or None): the whole column parsed at once, row by row."""
    na = column.isna() | column.isin(NA_VALUES)
    values = pd.to_numeric(column.where(~na), errors="coerce")
    bad = np.flatnonzero((values.isna() & ~na).to_numpy())
    return values.to_numpy(dtype=np.float64, na_value=np.nan), ((int(bad[0]), bad.size) if bad.size else None)


@settings(max_examples=150, deadline=None)
@given(st.lists(_CELLS, min_size=1, max_size=25), st.sampled_from(["str", "object"]))
def test_text_parsed_once_per_distinct_text_equals_the_whole_column_parsed(cells, dtype):
    column = pd.Series(cells, dtype=dtype)
    values, bad = _whole_column(column)
    refused = []
    try:
        got = column_numbers(column, lambda pos, count: refused.append((pos, count)) or ValueError("refused"))
    except ValueError:
        assert refused == [bad]
        return
    assert bad is None
    assert np.array_equal(got, values, equal_nan=True)
    # the sign of a zero too ("-0" beside a missing cell is -0.0, alone 0)
    assert np.signbit(got).tolist() == np.signbit(values).tolist()


# --- one grouping of the release for every measure ---

@st.composite
def _releases(draw):
    n = draw(st.integers(1, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = pd.Series([None if rng.random() < 0.1 else str(rng.choice(["x", "y"])) for _ in range(n)], dtype="str")
    b = np.where(rng.random(n) < 0.1, np.nan, rng.integers(0, 3, n).astype(float))
    s = pd.Series([None if rng.random() < 0.1 else str(rng.choice(["lo", "mid", "hi"])) for _ in range(n)],
                  dtype="str")
    w = rng.integers(0, 4, n).astype(float)
    return pd.DataFrame({"a": a, "b": b, "s": s, "w": w})


@settings(max_examples=40, deadline=None)
@given(_releases(), st.sampled_from([0.05, 0.2, 0.5, 1.0]))
def test_measures_over_the_shared_classes_equal_their_own_grouping(release, t):
    from incrowd.privacy import attribute_disclosure_of_classes, t_closeness_of_classes, verify_t_closeness
    from incrowd.reporting._risk import attribute_disclosure, class_risk, class_risk_of_classes
    from incrowd.values import class_ids

    qis = ["a", "b"]
    # classes numbered differently (reversed) must give the same figures
    classes = class_ids(release[qis])
    renumbered = classes.max() - classes
    for sensitive in ("s", "w"):
        reference = release[sensitive].iloc[::-1].reset_index(drop=True)
        own = verify_t_closeness(release, qis, sensitive, t, reference=reference)
        for numbering in (classes, renumbered):
            shared = t_closeness_of_classes(release, numbering, sensitive, t, reference=reference)
            assert (shared.max_distance, shared.n_rows_in_far_classes, shared.n_classes, shared.ok) == \
                (own.max_distance, own.n_rows_in_far_classes, own.n_classes, own.ok)
    assert class_risk_of_classes(classes, k=3, threshold=0.3) == class_risk(release[qis], k=3, threshold=0.3)
    assert attribute_disclosure_of_classes(release, classes, ["s", "w"]) == \
        attribute_disclosure(release, qis, ["s", "w"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=40))
def test_first_rows_are_where_each_code_first_appears(values):
    from incrowd.reporting._risk import first_rows

    codes = pd.factorize(np.asarray(values, dtype=np.int64))[0]
    expected = np.unique(codes, return_index=True)[1] if codes.size else np.zeros(0, dtype=np.int64)
    assert first_rows(codes).tolist() == expected.tolist()


# --- record linkage, one query per distinct masked record ---

def _credit_plain(xs, xms, i, tol=1e-12):
    d = [math.sqrt(sum((xms[i, j] - xs[h, j]) ** 2 for j in range(xs.shape[1]))) for h in range(xs.shape[0])]
    ties = [h for h in range(len(d)) if d[h] <= min(d) * (1 + tol)]
    return (1 / len(ties)) if i in ties else 0.0


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 30), st.integers(1, 3), st.integers(1, 5), st.integers(0, 10_000), st.booleans())
def test_linkage_of_grouped_masked_records_equals_the_plain_definition(n, p, group, seed, grid):
    # microaggregated records: each group of rows published as one point (the group's mean), so
    # many masked records are one query; on a grid, ties between originals too
    from incrowd.reporting._risk import _tree_linkage

    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, size=(n, p)).astype(float) if grid else rng.normal(size=(n, p))
    labels = rng.integers(0, max(n // group, 1), size=n)
    xm = np.vstack([x[labels == labels[i]].mean(axis=0) for i in range(n)])
    rows = np.arange(n)
    got = _tree_linkage(x, xm, rows, 1e-12)
    assert got.tolist() == pytest.approx([_credit_plain(x, xm, i) for i in range(n)], abs=1e-12)
    some = rows[rng.random(n) < 0.5]
    assert _tree_linkage(x, xm, some, 1e-12).tolist() == pytest.approx(got[some].tolist(), abs=1e-15)


@settings(max_examples=25, deadline=None)
@given(_releases(), st.sampled_from([None, 0.05, 0.2, 0.5]), st.sampled_from([None, 0.1, 0.3]))
def test_the_verdict_counts_far_rows_from_the_attribute_disclosures_check(release, promised_t, threshold):
    # the report checks t once, where the verdict will; the verdict on a fresh alignment (which
    # checks again) says the same
    import incrowd
    from incrowd.reporting._align import align
    from incrowd.reporting._verdict import verdict

    original = release.copy()
    thresholds = {} if threshold is None else {"t": threshold}
    from incrowd.privacy import TCloseness

    models = [] if promised_t is None else [TCloseness(promised_t)]
    rep = incrowd.report(original, release, ["a", "b"], ["s"], models=models, thresholds=thresholds, figures=False)
    fresh = align(original, release, ["a", "b"], ["s"])
    assert not fresh.t_reports
    again = verdict(fresh, rep.risk, rep.utility, models=models, thresholds=thresholds)
    assert rep.verdict == again
    assert any(line["measure"] == "t (s)" for line in again)


def test_a_failed_t_line_names_the_far_rows_once_checked():
    import incrowd
    from incrowd.reporting._align import align
    from incrowd.reporting._verdict import verdict

    release = pd.DataFrame({"a": ["x"] * 6 + ["y"] * 4, "s": ["lo"] * 6 + ["hi", "hi", "hi", "lo"]})
    rep = incrowd.report(release, release, ["a"], ["s"], figures=False)
    line = next(v for v in rep.verdict if v["measure"] == "t (s)")
    # the classes' distances from the whole file's (0.7 lo, 0.3 hi): x 0.3, y 0.45; t = 0.3 by default
    assert line["status"] != "pass" and line["driver"].startswith("s: 4 records are in classes")
    assert verdict(align(release, release, ["a"], ["s"]), rep.risk, rep.utility) == rep.verdict


def test_frequency_tables_name_a_labelled_files_codes_by_their_labels():
    """A curator reads a .sav's codes by their value labels: the before/after tables give each
    code's label (the original's, and the release's for a generalized group's new code)."""
    from incrowd.generalization._hierarchy import hierarchy_from_rows
    from incrowd.reporting._utility import categorical_utility

    original = pd.DataFrame({"work": [1.0, 1.0, 2.0, 2.0, 3.0, 9.0]})
    original.attrs["statfile"] = {"format": "spss", "columns": {"work": {
        "value_labels": [[1.0, "Private"], [2.0, "State"], [3.0, "Local"]]}}}
    release = pd.DataFrame({"work": [1.0, 1.0, 100.0, 100.0, 100.0, 9.0]})
    labels = {"work": {1.0: "Private", 100.0: "Government"}}
    hierarchy = hierarchy_from_rows("work", [["Private", "Private", "*"], ["State", "Government", "*"],
                                             ["Local", "Government", "*"], ["9", "9", "*"]], "test")
    got = categorical_utility(original, release, {"work": hierarchy}, None, value_labels=labels)
    rows = {r["value"]: r for r in got["frequencies"]["work"]}
    assert {v: r.get("label") for v, r in rows.items()} == {
        "1": "Private", "100": "Government", "2": "State", "3": "Local", "9": None}
    assert rows["100"]["release"] == 3 and rows["2"]["original"] == 2
    # without the original's labels only the release's codes are named
    bare = pd.DataFrame({"work": original["work"].to_numpy()})
    plain = categorical_utility(bare, release, None, None, value_labels=labels)
    assert {r["value"]: r.get("label") for r in plain["frequencies"]["work"]} == {
        "1": "Private", "100": "Government", "2": None, "3": None, "9": None}
    # a cell missing before and after is shown missing after too, not as a suppressed one
    original.loc[5, "work"] = np.nan
    release.loc[5, "work"] = np.nan
    rows = {r["value"]: r for r in categorical_utility(original, release, {"work": hierarchy}, None,
                                                      value_labels=labels)["frequencies"]["work"]}
    assert "*" not in rows and rows["(missing)"]["original"] == rows["(missing)"]["release"] == 1
