"""The risk and utility report as a whole: known answers on constructed releases, the
self-contained page, the CLI command and the ``--report`` option of the release commands."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import incrowd
from incrowd.cli import app
from incrowd.exceptions import DataError


def _frame(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"id": [f"p{i}" for i in range(n)], "age": rng.integers(20, 70, n).astype(float),
                         "income": rng.normal(3000, 500, n).round(0), "region": rng.choice(["n", "s"], n),
                         "diagnosis": rng.choice(["a", "b", "c"], n)})


def test_a_release_equal_to_the_original_links_every_record_and_loses_nothing():
    original = _frame()
    rep = incrowd.report(original, original.drop(columns=["id"]), ["age", "income"], identifiers=["id"],
                         figures=False)
    assert rep.risk["record_linkage"]["distance_based"] == pytest.approx(1.0)
    assert rep.utility["numeric"]["il"] == pytest.approx(0.0, abs=1e-12)


def test_one_class_for_all_rows_gives_risk_one_over_n():
    original = _frame()
    release = original.drop(columns=["id"]).assign(age=45.0, income=3000.0, region="*")
    rep = incrowd.report(original, release, ["age", "income", "region"], identifiers=["id"], figures=False)
    assert rep.risk["classes"]["n_classes"] == 1
    assert rep.risk["classes"]["prosecutor"]["highest"] == pytest.approx(1 / 40)


def test_one_sensitive_value_per_class_is_l_one():
    original = _frame()
    release = original.drop(columns=["id"]).copy()
    release["diagnosis"] = np.where(release["region"] == "n", "a", "b")  # one value per region class
    release[["age", "income"]] = 0.0
    rep = incrowd.report(original.assign(diagnosis=release["diagnosis"]), release, ["age", "income", "region"],
                         sensitive=["diagnosis"], identifiers=["id"], figures=False)
    disclosure = rep.risk["attribute_disclosure"]["diagnosis"]
    assert disclosure["distinct_l"] == 1
    assert disclosure["single_value_share"] == pytest.approx(1.0)


def test_the_page_is_self_contained_and_the_json_is_json(tmp_path):
    from incrowd.datasets import load_census

    census = load_census().head(300)
    release = incrowd.microaggregate(census, 3).table
    rep = incrowd.report(census, release, list(census.columns), k=3)
    page = rep.to_html(tmp_path / "report.html")
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == page
    assert "<script" not in page and "<link" not in page
    assert "https://" not in page
    assert set(__import__("re").findall(r"http://[^\"' >]+", page)) <= {"http://www.w3.org/2000/svg",
                                                                        "http://www.w3.org/1999/xlink"}
    assert page.count("<svg") >= 3
    data = json.loads(rep.to_json())
    assert set(data) >= {"risk", "utility", "assumptions", "about"}


def test_cli_report_writes_html_and_json_and_refuses_what_cannot_align(tmp_path):
    original = _frame()
    release = original.drop(columns=["id"]).assign(age=(original["age"] // 10) * 10.0)
    o, r = tmp_path / "original.csv", tmp_path / "release.csv"
    original.to_csv(o, index=False)
    release.to_csv(r, index=False)
    out = tmp_path / "report.json"
    done = CliRunner().invoke(app, ["report", str(o), str(r), "--qi", "age,income", "--id", "id",
                                    "--sensitive", "diagnosis", "-o", str(out), "--quiet"])
    assert done.exit_code == 0, done.output
    assert json.loads(out.read_text())["about"]["rows_release"] == 40
    short = tmp_path / "short.csv"
    release.iloc[:10].assign(region="x").to_csv(short, index=False)
    bad = tmp_path / "bad.html"
    for args, words in (([str(o), str(short), "--qi", "age"], "do not align"),
                        ([str(o), str(r), "--qi", "age,weight"], "'weight'"),
                        ([str(o), str(r), "--qi", "age,region", "--numeric", "region"], "not numeric")):
        done = CliRunner().invoke(app, ["report", *args, "-o", str(bad)])
        assert done.exit_code == 2, done.output
        assert "error:" in done.output and words in done.output
        assert not bad.exists()


def test_release_commands_write_the_report_beside_the_release(tmp_path):
    original = _frame(60)
    data = tmp_path / "data.csv"
    original.to_csv(data, index=False)
    out, rep = tmp_path / "out.csv", tmp_path / "report.json"
    done = CliRunner().invoke(app, ["microaggregate", str(data), "--k", "3", "--qi", "age,income", "--id", "id",
                                    "-o", str(out), "--report", str(rep), "--quiet"])
    assert done.exit_code == 0, done.output
    got = json.loads(rep.read_text())
    assert got["risk"]["classes"]["smallest_class"] >= 3
    assert got["release"]["k"] == 3
    spec = tmp_path / "release.toml"
    spec.write_text("[privacy]\nk = 3\nl = 2\n[columns]\nid = \"identifier\"\nage = \"numeric\"\n"
                    "region = \"categorical\"\ndiagnosis = \"sensitive\"\n")
    out2, rep2 = tmp_path / "out2.csv", tmp_path / "report2.json"
    done = CliRunner().invoke(app, ["publish", str(data), "--spec", str(spec), "-o", str(out2),
                                    "--report", str(rep2), "--quiet"])
    assert done.exit_code == 0, done.output
    got = json.loads(rep2.read_text())
    assert got["risk"]["attribute_disclosure"]["diagnosis"]["distinct_l"] >= 2
    assert got["release"]["strategy"] == "generalize-then-microaggregate"
    bad = tmp_path / "report.txt"
    done = CliRunner().invoke(app, ["microaggregate", str(data), "--k", "3", "--qi", "age", "--id", "id",
                                    "-o", str(tmp_path / "out3.csv"), "--report", str(bad)])
    assert done.exit_code == 2 and ".html or .json" in done.output
    assert not (tmp_path / "out3.csv").exists()


def test_report_refuses_a_sensitive_column_that_is_also_a_quasi_identifier():
    original = _frame()
    with pytest.raises(DataError, match="both quasi-identifier and sensitive"):
        incrowd.report(original, original, ["age", "region"], sensitive=["region"], figures=False)
