"""The curator's labelled household survey (``tests/_household.py``) published with age in
ten-year bands: in .sav and .dta the banded age is a labelled numeric recode as a coded column
is, read back with pyreadstat as a user reads it; "*" is labelled only where a cell holds it; a
blanked cell is system-missing; the user-missing codes of the other columns are untouched."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
import pytest

sys.path.insert(0, str(Path(__file__).parent))

import _household as household  # noqa: E402
from benchdata import data_dir  # noqa: E402

import incrowd  # noqa: E402

DATA = data_dir()
pytestmark = pytest.mark.skipif(not (DATA / "testdata.csv").exists(), reason="benchmark data folder not found")
BANDS = [f"{lo}-{hi}" for lo, hi in household.AGE_BANDS]
READERS = {".sav": pyreadstat.read_sav, ".dta": pyreadstat.read_dta}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("household")
    source = household.write_household(DATA, folder / "household.sav")
    household.write_hierarchies(folder)
    return folder, source


def _spec(folder: Path, age_level: int | None = 1, **privacy) -> dict:
    columns = {"ori_hid": "other", household.WEIGHT: "weight", "urbrur": "categorical", "sex": "categorical",
               "hhcivil": "categorical",
               "age": {"role": "categorical", "hierarchy": str(folder / "age.csv")},
               "relat": {"role": "categorical", "hierarchy": str(folder / "relat.csv")}}
    spec: dict = {"privacy": {"k": 3, "max_suppression": "10%", **privacy}, "columns": columns}
    if age_level is not None:
        spec["levels"] = {"age": age_level}
    return spec


def _read(path: Path):
    return READERS[path.suffix](str(path), user_missing=True, apply_value_formats=False)


def _through_labels(values: pd.Series, labels: dict) -> list:
    return [None if pd.isna(v) else labels.get(v, v) for v in values]


@pytest.mark.parametrize("suffix", [".sav", ".dta"])
def test_age_in_bands_is_written_as_a_labelled_numeric_recode(files, tmp_path, suffix):
    folder, source = files
    result = incrowd.publish(source, _spec(folder))
    assert result.summary()["levels"]["age"] == 1
    out = tmp_path / f"release{suffix}"
    result.write(out)
    written, meta = _read(out)
    assert pd.api.types.is_numeric_dtype(written["age"]), written["age"].dtype
    labels = meta.variable_value_labels["age"]
    # every band of the hierarchy is labelled; no cell is "*", so no code is labelled "*"
    assert "*" not in labels.values()
    # new codes from one above the largest number the hierarchy lists (the ages 0 to 99), in its order
    assert labels == {100.0 + i: band for i, band in enumerate(BANDS)}
    # through its labels the file is the release in memory, every cell a band
    assert _through_labels(written["age"], labels) == result.table["age"].tolist()
    assert set(written["age"]) <= set(labels)
    assert meta.column_names_to_labels["age"] == household.VARIABLE_LABELS["age"]
    if suffix == ".sav":
        assert meta.variable_measure["age"] == "ordinal"  # bands are ordered
        assert meta.original_variable_types["age"].startswith("F")
    # the columns passed through keep their labels; in .sav their user-missing code 9 "Not
    # stated" is untouched (written to Stata it is a missing cell, as docs/publishing.md says)
    before, meta_before = _read(source)
    kept = before.iloc[result.kept_rows].reset_index(drop=True)
    for name in ("roof", "walls", "water"):
        assert meta.variable_value_labels[name] == meta_before.variable_value_labels[name], name
        if suffix == ".sav":
            assert written[name].tolist() == kept[name].tolist(), name
            assert meta.missing_ranges[name] == [{"lo": 9.0, "hi": 9.0}], name
    if suffix == ".sav":
        assert (written[["roof", "walls", "water"]] == 9).any().any()


def test_a_release_of_a_frame_without_metadata_writes_bands_as_labelled_codes(files, tmp_path):
    folder, _ = files
    frame = household.household_frame(DATA)  # a CSV's columns: numbers, no labels, no measures
    spec = _spec(folder)
    spec["columns"]["relat"] = "other"  # its hierarchy names labels, which a CSV does not hold
    result = incrowd.publish(frame, spec)
    out = tmp_path / "release.sav"
    result.write(out)
    written, meta = _read(out)
    assert pd.api.types.is_numeric_dtype(written["age"])
    assert _through_labels(written["age"], meta.variable_value_labels["age"]) == result.table["age"].tolist()


def test_blanked_age_cells_are_system_missing_not_blank_text(files, tmp_path):
    folder, source = files
    spec = _spec(folder, suppression="cells", importance={"age": 5, "sex": 1, "urbrur": 1, "hhcivil": 1, "relat": 1})
    result = incrowd.publish(source, spec)
    blanked = result.summary()["suppressed_cells"]["age"]
    assert blanked > 0
    for suffix in (".sav", ".dta"):
        out = tmp_path / f"release{suffix}"
        result.write(out)
        written, meta = _read(out)
        assert pd.api.types.is_numeric_dtype(written["age"]), suffix
        assert int(written["age"].isna().sum()) == blanked, suffix
        assert _through_labels(written["age"], meta.variable_value_labels["age"]) == \
            [None if pd.isna(v) else v for v in result.table["age"]], suffix


@pytest.mark.parametrize("suffix", [".sav", ".dta", ".csv", ".parquet", ".xpt"])
def test_age_at_its_top_is_labelled_star_and_verified_in_every_format(files, tmp_path, suffix):
    folder, source = files
    result = incrowd.publish(source, _spec(folder, age_level=2))
    assert set(result.table["age"]) == {"*"} and "age" in result.summary()["fully_suppressed"]
    out = tmp_path / f"release{suffix}"
    result.write(out)  # verified k-anonymous on the file as read back
    assert result.verification["verified_on"] == "written file"
    if suffix in READERS:
        written, meta = _read(out)
        labels = meta.variable_value_labels["age"]
        assert pd.api.types.is_numeric_dtype(written["age"]) and written["age"].nunique() == 1
        assert labels[written["age"].iloc[0]] == "*"
        assert list(labels.values()).count("*") == 1


def test_relat_grouped_keeps_not_stated_user_missing(files, tmp_path):
    folder, source = files
    result = incrowd.publish(source, {**_spec(folder), "levels": {"age": 1, "relat": 1}})
    out = tmp_path / "release.sav"
    result.write(out)
    written, meta = _read(out)
    labels = meta.variable_value_labels["relat"]
    assert labels[9.0] == household.NOT_STATED_LABEL and meta.missing_ranges["relat"] == [{"lo": 9.0, "hi": 9.0}]
    assert "*" not in labels.values()
    assert _through_labels(written["relat"], labels) == \
        [household.NOT_STATED_LABEL if isinstance(v, float) and np.isnan(v) else v for v in result.table["relat"]]
