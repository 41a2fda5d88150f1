"""The risk-utility map: each point is the release its spec makes, re-made and measured."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import incrowd
from incrowd.cli import app
from incrowd.exceptions import ParameterError
from incrowd.reporting._map import point_of


def _data(n=240, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(20, 70, n), "region": rng.choice(["n", "s", "e", "w"], n),
                         "sex": rng.choice(["m", "f"], n), "income": rng.choice(["lo", "hi"], n)})


def _spec(tmp_path):
    (tmp_path / "region.csv").write_text("n;ns;*\ns;ns;*\ne;ew;*\nw;ew;*\n")
    (tmp_path / "sex.csv").write_text("m;*\nf;*\n")
    return {"privacy": {"k": 4, "max_suppression": "5%"},
            "columns": {"age": "numeric", "region": {"role": "categorical", "hierarchy": str(tmp_path / "region.csv")},
                        "sex": {"role": "categorical", "hierarchy": str(tmp_path / "sex.csv")}, "income": "sensitive"}}


@pytest.mark.slow
def test_every_point_is_the_release_its_spec_makes(tmp_path):
    data, spec = _data(), _spec(tmp_path)
    result = incrowd.publish(data, spec)
    rep = incrowd.report(data, result.table, figures=True, spec=spec, risk_utility_map=True,
                         **result.report_options())
    points = rep.risk_utility_map
    labels = [p["label"] for p in points]
    assert labels[0] == "release" and "k = 3" in labels and "k = 5" in labels
    assert any("level" in label for label in labels)
    # the release's point is the report's own marketer risk, and the summary's losses
    assert points[0]["risk"] == pytest.approx(rep.risk["classes"]["marketer"]["risk"])
    summary = result.summary()
    assert points[0]["loss"] == pytest.approx((summary["numeric_information_loss"] + 2 * summary["categorical_ncp"]) / 3)
    for p in points:
        made = incrowd.publish(data, p["spec"])  # the printed spec makes that point
        risk, loss = point_of(made.summary())
        assert (p["risk"], p["loss"]) == pytest.approx((risk, loss)), p["label"]
        measured = incrowd.report(data, made.table, figures=False, **made.report_options())
        assert p["risk"] == pytest.approx(measured.risk["classes"]["marketer"]["risk"])
    up = [p for p in points if p["label"].startswith("region level")]
    assert all(p["spec"]["levels"]["region"] != summary["levels"]["region"] for p in up)
    page = rep.to_html()
    assert "id=risk-utility-map" in page and "id=figure-map" in page
    assert json.loads(rep.to_json())["risk_utility_map"][0]["label"] == "release"


def test_the_map_needs_the_spec():
    with pytest.raises(ParameterError, match="needs the release's spec"):
        incrowd.report(_data(), _data(), ["age"], risk_utility_map=True, figures=False)


@pytest.mark.slow
def test_cli_map_prints_each_point_and_refuses_without_spec(tmp_path):
    data = _data()
    spec = _spec(tmp_path)
    (tmp_path / "release.toml").write_text(
        '[privacy]\nk = 4\nmax_suppression = "5%"\n\n[columns]\nage = "numeric"\n'
        'region = { role = "categorical", hierarchy = "region.csv" }\n'
        'sex = { role = "categorical", hierarchy = "sex.csv" }\nincome = "sensitive"\n')
    data.to_csv(tmp_path / "orig.csv", index=False)
    incrowd.publish(data, spec).table.to_csv(tmp_path / "rel.csv", index=False)
    runner = CliRunner()
    got = runner.invoke(app, ["report", str(tmp_path / "orig.csv"), str(tmp_path / "rel.csv"), "--spec",
                              str(tmp_path / "release.toml"), "--map", "-o", str(tmp_path / "r.json")])
    assert got.exit_code == 0, got.output
    assert "map: release" in got.output and "map: k = 5" in got.output
    body = json.loads((tmp_path / "r.json").read_text())
    assert body["risk_utility_map"][0]["label"] == "release"
    bad = runner.invoke(app, ["report", str(tmp_path / "orig.csv"), str(tmp_path / "rel.csv"), "--qi", "age",
                              "--map", "--json"])
    assert bad.exit_code == 2 and "--map needs --spec" in bad.output
