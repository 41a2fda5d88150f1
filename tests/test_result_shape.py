"""Every release result has one shape: ``.table`` (the released DataFrame), ``.verification``
(an :class:`incrowd.Verification`: the promise, each verifier's record, and where it was
verified) and ``.summary()`` (the JSON-ready dict the CLI prints, holding that verification).

The results: :class:`incrowd.MicroaggregationResult`,
:class:`incrowd.generalization.GeneralizationResult`, :class:`incrowd.PublishResult` and
:class:`incrowd.incremental.IncrementalRelease`.
"""

from __future__ import annotations

import io
import json
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import incrowd
from incrowd.io._json import dumps
from incrowd.privacy import verify_k_anonymity

K = 3
QIS = ["age", "income"]


def _frame(seed: int = 0, n: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"id": np.arange(n), "age": rng.integers(18, 80, n).astype(float),
                         "income": rng.normal(3000, 800, n).round(1), "note": [f"n{i % 4}" for i in range(n)]})


def _microaggregate(frame, tmp_path):
    return incrowd.microaggregate(frame, K, "mdav", quasi_identifiers=QIS, identifiers="id")


def _generalize(frame, tmp_path):
    from incrowd.generalization import generalize

    intervals = {"age": [10, 20, 40], "income": [500, 1000, 4000]}
    return generalize(frame.drop(columns="id"), {"age": 2, "income": 2}, k=K, intervals=intervals)


def _publish(frame, tmp_path):
    spec = {"privacy": {"k": K, "max_suppression": 1.0},
            "columns": {"age": "numeric", "income": "numeric", "note": "categorical", "id": "identifier"}}
    return incrowd.publish(frame, spec)


def _incremental(frame, tmp_path):
    from incrowd.incremental import IncrementalMicroaggregation

    half = frame.shape[0] // 2
    state = IncrementalMicroaggregation.from_base(frame.iloc[:half], tmp_path / "state.duckdb", K,
                                                  quasi_identifiers=QIS, identifiers="id")
    state.add(frame.iloc[half:])
    return state.publish()


MAKERS = {"microaggregate": _microaggregate, "generalize": _generalize, "publish": _publish,
          "incremental": _incremental}


def _quasi_identifiers(result) -> list[str]:
    return list(result.verification["promise"]["quasi_identifiers"])


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_every_result_has_table_verification_and_summary(kind, tmp_path):
    frame = _frame()
    result = MAKERS[kind](frame, tmp_path)
    assert isinstance(result.table, pd.DataFrame) and "id" not in result.table.columns
    verification = result.verification
    assert isinstance(verification, incrowd.Verification) and isinstance(verification, Mapping)
    assert verification.ok and bool(verification)
    assert verification["verified_on"] == "table in memory"
    assert verification["promise"]["k"] == K
    assert sorted(_quasi_identifiers(result)) == sorted(QIS + (["note"] if kind == "publish" else []))
    # the record is the verifier's own count on the released table, recounted here
    recount = verify_k_anonymity(result.table, _quasi_identifiers(result), K).to_dict()
    assert verification["k_anonymity"] == recount
    assert verification.min_class_size == recount["min_class_size"] >= K
    summary = result.summary()
    assert isinstance(summary, dict)
    assert summary["verification"] == verification
    assert json.loads(dumps(summary))["verification"]["promise"]["k"] == K


#: the names results had for their table and their summary before they shared one shape (no
#: version was released with them, so none is kept as an alias)
FORMER_NAMES = ("aggregated", "release", "report", "to_dict")


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_a_result_has_one_name_for_its_table_and_its_summary(kind, tmp_path):
    result = MAKERS[kind](_frame(), tmp_path)
    assert [name for name in FORMER_NAMES if hasattr(result, name)] == []
    # the verification is a dict: its k record is read as one, not through attributes
    verification = result.verification
    assert [name for name in ("k", "n_rows", "n_classes", "to_dict") if hasattr(verification, name)] == []
    assert verification.ok and verification.min_class_size == verification["k_anonymity"]["min_class_size"]


@pytest.mark.parametrize("kind", ["publish", "incremental"])
def test_a_written_release_says_its_verification_was_on_the_file(kind, tmp_path):
    frame = _frame(1)
    path = tmp_path / "release.csv"
    if kind == "publish":
        result = _publish(frame, tmp_path)
        result.write(path)
    else:
        from incrowd.incremental import IncrementalMicroaggregation

        state = IncrementalMicroaggregation.from_base(frame, tmp_path / "state.duckdb", K,
                                                      quasi_identifiers=QIS, identifiers="id")
        result = state.publish(path)
    verification = result.verification
    assert isinstance(verification, incrowd.Verification)
    assert verification["verified_on"] == "written file" and verification["read_back_as"] == "CSV as text"
    assert verification["promise"]["k"] == K and verification.ok
    assert result.summary()["verification"] == verification
    written = pd.read_csv(path)
    assert verification["k_anonymity"] == verify_k_anonymity(written, _quasi_identifiers(result), K).to_dict()


def test_verification_truth_is_every_record_held():
    """ok is False when any record failed, and for an empty record (nothing verified)."""
    v = incrowd.Verification
    held, failed = {"ok": True}, {"ok": False}
    assert not v() and not v(promise={"k": 2})
    assert v(k_anonymity=held) and not v(k_anonymity=failed)
    assert v(k_anonymity=held, l_diversity={"a": held, "b": held}, t_closeness={"a": held})
    assert not v(k_anonymity=held, l_diversity={"a": held, "b": failed})
    assert not v(k_anonymity=held, t_closeness={"a": failed})
    assert not v(k_anonymity=held, l_diversity=failed)  # generalize's one record
    assert v(k_anonymity=held, l_diversity=held)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(6, 40), k=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_microaggregate_verification_recounts_the_table(n, k, seed):
    """Property: whatever the data, the verification is the k verifier's count on ``.table``."""
    if k > n:
        k = n
    frame = _frame(seed, n).drop(columns="id")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = incrowd.microaggregate(frame, k, quasi_identifiers=QIS)
    got = result.verification
    assert got["k_anonymity"] == verify_k_anonymity(result.table, QIS, k).to_dict()
    assert got.ok and got["promise"] == {"quasi_identifiers": QIS, "k": k, "l": None, "t": None, "sensitive": [],
                                         "models": [f"{k}-anonymous"]}


def test_the_cli_and_the_web_say_the_microaggregation_was_verified_on_the_file(tmp_path):
    """What the CLI's ``--json`` and the web's answer carry as ``verification`` is the written
    file's record, not the table's in memory."""
    pytest.importorskip("fastapi")
    pytest.importorskip("multipart")
    from fastapi.testclient import TestClient
    from typer.testing import CliRunner

    from incrowd.cli import app as cli
    from incrowd.web import create_app

    source = tmp_path / "in.csv"
    _frame(2).to_csv(source, index=False)
    done = CliRunner().invoke(cli, ["microaggregate", str(source), "-o", str(tmp_path / "out.csv"), "--k", str(K),
                                    "--qi", ",".join(QIS), "--id", "id", "--json"])
    assert done.exit_code == 0, done.output
    said = json.loads(done.stdout)["verification"]
    assert said["verified_on"] == "written file" and said["promise"]["k"] == K
    written = pd.read_csv(tmp_path / "out.csv")
    assert said["k_anonymity"] == verify_k_anonymity(written, QIS, K).to_dict()

    web = create_app()
    try:
        client = TestClient(web)
        upload = client.post("/api/datasets", files={"file": ("in.csv", source.read_bytes(), "text/csv")}).json()
        answer = client.post("/api/microaggregate", json={"dataset": upload["dataset"], "k": K,
                                                          "quasi_identifiers": QIS, "identifiers": ["id"]}).json()
        assert answer["verification"]["verified_on"] == "written file"
        download = pd.read_csv(io.BytesIO(client.get(answer["download"]).content))
        assert answer["verification"]["k_anonymity"] == verify_k_anonymity(download, QIS, K).to_dict()
    finally:
        web.state.sessions.close()
