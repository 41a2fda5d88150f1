"""SPSS, Stata and SAS files: read with their metadata, released, and written back.

The files are made here with pyreadstat: value labels, variable labels, user-missing codes
(SPSS 98/99 declared missing, Stata .a/.b), a string column and an integer code column.
"""

from __future__ import annotations

import glob
import json
import os
import sysconfig
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
import pytest
from typer.testing import CliRunner

from incrowd import microaggregate, read_table, verify_k_anonymity
from incrowd.cli import app
from incrowd.exceptions import DataError, ParameterError
from incrowd.io._tables import numeric_matrix, write_table

N = 30
LABELS = {"age": "Age in years", "income": "Monthly income", "sex": "Sex of respondent",
          "q1": "Satisfied with the service?", "region": "Region"}
VALUE_LABELS = {"sex": {1: "male", 2: "female"},
                "q1": {1: "yes", 2: "no", 3: "maybe", 98: "don't know", 99: "refused"},
                "income": {0: "no income"}}


def survey() -> pd.DataFrame:
    rng = np.random.default_rng(19)
    q1 = rng.choice([1.0, 2.0, 3.0, 98.0, 99.0], N)
    q1[:3] = [99.0, 98.0, 1.0]  # both user-missing codes surely occur
    return pd.DataFrame({
        "id": [f"r{i:03d}" for i in range(N)],
        "age": rng.integers(18, 80, N).astype(float),
        "income": rng.normal(3000, 800, N).round(0),
        "sex": rng.choice([1.0, 2.0], N),
        "q1": q1,
        "region": rng.choice(["north", "south", "east"], N),
    })


@pytest.fixture
def sav(tmp_path) -> Path:
    path = tmp_path / "survey.sav"
    pyreadstat.write_sav(survey(), path, file_label="Customer survey", column_labels=LABELS,
                         note="Wave 3, fieldwork in March",
                         variable_value_labels=VALUE_LABELS, missing_ranges={"q1": [98, 99]},
                         variable_measure={"sex": "nominal", "q1": "ordinal", "age": "scale"},
                         variable_format={"age": "F3.0", "sex": "F1.0"})
    return path


@pytest.fixture
def dta(tmp_path) -> Path:
    frame = survey()
    frame["q1"] = pd.Series([{98.0: "a", 99.0: "b"}.get(v, v) for v in frame["q1"]], dtype=object)
    labels = {**VALUE_LABELS, "q1": {1: "yes", 2: "no", 3: "maybe", "a": "don't know", "b": "refused"}}
    path = tmp_path / "survey.dta"
    pyreadstat.write_dta(frame, path, file_label="Customer survey", column_labels=LABELS,
                         variable_value_labels=labels, missing_user_values={"q1": ["a", "b"]},
                         variable_format={"age": "%3.0f"})
    return path


def read_raw(path: Path):
    reader = pyreadstat.read_dta if path.suffix == ".dta" else pyreadstat.read_sav
    return reader(str(path), user_missing=True)


def invoke(args):
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result


# ---------------------------------------------------------------------------------------------
# Reading


def test_read_sav_user_missing_counts_as_missing_and_metadata_is_json(sav):
    frame = read_table(sav)
    raw = survey()
    declared = raw["q1"].isin([98.0, 99.0]).to_numpy()
    assert frame["q1"].isna().to_numpy().tolist() == declared.tolist()
    assert frame["q1"][~declared].tolist() == raw["q1"][~declared].tolist()
    with pytest.raises(DataError, match="q1.*missing value"):
        numeric_matrix(frame, ["q1"])
    meta = json.loads(json.dumps(frame.attrs["statfile"]))  # a plain, JSON-serializable dict
    assert meta["format"] == "spss" and meta["file_label"] == "Customer survey"
    q1 = meta["columns"]["q1"]
    assert q1["label"] == LABELS["q1"]
    assert dict((str(c), t) for c, t in q1["value_labels"])["99.0"] == "refused"
    assert q1["missing"] == {"ranges": [[98.0, 98.0], [99.0, 99.0]]}
    assert meta["columns"]["sex"]["measure"] == "nominal"
    assert meta["columns"]["age"]["format"] == "F3.0"
    assert meta["columns"]["region"]["type"] == "string"


def test_read_dta_extended_missing_counts_as_missing(dta):
    frame = read_table(dta)
    declared = survey()["q1"].isin([98.0, 99.0]).to_numpy()
    assert frame["q1"].dtype == np.float64
    assert frame["q1"].isna().to_numpy().tolist() == declared.tolist()
    meta = frame.attrs["statfile"]
    assert meta["format"] == "stata"
    assert meta["columns"]["q1"]["missing"] == {"codes": ["a", "b"]}
    assert ["b", "refused"] in meta["columns"]["q1"]["value_labels"]


def test_read_xpt(tmp_path):
    path = tmp_path / "survey.xpt"
    frame = survey().drop(columns=["q1"])
    pyreadstat.write_xport(frame, path, column_labels=LABELS, file_label="Survey")
    got = read_table(path)
    assert got["age"].tolist() == frame["age"].tolist()
    assert got["region"].tolist() == frame["region"].tolist()
    assert got.attrs["statfile"]["columns"]["income"]["label"] == "Monthly income"


def _sas7bdat_sample() -> str | None:
    site = sysconfig.get_paths()["purelib"]
    for pattern in (os.path.join(site, "pandas/tests/io/sas/data/*.sas7bdat"),
                    "/usr/lib/R/site-library/haven/examples/*.sas7bdat",
                    "/usr/local/lib/R/site-library/haven/examples/*.sas7bdat"):
        found = sorted(glob.glob(pattern), key=os.path.getsize)
        if found:
            return found[0]
    return None


def test_read_sas7bdat():
    sample = _sas7bdat_sample()
    if sample is None:
        pytest.skip("pyreadstat cannot write sas7bdat and no sample file is installed "
                    "(pandas' test data or R haven's examples)")
    frame = read_table(sample)
    expected, _ = pyreadstat.read_sas7bdat(sample)
    assert frame.shape == expected.shape and frame.shape[0] > 0
    assert frame.attrs["statfile"]["format"] == "sas7bdat"
    pd.testing.assert_frame_equal(frame, expected, check_dtype=False)


def test_read_compressed_sav(sav, tmp_path):
    import gzip

    packed = tmp_path / "survey.sav.gz"
    packed.write_bytes(gzip.compress(sav.read_bytes()))
    assert read_table(packed)["age"].tolist() == survey()["age"].tolist()


# ---------------------------------------------------------------------------------------------
# Round trip of an untouched file


@pytest.mark.parametrize("suffix", [".sav", ".zsav", ".dta"])
def test_round_trip_keeps_values_labels_and_missing_definitions(sav, dta, tmp_path, suffix):
    source = dta if suffix == ".dta" else sav
    out = tmp_path / f"copy{suffix}"
    write_table(read_table(source), out, inputs=(source,))
    before, meta_before = read_raw(source)
    after, meta_after = read_raw(out)
    pd.testing.assert_frame_equal(after, before)
    for field in ("column_labels", "variable_value_labels", "missing_ranges", "missing_user_values",
                  "original_variable_types", "variable_measure", "variable_display_width",
                  "file_label", "notes"):
        assert getattr(meta_after, field) == getattr(meta_before, field), field


@pytest.mark.parametrize("suffix", [".sav", ".dta"])
def test_user_missing_codes_follow_their_rows(sav, dta, tmp_path, suffix):
    source = dta if suffix == ".dta" else sav
    frame = read_table(source)
    picked = [29, 0, 1, 2, 17, 5]
    out = tmp_path / f"subset{suffix}"
    write_table(frame.iloc[picked].reset_index(drop=True), out)
    before, _ = read_raw(source)
    after, _ = read_raw(out)
    assert after["q1"].tolist() == before["q1"].iloc[picked].tolist()


# ---------------------------------------------------------------------------------------------
# Releases through the command line


def _check_release(source: Path, out: Path, qis: list[str], k: int) -> None:
    before, meta_before = read_raw(source)
    after, meta_after = read_raw(out)
    assert list(after.columns) == ["age", "income", "sex", "q1", "region"]  # id dropped
    for name in ("sex", "q1", "region"):  # passed through: the very codes, user-missing included
        assert after[name].tolist() == before[name].tolist(), name
    assert meta_after.column_labels == [LABELS[c] for c in after.columns]
    assert meta_after.file_label == "Customer survey"
    for name in ("sex", "q1"):
        assert meta_after.variable_value_labels[name] == meta_before.variable_value_labels[name]
    assert "income" not in meta_after.variable_value_labels  # its codes were aggregated away
    assert meta_after.missing_ranges.get("q1") == meta_before.missing_ranges.get("q1")
    assert meta_after.missing_user_values.get("q1") == meta_before.missing_user_values.get("q1")
    assert verify_k_anonymity(after, qis, k).ok


@pytest.mark.parametrize("suffix", [".sav", ".dta"])
def test_cli_microaggregate_keeps_labels_and_user_missing(sav, dta, tmp_path, suffix):
    source = dta if suffix == ".dta" else sav
    out = tmp_path / f"released{suffix}"
    result = invoke(["microaggregate", source, "--k", "3", "--qi", "age,income", "--id", "id", "-o", out, "--json"])
    assert result.exit_code == 0, result.output
    _check_release(source, out, ["age", "income"], 3)
    after, meta = read_raw(out)
    before, _ = read_raw(source)
    expected = microaggregate(read_table(source), 3, quasi_identifiers=["age", "income"], identifiers=["id"])
    np.testing.assert_allclose(after[["age", "income"]].to_numpy(),
                               expected.table[["age", "income"]].to_numpy())
    assert after["age"].nunique() < before["age"].nunique()  # aggregated, not copied
    if suffix == ".sav":  # a centroid is not an integer: the input's F3.0 would hide its decimals
        assert meta.original_variable_types["age"] != "F3.0"
        assert meta.original_variable_types["sex"] == "F1.0"
        assert meta.variable_measure["sex"] == "nominal"


def test_cli_generalize_dta_keeps_labels_of_other_columns(dta, tmp_path):
    out = tmp_path / "generalized.dta"
    result = invoke(["generalize", dta, "--intervals", "age=10,20", "--levels", "age=1", "--k", "3",
                     "--id", "id", "-o", out, "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    before, meta_before = read_raw(dta)
    after, meta = read_raw(out)
    kept = [i for i in range(N) if i not in set(_suppressed_rows(before, info))]
    assert len(after) == N - info["suppressed"]
    assert after["q1"].tolist() == before["q1"].iloc[kept].tolist()
    assert meta.variable_value_labels["q1"] == meta_before.variable_value_labels["q1"]
    assert meta.missing_user_values["q1"] == ["a", "b"]
    assert meta.column_labels[0] == LABELS["age"]
    # generalized to intervals: a labelled numeric recode, each code labelled with its interval
    assert pd.api.types.is_numeric_dtype(after["age"])
    assert all("-" in meta.variable_value_labels["age"][v] for v in after["age"])
    assert verify_k_anonymity(after, ["age"], 3).ok


def _suppressed_rows(before: pd.DataFrame, info: dict) -> list[int]:
    decade = (before["age"] // 10).astype(int)
    sizes = decade.map(decade.value_counts())
    rows = [int(i) for i in np.flatnonzero(sizes.to_numpy() < 3)]
    assert len(rows) == info["suppressed"]
    return rows


def test_cli_sav_to_dta_keeps_labels(sav, tmp_path):
    out = tmp_path / "released.dta"
    result = invoke(["microaggregate", sav, "--k", "3", "--qi", "age,income", "--id", "id", "-o", out])
    assert result.exit_code == 0, result.output
    after, meta = read_raw(out)
    assert meta.variable_value_labels["sex"] == {1: "male", 2: "female"}
    assert meta.column_labels[-1] == "Region"
    # SPSS codes have no Stata equivalent: they stay missing, never become valid numbers
    declared = survey()["q1"].isin([98.0, 99.0]).to_numpy()
    assert after["q1"].isna().to_numpy().tolist() == declared.tolist()


# ---------------------------------------------------------------------------------------------
# Bad input and outputs incrowd does not write


def _bad_files(tmp_path: Path, sav: Path, dta: Path) -> dict[str, Path]:
    files = {}
    for suffix in (".sav", ".dta", ".sas7bdat", ".xpt"):
        path = tmp_path / f"text{suffix}"
        path.write_text("age,income\n30,2000\n41,3100\n", encoding="utf-8")
        files[f"text{suffix}"] = path
    for source in (sav, dta):
        data = source.read_bytes()
        for name, cut in (("half", len(data) // 2), ("tail", len(data) - 16)):
            path = tmp_path / f"{name}-{source.name}"
            path.write_bytes(data[:cut])
            files[path.name] = path
    return files


def test_corrupt_files_are_one_data_error(sav, dta, tmp_path):
    for name, path in _bad_files(tmp_path, sav, dta).items():
        with pytest.raises(DataError, match=f"cannot read .* file '{path}'") as info:
            read_table(path)
        assert "\n" not in str(info.value), name


def test_cli_corrupt_file_is_one_error_line_and_nothing_written(sav, dta, tmp_path):
    for name, path in _bad_files(tmp_path, sav, dta).items():
        out = tmp_path / f"out-{name}.sav"
        result = invoke(["microaggregate", path, "--k", "3", "--qi", "age,income", "-o", out])
        assert result.exit_code == 2, (name, result.output)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and str(path) in lines[0], (name, lines)
        assert "Traceback" not in result.output
        assert not out.exists()
        assert not list(tmp_path.glob(".out-*"))  # no temporary left behind


def test_unsupported_output_extension(sav, tmp_path):
    frame = read_table(sav)
    with pytest.raises(ParameterError, match=r"\.sas7bdat.*\.sav/\.zsav.*\.dta"):
        write_table(frame, tmp_path / "out.sas7bdat")
    out = tmp_path / "out.sas7bdat"
    result = invoke(["microaggregate", sav, "--k", "3", "--qi", "age,income", "-o", out])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and ".sas7bdat" in result.stderr
    assert not out.exists()
    with pytest.raises(ParameterError, match=r"compressed \.dta"):
        write_table(frame, tmp_path / "out.dta.gz")


def test_stata_refuses_a_name_it_cannot_hold(tmp_path):
    frame = pd.DataFrame({"hours-per-week": [40.0, 38.0], "age": [30.0, 41.0]})
    with pytest.raises(DataError, match="'hours-per-week' cannot be a Stata variable name"):
        write_table(frame, tmp_path / "out.dta")
    assert not (tmp_path / "out.dta").exists()


def test_help_lists_the_formats():
    for command in ("microaggregate", "generalize"):
        result = CliRunner().invoke(app, [command, "--help"], terminal_width=200)
        assert result.exit_code == 0
        text = " ".join(result.output.split())
        assert ".sav" in text and ".dta" in text and ".sas7bdat" in text, command


def test_dates_and_string_missing_values_round_trip(tmp_path):
    import datetime as dt

    source = tmp_path / "dates.sav"
    frame = pd.DataFrame({"visit": [dt.date(2020, 1, 2), dt.date(2021, 3, 4), None],
                          "answer": ["yes", "NA", "no"], "score": [1.5, 2.0, 3.25]})
    pyreadstat.write_sav(frame, source, missing_ranges={"answer": ["NA"]},
                         variable_format={"visit": "ADATE10"})
    got = read_table(source)
    # a categorical missing value is a value of its own: a declared text code stays its text
    assert got["answer"].tolist() == ["yes", "NA", "no"]
    out = tmp_path / "copy.sav"
    write_table(got, out)
    before, meta_before = read_raw(source)
    after, meta_after = read_raw(out)
    pd.testing.assert_frame_equal(after, before)
    assert meta_after.original_variable_types["visit"] == "ADATE10"
    assert meta_after.missing_ranges == meta_before.missing_ranges == {"answer": [{"lo": "NA", "hi": "NA"}]}


def test_write_xpt_keeps_variable_labels(sav, tmp_path):
    out = tmp_path / "copy.xpt"
    write_table(read_table(sav), out)
    after, meta = pyreadstat.read_xport(str(out))
    assert meta.column_labels == [LABELS.get(c) for c in survey().columns]
    assert after["age"].tolist() == survey()["age"].tolist()
    declared = survey()["q1"].isin([98.0, 99.0]).to_numpy()
    assert after["q1"].isna().to_numpy().tolist() == declared.tolist()  # missing, not 98/99


def test_program_reports_a_text_file_named_sav_in_one_line(tmp_path):
    import subprocess
    import sys

    bad = tmp_path / "survey.sav"
    bad.write_text("age,income\n30,2000\n41,3100\n", encoding="utf-8")
    out = tmp_path / "released.sav"
    done = subprocess.run([sys.executable, "-m", "incrowd.cli", "microaggregate", str(bad), "--k", "2",
                           "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: cannot read SPSS file '{bad}': it is damaged, truncated or in another format")
    assert done.stdout == "" and not out.exists()


def test_metadata_copies_are_cheap_and_marks_stay_with_their_frame(sav):
    import copy

    frame = read_table(sav)
    meta = frame.attrs["statfile"]
    # pandas deep-copies attrs into every derived frame and column: the per-column metadata
    # (thousands of labels in a real survey) is shared, not copied each time
    assert copy.deepcopy(meta)["columns"] is meta["columns"]
    assert frame["age"].attrs["statfile"]["columns"] is meta["columns"]
    subset = frame.iloc[:10]
    subset.attrs["statfile"]["changed"].append("q1")
    assert frame.attrs["statfile"]["changed"] == []
    assert json.loads(json.dumps(subset.attrs["statfile"]))["changed"] == ["q1"]
