"""The lines of a release's summary, as ``incrowd publish`` prints them and the web's Publish
page shows them (the command line and the web read them from here: neither imports the other)."""

from __future__ import annotations

from pathlib import Path

from ..io import is_stdout


def summary_lines(info: dict) -> list[tuple[str, str]]:
    # the models as the release's check names them ("2-anonymous", "distinct 2-diverse in 'disease'")
    verification = info.get("verification") or {}
    models = (verification.get("promise") or {}).get("models") or [f"{info['k']}-anonymous"]
    sensitive = ", ".join(info.get("sensitive") or []) or "none"
    lines = [
        ("input", info.get("input", "")),
        ("strategy", f"{info['strategy']} (method {info['method']})"),
        ("privacy", ", ".join(models) + f"; sensitive: {sensitive}"),
        ("quasi-identifiers", f"numeric {', '.join(info['numeric']) or '-'}; categorical "
                              f"{', '.join(info['categorical']) or '-'}"),
    ]
    if info.get("levels"):
        lines.append(("levels", ", ".join(f"{a}={v}" for a, v in info["levels"].items())))
    wildcard = info.get("missing_matches") == "any"
    lines += [
        ("rows", f"{info['rows_in']} in, {info['rows_out']} out"),
        ("suppressed", f"{info['suppressed']} rows ({100 * info['suppressed_fraction']:.3f} %)"),
    ]
    if info.get("suppression") == "cells":
        lines.append(("suppressed cells", cells_line(info)))
    lines += [
        ("classes", f"{info['classes']} distinct keys, every row matching at least {info['min_class_size']} rows"
                    if wildcard else f"{info['classes']}, smallest {info['min_class_size']} rows"),
        ("numeric IL", f"{100 * info['numeric_information_loss']:.3f} % (SSE/SST of the numeric QIs)"),
        ("categorical loss", f"NCP {info['categorical_ncp']:.4f}, mean generalization height "
                             f"{info['mean_generalization_height']:.3f}"
                             + (f"; published as one label in every row: {', '.join(info['fully_suppressed'])}"
                                if info.get("fully_suppressed") else "")),
        ("seconds", f"{info['seconds']:.3f}" + (f" (plus {info['compile_seconds']:.3f} s to compile or load the "
                                               "kernels, not counted)" if info.get("compile_seconds", 0) > 0.0005
                                               else "")),
        ("verified", "every model above, k over all quasi-identifiers together"
                     + (" (a missing value matching any value)" if wildcard else "")
                     + (" on the written file" if verification.get("verified_on") == "written file"
                        else " before writing")),
    ]
    for i, step in enumerate(info.get("perturbation") or (), 1):
        lines.append((f"perturb {i}", step["line"]))
    if info.get("risk_targets"):
        lines.append(("risk targets", risk_targets_text(info["risk_targets"])))
    if info.get("household"):
        lines.append(("households", _households_line(info)))
    if info.get("output"):
        lines.append(("written", "standard output" if is_stdout(Path(info["output"])) else info["output"]))
    return lines


def cells_line(info: dict) -> str:
    """The blanks of a cell release, in all and per column."""
    per_column = info.get("suppressed_cells") or {}
    total = int(sum(per_column.values()))
    cells = int(info["rows_in"]) * max(len(per_column), 1)
    shown = ", ".join(f"{name} {count}" for name, count in per_column.items())
    return f"{total} blanked ({100 * total / cells:.3f} % of the categorical key cells): {shown}"


def _households_line(info: dict) -> str:
    """The household id as published and the household-level columns, with what the check held."""
    shown = {"keep": "kept", "renumber": "renumbered 1, 2, ...", "drop": "dropped"}[info.get("household_id", "keep")]
    level = ", ".join(info.get("household_level") or []) or "none"
    return (f"id {info['household']} {shown}; household-level: {level} (each household shows one value: "
            "no blank can be filled in from a housemate)")


def risk_targets_text(targets: dict) -> str:
    """The summary's ``risk_targets``: each target beside the value the release reaches."""
    return "; ".join(f"{key} {got['achieved']:.4g} (at most {got['target']:g})" for key, got in targets.items())
