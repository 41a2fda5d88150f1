"""The report's headline figures, shared by the report, its HTML page and the web UI."""

from __future__ import annotations


def summary_points(risk: dict, utility: dict) -> dict[str, float]:
    """The headline figures, each in [0, 1], for the risk-utility summary."""
    points: dict[str, float] = {}
    classes = risk.get("classes", {})
    prosecutor = classes.get("prosecutor", {})
    if "highest" in prosecutor:
        points["highest re-identification risk"] = float(prosecutor["highest"])
    if "average" in prosecutor:
        points["average re-identification risk"] = float(prosecutor["average"])
    if isinstance(risk.get("drisk"), (int, float)):
        points["dRisk"] = float(risk["drisk"])
    linkage = risk.get("record_linkage", {})
    for key in ("distance_based", "nearest_share"):
        if isinstance(linkage.get(key), (int, float)):
            points["record linkage"] = float(linkage[key])
            break
    numeric = utility.get("numeric", {})
    if isinstance(numeric.get("il"), (int, float)):
        points["information loss (SSE/SST)"] = float(numeric["il"])
    categorical = utility.get("categorical", {})
    if isinstance(categorical.get("mean_ncp"), (int, float)):
        points["categorical NCP"] = float(categorical["mean_ncp"])
    if categorical.get("suppressed_share"):
        points["suppressed share"] = float(categorical["suppressed_share"])
    return points
