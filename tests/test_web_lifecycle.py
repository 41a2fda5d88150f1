"""How `incrowd serve` stops, on real server processes on loopback: SIGTERM and SIGINT stop it
within a few seconds even with a job in flight, and delete every session folder; the folders of
a server killed outright are swept by the next server that starts, never a live server's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

from loopback import free_port, wait_until  # noqa: E402
from incrowd.datasets import load_census  # noqa: E402

pytestmark = [pytest.mark.skipif(os.name != "posix", reason="POSIX signals"), pytest.mark.slow]

CSV = load_census().head(100).to_csv(index=False).encode()
EXIT_BOUND = 15  # seconds the test waits for an exit before it kills the server and fails

# `incrowd serve` with the upload parse held for HOLD seconds (a stand-in for a long kernel that
# cannot be interrupted); it writes MARKER when the parse starts
_HELD_SERVE = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    import importlib, pkgutil
    import incrowd.web
    def held_version(original):
        def held(*args, **kwargs):
            Path(os.environ["MARKER"]).write_text("parsing")
            time.sleep(float(os.environ["HOLD"]))
            return original(*args, **kwargs)
        return held
    for info in pkgutil.iter_modules(incrowd.web.__path__):
        module = importlib.import_module(f"incrowd.web.{info.name}")
        if hasattr(module, "read_table"):
            module.read_table = held_version(module.read_table)
    from incrowd.cli import main
    sys.argv = ["incrowd", "serve", *sys.argv[1:]]
    main()
""")


def _up(base: str) -> bool:
    try:
        return httpx.get(f"{base}/api/samples", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _start(tmpdir: Path, *, held: float | None = None, marker: Path | None = None):
    """A server with TMPDIR=tmpdir; returns (process, base URL) once it answers."""
    port = free_port()
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    if held is None:
        args = [sys.executable, "-m", "incrowd.cli", "serve"]
    else:
        env.update(HOLD=str(held), MARKER=str(marker))
        args = [sys.executable, "-c", _HELD_SERVE]
    proc = subprocess.Popen([*args, "--port", str(port)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    if not wait_until(lambda: proc.poll() is not None or _up(base), 60):
        proc.kill()
        pytest.fail("the server did not start")
    assert proc.poll() is None, proc.stderr.read().decode()
    return proc, base


def _stop(proc):
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=10)


def _uploads_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*.csv") if p.is_file()]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_the_server_promptly_and_deletes_every_session_folder(tmp_path, sig):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    marker = tmp_path / "parsing"
    proc, base = _start(tmpdir, held=300, marker=marker)
    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            client.post("/api/datasets/sample/census")  # a second session folder, with its file
        in_flight = threading.Thread(target=lambda: _quiet_upload(base), daemon=True)
        in_flight.start()
        assert wait_until(marker.exists)  # an upload is being parsed: a job in flight
        assert _uploads_under(tmpdir) and any(p.name.startswith("incrowd") for p in tmpdir.iterdir())
        sent = time.monotonic()
        proc.send_signal(sig)
        try:
            proc.wait(timeout=EXIT_BOUND)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the server was still running {EXIT_BOUND} s after {sig.name}")
        took = time.monotonic() - sent
    finally:
        _stop(proc)
    assert [p.name for p in tmpdir.iterdir() if p.name.startswith("incrowd")] == []
    assert _uploads_under(tmpdir) == []
    print(f"{sig.name}: exited after {took:.2f} s with a job in flight")


def _quiet_upload(base):
    try:
        httpx.post(f"{base}/api/datasets", files={"file": ("held.csv", CSV, "text/csv")}, timeout=EXIT_BOUND + 5)
    except httpx.HTTPError:
        pass  # the server went away: what the test wants


def test_a_killed_servers_folder_is_swept_at_the_next_start_and_a_live_ones_is_not(tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    foreign = [tmpdir / "incrowd-serve-notes", tmpdir / "incrowd-web-abcd1234", tmpdir / "other-99999999-abcdefgh"]
    for f in foreign:
        f.mkdir()
    live = dead = None
    try:
        before = set(tmpdir.iterdir())
        live, live_base = _start(tmpdir)
        live_root = set(tmpdir.iterdir()) - before
        before = set(tmpdir.iterdir())
        dead, dead_base = _start(tmpdir)
        dead_root = set(tmpdir.iterdir()) - before
        assert len(live_root) == 1 and len(dead_root) == 1
        for base in (live_base, dead_base):
            assert httpx.post(f"{base}/api/datasets", files={"file": ("d.csv", CSV, "text/csv")},
                              timeout=30).status_code == 200
        assert _uploads_under(next(iter(dead_root))) and _uploads_under(next(iter(live_root)))
        dead.kill()
        dead.wait(timeout=10)
        assert next(iter(dead_root)).exists()  # SIGKILL leaves it: nothing ran to delete it
        nxt, _ = _start(tmpdir)
        _stop(nxt)
        assert not next(iter(dead_root)).exists()
        assert _uploads_under(next(iter(live_root)))  # a live server keeps its files
        assert all(f.is_dir() for f in foreign)  # folders of other names are never touched
    finally:
        for proc in (live, dead):
            if proc is not None:
                _stop(proc)


def test_sweep_spares_live_servers_links_and_other_names(tmp_path):
    from incrowd.web._lifecycle import sweep_stale_roots

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep.csv").write_text("a\n1\n")
    stale = tmp_path / f"incrowd-serve-{gone.pid}-abcd_123"
    stale.mkdir()
    (stale / "upload.csv").write_text("a\n1\n")
    alive = tmp_path / f"incrowd-serve-{os.getppid()}-abcd_123"
    alive.mkdir()
    link = tmp_path / f"incrowd-serve-{gone.pid}-linkto12"
    link.symlink_to(target)
    odd = [tmp_path / f"incrowd-serve-{gone.pid}-toolongname", tmp_path / f"incrowd-serve-{gone.pid}"]
    for f in odd:
        f.mkdir()
    assert sweep_stale_roots(tmp_path) == [stale]
    assert not stale.exists() and alive.is_dir() and link.is_symlink() and (target / "keep.csv").is_file()
    assert all(f.is_dir() for f in odd)


def test_serve_says_its_url_on_stderr_when_its_output_goes_to_files(tmp_path):
    port = free_port()
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with out.open("w") as o, err.open("w") as e:
        proc = subprocess.Popen([sys.executable, "-m", "incrowd.cli", "serve", "--port", str(port)],
                                env={**os.environ, "TMPDIR": str(tmp_path)}, stdout=o, stderr=e)
        try:
            assert wait_until(lambda: f"http://127.0.0.1:{port}/" in err.read_text(), 60), err.read_text()
            assert _up(f"http://127.0.0.1:{port}")  # the URL said is one that answers
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=EXIT_BOUND)


def test_url_of_a_wildcard_bind_is_loopback_and_ipv6_is_bracketed():
    from incrowd.web._lifecycle import url_of

    assert url_of("0.0.0.0", 8000) == "http://127.0.0.1:8000/"
    assert url_of("::", 80) == "http://[::1]:80/"
    assert url_of("::1", 8001) == "http://[::1]:8001/"
    assert url_of("example.org", 9) == "http://example.org:9/"
