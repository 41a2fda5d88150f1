"""A bounded load test of the web UI's microaggregation endpoint, quiet and under hostile
traffic, on loopback only.

Run from the repository root: ``.venv/bin/python bench/load_web.py``. Starts ``incrowd serve``
on a free loopback port with an explicit ``--memory-budget-mb`` (and a ``--queue`` long enough for
every client to wait rather than get 503), then:

* 1 client, 20 sequential requests (the latency without contention), then
* the quiet run: 20 concurrent clients (threads), each with its own session (cookie) and its
  own upload of the bundled Census sample (1080 x 13), sending 10 requests each: 200 requests;
* the hostile run: 20 new honest clients doing the same, while at the same time one client
  uploads decompression bombs (a .csv.gz of under 1 MB that decodes to 200 million rows), one
  uploads files with millions of columns on their first line, one starts long ONA jobs and
  abandons them (client timeout, then it ends its session), and one sends cross-origin POSTs.
  Every hostile client stops when the honest clients are done, or at its own count.

Every honest request is ``POST /api/microaggregate`` with method ``mdav``, k cycling over 3, 5,
10. Every honest response is checked: status 200, the report says k-anonymous, and the published
CSV, downloaded afterwards by the same session, is verified k-anonymous on all 13 columns.
Latency is the wall time of the POST as the client sees it. The server's peak RSS is VmHWM of
the serve process (and of any child it has), read from /proc. Writes the section ``web-load`` of
``docs/performance.md`` and ``bench/results/load_web.json``. After the hostile run, the same phase
runs once with the abandoned jobs alone and once with the uploads and cross-origin POSTs alone,
to show which costs what. Takes about two minutes on a 2-core machine.
"""

from __future__ import annotations

import gzip
import io
import argparse
import json
import socket
import statistics
import subprocess
import sys
import threading
import time
import zlib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from incrowd import verify_k_anonymity  # noqa: E402
from incrowd.datasets import load_census  # noqa: E402

from _common import (  # noqa: E402
    DOCS, REPO, cpu_seconds, machine_line, md_table, now_utc, peak_rss_bytes, process_tree, quantile,
    update_section,
)

CLIENTS = 20
REQUESTS = 200
KS = (3, 5, 10)
MEMORY_BUDGET_MB = 2048
# Every honest client must be able to wait for a worker: the default queue (twice --workers)
# answers the 21st request in flight with 503, which this bench would count as a failure.
QUEUE = 64
BOMB_ROWS = 200_000_000
WIDE_COLUMNS = 10_000_000
PLAIN_WIDE_COLUMNS = 1_000_000
ONA_RUNS = 200  # about 6 s of one core on the Census sample
ABANDON_AFTER_S = 1.0
MAX_BOMBS, MAX_WIDE, MAX_ABANDONED, MAX_CROSS_ORIGIN = 12, 12, 5, 3
HOSTILE_CAP_S = 120.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_command(port: int) -> list[str]:
    return [sys.executable, "-m", "incrowd.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
            "--memory-budget-mb", str(MEMORY_BUDGET_MB), "--queue", str(QUEUE)]


def start_server(port: int) -> subprocess.Popen:
    proc = subprocess.Popen(serve_command(port), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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


def run_concurrent(base: str, census_csv: bytes, started: threading.Event | None = None
                   ) -> tuple[list[float], float, int, list[str]]:
    """The 20 honest clients; returns latencies, wall time, results verified and the failures
    (a failed request is recorded and the client goes on, so that one failure does not hide
    the rest)."""
    clients = [Client(base, census_csv) for _ in range(CLIENTS)]
    per_client = REQUESTS // CLIENTS
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()

    def work(client: Client) -> None:
        for i in range(per_client):
            try:
                elapsed = client.request(KS[i % len(KS)])
            except Exception as exc:  # noqa: BLE001 - every failure is counted and reported
                with lock:
                    failures.append(f"{type(exc).__name__}: {exc}"[:200])
                continue
            with lock:
                latencies.append(elapsed)

    if started is not None:
        started.set()
    t0 = time.perf_counter()
    with ThreadPoolExecutor(CLIENTS) as pool:
        for f in [pool.submit(work, c) for c in clients]:
            f.result()
    wall = time.perf_counter() - t0
    checked = 0
    for c in clients:
        try:
            checked += c.verify()
        except Exception as exc:  # noqa: BLE001
            failures.append(f"verify: {type(exc).__name__}: {exc}"[:200])
    return latencies, wall, checked, failures


# ---------------------------------------------------------------------------------------------
# Hostile traffic


def make_bomb(rows: int = BOMB_ROWS) -> bytes:
    """A gzip stream (one member) of a 2-column CSV with ``rows`` rows, built in memory."""
    block_rows = 1_000_000
    block = b"1,2\n" * block_rows
    comp = zlib.compressobj(6, zlib.DEFLATED, 31)
    parts = [comp.compress(b"a,b\n")]
    for _ in range(rows // block_rows):
        parts.append(comp.compress(block))
    parts.append(comp.flush())
    return b"".join(parts)


def make_wide_gz(columns: int = WIDE_COLUMNS) -> bytes:
    """One header line of ``columns`` columns and one data row, gzip-compressed."""
    return gzip.compress(b",".join(b"c%d" % i for i in range(columns)) + b"\n1\n", 6)


def make_wide_plain(columns: int = PLAIN_WIDE_COLUMNS) -> bytes:
    return b",".join(b"c%d" % i for i in range(columns)) + b"\n1\n"


class Hostile:
    """The hostile clients of one run: each loops until ``stop`` or its own count; every answer
    is tallied by (client, status)."""

    def __init__(self, base: str, payloads: dict[str, bytes]):
        self.base = base
        self.payloads = payloads
        self.stop = threading.Event()
        self.tally: Counter[tuple[str, str]] = Counter()
        self.bytes_sent: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.deadline = time.monotonic() + HOSTILE_CAP_S

    def _note(self, who: str, status: object) -> None:
        with self.lock:
            self.tally[(who, str(status))] += 1

    def _go_on(self, count: int, cap: int) -> bool:
        return count < cap and not self.stop.is_set() and time.monotonic() < self.deadline

    def _upload(self, http: httpx.Client, who: str, name: str, data: bytes) -> None:
        try:
            r = http.post("/api/datasets", files={"file": (name, data, "application/octet-stream")})
            self._note(who, r.status_code)
        except httpx.TransportError as exc:
            self._note(who, type(exc).__name__)
        with self.lock:
            self.bytes_sent[who] += len(data)

    def bombs(self) -> None:
        with httpx.Client(base_url=self.base, timeout=120) as http:
            n = 0
            while self._go_on(n, MAX_BOMBS):
                self._upload(http, "bomb (.csv.gz, 200M rows)", "bomb.csv.gz", self.payloads["bomb"])
                n += 1

    def wide(self) -> None:
        with httpx.Client(base_url=self.base, timeout=120) as http:
            n = 0
            while self._go_on(n, MAX_WIDE):
                if n % 2 == 0:
                    self._upload(http, "wide (.csv.gz, 10M columns)", "wide.csv.gz", self.payloads["wide_gz"])
                else:
                    self._upload(http, "wide (.csv, 1M columns)", "wide.csv", self.payloads["wide_plain"])
                n += 1

    def abandon(self) -> None:
        """Start a long ONA job, hang up after ABANDON_AFTER_S, end the session; again."""
        n = 0
        while self._go_on(n, MAX_ABANDONED):
            with httpx.Client(base_url=self.base, timeout=30) as http:
                try:
                    up = http.post("/api/datasets/sample/census")
                    self._note("abandoner: load sample", up.status_code)
                    if up.status_code != 200:
                        time.sleep(0.5)
                        n += 1
                        continue
                    http.post("/api/microaggregate", timeout=ABANDON_AFTER_S,
                              json={"dataset": up.json()["dataset"], "k": 5, "method": "ona", "runs": ONA_RUNS})
                    self._note("abandoner: ONA job", "answered before the hang-up")
                except httpx.TimeoutException:
                    self._note("abandoner: ONA job", "abandoned (client hung up)")
                try:
                    self._note("abandoner: DELETE /api/session", http.delete("/api/session").status_code)
                except httpx.TransportError as exc:
                    self._note("abandoner: DELETE /api/session", type(exc).__name__)
            n += 1

    def cross_origin(self) -> None:
        with httpx.Client(base_url=self.base, timeout=30) as http:
            n = 0
            while self._go_on(n, MAX_CROSS_ORIGIN):
                r = http.post("/api/datasets/sample/census", headers={"Origin": "http://evil.example"})
                self._note("cross-origin POST", r.status_code)
                n += 1
                time.sleep(1.0)

    def start(self, which: list[str]) -> list[threading.Thread]:
        threads = [threading.Thread(target=getattr(self, HOSTILE[name]), daemon=True) for name in which]
        for t in threads:
            t.start()
        return threads


HOSTILE = {"bomb": "bombs", "wide": "wide", "abandon": "abandon", "cross-origin": "cross_origin"}


ATTRIBUTION = (["abandon"], ["bomb", "wide", "cross-origin"])


def run_hostile(base: str, census_csv: bytes, payloads: dict[str, bytes], which: list[str], pid: int) -> dict:
    """20 new honest clients while the hostile clients ``which`` run; then waits until the
    server is idle, so that work left over does not fall into the next phase."""
    cpu0, own0 = cpu_seconds(pid), time.process_time()
    hostile = Hostile(base, payloads)
    go = threading.Event()
    threads: list[threading.Thread] = []

    def start_hostile() -> None:
        go.wait()
        threads.extend(hostile.start(which))

    starter = threading.Thread(target=start_hostile, daemon=True)
    starter.start()
    latencies, wall, checked, failures = run_concurrent(base, census_csv, started=go)
    hostile.stop.set()
    starter.join()
    for t in threads:
        t.join(timeout=150)
    busy_s, busy_cpu = wait_idle(pid)
    return {"hostile": hostile, "latencies": latencies, "wall": wall, "checked": checked, "failures": failures,
            "busy_s": busy_s, "busy_cpu": busy_cpu, "cpu": cpu_seconds(pid) - cpu0,
            "own": time.process_time() - own0}


def wait_idle(pid: int, cap_s: float = 90.0) -> tuple[float, float]:
    """Seconds and server CPU seconds until the server is idle (under 5% of a core over 1 s):
    work it goes on doing after every client has its answer or has hung up."""
    t0, c0 = time.perf_counter(), cpu_seconds(pid)
    last = c0
    while time.perf_counter() - t0 < cap_s:
        time.sleep(1.0)
        now = cpu_seconds(pid)
        if now - last < 0.05:
            return time.perf_counter() - t0 - 1.0, last - c0
        last = now
    return time.perf_counter() - t0, last - c0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hostile", default=",".join(HOSTILE),
                        help="hostile clients to run, comma-separated, from: " + ", ".join(HOSTILE)
                             + "; with fewer than all, nothing is written (to see which one costs what)")
    args = parser.parse_args()
    which = [w for w in args.hostile.split(",") if w]
    unknown = set(which) - set(HOSTILE)
    if unknown:
        parser.error(f"unknown hostile client(s) {sorted(unknown)}; choose from {list(HOSTILE)}")
    write = set(which) == set(HOSTILE)
    t_start = time.perf_counter()
    census_csv = load_census().to_csv(index=False).encode()
    payloads = {"bomb": make_bomb(), "wide_gz": make_wide_gz(), "wide_plain": make_wide_plain()}
    port = free_port()
    server = start_server(port)
    base = f"http://127.0.0.1:{port}"
    try:
        cpu0, own0 = cpu_seconds(server.pid), time.process_time()
        sequential = run_sequential(base, census_csv)
        cpu1, own1 = cpu_seconds(server.pid), time.process_time()
        concurrent, wall, checked, quiet_failures = run_concurrent(base, census_csv)
        cpu2, own2 = cpu_seconds(server.pid), time.process_time()
        rss_quiet = peak_rss_bytes(server.pid)

        main_run = run_hostile(base, census_csv, payloads, which, server.pid)
        hostile, h_lat, h_wall, h_checked, h_failures = (main_run[x] for x in ("hostile", "latencies", "wall",
                                                                               "checked", "failures"))
        busy_s, busy_cpu, cpu3, own3 = (main_run[x] for x in ("busy_s", "busy_cpu", "cpu", "own"))
        cpu3, own3 = cpu2 + cpu3, own2 + own3
        # The same phase with one kind of hostile traffic at a time: which one costs what
        parts = {}
        if write:
            for subset in ATTRIBUTION:
                parts[",".join(subset)] = run_hostile(base, census_csv, payloads, subset, server.pid)
        rss_peak = peak_rss_bytes(server.pid)
        processes = len(process_tree(server.pid))
        alive = httpx.get(f"{base}/api/samples", timeout=30).status_code
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    if quiet_failures or len(concurrent) != REQUESTS or checked != REQUESTS:
        raise RuntimeError(f"quiet run: expected {REQUESTS} checked responses; got {len(concurrent)} / "
                           f"{checked}; failures: {quiet_failures[:3]}")

    def row(label, lat, requests, errors, server_cpu, client_cpu, wall_s=None):
        wall_s = wall_s if wall_s is not None else sum(lat)
        return [label, requests, errors, f"{1000 * statistics.median(lat):.0f}", f"{1000 * quantile(lat, 0.9):.0f}",
                f"{1000 * max(lat):.0f}", f"{requests / wall_s:.1f}", f"{1000 * server_cpu / requests:.0f}",
                f"{1000 * client_cpu / requests:.0f}"]

    budget = MEMORY_BUDGET_MB * 1024 * 1024
    q_med, q_p90 = statistics.median(concurrent), quantile(concurrent, 0.9)
    h_med, h_p90 = statistics.median(h_lat), quantile(h_lat, 0.9)
    ok = {"median within 2x": h_med <= 2 * q_med, "p90 within 2x": h_p90 <= 2 * q_p90,
          "no honest failure": not h_failures and h_checked == REQUESTS,
          "peak RSS under budget": rss_peak < budget}
    # CPU times include the warm-up, the uploads and the verifying downloads of each phase
    table = md_table(["clients", "requests", "errors", "median ms", "p90 ms", "max ms", "requests/s",
                      "server CPU ms/request", "client CPU ms/request"],
                     [row("1 (sequential)", sequential, len(sequential), 0, cpu1 - cpu0, own1 - own0),
                      row(f"{CLIENTS} (concurrent, quiet)", concurrent, REQUESTS, 0, cpu2 - cpu1, own2 - own1, wall),
                      row(f"{CLIENTS} (concurrent, hostile)", h_lat, REQUESTS, len(h_failures),
                          cpu3 - cpu2, own3 - own2, h_wall)],
                     align="lrrrrrrrr")
    compare = md_table(["honest clients (20 concurrent)", "quiet", "hostile", "hostile / quiet", "target"],
                       [["median ms", f"{1000 * q_med:.0f}", f"{1000 * h_med:.0f}", f"{h_med / q_med:.2f}",
                         "within 2x: " + ("met" if ok["median within 2x"] else "NOT met")],
                        ["p90 ms", f"{1000 * q_p90:.0f}", f"{1000 * h_p90:.0f}", f"{h_p90 / q_p90:.2f}",
                         "within 2x: " + ("met" if ok["p90 within 2x"] else "NOT met")],
                        ["failed requests", "0", str(len(h_failures)), "",
                         "0: " + ("met" if ok["no honest failure"] else "NOT met")],
                        ["server peak RSS (VmHWM)", f"{rss_quiet / 2**20:.0f} MB", f"{rss_peak / 2**20:.0f} MB",
                         "", f"under --memory-budget-mb {MEMORY_BUDGET_MB}: "
                             + ("met" if ok["peak RSS under budget"] else "NOT met")]],
                       align="lrrrl")
    statuses = md_table(["hostile client", "answer", "count"],
                        [[who, status, n] for (who, status), n in sorted(hostile.tally.items())],
                        align="llr")
    sizes = (f"bomb {len(payloads['bomb']) / 2**20:.2f} MB gzip for {BOMB_ROWS:,} rows x 2 columns "
             f"({(BOMB_ROWS * 4 + 4) / 2**20:,.0f} MB decoded); wide {len(payloads['wide_gz']) / 2**20:.1f} MB "
             f"gzip for {WIDE_COLUMNS:,} columns and {len(payloads['wide_plain']) / 2**20:.1f} MB plain "
             f"for {PLAIN_WIDE_COLUMNS:,} columns")
    attribution = md_table(
        ["hostile clients (separate phase, same server)", "honest median ms", "honest p90 ms", "median / quiet",
         "p90 / quiet", "honest failures", "server CPU ms/request"],
        [[name, f"{1000 * statistics.median(r['latencies']):.0f}", f"{1000 * quantile(r['latencies'], 0.9):.0f}",
          f"{statistics.median(r['latencies']) / q_med:.2f}", f"{quantile(r['latencies'], 0.9) / q_p90:.2f}",
          len(r["failures"]), f"{1000 * r['cpu'] / REQUESTS:.0f}"] for name, r in parts.items()],
        align="lrrrrrr") if parts else ""
    failures_note = "" if not h_failures else "\n\nHonest failures (first 5): " + "; ".join(h_failures[:5])
    body = f"""## Web UI load test (microaggregation endpoint, loopback)

Written by `bench/load_web.py` on {now_utc()}. Machine: {machine_line()}.

Server: `incrowd serve --memory-budget-mb {MEMORY_BUDGET_MB} --queue {QUEUE}` (one uvicorn
process, default `--workers` = the CPU count, every other limit at its default) on 127.0.0.1.
The queue is longer than the default (twice `--workers`) so that 20 concurrent clients wait
for a worker instead of being answered 503. Data: the bundled Census sample (1080 x 13),
uploaded by each honest client into its own session. Honest requests: `POST
/api/microaggregate`, method MDAV, k cycling over 3, 5, 10; every honest response was checked
(status 200, reported k-anonymous, and its published CSV, downloaded afterwards by the same
session, verified k-anonymous on all 13 columns: {checked} quiet and {h_checked} hostile checked).
Latency is the POST as the client sees it (computation, CSV writing, report); downloads are
not timed.

Hostile run: 20 new honest clients send the same {REQUESTS} requests while, at the same time,
one client uploads decompression bombs (at most {MAX_BOMBS}), one uploads files with millions of
columns on the first line (at most {MAX_WIDE}, alternating gzip and plain), one loads the Census
sample, starts `POST /api/microaggregate` with method ONA and {ONA_RUNS} runs, hangs up after
{ABANDON_AFTER_S:g} s and ends its session with `DELETE /api/session` (at most {MAX_ABANDONED}
times), and one sends cross-origin POSTs (`Origin: http://evil.example`, {MAX_CROSS_ORIGIN}
times). Each stops when the honest clients are done. Payloads: {sizes}.

{table}

{compare}

Which hostile client costs what: after the hostile run, the same phase (20 new honest clients,
{REQUESTS} requests) once more with one kind of hostile traffic at a time.

{attribution}

Answers to the hostile clients (the hostile run with all of them):

{statuses}

After the hostile run the server still answered (`GET /api/samples`: {alive}); once every
client had its answer or had hung up, it went on working for {busy_s:.0f} s ({busy_cpu:.1f} CPU s)
before it was idle. Peak RSS is
VmHWM summed over the serve process and its children ({processes} process(es) in all), after the quiet run and at the end.{failures_note}

The load generator runs on the same 2 cores as the server, so under load the two compete:
the CPU columns say how the cores were spent per request (both include the uploads and the
verifying downloads of their phase; the hostile row's server CPU includes all the hostile work).
Under load each request waits for the CPU behind the others in flight, which is where the
latency goes. To see which hostile client costs what, run the bench with a subset, e.g.
`--hostile abandon` or `--hostile bomb,wide,cross-origin` (it then prints and writes nothing);
`--hostile ''` runs two quiet phases, whose ratio shows how much the figures move with other
work on the machine between phases.
"""
    raw = {
        "written": now_utc(), "machine": machine_line(), "command": serve_command(0)[1:],
        "memory_budget_mb": MEMORY_BUDGET_MB, "queue": QUEUE, "data": "census 1080 x 13", "method": "mdav",
        "k": list(KS), "clients": CLIENTS, "requests": REQUESTS,
        "sequential_s": sequential,
        "quiet": {"latencies_s": concurrent, "wall_s": wall, "checked": checked, "failures": quiet_failures,
                  "server_cpu_s": cpu2 - cpu1, "peak_rss_bytes": rss_quiet},
        "hostile": {"latencies_s": h_lat, "wall_s": h_wall, "checked": h_checked, "failures": h_failures,
                    "server_cpu_s": cpu3 - cpu2, "peak_rss_bytes": rss_peak, "server_processes": processes,
                    "answers": [{"client": w, "answer": a, "count": n} for (w, a), n in sorted(hostile.tally.items())],
                    "bytes_sent": dict(hostile.bytes_sent), "server_alive_after": alive,
                    "server_busy_after_s": busy_s, "server_cpu_after_s": busy_cpu, "clients": which},
        "ratios": {"median": h_med / q_med, "p90": h_p90 / q_p90},
        "attribution": {name: {"latencies_s": r["latencies"], "wall_s": r["wall"], "failures": r["failures"],
                               "server_cpu_s": r["cpu"], "ratio_median": statistics.median(r["latencies"]) / q_med,
                               "ratio_p90": quantile(r["latencies"], 0.9) / q_p90,
                               "answers": [{"client": w, "answer": a, "count": n}
                                           for (w, a), n in sorted(r["hostile"].tally.items())]}
                        for name, r in parts.items()},
        "acceptance": ok,
        "bench_wall_s": time.perf_counter() - t_start,
    }
    print(body)
    if write:
        update_section(DOCS / "performance.md", "web-load", body, "Performance")
        out = REPO / "bench" / "results" / "load_web.json"
        out.write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({"ratios": raw["ratios"], "acceptance": ok, "bench_wall_s": raw["bench_wall_s"],
                      "busy_after_s": busy_s, "cpu_after_s": busy_cpu}))


if __name__ == "__main__":
    main()
