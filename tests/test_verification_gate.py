"""No output is written unless it passed its privacy check.

Each writer is run with its k-anonymity (or l-diversity) check forced to fail, as a bug in an
algorithm would make it fail; the command must exit 2 with one error line and write nothing,
and an earlier file at the output path must stay as it was.
"""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import incrowd.microaggregation._microaggregate
import incrowd.generalization._apply
import incrowd.incremental._session
from incrowd import VerificationError, privacy
from incrowd.cli import app
from incrowd.incremental import IncrementalMicroaggregation

pytestmark = pytest.mark.filterwarnings("ignore::incrowd.DataWarning")

EARLIER = b"an earlier release\n"


def failing_k(table, quasi_identifiers, k):
    report = privacy.verify_k_anonymity(table, quasi_identifiers, k)
    return privacy.KAnonymityReport(k=k, ok=False, n_rows=report.n_rows, n_classes=report.n_classes,
                                    min_class_size=1, n_rows_in_small_classes=1)


REAL_CHECK_TABLE = privacy.check_table


def failing_models(table, quasi_identifiers, models, **given):
    """Every model's check of a whole table (l among them) as failing."""
    assert REAL_CHECK_TABLE(table, quasi_identifiers, models, **given) == []
    return [f"not {models[0].describe()} (a stand-in failure)"]


@pytest.fixture
def people(tmp_path):
    rng = np.random.default_rng(11)
    n = 300
    frame = pd.DataFrame({"age": rng.integers(18, 80, n), "income": rng.normal(3e4, 9e3, n).round(2),
                          "sex": rng.choice(["F", "M"], n), "disease": rng.choice(["a", "b", "c"], n)})
    path = tmp_path / "people.csv"
    frame.to_csv(path, index=False)
    hier = tmp_path / "hier"
    hier.mkdir()
    (hier / "sex.csv").write_text("F;*\nM;*\n")
    return path, hier


def refused_and_untouched(args, out):
    out.write_bytes(EARLIER)
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2, done.output
    assert done.stderr.count("error:") == 1 and "Traceback" not in done.output
    assert out.read_bytes() == EARLIER
    assert sorted(p.name for p in out.parent.iterdir() if p.name.startswith(".")) == []


def test_microaggregate_writes_nothing_unverified(people, monkeypatch):
    path, _ = people
    monkeypatch.setattr(incrowd.microaggregation._microaggregate, "verify_k_anonymity", failing_k)
    out = path.parent / "out.csv"
    refused_and_untouched(["microaggregate", str(path), "-o", str(out), "--k", "5",
                           "--qi", "age,income"], out)
    with pytest.raises(VerificationError):
        incrowd.microaggregate(pd.read_csv(path), 5, quasi_identifiers=["age", "income"])


@pytest.mark.parametrize("privacy", [["--k", "5"], ["--l", "2", "--sensitive", "disease"]])
def test_generalize_writes_nothing_unverified(people, monkeypatch, privacy):
    path, hier = people
    monkeypatch.setattr(incrowd.generalization._apply, "verify_k_anonymity", failing_k)
    monkeypatch.setattr(incrowd.privacy, "check_table", failing_models)
    out = path.parent / "out.csv"
    refused_and_untouched(["generalize", str(path), "--hierarchies", str(hier), "--qi", "age,sex",
                           "--intervals", "age=10,20", "--levels", "age=1,sex=1", *privacy,
                           "-o", str(out)], out)


def test_incremental_publish_writes_nothing_unverified(people, monkeypatch, tmp_path):
    path, _ = people
    frame = pd.read_csv(path)
    state = tmp_path / "s.duckdb"
    IncrementalMicroaggregation.from_base(frame.iloc[:200], state, 5, quasi_identifiers=["age", "income"])
    monkeypatch.setattr(incrowd.incremental._session, "verify_k_anonymity", failing_k)
    out = tmp_path / "release.csv"
    refused_and_untouched(["incremental", "publish", str(state), "-o", str(out)], out)
