"""A bounded load test of the web UI's microaggregation endpoint, on loopback only.

Run from the repository root: ``.venv/bin/python bench/load_web.py``. Starts ``incrowd serve``
on a free loopback port, then:

* 1 client, 20 sequential requests (the latency without contention), then
* 20 concurrent clients (threads), each with its own session (cookie) and its own upload of the
  bundled Census sample (1080 x 13), sending 10 requests each: 200 requests in all.

Every request is ``POST /api/microaggregate`` with method ``mdav``, k cycling over 3, 5, 10.
Every response is checked: status 200, the report says k-anonymous, and the published CSV,
downloaded afterwards by the same session, is verified k-anonymous on all 13 columns. Latency is
the wall time of the POST as the client sees it. Writes the section ``web-load`` of
``docs/benchmarks.md``. Takes well under a minute on a 2-core machine.
"""

from __future__ import annotations

import io
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from incrowd import verify_k_anonymity  # noqa: E402
from incrowd.datasets import load_census  # noqa: E402

from _common import DOCS, machine_line, md_table, now_utc, update_section  # noqa: E402

CLIENTS = 20
REQUESTS = 200
KS = (3, 5, 10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    serve = [sys.executable, "-m", "incrowd.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(serve, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"incrowd serve exited: {proc.stderr.read().decode()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/samples", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("incrowd serve did not answer within 60 s")


class Client:
    """One browser-like client: its own cookie jar, so its own session."""

    def __init__(self, base: str, census_csv: bytes):
        self.http = httpx.Client(base_url=base, timeout=120)
        self.http.get("/")
        up = self.http.post("/api/datasets", files={"file": ("census.csv", census_csv, "text/csv")})
        up.raise_for_status()
        self.dataset = up.json()["dataset"]
        self.results: list[tuple[int, dict]] = []

    def request(self, k: int) -> float:
        t0 = time.perf_counter()
        r = self.http.post("/api/microaggregate", json={"dataset": self.dataset, "k": k, "method": "mdav"})
        elapsed = time.perf_counter() - t0
        if r.status_code != 200:
            raise RuntimeError(f"status {r.status_code}: {r.text[:200]}")
        self.results.append((k, r.json()))
        return elapsed

    def verify(self) -> int:
        """Download every result of this session and check it; returns the number checked."""
        for k, report in self.results:
            if not report["k_anonymous"] or report["min_group_size"] < k:
                raise RuntimeError(f"report not {k}-anonymous: {report['min_group_size']}")
            published = pd.read_csv(io.BytesIO(self.http.get(report["download"]).content))
            if published.shape != (1080, 13) or not verify_k_anonymity(published, list(published.columns), k).ok:
                raise RuntimeError(f"download of a k={k} result is not {k}-anonymous")
        return len(self.results)


def run_sequential(base: str, census_csv: bytes, n: int = 20) -> list[float]:
    client = Client(base, census_csv)
    client.request(5)  # warm-up: the first call loads the kernels
    client.results.clear()
    latencies = [client.request(KS[i % len(KS)]) for i in range(n)]
    client.verify()
    return latencies


def run_concurrent(base: str, census_csv: bytes) -> tuple[list[float], float, int]:
    clients = [Client(base, census_csv) for _ in range(CLIENTS)]
    per_client = REQUESTS // CLIENTS
    latencies: list[float] = []
    lock = threading.Lock()

    def work(client: Client) -> None:
        for i in range(per_client):
            elapsed = client.request(KS[i % len(KS)])
            with lock:
                latencies.append(elapsed)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(CLIENTS) as pool:
        for f in [pool.submit(work, c) for c in clients]:
            f.result()  # any error ends the run with that error
    wall = time.perf_counter() - t0
    checked = sum(c.verify() for c in clients)
    return latencies, wall, checked


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def quantile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1]


def main() -> None:
    census_csv = load_census().to_csv(index=False).encode()
    port = free_port()
    server = start_server(port)
    base = f"http://127.0.0.1:{port}"
    try:
        cpu0, own0 = cpu_seconds(server.pid), time.process_time()
        sequential = run_sequential(base, census_csv)
        cpu1, own1 = cpu_seconds(server.pid), time.process_time()
        concurrent, wall, checked = run_concurrent(base, census_csv)
        cpu2, own2 = cpu_seconds(server.pid), time.process_time()
    finally:
        server.terminate()
        server.wait(timeout=30)
    if len(concurrent) != REQUESTS or checked != REQUESTS:
        raise RuntimeError(f"expected {REQUESTS} checked responses; got {len(concurrent)} / {checked}")

    def row(label, lat, requests, server_cpu, client_cpu, wall_s=None):
        wall_s = wall_s if wall_s is not None else sum(lat)
        return [label, requests, 0, f"{1000 * statistics.median(lat):.0f}", f"{1000 * quantile(lat, 0.9):.0f}",
                f"{1000 * max(lat):.0f}", f"{requests / wall_s:.1f}", f"{1000 * server_cpu / requests:.0f}",
                f"{1000 * client_cpu / requests:.0f}"]

    # CPU times include the warm-up, the uploads and the verifying downloads of each phase
    table = md_table(["clients", "requests", "errors", "median ms", "p90 ms", "max ms", "requests/s",
                      "server CPU ms/request", "client CPU ms/request"],
                     [row("1 (sequential)", sequential, len(sequential), cpu1 - cpu0, own1 - own0),
                      row(f"{CLIENTS} (concurrent)", concurrent, REQUESTS, cpu2 - cpu1, own2 - own1, wall)],
                     align="lrrrrrrrr")
    body = f"""## Web UI load test (microaggregation endpoint, loopback)

Written by `bench/load_web.py` on {now_utc()}. Machine: {machine_line()}.

Server: `incrowd serve` (one uvicorn process) on 127.0.0.1. Data: the bundled Census sample
(1080 x 13), uploaded by each client into its own session. Requests: `POST /api/microaggregate`,
method MDAV, k cycling over 3, 5, 10. Every one of the {REQUESTS} concurrent responses was
status 200 and reported k-anonymous, and its published CSV, downloaded afterwards by the same
session, was verified k-anonymous on all 13 columns ({checked} checked). Latency is the POST as
the client sees it (computation, CSV writing, report); downloads are not timed.

{table}

The load generator runs on the same 2 cores as the server, so under load the two compete:
the CPU columns say how the cores were spent per request (both include the uploads and the
verifying downloads of their phase). Under load each request waits for the CPU behind the
others in flight, which is where the latency goes.
"""
    update_section(DOCS / "benchmarks.md", "web-load", body, "Benchmarks")
    print(body)


if __name__ == "__main__":
    main()
