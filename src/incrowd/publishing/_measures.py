"""What a mixed release cost in information, on each side.

- Numeric information loss: SSE/SST of the standardized numeric quasi-identifiers, where SSE sums
  each published row's squared distance to its group's mean (the value it is published as) and
  each suppressed row's squared distance to the overall mean (all of it is lost), over the cells
  that hold a value. 0 = nothing lost, 1 = as if every row were published as the mean. For
  generalization alone, the group is the row's equivalence class (its published interval says
  no more than that class's mean).
- Normalized certainty penalty of the categorical quasi-identifiers (Xu, Wang, Pei, Wang, Shi,
  Fu, "Utility-based anonymization using local recoding", KDD 2006): a value published as is
  costs 0, a generalized value u costs |leaves(u)| / |leaves|, a suppressed row costs 1, and so
  does a blanked cell (``suppression = "cells"``: its value is withheld as a suppressed row's
  is); averaged over rows and columns.
- Mean generalization height: the published level over the hierarchy's top level, averaged over
  published rows and categorical columns (a blanked cell at the top).
"""

from __future__ import annotations

import numpy as np

from ..generalization import Hierarchy


def numeric_information_loss(Z: np.ndarray, groups: np.ndarray) -> float:
    """``groups``: group id per row, -1 for a suppressed row; Z standardized, NaN = missing."""
    if Z.shape[1] == 0:
        return 0.0
    present = ~np.isnan(Z)
    Zf = np.where(present, Z, 0.0)
    centre = np.array([Zf[present[:, j], j].mean() if present[:, j].any() else 0.0 for j in range(Z.shape[1])])
    sst = float(((Zf - centre) ** 2 * present).sum())
    if sst == 0:
        return 0.0
    kept = groups >= 0
    sse = float((((Zf - centre) ** 2) * present)[~kept].sum())
    if kept.any():
        g = np.unique(groups[kept], return_inverse=True)[1].ravel()
        n_groups = int(g.max()) + 1
        sums = np.zeros((n_groups, Z.shape[1]))
        counts = np.zeros((n_groups, Z.shape[1]))
        np.add.at(sums, g, Zf[kept])
        np.add.at(counts, g, present[kept].astype(np.float64))
        means = sums / np.where(counts > 0, counts, 1.0)
        sse += float((((Zf[kept] - means[g]) ** 2) * present[kept]).sum())
    return min(max(sse / sst, 0.0), 1.0)


def leaves_below(hierarchy: Hierarchy, level: int) -> np.ndarray:
    """Per code at ``level``: how many level-0 values it covers."""
    return np.bincount(hierarchy.code_map(level), minlength=hierarchy.labels[level].size)


def categorical_ncp(hierarchies: dict[str, Hierarchy], codes0: dict[str, np.ndarray],
                    levels_per_row: dict[str, np.ndarray], keep: np.ndarray,
                    blanked: dict[str, np.ndarray] | None = None) -> float:
    """Mean NCP over rows and categorical columns (suppressed rows and ``blanked`` cells, per
    column a flag per row, cost 1)."""
    if not hierarchies:
        return 0.0
    n = keep.size
    total = 0.0
    for name, hierarchy in hierarchies.items():
        n_leaves = hierarchy.labels[0].size
        cost = np.ones(n)
        level = levels_per_row[name]
        for L in np.unique(level[keep]):
            rows = keep & (level == L)
            if L == 0:
                cost[rows] = 0.0
                continue
            if L > hierarchy.max_level:  # no common ancestor: published as "*"
                continue
            covered = leaves_below(hierarchy, int(L))[hierarchy.code_map(int(L))[codes0[name][rows]]]
            # a group of one value publishes that value as it is: it costs nothing (Xu et al.)
            cost[rows] = np.where(covered > 1, covered / n_leaves, 0.0)
        if blanked is not None and name in blanked:
            cost[blanked[name]] = 1.0
        total += cost.sum()
    return float(total / (n * len(hierarchies)))


def mean_height(hierarchies: dict[str, Hierarchy], levels_per_row: dict[str, np.ndarray],
                keep: np.ndarray, blanked: dict[str, np.ndarray] | None = None) -> float:
    """Mean over published rows and categorical columns of level / top level; a ``blanked``
    cell counts as the top, as a suppressed cell does in the report."""
    if not hierarchies or not keep.any():
        return 0.0
    parts = []
    for a, h in hierarchies.items():
        height = np.minimum(levels_per_row[a] / max(h.max_level, 1), 1.0)
        if blanked is not None and a in blanked:
            height = np.where(blanked[a], 1.0, height)
        parts.append(height[keep])
    return float(np.mean(np.concatenate(parts)))
