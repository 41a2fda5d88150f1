"""A toy privacy model, one file (``tests/_toy_model.py``), seen by the spec, ``publish`` (its
search, the written file's check, the summary), ``negotiate`` and ``generalize`` (the API and
``--model``), the report's verdict and the web's pages, with no other edit."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import incrowd
from incrowd.cli import app
from incrowd.generalization import Lattice, negotiate
from incrowd.privacy import MODELS, unregister_model


@pytest.fixture
def toy():
    import _toy_model

    from incrowd.privacy import register_model

    register_model(_toy_model.MaxClassSize)  # again, should an earlier test have removed it
    yield _toy_model.MaxClassSize
    unregister_model("max_class_size")


def _frame(n=400, seed=3):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(18, 80, n), "region": rng.integers(0, 4, n),
                         "s": rng.choice(["a", "b"], n)})


def _sizes(table, qis):
    return table.groupby(qis, dropna=False).size()


def test_publish_meets_a_toy_model_and_checks_the_written_file(toy, tmp_path):
    frame = _frame()
    spec = {"privacy": {"k": 3, "max_suppression": "10%", "max_class_size": 10},
            "columns": {"age": {"role": "categorical", "intervals": [5, 10, 20]}, "region": "categorical",
                        "s": "other"}}
    plain = incrowd.publish(frame, {**spec, "privacy": {"k": 3, "max_suppression": "10%"}})
    assert _sizes(plain.table, ["age", "region"]).max() > 10  # the toy model binds
    result = incrowd.publish(frame, spec)
    assert _sizes(result.table, ["age", "region"]).max() <= 10
    assert result.summary()["privacy_models"] == ["classes of at most 10 rows"]
    result.write(tmp_path / "release.csv")
    assert result.verification["max_class_size"]["ok"]
    # the report holds it as a promise
    report = incrowd.report(frame, result.table, **result.report_options())
    lines = {line["measure"]: line for line in report.to_dict()["verdict"]}
    assert lines["max_class_size"]["status"] == "pass" and lines["max_class_size"]["promised"]


def test_negotiate_and_generalize_take_a_toy_model(toy, tmp_path):
    frame = _frame()
    lattice = Lattice.build(frame, ["age", "region"], intervals={"age": [5, 10, 20], "region": [2]})
    answer = negotiate(lattice, k=3, max_suppression="10%", models=[toy(size=10)])
    assert answer.exact is not None
    data = tmp_path / "people.csv"
    frame.to_csv(data, index=False)
    runner = CliRunner()
    lattice_file = tmp_path / "people.lattice"
    built = runner.invoke(app, ["lattice", "build", str(data), "--qi", "age,region", "--intervals", "age=5,10,20",
                                "--intervals", "region=2", "-o", str(lattice_file)])
    assert built.exit_code == 0, built.output
    got = runner.invoke(app, ["negotiate", str(lattice_file), "--k", "3", "--max-suppression", "10%", "--json",
                              "--model", "max_class_size=10"])
    assert got.exit_code == 0, got.output
    assert json.loads(got.output)["exact"]["levels"] == answer.exact.levels
    out = tmp_path / "out.csv"
    done = runner.invoke(app, ["generalize", str(data), "-o", str(out), "--qi", "age,region", "--k", "3",
                               "--intervals", "age=5,10,20", "--intervals", "region=2", "--max-suppression", "10%",
                               "--model", "max_class_size=10"])
    assert done.exit_code == 0, done.output
    assert _sizes(pd.read_csv(out), ["age", "region"]).max() <= 10


def test_the_web_pages_offer_a_toy_model(toy):
    from fastapi.testclient import TestClient

    from incrowd.web import create_app

    client = TestClient(create_app())
    for page in ("/publish", "/negotiate"):
        html = client.get(page).text
        assert 'data-key="max_class_size"' in html and "No class holds more than" in html, page


def test_unregistering_leaves_the_built_in_models(toy):
    assert "max_class_size" in MODELS
    unregister_model("max_class_size")
    assert "max_class_size" not in MODELS and "entropy_l" in MODELS
    with pytest.raises(incrowd.exceptions.ParameterError, match="built-in"):
        unregister_model("entropy_l")
