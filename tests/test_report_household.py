"""The standalone report on the curator's labelled household survey (``tests/_household.py``):
the release written by ``incrowd publish`` (age and relat recoded with the curator's hierarchies,
cells blanked), read back from its .sav, measured by ``incrowd report`` as a user runs it. Every
count is checked against the written file read back with pyreadstat and against publish's own
summary; and a release of another file is refused, not measured."""

from __future__ import annotations

import json
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

import incrowd  # noqa: E402
from incrowd.cli import app  # noqa: E402
from incrowd.exceptions import DataError  # noqa: E402

DATA = data_dir()
pytestmark = pytest.mark.skipif(not (DATA / "testdata.csv").exists(), reason="benchmark data folder not found")

SPEC = """[privacy]
k = 3
max_suppression = "{max_suppression}"
suppression = "{suppression}"

[columns]
urbrur = "categorical"
water = "categorical"
sex = "categorical"
age = {{ role = "categorical", hierarchy = "hierarchies/age.csv" }}
relat = {{ role = "categorical", hierarchy = "hierarchies/relat.csv" }}
hhcivil = "categorical"
sampling_weight = "weight"

[levels]
age = 1
relat = 1
"""


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _published(folder: Path, suppression: str, privacy: str = "", max_suppression: str = "10%") -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    source = household.write_household(DATA, folder / "household.sav")
    household.write_hierarchies(folder / "hierarchies")
    spec = folder / "release.toml"
    text = SPEC.format(suppression=suppression, max_suppression=max_suppression)
    spec.write_text(text.replace("[columns]", f"{privacy}\n[columns]"), encoding="utf-8")
    out, report = folder / "release.sav", folder / "report.json"
    done = run("publish", source, "--spec", spec, "-o", out, "--report", report, "--json")
    assert done.exit_code == 0, done.output
    return {"source": source, "spec": spec, "release": out, "summary": json.loads(done.stdout),
            "report": json.loads(report.read_text(encoding="utf-8"))}


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    return _published(tmp_path_factory.mktemp("cells"), "cells")


@pytest.fixture(scope="module")
def any_cells(tmp_path_factory):
    # the curator's release: a blank matches any value, and water ends at its top
    return _published(tmp_path_factory.mktemp("any"), "cells",
                      'missing_matches = "any"\nmax_individual_risk = 0.1\nmax_global_risk = 0.0099', "5%")


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return _published(tmp_path_factory.mktemp("rows"), "rows")


def _report(made: dict, *more) -> dict:
    done = run("report", made["source"], made["release"], *more, "--json", "--quiet")
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def _read(path: Path) -> pd.DataFrame:
    return pyreadstat.read_sav(str(path), user_missing=True, apply_value_formats=False)[0]


# --------------------------------------------------------------------------------------------
# a blank is a suppressed cell when the spec says cells


def test_report_with_the_spec_reads_a_blank_as_a_suppressed_cell(cells):
    rep = _report(cells, "--spec", cells["spec"])
    written = _read(cells["release"])
    blanks = rep["utility"]["categorical"]["suppressed_cells"]
    # age in bands is written as a labelled numeric recode: its blank is system-missing in the file
    assert blanks["age"] == int(written["age"].isna().sum()) > 0
    assert blanks == cells["summary"]["suppressed_cells"]


@pytest.mark.parametrize("code, label", [(1000.0, None), (110.0, "1000-2000")],
                         ids=["unlabelled code", "label outside the hierarchy"])
def test_a_value_outside_the_hierarchy_is_named_without_a_numpy_repr(cells, tmp_path, code, label):
    # age is written as a labelled numeric recode (100 "0-9", ...): a value outside the hierarchy
    # is a code no band carries, or one labelled with a band the hierarchy does not hold
    release, meta = pyreadstat.read_sav(str(cells["release"]), user_missing=True, apply_value_formats=False)
    labels = dict(meta.variable_value_labels)
    assert code not in labels["age"]
    if label is not None:
        labels["age"] = {**labels["age"], code: label}
    release.loc[5, "age"] = code
    path = tmp_path / "edited.sav"
    pyreadstat.write_sav(release, str(path), variable_value_labels=labels, missing_ranges=meta.missing_ranges,
                         variable_measure=meta.variable_measure)
    done = run("report", cells["source"], path, "--spec", cells["spec"], "--json", "--quiet")
    assert done.exit_code == 2, done.output
    line = done.output.strip().splitlines()[-1]
    assert line.startswith("error: ") and len(done.output.strip().splitlines()) == 1
    assert "column 'age', data row 6" in line and f"'{int(code)}'" in line
    assert label is None or f"labelled '{label}'" in line
    assert "np." not in line and "Traceback" not in done.output


# --------------------------------------------------------------------------------------------
# without --spec: value-labelled and nominal codes are categories, not numbers


def test_report_without_spec_measures_labelled_codes_as_categories(cells):
    rep = _report(cells, "--qi", ",".join(household.KEYS))
    about = rep["about"]
    coded = ["urbrur", "water", "sex", "relat", "hhcivil"]
    assert set(coded) <= set(about["categorical"])
    assert not set(coded) & set(about["numeric"])
    lines = {line["measure"]: line for line in rep["verdict"]}
    assert "drisk" not in lines and "information_loss" not in lines
    assert not any("top-code" in (line.get("next_step") or "") for line in rep["verdict"])


def test_report_without_spec_keeps_a_scale_measure_numeric(tmp_path):
    frame = household.household_frame(DATA)
    source = household.write_household(DATA, tmp_path / "household.sav")
    release = frame.drop(columns=["ori_hid"])
    release["income"] = release["income"].round(-3)
    out = tmp_path / "release.csv"
    release.to_csv(out, index=False)
    done = run("report", source, out, "--qi", "sex,income", "--id", "ori_hid", "--json", "--quiet")
    assert done.exit_code == 0, done.output
    about = json.loads(done.stdout)["about"]
    assert about["numeric"] == ["income"] and about["categorical"] == ["sex"]


# --------------------------------------------------------------------------------------------
# one count, one vocabulary: the frequency tables, the blanked cells and the NCP


def _table(rep: dict, column: str) -> dict[str, dict]:
    rows = rep["utility"]["categorical"]["frequencies"][column]
    shown = [row.get("label", row["value"]) for row in rows]
    assert len(shown) == len(set(shown)), f"{column}: one value in two rows: {shown}"
    return {row.get("label", row["value"]): row for row in rows}


@pytest.mark.parametrize("made", ["rows", "cells"])
@pytest.mark.parametrize("how", ["publish --report", "report --spec"])
def test_frequency_tables_count_a_code_and_its_label_once(made, how, request):
    made = request.getfixturevalue(made)
    # publish's report holds the release as published (groups as labels), the standalone one
    # the written file (codes): the same table
    rep = made["report"] if how == "publish --report" else _report(made, "--spec", made["spec"])
    original, written = _read(made["source"]), _read(made["release"])
    relat = _table(rep, "relat")
    labels = {code: label for code, label in household.VALUE_LABELS["relat"].items()}
    child = relat["Child"]
    assert child["original"] == int((original["relat"] == 3).sum())
    codes = {label: code for code, label in
             pyreadstat.read_sav(str(made["release"]), metadataonly=True)[1].variable_value_labels["relat"].items()}
    assert child["release"] == int((written["relat"] == codes["Child"]).sum())
    # a code the recode grouped away is published in no row
    assert relat[labels[5]]["release"] == 0 and relat[labels[5]]["original"] == int((original["relat"] == 5).sum())


@pytest.mark.parametrize("how", ["publish --report", "report --spec"])
def test_user_missing_code_is_its_own_row_and_blanks_are_suppressed(cells, how):
    rep = cells["report"] if how == "publish --report" else _report(cells, "--spec", cells["spec"])
    original, written = _read(cells["source"]), _read(cells["release"])
    water = _table(rep, "water")
    not_stated = water[household.NOT_STATED_LABEL]
    assert not_stated["value"] == "9"
    assert not_stated["original"] == int((original["water"] == 9).sum()) > 0
    assert not_stated["release"] == int((written["water"] == 9).sum())
    blanked = int(written["water"].isna().sum())
    assert water["*"]["release"] == blanked == cells["summary"]["suppressed_cells"]["water"]
    assert "(missing)" not in water  # the household file has no system-missing water


def _same_counts_as_publish(made: dict) -> None:
    rep = _report(made, "--spec", made["spec"])
    categorical = rep["utility"]["categorical"]
    assert categorical["suppressed_cells"] == made["summary"].get(
        "suppressed_cells", dict.fromkeys(categorical["suppressed_cells"], 0))
    # the release summary's categorical_ncp, computed by the same function on the written file
    assert categorical["mean_ncp_all_rows"] == pytest.approx(made["summary"]["categorical_ncp"], abs=1e-12)
    # and publish's own report, on the release in memory, per column as the standalone one
    inside = made["report"]["utility"]["categorical"]
    assert inside["mean_ncp_all_rows"] == pytest.approx(made["summary"]["categorical_ncp"], abs=1e-12)
    assert inside["ncp"] == pytest.approx(categorical["ncp"], abs=1e-12)


def test_report_ncp_is_publish_summarys_with_recoded_groups_named_as_values(rows):
    # relat's group "Child" (Child and Grandchild) is written as Child's code: one node
    assert rows["summary"]["levels"]["relat"] == 1
    _same_counts_as_publish(rows)
    # and the height: "Not stated" over 9 and "Head" over 1 are at relat's level too
    rep = _report(rows, "--spec", rows["spec"])
    assert rep["utility"]["categorical"]["mean_height"] == pytest.approx(
        rows["summary"]["mean_generalization_height"], abs=1e-12)


def test_report_ncp_and_blanked_cells_are_publish_summarys_with_cells(cells):
    _same_counts_as_publish(cells)
    rep = _report(cells, "--spec", cells["spec"])
    assert rep["utility"]["categorical"]["mean_height"] == pytest.approx(
        cells["summary"]["mean_generalization_height"], abs=1e-12)


def test_report_ncp_of_a_grouped_column_with_blanks_costs_each_group_and_blank(cells):
    # relat at level 1, counted on the written file: a published group costs the share of the
    # nine values it covers (a group of one value nothing), a blank 1. Every published "Child"
    # is the group Child and Grandchild, also where the blanks took all its Grandchildren
    assert cells["summary"]["levels"]["relat"] == 1
    written = _read(cells["release"])
    size = pd.Series(household.RELAT_GROUPS).value_counts()
    labels = household.VALUE_LABELS["relat"]
    group = written["relat"].map(lambda code: np.nan if np.isnan(code) else household.RELAT_GROUPS[labels[int(code)]])
    cost = group.map(lambda g: 1.0 if not isinstance(g, str) else (size[g] / 9 if size[g] > 1 else 0.0))
    assert (written["relat"] == 3).any() and group.isna().any()
    rep = _report(cells, "--spec", cells["spec"])
    assert rep["utility"]["categorical"]["ncp"]["relat"] == pytest.approx(float(cost.mean()), abs=1e-12)


def test_report_counts_blanked_cells_as_publish_does(cells):
    rep = _report(cells, "--spec", cells["spec"])
    assert rep["utility"]["categorical"]["suppressed_cells"] == cells["summary"]["suppressed_cells"]


# --------------------------------------------------------------------------------------------
# a release whose blanks match any value is measured with that meaning


def _line(rep: dict, measure: str) -> dict:
    return next(line for line in rep["verdict"] if line["measure"] == measure)


def test_report_measures_k_with_a_blank_matching_any_value(any_cells):
    rep = _report(any_cells, "--spec", any_cells["spec"])
    written = _read(any_cells["release"])
    fewest = int(incrowd.values.match_counts(written, household.KEYS, missing_matches="any").min())
    assert written[household.KEYS].isna().any().any()  # blanks there are, and they match any value
    assert fewest >= 3
    k = _line(rep, "k")
    assert (k["value"], k["status"]) == (fewest, "pass")
    assert rep["risk"]["classes"]["records_below_k"] == 0
    assert _line(rep, "prosecutor_risk")["value"] == pytest.approx(1 / fewest)
    assert any('missing_matches = "any"' in line for line in rep["assumptions"])
    # publish's own report, on the release in memory, gives the same verdict
    assert [(line["measure"], line["status"]) for line in any_cells["report"]["verdict"]] == [
        (line["measure"], line["status"]) for line in rep["verdict"]]
    assert _line(any_cells["report"], "k")["value"] == fewest


def test_a_user_missing_code_matches_itself_not_any_value(any_cells):
    # 9 "Not stated" is a value the file shows, as publish's check read it, not a blank
    raw = _read(any_cells["release"])
    assert (raw["relat"] == household.NOT_STATED).any()
    counts = incrowd.values.match_counts(raw, household.KEYS, missing_matches="any")
    read = incrowd.io.read_table(any_cells["release"])
    assert np.array_equal(incrowd.values.match_counts(read, household.KEYS, missing_matches="any"), counts)
    rep = _report(any_cells, "--spec", any_cells["spec"])
    for made in (rep, any_cells["report"]):
        assert made["risk"]["classes"]["marketer"]["risk"] == pytest.approx(float(np.mean(1 / counts)), abs=1e-12)


def test_report_without_the_spec_says_a_blank_is_a_value_of_its_own(any_cells):
    rep = _report(any_cells, "--qi", ",".join(household.KEYS), "--k", "3")
    written = _read(any_cells["release"])
    smallest = int(incrowd.values.match_counts(written, household.KEYS).min())
    assert _line(rep, "k")["value"] == smallest < 3


def test_a_column_at_its_top_is_generalization_not_suppressed_cells(any_cells):
    summary = any_cells["summary"]
    assert summary["fully_suppressed"] == ["water"] and summary["suppressed_cells"]["water"] == 0
    for rep in (_report(any_cells, "--spec", any_cells["spec"]), any_cells["report"]):
        assert rep["utility"]["categorical"]["suppressed_cells"] == summary["suppressed_cells"]
        assert _line(rep, "fully_suppressed (water)")["status"] == "review"


# --------------------------------------------------------------------------------------------
# another file with the same row count is refused, not measured


def test_release_of_another_file_with_the_same_row_count_is_refused():
    frame = household.household_frame(DATA)
    other = frame.sample(frac=1.0, random_state=1).reset_index(drop=True)
    with pytest.raises(DataError, match=r"do not align.*release row 1 ") as caught:
        incrowd.report(frame, other, household.KEYS, figures=False)
    assert "of 4580 release rows" in str(caught.value)


def test_one_row_out_of_place_is_refused_naming_it():
    frame = household.household_frame(DATA)
    other = frame.copy()
    other.iloc[[10, 11]] = frame.iloc[[11, 10]].to_numpy()
    with pytest.raises(DataError, match=r"release row 11 .*'expend'"):
        incrowd.report(frame, other, household.KEYS, figures=False)


def test_wrong_kept_rows_are_refused():
    frame = household.household_frame(DATA)
    kept = np.arange(1, frame.shape[0])
    release = frame.iloc[kept].reset_index(drop=True)
    with pytest.raises(DataError, match="do not align"):
        incrowd.report(frame, release, household.KEYS, kept_rows=kept - 1, figures=False)
    rep = incrowd.report(frame, release, household.KEYS, kept_rows=kept, figures=False)
    assert rep.about["suppressed"] == 1


def test_cli_refuses_a_release_of_another_file_in_one_line(cells, tmp_path):
    other = _read(cells["source"]).sample(frac=1.0, random_state=2).reset_index(drop=True)
    path = tmp_path / "other.csv"
    other.to_csv(path, index=False)
    out = tmp_path / "report.json"
    done = run("report", cells["source"], path, "--qi", ",".join(household.KEYS), "-o", out)
    assert done.exit_code == 2
    assert done.output.startswith("error: ") and "do not align" in done.output
    assert "Traceback" not in done.output and not out.exists()


def test_a_column_published_as_star_counts_alike_in_memory_and_in_the_file(tmp_path):
    # relat at its top level: "*" in memory, a new code labelled "*" in the written file
    made = _published(tmp_path, "rows")
    spec = made["spec"].read_text(encoding="utf-8").replace("relat = 1", "relat = 2").replace(
        'suppression = "rows"', 'suppression = "rows"\nallow_full_suppression = true')
    made["spec"].write_text(spec, encoding="utf-8")
    done = run("publish", made["source"], "--spec", made["spec"], "-o", tmp_path / "top.sav", "--report",
               tmp_path / "top.json", "--json")
    assert done.exit_code == 0, done.output
    inside = json.loads((tmp_path / "top.json").read_text(encoding="utf-8"))["utility"]["categorical"]
    alone = _report({**made, "release": tmp_path / "top.sav"}, "--spec", made["spec"])["utility"]["categorical"]
    assert inside["suppressed_cells"]["relat"] == alone["suppressed_cells"]["relat"] > 0
    assert inside["suppressed_cells"] == alone["suppressed_cells"]


def test_a_bad_suppression_names_the_parameter():
    from incrowd.exceptions import ParameterError

    frame = household.household_frame(DATA)
    with pytest.raises(ParameterError, match="suppression must be 'rows' or 'cells'; got 'columns'"):
        incrowd.report(frame, frame, household.KEYS, suppression="columns", figures=False)
