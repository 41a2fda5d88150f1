"""One release over numeric and categorical quasi-identifiers together (``incrowd.publish``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from benchdata import data_dir
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import incrowd
from incrowd.cli import app
from incrowd.exceptions import DataError, ParameterError
from incrowd.publishing import example_toml, load_spec

DATA = Path(data_dir())
ADULT = DATA / "adult.csv.gz"
FULL = DATA / "adult_arx" / "full"
needs_data = pytest.mark.skipif(not ADULT.exists(), reason="benchmark data folder not found")


def _adult_spec(**privacy):
    columns = {"age": "numeric", "hours-per-week": "numeric", "income": "sensitive", "fnlwgt": "identifier"}
    for name in ("sex", "race", "marital-status", "education", "native-country"):
        columns[name] = {"role": "categorical", "hierarchy": str(FULL / f"adult_full_hierarchy_{name}.csv")}
    return {"privacy": {"k": 5, "max_suppression": "1%", "allow_full_suppression": True, **privacy},
            "columns": columns}


@pytest.fixture(scope="module")
def adult_part():
    return incrowd.read_table(ADULT).head(4000)


def _pycanon_k(table, qis):
    from pycanon import anonymity

    return anonymity.k_anonymity(table.astype(str), qis)


@needs_data
@pytest.mark.parametrize("strategy", ["generalize-then-microaggregate", "joint"])
def test_adult_release_is_k_anonymous_over_all_qis_and_keeps_the_rest(adult_part, strategy):
    result = incrowd.publish(adult_part, _adult_spec(strategy=strategy))
    report = result.summary()
    qis = ["age", "hours-per-week", "sex", "race", "marital-status", "education", "native-country"]
    assert report["numeric"] == ["age", "hours-per-week"]
    assert _pycanon_k(result.table, qis) == report["min_class_size"] >= 5
    assert result.table.shape[0] == adult_part.shape[0] - result.suppressed
    assert result.suppressed <= 40  # 1 % of 4000
    assert "fnlwgt" not in result.table.columns
    kept = adult_part.iloc[result.kept_rows].reset_index(drop=True)
    for column in ("workclass", "education-num", "occupation", "capital-gain", "income"):
        assert result.table[column].tolist() == kept[column].tolist()
    # the numeric columns are aggregated, not left as they were
    assert not np.array_equal(result.table["age"].to_numpy(float), kept["age"].astype(float).to_numpy())
    assert 0 < report["numeric_information_loss"] < 1
    assert 0 <= report["categorical_ncp"] <= 1


@needs_data
def test_the_chosen_generalization_is_the_lowest_the_lattice_negotiates(adult_part):
    from incrowd.generalization import Lattice, negotiate, read_hierarchy

    spec = _adult_spec(metric="height")
    result = incrowd.publish(adult_part, spec)
    cats = ["sex", "race", "marital-status", "education", "native-country"]
    hier = {a: read_hierarchy(FULL / f"adult_full_hierarchy_{a}.csv", a) for a in cats}
    lattice = Lattice.build(adult_part, cats, hierarchies=hier)
    answer = negotiate(lattice, k=5, max_suppression="1%", metric="height")
    assert answer.exact is not None
    assert sum(result.summary()["levels"].values()) == answer.exact.height


# --------------------------------------------------------------------------------------------
# random mixed tables


@st.composite
def _tables(draw):
    n = draw(st.integers(8, 50))
    rng = np.random.default_rng(draw(st.integers(0, 10_000)))
    k = draw(st.integers(2, 4))
    n_cat = draw(st.integers(1, 2))
    frame = {"id": [f"r{i}" for i in range(n)], "x": rng.normal(size=n).round(2),
             "y": rng.integers(0, 5, n).astype(float)}
    if draw(st.booleans()):
        missing = rng.random(n) < 0.2
        frame["y"] = np.where(missing, np.nan, frame["y"])
    hierarchies = {}
    for c in range(n_cat):
        values = [f"v{c}{i}" for i in range(draw(st.integers(2, 6)))]
        frame[f"c{c}"] = rng.choice(values, n)
        depth = draw(st.integers(1, 3))
        rows = []
        for i, v in enumerate(values):
            # nested bins: values i and j share level L when i // 2**L == j // 2**L (a tree)
            rows.append([v] + [f"g{c}{level}_{i >> level}" for level in range(1, depth)] + ["*"])
        hierarchies[f"c{c}"] = rows
    frame["s"] = rng.choice(["a", "b", "c"], n)
    frame["note"] = [f"text {i}" for i in range(n)]
    return pd.DataFrame(frame), hierarchies, k


@settings(max_examples=30, deadline=None)
@given(_tables(), st.sampled_from(["generalize-then-microaggregate", "joint"]))
def test_random_mixed_releases_are_k_anonymous_and_keep_everything_else(tmp_path_factory, case, strategy):
    frame, hierarchies, k = case
    folder = tmp_path_factory.mktemp("h")
    columns = {"id": "identifier", "x": "numeric", "y": "numeric", "s": "other"}
    for name, rows in hierarchies.items():
        path = folder / f"{name}.csv"
        path.write_text("\n".join(";".join(r) for r in rows) + "\n")
        columns[name] = {"role": "categorical", "hierarchy": str(path)}
    spec = {"privacy": {"k": k, "max_suppression": "20%", "strategy": strategy, "allow_full_suppression": True},
            "columns": columns,
            "missing": {"numeric": "separate"}}
    try:
        result = incrowd.publish(frame, spec)
    except ParameterError as exc:  # no node (or too many rows of rare missing patterns) within 20 %
        assert "max_suppression" in str(exc)
        return
    table = result.table
    qis = ["x", "y", *hierarchies]
    sizes = table.groupby(qis, dropna=False).size()
    assert sizes.min() >= k
    assert table.shape[0] == frame.shape[0] - result.suppressed
    assert result.suppressed <= int(0.2 * frame.shape[0])
    kept = frame.iloc[result.kept_rows].reset_index(drop=True)
    assert table["note"].tolist() == kept["note"].tolist()
    assert table["s"].tolist() == kept["s"].tolist()
    # a missing numeric cell stays missing, a present one stays present
    assert (table["y"].isna().to_numpy() == kept["y"].isna().to_numpy()).all()
    assert "id" not in table.columns
    assert 0 <= result.summary()["numeric_information_loss"] <= 1


# --------------------------------------------------------------------------------------------
# the spec and its errors


def test_a_spec_loads_from_toml_text_and_dict_alike(tmp_path):
    text = """
[privacy]
k = 3
max_suppression = "2%"
[columns]
a = "numeric"
b = { role = "categorical" }
"""
    path = tmp_path / "release.toml"
    path.write_text(text)
    assert load_spec(path) == load_spec(text, base_dir=tmp_path) == load_spec(
        {"privacy": {"k": 3, "max_suppression": "2%"}, "columns": {"a": "numeric", "b": {"role": "categorical"}}},
        base_dir=tmp_path)


@pytest.mark.parametrize("text, words", [
    ("[privacy]\nk = 5\n[columns]\nage = \"numeric\"\nage = \"sensitive\"\n", ["line 5", "'age'", "twice"]),
    ("[privacy]\nk = 5\n[columns\nage = \"numeric\"\n", ["line 3", "not valid TOML"]),
    ("[privacy]\nk = 5\nt = 1.5\n[columns]\nage = \"numeric\"\ns = \"sensitive\"\n", ["t must be", "(0, 1]"]),
    ("[privacy]\nk = 5\nt = 0\n[columns]\nage = \"numeric\"\ns = \"sensitive\"\n", ["t must be"]),
    ("[privacy]\nk = 5\n[columns]\nage = [\"numeric\", \"sensitive\"]\n", ["'age'", "2 roles"]),
    ("[privacy]\nk = 5\nmethod = \"nope\"\n[columns]\nage = \"numeric\"\n", ["unknown method 'nope'"]),
    ("[privacy]\nk = 5\n[columns]\nage = \"numerical\"\n", ["unknown role 'numerical'"]),
])
def test_spec_mistakes_are_named(text, words):
    with pytest.raises((DataError, ParameterError)) as info:
        load_spec(text)
    for word in words:
        assert word in str(info.value)


def _small():
    return pd.DataFrame({"age": [20, 21, 22, 23, 30, 31, 32, 33], "sex": ["m", "f"] * 4,
                         "s": ["x", "y", "x", "y", "x", "x", "y", "y"], "other": list("abcdefgh")})


def test_data_errors_are_named(tmp_path):
    frame = _small()
    with pytest.raises(DataError, match="'weight'"):
        incrowd.publish(frame, {"privacy": {"k": 2}, "columns": {"weight": "numeric"}})
    hierarchy = tmp_path / "sex.csv"
    hierarchy.write_text("m;*\n")
    with pytest.raises(DataError) as info:
        incrowd.publish(frame, {"privacy": {"k": 2}, "columns": {
            "age": "numeric", "sex": {"role": "categorical", "hierarchy": str(hierarchy)}}})
    assert "'f'" in str(info.value) and "sex.csv" in str(info.value)
    with pytest.raises(ParameterError, match="l=3 is larger than the number of distinct values"):
        incrowd.publish(frame, {"privacy": {"k": 2, "l": 3}, "columns": {"age": "numeric", "s": "sensitive"}})


def test_cli_publishes_with_a_report_and_refuses_bad_specs_without_writing(tmp_path):
    frame = _small()
    data = tmp_path / "data.csv"
    frame.to_csv(data, index=False)
    spec = tmp_path / "release.toml"
    spec.write_text("[privacy]\nk = 2\n[columns]\nage = \"numeric\"\nsex = \"categorical\"\n")
    out, report = tmp_path / "out.csv", tmp_path / "report.html"
    done = CliRunner().invoke(app, ["publish", str(data), "--spec", str(spec), "-o", str(out),
                                    "--report", str(report), "--json"])
    assert done.exit_code == 0, done.output
    info = json.loads(done.stdout)
    assert info["verification"]["k_anonymity"]["ok"] is True
    assert pd.read_csv(out)["other"].tolist() == list("abcdefgh")
    page = report.read_text()
    assert "k-anonymous" in page and "<script" not in page and "https://" not in page
    bad = tmp_path / "bad.toml"
    bad.write_text("[privacy]\nk = 2\n[columns\n")
    out2 = tmp_path / "out2.csv"
    done = CliRunner().invoke(app, ["publish", str(data), "--spec", str(bad), "-o", str(out2)])
    assert done.exit_code == 2
    assert "error:" in done.output and "line 3" in done.output
    assert not out2.exists()


def test_example_spec_is_a_spec_that_loads(tmp_path):
    frame = pd.DataFrame({"respondent": [f"p{i}" for i in range(40)], "age": np.arange(40) + 20,
                          "region": ["north", "south"] * 20, "income": ["lo", "hi"] * 20})
    text = example_toml(frame, "survey.csv")
    spec = load_spec(text)
    assert spec.columns["respondent"].role == "identifier"
    assert spec.columns["age"].role == "numeric"
    assert spec.columns["region"].role == "categorical"
    data = tmp_path / "survey.csv"
    frame.to_csv(data, index=False)
    done = CliRunner().invoke(app, ["publish", str(data), "--example-spec"])
    assert done.exit_code == 0, done.output
    assert load_spec(done.stdout).k == 5


# --------------------------------------------------------------------------------------------
# sensitive attributes


@needs_data
@pytest.mark.parametrize("strategy", ["generalize-then-microaggregate", "joint"])
@pytest.mark.parametrize("privacy", [{"l": 2}, {"t": 0.2}])
def test_adult_release_with_l_or_t_agrees_with_pycanon(adult_part, strategy, privacy):
    from pycanon import anonymity

    result = incrowd.publish(adult_part, _adult_spec(strategy=strategy, **privacy))
    report = result.summary()
    qis = ["age", "hours-per-week", "sex", "race", "marital-status", "education", "native-country"]
    table = result.table.astype(str)
    assert anonymity.k_anonymity(table, qis) == report["min_class_size"] >= 5
    if "l" in privacy:
        got = report["verification"]["l_diversity"]["income"]
        assert anonymity.l_diversity(table, qis, ["income"]) == got["min_distinct"] >= 2
    else:
        got = report["verification"]["t_closeness"]["income"]
        assert got["max_distance"] <= 0.2 + 1e-12
        # pycanon compares each class with the published table's own distribution; ours with the
        # whole input's. Without suppression the two are the same distribution.
        if result.suppressed == 0:
            assert anonymity.t_closeness(table, qis, ["income"]) == pytest.approx(got["max_distance"], abs=1e-9)


@settings(max_examples=25, deadline=None)
@given(_tables(), st.sampled_from(["generalize-then-microaggregate", "joint"]),
       st.sampled_from([{"l": 2}, {"t": 0.5}, {"l": 2, "t": 0.6}]))
def test_random_releases_are_l_diverse_and_t_close_when_asked(tmp_path_factory, case, strategy, privacy):
    from incrowd.privacy import verify_l_diversity, verify_t_closeness

    frame, hierarchies, k = case
    folder = tmp_path_factory.mktemp("h")
    columns = {"id": "identifier", "x": "numeric", "y": "numeric", "s": "sensitive"}
    for name, rows in hierarchies.items():
        path = folder / f"{name}.csv"
        path.write_text("\n".join(";".join(r) for r in rows) + "\n")
        columns[name] = {"role": "categorical", "hierarchy": str(path)}
    spec = {"privacy": {"k": k, "max_suppression": "40%", "strategy": strategy, "allow_full_suppression": True,
                        **privacy},
            "columns": columns, "missing": {"numeric": "separate"}}
    try:
        result = incrowd.publish(frame, spec)
    except ParameterError as exc:
        assert "max_suppression" in str(exc) or "larger than the number of distinct values" in str(exc)
        return
    table = result.table
    qis = ["x", "y", *hierarchies]
    assert table.groupby(qis, dropna=False).size().min() >= k
    if "l" in privacy:
        assert verify_l_diversity(table, qis, "s", privacy["l"])
    if "t" in privacy:
        assert verify_t_closeness(table, qis, "s", privacy["t"], reference=frame["s"])
    assert table.shape[0] == frame.shape[0] - result.suppressed


def test_t_outside_its_range_and_l_too_large_are_refused_in_the_cli(tmp_path):
    data = tmp_path / "data.csv"
    _small().to_csv(data, index=False)
    for privacy, words in (("t = 1.2", "t must be"), ("l = 5", "l=5 is larger")):
        spec = tmp_path / "release.toml"
        spec.write_text(f"[privacy]\nk = 2\n{privacy}\n[columns]\nage = \"numeric\"\ns = \"sensitive\"\n")
        out = tmp_path / "out.csv"
        done = CliRunner().invoke(app, ["publish", str(data), "--spec", str(spec), "-o", str(out)])
        assert done.exit_code == 2
        assert words in done.output
        assert not out.exists()
