"""publish with the spec's [[perturb]] steps: the curator's household file (labelled .sav) released
with its keys protected as before and income, expend, savings and roof perturbed; verified on the
written file read back through pyreadstat: every other column as given, the perturbed columns'
labels, user-missing codes and measures kept."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _household import KEYS, NOT_STATED, VALUE_LABELS, WEIGHT, write_hierarchies, write_household
from benchdata import data_dir
from typer.testing import CliRunner

from incrowd import publish
from incrowd.cli import app
from incrowd.exceptions import ParameterError
from incrowd.publishing import load_spec, spec_to_toml

pyreadstat = pytest.importorskip("pyreadstat")

pytestmark = pytest.mark.skipif(not (data_dir() / "testdata.csv").is_file(), reason="benchmark data not found")

PEER = Path(__file__).parent / "data" / "sdcmicro_perturbation_testdata.csv.gz"
NUMERIC = ["income", "expend", "savings"]
STEPS = """
[[perturb]]
columns = ["income", "expend", "savings"]
method = "microaggregation"
k = 3

[[perturb]]
columns = ["roof"]
method = "pram"
pd = 0.7
"""


def spec_text(steps: str = STEPS, perturbed: tuple[str, ...] = ("income", "expend", "savings", "roof")) -> str:
    columns = {"urbrur": '"categorical"', "water": '"categorical"', "sex": '"categorical"',
               "age": '{ role = "categorical", hierarchy = "h/age.csv", match = "code" }',
               "relat": '{ role = "categorical", hierarchy = "h/relat.csv", match = "label" }',
               "hhcivil": '"categorical"'}
    return ('[privacy]\nk = 3\nmax_suppression = "100%"\nsuppression = "cells"\n[columns]\n'
            + "".join(f"{c} = {columns[c]}\n" for c in KEYS) + f'{WEIGHT} = "weight"\nori_hid = "household"\n'
            + "".join(f'{c} = "perturb"\n' for c in perturbed) + steps)


def release(tmp_path: Path, text: str, name: str = "release.sav"):
    data = tmp_path / "household.sav"
    if not data.exists():
        write_household(data_dir(), data)
        write_hierarchies(tmp_path / "h")
    spec = tmp_path / f"{name}.toml"
    spec.write_text(text, encoding="utf-8")
    out = tmp_path / name
    done = CliRunner().invoke(app, ["publish", str(data), "--spec", str(spec), "-o", str(out), "--json"])
    return done, out


def test_the_household_release_perturbs_its_non_keys_and_keeps_everything_else(tmp_path):
    done, out = release(tmp_path, spec_text())
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    steps = summary["perturbation"]
    assert [s["method"] for s in steps] == ["microaggregation", "pram"]
    table, meta = pyreadstat.read_sav(str(out), user_missing=True)
    source, source_meta = pyreadstat.read_sav(str(tmp_path / "household.sav"), user_missing=True)
    # the keys are those of the same release without the steps
    plain, plain_out = release(tmp_path, spec_text(steps="", perturbed=()), "plain.sav")
    assert plain.exit_code == 0, plain.output
    keys, _ = pyreadstat.read_sav(str(plain_out), user_missing=True)
    pd.testing.assert_frame_equal(table[KEYS], keys[KEYS])
    # every column neither a key nor perturbed: the input's, cell for cell
    for c in ["walls", "electcon", "ori_hid", WEIGHT, "household_weights"]:
        pd.testing.assert_series_equal(table[c], source[c], check_names=False)
    # microaggregation of the numVars: sdcMicro's, cell for cell (no row is suppressed)
    peer = pd.read_csv(PEER, comment="#")
    for c in NUMERIC:
        np.testing.assert_allclose(table[c].to_numpy(float), peer[f"microaggregation_{c}"], rtol=1e-12)
    # PRAM: roof's values among its codes, its user-missing code 9 kept and declared, its labels kept
    changed = (table["roof"] != source["roof"]).sum()
    assert changed == steps[1]["cells_changed"] > 0
    not_stated = source["roof"] == NOT_STATED
    assert (table["roof"][not_stated] == NOT_STATED).all()
    assert (table["roof"][~not_stated] != NOT_STATED).all()
    assert set(table["roof"]) <= set(VALUE_LABELS["roof"])
    for c in ["roof", *NUMERIC]:
        assert meta.variable_value_labels.get(c) == source_meta.variable_value_labels.get(c)
        assert meta.missing_ranges.get(c) == source_meta.missing_ranges.get(c)
        assert meta.variable_measure[c] == source_meta.variable_measure[c]
        assert meta.column_names_to_labels[c] == source_meta.column_names_to_labels[c]


def test_the_summary_has_a_line_per_step(tmp_path):
    data = write_household(data_dir(), tmp_path / "household.sav")
    write_hierarchies(tmp_path / "h")
    (tmp_path / "spec.toml").write_text(spec_text(), encoding="utf-8")
    done = CliRunner().invoke(app, ["publish", str(data), "--spec", str(tmp_path / "spec.toml"),
                                    "-o", str(tmp_path / "r.sav")])
    assert done.exit_code == 0, done.output
    lines = [line for line in done.output.splitlines() if line.lstrip().startswith("perturb")]
    assert len(lines) == 2
    assert "microaggregation of income, expend, savings" in lines[0] and "pram of roof" in lines[1]


def test_strata_and_a_spec_written_back(tmp_path):
    steps = '[[perturb]]\ncolumns = ["income"]\nmethod = "rank_swap"\np = 10\nrandom_state = 3\n'
    text = spec_text(steps, ("income",)).replace('ori_hid = "household"', 'ori_hid = "household"\nurbrur_copy = "strata"')
    from incrowd import read_table

    frame = read_table(write_household(data_dir(), tmp_path / "household.sav"))
    frame["urbrur_copy"] = frame["urbrur"]
    write_hierarchies(tmp_path / "h")
    result = publish(frame, text, base_dir=tmp_path)
    for _, part in frame.groupby("urbrur_copy"):  # each stratum keeps its own values
        assert np.array_equal(np.sort(result.table.loc[part.index, "income"].astype(float)),
                              np.sort(part["income"].astype(float)))
    again = load_spec(spec_to_toml(result.spec.to_dict()), base_dir=tmp_path)
    assert [dict(s.given) for s in again.perturb] == [dict(s.given) for s in result.spec.perturb]
    assert again.perturb == result.spec.perturb


@pytest.mark.parametrize("steps, perturbed, message", [
    ('[[perturb]]\ncolumns = ["income"]\nmethod = "noise"\namount = "lots"\n', ("income",),
     r'\[\[perturb\]\] step 1 \(noise\): amount must be a number > 0; got \'lots\''),
    ('[[perturb]]\ncolumns = ["walls"]\nmethod = "pram"\n', ("income",),
     r"step 1 \(pram\) changes 'walls' \(not in \[columns\]\); a perturbed column has the role \"perturb\""),
    ('[[perturb]]\ncolumns = ["sex"]\nmethod = "pram"\n', ("income",),
     r"changes 'sex' \(categorical\)"),
    ('[[perturb]]\ncolumns = ["income"]\nmethod = "smudge"\n', ("income",),
     r"step 1: method must be one of bottom_code, microaggregation, noise"),
    ('[perturb]\ncolumns = ["income"]\n', ("income",), r"perturb must be a list of steps"),
    ('[[perturb]]\ncolumns = ["income"]\nmethod = "round"\n', ("income", "expend"),
     r"\['expend'\] have the role \"perturb\" but no \[\[perturb\]\] step changes them"),
])
def test_a_bad_step_is_one_error_line(tmp_path, steps, perturbed, message):
    with pytest.raises(ParameterError, match=message):
        load_spec(spec_text(steps, perturbed), base_dir=tmp_path)
    done, _ = release(tmp_path, spec_text(steps, perturbed))
    assert done.exit_code == 2
    assert done.output.startswith("error: ") and done.output.count("\n") == 1


def test_the_report_aligns_a_release_whose_non_keys_were_perturbed(tmp_path):
    data = write_household(data_dir(), tmp_path / "household.sav")
    write_hierarchies(tmp_path / "h")
    (tmp_path / "spec.toml").write_text(spec_text(), encoding="utf-8")
    report = tmp_path / "report.html"
    done = CliRunner().invoke(app, ["publish", str(data), "--spec", str(tmp_path / "spec.toml"),
                                    "-o", str(tmp_path / "r.sav"), "--report", str(report)])
    assert done.exit_code == 0, done.output
    # the report says which columns it did not use to align the files
    assert "perturbed column(s)" in report.read_text(encoding="utf-8")


def test_an_incremental_release_refuses_perturbation_steps(tmp_path):
    from incrowd.incremental import IncrementalMicroaggregation

    frame = pd.DataFrame({"age": [20, 30, 40, 50, 60, 70], "income": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    spec = ('[privacy]\nk = 2\n[columns]\nage = "numeric"\nincome = "perturb"\n'
            '[[perturb]]\ncolumns = ["income"]\nmethod = "round"\nbase = 2\n')
    with pytest.raises(ParameterError, match=r"an incremental release does not apply \[\[perturb\]\] steps"):
        IncrementalMicroaggregation.from_base(frame, tmp_path / "state.duckdb", spec=spec)
    assert not (tmp_path / "state.duckdb").exists()
