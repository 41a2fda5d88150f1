"""Response times the tests used to assert, measured here instead (a bound inside a test makes
CI depend on the test order, the kernel cache and the machine's load).

Run from the repository root: ``.venv/bin/python bench/bench_response_times.py``. Prints one
table: each figure with the bound a test once asserted beside it, for a reader to judge.

- the web's negotiate on ARX Adult (8 quasi-identifiers, 6,480 nodes, k=5, 1 %): the server's
  time for the first request in a process (it may compile or load kernels) and for a second;
- a Dask scheduler address refused: a malformed one, an HTTP server that never greets (with a
  1 s timeout), a peer that answers text (with a 10 s timeout);
- Refine's ``max_seconds=0.3``: the seconds the search took in all.
"""

from __future__ import annotations

import contextlib
import http.server
import socket
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common.data import data_dir  # noqa: E402

ADULT_QIS = ["age", "education", "marital-status", "native-country", "occupation", "race", "sex", "workclass"]


def negotiate_adult() -> list[tuple[str, float, str]]:
    from fastapi.testclient import TestClient

    from incrowd.web import create_app

    folder = data_dir() / "adult_arx"
    if not (folder / "adult.csv").is_file():
        return [("web negotiate on Adult", float("nan"), f"skipped: no {folder}/adult.csv")]
    client = TestClient(create_app())
    with open(folder / "adult.csv", "rb") as fh:
        ds = client.post("/api/datasets", files={"file": ("adult.csv", fh, "text/csv")}).json()["dataset"]
    files = [("files", (f.name, f.read_bytes(), "text/csv")) for f in sorted(folder.glob("adult_hierarchy_*.csv"))]
    client.post("/api/hierarchies", files=files).raise_for_status()
    built = client.post("/api/lattice/build", json={"dataset": ds, "quasi_identifiers": ADULT_QIS})
    built.raise_for_status()
    request = {"lattice": built.json()["lattice"], "k": 5, "max_suppression": "1%"}
    rows = []
    for which in ("first", "second"):
        answer = client.post("/api/negotiate", json=request)
        answer.raise_for_status()
        rows.append((f"web negotiate on Adult, {which} request (server)", answer.json()["server_seconds"],
                     "1 s (test_web_e2e, first request)" if which == "first" else ""))
    return rows


@contextlib.contextmanager
def _silent_http_server():
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"tcp://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def _text_peer():
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn, contextlib.suppress(OSError):
                conn.sendall(b"SSH-2.0-OpenSSH_9.6 this is not dask\r\n")
                time.sleep(0.5)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def _refusal(address: str, **options) -> float:
    from incrowd import ParameterError
    from incrowd.distributed import connect

    t0 = time.perf_counter()
    try:
        with connect(address, **options):
            pass
    except ParameterError:
        return time.perf_counter() - t0
    raise RuntimeError(f"{address} was not refused")


def scheduler_refusals() -> list[tuple[str, float, str]]:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return [("Dask scheduler refusals", float("nan"), "skipped: the dask extra is not installed")]
    rows = [("scheduler 'local:0' refused", _refusal("local:0"), "5 s (test_scheduler)")]
    with _silent_http_server() as address:
        rows.append(("HTTP server refused, timeout 1 s", _refusal(address, timeout=1.0), "8 s (test_scheduler)"))
    with _text_peer() as address:
        rows.append(("text peer refused, timeout 10 s", _refusal(address, timeout=10.0), "5 s (test_scheduler)"))
    return rows


def refine_budget() -> list[tuple[str, float, str]]:
    import numpy as np

    from incrowd import Refine

    X = np.random.default_rng(0).standard_normal((6000, 3))
    Refine(k=3, start="mdav", max_rounds=2, random_state=0).fit(X[:300])  # compiled before the clock
    model = Refine(k=3, start="mdav", max_rounds=1_000_000, max_seconds=0.3, random_state=0).fit(X)
    return [("Refine max_seconds=0.3 on 6,000 x 3, seconds taken", model.seconds_, "20.3 s (test_refine)")]


def main() -> None:
    rows = negotiate_adult() + scheduler_refusals() + refine_budget()
    width = max(len(name) for name, _, _ in rows)
    print(f"{'measure':<{width}}  {'seconds':>8}  bound a test once asserted")
    for name, seconds, bound in rows:
        print(f"{name:<{width}}  {seconds:8.3f}  {bound}")


if __name__ == "__main__":
    main()
