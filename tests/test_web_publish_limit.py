"""The Publish page proposes the suppression limit ``--example-spec`` proposes for the uploaded
file with the uploaded hierarchies (kept on the server under other names than the user's)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
from fastapi.testclient import TestClient  # noqa: E402

from incrowd.publishing import example_spec  # noqa: E402
from incrowd.web import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

REGION = "n1;north;*\nn2;north;*\ns1;south;*\ns2;south;*\n"
# b6 and b7 stay apart at level 1: their rare rows need more than 1 % suppression
BAND = "".join(f"b{i};{'lo' if i < 6 else f'b{i}'};*\n" for i in range(8))


def limit_case() -> pd.DataFrame:
    """Rows whose example spec proposes 10 % without hierarchies and 5 % with them."""
    rng = np.random.default_rng(2)
    n = 300
    return pd.DataFrame({"region": rng.choice(["n1", "n2", "s1", "s2"], n, p=[.4, .3, .2, .1]),
                         "band": rng.choice([f"b{i}" for i in range(8)], n, p=[.3, .2, .15, .1, .1, .08, .04, .03]),
                         "disease": rng.choice(["flu", "cold"], n)})


def test_the_proposed_limit_is_the_example_specs_with_the_uploaded_hierarchies(tmp_path):
    frame = limit_case()
    files = {"people_hierarchy_region.csv": REGION, "people_hierarchy_band.csv": BAND}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    cli = example_spec(frame, hierarchy_files=[tmp_path / name for name in files], base_dir=tmp_path)
    flat = example_spec(frame)
    assert cli["privacy"]["max_suppression"] == "5%" and flat["privacy"]["max_suppression"] == "10%"
    app = create_app(max_upload_mb=1)
    try:
        client = TestClient(app)
        ds = client.post("/api/datasets", files={"file": ("people.csv", frame.to_csv(index=False).encode())})
        assert ds.status_code == 200, ds.text
        dataset = ds.json()["dataset"]
        before = client.get(f"/api/publish/example/{dataset}").json()
        assert before["spec"]["privacy"]["max_suppression"] == flat["privacy"]["max_suppression"]
        up = client.post("/api/publish/hierarchies", files=[("files", (name, text.encode()))
                                                           for name, text in files.items()])
        assert up.status_code == 200, up.text
        got = client.get(f"/api/publish/example/{dataset}").json()
        assert got["spec"]["columns"] == cli["columns"]
        assert got["spec"]["privacy"]["max_suppression"] == cli["privacy"]["max_suppression"]
        # the spec as proposed publishes within the proposed limit
        r = client.post("/api/publish", json={"dataset": dataset, "spec": got["spec"]})
        assert r.status_code == 200, r.text
    finally:
        app.state.sessions.close()
