"""Hierarchy labels must not reuse another original value: with ``red;blue`` and ``blue;red`` a
published "blue" would stand for red rows. Refused from files (CLI, API), in memory and on web
upload; a label equal to its own value, and ARX's Adult hierarchies, pass."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from benchdata import data_dir
from typer.testing import CliRunner

from incrowd.cli import app
from incrowd.exceptions import DataError
from incrowd.generalization import Hierarchy, Lattice, generalize, read_hierarchy
from incrowd.generalization._hierarchy import hierarchy_from_rows

SWAPPED = "red;blue\nblue;red\n"


@pytest.fixture
def colours(tmp_path):
    frame = pd.DataFrame({"colour": ["red"] * 6 + ["blue"] * 6, "size": [1, 2] * 6})
    frame.to_csv(tmp_path / "data.csv", index=False)
    hier = tmp_path / "hier"
    hier.mkdir()
    (hier / "colour.csv").write_text(SWAPPED)
    return tmp_path, frame, hier


def test_swapped_labels_refused_from_a_file(colours):
    _, _, hier = colours
    with pytest.raises(DataError) as info:
        read_hierarchy(hier / "colour.csv")
    message = str(info.value)
    assert "colour.csv" in message and "row 1" in message and "'blue'" in message


def test_swapped_labels_refused_by_cli_generalize_and_build(colours):
    tmp, _, hier = colours
    runner = CliRunner()
    for args in (["generalize", str(tmp / "data.csv"), "--hierarchies", str(hier), "--levels", "colour=1",
                  "--qi", "colour", "--k", "2", "-o", str(tmp / "out.csv")],
                 ["lattice", "build", str(tmp / "data.csv"), "--hierarchies", str(hier), "--qi", "colour",
                  "-o", str(tmp / "L.duckdb")]):
        out = runner.invoke(app, args)
        assert out.exit_code == 2, out.output
        lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:") and "colour.csv" in lines[0], out.stderr
        assert "row 1" in lines[0] and "'blue'" in lines[0]
    assert not (tmp / "out.csv").exists() and not (tmp / "L.duckdb").exists()


def test_swapped_labels_refused_in_memory(colours):
    _, frame, _ = colours
    labels = (np.array(["red", "blue"], dtype=object), np.array(["blue", "red"], dtype=object))
    swapped = Hierarchy("colour", labels, (np.array([0, 1], dtype=np.int32),), "in memory")
    with pytest.raises(DataError, match="'blue'"):
        generalize(frame, {"colour": 1}, k=2, hierarchies={"colour": swapped}, quasi_identifiers=["colour"])
    with pytest.raises(DataError, match="'blue'"):
        Lattice.build(frame, ["colour"], hierarchies={"colour": swapped})
    with pytest.raises(DataError, match="row 2"):
        hierarchy_from_rows("colour", [["blue", "warm", "*"], ["red", "blue", "*"]], "rows")


def test_label_equal_to_its_own_value_is_fine(tmp_path):
    (tmp_path / "colour.csv").write_text("red;red;*\ncrimson;red;*\nblue;cold;*\n")
    h = read_hierarchy(tmp_path / "colour.csv")
    assert h.generalize(np.array([0, 1, 2]), 1).tolist() == ["red", "red", "cold"]
    frame = pd.DataFrame({"colour": ["red", "crimson", "blue", "blue"] * 3})
    result = generalize(frame, {"colour": 1}, k=3, hierarchies={"colour": h}, quasi_identifiers=["colour"])
    assert sorted(set(result.table["colour"])) == ["cold", "red"]


def test_swapped_labels_refused_on_web_upload():
    pytest.importorskip("fastapi")
    pytest.importorskip("multipart")
    from fastapi.testclient import TestClient

    from incrowd.web import create_app

    application = create_app(max_upload_mb=1)
    try:
        client = TestClient(application)
        got = client.post("/api/hierarchies", files=[("files", ("colour.csv", SWAPPED.encode(), "text/csv"))])
        assert got.status_code == 400, got.text
        message = got.json()["error"]
        assert "'colour.csv'" in message and "row 1" in message and "'blue'" in message
        assert client.get("/api/hierarchies").json()["hierarchies"] == []
    finally:
        application.state.sessions.close()


def test_arx_adult_hierarchies_pass():
    folder = data_dir() / "adult_arx"
    if not folder.is_dir():
        pytest.skip("benchmark data not present")
    files = sorted(folder.glob("adult_hierarchy_*.csv")) + sorted((folder / "full").glob("*hierarchy_*.csv"))
    checked = 0
    for f in files:
        if f.name == "adult_full_hierarchy_age.csv":
            continue  # overlapping age bins in this ARX snapshot: refused for two parents, as before
        assert read_hierarchy(f).depth >= 2
        checked += 1
    assert checked == 23
