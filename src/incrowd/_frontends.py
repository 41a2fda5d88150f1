"""What the command line and the web UI share, below both (neither imports the other): the
publish summary's lines, the risk summary's lines and the parser of a partial lattice's share. Their caps on user
numbers (``MAX_SEED``, ``MAX_RUNS``, ``MAX_ROUNDS``) are in ``_methods``.
"""

from __future__ import annotations

from pathlib import Path

from .exceptions import ParameterError
from .io import is_stdout


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
        lines.append(("suppressed cells", _cells_line(info)))
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
    if info.get("risk_targets"):  # each target beside the value the release reaches
        lines.append(("risk targets", "; ".join(f"{key} {got['achieved']:.4g} (at most {got['target']:g})"
                                                for key, got in info["risk_targets"].items())))
    if info.get("output"):
        lines.append(("written", "standard output" if is_stdout(Path(info["output"])) else info["output"]))
    return lines


def _cells_line(info: dict) -> str:
    """The blanks of a cell release, in all and per column."""
    per_column = info.get("suppressed_cells") or {}
    total = int(sum(per_column.values()))
    cells = int(info["rows_in"]) * max(len(per_column), 1)
    shown = ", ".join(f"{name} {count}" for name, count in per_column.items())
    return f"{total} blanked ({100 * total / cells:.3f} % of the categorical key cells): {shown}"


def risk_lines(result, output=None) -> list[tuple[str, str]]:
    """The lines ``incrowd risk`` prints and the web's Risk step shows: a :class:`RiskResult`'s
    summary, and where its report was written (``output``)."""
    s, about = result.summary(), result.about
    lines = [("rows", f"{about['rows']}"),
             ("global risk", f"{s['global_risk']:.6g} ({s['global_risk_percent']:.4g} %)"),
             ("expected re-identifications", f"{s['expected_reidentifications']:.4g}"),
             ("highest individual risk", f"{s['highest_individual_risk']:.4g}"),
             (f"records above {about['threshold']:g}", f"{s['records_above_threshold']}"),
             ("sample uniques", f"{s['sample_uniques']}"),
             ("k violations", ", ".join(f"k={k}: {v}" for k, v in s["k_violations"].items()))]
    if "household_risk" in s:
        lines.append(("household risk", f"{s['household_risk']:.6g} (expected "
                                         f"{s['household_expected_reidentifications']:.4g})"))
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
    if output is not None:
        lines.append(("written", str(output)))
    return lines


def partial_fraction(text: str | None) -> float:
    """``--partial`` / the web's partial share: "0.3" or "30%" -> 0.3; None -> 1.0 (every node)."""
    if text is None:
        return 1.0
    t = text.strip()
    try:
        value = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1:
        raise ParameterError(f"--partial must be a share of the nodes in (0, 1] or (0%, 100%]; got {text!r}")
    return value
