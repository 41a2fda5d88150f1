"""The Publish page's perturbation steps in Chromium: the curator's labelled household .sav
published with income, expend and savings microaggregated (k = 3) and the benchmark "income by
urbrur"; the summary lines, the written .sav read back with pyreadstat, the report's benchmark
table, and a bad step's one-line error."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from benchdata import data_dir
from test_web_e2e import (  # noqa: F401  (the fixtures; skips without chromium)
    COLD_CACHE_MS,
    _publish_requests,
    browser,
    download,
    page,
    server,
)

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]
NUMERICS = ["expend", "income", "savings"]  # in the order of the file


def test_the_curators_household_sav_with_perturbation_steps_and_a_benchmark(server, page, tmp_path):  # noqa: F811
    pyreadstat = pytest.importorskip("pyreadstat")
    if not (data_dir() / "testdata.csv").exists():
        pytest.skip("benchmark data folder not found")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _household as household

    sav = household.write_household(data_dir(), tmp_path / "household.sav")
    hierarchies = household.write_hierarchies(tmp_path / "hierarchies")
    sent = _publish_requests(page)
    page.goto(server + "/publish")
    page.set_input_files("#file", str(sav))
    page.click("#upload")
    page.wait_for_selector("tr[data-column='household_weights'] .role")
    page.set_input_files("#hierarchy-files", [str(hierarchies / "age.csv"), str(hierarchies / "relat.csv")])
    page.click("#upload-hierarchies")
    page.wait_for_function("() => document.getElementById('hierarchy-list').textContent.includes('relat.csv')")
    names = page.eval_on_selector_all("#roles-table tr[data-column]", "rows => rows.map(r => r.dataset.column)")
    for name in names:
        role = ("categorical" if name in household.KEYS else "weight" if name == household.WEIGHT
                else "perturb" if name in NUMERICS else "other")
        page.select_option(f"tr[data-column='{name}'] .role", role)
    page.fill("#k", "3")
    page.fill("#max-suppression", "5%")

    # the starting spec proposed the amounts perturb, microaggregated by one step (k = 3); a step
    # starts with the perturb columns no other step changes; its form is the method's
    assert page.locator("fieldset.step").count() == 1
    assert page.input_value(".step-param[data-step='0'][data-param='k']") == "3"
    checked = page.eval_on_selector_all(".step-column[data-step='0']:checked", "xs => xs.map(x => x.value)")
    assert checked == NUMERICS
    # a bad parameter is the parser's one line, naming the step and the key
    page.select_option(".step-method[data-step='0']", "pram")
    page.fill(".step-param[data-step='0'][data-param='pd']", "2")
    page.evaluate("() => { document.getElementById('run-error').textContent = ''; }")
    page.click("#run")
    page.wait_for_function("() => document.getElementById('run-error').textContent.length > 0")
    error = page.text_content("#run-error")
    assert "step 1 (pram)" in error and "pd must be a number in (0, 1]; got 2" in error and "\n" not in error
    assert sent[-1]["perturb"] == [{"columns": NUMERICS, "method": "pram", "pd": 2}]

    # a second step, then the first removed: the order is what the spec gets
    page.click("#add-step")
    page.click(".step-remove[data-step='0']")
    assert page.locator("fieldset.step").count() == 1
    page.select_option(".step-method[data-step='0']", "microaggregation")
    for name in NUMERICS:
        page.check(f".step-column[data-step='0'][value='{name}']")
    page.fill(".step-param[data-step='0'][data-param='k']", "3")
    page.fill("#random-state", "7")
    page.fill("#benchmarks", "income by urbrur")
    page.click("#run")
    page.wait_for_selector("#report-lines", timeout=COLD_CACHE_MS)
    spec = sent[-1]
    assert spec["perturb"] == [{"columns": NUMERICS, "method": "microaggregation", "k": 3}]
    assert spec["benchmarks"] == {"estimates": ["income by urbrur"]} and spec["privacy"]["random_state"] == 7
    step_line = page.text_content("#report-lines tr[data-label='perturb 1'] td")
    assert step_line.startswith("microaggregation of expend, income, savings: ")
    toml = page.text_content("#spec-toml")
    assert "[[perturb]]" in toml and 'estimates = ["income by urbrur"]' in toml

    saved = download(page, "#download", tmp_path)
    written, meta = pyreadstat.read_sav(str(saved), user_missing=True, apply_value_formats=False)
    assert meta.variable_value_labels["sex"] == {1.0: "Male", 2.0: "Female"}
    assert meta.missing_ranges["water"] == [{"lo": 9.0, "hi": 9.0}]
    assert written.groupby(NUMERICS, dropna=False).size().min() >= 3

    # the report's benchmark table, on the page's report link
    page.wait_for_selector("#report-download", timeout=COLD_CACHE_MS)
    report = download(page, "#report-download", tmp_path).read_text(encoding="utf-8")
    assert "<table id=benchmarks>" in report and "income by urbrur" in report and "Rural (2)" in report

    # PRAM of roof by a transition matrix file uploaded in the step: a bad file is its one line
    # under the step, a good one is named by the step and goes beside the spec
    page.select_option("tr[data-column='roof'] .role", "perturb")
    page.click("#add-step")
    page.select_option(".step-method[data-step='1']", "pram")
    assert page.eval_on_selector_all(".step-column[data-step='1']:checked", "xs => xs.map(x => x.value)") == ["roof"]
    upload = ".step-upload[data-step='1'][data-param='matrix']"
    bad = tmp_path / "bad.csv"
    bad.write_text(",2,4\n2,0.5,0.4\n4,0,1\n", encoding="utf-8")
    page.set_input_files(upload, str(bad))
    page.wait_for_selector(".step-error[data-step='1']")
    error = page.text_content(".step-error[data-step='1']")
    assert "matrix file 'bad.csv': the row of '2' sums to 0.9, not 1" in error and "\n" not in error
    good = tmp_path / "roof_pram.csv"   # every roof category becomes the next one, for certain
    good.write_text(",2,4,5,6\n2,0,1,0,0\n4,0,0,1,0\n5,0,0,0,1\n6,1,0,0,0\n", encoding="utf-8")
    page.set_input_files(upload, str(good))
    page.wait_for_function("() => document.querySelector(\".step-file[data-step='1']\").textContent === 'roof_pram.csv'")
    assert page.locator(".step-error[data-step='1']").count() == 0
    page.click("#run")
    page.wait_for_selector("#report-lines tr[data-label='perturb 2']", timeout=COLD_CACHE_MS)
    assert sent[-1]["perturb"][1] == {"columns": ["roof"], "method": "pram", "matrix": "roof_pram.csv"}
    assert "roof_pram.csv" in page.text_content("#report details p")
    saved = download(page, "#download", tmp_path)
    written, meta = pyreadstat.read_sav(str(saved), user_missing=True, apply_value_formats=False)
    line = page.text_content("#report-lines tr[data-label='perturb 2'] td")
    # a permutation changes every roof but "Not stated" (9), which PRAM never draws
    assert line.startswith(f"pram of roof: {int((written['roof'] != 9).sum())} cells changed")
    assert set(written["roof"]) <= {2.0, 4.0, 5.0, 6.0, 9.0} and meta.missing_ranges["roof"] == [{"lo": 9.0, "hi": 9.0}]
