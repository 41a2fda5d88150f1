"""The risk and utility report on benchmark releases, and how long it takes.

Run from the repository root: ``.venv/bin/python bench/bench_report.py [--big 1000000]
[--attacks]``. Writes the section ``report`` of ``docs/report.md`` and the raw figures to
``bench/results/report.json``.

Releases: Census (1080 x 13) microaggregated with MDAV at k = 3, 5, 10; Adult's numeric columns
(age, education-num, hours-per-week; 48,842 rows) with MDAV* at k = 5; Adult generalized (the
8 ARX quasi-identifiers of adult_arx, k = 5, the lowest node within 1 % suppression). Speed:
the report (figures included, attacks not) on ``--big`` rows x 15 Gaussian columns
microaggregated with MDAV at k = 10, and, with ``--attacks``, anonymeter's attacks on the Adult
MDAV* release.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ADULT_COLUMNS, DOCS, REPO, data_dir, machine_line, md_table, now_utc, update_section  # noqa: E402

RESULTS = REPO / "bench" / "results" / "report.json"
ADULT_QI = ["age", "education", "marital-status", "occupation", "race", "workclass", "sex", "native-country"]


def _row(name: str, rep, seconds: float) -> dict:
    risk, utility = rep.risk, rep.utility
    classes = risk.get("classes", {})
    pro = classes.get("prosecutor", {})
    rmd = risk.get("drisk_rmd", {})
    link = risk.get("record_linkage", {})
    num = utility.get("numeric", {})
    cat = utility.get("categorical", {})
    return {
        "release": name, "rows": rep.about["rows_release"], "suppressed": rep.about["suppressed"],
        "classes": classes.get("n_classes"), "smallest": classes.get("smallest_class"),
        "below_k": classes.get("records_below_k"), "prosecutor_highest": pro.get("highest"),
        "prosecutor_average": pro.get("average"), "at_risk": pro.get("records_at_risk"),
        "marketer": classes.get("marketer", {}).get("risk"),
        "drisk": risk.get("drisk"), "rmd_risk1": rmd.get("risk1"), "rmd_risk2": rmd.get("risk2"),
        "rmd_wrisk1": rmd.get("wrisk1"), "rmd_wrisk2": rmd.get("wrisk2"),
        "linkage": link.get("distance_based"), "linkage_global": (link.get("global") or {}).get("share"),
        "il": num.get("il"), "il1s": num.get("il1s"), "eigen": num.get("eigen"),
        "ncp": cat.get("mean_ncp"), "height": cat.get("mean_height"),
        "seconds": seconds, "seconds_parts": rep.about.get("seconds", {}),
        "attacks": risk.get("attacks"),
    }


def run(big: int, attacks: bool) -> dict:
    import numpy as np

    import incrowd
    from incrowd.generalization import Lattice, negotiate, generalize, load_hierarchies

    rows = []
    census = incrowd.read_table(data_dir() / "census.csv", parse=True)
    qis = list(census.columns)
    incrowd.report(census, incrowd.microaggregate(census, 3).table, qis, k=3)  # warm: compile, import
    for k in (3, 5, 10):
        release = incrowd.microaggregate(census, k)
        t = time.perf_counter()
        rep = incrowd.report(census, release.table, qis, k=k)
        rows.append(_row(f"Census, MDAV k = {k}", rep, time.perf_counter() - t))
        print(rows[-1]["release"], f"{rows[-1]['seconds']:.2f} s", flush=True)
    adult = incrowd.read_table(data_dir() / "adult.csv.gz")
    numeric = adult[ADULT_COLUMNS].astype(float)
    release = incrowd.microaggregate(numeric, 5, "mdav-star")
    t = time.perf_counter()
    rep = incrowd.report(numeric, release.table, ADULT_COLUMNS, k=5)
    rows.append(_row("Adult (age, education-num, hours-per-week), MDAV* k = 5", rep, time.perf_counter() - t))
    print(rows[-1]["release"], f"{rows[-1]['seconds']:.2f} s", flush=True)
    arx = data_dir() / "adult_arx"
    frame = incrowd.read_table(arx / "adult.csv")
    hier = load_hierarchies(arx, ADULT_QI)
    lattice = Lattice.build(frame, ADULT_QI, hierarchies=hier)
    node = negotiate(lattice, k=5, max_suppression="1%").exact
    gen = generalize(frame, node.levels, k=5, hierarchies=hier)
    t = time.perf_counter()
    rep = incrowd.report(frame, gen.table, ADULT_QI, sensitive=["salary-class"], kept_rows=gen.kept_rows, k=5,
                         hierarchies=hier)
    rows.append(_row(f"Adult (8 ARX QIs), generalized k = 5 ({', '.join(f'{a}={v}' for a, v in node.levels.items())})",
                     rep, time.perf_counter() - t))
    print(rows[-1]["release"], f"{rows[-1]['seconds']:.2f} s", flush=True)
    speed = []
    if big:
        rng = np.random.default_rng(0)
        X = rng.standard_normal((big, 15))
        import pandas as pd

        frame_big = pd.DataFrame(X, columns=[f"q{j}" for j in range(15)])
        release = incrowd.microaggregate(frame_big, 10)
        t = time.perf_counter()
        rep = incrowd.report(frame_big, release.table, list(frame_big.columns), k=10)
        speed.append({"what": f"report on {big:,} x 15 Gaussian, MDAV k = 10 (figures, no attacks)",
                      "seconds": time.perf_counter() - t, "parts": rep.about["seconds"]})
        print(speed[-1]["what"], f"{speed[-1]['seconds']:.1f} s", flush=True)
    if attacks:
        adult_mixed = adult[["age", "sex", "race", "marital-status", "education", "native-country",
                             "hours-per-week", "income"]]
        published = incrowd.publish(adult_mixed, {
            "privacy": {"k": 5, "max_suppression": "1%"},
            "columns": {"age": "numeric", "hours-per-week": "numeric", "sex": "categorical", "race": "categorical",
                        "marital-status": "categorical", "education": "categorical",
                        "native-country": "categorical", "income": "sensitive"}})
        t = time.perf_counter()
        rep = incrowd.report(adult_mixed, published.table, attacks=True, figures=False,
                             **published.report_options())
        speed.append({"what": "report with attacks on Adult (mixed release, k = 5)",
                      "seconds": time.perf_counter() - t, "parts": rep.about["seconds"]})
        rows.append(_row("Adult (mixed release, k = 5), with attacks", rep, time.perf_counter() - t))
        print(speed[-1]["what"], f"{speed[-1]['seconds']:.1f} s", flush=True)
    return {"when": now_utc(), "machine": machine_line(), "rows": rows, "speed": speed}


def _f(value, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}" if abs(value) < 1e4 else f"{value:.4g}"
    return str(value)


def render(saved: dict) -> str:
    risk_header = ["release", "rows (suppressed)", "classes (smallest)", "below k", "prosecutor highest / average",
                   "records at risk (> 0.2)", "marketer", "dRisk", "dRiskRMD risk1 / risk2", "wrisk1 / wrisk2",
                   "linkage: nearest / global"]
    util_header = ["release", "IL (SSE/SST)", "IL1s", "eigen", "NCP", "mean height", "report seconds"]
    risk_rows, util_rows = [], []
    for r in saved["rows"]:
        risk_rows.append([r["release"], f"{r['rows']} ({r['suppressed']})", f"{r['classes']} ({r['smallest']})",
                          r["below_k"], f"{_f(r['prosecutor_highest'])} / {_f(r['prosecutor_average'])}",
                          _f(r["at_risk"]), _f(r["marketer"]), _f(r["drisk"]),
                          f"{_f(r['rmd_risk1'])} / {_f(r['rmd_risk2'])}", f"{_f(r['rmd_wrisk1'])} / {_f(r['rmd_wrisk2'])}",
                          f"{_f(r['linkage'])} / {_f(r['linkage_global'])}"])
        util_rows.append([r["release"], _f(r["il"]), _f(r["il1s"]), _f(r["eigen"]), _f(r["ncp"]), _f(r["height"]),
                          f"{r['seconds']:.2f}"])
    lines = [
        "## Benchmark releases",
        "",
        f"Generated by `bench/bench_report.py` on {saved['when']}. Machine: {saved['machine']}; shared with "
        "other jobs, so seconds are noisy. Measures are defined in the sections above; a dash means the "
        "measure does not apply (no numeric quasi-identifier, no hierarchy) or was withheld (the eigenvalue "
        "measure on a singular covariance).",
        "",
        "### Risk",
        "",
        md_table(risk_header, risk_rows),
        "",
        "### Utility",
        "",
        md_table(util_header, util_rows),
        "",
    ]
    attacked = [r for r in saved["rows"] if r.get("attacks")]
    for r in attacked:
        a = r["attacks"]
        parts = [("singling out, univariate", (a.get("singling_out") or {}).get("univariate")),
                 ("singling out, multivariate", (a.get("singling_out") or {}).get("multivariate")),
                 ("linkability", a.get("linkability")), ("inference", a.get("inference"))]
        table = []
        for name, got in parts:
            if not got:
                table.append([name, "-", "-", "-", "-"])
                continue
            ci = got.get("ci") or [None, None]
            rate = lambda key: (got.get(key) or {}).get("value") if isinstance(got.get(key), dict) else got.get(key)
            table.append([name, _f(got.get("risk")), f"[{_f(ci[0])}, {_f(ci[1])}]", _f(rate("attack_rate")),
                          _f(rate("control_rate"))])
        lines += ["### Attacks (anonymeter)", "",
                  f"{r['release']}; {a.get('n_attacks')} attacks, secret {a.get('secret')}, "
                  f"{a.get('confidence')} confidence. {(a.get('split') or {}).get('note', '')}", "",
                  md_table(["attack", "risk", "interval", "attack success", "control success"], table), ""]
    if saved.get("speed"):
        lines += ["### Speed", "", md_table(["report", "seconds", "slowest parts"], [
            [s["what"], f"{s['seconds']:.1f}", ", ".join(f"{k} {v:.1f} s" for k, v in sorted(
                s["parts"].items(), key=lambda kv: -kv[1])[:4] if k != "total")] for s in saved["speed"]]), ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", type=int, default=1_000_000)
    parser.add_argument("--attacks", action="store_true")
    parser.add_argument("--render", action="store_true")
    args = parser.parse_args()
    if not args.render:
        saved = run(args.big, args.attacks)
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(saved, indent=1, default=str) + "\n")
    saved = json.loads(RESULTS.read_text())
    update_section(DOCS / "report.md", "report", render(saved), title="Disclosure risk and utility report")
    print(f"wrote {DOCS / 'report.md'}")


if __name__ == "__main__":
    main()
