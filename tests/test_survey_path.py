"""A survey file as statistical offices hold it, from the starting spec to the release and its
report: value labels, codes, user-missing codes, a weight and the file's metadata.

The end-to-end path runs on Adult coded as a labelled .sav and .dta (``tests/_survey_files.py``)
with ARX's hierarchies written in labels; the focused tests build small files here. The written
releases are read back with pyreadstat, and k is counted with plain pandas.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))

import _survey_files as survey  # noqa: E402
from benchdata import data_dir  # noqa: E402

import incrowd  # noqa: E402
from incrowd.cli import app  # noqa: E402
from incrowd.exceptions import DataError, ParameterError  # noqa: E402
from incrowd.generalization import read_hierarchy  # noqa: E402
from incrowd.publishing import load_spec  # noqa: E402

DATA = data_dir()
needs_data = pytest.mark.skipif(not (DATA / "adult.csv.gz").exists() or not (DATA / "adult_arx").is_dir(),
                                reason="benchmark data folder not found")
QIS = ["age", "workclass", "education", "marital_status", "occupation", "race", "sex", "native_country"]


def run(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def read(path: Path):
    reader = pyreadstat.read_sav if path.suffix == ".sav" else pyreadstat.read_dta
    return reader(str(path), user_missing=True, apply_value_formats=False)


def class_sizes(frame: pd.DataFrame, qis: list[str]) -> pd.Series:
    keys = frame[qis].astype(object).where(frame[qis].notna(), "<missing>").astype(str)
    return keys.groupby(qis).size()


def edit_roles(text: str) -> str:
    """What the curator changes in the starting spec: the columns that are not quasi-identifiers
    pass through (the amounts proposed perturbed too, so their step goes), race and the country
    may end as "*", a little more suppression."""
    text = re.sub(r"^(education_num|capital_gain|capital_loss|hours_per_week|relationship|income) = .*$",
                  r'\1 = "other"', text, flags=re.M)
    text = re.sub(r"^\[\[perturb\]\]\n(?:(?!\[).*\n?)*", "", text, flags=re.M)
    text = re.sub(r"^(race|native_country) = \{ (.*) \}", r"\1 = { \2, allow_full_suppression = true }", text,
                  flags=re.M)
    return re.sub(r"^max_suppression = .*$", 'max_suppression = "2%"', text, flags=re.M)


# --------------------------------------------------------------------------------------------
# the curator's path, end to end


@needs_data
@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".sav", ".dta"])
def test_the_curators_path_from_a_labelled_file_to_a_release_and_its_report(tmp_path, suffix):
    times = {}
    survey.write_hierarchies(tmp_path, DATA)
    source = tmp_path / f"adult{suffix}"
    (survey.write_sav if suffix == ".sav" else survey.write_dta)(source, DATA, n=3000)
    t0 = time.perf_counter()
    done = run("publish", source, "--example-spec")
    times["example-spec"] = time.perf_counter() - t0
    assert done.exit_code == 0, done.output
    proposed = load_spec(done.stdout, base_dir=tmp_path)
    roles = {name: c.role for name, c in proposed.columns.items()}
    assert roles["respid"] == "identifier" and roles["fnlwgt"] == "weight" and proposed.weight == "fnlwgt"
    assert roles["age"] == "numeric"
    for name in ("workclass", "education", "marital_status", "occupation", "race", "sex", "native_country",
                 "relationship"):
        assert roles[name] == "categorical", name
    assert roles["income"] == "sensitive"  # by its name: what an intruder wants to learn
    for name, attribute in survey.ARX.items():
        if name in ("income", "age"):
            continue  # named otherwise (salary-class), or numeric
        assert proposed.columns[name].hierarchy == tmp_path / f"adult_hierarchy_{attribute}.csv", name
    code = "99" if suffix == ".sav" else ".a"
    assert f'user-missing {code} "Not stated"' in done.stdout
    spec = tmp_path / "release.toml"
    spec.write_text(edit_roles(done.stdout))
    out, report = tmp_path / f"release{suffix}", tmp_path / "report.html"
    t0 = time.perf_counter()
    done = run("publish", source, "--spec", spec, "-o", out, "--report", report, "--json")
    times["publish --report"] = time.perf_counter() - t0
    assert done.exit_code == 0, done.output
    info = json.loads(done.stdout)
    assert report.exists() and out.exists()
    written, meta = read(out)
    before, meta_before = read(source)
    assert "respid" not in written.columns
    assert written.shape[0] == info["rows_out"] == before.shape[0] - info["suppressed"]
    # k over all quasi-identifiers on the file as written
    assert class_sizes(written, QIS).min() >= 5
    # a column published as one label in every row is said, and only the ones the spec allows
    constant = [c for c in QIS[1:] if written[c].astype(str).nunique() == 1]
    assert info["fully_suppressed"] == constant and set(constant) <= {"race", "native_country"}
    # unchanged columns: byte for byte in codes and labels, in the rows kept
    kept_rows = _kept_rows(before, written)
    for name in ("fnlwgt", "relationship", "income", "education_num", "capital_gain", "hours_per_week"):
        assert written[name].tolist() == before[name].iloc[kept_rows].tolist(), name
        assert meta.variable_value_labels.get(name) == meta_before.variable_value_labels.get(name), name
        assert meta.column_names_to_labels[name] == meta_before.column_names_to_labels[name]
    # generalized columns: labelled numerics whose labels are the hierarchy's groups
    for name, level in info["levels"].items():
        labels = meta.variable_value_labels[name]
        assert pd.api.types.is_numeric_dtype(written[name]) or suffix == ".dta", name
        shown = {labels.get(v, v) for v in written[name]}
        hierarchy = read_hierarchy(tmp_path / f"adult_hierarchy_{survey.ARX[name]}.csv")
        if level > 0:
            assert shown <= set(hierarchy.labels[level].tolist()), (name, shown)
        else:
            assert labels == meta_before.variable_value_labels[name]
        if suffix == ".sav":
            assert meta.variable_measure[name] == meta_before.variable_measure[name]
    if suffix == ".sav":
        assert meta.original_variable_types["age"] == "F6.2"  # F3.0 with two decimals for its means
    print(f"\n{suffix} wall seconds: {times}")


def _kept_rows(before: pd.DataFrame, written: pd.DataFrame) -> np.ndarray:
    """The source rows of the release (row order is kept), matched by the weight and the
    pass-through columns."""
    keys = ["fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
    b = before[keys].astype(str).agg("|".join, axis=1).tolist()
    w = written[keys].astype(str).agg("|".join, axis=1).tolist()
    out, j = [], 0
    for key in w:
        while b[j] != key:
            j += 1
        out.append(j)
        j += 1
    return np.array(out)


# --------------------------------------------------------------------------------------------
# 1. labels are first-class: matched by label or by code


def _labelled_sav(path: Path, n_per: int = 5) -> Path:
    """A small survey: edu coded 1..4 labelled, 99 "Not stated" user-missing, a weight."""
    edu = np.repeat([1.0, 2.0, 3.0, 4.0, 99.0], n_per)
    frame = pd.DataFrame({"id": np.arange(edu.size, dtype=float), "edu": edu,
                          "w": np.linspace(1.0, 3.0, edu.size), "note": np.arange(edu.size) % 3 * 1.0})
    pyreadstat.write_sav(frame, str(path), missing_ranges={"edu": [99.0]},
                         variable_value_labels={"edu": {1.0: "Primary", 2.0: "Lower secondary", 3.0: "Upper secondary",
                                                        4.0: "Tertiary", 99.0: "Not stated"}},
                         variable_measure={"edu": "ordinal", "w": "scale", "note": "nominal", "id": "nominal"},
                         column_labels={"w": "Design weight"})
    return path


LABEL_HIERARCHY = ("Primary;Basic;*\nLower secondary;Basic;*\nUpper secondary;Advanced;*\nTertiary;Advanced;*\n"
                   "Not stated;Not stated;*\n")
CODE_HIERARCHY = "1.0;Basic;*\n2.0;Basic;*\n3.0;Advanced;*\n4.0;Advanced;*\n99.0;Not stated;*\n"


def _spec(folder: Path, hierarchy: str, match: str | None = None, k: int = 5, extra: str = "") -> Path:
    (folder / "edu.csv").write_text(hierarchy)
    options = f', match = "{match}"' if match else ""
    path = folder / "spec.toml"
    path.write_text(f'[privacy]\nk = {k}\n{extra}[columns]\nid = "identifier"\nw = "weight"\n'
                    f'edu = {{ role = "categorical", hierarchy = "edu.csv"{options} }}\n[levels]\nedu = 1\n')
    return path


def test_a_hierarchy_in_labels_matches_labelled_codes_by_default(tmp_path):
    source = _labelled_sav(tmp_path / "s.sav")
    data = incrowd.read_table(source)
    result = incrowd.publish(data, _spec(tmp_path, LABEL_HIERARCHY))
    assert result.table["edu"].tolist() == ["Basic"] * 10 + ["Advanced"] * 10 + ["Not stated"] * 5
    explicit = incrowd.publish(data, _spec(tmp_path, LABEL_HIERARCHY, "label"))
    assert explicit.table["edu"].tolist() == result.table["edu"].tolist()


def test_a_flat_column_matched_by_label_publishes(tmp_path):
    data = incrowd.read_table(_labelled_sav(tmp_path / "s.sav"))
    spec = {"privacy": {"k": 5}, "columns": {"edu": {"role": "categorical", "match": "label"}}}
    table = incrowd.publish(data, spec).table  # each value 5 times: published as given
    assert table["edu"].astype(str).tolist() == data["edu"].astype(str).tolist()


def test_codes_match_as_numbers_and_user_missing_codes_are_values(tmp_path):
    data = incrowd.read_table(_labelled_sav(tmp_path / "s.sav"))
    for match in (None, "code"):
        result = incrowd.publish(data, _spec(tmp_path, CODE_HIERARCHY, match))  # 7.0 in the file is 7
        assert result.table["edu"].tolist() == ["Basic"] * 10 + ["Advanced"] * 10 + ["Not stated"] * 5


def test_a_match_that_does_not_hold_is_refused_naming_it(tmp_path):
    data = incrowd.read_table(_labelled_sav(tmp_path / "s.sav"))
    with pytest.raises(DataError, match="code 99 is not in hierarchy"):
        incrowd.publish(data, _spec(tmp_path, LABEL_HIERARCHY, "code"))
    with pytest.raises(DataError, match="Not stated is not in hierarchy"):
        incrowd.publish(data, _spec(tmp_path, CODE_HIERARCHY, "label"))
    neither = "Primary;Basic;*\n2;Basic;*\n3;Advanced;*\n4;Advanced;*\n99;Not stated;*\n"
    with pytest.raises(DataError, match=r"neither by code nor by value label.*code 1 .*value label 'Lower secondary'"):
        incrowd.publish(data, _spec(tmp_path, neither))
    frame = pd.DataFrame({"edu": [1, 2] * 5, "x": range(10)})
    with pytest.raises(DataError, match="match = \"label\" but no value labels"):
        incrowd.publish(frame, _spec(tmp_path, CODE_HIERARCHY, "label", k=2).read_text().replace(
            'id = "identifier"\nw = "weight"\n', 'x = "other"\n'), base_dir=tmp_path)
    with pytest.raises(ParameterError, match="match must be"):
        load_spec('[privacy]\nk = 2\n[columns]\na = { role = "categorical", match = "labels" }\n')
    with pytest.raises(ParameterError, match="only a categorical column without intervals takes match"):
        load_spec('[privacy]\nk = 2\n[columns]\nb = "numeric"\na = { role = "numeric", match = "code" }\n')


def test_the_report_of_a_label_matched_release_succeeds(tmp_path):
    source = _labelled_sav(tmp_path / "s.sav")
    spec = _spec(tmp_path, LABEL_HIERARCHY)
    done = run("publish", source, "--spec", spec, "-o", tmp_path / "r.sav", "--report", tmp_path / "r.json")
    assert done.exit_code == 0, done.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["about"]["categorical"] == ["edu"] and report["about"]["numeric"] == []
    assert "sample_risk" in report["risk"]  # the spec's weight weighs the risk measures


# --------------------------------------------------------------------------------------------
# 2. generalized columns keep their type in labelled formats


def test_a_generalized_column_is_written_back_as_a_labelled_recode(tmp_path):
    source = _labelled_sav(tmp_path / "s.sav")
    out = tmp_path / "r.sav"
    done = run("publish", source, "--spec", _spec(tmp_path, LABEL_HIERARCHY), "-o", out)
    assert done.exit_code == 0, done.output
    written, meta = read(out)
    labels = meta.variable_value_labels["edu"]
    # the groups numbered after the largest code (99), in the hierarchy's order; "Not stated" is the
    # user-missing code it names, still declared missing; no cell is "*", so no code is labelled so
    assert labels == {1.0: "Primary", 2.0: "Lower secondary", 3.0: "Upper secondary", 4.0: "Tertiary",
                      99.0: "Not stated", 100.0: "Basic", 101.0: "Advanced"}
    assert written["edu"].tolist() == [100.0] * 10 + [101.0] * 10 + [99.0] * 5
    assert meta.missing_ranges["edu"] == [{"lo": 99.0, "hi": 99.0}]
    assert meta.variable_measure["edu"] == "ordinal"
    # the weight and the other column pass through unchanged
    before, _ = read(source)
    assert written["w"].tolist() == before["w"].tolist() and written["note"].tolist() == before["note"].tolist()
    # a SAS transport file (no value labels), CSV and Parquet hold text
    xpt = tmp_path / "r.xpt"
    assert run("publish", source, "--spec", _spec(tmp_path, LABEL_HIERARCHY), "-o", xpt).exit_code == 0
    assert pyreadstat.read_xport(str(xpt))[0]["edu"].tolist()[:11] == ["Basic"] * 10 + ["Advanced"]
    csv = tmp_path / "r.csv"
    assert run("publish", source, "--spec", _spec(tmp_path, LABEL_HIERARCHY), "-o", csv).exit_code == 0
    assert pd.read_csv(csv, dtype=str)["edu"].tolist() == ["Basic"] * 10 + ["Advanced"] * 10 + ["Not stated"] * 5


def test_a_stata_user_missing_group_stays_its_extended_missing_value(tmp_path):
    frame = pd.DataFrame({"edu": pd.Series([1.0] * 4 + [2.0] * 4 + ["a"] * 4, dtype=object),
                          "x": np.arange(12.0)})
    source = tmp_path / "s.dta"
    pyreadstat.write_dta(frame, str(source), missing_user_values={"edu": ["a"]},
                         variable_value_labels={"edu": {1: "Primary", 2: "Tertiary", "a": "Not stated"}})
    (tmp_path / "edu.csv").write_text("Primary;Any;*\nTertiary;Any;*\nNot stated;Not stated;*\n")
    spec = tmp_path / "spec.toml"
    spec.write_text('[privacy]\nk = 4\n[columns]\nedu = { role = "categorical", hierarchy = "edu.csv" }\n'
                    '[levels]\nedu = 1\n')
    out = tmp_path / "r.dta"
    done = run("publish", source, "--spec", spec, "-o", out)
    assert done.exit_code == 0, done.output
    written, meta = read(out)
    assert written["edu"].tolist() == [3.0] * 8 + ["a"] * 4
    assert meta.variable_value_labels["edu"] == {1: "Primary", 2: "Tertiary", 3: "Any", "a": "Not stated"}
    assert meta.missing_user_values["edu"] == ["a"]


def test_a_microaggregated_column_keeps_its_format_with_decimals(tmp_path):
    source = _labelled_sav(tmp_path / "s.sav")
    frame, _ = read(source)
    frame["age"] = np.random.default_rng(3).integers(18, 90, frame.shape[0]).astype(float)
    pyreadstat.write_sav(frame, str(source), variable_format={"age": "F3.0"}, variable_measure={"age": "scale"})
    spec = tmp_path / "spec.toml"
    spec.write_text('[privacy]\nk = 3\n[columns]\nage = "numeric"\nnote = "categorical"\n')
    out = tmp_path / "r.sav"
    assert run("publish", source, "--spec", spec, "-o", out).exit_code == 0
    _, meta = read(out)
    assert meta.original_variable_types["age"] == "F6.2" and meta.variable_measure["age"] == "scale"


@st.composite
def _coded(draw):
    n_codes = draw(st.integers(2, 5))
    codes = draw(st.lists(st.integers(1, 60), min_size=n_codes, max_size=n_codes, unique=True))
    groups = draw(st.lists(st.integers(0, 2), min_size=n_codes, max_size=n_codes))
    cells = draw(st.lists(st.sampled_from(codes), min_size=6, max_size=30))
    return codes, groups, cells


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_coded(), by_label=st.booleans())
def test_a_recode_reads_back_as_the_release_in_memory(tmp_path_factory, case, by_label):
    """Property: the written .sav, its codes read back through its value labels, is the table
    in memory (an unchanged code as its code, a group as its label), and k holds on the codes."""
    codes, groups, cells = case
    folder = tmp_path_factory.mktemp("recode")
    labels = {float(c): f"value {c}" for c in codes}
    source = folder / "s.sav"
    pyreadstat.write_sav(pd.DataFrame({"c": np.array(cells, dtype=float)}), str(source),
                         variable_value_labels={"c": labels})
    first = (lambda c: f"value {c}") if by_label else str
    (folder / "c.csv").write_text("".join(f"{first(c)};group {g};*\n" for c, g in zip(codes, groups)))
    spec = folder / "spec.toml"
    spec.write_text('[privacy]\nk = 2\nmax_suppression = "100%"\nallow_full_suppression = true\n'
                    '[columns]\nc = { role = "categorical", hierarchy = "c.csv" }\n')
    data = incrowd.read_table(source)
    result = incrowd.publish(data, spec)  # "*" over 6 rows or more always holds k = 2
    out = folder / "r.sav"
    result.write(out)
    written, meta = read(out)
    shown = meta.variable_value_labels["c"]
    back = [str(int(v)) if str(shown.get(v, "")).startswith("value ") else shown[v] for v in written["c"]]
    assert back == [str(int(v)) if isinstance(v, float) else v for v in result.table["c"].tolist()]
    assert written["c"].value_counts().min() >= 2
    largest = max(codes)
    assert all(v <= largest or v > largest for v in written["c"])  # new codes only above every code
    assert {v for v in written["c"] if v not in labels} <= set(range(largest + 1, largest + 5))


# --------------------------------------------------------------------------------------------
# 3. the weight role


def test_the_weight_passes_through_and_is_never_a_quasi_identifier(tmp_path):
    data = incrowd.read_table(_labelled_sav(tmp_path / "s.sav"))
    spec = load_spec(_spec(tmp_path, LABEL_HIERARCHY))
    assert spec.weight == "w" and "w" not in spec.quasi_identifiers
    result = incrowd.publish(data, spec)
    assert result.table["w"].tolist() == data["w"].tolist()
    assert "w" not in result.report_options()["quasi_identifiers"] and result.report_options()["weight"] == "w"
    assert load_spec(spec.to_dict()).weight == "w"
    with pytest.raises(ParameterError, match="one survey weight"):
        load_spec({"privacy": {"k": 2}, "columns": {"a": "numeric", "w": "weight", "v": "weight"}})
    bad = data.copy()
    bad["w"] = bad["w"].astype(object)
    bad.loc[3, "w"] = "heavy"
    with pytest.raises(DataError, match="weight column 'w' must hold numbers; data row 4"):
        incrowd.publish(bad, spec)
    bad["w"] = -1.0
    with pytest.raises(DataError, match="weight column 'w' must hold a number >= 0"):
        incrowd.publish(bad, spec)


# --------------------------------------------------------------------------------------------
# 4. --example-spec reads the file's metadata


def test_the_example_spec_reads_measures_labels_weights_and_hierarchy_names(tmp_path):
    n = 120
    frame = pd.DataFrame({"respid": np.arange(1.0, n + 1), "edu": np.tile([1.0, 2.0, 3.0, 99.0], n // 4),
                          "region": np.tile(np.arange(1.0, 21.0), n // 20), "income": np.linspace(0, 1e4, n),
                          "pweight": np.tile([1.5, 2.5], n // 2), "score": np.tile(np.arange(30.0), n // 30),
                          "marital_status": np.tile([1.0, 2.0], n // 2)})
    source = tmp_path / "s.sav"
    pyreadstat.write_sav(frame, str(source), missing_ranges={"edu": [99.0]},
                         variable_value_labels={"edu": {1.0: "low", 2.0: "mid", 3.0: "high", 99.0: "Not stated"},
                                                "marital_status": {1.0: "single", 2.0: "married"}},
                         variable_measure={"region": "nominal", "score": "scale", "income": "scale"})
    (tmp_path / "adult_hierarchy_marital-status.csv").write_text("single;*\nmarried;*\n")
    (tmp_path / "EDU.csv").write_text("low;*\nmid;*\nhigh;*\nNot stated;*\n")
    done = run("publish", source, "--example-spec")
    assert done.exit_code == 0, done.output
    spec = load_spec(done.stdout, base_dir=tmp_path)
    roles = {name: c.role for name, c in spec.columns.items()}
    # income: an amount by its name, changed on its own after the keys are protected
    assert roles == {"respid": "identifier", "edu": "categorical", "region": "categorical", "income": "perturb",
                     "pweight": "weight", "score": "numeric", "marital_status": "categorical"}
    assert spec.columns["marital_status"].hierarchy == tmp_path / "adult_hierarchy_marital-status.csv"
    assert spec.columns["edu"].hierarchy == tmp_path / "EDU.csv"
    assert 'user-missing 99 "Not stated"' in done.stdout
    # the same starting spec publishes (no sensitive column is needed)
    (tmp_path / "spec.toml").write_text(done.stdout.replace('score = "numeric"', 'score = "other"'))
    released = run("publish", source, "--spec", tmp_path / "spec.toml", "-o", tmp_path / "r.sav")
    assert released.exit_code == 0, released.output


def test_the_example_spec_proposes_the_smallest_suppression_limit_that_publishes(tmp_path):
    # "rel" has no hierarchy, so it keeps its values: its 9 rare values (3 rows each) hold 27 of
    # 400 rows (6.75 %) in classes under 5 at every node; "grp" can always be generalized away
    rng = np.random.default_rng(1)
    n = 400
    rel = np.array(["common"] * (n - 27) + [f"rare{i}" for i in range(9) for _ in range(3)], dtype=object)
    frame = pd.DataFrame({"grp": rng.choice(list("abcd"), n), "rel": rng.permutation(rel),
                          "x": rng.normal(size=n)})
    frame.to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "grp.csv").write_text("a;ab;*\nb;ab;*\nc;cd;*\nd;cd;*\n")
    done = run("publish", tmp_path / "d.csv", "--example-spec")
    assert done.exit_code == 0, done.output
    assert 'max_suppression = "10%"' in done.stdout
    assert "27 rows (6.8 %) in classes under k = 5; rel has no hierarchy" in done.stdout
    spec = tmp_path / "spec.toml"
    spec.write_text(done.stdout)
    released = run("publish", tmp_path / "d.csv", "--spec", spec, "-o", tmp_path / "r.csv", "--json")
    assert released.exit_code == 0, released.output
    assert json.loads(released.stdout)["suppressed"] == 27
    assert json.loads(released.stdout)["fully_suppressed"] == []
    # one step less publishes only by taking rel to "*" in every row: the proposal is the smallest
    # round limit that publishes with every column telling something
    spec.write_text(done.stdout.replace('max_suppression = "10%"', 'max_suppression = "5%"'))
    released = run("publish", tmp_path / "d.csv", "--spec", spec, "-o", tmp_path / "r2.csv", "--json")
    assert released.exit_code == 0 and json.loads(released.stdout)["fully_suppressed"] == ["rel"]
    from incrowd.publishing import example_spec
    assert example_spec(frame, [tmp_path / "grp.csv"], tmp_path)["privacy"]["max_suppression"] == "10%"


def test_hierarchy_files_are_found_by_normalized_name(tmp_path):
    from incrowd.generalization._hierarchy import find_hierarchy_file, propose_hierarchy_files

    files = [tmp_path / n for n in ("adult_hierarchy_marital-status.csv", "Native Country.csv", "sex.csv",
                                    "a_hierarchy_race.csv", "b_hierarchy_race.csv")]
    for f in files:
        f.write_text("x;*\n")
    got = propose_hierarchy_files(["marital_status", "native_country", "SEX", "race", "age"], files)
    assert got == {"marital_status": files[0], "native_country": files[1], "SEX": files[2]}
    assert find_hierarchy_file(tmp_path, "marital_status") == files[0]


# --------------------------------------------------------------------------------------------
# 5. one missing-value story: every command meets missing cells and codes as publish does


@pytest.mark.slow
def test_every_command_meets_missing_cells_and_codes_as_publish_does(tmp_path):
    data = tmp_path / "d.csv"
    # an empty cell and "NA" (two spellings of missing, each with its own row), a code written 2.0
    data.write_text("edu,age\n1,30\n1,31\n,32\n,33\n2.0,34\n2,35\nNA,36\nNA,37\n")
    folder = tmp_path / "h"
    folder.mkdir()
    (folder / "edu.csv").write_text("1;low;*\n2;high;*\nNA;unknown;*\n;unknown;*\n")
    lattice = tmp_path / "l.duckdb"
    done = run("lattice", "build", data, "--qi", "edu", "--hierarchies", folder, "-o", lattice, "--json")
    assert done.exit_code == 0, done.output
    done = run("negotiate", lattice, "--k", "2", "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["exact"]["levels"] == {"edu": 0}  # 1, 2, "" and NA: two rows each
    out = tmp_path / "g.csv"
    done = run("generalize", data, "--hierarchies", folder, "--levels", "edu=1", "--k", "2", "-o", out)
    assert done.exit_code == 0, done.output
    assert pd.read_csv(out, dtype=str, keep_default_na=False)["edu"].tolist() == (
        ["low"] * 2 + ["unknown"] * 2 + ["high"] * 2 + ["unknown"] * 2)
    spec = tmp_path / "s.toml"
    spec.write_text('[privacy]\nk = 2\n[columns]\nedu = { role = "categorical", hierarchy = "h/edu.csv" }\n'
                    '[levels]\nedu = 1\n')
    published = tmp_path / "p.csv"
    done = run("publish", data, "--spec", spec, "-o", published, "--report", tmp_path / "p.json")
    assert done.exit_code == 0, done.output
    assert pd.read_csv(published, dtype=str)["edu"].tolist() == pd.read_csv(out, dtype=str)["edu"].tolist()
    done = run("report", data, out, "--qi", "edu", "--hierarchies", folder, "-o", tmp_path / "r.json")
    assert done.exit_code == 0, done.output
    # one row for both spellings is refused by every command alike, naming them
    (folder / "edu.csv").write_text("1;low;*\n2;high;*\nNA;unknown;*\n")
    for args in (("lattice", "build", data, "--qi", "edu", "--hierarchies", folder, "-o", tmp_path / "x.duckdb"),
                 ("generalize", data, "--hierarchies", folder, "--levels", "edu=1", "--k", "2", "-o",
                  tmp_path / "x.csv"),
                 ("publish", data, "--spec", spec, "-o", tmp_path / "x.csv")):
        done = run(*args)
        assert done.exit_code == 2 and "spells missing values two ways ('' and 'NA')" in done.output, done.output


def test_lattice_build_meets_user_missing_codes_and_labels_as_publish_does(tmp_path):
    source = _labelled_sav(tmp_path / "s.sav")
    folder = tmp_path / "h"
    folder.mkdir()
    (folder / "edu.csv").write_text(CODE_HIERARCHY)  # 99.0 is the user-missing code 99
    done = run("lattice", "build", source, "--qi", "edu", "--hierarchies", folder, "-o", tmp_path / "l.duckdb")
    assert done.exit_code == 0, done.output
    done = run("generalize", source, "--hierarchies", folder, "--levels", "edu=1", "--k", "5", "-o",
               tmp_path / "g.csv")
    assert done.exit_code == 0, done.output
    assert pd.read_csv(tmp_path / "g.csv")["edu"].tolist() == ["Basic"] * 10 + ["Advanced"] * 10 + ["Not stated"] * 5


def test_generalize_meets_labels_and_writes_labelled_codes_as_publish_does(tmp_path):
    source = _labelled_sav(tmp_path / "s.sav")
    folder = tmp_path / "h"
    folder.mkdir()
    (folder / "edu.csv").write_text(LABEL_HIERARCHY)
    for level, codes in (("1", [100.0] * 10 + [101.0] * 10 + [99.0] * 5),
                         ("0", [1.0] * 5 + [2.0] * 5 + [3.0] * 5 + [4.0] * 5 + [99.0] * 5)):
        out = tmp_path / f"g{level}.sav"
        done = run("generalize", source, "--hierarchies", folder, "--levels", f"edu={level}", "--k", "5", "-o", out)
        assert done.exit_code == 0, done.output
        written, meta = read(out)
        assert written["edu"].tolist() == codes
        assert meta.variable_value_labels["edu"][100.0] == "Basic" and meta.missing_ranges["edu"]


def test_a_refusal_names_the_column_without_a_hierarchy_and_only_the_levers_set(tmp_path):
    # rel has a value per row and no hierarchy: only "*" would merge its rows, so it alone holds
    # every class below k; edu has a level between its values and "*" and is not the cause
    (tmp_path / "edu.csv").write_text("a;low;*\nb;low;*\nc;high;*\nd;high;*\n")
    frame = pd.DataFrame({"edu": list("abcd") * 5, "rel": [f"r{i}" for i in range(20)], "inc": ["x", "y"] * 10})
    columns = {"edu": {"role": "categorical", "hierarchy": str(tmp_path / "edu.csv")}, "rel": "categorical",
               "inc": "other"}
    forbid = {"allow_full_suppression": False}  # else rel may go to "*", which publishes
    with pytest.raises(ParameterError) as refused:
        incrowd.publish(frame, {"privacy": {"k": 2, **forbid}, "columns": columns})
    line = str(refused.value)
    assert ("rel has no hierarchy: give it one, or make it 'other'/'sensitive', or set allow_full_suppression = "
            "true") in line
    assert "edu" not in line.split("; ", 1)[1] and "stop below their top" not in line
    assert "lower k," in line and " l " not in line and "raise t" not in line
    with pytest.raises(ParameterError) as refused:
        incrowd.publish(frame, {"privacy": {"k": 2, "l": 2, **forbid}, "columns": {**columns, "inc": "sensitive"}})
    assert "lower k or l," in str(refused.value) and "raise t" not in str(refused.value)
    with pytest.raises(ParameterError, match="lower k, raise t,"):
        incrowd.publish(frame, {"privacy": {"k": 2, "t": 0.5, **forbid}, "columns": {**columns, "inc": "sensitive"}})


@needs_data
@pytest.mark.slow
def test_the_standalone_report_reads_a_labelled_release_by_its_labels_and_the_specs_weight(tmp_path):
    # a generalized group is stored as a new code (e.g. 101) whose value label is the group's
    # label: the report on the written .sav must read it so, as publish --report does in memory
    survey.write_hierarchies(tmp_path, DATA)
    source = survey.write_sav(tmp_path / "adult.sav", DATA, n=2000)
    spec = tmp_path / "release.toml"
    spec.write_text(edit_roles(run("publish", source, "--example-spec").stdout))
    out = tmp_path / "release.sav"
    done = run("publish", source, "--spec", spec, "-o", out, "--report", tmp_path / "inside.json", "--json")
    assert done.exit_code == 0, done.output
    assert any(level > 0 for level in json.loads(done.stdout)["levels"].values())  # groups were written
    done = run("report", source, out, "--spec", spec, "-o", tmp_path / "alone.json")
    assert done.exit_code == 0, done.output
    inside = json.loads((tmp_path / "inside.json").read_text())
    alone = json.loads((tmp_path / "alone.json").read_text())
    assert alone["utility"]["categorical"]["ncp"] == pytest.approx(inside["utility"]["categorical"]["ncp"])
    assert alone["utility"]["categorical"]["height"] == pytest.approx(inside["utility"]["categorical"]["height"])
    # a user-missing code published as itself (99 "Not stated") is unchanged, whether the release
    # spells it by its label in memory or holds it as the code in the file
    assert alone["utility"]["categorical"]["changed_share"] == pytest.approx(
        inside["utility"]["categorical"]["changed_share"])
    assert inside["utility"]["categorical"]["changed_share"]["workclass"] < 1.0
    measures = {line["measure"] for line in alone["verdict"]}
    assert {"weighted_highest_risk", "weighted_global_risk"} <= measures  # the spec's weight role
    assert not any("hold numbers in the original" in text for text in alone["assumptions"])
