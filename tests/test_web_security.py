"""The web server against a hostile page and hostile input: foreign Host names, cross-site
state-changing requests, the security headers, and errors that are JSON and show no server path."""

from __future__ import annotations

import gzip
import http.server
import io
import os
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from loopback import free_port  # noqa: E402
from incrowd.cli import app as cli_app  # noqa: E402
from incrowd.datasets import load_census  # noqa: E402
from incrowd.web import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
SECURITY_HEADERS = {"x-frame-options": "DENY", "x-content-type-options": "nosniff", "referrer-policy": "no-referrer"}


@pytest.fixture
def app():
    application = create_app(max_upload_mb=1)
    yield application
    application.state.sessions.close()


def sessions(application) -> int:
    return len(application.state.sessions._sessions)


def census_csv() -> bytes:
    return load_census().to_csv(index=False).encode()


def upload(client, name="census.csv", data=None, **kw):
    return client.post("/api/datasets", files={"file": (name, census_csv() if data is None else data)}, **kw)


# --- Host and origin -------------------------------------------------------------------------

def test_a_foreign_host_gets_400(app):
    client = TestClient(app)
    for path in ("/", "/api/samples"):
        got = client.get(path, headers={"Host": "evil.example"})
        assert got.status_code == 400 and "evil.example" in got.json()["error"]
    assert upload(client, headers={"Host": "evil.example:8000"}).status_code == 400
    assert sessions(app) == 0
    for host in ("127.0.0.1:8000", "localhost:1234", "[::1]:8000", "testserver"):
        assert client.get("/api/samples", headers={"Host": host}).status_code == 200, host


def test_served_hosts_are_the_bound_address_and_allowed_hosts(monkeypatch):
    import incrowd.web
    from incrowd.web import _lifecycle

    # `incrowd serve` runs the app through incrowd.web's serve (loaded from _lifecycle on first
    # use and kept on the package), which would serve for real: both names stand in
    served = {}

    def fake(application, **kw):
        served.update(app=application, **kw)

    monkeypatch.setattr(_lifecycle, "serve", fake)
    monkeypatch.setattr(incrowd.web, "serve", fake, raising=False)
    out = CliRunner().invoke(cli_app, ["serve", "--port", "8123", "--allowed-host", "incrowd.example.org",
                                       "--allowed-host", "proxy.example:9443"])
    assert out.exit_code == 0, out.output
    client = TestClient(served["app"])
    try:
        for host in ("127.0.0.1:8123", "localhost:8123", "[::1]:8123", "incrowd.example.org",
                     "incrowd.example.org:80", "proxy.example:9443"):
            assert client.get("/api/samples", headers={"Host": host}).status_code == 200, host
        for host in ("127.0.0.1:9999", "evil.example:8123", "proxy.example", "testserver"):
            assert client.get("/api/samples", headers={"Host": host}).status_code == 400, host
    finally:
        served["app"].state.sessions.close()


def test_serve_refuses_a_malformed_allowed_host():
    out = CliRunner().invoke(cli_app, ["serve", "--allowed-host", "example.org:http"])
    assert out.exit_code == 2
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: --allowed-host 'example.org:http'"), out.stderr


def test_a_cross_origin_upload_is_refused_and_creates_no_session(app):
    client = TestClient(app)
    for headers in ({"Origin": "http://evil.example"}, {"Origin": "http://127.0.0.1:9999"},
                    {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"},
                    {"Origin": "http://testserver", "Sec-Fetch-Site": "cross-site"}):
        got = upload(client, headers=headers)
        assert got.status_code == 403, headers
        assert got.headers["content-type"] == "application/json" and "cross-site" in got.json()["error"]
        assert "set-cookie" not in got.headers
    assert client.post("/api/datasets/sample/census", headers={"Origin": "http://evil.example"}).status_code == 403
    assert client.delete("/api/session", headers={"Origin": "http://evil.example"}).status_code == 403
    assert sessions(app) == 0 and not any(app.state.sessions.root.iterdir())


def test_another_site_may_link_here_but_not_load_from_here(app):
    client = TestClient(app)
    for mode in ("no-cors", "cors"):  # <img>, <script>, fetch() from another site's page
        got = client.get("/", headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": mode})
        assert got.status_code == 403 and "set-cookie" not in got.headers
    assert sessions(app) == 0
    link = client.get("/", headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"})
    assert link.status_code == 200 and sessions(app) == 1


def test_same_origin_and_non_browser_posts_work(app):
    client = TestClient(app)
    for headers in ({"Origin": "http://testserver"}, {"Origin": "http://testserver:80"},
                    {"Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "none"},
                    {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"},
                    {}):  # curl, scripts, TestClient: no browser sends a cross-site POST without Origin
        got = upload(client, headers=headers)
        assert got.status_code == 200, (headers, got.text)
    # a GET is not state-changing: a foreign Origin on it is not refused (the cookie is SameSite=strict)
    assert client.get("/api/samples", headers={"Origin": "http://evil.example"}).status_code == 200


def test_every_response_carries_the_security_headers(app):
    client = TestClient(app)
    responses = [client.get("/"), client.get("/negotiate"), client.get("/api/samples"), upload(client),
                 client.get("/api/datasets/nope"), client.get("/no/such/page"),
                 client.get("/", headers={"Host": "evil.example"}),
                 upload(client, headers={"Origin": "http://evil.example"})]
    for got in responses:
        for name, value in SECURITY_HEADERS.items():
            assert got.headers.get(name) == value, (got.request.url, name)
        csp = got.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert "'unsafe-inline'" not in csp.split("script-src", 1)[1].split(";")[0]


def test_inline_scripts_carry_the_nonce_of_their_response(app):
    client = TestClient(app)
    first, second = client.get("/"), client.get("/negotiate")
    for got in (first, second):
        nonce = got.headers["content-security-policy"].split("'nonce-", 1)[1].split("'", 1)[0]
        assert len(nonce) >= 16
        assert got.text.count("<script") == got.text.count(f'<script nonce="{nonce}">') >= 2
    assert first.headers["content-security-policy"] != second.headers["content-security-policy"]


# --- Errors ----------------------------------------------------------------------------------

def list_column_parquet() -> bytes:
    buffer = io.BytesIO()
    pq.write_table(pa.table({"a": [[1, 2], [3]], "b": [1, 2]}), buffer)
    return buffer.getvalue()


def assert_json_4xx(got, *fragments: str) -> str:
    assert 400 <= got.status_code < 500, (got.status_code, got.text)
    assert got.headers["content-type"] == "application/json", got.headers["content-type"]
    message = got.json()["error"]
    assert "Traceback" not in message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_bad_uploads_and_parameters_are_json_4xx(app):
    client = TestClient(app, raise_server_exceptions=False)
    ds = upload(client).json()["dataset"]
    assert_json_4xx(client.post("/api/microaggregate", json={"dataset": ds, "k": 5, "method": "ona", "seed": -1}),
                    "-1")
    packed = gzip.compress(census_csv())
    assert_json_4xx(upload(client, "half.csv.gz", packed[: len(packed) // 2]), "half.csv.gz")
    assert_json_4xx(upload(client, "noise.csv.gz", b"\x1f\x8b" + os.urandom(400)), "noise.csv.gz")
    assert_json_4xx(upload(client, "lists.parquet", list_column_parquet()), "'a'", "lists.parquet")
    assert_json_4xx(client.get("/no/such/page"))
    assert_json_4xx(client.put("/api/samples"))


def test_a_data_folder_sample_error_names_the_sample_not_its_path(tmp_path):
    folder = tmp_path / "samples"
    folder.mkdir()
    (folder / "broken.csv").write_text('a,b\n1,"2\n3,4\n')
    (folder / "bad.csv.gz").write_bytes(b"\x1f\x8b" + b"\x00" * 40)
    (folder / "lists.parquet").write_bytes(list_column_parquet())
    application = create_app(data_dir=folder)
    try:
        client = TestClient(application, raise_server_exceptions=False)
        for name in ("broken.csv", "bad.csv.gz", "lists.parquet"):
            message = assert_json_4xx(client.post(f"/api/datasets/sample/{name}"), name)
            for server_path in (str(folder), str(tmp_path), str(application.state.sessions.root)):
                assert server_path not in message, message
            assert not Path(message.split()[-1]).is_absolute()
    finally:
        application.state.sessions.close()


def test_an_unexpected_exception_is_json_without_paths(app, monkeypatch):
    from incrowd.web import _app

    client = TestClient(app, raise_server_exceptions=False)
    root = str(app.state.sessions.root)

    def broken(*_a, **_k):
        raise ValueError(f"could not parse {root}/abc/upload.csv")
    monkeypatch.setattr(_app, "_describe_dataset", broken)
    message = assert_json_4xx(upload(client))
    assert root not in message and "<server>" in message

    def crashing(*_a, **_k):
        raise RuntimeError(f"bug near {root}/x")
    monkeypatch.setattr(_app, "_describe_dataset", crashing)
    got = upload(client)
    assert got.status_code == 500 and got.headers["content-type"] == "application/json"
    assert got.json() == {"error": "internal error (RuntimeError); the server's log has the details"}
    assert got.headers["x-frame-options"] == "DENY"


# --- In a browser ----------------------------------------------------------------------------

ATTACK_PAGE = b"""<!doctype html><html><body><script>
window.attempts = (async () => {
  const fd = new FormData();
  fd.append("file", new Blob(["a,b\\n1,2\\n"], {type: "text/csv"}), "bomb.csv");
  const out = [];
  for (const [mode, body] of [["cors", fd], ["no-cors", fd]]) {
    try { const r = await fetch(TARGET + "/api/datasets", {method: "POST", body, mode, credentials: "include"});
          out.push(mode + ":" + r.status); }
    catch (e) { out.push(mode + ":failed"); }
  }
  return out;
})();
</script></body></html>"""


def test_a_page_on_another_port_cannot_post_to_the_server():
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists() and not os.environ.get("INCROWD_REQUIRE_BROWSER"):
        pytest.skip("Debian's chromium is not installed")
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    import uvicorn

    application = create_app()
    config = uvicorn.Config(application, host="127.0.0.1", port=free_port(), log_level="warning")
    server = uvicorn.Server(config)
    target = f"http://127.0.0.1:{config.port}"

    class Attack(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            body = ATTACK_PAGE.replace(b"TARGET", f'"{target}"'.encode(), 1)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args):
            pass

    attacker = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Attack)
    threads = [threading.Thread(target=server.run, daemon=True),
               threading.Thread(target=attacker.serve_forever, daemon=True)]
    for t in threads:
        t.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert time.monotonic() < deadline and threads[0].is_alive(), "the test server did not start"
            time.sleep(0.05)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(chromium), headless=True,
                                        args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
            try:
                page = browser.new_page()
                page.goto(f"http://127.0.0.1:{attacker.server_address[1]}/")
                attempts = page.evaluate("window.attempts")
                after_attack = sessions(application)
                # the same origin's own page still uploads
                own = browser.new_page()
                refused = []
                own.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
                own.goto(target + "/negotiate")
                own.wait_for_load_state("load")
                own.goto(target + "/")
                own.wait_for_load_state("load")
                own.click("#pick-sample")  # the page's own script runs under the policy
                own.wait_for_selector("#data-rows")
                own_status = own.evaluate("""async () => { const fd = new FormData();
                    fd.append("file", new Blob(["a,b\\n1,2\\n"], {type: "text/csv"}), "ok.csv");
                    return (await fetch("/api/datasets", {method: "POST", body: fd})).status; }""")
            finally:
                browser.close()
        # the browser cannot read a cross-origin answer anyway: the server must have refused it
        assert len(attempts) == 2 and not any(a.endswith(":200") for a in attempts), attempts
        assert after_attack == 0
        assert own_status == 200 and refused == []
        assert sessions(application) == 1  # the server's own page's session only
    finally:
        attacker.shutdown()
        server.should_exit = True
        threads[0].join(timeout=10)
        application.state.sessions.close()
