"""The report's headline figures, shared by the report, its HTML page and the web UI; and the
lines of a risk summary, as ``incrowd risk`` prints them and the web's Risk step shows them."""

from __future__ import annotations

#: the one information loss the page headlines: the release summary's numeric IL (a suppressed
#: row loses all its spread); the report's ``il`` over the published rows is named apart
IL_NAME = "information loss, all rows (SSE/SST)"

#: the definitions a reader needs where two figures could be taken for one
DEFINITIONS = {
    IL_NAME: "SSE/SST of the numeric quasi-identifiers over ALL original rows, standardized by the original: "
             "a published value loses its squared difference from the original, a suppressed row its whole "
             "spread. The release summary's numeric information loss is this figure (utility: il_all_rows).",
    "information loss, published rows": "the same SSE/SST over the published rows only (utility: il); it "
                                        "leaves suppressed rows out, so it is lower when rows were suppressed.",
    "categorical NCP": "normalized certainty penalty over the published rows, averaged over the columns named in "
                       "mean_ncp_columns (utility: mean_ncp); mean_ncp_all_rows also charges each suppressed "
                       "row 1 in every column (the release summary's categorical_ncp).",
}


def summary_points(risk: dict, utility: dict) -> dict[str, float]:
    """The headline figures, each in [0, 1], for the risk-utility summary."""
    points: dict[str, float] = {}
    classes = risk.get("classes", {})
    prosecutor = classes.get("prosecutor", {})
    if "highest" in prosecutor:
        points["highest re-identification risk"] = float(prosecutor["highest"])
    if "average" in prosecutor:
        points["average re-identification risk"] = float(prosecutor["average"])
    weighted = risk.get("sample_risk") or {}
    if isinstance(weighted.get("global_risk"), (int, float)):
        # with a sampling weight: the population's risk, as sdcMicro estimates it
        points["global risk (weighted)"] = float(weighted["global_risk"])
    if isinstance(risk.get("drisk"), (int, float)):
        points["dRisk"] = float(risk["drisk"])
    linkage = risk.get("record_linkage", {})
    for key in ("distance_based", "nearest_share"):
        if isinstance(linkage.get(key), (int, float)):
            points["record linkage"] = float(linkage[key])
            break
    numeric = utility.get("numeric", {})
    il = numeric.get("il_all_rows", numeric.get("il"))
    if isinstance(il, (int, float)):
        points[IL_NAME] = float(il)
    categorical = utility.get("categorical", {})
    if isinstance(categorical.get("mean_ncp"), (int, float)):
        points["categorical NCP"] = float(categorical["mean_ncp"])
    if categorical.get("suppressed_share"):
        points["suppressed share"] = float(categorical["suppressed_share"])
    return points


def risk_lines(result, output=None) -> list[tuple[str, str]]:
    """The lines ``incrowd risk`` prints and the web's Risk step shows: a :class:`RiskResult`'s
    summary, and where its report was written (``output``)."""
    s, about = result.summary(), result.about
    parts = f" ({about['partitions']} partitions)" if about.get("partitions") else ""
    lines = [("rows", f"{about['rows']}{parts}"),
             ("global risk", f"{s['global_risk']:.6g} ({s['global_risk_percent']:.4g} %)"),
             ("expected re-identifications", f"{s['expected_reidentifications']:.4g}"),
             ("highest individual risk", f"{s['highest_individual_risk']:.4g}"),
             (f"records above {about['threshold']:g}", f"{s['records_above_threshold']}"),
             ("sample uniques", f"{s['sample_uniques']}"),
             ("k violations", ", ".join(f"k={k}: {v}" for k, v in s["k_violations"].items()))]
    if "household_risk" in s:
        lines.append(("household risk", f"{s['household_risk']:.6g} (expected "
                                         f"{s['household_expected_reidentifications']:.4g})"))
    if "model_risk" in s:
        model = s["model_risk"]
        lines.append(("model risk", f"gr1 {model['gr1']:.4g}, gr2 {model['gr2']:.4g} (sdcMicro modRisk, method "
                                    f"{model['method']}, {model['cells']:,} key combinations)"))
    elif "model_risk_skipped" in s:
        lines.append(("model risk", "skipped: " + s["model_risk_skipped"]))
    if "highest_suda_dis_score" in s:
        lines.append(("SUDA2", f"{s['suda_records_with_msu']} records with special uniques, highest DIS "
                               f"score {s['highest_suda_dis_score']:.4g}"
                               + (f" (MSUs of up to {about['suda_max_size']} key{'s' if about['suda_max_size'] > 1 else ''})"
                                  if about.get("suda_max_size") else "")))
    elif "suda_skipped" in s:
        lines.append(("SUDA2", "skipped: " + s["suda_skipped"].removeprefix("SUDA2 ")))
    elif about.get("suda") is False:
        lines.append(("SUDA2", "left out"))
    uniqueness = s.get("population_uniqueness")
    if isinstance(uniqueness, dict):
        def share(model: str) -> str:
            value, count = uniqueness.get(model), uniqueness.get(f"{model}_uniques")
            if value is None or count is None:
                return "-"
            # a population of 1e300 has counts of 300 digits: beyond 1e12 in short form
            return f"{100 * value:.3g} % ({count:,.0f})" if count < 1e12 else f"{100 * value:.3g} % ({count:.3g})"

        chosen = uniqueness.get("dankar_model") or ("no estimate" if uniqueness.get("sample_uniques")
                                                    else "no sample uniques")
        lines.append(("population uniques", f"{share('dankar')} by Dankar's rule ({chosen}); "
                                            f"Pitman {share('pitman')}, Zayatz {share('zayatz')}, "
                                            f"SNB {share('snb')}"))
    if about.get("records"):
        lines.append(("written", f"{about['records']}/ (every record's measures, one file per partition)"))
    elif output is not None:
        lines.append(("written", str(output)))
    return lines
