"""The Risk step's SUDA2 controls in a browser: the "SUDA2" box leaves it out and "largest MSU"
bounds it, and the page shows the line and the command that say so."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_web_e2e import browser, page, server  # noqa: F401  (the fixtures; skips without chromium)

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]


def _risk(page) -> tuple[dict[str, str], str]:  # noqa: F811
    page.click("#run-risk")
    page.wait_for_selector("#risk-summary")
    lines = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('#risk-summary tr')]
        .map(tr => [tr.dataset.label, tr.querySelector('td').textContent]))""")
    command = page.text_content("#risk-command")
    page.evaluate("() => { document.getElementById('risk').innerHTML = ''; }")
    return lines, command


def test_the_suda2_box_and_largest_msu_reach_the_risk_job(server, page, tmp_path):  # noqa: F811
    rng = np.random.default_rng(1)
    path = tmp_path / "keys.csv"
    pd.DataFrame(rng.integers(0, 3, (300, 5)), columns=[f"k{j}" for j in range(5)]).to_csv(path, index=False)
    page.goto(server + "/publish")
    page.set_input_files("#file", str(path))
    page.click("#upload")
    page.wait_for_selector("#roles-table tr[data-column='k0']")
    full, command = _risk(page)
    assert full["SUDA2"].endswith(tuple("0123456789")) and "--suda" not in command
    page.uncheck("#risk-suda")
    left_out, command = _risk(page)
    assert left_out["SUDA2"] == "left out" and command.endswith("--no-suda")
    assert {k: v for k, v in left_out.items() if k != "SUDA2"} == {k: v for k, v in full.items() if k != "SUDA2"}
    page.check("#risk-suda")
    page.fill("#risk-suda-max-size", "1")
    bounded, command = _risk(page)
    assert command.endswith("--suda-max-size 1") and "(MSUs of up to 1 key)" in bounded["SUDA2"]
    page.fill("#risk-suda-max-size", "none")
    page.click("#run-risk")
    page.wait_for_function("() => document.getElementById('risk-error').textContent.includes('suda_max_size')")
