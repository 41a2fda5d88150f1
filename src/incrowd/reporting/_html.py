"""The report as one self-contained HTML page: inline CSS, inline SVG figures, no script, no link
to anything outside the file (it opens offline, in a mail attachment, in an archive)."""

from __future__ import annotations

import html
import math
from typing import Any

from ..privacy import verified_lines
from ._summary import DEFINITIONS, summary_points

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:76rem;margin:1.5rem auto;
padding:0 1rem;color:#1d1d1f;line-height:1.4}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd}
h3{font-size:1.05rem;margin-top:1.2rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.92rem}
td,th{border:1px solid #d0d0d0;padding:.25rem .55rem;text-align:left;vertical-align:top}
th{background:#f3f3f5;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}span.code{color:#666;font-weight:400;font-size:.85em}
.figure{margin:1rem 0}.figure svg{max-width:100%;height:auto}
.note{color:#555;font-size:.9rem}ul.assumptions li{margin:.2rem 0}
td.pass{background:#e6f4ea;color:#1e6b34;font-weight:600}td.review{background:#fff4d6;color:#7a5300;font-weight:600}
td.fail{background:#fde7e9;color:#a01c2a;font-weight:600}abbr{text-decoration:underline dotted;cursor:help}
.freq{display:inline-block;vertical-align:top;margin-right:1.2rem}
"""

_SOURCES = [
    ("Re-identification risk (prosecutor, journalist, marketer)", "ARX's risk models (Prasser et al.; "
     "arx.deidentifier.org, 'Risk analysis')"),
    ("dRisk, dRiskRMD, record linkage, IL1s, eigenvalue measure", "sdcMicro 5.8 (Templ, Kowarik, Meindl: "
     "Statistical Disclosure Control for Micro-Data Using the R Package sdcMicro, JSS 67(4), 2015)"),
    ("l-diversity, t-closeness", "Machanavajjhala et al. (ICDE 2006); Li, Li, Venkatasubramanian (ICDE 2007)"),
    ("Normalized certainty penalty", "Xu, Wang, Pei, Wang, Shi, Fu (KDD 2006)"),
    ("Singling-out, linkability, inference", "anonymeter (Giomi et al., PoPETs 2023)"),
]


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "-"
        # four significant digits: what a reader compares; the JSON keeps every digit
        return f"{value:.4g}"
    if value is None:
        return "-"
    if isinstance(value, (list, tuple)):
        if all(not isinstance(v, (dict, list, tuple)) for v in value):
            shown = ", ".join(_fmt(v) for v in value[:20])
            return shown + (", ..." if len(value) > 20 else "")
        return f"{len(value)} items"
    return str(value)


def _flatten(prefix: str, value: Any, rows: list[tuple[str, str]], depth: int = 0) -> None:
    if isinstance(value, dict) and depth < 4:
        if value and all(not isinstance(k, str) for k in value) or (
                value and all(isinstance(k, str) and k.isdigit() for k in value) and len(value) > 12):
            # a histogram: keep it on one line
            items = list(value.items())[:30]
            rows.append((prefix, ", ".join(f"{k}: {_fmt(v)}" for k, v in items)
                         + (", ..." if len(value) > 30 else "")))
            return
        for key, sub in value.items():
            _flatten(f"{prefix} / {key}" if prefix else str(key), sub, rows, depth + 1)
        return
    rows.append((prefix, _fmt(value)))


def _matrix(value: Any) -> bool:
    """A dict of dicts that share their keys (per column, per attribute): one wide table."""
    if not isinstance(value, dict) or len(value) < 2:
        return False
    inner = list(value.values())
    if not all(isinstance(v, dict) and v for v in inner):
        return False
    keys = list(inner[0])
    return all(list(v) == keys for v in inner) and all(
        not isinstance(x, (dict, list, tuple)) for v in inner for x in v.values())


def _matrix_table(value: dict) -> str:
    keys = list(next(iter(value.values())))
    head = "<tr><th></th>" + "".join(f"<th>{html.escape(str(k).replace('_', ' '))}</th>" for k in keys) + "</tr>"
    body = "".join(
        f"<tr><th>{html.escape(str(name))}</th>" + "".join(f"<td class=num>{html.escape(_fmt(v[k]))}</td>"
                                                          for k in keys) + "</tr>"
        for name, v in value.items())
    return f"<table>{head}{body}</table>"


def _table(section: dict[str, Any]) -> str:
    parts = []
    for name, value in section.items():
        if isinstance(value, dict):
            wide = {k: v for k, v in value.items() if _matrix(v)}
            value = {k: v for k, v in value.items() if k not in wide}
        else:
            wide = {}
        rows: list[tuple[str, str]] = []
        _flatten("", value, rows)
        body = "".join(
            f"<tr><th>{html.escape(k or name)}</th><td class=num>{html.escape(v)}</td></tr>" for k, v in rows)
        parts.append(f"<h3>{html.escape(name.replace('_', ' '))}</h3><table>{body}</table>")
        for key, matrix in wide.items():
            parts.append(f"<h3>{html.escape(name.replace('_', ' '))}: {html.escape(key.replace('_', ' '))}</h3>"
                         + _matrix_table(matrix))
    return "".join(parts)


def _percent(share: float) -> str:
    """A share as a percentage with three significant digits (0.0715036 is 7.15 %)."""
    if not math.isfinite(share):
        return "-"
    if share == 0:
        return "0 %"
    return f"{100 * share:.3g} %"


def _verdict(lines: list[dict]) -> str:
    if not lines:
        return ""
    rows = []
    for v in lines:
        value = v["value"]
        shown = _fmt(float(value)) if isinstance(value, float) else _fmt(value)
        rows.append(f"<tr><th>{html.escape(v['measure'])}</th><td class=num>{html.escape(shown)}</td>"
                    f"<td class=num>{html.escape(_fmt(v['threshold']))}</td>"
                    f"<td class={html.escape(v['status'])}>{html.escape(v['status'])}</td>"
                    f"<td>{html.escape(v.get('driver') or '')}</td><td>{html.escape(v.get('next_step') or '')}</td></tr>")
    head = "<tr><th>measure</th><th>value</th><th>threshold</th><th>verdict</th><th>what drives it</th><th>next step</th></tr>"
    return f"<h2>Verdict</h2><table id=verdict>{head}{''.join(rows)}</table>"


def _map(points: list[dict] | None, figure: str | None) -> str:
    """The risk-utility map: its figure and one row per point with the spec that makes it."""
    if not points:
        return ""
    from ..publishing import spec_to_toml

    rows = "".join(
        f"<tr><td class=num>{number}</td><th>{html.escape(p['label'])}</th><td class=num>{html.escape(_percent(p['risk']))}</td>"
        f"<td class=num>{html.escape(_percent(p['loss']))}</td><td><details><summary>spec</summary>"
        f"<pre>{html.escape(spec_to_toml(p['spec']))}</pre></details></td></tr>" for number, p in enumerate(points, start=1))
    return ("<h2>Risk and loss of the neighbouring releases</h2>"
            + (f"<div class=figure id=figure-map>{figure}</div>" if figure else "")
            + "<table id=risk-utility-map><tr><th>#</th><th>release</th><th>risk</th><th>loss</th><th>made by</th></tr>"
            + rows + "</table><p class=note>risk: classes over published rows (the expected share of records "
            "re-identified); loss: numeric information loss and categorical NCP over all rows, averaged over "
            "the quasi-identifiers. Each neighbour was re-made with incrowd publish --spec and measured.</p>")


def _categorical_tables(categorical: dict) -> str:
    """Before/after frequencies of every categorical quasi-identifier and suppression per key."""
    if not categorical:
        return ""
    parts = []
    cells = categorical.get("suppressed_cells") or {}
    if cells:
        body = "".join(f"<tr><th>{html.escape(c)}</th><td class=num>{n}</td>"
                       f"<td class=num>{categorical.get('suppressed_rows', 0)}</td>"
                       f"<td class=num>{html.escape(_percent(categorical.get('changed_share', {}).get(c, 0.0)))}</td></tr>"
                       for c, n in cells.items())
        parts.append("<h3>Suppression per key</h3><table id=suppression><tr><th>column</th><th>cells suppressed</th>"
                     f"<th>rows withheld</th><th>published values changed</th></tr>{body}</table>")
    parts.append(_frequency_tables(categorical.get("frequencies") or {}, "Categorical values before and after"))
    return "".join(parts)


def _total(value: float) -> str:
    """A count or a weighted total in full (a table's totals are compared digit by digit)."""
    return str(value) if isinstance(value, int) else f"{round(float(value), 2):.15g}"


def _frequency_tables(freqs: dict[str, list[dict]], title: str, element_id: str = "") -> str:
    """One small before/after table per column (``frequencies`` rows: value, label, original, release)."""
    if not freqs:
        return ""
    tables = []
    for c, rows in freqs.items():
        # a labelled file's code is shown by its label, the code beside it
        body = "".join(f"<tr><th>{html.escape(str(r.get('label', r['value'])))}"
                       + (f" <span class=code>{html.escape(str(r['value']))}</span>" if "label" in r else "")
                       + f"</th><td class=num>{_total(r['original'])}</td><td class=num>{_total(r['release'])}</td></tr>"
                       for r in rows)
        tables.append(f"<div class=freq><table><caption>{html.escape(c)}</caption><tr><th>value</th>"
                      f"<th>original</th><th>release</th></tr>{body}</table></div>")
    return f"<h3{f' id={element_id}' if element_id else ''}>{html.escape(title)}</h3>" + "".join(tables)


def _benchmark_row(r: dict) -> str:
    def interval(pair) -> str:
        return "-" if pair[0] is None else f"[{_fmt(pair[0])}, {_fmt(pair[1])}]"

    # a labelled group reads as its label, the code beside it: "Urban (1)", not "urbrur = 1"
    named = r.get("label") or {}
    group = ", ".join(f"{named[k]} ({v})" if k in named else f"{k} = {v}" for k, v in r["group"].items()) or "all"
    change = "-" if r["relative_change"] is None else _percent(r["relative_change"])
    overlap = _fmt(r["ci_overlap"]) + ("" if r["ci_overlap_measure"] is None else f" ({_fmt(r['ci_overlap_measure'])})")
    cells = [(r["estimate"], ""), (group, ""), (_fmt(r["original"]), " class=num"), (_fmt(r["release"]), " class=num"),
             (change, " class=num"), (interval(r["original_ci"]), ""), (interval(r["release_ci"]), ""), (overlap, "")]
    return "<tr>" + "".join(f"<td{attr}>{html.escape(text)}</td>" for text, attr in cells) + "</tr>"


def _benchmark_table(rows: list[dict] | None) -> str:
    """The benchmark estimates before and after, one row per estimate and group."""
    if not rows:
        return ""
    return ("<h3>Benchmark estimates</h3><table id=benchmarks><tr><th>estimate</th><th>group</th><th>original</th>"
            "<th>release</th><th>change</th><th>original 95 % CI</th><th>release 95 % CI</th>"
            "<th>intervals overlap (Karr's measure)</th></tr>" + "".join(map(_benchmark_row, rows)) + "</table>")


def _verified(verification: dict) -> str:
    return "".join(f"<li>{html.escape(c)}</li>" for c in verified_lines(verification))


def _named(name: str) -> str:
    """A headline figure's name, its definition on hover where the page has two of a kind."""
    if name in DEFINITIONS:
        return f"<abbr title=\"{html.escape(DEFINITIONS[name])}\">{html.escape(name)}</abbr>"
    return html.escape(name)


def render(report) -> str:
    about = report.about
    head = [
        ("rows", f"{about.get('rows_original')} original, {about.get('rows_release')} in the release "
                 f"({about.get('suppressed')} suppressed)"),
        ("quasi-identifiers", ", ".join(about.get("quasi_identifiers", [])) or "-"),
        ("numeric / categorical", f"{', '.join(about.get('numeric', [])) or '-'} / "
                                  f"{', '.join(about.get('categorical', [])) or '-'}"),
        ("sensitive", ", ".join(about.get("sensitive", [])) or "-"),
        ("promised k", _fmt(about.get("k"))),
        ("risk threshold", _fmt(about.get("threshold"))),
    ]
    head_rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in head)
    assumptions = "".join(f"<li>{html.escape(a)}</li>" for a in report.assumptions)
    release = ""
    if report.release:
        verification = report.release.get("verification") or {}
        checks = _verified(verification)
        where = (f"Verified on the written file, read back as {verification['read_back_as']}, before it was put in place"
                 if verification.get("verified_on") == "written file" and verification.get("read_back_as")
                 else "Verified on the published table before it was written")
        release = ("<h2>The release</h2>"
                   + (f"<p>{html.escape(where)}:</p><ul>{checks}</ul>" if checks else "")
                   + _table({"summary": {k: v for k, v in report.release.items() if k != "verification"}}))
    headline = "".join(
        f"<tr><th>{_named(k)}</th><td class=num>{html.escape(_percent(v))}</td></tr>"
        for k, v in summary_points(report.risk, report.utility).items())
    utility = dict(report.utility)
    benchmarks = utility.pop("benchmarks", None)
    weighted = utility.pop("weighted_frequencies", None) or {}
    weighted_title = (f"Weighted totals before and after (weight {weighted['weight']})" if weighted.get("weight")
                      else "Perturbed categorical values before and after")
    categorical = dict(utility.get("categorical") or {})
    if categorical:  # shown as tables of their own
        utility["categorical"] = {k: v for k, v in categorical.items() if k not in ("frequencies",)}
    if isinstance(utility.get("numeric"), dict) and "il" in utility["numeric"]:
        numeric = dict(utility["numeric"])
        numeric["information loss, published rows (il)"] = numeric.pop("il")
        utility["numeric"] = numeric
    definitions = "".join(f"<li><b>{html.escape(k)}</b>: {html.escape(v)}</li>" for k, v in DEFINITIONS.items())
    figures = "".join(
        f"<div class=figure id=figure-{html.escape(name)}><h3>{html.escape(name.replace('_', ' '))}</h3>{svg}</div>"
        for name, svg in report.figures.items() if name != "risk_utility_map")
    sources = "".join(f"<tr><th>{html.escape(a)}</th><td>{html.escape(b)}</td></tr>" for a, b in _SOURCES)
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width, initial-scale=1'>"
        f"<title>incrowd risk and utility report</title><style>{_CSS}</style></head><body>"
        "<h1>Disclosure risk and utility</h1>"
        f"{_verdict(getattr(report, 'verdict', []))}"
        f"{_map(getattr(report, 'risk_utility_map', None), report.figures.get('risk_utility_map'))}"
        f"<table>{head_rows}</table>"
        f"<h2>At a glance</h2><table>{headline}</table>"
        f"<ul class=note id=definitions>{definitions}</ul>"
        + (f"<div class=figure id=figure-summary-top>{report.figures['summary']}</div>"
           if "summary" in report.figures else "")
        + f"<h2>What the report assumed</h2><ul class=assumptions>{assumptions}</ul>"
        f"{release}"
        f"<h2>Risk</h2>{_table(report.risk)}"
        f"<h2>Utility</h2>{_table(utility)}{_benchmark_table(benchmarks)}{_categorical_tables(categorical)}"
        f"{_frequency_tables(weighted.get('tables') or {}, weighted_title, 'weighted-frequencies')}"
        f"<h2>Figures</h2>{figures}"
        f"<h2>Definitions</h2><table>{sources}</table>"
        "<p class=note>Made by incrowd. Every figure is computed on the files named above; nothing in this page "
        "is fetched from elsewhere.</p></body></html>\n"
    )
