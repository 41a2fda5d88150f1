"""--scheduler: the value is checked at once, and an address must answer as a Dask scheduler
within the timeout. Loopback peers only; every wait is bounded."""

from __future__ import annotations

import http.server
import socket
import threading
import time
import warnings

import pytest
from typer.testing import CliRunner

from incrowd import ParameterError
from incrowd.cli import app
from incrowd.distributed import connect

distributed = pytest.importorskip("distributed")


@pytest.mark.parametrize("spec,fragment", [
    ("local:abc", "whole number"), ("local:", "whole number"), ("local:1.5", "whole number"),
    ("local:-1", "whole number"), ("local:0", "N >= 1"), ("local:100000", "at most"),
    ("tls://127.0.0.1:8786", "tls:// protocol"), ("inproc://x", "inproc:// protocol"),
    ("ucx://127.0.0.1:1", "ucx:// protocol"), ("nowhere", "scheduler address"),
    ("tcp://127.0.0.1:99999", "port in [1, 65535]"), ("tcp://:8786", "needs a host"),
])
def test_bad_specs_are_refused_at_once_by_name(spec, fragment):
    with pytest.raises(ParameterError, match="--scheduler") as info:
        with connect(spec):
            pass
    assert fragment in str(info.value)


def test_the_worker_cap_and_good_specs():
    from incrowd.distributed._scheduler import max_local_workers, parse_scheduler

    assert parse_scheduler(f"local:{max_local_workers()}").workers == max_local_workers()
    assert parse_scheduler("127.0.0.1:8786").address == "tcp://127.0.0.1:8786"
    assert parse_scheduler(" tcp://[::1]:8786 ").address == "tcp://[::1]:8786"


@pytest.mark.parametrize("spec", ["local:abc", "local:100000", "tls://127.0.0.1:1"])
def test_cli_refuses_a_bad_spec_before_reading_the_input(tmp_path, spec):
    out = CliRunner().invoke(app, ["microaggregate", str(tmp_path / "absent.csv"), "-o", str(tmp_path / "o.csv"),
                                   "--k", "3", "--method", "mona", "--scheduler", spec])
    assert out.exit_code == 2
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --scheduler"), out.stderr
    assert "does not exist" not in out.stderr


class _Quiet(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def http_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_an_http_server_fails_within_the_timeout(http_server):
    # the message names the 1 s waited; how long the refusal takes is bench/bench_response_times.py's
    with pytest.raises(ParameterError, match="no Dask scheduler greeting within 1 s"):
        with connect(http_server, timeout=1.0):
            pass


def test_cli_scheduler_timeout_bounds_the_wait(http_server, tmp_path):
    source = tmp_path / "d.csv"
    source.write_text("a,b\n" + "".join(f"{i},{i % 7}\n" for i in range(20)))
    out = CliRunner().invoke(app, ["microaggregate", str(source), "-o", str(tmp_path / "o.csv"), "--k", "3",
                                   "--method", "mona", "--scheduler", http_server, "--scheduler-timeout", "1"])
    assert out.exit_code == 2
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and "--scheduler-timeout" in lines[0], out.stderr
    assert not (tmp_path / "o.csv").exists()


@pytest.fixture
def garbage_peer():
    """A loopback peer that greets every connection with text, as a misdirected service might."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                try:
                    conn.sendall(b"SSH-2.0-OpenSSH_9.6 hello there, this is not dask\r\n")
                    time.sleep(0.5)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join(5)
    listener.close()


def test_a_peer_answering_text_is_refused_at_once(garbage_peer):
    # refused on the first message: the timeout's message ("no Dask scheduler greeting") is not
    # the one raised
    with pytest.raises(ParameterError, match="does not speak the Dask protocol"):
        with connect(garbage_peer, timeout=10.0):
            pass


def test_a_closed_port_is_named():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ParameterError, match=f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}"):
        with connect(f"tcp://127.0.0.1:{port}", timeout=2.0):
            pass


def test_a_real_scheduler_on_loopback_still_connects():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with distributed.LocalCluster(n_workers=1, processes=False, protocol="tcp",
                                      dashboard_address=None) as cluster:
            address = cluster.scheduler.address
            assert address.startswith("tcp://127.0.0.1:")
            with connect(address, timeout=5.0) as client:
                assert client.submit(lambda: 41 + 1).result(timeout=30) == 42
