"""Random generalization hierarchies for property tests: the rows of a hierarchy file."""

from __future__ import annotations

import numpy as np


def random_hierarchy_rows(rng: np.random.Generator, j: int) -> list[list[str]]:
    """The rows (leaf first, ``*`` last) of a random hierarchy over 2-6 values ``a{j}v{c}``, 2-4 levels
    deep, each level grouping the groups of the one below at random."""
    card = int(rng.integers(2, 7))
    depth = int(rng.integers(2, 5))
    rows = [[f"a{j}v{c}"] for c in range(card)]
    parents = np.arange(card)
    for level in range(1, depth - 1):
        groups = max(1, int(rng.integers(1, len(set(parents)) + 1)))
        remap = {p: int(rng.integers(0, groups)) for p in sorted(set(parents))}
        parents = np.array([remap[p] for p in parents])
        for c in range(card):
            rows[c].append(f"a{j}L{level}g{parents[c]}")
    for c in range(card):
        rows[c].append("*")
    return rows
