"""``incrowd serve`` while a 20-key risk job runs: how fast the server answers ``GET /``, how soon
a ``DELETE`` cancels the job, and how soon SIGTERM stops the server with a job running.

Run from the repository root: ``PYTHONPATH=src .venv/bin/python bench/bench_risk_serve.py``.
Starts ``incrowd serve`` on a free loopback port (a process of its own, as a user runs it),
uploads 2,000 rows of 20 keys of 3 values each (every row unique on all keys) and starts
``POST /api/risk/jobs`` on the 20 keys. SUDA2 on all 20 keys is over its work budget (refused at
once), so the job asks for MSUs of up to ``--max-size`` keys (6 by default: below the budget's
estimate, so the search runs until it reaches the budget, seconds to a minute). A server
without ``suda_max_size`` (an older incrowd) gets the request without it and searches all 20
keys. Once the job reports SUDA2 started (progress 0.25), the bench sends ``GET /`` five times,
0.2 s apart, then ``DELETE /api/jobs/{id}`` and polls the job every 10 ms until it is
cancelled; then it starts the same job again and sends SIGTERM. Every wait is bounded
(``--timeout`` seconds); a request that does not come back within it is reported as such. Prints
a small table.
"""

from __future__ import annotations

import argparse
import signal
import socket
import subprocess
import sys
import time

import httpx
import numpy as np
import pandas as pd

KEYS = [f"k{j}" for j in range(20)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, timeout: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "incrowd.cli", "serve", "--host", "127.0.0.1", "--port",
                             str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start")


def start_job(client: httpx.Client, ds: str, max_size: int) -> str:
    body = {"dataset": ds, "quasi_identifiers": KEYS, "suda_max_size": max_size}
    got = client.post("/api/risk/jobs", json=body)
    if got.status_code == 400 and "suda_max_size" in got.text:  # an incrowd without the bound
        body.pop("suda_max_size")
        got = client.post("/api/risk/jobs", json=body)
    got.raise_for_status()
    return f"/api/jobs/{got.json()['job']}"


def wait_for(client: httpx.Client, job: str, want, timeout: float, step: float = 0.01):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = client.get(job).json()
        if want(state):
            return state
        time.sleep(step)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--max-size", type=int, default=6)
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    csv = pd.DataFrame(rng.integers(0, 3, (args.rows, len(KEYS))), columns=KEYS).to_csv(index=False).encode()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = start_server(port, 120)
    rows: list[tuple[str, str]] = []
    try:
        with httpx.Client(base_url=base, timeout=args.timeout) as client:
            ds = client.post("/api/datasets", files={"file": ("keys.csv", csv, "text/csv")}).json()["dataset"]
            job = start_job(client, ds, args.max_size)
            if wait_for(client, job, lambda s: s["progress"] == 0.25 or s["status"] != "running", 300) is None:
                raise SystemExit("SUDA2 did not start")
            latencies = []
            with httpx.Client(base_url=base, timeout=args.timeout) as other:
                for _ in range(5):
                    t = time.perf_counter()
                    try:
                        other.get("/").raise_for_status()
                        latencies.append(time.perf_counter() - t)
                    except httpx.TimeoutException:
                        latencies.append(float("inf"))
                    time.sleep(0.2)
            try:
                status = client.get(job).json()["status"]
            except httpx.TimeoutException:
                status = "no answer"
            rows.append(("GET / while the 20-key job runs (5 requests), seconds",
                         " / ".join("no answer" if x == float("inf") else f"{x:.3f}" for x in latencies)))
            rows.append(("job status after those requests", status))
            t = time.perf_counter()
            try:
                client.delete(job)
                end = wait_for(client, job, lambda s: s["status"] in ("cancelled", "done", "failed"), args.timeout)
                rows.append(("DELETE to the job's end, seconds", "no end within the timeout" if end is None
                             else f"{time.perf_counter() - t:.3f} ({end['status']})"))
            except httpx.TimeoutException:
                rows.append(("DELETE to the job's end, seconds", "no answer"))
            try:
                job = start_job(client, ds, args.max_size)
                wait_for(client, job, lambda s: s["progress"] == 0.25 or s["status"] != "running", 300)
            except httpx.TimeoutException:
                pass
        t = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=args.timeout)
            rows.append(("SIGTERM with a job running to the server's exit, seconds", f"{time.perf_counter() - t:.3f}"))
        except subprocess.TimeoutExpired:
            rows.append(("SIGTERM with a job running to the server's exit, seconds", f"still running after {args.timeout:g}"))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    width = max(len(a) for a, _ in rows)
    print(f"| {'what':<{width}} | measured |")
    print(f"| {'-' * width} | --- |")
    for a, b in rows:
        print(f"| {a:<{width}} | {b} |")


if __name__ == "__main__":
    main()
