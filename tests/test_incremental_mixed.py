"""Incremental releases of mixed files: a release specification (``--spec``, ``spec=``) makes every
incremental release k-anonymous over numeric and categorical quasi-identifiers together, and a
statistical file's metadata (value labels, formats, measures, user-missing codes) is kept."""

from __future__ import annotations

import json
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))

import _survey_files as survey  # noqa: E402
from benchdata import data_dir  # noqa: E402

from incrowd.cli import app  # noqa: E402
from incrowd.exceptions import DataError, DataWarning, ParameterError  # noqa: E402
from incrowd.generalization import read_hierarchy  # noqa: E402
from incrowd.incremental import IncrementalMicroaggregation  # noqa: E402

DATA = data_dir()
needs_data = pytest.mark.skipif(not (DATA / "adult.csv.gz").exists() or not (DATA / "adult_arx").is_dir(),
                                reason="benchmark data folder not found")
QIS = ["age", "workclass", "education", "marital_status", "occupation", "race", "sex", "native_country"]


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def class_sizes(frame: pd.DataFrame, qis: list[str]) -> pd.Series:
    keys = frame[qis].astype(object).where(frame[qis].notna(), "<missing>").astype(str)
    return keys.groupby(qis).size()


def survey_spec(folder: Path, k: int = 5, suppression: str = "8%") -> Path:
    hierarchies = survey.write_hierarchies(folder, DATA)
    lines = [f'{c} = {{ role = "categorical", hierarchy = "{hierarchies[c].name}" }}' for c in QIS if c != "age"]
    path = folder / "spec.toml"
    path.write_text(f'[privacy]\nk = {k}\nmax_suppression = "{suppression}"\nallow_full_suppression = true\n'
                    '[columns]\nrespid = "identifier"\nage = "numeric"\nfnlwgt = "weight"\n' + "\n".join(lines) + "\n")
    return path


def split_sav(source: Path, folder: Path, sizes: tuple[int, ...]) -> list[Path]:
    """The labelled file cut into consecutive parts (each a labelled .sav of its own)."""
    frame, meta = pyreadstat.read_sav(str(source), user_missing=True, apply_value_formats=False)
    out, start = [], 0
    for i, size in enumerate(sizes):
        part = folder / f"part{i}.sav"
        pyreadstat.write_sav(frame.iloc[start:start + size], str(part), column_labels=meta.column_labels,
                             variable_value_labels=meta.variable_value_labels, missing_ranges=meta.missing_ranges,
                             variable_measure=meta.variable_measure, variable_format=meta.original_variable_types)
        out.append(part)
        start += size
    return out


# --------------------------------------------------------------------------------------------
# the acceptance run: base, two adds, a release after each step


@needs_data
@pytest.mark.slow
def test_every_incremental_release_of_a_labelled_sav_is_k_anonymous_over_all_qis_and_keeps_its_metadata(tmp_path):
    source = survey.write_sav(tmp_path / "adult.sav", DATA, n=2000)
    spec = survey_spec(tmp_path)
    base, late1, late2 = split_sav(source, tmp_path, (1400, 300, 300))
    state = tmp_path / "state.duckdb"
    _, src_meta = pyreadstat.read_sav(str(source), user_missing=True, apply_value_formats=False)

    done = run("incremental", "base", base, "-o", state, "--spec", spec)
    assert done.exit_code == 0, done.output
    releases = [tmp_path / "r0.sav"]
    assert run("incremental", "publish", state, "-o", releases[0]).exit_code == 0
    for i, part in enumerate((late1, late2), start=1):
        done = run("incremental", "add", state, part, "--spec", spec)
        assert done.exit_code == 0, done.output
        releases.append(tmp_path / f"r{i}.sav")
        report = tmp_path / f"r{i}.json"
        done = run("incremental", "publish", state, "-o", releases[-1], "--spec", spec, "--report", report)
        assert done.exit_code == 0, done.output
        assert "smallest class has" in done.output and "together" in done.output
        assert json.loads(report.read_text())["release"]  # the risk and utility report beside it

    levels = IncrementalMicroaggregation.open(state).describe()["levels"]
    unchanged = [c for c in QIS if c != "age" and levels[c] == 0]
    generalized = [c for c in QIS if c != "age" and levels[c] > 0]
    assert generalized, "the node generalizes no column: the test would not see a recode"
    rows = []
    for path in releases:
        frame, meta = pyreadstat.read_sav(str(path), user_missing=True, apply_value_formats=False)
        rows.append(frame.shape[0])
        assert "respid" not in frame.columns
        assert class_sizes(frame, QIS).min() >= 5  # joint k over all QIs, on the file as written
        for c in unchanged:  # codes and labels as in the input
            assert meta.variable_value_labels.get(c) == src_meta.variable_value_labels.get(c)
            assert set(frame[c].dropna()) <= set(src_meta.variable_value_labels[c])
        for c in generalized:  # labelled numeric recodes, not strings
            assert pd.api.types.is_float_dtype(frame[c])
            assert set(frame[c].dropna()) <= set(meta.variable_value_labels[c])
        for c in [*QIS, "fnlwgt", "income"]:
            assert meta.variable_measure[c] == src_meta.variable_measure[c]
            assert meta.column_names_to_labels[c] == src_meta.column_names_to_labels[c]
        for c in ["fnlwgt", "income", "relationship"]:  # pass-through columns: labels and formats kept
            assert meta.original_variable_types[c] == src_meta.original_variable_types[c]
            assert meta.variable_value_labels.get(c) == src_meta.variable_value_labels.get(c)
        # user-missing 99 stays declared and stored as 99 (not system missing)
        assert meta.missing_ranges.get("workclass") == src_meta.missing_ranges["workclass"]
        assert (frame["workclass"] == survey.NOT_STATED).any()
        assert meta.variable_value_labels["workclass"][float(survey.NOT_STATED)] == survey.NOT_STATED_LABEL
    assert rows[0] < rows[1] < rows[2] <= 2000
    assert rows[2] >= 2000 * 0.92  # waiting rows suppressed within max_suppression


@needs_data
@pytest.mark.slow
def test_the_base_release_is_the_release_publish_makes(tmp_path):
    """The base is published by publish's own code: the first incremental release of a labelled
    file is publish's release of the same rows, value for value and label for label."""
    source = survey.write_sav(tmp_path / "adult.sav", DATA, n=1000, seed=3)
    spec = survey_spec(tmp_path)
    state = tmp_path / "s.duckdb"
    assert run("incremental", "base", source, "-o", state, "--spec", spec).exit_code == 0
    assert run("incremental", "publish", state, "-o", tmp_path / "inc.sav").exit_code == 0
    assert run("publish", source, "--spec", spec, "-o", tmp_path / "pub.sav").exit_code == 0
    inc, inc_meta = pyreadstat.read_sav(str(tmp_path / "inc.sav"), user_missing=True)
    pub, pub_meta = pyreadstat.read_sav(str(tmp_path / "pub.sav"), user_missing=True)
    pd.testing.assert_frame_equal(inc, pub)
    assert inc_meta.variable_value_labels == pub_meta.variable_value_labels
    assert inc_meta.missing_ranges == pub_meta.missing_ranges


@needs_data
@pytest.mark.slow
def test_a_numeric_state_of_a_labelled_sav_keeps_labels_formats_and_user_missing_codes(tmp_path):
    """Without a spec too, the release of a .sav keeps the file's metadata: the pass-through
    columns' labels, formats, measures and user-missing codes (DuckDB keeps no NaN payload, so
    the state keeps the codes apart)."""
    source = survey.write_sav(tmp_path / "adult.sav", DATA, n=300, seed=1)
    state = tmp_path / "s.duckdb"
    done = run("incremental", "base", source, "-o", state, "--k", "5", "--qi", "age,hours_per_week", "--id", "respid")
    assert done.exit_code == 0, done.output
    assert run("incremental", "publish", state, "-o", tmp_path / "r.sav").exit_code == 0
    src, src_meta = pyreadstat.read_sav(str(source), user_missing=True, apply_value_formats=False)
    out, meta = pyreadstat.read_sav(str(tmp_path / "r.sav"), user_missing=True, apply_value_formats=False)
    assert (out["workclass"] == survey.NOT_STATED).sum() == (src["workclass"] == survey.NOT_STATED).sum() > 0
    for c in ["workclass", "sex", "education", "fnlwgt"]:
        pd.testing.assert_series_equal(out[c], src[c])  # byte for byte, rows in their order
        assert meta.variable_value_labels.get(c) == src_meta.variable_value_labels.get(c)
        assert meta.original_variable_types[c] == src_meta.original_variable_types[c]
        assert meta.variable_measure[c] == src_meta.variable_measure[c]
    assert meta.missing_ranges["workclass"] == src_meta.missing_ranges["workclass"]
    assert meta.variable_measure["age"] == "scale" and meta.column_names_to_labels["age"] == "Age in years"


# --------------------------------------------------------------------------------------------
# the spec travels with the state


def small_spec(folder: Path, k: int = 3, suppression: str = "50%") -> Path:
    (folder / "region.csv").write_text("north;N;*\nnortheast;N;*\neast;E;*\nsouth;S;*\nwest;S;*\n")
    path = folder / "spec.toml"
    path.write_text(f'[privacy]\nk = {k}\nmax_suppression = "{suppression}"\nallow_full_suppression = true\n'
                    '[columns]\nid = "identifier"\nage = "numeric"\n'
                    'region = { role = "categorical", hierarchy = "region.csv" }\nsex = "categorical"\n')
    return path


def small_frame(n: int, seed: int, start: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": np.arange(start, start + n),
        "age": rng.integers(18, 90, n).astype(float),
        "region": rng.choice(["north", "northeast", "east", "south", "west"], n),
        "sex": rng.choice(["F", "M"], n),
        "note": rng.choice(["a", "b"], n),
    })


def test_a_different_spec_or_a_changed_hierarchy_is_refused_in_one_line(tmp_path):
    spec = small_spec(tmp_path)
    state = tmp_path / "s.duckdb"
    small_frame(60, 0).to_csv(tmp_path / "base.csv", index=False)
    small_frame(20, 1, start=100).to_csv(tmp_path / "late.csv", index=False)
    assert run("incremental", "base", tmp_path / "base.csv", "-o", state, "--spec", spec).exit_code == 0
    before = state.read_bytes()
    other = tmp_path / "other"
    other.mkdir()
    done = run("incremental", "add", state, tmp_path / "late.csv", "--spec", small_spec(other, k=4))
    assert done.exit_code == 2
    assert "the spec differs from the one state file" in done.output and "[privacy]" in done.output
    assert "Traceback" not in done.output and state.read_bytes() == before
    (tmp_path / "region.csv").write_text("north;N;*\nnortheast;E;*\neast;E;*\nsouth;S;*\nwest;S;*\n")
    done = run("incremental", "publish", state, "-o", tmp_path / "r.csv")
    assert done.exit_code == 2 and "region.csv" in done.output and "changed since the base" in done.output
    assert not (tmp_path / "r.csv").exists()
    # what an incremental release does not do is said before any work
    with pytest.raises(ParameterError, match="suppresses rows"):
        IncrementalMicroaggregation.from_base(small_frame(30, 0), tmp_path / "t.duckdb", spec={
            "privacy": {"k": 3, "suppression": "cells"}, "columns": {"age": "numeric", "sex": "categorical"}})
    assert not (tmp_path / "t.duckdb").exists()
    with pytest.raises(ParameterError, match="spec names the roles"):
        IncrementalMicroaggregation.from_base(small_frame(30, 0), tmp_path / "t.duckdb", spec=spec,
                                              quasi_identifiers=["age"])


def test_a_late_row_joins_the_nearest_group_of_its_own_class(tmp_path):
    """Brute force on a small case: the row joins the nearest group whose generalized values
    cover its own, never a nearer group of another class."""
    spec = {"privacy": {"k": 2}, "columns": {"age": "numeric", "sex": "categorical"}, "levels": {"sex": 0}}
    base = pd.DataFrame({"age": [20.0, 21.0, 40.0, 41.0, 30.0, 31.0],
                         "sex": ["F", "F", "F", "F", "M", "M"]})
    session = IncrementalMicroaggregation.from_base(base, tmp_path / "s.duckdb", spec=spec)
    late = pd.DataFrame({"age": [30.5, 38.0], "sex": ["F", "M"]})
    session.add(late, "nn")
    table = session.publish().table
    # 30.5 (F) is nearest to M's group (30.5) but joins F's nearest, 20.5 (distance 10 < 10.5)
    ages = table["age"].to_numpy()
    assert ages[6] == pytest.approx(np.mean([20.0, 21.0, 30.5]))
    assert ages[7] == pytest.approx(np.mean([30.0, 31.0, 38.0]))  # the only M group
    assert class_sizes(table, ["age", "sex"]).min() >= 2


def test_rows_of_a_new_class_wait_until_k_of_them_form_a_group(tmp_path):
    spec = {"privacy": {"k": 3, "max_suppression": 2}, "columns": {"age": "numeric", "sex": "categorical"},
            "levels": {"sex": 0}}
    base = pd.DataFrame({"age": [20.0, 21.0, 22.0, 40.0, 41.0, 42.0], "sex": ["F"] * 6})
    session = IncrementalMicroaggregation.from_base(base, tmp_path / "s.duckdb", spec=spec)
    assert session.add(pd.DataFrame({"age": [50.0, 51.0], "sex": ["M", "M"]}), "nn")["waiting"] == 2
    assert session.publish().table.shape[0] == 6  # the two waiting rows are suppressed
    assert session.add(pd.DataFrame({"age": [52.0], "sex": ["M"]}), "nn")["waiting"] == 0
    table = IncrementalMicroaggregation.open(tmp_path / "s.duckdb").publish().table
    assert table.shape[0] == 9 and class_sizes(table, ["age", "sex"]).min() >= 3
    # more rows waiting than max_suppression allows: no release
    session.add(pd.DataFrame({"age": [60.0, 61.0, 62.0], "sex": ["X", "Y", "Z"]}), "nn")
    with pytest.raises(ParameterError, match="3 row\\(s\\) wait for k=3 rows of their class"):
        session.publish(tmp_path / "r.csv")
    assert not (tmp_path / "r.csv").exists()


def test_a_state_without_spec_warns_that_labelled_columns_pass_through_unprotected(tmp_path):
    frame = small_frame(30, 0)
    frame["region"] = frame["region"].map({"north": 1.0, "northeast": 2.0, "east": 3.0, "south": 4.0, "west": 5.0})
    frame.attrs["statfile"] = {"format": "spss", "columns": {"region": {
        "type": "double", "value_labels": [[1.0, "north"], [2.0, "northeast"]]}}}
    with pytest.warns(DataWarning, match="region carry value labels and pass through unchanged"):
        IncrementalMicroaggregation.from_base(frame, tmp_path / "s.duckdb", 3, quasi_identifiers=["age"],
                                              identifiers=["id"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a plain table: nothing to say
        IncrementalMicroaggregation.from_base(small_frame(30, 0), tmp_path / "t.duckdb", 3,
                                              quasi_identifiers=["age"], identifiers=["id"])


def test_an_increment_repeating_a_row_key_is_refused(tmp_path):
    session = IncrementalMicroaggregation.from_base(small_frame(30, 0), tmp_path / "s.duckdb",
                                                    spec=small_spec(tmp_path))
    with pytest.raises(DataError, match="identifier value 3 .* is already in the state"):
        session.add(small_frame(5, 1, start=3), "nn")


def test_a_row_added_twice_without_identifiers_is_refused_unless_allowed(tmp_path):
    spec = small_spec(tmp_path)
    spec.write_text(spec.read_text().replace('id = "identifier"\n', ""))
    base = small_frame(30, 0).drop(columns="id")
    late = small_frame(6, 1).drop(columns="id")
    base.to_csv(tmp_path / "base.csv", index=False)
    late.to_csv(tmp_path / "late.csv", index=False)
    state = tmp_path / "s.duckdb"
    assert run("incremental", "base", tmp_path / "base.csv", "-o", state, "--spec", spec).exit_code == 0
    assert run("incremental", "add", state, tmp_path / "late.csv", "--spec", spec).exit_code == 0
    before = state.read_bytes()
    # the same file again, and a base row typed another way (ages as integers): both recognised
    for again in (late, base.iloc[[4]].astype({"age": int})):
        again.to_csv(tmp_path / "again.csv", index=False)
        done = run("incremental", "add", state, tmp_path / "again.csv", "--spec", spec)
        assert done.exit_code == 2 and "already in state file" in done.output, done.output
        assert "increment data row 1" in done.output and "Traceback" not in done.output
        assert state.read_bytes() == before
    done = run("incremental", "add", state, tmp_path / "again.csv", "--spec", spec, "--allow-duplicates")
    assert done.exit_code == 0, done.output
    assert IncrementalMicroaggregation.open(state).describe()["rows"] == 37


# --------------------------------------------------------------------------------------------
# random mixed schedules


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 4), parts=st.lists(st.integers(1, 25), min_size=1, max_size=3),
       strategy=st.sampled_from(["nn", "nn-split-mid", "nn-split-end", "2mdav"]), missing=st.booleans())
def test_random_mixed_schedules_keep_every_release_k_anonymous_over_all_qis(seed, k, parts, strategy, missing):
    with tempfile.TemporaryDirectory() as folder:
        folder_path = Path(folder)
        spec = small_spec(folder_path, k=k, suppression="100%")
        if missing:  # missing ages are published by their pattern
            spec.write_text(spec.read_text() + '[missing]\nnumeric = "separate"\n')
        hierarchy = read_hierarchy(folder_path / "region.csv", "region")
        frames = [small_frame(40, seed)]
        start = 40
        for i, size in enumerate(parts):
            frames.append(small_frame(size, seed + i + 1, start=start))
            start += size
        if missing:
            for f in frames:
                f.loc[f.index % 7 == 3, "age"] = np.nan
        state = folder_path / "s.duckdb"
        session = IncrementalMicroaggregation.from_base(frames[0], state, spec=spec)
        seen = frames[0]
        for late in [None, *frames[1:]]:
            if late is not None:
                session = IncrementalMicroaggregation.open(state)  # as another process would
                report = session.add(late, strategy)
                seen = pd.concat([seen, late], ignore_index=True)
                assert report["waiting"] == int((session.labels < 0).sum())
            result = session.publish()
            table = result.table
            levels = session.describe()["levels"]
            kept = np.flatnonzero(session.labels >= 0)
            assert table.shape[0] == kept.size == seen.shape[0] - session.describe()["waiting"]
            assert class_sizes(table, ["age", "region", "sex"]).min() >= k
            # each published region covers the row's own (its ancestor at the node's level)
            own = seen["region"].to_numpy()[kept]
            expected = hierarchy.generalize(np.array([hierarchy.labels[0].tolist().index(v) for v in own]),
                                            levels["region"]) if levels["region"] else own
            assert table["region"].astype(str).tolist() == [str(v) for v in expected]
            # a numeric value is its group's mean, and the missing pattern is kept
            assert (table["age"].isna().to_numpy() == seen["age"].isna().to_numpy()[kept]).all()


# --------------------------------------------------------------------------------------------
# l and t


def sensitive_frame(n: int, seed: int, start: int = 0) -> pd.DataFrame:
    frame = small_frame(n, seed, start)
    rng = np.random.default_rng(seed + 1000)
    # a skewed sensitive column: many small groups hold one value only
    frame["income"] = rng.choice(["low", "mid", "high"], n, p=[0.7, 0.2, 0.1])
    return frame


def sensitive_spec(folder: Path, k: int, l: int | None, t: float | None) -> Path:
    spec = small_spec(folder, k=k, suppression="100%")
    text = spec.read_text().replace("[columns]\n", ("" if l is None else f"l = {l}\n")
                                    + ("" if t is None else f"t = {t}\n") + "[columns]\n")
    text += 'income = { role = "sensitive", ordered = ["low", "mid", "high"] }\n'
    spec.write_text(text)
    return spec


def check_release(table: pd.DataFrame, reference: pd.Series, k: int, l: int | None, t: float | None) -> None:
    """k, l and t of a release counted here, apart from incrowd's verifiers (t: the ordered EMD)."""
    qis = ["age", "region", "sex"]
    keys = table[qis].astype(str).agg("|".join, axis=1)
    assert keys.value_counts().min() >= k
    order = ["low", "mid", "high"]
    whole = reference.value_counts(normalize=True).reindex(order, fill_value=0.0).to_numpy()
    for _, rows in table.groupby(keys):
        values = rows["income"].astype(str)
        if l is not None:
            assert values.nunique() >= l
        if t is not None:
            own = values.value_counts(normalize=True).reindex(order, fill_value=0.0).to_numpy()
            emd = np.abs(np.cumsum(own - whole)[:-1]).sum() / (len(order) - 1)
            assert emd <= t + 1e-9


@pytest.mark.parametrize(("l", "t"), [(2, None), (None, 0.3), (2, 0.3)])
def test_every_incremental_release_keeps_l_and_t_on_the_written_file(tmp_path, l, t):
    spec = sensitive_spec(tmp_path, 3, l, t)
    frames = [sensitive_frame(60, 0), sensitive_frame(25, 1, start=100), sensitive_frame(25, 2, start=200)]
    for i, f in enumerate(frames):
        f.to_csv(tmp_path / f"part{i}.csv", index=False)
    state = tmp_path / "s.duckdb"
    done = run("incremental", "base", tmp_path / "part0.csv", "-o", state, "--spec", spec)
    assert done.exit_code == 0, done.output
    seen = frames[0]
    for i in range(3):
        if i:
            done = run("incremental", "add", state, tmp_path / f"part{i}.csv", "--spec", spec)
            assert done.exit_code == 0, done.output
            seen = pd.concat([seen, frames[i]], ignore_index=True)
        out = tmp_path / f"release{i}.csv"
        done = run("incremental", "publish", state, "-o", out, "--spec", spec, "--json")
        assert done.exit_code == 0, done.output
        assert "written file" in done.output
        table = pd.read_csv(out, dtype=str)
        assert 0 < table.shape[0] <= seen.shape[0]
        check_release(table, seen["income"], 3, l, t)
    done = run("incremental", "publish", state, "-o", tmp_path / "said.csv", "--spec", spec)
    assert done.exit_code == 0, done.output
    assert ("l-diverse" in done.output) == (l is not None) and ("t-close" in done.output) == (t is not None)
    assert "verified on the written file" in done.output


def test_an_incremental_release_names_each_model_its_written_file_met(tmp_path):
    spec = sensitive_spec(tmp_path, 3, 2, 0.3)
    sensitive_frame(60, 0).to_csv(tmp_path / "part0.csv", index=False)
    state = tmp_path / "s.duckdb"
    assert run("incremental", "base", tmp_path / "part0.csv", "-o", state, "--spec", spec).exit_code == 0
    done = run("incremental", "publish", state, "-o", tmp_path / "said.csv", "--spec", spec)
    assert done.exit_code == 0, done.output
    # the check's own records, per sensitive column: the figure each model reached
    assert "income: l-diverse (l=2), fewest distinct values per class" in done.output
    assert "income: t-close (t=0.3), largest distance" in done.output
    assert "(verified on the written file)" in done.output


def test_the_l_suppression_of_an_incremental_release_is_named_in_one_line(tmp_path):
    spec = {"privacy": {"k": 2, "l": 2, "max_suppression": 1},
            "columns": {"age": "numeric", "sex": "categorical", "income": "sensitive"}, "levels": {"sex": 0}}
    base = pd.DataFrame({"age": [20.0, 21.0, 40.0, 41.0], "sex": ["F"] * 4, "income": ["a", "b", "a", "b"]})
    session = IncrementalMicroaggregation.from_base(base, tmp_path / "s.duckdb", spec=spec)
    # two late M rows form their own group, of one income: it cannot merge in its class and fails l
    session.add(pd.DataFrame({"age": [50.0, 51.0], "sex": ["M", "M"], "income": ["a", "a"]}), "nn")
    with pytest.raises(ParameterError, match="2 row\\(s\\) are in groups that fail l or t"):
        session.publish(tmp_path / "r.csv")
    assert not (tmp_path / "r.csv").exists()
    # a late M row of another income: the class passes l, and nothing is suppressed
    session.add(pd.DataFrame({"age": [52.0], "sex": ["M"], "income": ["b"]}), "nn")
    table = session.publish(tmp_path / "r.csv").table
    assert table.shape[0] == 7
    assert table.groupby(["age", "sex"])["income"].nunique().min() >= 2


@pytest.mark.slow
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 4), l=st.sampled_from([None, 2]),
       t=st.sampled_from([None, 0.4]), parts=st.lists(st.integers(1, 25), min_size=1, max_size=2),
       strategy=st.sampled_from(["nn", "nn-split-end", "2mdav"]))
def test_random_schedules_keep_l_and_t_in_every_release(seed, k, l, t, parts, strategy):
    with tempfile.TemporaryDirectory() as folder:
        spec = sensitive_spec(Path(folder), k, l, t)
        frames = [sensitive_frame(40, seed)]
        start = 40
        for i, size in enumerate(parts):
            frames.append(sensitive_frame(size, seed + i + 1, start=start))
            start += size
        state = Path(folder) / "s.duckdb"
        try:
            session = IncrementalMicroaggregation.from_base(frames[0], state, spec=spec)
        except ParameterError:  # a base publish cannot make (all rows suppressed): nothing to follow
            return
        seen = frames[0]
        for late in [None, *frames[1:]]:
            if late is not None:
                session = IncrementalMicroaggregation.open(state)
                session.add(late, strategy)
                seen = pd.concat([seen, late], ignore_index=True)
            try:
                table = session.publish().table
            except ParameterError as exc:  # refused, never published broken
                assert "suppress" in str(exc)
                continue
            check_release(table.astype(str), seen["income"], k, l, t)
