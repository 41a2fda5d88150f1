"""``incrowd incremental base | add | publish | plan | show`` through typer's CliRunner."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from incrowd import verify_k_anonymity
from incrowd.cli import app
from incrowd.incremental import critical_ratio, deadline_ratio

pytestmark = pytest.mark.filterwarnings("ignore::incrowd.DataWarning")


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(11)
    n = 260
    frame = pd.DataFrame({
        "name": [f"r{i:04d}" for i in range(n)],
        "age": rng.integers(18, 90, n),
        "region": rng.choice(["north", "south"], n),
        "income": rng.normal(30000, 9000, n).round(2),
    })
    frame.iloc[:200].to_csv(tmp_path / "base.csv", index=False)
    frame.iloc[200:].to_csv(tmp_path / "late.csv", index=False)
    return tmp_path, frame


def run_json(runner, args):
    out = runner.invoke(app, args)
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_base_add_publish_json(runner, files):
    tmp, frame = files
    state = tmp / "s.duckdb"
    base = run_json(runner, ["incremental", "base", str(tmp / "base.csv"), "-o", str(state),
                             "--k", "4", "--id", "name", "--qi", "age,income", "--json"])
    assert base["rows"] == 200 and base["k"] == 4 and base["identifiers"] == ["name"]
    assert base["keeps_points"] is True and "points" in base["tables"]
    added = run_json(runner, ["incremental", "add", str(state), str(tmp / "late.csv"),
                              "--strategy", "nn-split-mid", "--inertial", "--json"])
    assert added["rows"] == 60 and added["strategy"] == "nn-split-mid" and added["inertial"]
    assert added["rows_total"] == 260
    out = tmp / "release.csv"
    pub = run_json(runner, ["incremental", "publish", str(state), "-o", str(out), "--compare", "--json"])
    for key in ("D0", "D_plus", "DT", "D", "delta", "tau0", "tau_plus", "nu"):
        assert key in pub
    assert pub["nu"] == pytest.approx(60 / 260)
    release = pd.read_csv(out)
    assert list(release.columns) == ["age", "region", "income"]
    assert verify_k_anonymity(release, ["age", "income"], 4).ok
    shown = run_json(runner, ["incremental", "show", str(state), "--json"])
    assert [b["batch"] for b in shown["batches"]] == [0, 1]


def test_human_reports(runner, files):
    tmp, _ = files
    state = tmp / "s.duckdb"
    for args in (["base", str(tmp / "base.csv"), "-o", str(state), "--k", "4", "--id", "name",
                  "--qi", "age,income"],
                 ["add", str(state), str(tmp / "late.csv")],
                 ["publish", str(state), "-o", str(tmp / "r.csv")],
                 ["show", str(state)]):
        out = runner.invoke(app, ["incremental"] + args)
        assert out.exit_code == 0, out.output
    assert "k-anonymous" in out.output or "table points" in out.output


def test_plan_quadratic_json_matches_the_thesis(runner):
    p = run_json(runner, ["incremental", "plan", "--rows", "50000", "--varsigma", "5",
                          "--tau-end", "0.5", "--model", "quadratic", "--json"])
    assert p["nu_minus"] == pytest.approx(critical_ratio(5))
    assert p["nu_star"] == pytest.approx(critical_ratio(5))
    assert p["nu_end"] == pytest.approx(deadline_ratio(5, 0.5))
    assert p["varsigma_minus"] == pytest.approx(0.3094, abs=1e-4)


def test_plan_with_an_arrival_schedule(runner, tmp_path):
    pd.DataFrame({"time": [0, 3600, 7200], "rows": [0, 30000, 40000]}).to_csv(tmp_path / "a.csv", index=False)
    p = run_json(runner, ["incremental", "plan", "--arrivals", str(tmp_path / "a.csv"),
                          "--tau-end", "0.5", "--columns", "3", "--json"])
    assert p["rows"] == 40000 and p["varsigma"] is None
    assert p["model"]["source"].startswith("fitted") and p["seconds_one_shot"] > 0
    assert 0 < p["nu_minus"] < 1


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("case", ["columns", "k", "strategy", "damaged"])
def test_errors_are_one_line_and_write_nothing(runner, files, case):
    tmp, frame = files
    state = tmp / "s.duckdb"
    run_json(runner, ["incremental", "base", str(tmp / "base.csv"), "-o", str(state), "--k", "4",
                      "--id", "name", "--qi", "age,income", "--json"])
    before = digest(state)
    if case == "columns":
        frame.iloc[200:].drop(columns=["region"]).to_csv(tmp / "bad.csv", index=False)
        args, message = ["add", str(state), str(tmp / "bad.csv")], "missing ['region']"
    elif case == "k":
        args, message = ["add", str(state), str(tmp / "late.csv"), "--k", "5"], "differs from the state's k=4"
    elif case == "strategy":
        args, message = ["add", str(state), str(tmp / "late.csv"), "--strategy", "closest"], "unknown strategy"
    else:
        state.write_bytes(state.read_bytes()[:100])
        before = digest(state)
        args, message = ["publish", str(state), "-o", str(tmp / "out.csv")], "damaged"
    out = runner.invoke(app, ["incremental"] + args)
    assert out.exit_code == 2
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and message in lines[0], out.stderr
    assert digest(state) == before
    assert not (tmp / "out.csv").exists()


def test_base_refuses_existing_state_without_force(runner, files):
    tmp, _ = files
    state = tmp / "s.duckdb"
    args = ["incremental", "base", str(tmp / "base.csv"), "-o", str(state), "--k", "4", "--id", "name",
            "--qi", "age,income"]
    assert runner.invoke(app, args).exit_code == 0
    out = runner.invoke(app, args)
    assert out.exit_code == 2 and "--force" in out.stderr
    assert runner.invoke(app, args + ["--force"]).exit_code == 0


def test_publish_writes_the_risk_and_utility_report(runner, files):
    tmp, frame = files
    state = tmp / "s.duckdb"
    run_json(runner, ["incremental", "base", str(tmp / "base.csv"), "-o", str(state),
                      "--k", "4", "--id", "name", "--qi", "age,income", "--json"])
    out, report = tmp / "release.csv", tmp / "report.json"
    run_json(runner, ["incremental", "publish", str(state), "-o", str(out), "--report", str(report), "--json"])
    got = json.loads(report.read_text())
    assert got["about"]["rows_release"] == 200
    assert got["risk"]["classes"]["smallest_class"] >= 4
    assert 0 < got["utility"]["numeric"]["il"] < 1
    assert got["release"]["k"] == 4
