"""The curator's path through the web Publish page, in a real browser: a labelled SPSS file built
from Adult (codes with value labels, user-missing 99 "Not stated", a weight, an id; see
``tests/_survey_files.py``) is uploaded, its roles and ARX hierarchies are proposed, the Risk
step measures it, the release is published and downloaded as .sav, and the risk and utility
report is made. Each step is timed (wall seconds, from the click to what the page shows) and
photographed at 1280x800.

    python bench/web_survey_acceptance.py [--rows 48842] [--shots /tmp/note/web]

Needs Debian's chromium and playwright (the ``dev`` extra) and the benchmark data folder
(``$INCROWD_DATA``, else ``../shared/data``). The server runs on 127.0.0.1 only.
``tests/test_web_e2e.py`` runs :func:`survey_path` on a small file without screenshots.
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

import _survey_files as survey  # noqa: E402
from benchdata import data_dir  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: the columns the curator passes through (not quasi-identifiers), as in tests/test_survey_path.py
PASS_THROUGH = ["education_num", "capital_gain", "capital_loss", "hours_per_week", "relationship", "income"]
VIEWPORT = {"width": 1280, "height": 800}


def _shot(page, shots: Path | None, name: str, top: str) -> None:
    if shots is None:
        return
    page.evaluate(f"() => document.getElementById({top!r}).scrollIntoView()")
    page.screenshot(path=str(shots / name))


def survey_path(page, base_url: str, sav: Path, hierarchies: list[Path], workdir: Path,
                shots: Path | None = None) -> tuple[dict[str, float], dict]:
    """Run the path on an open page; returns (wall seconds per step, what the page showed:
    the proposed roles, the risk lines, the release lines, the downloaded files)."""
    times: dict[str, float] = {}
    seen: dict = {}

    def timed(step: str, action, done: str | None = None, wait=None) -> None:
        t0 = time.perf_counter()
        action()
        if done is not None:
            page.wait_for_selector(done)
        if wait is not None:
            page.wait_for_function(wait)
        times[step] = time.perf_counter() - t0

    timed("open the page", lambda: page.goto(base_url + "/publish"), "#upload")
    page.set_input_files("#file", str(sav))
    timed("upload .sav, roles proposed", lambda: page.click("#upload"), "#roles-table tr[data-column='respid']")
    seen["horizontal_scroll"] = page.evaluate("() => document.documentElement.scrollWidth > window.innerWidth")
    _shot(page, shots, "01_data.png", "preview")
    page.set_input_files("#hierarchy-files", [str(h) for h in hierarchies])
    timed("upload hierarchies, proposed by name", lambda: page.click("#upload-hierarchies"),
          wait="() => document.getElementById('hierarchy-list').textContent.includes('hierarchy files')")
    seen["roles"] = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('#roles-table tr[data-column]')]
        .map(tr => [tr.dataset.column, {role: tr.querySelector('select.role').value,
                                        generalization: (tr.querySelector('select.generalization') || {}).value || null,
                                        controls: tr.querySelectorAll('td:nth-child(3) select, td:nth-child(3) input').length,
                                        note: tr.querySelector('td:last-child').textContent}]))""")

    def edit_roles() -> None:
        for name in PASS_THROUGH:
            page.select_option(f"#roles-table tr[data-column='{name}'] select.role", "other")

    timed("roles edited (pass-through columns)", edit_roles)
    seen["horizontal_scroll"] |= page.evaluate("() => document.documentElement.scrollWidth > window.innerWidth")
    _shot(page, shots, "02_roles.png", "roles-section")
    timed("risk of the file as it is", lambda: page.click("#run-risk"), "#risk-summary")
    seen["risk_lines"] = page.evaluate("""() => [...document.querySelectorAll('#risk-summary tr')]
        .map(tr => [tr.dataset.label, tr.querySelector('td').textContent])""")
    _shot(page, shots, "03_risk.png", "risk-section")
    page.fill("#k", "5")
    page.fill("#max-suppression", "2%")
    page.check("#allow-full-suppression")
    _shot(page, shots, "04_privacy.png", "privacy-section")
    timed("publish (verified on the written .sav)", lambda: page.click("#run"), "#report-lines")
    seen["release_lines"] = page.evaluate("""() => [...document.querySelectorAll('#report-lines tr')]
        .map(tr => [tr.dataset.label, tr.querySelector('td').textContent])""")
    # the report is a job of its own, started as soon as the release is shown
    t0 = time.perf_counter()
    page.wait_for_selector("#report-points", timeout=600_000)
    times["risk and utility report"] = time.perf_counter() - t0
    _shot(page, shots, "05_release.png", "report-section")

    def save(selector: str) -> Path:
        with page.expect_download() as info:
            page.click(selector)
        target = workdir / info.value.suggested_filename
        info.value.save_as(target)
        return target

    t0 = time.perf_counter()
    seen["release"] = save("#download")
    times["download the .sav"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    seen["report"] = save("#report-download")
    times["download the report (HTML)"] = time.perf_counter() - t0
    seen["horizontal_scroll"] |= page.evaluate("() => document.documentElement.scrollWidth > window.innerWidth")
    _shot(page, shots, "06_report.png", "risk-report")
    return times, seen


def _serve():
    import uvicorn

    from incrowd.web import create_app

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    return server, thread, f"http://127.0.0.1:{port}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=48842, help="rows of Adult in the .sav (48842: all)")
    parser.add_argument("--shots", type=Path, default=Path("/tmp/note/web"), help="folder of the screenshots")
    args = parser.parse_args()
    import pyreadstat
    from playwright.sync_api import sync_playwright

    data = data_dir()
    args.shots.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sav = survey.write_sav(work / "adult.sav", data, n=None if args.rows >= 48842 else args.rows)
        hierarchies = list(survey.write_hierarchies(work / "hierarchies", data).values())
        server, thread, url = _serve()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
                context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
                page = context.new_page()
                page.set_default_timeout(600_000)
                times, seen = survey_path(page, url, sav, hierarchies, work, args.shots)
                browser.close()
        finally:
            server.should_exit = True
            thread.join(timeout=20)
        written, meta = pyreadstat.read_sav(str(seen["release"]), user_missing=True, apply_value_formats=False)
        print(f"{sav.name}: {args.rows} rows; screenshots in {args.shots}")
        print("\n| step | wall s |\n|---|---:|")
        for step, seconds in times.items():
            print(f"| {step} | {seconds:.2f} |")
        print(f"| total | {sum(times.values()):.2f} |")
        print("\nroles proposed:", {n: r["role"] for n, r in seen["roles"].items()})
        print("risk:", dict(seen["risk_lines"]))
        print("release:", dict(seen["release_lines"]))
        print(f"downloaded {seen['release'].name}: {written.shape[0]} rows x {written.shape[1]} columns, "
              f"value labels on {sorted(meta.variable_value_labels)}; report {seen['report'].name}")
        print("horizontal scrolling at 1280x800:", seen["horizontal_scroll"])


if __name__ == "__main__":
    main()
