"""SUDA2 bounded and optional: a work budget (refused before the search when its estimate is over
it, stopped when the search reaches it), the largest MSU searched, SUDA2 left out of
``incrowd.risk`` / ``incrowd risk`` without touching the other measures, and a search that
lets other threads run and stops inside on a cancel."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))

import _household as household  # noqa: E402
from benchdata import data_dir  # noqa: E402

import incrowd  # noqa: E402
from incrowd.reporting import risk_lines  # noqa: E402
from incrowd._runtime import CancelToken, cancellable  # noqa: E402
from incrowd.cli import app  # noqa: E402
from incrowd.exceptions import BuildCancelled, ParameterError, WorkBudgetExceeded  # noqa: E402
from incrowd.reporting import _suda2  # noqa: E402
from incrowd.reporting._suda2 import msu_counts, msu_weights, suda2  # noqa: E402

DATA = data_dir()
# the curator's keys of the household survey, raw codes (age in years)
SURVEY_KEYS = household.KEYS


def _keys(rows: int, keys: int, values: int = 3, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.integers(0, values, (rows, keys)), columns=[f"k{j}" for j in range(keys)])


def _one_line(message: str) -> None:
    assert "\n" not in message and "np." not in message and "Traceback" not in message, message


# ---- the work budget ---------------------------------------------------------------------------

def test_a_search_over_its_budget_is_refused_before_it_starts():
    keys = _keys(600, 12)
    with pytest.raises(WorkBudgetExceeded) as caught:
        suda2(keys, work_budget=10_000)
    message = str(caught.value)
    _one_line(message)
    # what it would cost, what was asked, and what to do instead
    for words in ("would take about", "12 keys", "work budget of 10,000", "--no-suda", "fewer keys",
                  "--suda-max-size"):
        assert words in message, message
    assert isinstance(caught.value, ParameterError)


def test_a_search_that_reaches_its_budget_stops_there():
    # the estimate (rows unique on all keys times the key sets) is below the budget; the
    # search itself (every MSU compared) is far above it
    keys = _keys(2000, 12)
    candidates = int((~keys.duplicated(keep=False)).sum())
    budget = 2 * candidates * _suda2.key_sets(12, 12)
    with pytest.raises(WorkBudgetExceeded) as caught:
        suda2(keys, work_budget=budget)
    message = str(caught.value)
    _one_line(message)
    assert "reached its work budget" in message and "--suda-max-size" in message, message


def test_the_default_budget_refuses_twenty_keys_at_once():
    keys = _keys(2000, 20)
    with pytest.raises(WorkBudgetExceeded, match="20 of 20 keys"):
        suda2(keys)
    assert _suda2.WORK_BUDGET > 0


@pytest.mark.parametrize("name, value", [("max_size", 0), ("max_size", 2.5), ("max_size", True),
                                         ("work_budget", -1), ("work_budget", "many")])
def test_bad_bounds_are_named(name, value):
    with pytest.raises(ParameterError, match=name):
        suda2(_keys(20, 3), **{name: value})


# ---- the largest MSU ---------------------------------------------------------------------------

@pytest.mark.parametrize("largest", [1, 2, 3, 4])
def test_max_size_keeps_exactly_the_msus_up_to_that_size(largest):
    keys = _keys(400, 6, values=4, seed=largest)
    counts = msu_counts(keys.to_numpy())  # MSUs of each size, every size searched
    assert counts[:, largest:].sum() > 0  # larger MSUs exist, so leaving them out changes scores
    weights = msu_weights(6)
    score, _ = suda2(keys, max_size=largest)
    assert np.array_equal(score, counts[:, :largest].astype(float) @ weights[:largest])
    full, _ = suda2(keys)
    assert np.array_equal(suda2(keys, max_size=6)[0], full)


# ---- cancel and the GIL ------------------------------------------------------------------------

def test_the_search_lets_other_threads_run_and_stops_inside_when_cancelled():
    # 20 keys without a budget: the search alone would run for hours
    keys = _keys(2000, 20)
    token = CancelToken()
    outcome: list[object] = []

    def search():
        try:
            with cancellable(token):
                outcome.append(suda2(keys, work_budget=0))
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            outcome.append(exc)

    worker = threading.Thread(target=search, daemon=True)
    worker.start()
    # this thread runs Python meanwhile: it gets the GIL while the search is still going
    ticks = 0
    while ticks < 200 and worker.is_alive():
        ticks += 1
        time.sleep(0.005)
    searching = worker.is_alive()
    token.cancel()
    worker.join(timeout=60)  # bounds a broken cancel, not a timing claim
    assert searching and ticks == 200
    assert not worker.is_alive(), "the search did not stop on a cancel"
    assert len(outcome) == 1 and isinstance(outcome[0], BuildCancelled)


# ---- incrowd.risk and incrowd risk --------------------------------------------------------------

@pytest.fixture(scope="module")
def survey_file(tmp_path_factory):
    if not (DATA / "testdata.csv").exists():
        pytest.skip("benchmark data folder not found")
    return household.write_household(DATA, tmp_path_factory.mktemp("survey") / "household.sav")


def test_risk_without_suda_keeps_every_other_measure(survey_file):
    data = incrowd.read_table(survey_file)
    full = incrowd.risk(data, SURVEY_KEYS, weight="sampling_weight", household="ori_hid")
    left_out = incrowd.risk(data, SURVEY_KEYS, weight="sampling_weight", household="ori_hid", suda=False)
    assert "suda_score" in full.records and "suda_score" not in left_out.records
    pd.testing.assert_frame_equal(left_out.records, full.records.drop(columns=["suda_score", "suda_dis_score"]))
    expected = {k: v for k, v in full.summary().items() if "suda" not in k}
    assert left_out.summary() == expected
    assert left_out.about["suda"] is False and full.about["suda"] is True
    assert ("SUDA2", "left out") in risk_lines(left_out)


def test_risk_over_the_budget_skips_suda_with_one_line(survey_file, monkeypatch):
    data = incrowd.read_table(survey_file)
    full = incrowd.risk(data, SURVEY_KEYS, weight="sampling_weight")
    monkeypatch.setattr(_suda2, "WORK_BUDGET", 10)
    skipped = incrowd.risk(data, SURVEY_KEYS, weight="sampling_weight")
    message = skipped.summary()["suda_skipped"]
    _one_line(message)
    assert "--no-suda" in message and "6 keys" in message
    pd.testing.assert_frame_equal(skipped.records, full.records.drop(columns=["suda_score", "suda_dis_score"]))
    shown = dict(risk_lines(skipped))["SUDA2"]
    assert shown.startswith("skipped: ") and "--no-suda" in shown and "\n" not in shown


def test_risk_max_size_is_suda2s(survey_file):
    data = incrowd.read_table(survey_file)
    result = incrowd.risk(data, SURVEY_KEYS, suda_max_size=2)
    keys = result.records  # the scores are suda2's with the same bound
    direct = incrowd.risk(data, SURVEY_KEYS)
    assert result.about["suda_max_size"] == 2
    assert (keys["suda_score"] <= direct.records["suda_score"]).all()
    assert (keys["suda_score"] < direct.records["suda_score"]).any()
    pd.testing.assert_frame_equal(keys[["fk", "Fk", "individual_risk"]], direct.records[["fk", "Fk", "individual_risk"]])


def test_cli_no_suda_and_max_size(survey_file):
    runner = CliRunner()
    base = ["risk", str(survey_file), "--qi", ",".join(SURVEY_KEYS), "--weight", "sampling_weight", "--json"]
    with_suda = runner.invoke(app, base)
    without = runner.invoke(app, [*base, "--no-suda"])
    bounded = runner.invoke(app, [*base, "--suda-max-size", "2"])
    for out in (with_suda, without, bounded):
        assert out.exit_code == 0, out.output
    a, b, c = (json.loads(out.stdout) for out in (with_suda, without, bounded))
    assert "highest_suda_dis_score" in a["summary"] and "highest_suda_dis_score" not in b["summary"]
    assert b["about"]["suda"] is False
    assert {k: v for k, v in a["summary"].items() if "suda" not in k} == b["summary"]
    api = incrowd.risk(incrowd.read_table(survey_file), SURVEY_KEYS, weight="sampling_weight", suda_max_size=2)
    assert c["summary"]["suda_records_with_msu"] == api.summary()["suda_records_with_msu"]
    assert c["about"]["suda_max_size"] == 2
    text = runner.invoke(app, base[:-1] + ["--no-suda"])
    assert "left out" in text.stdout


@pytest.mark.parametrize("args, words", [(["--suda-max-size", "0"], "--suda-max-size must be at least 1"),
                                         (["--suda-max-size", "x"], "'--suda-max-size': Input should be a valid integer")])
def test_cli_bad_max_size_is_one_line(survey_file, args, words):
    out = CliRunner().invoke(app, ["risk", str(survey_file), "--qi", "sex,age", *args])
    assert out.exit_code == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], out.stderr
