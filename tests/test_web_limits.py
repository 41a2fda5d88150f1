"""Resource limits of the web server: the upload limit holds while the body arrives, decoding
stops at the cell, byte and column bounds, and the server's memory budget refuses a new upload.
Streaming checks run against a real ``incrowd serve`` on loopback."""

from __future__ import annotations

import asyncio
import json
import os
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
from fastapi.testclient import TestClient  # noqa: E402
from loopback import free_port  # noqa: E402

from incrowd.web import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MB = 1024 * 1024
BOUNDARY = b"incrowdlimitboundary"


class Server:
    """``incrowd serve`` in its own process, its temporary files in a folder of the test."""

    def __init__(self, tmp: Path, *flags: str):
        self.tmp = tmp / "server-tmp"
        self.tmp.mkdir()
        self.port = free_port()
        env = {**os.environ, "TMPDIR": str(self.tmp)}
        self.proc = subprocess.Popen([sys.executable, "-m", "incrowd.cli", "serve", "--port", str(self.port), *flags],
                                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited: {self.proc.stderr.read().decode()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("the server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    def bytes_on_disk(self) -> int:
        """Bytes in the server's temporary files, the unlinked spool files it holds open included."""
        seen: dict[tuple[int, int], int] = {}
        for root, _dirs, files in os.walk(self.tmp):
            for name in files:
                with_stat = os.stat(os.path.join(root, name))
                seen[(with_stat.st_dev, with_stat.st_ino)] = with_stat.st_size
        fd_dir = f"/proc/{self.proc.pid}/fd"
        for fd in os.listdir(fd_dir):
            try:
                if os.readlink(f"{fd_dir}/{fd}").startswith(str(self.tmp)):
                    st = os.stat(f"{fd_dir}/{fd}")
                    seen[(st.st_dev, st.st_ino)] = st.st_size
            except OSError:
                continue
        return sum(seen.values())

    def peak_rss(self) -> int:
        """The server process's peak resident memory (VmHWM), in bytes."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmHWM")


@pytest.fixture
def small_server(tmp_path):
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc")
    server = Server(tmp_path, "--max-upload-mb", "1")
    yield server
    server.stop()


def _read_response(sock: socket.socket) -> tuple[int, dict]:
    sock.settimeout(30)
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, socket.timeout):
            break
        if not chunk:
            break
        data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        if body and b"content-length:" in head.lower():
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            if len(body) >= length:
                break
    head, _, body = data.partition(b"\r\n\r\n")
    assert head, "no response from the server"
    return int(head.split()[1]), json.loads(body)


def _multipart_head(name: str) -> bytes:
    return (b"--" + BOUNDARY + b"\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + name.encode()
            + b"\"\r\nContent-Type: text/csv\r\n\r\n")


def test_declared_length_over_the_limit_is_refused_before_the_body(small_server):
    with socket.create_connection(("127.0.0.1", small_server.port), timeout=30) as sock:
        sock.sendall(b"POST /api/datasets HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % small_server.port
                     + b"Content-Type: multipart/form-data; boundary=" + BOUNDARY + b"\r\n"
                     b"Content-Length: 2097152000\r\n\r\n" + _multipart_head("big.csv"))
        # no more of the 2,000 MB is ever sent: the answer must come without it
        status, body = _read_response(sock)
    assert status == 413
    assert "upload limit of 1 MB" in body["error"] and "--max-upload-mb" in body["error"]
    assert small_server.bytes_on_disk() == 0


def test_chunked_body_over_the_limit_stops_at_the_limit(small_server):
    total = 20 * MB
    piece = b"1,2\n" * (16 * 1024)  # 64 KiB
    sent = peak = 0
    with socket.create_connection(("127.0.0.1", small_server.port), timeout=30) as sock:
        sock.sendall(b"POST /api/datasets HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % small_server.port
                     + b"Content-Type: multipart/form-data; boundary=" + BOUNDARY + b"\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        head = _multipart_head("big.csv")
        sock.sendall(b"%x\r\n%s\r\n" % (len(head), head))
        answered = False
        while sent < total:
            if select.select([sock], [], [], 0)[0]:
                answered = True
                break
            try:
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            except (BrokenPipeError, ConnectionResetError):
                answered = True
                break
            sent += len(piece)
            if sent % MB == 0:
                peak = max(peak, small_server.bytes_on_disk())
        if not answered:
            tail = b"\r\n--" + BOUNDARY + b"--\r\n"
            sock.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (len(tail), tail))
        peak = max(peak, small_server.bytes_on_disk())
        status, body = _read_response(sock)
    assert status == 413 and "--max-upload-mb" in body["error"]
    assert answered and sent < total  # the server stopped the upload, not the client
    assert peak <= MB + 64 * 1024  # nothing beyond the limit reached the disk


def test_body_reader_stops_at_the_limit_in_process():
    """The app consumes no more than the limit of a body sent without a length."""
    app = create_app(max_upload_mb=1)
    consumed = 0
    chunks = [_multipart_head("big.csv")] + [b"1,2\n" * 16384] * 320  # 20 MB

    async def receive():
        nonlocal consumed
        if not chunks:
            return {"type": "http.request", "body": b"", "more_body": False}
        chunk = chunks.pop(0)
        consumed += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": True}

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/api/datasets", "raw_path": b"/api/datasets", "query_string": b"",
             "root_path": "", "headers": [(b"host", b"testserver"),
                                          (b"content-type", b"multipart/form-data; boundary=" + BOUNDARY)],
             "client": ("127.0.0.1", 1), "server": ("testserver", 80)}
    try:
        asyncio.run(app(scope, receive, send))
    finally:
        app.state.sessions.close()
    assert sent[0]["status"] == 413
    assert "--max-upload-mb" in json.loads(sent[1]["body"])["error"]
    assert consumed <= MB + 64 * 1024 + 64 * 1024


def test_honest_upload_within_the_limit_still_works():
    app = create_app(max_upload_mb=1)
    try:
        client = TestClient(app)
        data = b"a,b\n" + b"1,2\n" * 200_000  # 800 KB
        up = client.post("/api/datasets", files={"file": ("ok.csv", data, "text/csv")})
        assert up.status_code == 200, up.text
        assert up.json()["rows"] == 200_000
    finally:
        app.state.sessions.close()


# -- decoded size: cells, bytes, columns -------------------------------------------------------


def _gzip_bomb(decoded_mb: int) -> bytes:
    import gzip

    return gzip.compress(b"a,b\n" + b"1,2\n" * (decoded_mb * MB // 4), compresslevel=9)


def _upload(app, name: str, data: bytes, client=None):
    client = client or TestClient(app)
    return client.post("/api/datasets", files={"file": (name, data)})


@pytest.fixture
def make_app():
    apps = []

    def make(**kwargs):
        app = create_app(**kwargs)
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.state.sessions.close()


def test_gzip_bomb_is_refused_by_max_cells(make_app):
    bomb = _gzip_bomb(64)
    assert len(bomb) < 200_000
    r = _upload(make_app(max_upload_mb=5, max_cells=100_000), "bomb.csv.gz", bomb)
    assert r.status_code == 413
    assert "--max-cells" in r.json()["error"] and "100,000 cells" in r.json()["error"]


def test_gzip_bomb_is_refused_by_max_decoded_mb(make_app):
    r = _upload(make_app(max_upload_mb=5, max_cells=None, max_decoded_mb=1), "bomb.csv.gz", _gzip_bomb(8))
    assert r.status_code == 413
    assert "--max-decoded-mb" in r.json()["error"] and "1 MB" in r.json()["error"]


@pytest.mark.slow
def test_gzip_bomb_stops_decoding_early_in_a_real_server(tmp_path):
    """The server's peak memory grows by less than the bomb's decoded size: it never held it."""
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc")
    import httpx

    bomb = _gzip_bomb(64)
    server = Server(tmp_path, "--max-upload-mb", "5", "--max-cells", "100000")
    try:
        base = f"http://127.0.0.1:{server.port}"
        assert httpx.get(base + "/api/samples", timeout=60).status_code == 200
        before = server.peak_rss()
        r = httpx.post(base + "/api/datasets", files={"file": ("bomb.csv.gz", bomb)}, timeout=120)
        after = server.peak_rss()
    finally:
        server.stop()
    assert r.status_code == 413 and "--max-cells" in r.json()["error"]
    assert after - before < 64 * MB


def test_parquet_with_many_rows_is_refused_from_its_footer(make_app, tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "many.parquet"
    pq.write_table(pa.table({"x": pa.array([7] * 5_000_000, pa.int64())}), path)
    data = path.read_bytes()
    assert len(data) < 200_000

    def no_rows(*_args, **_kwargs):
        raise AssertionError("the rows were read")

    monkeypatch.setattr(pq, "read_table", no_rows)
    r = _upload(make_app(max_cells=1_000_000), "many.parquet", data)
    assert r.status_code == 413
    assert "5,000,000 rows" in r.json()["error"] and "--max-cells" in r.json()["error"]


def test_header_with_too_many_columns_is_refused(make_app):
    header = ",".join(f"c{i}" for i in range(200_000)).encode()
    data = header + b"\n" + b",".join([b"0"] * 200_000) + b"\n"
    r = _upload(make_app(max_upload_mb=10), "wide.csv", data)
    assert r.status_code == 413
    assert "200,000 columns" in r.json()["error"] and "--max-columns" in r.json()["error"]


def test_first_line_without_end_is_refused_by_max_columns(make_app):
    import gzip

    data = gzip.compress(b"a" * (4 * MB))  # one endless line: never split into fields
    r = _upload(make_app(max_upload_mb=5, max_columns=100), "line.csv.gz", data)
    assert r.status_code == 413
    assert "first line longer than" in r.json()["error"] and "--max-columns" in r.json()["error"]


def test_memory_budget_refuses_a_new_upload_with_507(make_app):
    app = make_app(memory_budget_mb=1)
    data = b"a,b\n" + b"1,2\n" * 40_000  # 640 KB as two int64 columns
    first = TestClient(app)
    assert _upload(app, "one.csv", data, first).status_code == 200
    r = _upload(app, "two.csv", data, TestClient(app))  # another visitor, another session
    assert r.status_code == 507
    assert "--memory-budget-mb" in r.json()["error"] and "1 MB" in r.json()["error"]
    first.delete("/api/session")  # the first visitor's data goes, and the budget frees up
    assert _upload(app, "two.csv", data, TestClient(app)).status_code == 200


@pytest.mark.parametrize("flag", ["--max-cells", "--max-columns", "--max-decoded-mb", "--memory-budget-mb"])
def test_serve_refuses_a_non_positive_limit(flag):
    from typer.testing import CliRunner

    from incrowd.cli import app as cli_app

    result = CliRunner().invoke(cli_app, ["serve", flag, "0"])
    assert result.exit_code == 2
    assert flag in result.output and "must be positive" in result.output


def test_uploads_parsed_at_once_share_the_memory_budget(tmp_path):
    """Two uploads parsed in parallel cannot both pass the budget by each seeing the other's
    data not yet held."""
    import threading

    from incrowd.io._tables import read_table
    from incrowd.web._sessions import SessionStore
    from incrowd.web._upload_limits import UploadLimits, UploadRefused

    limits = UploadLimits.from_options(None, None, None, 4)  # 4 MB budget
    store = SessionStore()
    path = tmp_path / "a.csv"
    path.write_bytes(b"a,b\n" + b"1,2\n" * 150_000)  # 2.4 MB as two int64 columns: one fits, two do not
    parsing, release = threading.Event(), threading.Event()

    def held_reader(p, **kwargs):
        parsing.set()
        assert release.wait(30)
        return read_table(p, **kwargs)

    first_held: list[int] = []

    def first_upload():
        first_held.append(limits.read(path, "one.csv", store, held_reader)[1])

    first = threading.Thread(target=first_upload)
    first.start()
    try:
        assert parsing.wait(30)
        with pytest.raises(UploadRefused) as refused:
            limits.read(path, "two.csv", store)
        assert refused.value.status == 507 and "--memory-budget-mb" in str(refused.value)
    finally:
        release.set()
        first.join(30)
        store.close()
    assert first_held and first_held[0] >= 2_400_000
