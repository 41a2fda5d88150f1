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

from incrowd.web import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MB = 1024 * 1024
BOUNDARY = b"incrowdlimitboundary"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``incrowd serve`` in its own process, its temporary files in a folder of the test."""

    def __init__(self, tmp: Path, *flags: str):
        self.tmp = tmp / "server-tmp"
        self.tmp.mkdir()
        self.port = _free_port()
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
        sock.sendall(b"POST /api/datasets HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: multipart/form-data; boundary=" + BOUNDARY + b"\r\n"
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
        sock.sendall(b"POST /api/datasets HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: multipart/form-data; boundary=" + BOUNDARY + b"\r\n"
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
