"""An increment means what its state's rows mean: the curator's labelled household survey
(``tests/_household.py``) cut into a base and an increment, the increment rewritten as a careless
export would write it (codes labelled otherwise, another missing-value definition, another
measure, a coded column as text). Each is refused in one line naming the column, the state file
left as it was; an increment whose labels only add codes is adjoined and its labels released."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))

import _household as household  # noqa: E402
from benchdata import data_dir  # noqa: E402

from incrowd.cli import app  # noqa: E402

DATA = data_dir()
needs_data = pytest.mark.skipif(not (DATA / "testdata.csv").exists(), reason="benchmark data folder not found")
BASE_ROWS = 4000

pytestmark = needs_data


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def write_part(source: tuple[pd.DataFrame, object], path: Path, rows: slice, *, labels=None, missing=None,
               measures=None, frame: pd.DataFrame | None = None) -> Path:
    """Rows of the household file written as a .sav of their own, with the metadata given
    (the household file's where none is)."""
    full, meta = source
    part = (frame if frame is not None else full).iloc[rows]
    formats = {c: f for c, f in meta.original_variable_types.items()
               if not (frame is not None and pd.api.types.is_object_dtype(part[c].dtype))}
    pyreadstat.write_sav(part, str(path), column_labels=meta.column_labels,
                         variable_value_labels=labels if labels is not None else meta.variable_value_labels,
                         missing_ranges=missing if missing is not None else meta.missing_ranges,
                         variable_measure=measures if measures is not None else meta.variable_measure,
                         variable_format=formats)
    return path


def spec_file(folder: Path) -> Path:
    household.write_hierarchies(folder)
    path = folder / "spec.toml"
    path.write_text('[privacy]\nk = 3\nmax_suppression = "10%"\n[columns]\n'
                    'urbrur = "categorical"\nsex = "categorical"\nhhcivil = "categorical"\n'
                    'water = "categorical"\nage = { role = "categorical", hierarchy = "age.csv" }\n'
                    'relat = { role = "categorical", hierarchy = "relat.csv" }\n'
                    f'{household.WEIGHT} = "weight"\nexpend = "numeric"\n')
    return path


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The household file, its base part, and a state of each kind built on the base: one made
    by a release specification, one over numeric quasi-identifiers."""
    folder = tmp_path_factory.mktemp("household")
    source = household.write_household(DATA, folder / "household.sav")
    read = pyreadstat.read_sav(str(source), user_missing=True, apply_value_formats=False)
    base = write_part(read, folder / "base.sav", slice(0, BASE_ROWS))
    spec = spec_file(folder)
    states = {"spec": folder / "spec.duckdb", "numeric": folder / "numeric.duckdb"}
    done = run("incremental", "base", base, "-o", states["spec"], "--spec", spec)
    assert done.exit_code == 0, done.output
    done = run("incremental", "base", base, "-o", states["numeric"], "--k", 3, "--qi", "expend,income")
    assert done.exit_code == 0, done.output
    return {"folder": folder, "read": read, "states": states, "spec": spec}


def state_copy(made, kind: str, tmp_path: Path) -> Path:
    return Path(shutil.copy(made["states"][kind], tmp_path / f"{kind}.duckdb"))


def refused(made, kind: str, increment: Path, tmp_path: Path) -> str:
    """The add's one error line, after checking it left the state file byte for byte."""
    state = state_copy(made, kind, tmp_path)
    before = state.read_bytes()
    done = run("incremental", "add", state, increment)
    assert done.exit_code == 2, done.output
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.output
    assert "Traceback" not in done.output and "np.float64" not in done.output
    assert state.read_bytes() == before
    return lines[0]


KINDS = ["spec", "numeric"]


@pytest.mark.parametrize("kind", KINDS)
def test_an_increment_whose_value_labels_contradict_the_states_is_refused_naming_column_and_code(made, kind, tmp_path):
    labels = {**made["read"][1].variable_value_labels, "sex": {1.0: "Female", 2.0: "Male"}}
    increment = write_part(made["read"], tmp_path / "late.sav", slice(BASE_ROWS, None), labels=labels)
    line = refused(made, kind, increment, tmp_path)
    assert "'sex'" in line and "code 1 " in line and "'Female'" in line and "'Male'" in line


@pytest.mark.parametrize("kind", KINDS)
def test_an_increment_with_another_missing_value_definition_is_refused(made, kind, tmp_path):
    missing = {**made["read"][1].missing_ranges, "roof": [{"lo": 8.0, "hi": 9.0}]}
    increment = write_part(made["read"], tmp_path / "late.sav", slice(BASE_ROWS, None), missing=missing)
    line = refused(made, kind, increment, tmp_path)
    assert "'roof'" in line and "8 to 9" in line and "missing" in line


@pytest.mark.parametrize("kind", KINDS)
def test_an_increment_with_another_measure_is_refused(made, kind, tmp_path):
    measures = {**made["read"][1].variable_measure, "hhcivil": "ordinal"}
    increment = write_part(made["read"], tmp_path / "late.sav", slice(BASE_ROWS, None), measures=measures)
    line = refused(made, kind, increment, tmp_path)
    assert "'hhcivil'" in line and "'ordinal'" in line and "'nominal'" in line


@pytest.mark.parametrize("kind", KINDS)
def test_an_increment_holding_a_coded_column_as_text_is_refused(made, kind, tmp_path):
    frame = made["read"][0].copy()
    frame["sex"] = frame["sex"].map({1.0: "m", 2.0: "f"})
    labels = {c: v for c, v in made["read"][1].variable_value_labels.items() if c != "sex"}
    increment = write_part(made["read"], tmp_path / "late.sav", slice(BASE_ROWS, None), labels=labels, frame=frame)
    line = refused(made, kind, increment, tmp_path)
    assert "'sex'" in line and "text" in line and "numbers" in line


def test_an_increment_holding_a_coded_column_as_text_is_refused_in_python(made, tmp_path):
    from incrowd.exceptions import DataError
    from incrowd.incremental import IncrementalMicroaggregation
    from incrowd.io import read_table

    state = state_copy(made, "spec", tmp_path)
    late = read_table(write_part(made["read"], tmp_path / "late.sav", slice(BASE_ROWS, None)))
    late["sex"] = late["sex"].map({1.0: "m", 2.0: "f"})
    with pytest.raises(DataError, match=r"column 'sex' holds text in the increment \(data row 1: '[mf]'\) but numbers"):
        IncrementalMicroaggregation.open(state).add(late)


def test_an_increment_of_codes_as_csv_text_is_refused_naming_the_bases_format(made, tmp_path):
    """A CSV holds every code as text ("1.0"): adjoined to a .sav base, the released column would
    mix codes and text."""
    increment = tmp_path / "late.csv"
    made["read"][0].iloc[BASE_ROWS:].to_csv(increment, index=False)
    line = refused(made, "spec", increment, tmp_path)
    assert "column 'urbrur' holds text in the increment (data row 1: " in line
    assert "give it in the base's format, SPSS (.sav)" in line


@pytest.mark.parametrize("kind", KINDS)
def test_an_increment_that_only_adds_labelled_codes_is_adjoined_and_its_labels_released(made, kind, tmp_path):
    """A code the state has not seen, with its label, is no contradiction: the release labels it,
    and the base's labels stay."""
    frame = made["read"][0].copy()
    late = frame.index >= BASE_ROWS
    stone = late & (frame["roof"] == 4)
    frame.loc[stone, "roof"] = 7.0
    labels = {**made["read"][1].variable_value_labels, "roof": {**household.VALUE_LABELS["roof"], 7: "Stone"}}
    increment = write_part(made["read"], tmp_path / "late.sav", slice(BASE_ROWS, None), labels=labels, frame=frame)
    state = state_copy(made, kind, tmp_path)
    done = run("incremental", "add", state, increment)
    assert done.exit_code == 0, done.output
    out = tmp_path / "release.sav"
    done = run("incremental", "publish", state, "-o", out)
    assert done.exit_code == 0, done.output
    released, meta = pyreadstat.read_sav(str(out), user_missing=True, apply_value_formats=False)
    assert meta.variable_value_labels["roof"] == {**{float(c): t for c, t in household.VALUE_LABELS["roof"].items()},
                                                  7.0: "Stone"}
    assert (released["roof"] == 7).any()
    assert meta.variable_value_labels["sex"] == {1.0: "Male", 2.0: "Female"}


def test_user_missing_codes_of_an_increment_keep_their_code(made, tmp_path):
    """Both files declare 8 and 9 user-missing in walls; the base holds both codes, the
    increment only 9. Each release row shows the code its input row held (an increment's
    missing cells are numbered in its own list of codes, which here differs from the base's)."""
    frame, meta = made["read"][0].copy(), made["read"][1]
    frame.loc[frame.index[:BASE_ROWS:7], "walls"] = 8.0
    frame.loc[frame.index[1:BASE_ROWS:7], "walls"] = 9.0
    frame.loc[frame.index[BASE_ROWS::5], "walls"] = 9.0
    missing = {**meta.missing_ranges, "walls": [8.0, 9.0]}
    labels = {**meta.variable_value_labels, "walls": {**household.VALUE_LABELS["walls"], 8: "Refused"}}
    base = write_part(made["read"], tmp_path / "base.sav", slice(0, BASE_ROWS), labels=labels, missing=missing,
                      frame=frame)
    late = write_part(made["read"], tmp_path / "late.sav", slice(BASE_ROWS, None), labels=labels, missing=missing,
                      frame=frame)
    state = tmp_path / "state.duckdb"
    assert run("incremental", "base", base, "-o", state, "--k", 3, "--qi", "expend,income").exit_code == 0
    done = run("incremental", "add", state, late)
    assert done.exit_code == 0, done.output
    out = tmp_path / "release.sav"
    assert run("incremental", "publish", state, "-o", out).exit_code == 0
    released, _ = pyreadstat.read_sav(str(out), user_missing=True, apply_value_formats=False)
    assert (frame["walls"].iloc[BASE_ROWS:] == 9).any()
    np.testing.assert_array_equal(released["walls"].to_numpy(), frame["walls"].to_numpy())
