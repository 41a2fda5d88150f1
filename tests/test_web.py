"""The web app through FastAPI's TestClient: microaggregation round trip and the safety rules."""

from __future__ import annotations

import io
import time

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
from _thresholds import as_models  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from incrowd import microaggregate, verify_k_anonymity, verify_l_diversity  # noqa: E402
from incrowd.datasets import load_census  # noqa: E402
from incrowd.generalization import Lattice, negotiate, read_hierarchy  # noqa: E402
from incrowd.web import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture
def app():
    application = create_app(max_upload_mb=1)
    yield application
    application.state.sessions.close()


def census_csv() -> bytes:
    return load_census().to_csv(index=False).encode()


def test_upload_microaggregate_download(app):
    client = TestClient(app)
    assert client.get("/").status_code == 200
    up = client.post("/api/datasets", files={"file": ("census.csv", census_csv(), "text/csv")})
    assert up.status_code == 200, up.text
    info = up.json()
    assert info["rows"] == 1080 and len(info["columns"]) == 13 and len(info["preview"]) == 10
    assert all(c["dtype"] == "numeric" for c in info["columns"])
    run = client.post("/api/microaggregate", json={"dataset": info["dataset"], "k": 5, "method": "mdav-star"})
    assert run.status_code == 200, run.text
    report = run.json()
    api = microaggregate(load_census(), 5, "mdav-star")
    assert report["information_loss"] == api.information_loss
    assert report["k_anonymous"] and report["min_group_size"] >= 5
    assert report["command"].startswith("incrowd microaggregate census.csv -o census_mdav-star_k5.csv --k 5")
    got = client.get(report["download"])
    assert got.status_code == 200
    published = pd.read_csv(io.BytesIO(got.content))
    assert published.shape == (1080, 13)
    assert verify_k_anonymity(published, None, 5).ok


def test_sample_and_parameters_reach_the_method(app):
    client = TestClient(app)
    ds = client.post("/api/datasets/sample/census").json()["dataset"]
    run = client.post("/api/microaggregate", json={"dataset": ds, "k": 4, "method": "v-mdav", "gamma": 0.5,
                                                   "quasi_identifiers": ["AGI", "FICA"]}).json()
    assert run["params"] == {"gamma": 0.5} and run["quasi_identifiers"] == ["AGI", "FICA"]
    assert "--gamma 0.5" in run["command"] and "--qi AGI,FICA" in run["command"]
    api = microaggregate(load_census(), 4, "v-mdav", quasi_identifiers=["AGI", "FICA"], gamma=0.5)
    assert run["information_loss"] == api.information_loss
    assert client.post("/api/datasets/sample/../../etc").status_code in (400, 404)


def test_refine_and_bound_reach_the_method(app):
    client = TestClient(app)
    ds = client.post("/api/datasets/sample/census").json()["dataset"]
    run = client.post("/api/microaggregate", json={"dataset": ds, "k": 5, "method": "refine", "max_rounds": 3,
                                                   "seed": 1, "bound": True,
                                                   "quasi_identifiers": ["AGI", "FICA", "AFNLWGT"]}).json()
    assert run["params"]["max_rounds"] == 3
    assert "--method refine" in run["command"] and "--bound" in run["command"] and "bound=True" in run["python"]
    api = microaggregate(load_census(), 5, "refine", quasi_identifiers=["AGI", "FICA", "AFNLWGT"], max_rounds=3,
                         random_state=1, bound=True)
    assert run["information_loss"] == api.information_loss
    assert run["lower_bound"] == api.lower_bound and run["gap"] == pytest.approx(api.gap)


def test_oversize_upload_is_refused_clearly(app):
    client = TestClient(app)
    big = b"a,b\n" + b"123456,654321\n" * 100_000  # about 1.4 MB, limit 1 MB
    r = client.post("/api/datasets", files={"file": ("big.csv", big)})
    assert r.status_code == 413
    assert "larger than the upload limit of 1 MB" in r.json()["error"]
    # refused while the body arrives, before any session exists; never a partial file
    for session in app.state.sessions._sessions.values():
        assert list(session.folder.iterdir()) == []


def test_path_like_filenames_stay_in_the_session_folder(app):
    client = TestClient(app)
    for name in ("../../evil.csv", "/etc/passwd.csv", "..\\..\\win.csv", "a/b/../c.csv"):
        r = client.post("/api/datasets", files={"file": (name, b"x,y\n1,2\n3,4\n")})
        assert r.status_code == 200, r.text
        assert "/" not in r.json()["name"] and "\\" not in r.json()["name"]
    session = next(iter(app.state.sessions._sessions.values()))
    files = list(session.folder.iterdir())
    assert len(files) == 4 and all(f.parent == session.folder for f in files)
    assert not any(f.name.startswith(".") or "evil" in f.name for f in files)
    r = client.post("/api/datasets", files={"file": ("notes.txt", b"hello")})
    assert r.status_code == 400 and "not CSV, Parquet, SPSS, Stata or SAS" in r.json()["error"]


def test_sessions_do_not_see_each_other(app):
    first, second = TestClient(app), TestClient(app)
    ds = first.post("/api/datasets/sample/census").json()["dataset"]
    res = first.post("/api/microaggregate", json={"dataset": ds, "k": 3}).json()
    second.get("/")
    assert second.get(res["download"]).status_code == 404
    r = second.post("/api/microaggregate", json={"dataset": ds, "k": 3})
    assert r.status_code == 400 and "unknown dataset" in r.json()["error"]
    assert second.get(f"/api/datasets/{ds}").status_code == 400
    assert first.get(res["download"]).status_code == 200


def test_bad_parameters_give_the_cli_messages(app):
    client = TestClient(app)
    ds = client.post("/api/datasets/sample/census").json()["dataset"]
    cases = [({"k": 1}, "k must be an integer in [2, n_rows=1080]; got 1"),
             ({"k": 5, "method": "kmeans"}, "unknown method 'kmeans'"),
             ({"k": 5, "quasi_identifiers": ["nope"]}, "unknown quasi-identifier column 'nope'"),
             ({"k": 5, "method": "mdav", "gamma": 0.3}, "gamma")]
    for extra, message in cases:
        r = client.post("/api/microaggregate", json={"dataset": ds, **extra})
        assert r.status_code == 400 and message in r.json()["error"], (extra, r.json())
        assert "Traceback" not in r.text
    r = client.post("/api/microaggregate", json={"dataset": ds, "k": "five"})
    assert r.status_code == 400 and r.json()["error"].startswith("k:")


def test_idle_and_ended_sessions_lose_their_files():
    app = create_app(idle_seconds=0.2)
    try:
        client = TestClient(app)
        client.post("/api/datasets/sample/census")
        folder = next(iter(app.state.sessions._sessions.values())).folder
        assert folder.is_dir()
        time.sleep(0.3)
        TestClient(app).get("/api/samples")  # any request sweeps idle sessions
        assert not folder.exists() and len(app.state.sessions) == 0
        client2 = TestClient(app)
        client2.post("/api/datasets/sample/census")
        folder2 = next(iter(app.state.sessions._sessions.values())).folder
        assert client2.delete("/api/session").json() == {"ended": True}
        assert not folder2.exists()
    finally:
        app.state.sessions.close()


def test_openapi_names_the_endpoints(app):
    schema = TestClient(app).get("/openapi.json").json()
    assert {"/api/datasets", "/api/microaggregate", "/api/results/{result_id}", "/api/hierarchies",
            "/api/lattice/build", "/api/negotiate", "/api/generalize"} <= set(schema["paths"])
    negotiate_fields = schema["components"]["schemas"]["NegotiateRequest"]["properties"]
    assert {"lattice", "k", "l", "max_levels", "max_suppression", "runtime_histogram"} <= set(negotiate_fields)
    fields = schema["components"]["schemas"]["MicroaggregateRequest"]["properties"]
    assert {"k", "method", "quasi_identifiers", "identifiers"} <= set(fields)


# -- negotiation --------------------------------------------------------------------------

def _people_csv(n: int = 300) -> bytes:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"name": [f"p{i}" for i in range(n)], "age": rng.integers(18, 80, n),
                          "region": rng.choice(["n1", "n2", "s1", "s2"], n),
                          "disease": rng.choice(["flu", "cold", "asthma", "none"], n)})
    return frame.to_csv(index=False).encode()


REGION = b"n1;north;*\nn2;north;*\ns1;south;*\ns2;south;*\n"


def test_negotiation_round_trip_equals_the_api(app):
    client = TestClient(app)
    ds = client.post("/api/datasets", files={"file": ("people.csv", _people_csv())}).json()["dataset"]
    up = client.post("/api/hierarchies", files=[("files", ("people_hierarchy_region.csv", REGION))])
    assert up.status_code == 200, up.text
    assert up.json()["hierarchies"] == [{"attribute": "region", "file": "people_hierarchy_region.csv",
                                         "levels": 3, "max_level": 2, "values": 4}]
    built = client.post("/api/lattice/build", json={"dataset": ds, "quasi_identifiers": ["age", "region"],
                                                    "intervals": {"age": [5, 10, 20]}, "sensitive": "disease"})
    assert built.status_code == 200, built.text
    info = built.json()
    assert info["nodes"] == 5 * 3 and info["sensitive"] == "disease"
    assert info["command"] == ("incrowd lattice build people.csv -o people.lattice --qi age,region "
                               "--hierarchies hierarchies/ --intervals age=5,10,20 --sensitive disease")
    frame = pd.read_csv(io.BytesIO(_people_csv()))
    hierarchy_path = app.state.sessions.root / "region.csv"
    hierarchy_path.write_bytes(REGION)
    lattice = Lattice.build(frame, ["age", "region"], hierarchies={"region": read_hierarchy(hierarchy_path, "region")},
                            intervals={"age": [5, 10, 20]}, sensitive="disease")
    statuses = []
    for request in ({"k": 5, "max_suppression": "2%"}, {"k": 40, "max_suppression": 3, "max_levels": {"age": 1}},
                    {"l": 4, "max_suppression": 0.01, "max_levels": {"region": 0, "age": 1}}):
        r = client.post("/api/negotiate", json={"lattice": info["lattice"], **request})
        assert r.status_code == 200, r.text
        page = r.json()
        api = negotiate(lattice, **as_models(request)).to_dict()
        for field in ("status", "exact", "relaxations", "request"):
            assert page[field] == api[field], (request, field)
        view = page["view"]
        assert [v["height"] for v in view] == list(range(6, -1, -1))
        assert sum(v["nodes"] for v in view) == 15
        statuses.append(page["status"])
        crit = "k" if "k" in request else "l"
        vmax = page["request"]["max_levels"]
        meet = [sum(lv.values()) for lv in (dict(zip(lattice.attributes, map(int, v))) for v in lattice.levels)
                if all(lv[a] <= vmax[a] for a in lv)
                and lattice.suppressed(lv, **as_models({crit: request[crit]})) <= page["request"]["max_suppression"]]
        assert [v["meet"] for v in view] == [meet.count(h) for h in range(6, -1, -1)]
        marked = {h: v["answers"] for v in view for h in [v["height"]] if v["answers"]}
        nodes = [page["exact"]] if page["exact"] else [n for n in page["relaxations"].values() if n]
        assert sorted(marked) == sorted({n["height"] for n in nodes})
    assert statuses == ["exact", "relaxed", "relaxed"]
    node = page["relaxations"]["height"]
    g = client.post("/api/generalize", json={"lattice": info["lattice"], "levels": node["levels"], "l": 4})
    assert g.status_code == 200, g.text
    table = pd.read_csv(io.BytesIO(client.get(g.json()["download"]).content))
    assert table.shape[0] == 300 - node["suppressed"]
    assert verify_l_diversity(table, ["age", "region"], "disease", 4).ok


def test_negotiation_errors_and_isolation(app):
    client, other = TestClient(app), TestClient(app)
    ds = client.post("/api/datasets", files={"file": ("people.csv", _people_csv())}).json()["dataset"]
    bad = client.post("/api/hierarchies", files=[("files", ("region.csv", b"n1;north\nn1;south\n"))])
    assert bad.status_code == 400
    assert bad.json()["error"].startswith("hierarchy file 'region.csv': value 'n1' at level 0 has two parents")
    r = client.post("/api/lattice/build", json={"dataset": ds, "quasi_identifiers": ["age", "region"]})
    assert r.status_code == 400 and "no hierarchy for quasi-identifier(s) ['age', 'region']" in r.json()["error"]
    r = client.post("/api/lattice/build", json={"dataset": ds, "quasi_identifiers": ["age"],
                                                "intervals": {"age": [5, 7]}})
    assert r.status_code == 400 and "must each be a multiple of the one before" in r.json()["error"]
    r = client.post("/api/lattice/build", json={"dataset": ds, "quasi_identifiers": ["age"],
                                                "intervals": {"age": [5, 10]}, "partial": "150%"})
    assert r.status_code == 400 and r.json()["error"].startswith("--partial must be a share")
    lattice = client.post("/api/lattice/build", json={"dataset": ds, "quasi_identifiers": ["age"],
                                                      "intervals": {"age": [5, 10]}}).json()["lattice"]
    for request, message in (({"k": 1}, "k must be an integer in [2, n_rows=300]; got 1"),
                             ({"k": 5, "max_levels": {"agex": 1}}, "unknown attribute(s) ['agex']"),
                             ({"k": 5, "max_levels": {"age": 9}}, "level of 'age' must be an integer in [0, 3]"),
                             ({"k": 5, "max_suppression": "150%"}, "max_suppression"),
                             ({"l": 2}, "sensitive")):
        r = client.post("/api/negotiate", json={"lattice": lattice, **request})
        assert r.status_code == 400 and message in r.json()["error"], (request, r.json())
    assert other.post("/api/negotiate", json={"lattice": lattice, "k": 5}).status_code == 400
    r = other.post("/api/generalize", json={"lattice": lattice, "levels": {"age": 1}, "k": 5})
    assert r.status_code == 400 and "unknown lattice" in r.json()["error"]
    r = client.post("/api/generalize", json={"lattice": lattice, "levels": {"age": 0}, "k": 300})
    assert r.status_code == 400 and "every row would be suppressed" in r.json()["error"]


def test_negotiation_takes_more_privacy_models_as_the_spec_writes_them(app):
    from incrowd.privacy import EntropyL, RecursiveL

    client = TestClient(app)
    ds = client.post("/api/datasets", files={"file": ("people.csv", _people_csv())}).json()["dataset"]
    client.post("/api/hierarchies", files=[("files", ("people_hierarchy_region.csv", REGION))])
    info = client.post("/api/lattice/build", json={"dataset": ds, "quasi_identifiers": ["age", "region"],
                                                   "intervals": {"age": [5, 10, 20]}, "sensitive": "disease"}).json()
    frame = pd.read_csv(io.BytesIO(_people_csv()))
    hierarchy_path = app.state.sessions.root / "region.csv"
    hierarchy_path.write_bytes(REGION)
    lattice = Lattice.build(frame, ["age", "region"], hierarchies={"region": read_hierarchy(hierarchy_path, "region")},
                            intervals={"age": [5, 10, 20]}, sensitive="disease")
    models = {"entropy_l": 1.8, "recursive_l": {"c": 2, "l": 2}}
    r = client.post("/api/negotiate", json={"lattice": info["lattice"], "k": 3, "max_suppression": "5%",
                                            "models": models})
    assert r.status_code == 200, r.text
    page = r.json()
    api = negotiate(lattice, k=3, max_suppression="5%", models=[EntropyL(l=1.8), RecursiveL(c=2, l=2)]).to_dict()
    for field in ("status", "exact", "relaxations", "request"):
        assert page[field] == api[field], field
    assert "--model 'recursive_l={ c = 2, l = 2 }'" in page["command"] and "--model entropy_l=1.8" in page["command"]
    # the view counts each node's suppression with the models too
    within = [sum(lv.values()) for lv in (dict(zip(lattice.attributes, map(int, v))) for v in lattice.levels)]
    supp = lattice.suppressed_all(k=3, models=[EntropyL(l=1.8), RecursiveL(c=2, l=2)])
    meet = [h for h, s in zip(within, supp) if 0 <= s <= page["request"]["max_suppression"]]
    assert [v["meet"] for v in page["view"]] == [meet.count(h) for h in range(6, -1, -1)]
    bad = client.post("/api/negotiate", json={"lattice": info["lattice"], "k": 3, "models": {"l": 2}})
    assert bad.status_code == 400 and "own options" in bad.json()["error"]
