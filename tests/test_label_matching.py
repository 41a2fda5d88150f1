"""How a labelled column meets its hierarchy, where the labels alone cannot say: two codes under
one value label matched by label (refused up front, naming both codes and the label), and a
hierarchy whose level 0 reads both as the codes and as the labels (refused where the two readings
generalize differently, unless ``match`` says which)."""

from __future__ import annotations

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


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def one_error_line(done, written: Path) -> str:
    assert done.exit_code == 2, done.output
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.output
    assert not written.exists()
    return lines[0]


@pytest.mark.skipif(not (DATA / "testdata.csv").exists(), reason="benchmark data folder not found")
@pytest.mark.parametrize("suffix", [".sav", ".csv", ".dta"])
def test_two_codes_sharing_a_value_label_are_refused_up_front_when_matched_by_label(tmp_path, suffix):
    """The curator's relat recode is written in labels; a file that labels code 4 "Other relative"
    as code 7 is would make the two one value to the hierarchy and two in the written file."""
    source = household.write_household(DATA, tmp_path / "household.sav")
    frame, meta = pyreadstat.read_sav(str(source), user_missing=True, apply_value_formats=False)
    labels = {**meta.variable_value_labels, "relat": {**meta.variable_value_labels["relat"], 4.0: "Other relative"}}
    shared = tmp_path / "shared.sav"
    pyreadstat.write_sav(frame, str(shared), variable_value_labels=labels, missing_ranges=meta.missing_ranges,
                         variable_measure=meta.variable_measure)
    household.write_hierarchies(tmp_path)
    spec = tmp_path / "spec.toml"
    spec.write_text('[privacy]\nk = 3\nmax_suppression = "10%"\n[columns]\n'
                    'relat = { role = "categorical", hierarchy = "relat.csv", match = "label" }\n'
                    'sex = "categorical"\nexpend = "numeric"\n')
    out = tmp_path / f"release{suffix}"
    line = one_error_line(run("publish", shared, "--spec", spec, "-o", out), out)
    assert "'relat'" in line and "codes 4 and 7 share the value label 'Other relative'" in line


def count_file(folder: Path) -> tuple[Path, Path]:
    """Children in the household coded 1 to 4 and labelled by their count ("0" to "3"), and a
    hierarchy written in counts 0 to 4: every code is a count too, so level 0 reads both ways."""
    rng = np.random.default_rng(5)
    n = 300
    frame = pd.DataFrame({"children": rng.integers(1, 5, n).astype(float), "income": rng.normal(1000, 200, n)})
    path = folder / "children.sav"
    pyreadstat.write_sav(frame, str(path),
                         variable_value_labels={"children": {1: "0", 2: "1", 3: "2", 4: "3"}})
    (folder / "children.csv").write_text("0;0-1;*\n1;0-1;*\n2;2+;*\n3;2+;*\n4;2+;*\n", encoding="utf-8")
    return path, folder / "children.csv"


def children_spec(folder: Path, match: str | None) -> Path:
    entry = f', match = "{match}"' if match else ""
    spec = folder / f"spec-{match}.toml"
    spec.write_text('[privacy]\nk = 3\n[levels]\nchildren = 1\n[columns]\n'
                    f'children = {{ role = "categorical", hierarchy = "children.csv"{entry} }}\nincome = "numeric"\n')
    return spec


def test_a_hierarchy_read_both_as_codes_and_as_labels_needs_match(tmp_path):
    source, _ = count_file(tmp_path)
    out = tmp_path / "release.sav"
    line = one_error_line(run("publish", source, "--spec", children_spec(tmp_path, None), "-o", out), out)
    assert "'children'" in line and "both by code and by value label" in line and "match" in line
    assert "code 2 is the row '2'" in line and "value label '1' the row '1'" in line


@pytest.mark.parametrize("match, band_of_code_2", [("code", "2+"), ("label", "0-1")])
def test_match_says_which_reading_of_such_a_hierarchy_is_taken(tmp_path, match, band_of_code_2):
    source, _ = count_file(tmp_path)
    out = tmp_path / "release.sav"
    done = run("publish", source, "--spec", children_spec(tmp_path, match), "-o", out)
    assert done.exit_code == 0, done.output
    released, meta = pyreadstat.read_sav(str(out), apply_value_formats=True)
    original, _ = pyreadstat.read_sav(str(source))
    assert (released["children"][original["children"] == 2] == band_of_code_2).all()


def test_two_user_missing_codes_sharing_a_label_are_refused_when_matched_by_label(tmp_path):
    """8 "Not stated" and 9 "Not stated", both declared missing: each is a value of its own in the
    written file, so matched by label they would be counted as one."""
    rng = np.random.default_rng(7)
    n = 300
    frame = pd.DataFrame({"tenure": rng.choice([1.0, 2.0, 8.0, 9.0], n), "income": rng.normal(1000, 200, n)})
    source = tmp_path / "tenure.sav"
    pyreadstat.write_sav(frame, str(source), missing_ranges={"tenure": [8.0, 9.0]},
                         variable_value_labels={"tenure": {1: "Owner", 2: "Tenant", 8: "Not stated", 9: "Not stated"}})
    (tmp_path / "tenure.csv").write_text("Owner;*\nTenant;*\nNot stated;*\n", encoding="utf-8")
    spec = tmp_path / "spec.toml"
    spec.write_text('[privacy]\nk = 3\n[columns]\ntenure = { role = "categorical", hierarchy = "tenure.csv" }\n'
                    'income = "numeric"\n')
    out = tmp_path / "release.sav"
    line = one_error_line(run("publish", source, "--spec", spec, "-o", out), out)
    assert "'tenure'" in line and "codes 8 and 9 share the value label 'Not stated'" in line
