"""A quasi-identifier published as one label in every row ("*" throughout): allowed by default,
as ARX's search lets a column reach its top when that loses least; ``allow_full_suppression =
false`` (in [privacy] or for the column) forbids it; the summary lists such a column and the
report's verdict gives it a "review" line with the next step."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))

import _household as household  # noqa: E402
from benchdata import data_dir  # noqa: E402

import incrowd  # noqa: E402
from incrowd.cli import app  # noqa: E402
from incrowd.exceptions import ParameterError  # noqa: E402
from incrowd.publishing import load_spec  # noqa: E402

DATA = data_dir()
needs_data = pytest.mark.skipif(not (DATA / "testdata.csv").exists(), reason="benchmark data folder not found")

# ten rows of each sex: at k = 11 only "*" makes a class, whatever age's microaggregation does
FRAME = pd.DataFrame({"age": np.arange(20.0), "sex": ["m", "f"] * 10})
PRIVACY = {"k": 11, "max_suppression": "100%"}
COLUMNS = {"age": "numeric", "sex": "categorical"}


def _verdict_line(report, measure):
    found = [v for v in report.verdict if v["measure"] == measure]
    return found[0] if found else None


@pytest.mark.parametrize("strategy", ["generalize-then-microaggregate", "joint"])
def test_a_column_reaches_its_top_by_default_and_is_listed(strategy):
    result = incrowd.publish(FRAME, {"privacy": {**PRIVACY, "strategy": strategy}, "columns": COLUMNS})
    assert set(result.table["sex"]) == {"*"} and result.suppressed == 0
    assert result.summary()["fully_suppressed"] == ["sex"]


@pytest.mark.parametrize("strategy", ["generalize-then-microaggregate", "joint"])
def test_allow_full_suppression_false_forbids_it_for_the_file_or_the_column(strategy):
    for spec in ({"privacy": {**PRIVACY, "strategy": strategy, "allow_full_suppression": False}, "columns": COLUMNS},
                 {"privacy": {**PRIVACY, "strategy": strategy},
                  "columns": {"age": "numeric", "sex": {"role": "categorical", "allow_full_suppression": False}}}):
        with pytest.raises(ParameterError, match="allow_full_suppression") as refused:
            incrowd.publish(FRAME, spec)
        assert "sex" in str(refused.value) and "\n" not in str(refused.value)
    # the column's own true wins over [privacy]'s false
    spec = {"privacy": {**PRIVACY, "strategy": strategy, "allow_full_suppression": False},
            "columns": {"age": "numeric", "sex": {"role": "categorical", "allow_full_suppression": True}}}
    assert incrowd.publish(FRAME, spec).summary()["fully_suppressed"] == ["sex"]


def test_the_spec_keeps_the_key_and_writes_only_a_forbidding_false():
    default = load_spec({"privacy": {"k": 2}, "columns": COLUMNS})
    assert default.allow_full_suppression is True
    assert "allow_full_suppression" not in default.to_dict()["privacy"]
    forbidding = load_spec({"privacy": {"k": 2, "allow_full_suppression": False}, "columns": COLUMNS})
    assert forbidding.allow_full_suppression is False
    assert forbidding.to_dict()["privacy"]["allow_full_suppression"] is False
    assert load_spec(forbidding.to_dict()) == forbidding
    with pytest.raises(ParameterError, match="allow_full_suppression must be true or false"):
        load_spec({"privacy": {"k": 2, "allow_full_suppression": "yes"}, "columns": COLUMNS})


def test_the_verdict_reviews_a_column_at_its_top_with_the_next_step():
    result = incrowd.publish(FRAME, {"privacy": PRIVACY, "columns": COLUMNS})
    report = incrowd.report(FRAME, result.table, figures=False, **result.report_options())
    line = _verdict_line(report, "fully_suppressed (sex)")
    assert line is not None, [v["measure"] for v in report.verdict]
    assert line["status"] == "review" and (line["value"], line["threshold"]) == (1, 2)
    assert "'*' in every one of the 20 rows" in line["driver"]
    # sex has no hierarchy: the step is to give it one, or to forbid the top
    assert "give it a hierarchy with intermediate levels" in line["next_step"]
    assert "set allow_full_suppression = false for sex" in line["next_step"]


def test_a_release_that_keeps_every_column_informative_has_no_such_line():
    frame = pd.DataFrame({"age": np.arange(20.0), "sex": ["m", "f"] * 10})
    result = incrowd.publish(frame, {"privacy": {"k": 5}, "columns": COLUMNS})
    assert result.summary()["fully_suppressed"] == []
    report = incrowd.report(frame, result.table, figures=False, **result.report_options())
    assert not [v for v in report.verdict if v["measure"].startswith("fully_suppressed")]


def test_the_cli_says_the_column_in_the_summary_and_the_report(tmp_path):
    source = tmp_path / "data.csv"
    FRAME.to_csv(source, index=False)
    spec = tmp_path / "spec.toml"
    spec.write_text('[privacy]\nk = 11\nmax_suppression = "100%"\n[columns]\nage = "numeric"\nsex = "categorical"\n')
    out, page = tmp_path / "out.csv", tmp_path / "report.html"
    done = CliRunner().invoke(app, ["publish", str(source), "--spec", str(spec), "-o", str(out), "--report",
                                    str(page), "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["fully_suppressed"] == ["sex"]
    assert "fully_suppressed (sex)" in page.read_text() and "allow_full_suppression = false" in page.read_text()
    spec.write_text(spec.read_text().replace("[privacy]\n", "[privacy]\nallow_full_suppression = false\n"))
    done = CliRunner().invoke(app, ["publish", str(source), "--spec", str(spec), "-o", str(tmp_path / "no.csv")])
    assert done.exit_code == 2 and done.output.startswith("error: ") and "sex" in done.output
    assert not (tmp_path / "no.csv").exists()


@needs_data
def test_the_household_survey_reaches_a_top_only_where_it_loses_least(tmp_path):
    """The curator's survey with age's ten-year bands free: a lower level qualifies, so the search
    stops there; with k high enough that only the top does, age is published as "*" and said,
    and the verdict's step names the lower level of its hierarchy."""
    source = household.write_household(DATA, tmp_path / "household.sav")
    household.write_hierarchies(tmp_path)
    columns = {"ori_hid": "other", household.WEIGHT: "weight", "sex": "categorical",
               "age": {"role": "categorical", "hierarchy": str(tmp_path / "age.csv")}}
    result = incrowd.publish(source, {"privacy": {"k": 20, "max_suppression": "1%"}, "columns": columns})
    assert result.summary()["levels"]["age"] == 1 and result.summary()["fully_suppressed"] == []
    # at k = 50 the bands of the old hold too few rows: "*" is the node that suppresses least
    result = incrowd.publish(source, {"privacy": {"k": 50, "max_suppression": "1%"}, "columns": columns})
    assert result.summary()["fully_suppressed"] == ["age"] and set(result.table["age"]) == {"*"}
    data = incrowd.read_table(source)
    report = incrowd.report(data, result.table, figures=False, **result.report_options())
    line = _verdict_line(report, "fully_suppressed (age)")
    assert line["status"] == "review" and "a lower level of age qualifies" in line["next_step"]


def test_a_standalone_report_finds_a_column_at_its_top_in_the_release_itself():
    """A release made elsewhere (no summary to name it): a quasi-identifier one label in every
    row while the original rows held several values is reviewed as well."""
    release = FRAME.assign(sex="*")
    report = incrowd.report(FRAME, release, ["age", "sex"], figures=False)
    line = _verdict_line(report, "fully_suppressed (sex)")
    assert line is not None and line["status"] == "review"
    # a column that held one value in the original tells as much as before: no line
    same = FRAME.assign(sex="m")
    assert _verdict_line(incrowd.report(same, same, ["age", "sex"], figures=False), "fully_suppressed (sex)") is None


def test_the_web_page_allows_it_by_default_as_the_spec_does():
    pytest.importorskip("fastapi")
    pytest.importorskip("multipart")
    from fastapi.testclient import TestClient

    from incrowd.web import create_app

    application = create_app(max_upload_mb=1)
    try:
        text = TestClient(application).get("/publish").text
    finally:
        application.state.sessions.close()
    box = re.search(r'<input id="allow-full-suppression"[^>]*>', text)
    assert box is not None and " checked" in box.group(0)
    assert "privacy.allow_full_suppression = false" in text  # sent only when the curator unticks it
