"""Every privacy claim agrees with an outside verifier (pycanon), on the files a user would get.

incrowd verifies its own outputs before writing them; these tests re-read what was written and
ask pycanon, which shares no code with incrowd, whether the claimed k (and l) hold.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _thresholds import thresholds  # noqa: E402
from benchdata import data_dir
from pycanon import anonymity
from typer.testing import CliRunner

from incrowd import METHODS, microaggregate
from incrowd.cli import app
from incrowd.generalization import generalize
from incrowd.incremental import IncrementalMicroaggregation

pytestmark = pytest.mark.filterwarnings("ignore::incrowd.DataWarning")


def census_qis(frame: pd.DataFrame) -> list[str]:
    return list(frame.columns[:4])


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("k", [3, 7])
def test_every_method_is_k_anonymous_for_pycanon(census_frame, method, k):
    qis = census_qis(census_frame)
    result = microaggregate(census_frame, k, method, quasi_identifiers=qis, random_state=0)
    assert anonymity.k_anonymity(result.table, qis) >= k


def test_cli_release_file_is_k_anonymous_for_pycanon(census_frame, tmp_path):
    source, out = tmp_path / "in.csv", tmp_path / "out.csv"
    census_frame.to_csv(source, index=False)
    qis = census_qis(census_frame)
    done = CliRunner().invoke(app, ["microaggregate", str(source), "-o", str(out), "--k", "5",
                                    "--qi", ",".join(qis), "--method", "mdav"])
    assert done.exit_code == 0, done.output
    written = pd.read_csv(out)
    assert written.shape[0] == census_frame.shape[0]
    assert anonymity.k_anonymity(written, qis) >= 5


def test_incremental_release_is_k_anonymous_for_pycanon(tmp_path):
    rng = np.random.default_rng(5)
    data = pd.DataFrame({"a": rng.standard_normal(700).round(4),
                         "b": rng.standard_normal(700).round(4),
                         "region": rng.choice(["n", "s"], 700)})
    session = IncrementalMicroaggregation.from_base(data.iloc[:500], tmp_path / "s.duckdb", 5,
                                                    quasi_identifiers=["a", "b"])
    session.add(data.iloc[500:], "nn-split-end")
    out = tmp_path / "release.csv"
    session.publish(out)
    written = pd.read_csv(out)
    assert written.shape[0] == 700
    assert anonymity.k_anonymity(written, ["a", "b"]) >= 5


@pytest.fixture(scope="module")
def adult_arx():
    folder = data_dir() / "adult_arx"
    if not folder.is_dir():
        pytest.skip(f"benchmark data folder {folder} is absent (set INCROWD_DATA)")
    return folder, pd.read_csv(folder / "adult.csv", sep=";")


def test_generalized_release_is_k_anonymous_and_l_diverse_for_pycanon(adult_arx):
    folder, frame = adult_arx
    qis = ["age", "sex", "race", "education"]
    levels = {"age": 2, "sex": 0, "race": 1, "education": 1}
    result = generalize(frame, levels, k=10, hierarchies=str(folder), quasi_identifiers=qis)
    assert anonymity.k_anonymity(result.table, qis) >= 10
    result = generalize(frame, levels, sensitive="occupation", hierarchies=str(folder),
                        quasi_identifiers=qis, models=thresholds(l=3))
    assert anonymity.l_diversity(result.table, qis, ["occupation"]) >= 3
