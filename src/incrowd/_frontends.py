"""What the command line and the web UI share, below both (neither imports the other): the
publish summary's lines and the parser of a partial lattice's share. Their caps on user
numbers (``MAX_SEED``, ``MAX_RUNS``, ``MAX_ROUNDS``) are in ``_methods``.
"""

from __future__ import annotations

from pathlib import Path

from .exceptions import ParameterError
from .io import is_stdout


def summary_lines(info: dict) -> list[tuple[str, str]]:
    privacy = [f"k={info['k']}"]
    if info.get("l") is not None:
        privacy.append(f"l={info['l']}")
    if info.get("t") is not None:
        privacy.append(f"t={info['t']}")
    sensitive = ", ".join(info.get("sensitive") or []) or "none"
    lines = [
        ("input", info.get("input", "")),
        ("strategy", f"{info['strategy']} (method {info['method']})"),
        ("privacy", ", ".join(privacy) + f"; sensitive: {sensitive}"),
        ("quasi-identifiers", f"numeric {', '.join(info['numeric']) or '-'}; categorical "
                              f"{', '.join(info['categorical']) or '-'}"),
    ]
    if info.get("levels"):
        lines.append(("levels", ", ".join(f"{a}={v}" for a, v in info["levels"].items())))
    lines += [
        ("rows", f"{info['rows_in']} in, {info['rows_out']} out"),
        ("suppressed", f"{info['suppressed']} rows ({100 * info['suppressed_fraction']:.3f} %)"),
        ("classes", f"{info['classes']}, smallest {info['min_class_size']} rows"),
        ("numeric IL", f"{100 * info['numeric_information_loss']:.3f} % (SSE/SST of the numeric QIs)"),
        ("categorical loss", f"NCP {info['categorical_ncp']:.4f}, mean generalization height "
                             f"{info['mean_generalization_height']:.3f}"
                             + (f"; published as one label in every row: {', '.join(info['fully_suppressed'])}"
                                if info.get("fully_suppressed") else "")),
        ("seconds", f"{info['seconds']:.3f}" + (f" (plus {info['compile_seconds']:.3f} s to compile or load the "
                                               "kernels, not counted)" if info.get("compile_seconds", 0) > 0.0005
                                               else "")),
        ("verified", " and ".join(["k-anonymous over all quasi-identifiers"]
                                  + (["l-diverse"] if info.get("l") is not None else [])
                                  + (["t-close"] if info.get("t") is not None else []))
                     + (" on the written file" if (info.get("verification") or {}).get("verified_on") == "written file"
                        else " before writing")),
    ]
    if info.get("output"):
        lines.append(("written", "standard output" if is_stdout(Path(info["output"])) else info["output"]))
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
