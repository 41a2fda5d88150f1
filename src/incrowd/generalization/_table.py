"""The lattice table: a lattice's nodes (level vectors and ids), its histograms and the bottom
classes, without the builder (``_lattice.Lattice``), so that what reads a lattice (negotiation,
the lattice file, the histogram checks) does not import what builds one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from .._runtime import lazy as _lazy
from ..exceptions import ParameterError, name_list
from ._hierarchy import Hierarchy
from ._histograms import ColumnsFrame, Histograms
from ._node_tables import generalize_table, node_histograms

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = _lazy.module("pandas")  # only building and saving need pandas, not opening a file


class _FrameAttribute:
    """A DataFrame attribute that may be given as :class:`ColumnsFrame`: opening a lattice file
    to answer a request never needs it, so pandas is imported only when it is read."""

    def __set_name__(self, owner, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__[self.slot]
        if isinstance(value, ColumnsFrame):
            value = pd.DataFrame(value.columns)
            obj.__dict__[self.slot] = value
        return value

    def __set__(self, obj, value) -> None:
        obj.__dict__[self.slot] = value


@dataclass
class LatticeTable:
    """The lattice as a table: attributes and hierarchies, which nodes are materialized, each
    node's histograms, the scores and the bottom classes; node ids and level vectors.

    :class:`~incrowd.generalization.Lattice` builds, saves and opens one; the negotiation
    (``_negotiate``), the lattice file (``_store``) and the histograms (``_histograms``) read
    only this table.
    """

    attributes: tuple[str, ...]
    hierarchies: dict[str, Hierarchy]
    n_rows: int
    sensitive: str | None
    sensitive_values: int
    materialized: np.ndarray
    n_classes: np.ndarray
    k_histograms: Histograms
    l_histograms: Histograms | None
    score: np.ndarray
    level_scores: pd.DataFrame
    bottom_codes: np.ndarray
    bottom_counts: np.ndarray
    fraction: float = 1.0
    timings: dict[str, float] = field(default_factory=dict)
    source: str = ""
    #: the sensitive attribute's distinct values in code order and whether t's distance takes
    #: them ordered (publish's rule, :func:`incrowd.values.sensitive_codes`); None in a lattice
    #: file written before t could be negotiated, whose codes are in no such order
    sensitive_order: tuple | None = None
    sensitive_ordered: bool | None = None
    #: whether the sensitive attribute has missing values (the NA vocabulary, system missing):
    #: one missing value, code ``sensitive_values`` (after every value), never a distinct value
    #: for l and one category for t, as in publish; False in a lattice file written before
    sensitive_missing: bool = False

    # -- shape -----------------------------------------------------------------------------

    @property
    def depths(self) -> np.ndarray:
        return np.array([self.hierarchies[a].depth for a in self.attributes], dtype=np.int64)

    @property
    def strides(self) -> np.ndarray:
        d = self.depths
        return np.array([int(np.prod(d[i + 1:])) for i in range(d.size)], dtype=np.int64)

    @property
    def n_nodes(self) -> int:
        return int(np.prod(self.depths))

    @cached_property
    def levels(self) -> np.ndarray:
        """(n_nodes, n_attributes) level vectors in id order (the hierarchies never change)."""
        return node_levels(self.depths)

    @property
    def heights(self) -> np.ndarray:
        return self.levels.sum(axis=1)

    @property
    def is_partial(self) -> bool:
        return not bool(self.materialized.all())

    def node_id(self, levels: Mapping[str, int] | Sequence[int]) -> int:
        vector = self.level_vector(levels)
        return int(np.dot(vector, self.strides))

    def level_vector(self, levels: Mapping[str, int] | Sequence[int], *, default: str = "error") -> np.ndarray:
        """Levels as a vector in attribute order, checked against each hierarchy's depth.

        ``default`` fills attributes a mapping leaves out: "error", "top" (max level) or "bottom".
        """
        if isinstance(levels, Mapping):
            unknown = [a for a in levels if a not in self.attributes]
            if unknown:
                raise ParameterError(
                    f"unknown attribute(s) {name_list(unknown)}; the lattice has attributes {name_list(self.attributes)}"
                )
            out = []
            for a in self.attributes:
                if a in levels:
                    out.append(_as_level(levels[a], a, self.hierarchies[a].max_level))
                elif default == "top":
                    out.append(self.hierarchies[a].max_level)
                elif default == "bottom":
                    out.append(0)
                else:
                    raise ParameterError(f"no level given for attribute {a!r}; give one for each of {list(self.attributes)}")
            return np.array(out, dtype=np.int64)
        seq = list(levels)
        if len(seq) != len(self.attributes):
            raise ParameterError(
                f"a level vector needs {len(self.attributes)} levels ({list(self.attributes)}); got {seq}"
            )
        return np.array([_as_level(v, a, self.hierarchies[a].max_level) for v, a in zip(seq, self.attributes)],
                        dtype=np.int64)

    def sublattice(self, levels: Mapping[str, int] | Sequence[int]) -> np.ndarray:
        """Ids of the nodes componentwise at or below ``levels`` (a mapping may leave attributes
        out: they may go to their top), in id order."""
        vector = self.level_vector(levels, default="top") if isinstance(levels, Mapping) else self.level_vector(levels)
        return np.flatnonzero(np.all(self.levels <= vector, axis=1))

    def level_dict(self, node: int) -> dict[str, int]:
        vector = self.levels[node]
        return {a: int(v) for a, v in zip(self.attributes, vector)}

    @property
    def missing_code(self) -> int:
        """The sensitive code of a missing value, never a distinct value for l (-1: none)."""
        return int(self.sensitive_values) if self.sensitive is not None and self.sensitive_missing else -1

    def node_histograms(self, node: int):
        """Compute one node's histograms from the stored bottom classes (no raw data needed)."""
        maps, offsets = code_map_table(self.hierarchies, self.attributes)
        codes, counts = generalize_table(self.bottom_codes, self.bottom_counts, maps, offsets,
                                         self.levels[node], len(self.attributes))
        return _histogram_parts(codes, counts, len(self.attributes), self.sensitive is not None, self.missing_code)


# after @dataclass has made __init__ (which assigns it): a lattice opened from a file keeps its
# level scores as columns until someone reads them
LatticeTable.level_scores = _FrameAttribute()
LatticeTable.level_scores.__set_name__(LatticeTable, "level_scores")  # type: ignore[misc]  # the descriptor just set


def _as_level(value, attribute: str, max_level: int) -> int:
    """A level from an int or from CLI text ("2"), checked against the hierarchy's depth."""
    message = (f"level of {attribute!r} must be an integer in [0, {max_level}]; got "
               f"{value if isinstance(value, str) else repr(value)}")
    if isinstance(value, bool):
        raise ParameterError(message)
    try:
        level = int(value.strip()) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        raise ParameterError(message) from None
    if level != value and not isinstance(value, str) or not 0 <= level <= max_level:
        raise ParameterError(message)
    return level


def node_levels(depths: np.ndarray) -> np.ndarray:
    grids = np.meshgrid(*[np.arange(d) for d in depths], indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1).astype(np.int64)


def code_map_table(hierarchies: Mapping[str, Hierarchy], attributes: Sequence[str]):
    """All level-0 -> level maps in one padded 2-D array; row ``offsets[j] + level`` is column
    j's map (numba wants one array, not a list of them)."""
    width = max(hierarchies[a].labels[0].size for a in attributes)
    rows: list[np.ndarray] = []
    offsets: list[int] = []
    for a in attributes:
        h = hierarchies[a]
        offsets.append(len(rows))
        for level in range(h.depth):
            row = np.zeros(width, dtype=np.int32)
            row[: h.labels[0].size] = h.code_map(level)
            rows.append(row)
    return np.vstack(rows), np.array(offsets, dtype=np.int64)


def _histogram_parts(codes, counts, m, with_sensitive, missing: int = -1):
    n_classes, k_size, k_classes, l_distinct, l_classes, l_rows = node_histograms(codes, counts, m, with_sensitive,
                                                                                  missing)
    k_part = (k_size, k_classes, k_size * k_classes)
    l_part = (l_distinct, l_classes, l_rows) if with_sensitive else None
    return int(n_classes), k_part, l_part
