"""Our values against published ones: equal at the printed decimals, relative gaps, verdicts."""

from __future__ import annotations

import numpy as np


def il_percent(Z: np.ndarray, labels: np.ndarray) -> float:
    """Information loss in % of ``labels`` on already standardized data ``Z``."""
    from incrowd.microaggregation import information_loss

    return 100.0 * information_loss(Z, labels, standardized=True)


def same_at(ours: float, published: float, decimals: int = 2) -> bool:
    """Our value printed to the published number of decimals is the published one."""
    return f"{ours:.{decimals}f}" == f"{published:.{decimals}f}"


def same2(ours: float, published: float) -> bool:
    return same_at(ours, published, 2)


def rel_gap(ours: float, published: float) -> float:
    """Relative gap of ours to the published value (0.01 = 1 % above it)."""
    return (ours - published) / published


def fmt_gap(gap: float) -> str:
    """A relative gap as a signed percentage; a gap that rounds to zero has no sign."""
    text = f"{100 * gap:+.2f} %"
    return "0.00 %" if text in ("+0.00 %", "-0.00 %") else text


def yes_no(ok: bool) -> str:
    return "yes" if ok else "**no**"


def pass_fail(ok: bool) -> str:
    return "pass" if ok else "**FAIL**"


def comparison_rows(head: list[str], ours: list[float], published: list[float], same_label: str,
                    ours_label: str = "ours") -> list[list[str]]:
    """The four table rows of one method against a published row: ours (4 decimals), published
    (2), relative gap, and whether ours prints as the published value. ``head`` fills the first
    columns of the first row (the others get blanks)."""
    blank = [""] * len(head)
    return [[*head, ours_label, *(f"{v:.4f}" for v in ours)],
            [*blank, "published", *(f"{p:.2f}" for p in published)],
            [*blank, "rel. gap", *(fmt_gap(rel_gap(v, p)) for v, p in zip(ours, published))],
            [*blank, same_label, *(yes_no(same2(v, p)) for v, p in zip(ours, published))]]


def same_groups(a: np.ndarray, b: np.ndarray) -> bool:
    """True when two labelings define the same partition of the rows (ids may differ)."""
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape:
        return False
    if np.array_equal(a, b):
        return True
    # Same partition iff the pairs (a_i, b_i) form a bijection between the two id sets.
    pairs = np.unique(np.stack([a, b]), axis=1)
    return len(np.unique(pairs[0])) == pairs.shape[1] == len(np.unique(pairs[1]))
