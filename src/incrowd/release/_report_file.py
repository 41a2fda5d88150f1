"""The release report as a file: JSON (the summary as is) or one self-contained HTML page (inline
CSS, no script, nothing fetched), written atomically."""

from __future__ import annotations

import html
import os
from typing import Any, Iterable

from .._atomic import atomic_output
from .._json import dumps as strict_json

_CSS = ("body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}"
        "table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem;"
        "text-align:left;vertical-align:top}th{background:#f4f4f4}.ok{color:#176b2c;font-weight:600}")


def _rows(report: dict[str, Any]) -> list[tuple[str, str]]:
    def pct(x: float) -> str:
        return f"{100 * x:.3f} %"

    rows = [
        ("strategy", f"{report['strategy']} (method {report['method']})"),
        ("k", str(report["k"])),
        ("l", "-" if report.get("l") is None else str(report["l"])),
        ("t", "-" if report.get("t") is None else str(report["t"])),
        ("numeric quasi-identifiers", ", ".join(report["numeric"]) or "-"),
        ("categorical quasi-identifiers", ", ".join(report["categorical"]) or "-"),
        ("sensitive columns", ", ".join(report["sensitive"]) or "-"),
        ("identifiers dropped", ", ".join(report["identifiers_dropped"]) or "-"),
        ("rows in / out", f"{report['rows_in']} / {report['rows_out']}"),
        ("suppressed", f"{report['suppressed']} rows ({pct(report['suppressed_fraction'])})"),
        ("classes", f"{report['classes']}, smallest {report['min_class_size']} rows"),
        ("numeric information loss (SSE/SST)", pct(report["numeric_information_loss"])),
        ("categorical NCP", f"{report['categorical_ncp']:.4f}"),
        ("mean generalization height", f"{report['mean_generalization_height']:.3f}"),
        ("seconds (compiling apart)", f"{report['seconds']:.3f}"),
    ]
    if report.get("levels"):
        rows.insert(4, ("levels", ", ".join(f"{a}={v}" for a, v in report["levels"].items())))
    return rows


def to_html(report: dict[str, Any]) -> str:
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in _rows(report))
    checks = []
    verification = report.get("verification", {})
    ka = verification.get("k_anonymity", {})
    if ka:
        checks.append(f"k-anonymous (k={ka.get('k')}): smallest class {ka.get('min_class_size')} rows")
    for name, got in (verification.get("l_diversity") or {}).items():
        checks.append(f"{name}: l-diverse (l={got.get('l')}), fewest distinct values per class {got.get('min_distinct')}")
    for name, got in (verification.get("t_closeness") or {}).items():
        checks.append(f"{name}: t-close (t={got.get('t')}), largest distance {got.get('max_distance'):.4f}")
    items = "".join(f"<li class=ok>{html.escape(c)}</li>" for c in checks)
    return ("<!doctype html><html lang=en><head><meta charset=utf-8><title>incrowd release report</title>"
            f"<style>{_CSS}</style></head><body><h1>Release report</h1>"
            f"<h2>Verified on the published table</h2><ul>{items}</ul>"
            f"<h2>Figures</h2><table>{body}</table>"
            "<p>Numeric information loss: squared distance of each published row to its group mean, and of each "
            "suppressed row to the overall mean, over the total sum of squares (standardized numeric "
            "quasi-identifiers). NCP: normalized certainty penalty of the categorical quasi-identifiers "
            "(suppressed rows count 1).</p></body></html>\n")


def write_report(result, path: str | os.PathLike, *, inputs: Iterable = ()) -> None:
    report = result.summary()
    text = to_html(report) if str(path).lower().endswith((".html", ".htm")) else strict_json(report) + "\n"
    with atomic_output(path, inputs=inputs, what="report") as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
