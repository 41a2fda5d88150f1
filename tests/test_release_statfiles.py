"""A survey file from SPSS or Stata, published as one release and read back with its labels."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from incrowd.cli import app
from test_statfiles import LABELS, dta, read_raw, sav  # noqa: F401  (fixtures)


@pytest.mark.parametrize("suffix", [".sav", ".dta"])
def test_publish_a_statistical_file_and_read_it_back_with_labels(sav, dta, tmp_path, suffix):  # noqa: F811
    source = dta if suffix == ".dta" else sav
    spec = tmp_path / "release.toml"
    spec.write_text('[privacy]\nk = 3\nmax_suppression = "20%"\n[columns]\nid = "identifier"\n'
                    'age = "numeric"\nincome = "numeric"\nsex = "categorical"\nregion = "other"\n')
    out = tmp_path / f"release{suffix}"
    done = CliRunner().invoke(app, ["publish", str(source), "--spec", str(spec), "-o", str(out), "--json"])
    assert done.exit_code == 0, done.output
    before, meta_before = read_raw(source)
    after, meta_after = read_raw(out)
    assert "id" not in after.columns
    # variable labels survive on every column that is still there
    for name in ("age", "income", "sex", "q1", "region"):
        assert meta_after.column_names_to_labels[name] == LABELS[name]
    # a column whose coding was kept keeps its value labels and its user-missing codes
    assert meta_after.variable_value_labels.get("q1") == meta_before.variable_value_labels["q1"]
    kept = before.drop(columns=["id"])
    info = json.loads(done.stdout)
    assert info["suppressed"] == 0  # two sexes in 30 rows: every class holds k rows as it is
    assert after["q1"].astype(str).tolist() == kept["q1"].astype(str).tolist()
    # sex was published as is or as "*": labels stay only when its values stayed
    if set(after["sex"].astype(str)) <= {"1.0", "2.0", "1", "2"}:
        assert meta_after.variable_value_labels.get("sex") == meta_before.variable_value_labels["sex"]
