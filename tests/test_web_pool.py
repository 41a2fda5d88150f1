"""The web server's worker pool, on a real server on loopback: a slow parse does not hold up
anyone else's request, and a heavy request beyond the pool's queue is refused at once with 503
and Retry-After instead of waiting without bound."""

from __future__ import annotations

import importlib
import pkgutil
import threading

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
uvicorn = pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

import incrowd.web  # noqa: E402
from loopback import serving, wait_until  # noqa: E402

from incrowd.datasets import load_census  # noqa: E402
from incrowd.web import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# how long a held parse waits for the test to let it go: only reached when the server cannot
# answer the test's other requests meanwhile (the behaviour these tests forbid)
HOLD_SECONDS = 5.0


class Gate:
    """Holds every upload parse until ``release`` is set; counts the parses started and ended."""

    def __init__(self):
        self.release = threading.Event()
        self.started = 0
        self.finished = 0
        self._lock = threading.Lock()

    def wrap(self, original):
        def read_table(*args, **kwargs):
            with self._lock:
                self.started += 1
            try:
                self.release.wait(timeout=HOLD_SECONDS)
                return original(*args, **kwargs)
            finally:
                with self._lock:
                    self.finished += 1

        return read_table


def web_modules_reading_tables():
    """The modules of the web app that read uploads with their own ``read_table`` binding."""
    found = []
    for info in pkgutil.iter_modules(incrowd.web.__path__):
        module = importlib.import_module(f"incrowd.web.{info.name}")
        if hasattr(module, "read_table"):
            found.append(module)
    assert found
    return found


@pytest.fixture
def gate(monkeypatch):
    g = Gate()
    for module in web_modules_reading_tables():
        monkeypatch.setattr(module, "read_table", g.wrap(module.read_table))
    yield g
    g.release.set()



CSV = load_census().head(200).to_csv(index=False).encode()


def _upload_in_background(base, answers, key):
    def go():
        with httpx.Client(base_url=base, timeout=60) as client:
            answers[key] = client.post("/api/datasets", files={"file": (f"{key}.csv", CSV, "text/csv")})

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    return thread


def test_a_get_is_answered_while_an_upload_is_parsed(gate):
    application = create_app(max_upload_mb=5)
    answers = {}
    with serving(application) as base:
        upload = _upload_in_background(base, answers, "slow")
        assert wait_until(lambda: gate.started == 1)
        with httpx.Client(base_url=base, timeout=60) as other:
            got = other.get("/api/samples")
        parses_done_when_answered = gate.finished
        gate.release.set()
        upload.join(timeout=30)
    assert got.status_code == 200 and "census" in got.json()["samples"]
    # the other client was answered while the parse was still held, not after it
    assert parses_done_when_answered == 0
    assert answers["slow"].status_code == 200 and answers["slow"].json()["rows"] == 200


def test_beyond_the_queue_an_upload_gets_503_with_retry_after(gate):
    application = create_app(max_upload_mb=5, workers=1, queue=1)
    pool = application.state.pool
    answers = {}
    with serving(application) as base:
        first = _upload_in_background(base, answers, "first")
        assert wait_until(lambda: gate.started == 1)
        second = _upload_in_background(base, answers, "second")
        assert wait_until(lambda: pool.admitted == 2)  # one running, one waiting
        with httpx.Client(base_url=base, timeout=60) as third:
            refused = third.post("/api/datasets", files={"file": ("third.csv", CSV, "text/csv")})
        started_when_refused = gate.started
        gate.release.set()
        first.join(timeout=30)
        second.join(timeout=30)
        assert wait_until(lambda: pool.admitted == 0)
        with httpx.Client(base_url=base, timeout=60) as later:
            again = later.post("/api/datasets", files={"file": ("later.csv", CSV, "text/csv")})
    assert refused.status_code == 503, refused.text
    assert int(refused.headers["retry-after"]) > 0
    assert "busy" in refused.json()["error"] and "--workers" in refused.json()["error"]
    assert started_when_refused == 1  # the waiting upload had not started: one worker
    assert answers["first"].status_code == 200 and answers["second"].status_code == 200
    assert again.status_code == 200  # a full pool refuses, it does not stay full


def test_every_heavy_endpoint_goes_through_the_pool(gate):
    """With the only worker held by a parse and no queue, each heavy step is refused with 503:
    none of them runs beside the pool."""
    application = create_app(max_upload_mb=5, workers=1, queue=0)
    answers = {}
    with serving(application) as base, httpx.Client(base_url=base, timeout=60) as client:
        gate.release.set()
        dataset = client.post("/api/datasets/sample/census").json()["dataset"]
        build = {"dataset": dataset, "quasi_identifiers": ["AGI", "FEDTAX"],
                 "intervals": {"AGI": [1000, 2000], "FEDTAX": [1000, 2000]}}
        lattice = client.post("/api/lattice/build", json=build).json()["lattice"]
        gate.release.clear()
        hold = _upload_in_background(base, answers, "hold")
        assert wait_until(lambda: gate.started == 1)
        refused = {
            "sample": client.post("/api/datasets/sample/census"),
            "microaggregate": client.post("/api/microaggregate", json={"dataset": dataset, "k": 3}),
            "lattice build": client.post("/api/lattice/build", json=build),
            "negotiate": client.post("/api/negotiate", json={"lattice": lattice, "k": 2}),
            "generalize": client.post("/api/generalize", json={"lattice": lattice, "levels": {"AGI": 1, "FEDTAX": 1},
                                                               "k": 2}),
            "hierarchy": client.post("/api/hierarchies", files={"files": ("AGI.csv", b"1;*\n2;*\n", "text/csv")}),
        }
        gate.release.set()
        hold.join(timeout=30)
        after = client.post("/api/microaggregate", json={"dataset": dataset, "k": 3})
    for step, answer in refused.items():
        assert answer.status_code == 503 and "retry-after" in answer.headers, (step, answer.status_code, answer.text)
    assert answers["hold"].status_code == 200
    assert after.status_code == 200, after.text


def test_serve_checks_workers_and_queue_in_one_line():
    from typer.testing import CliRunner

    from incrowd.cli import app

    for args, expected in ((["--workers", "0"], "--workers must be at least 1"),
                           (["--queue", "-1"], "--queue must be 0 or more")):
        out = CliRunner().invoke(app, ["serve", *args])
        assert out.exit_code == 2, out.output
        lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:") and expected in lines[0], out.stderr
