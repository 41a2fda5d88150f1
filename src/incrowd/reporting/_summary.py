"""The report's headline figures, shared by the report, its HTML page and the web UI."""

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
