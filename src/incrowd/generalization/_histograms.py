"""The pieces of a lattice that answering a request and reading or writing a lattice file share:
histograms in CSR form, a table read from a file, and the check of a k or l request.

They sit below :mod:`._lattice` (which builds lattices), :mod:`._negotiate` and :mod:`._store`,
so that those two need not import the module that calls them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from ..exceptions import ParameterError

if TYPE_CHECKING:
    from ..privacy import PrivacyModel
    from ._table import LatticeTable


@dataclass
class Histograms:
    """Histograms of many nodes in CSR form: entries ``offsets[v]:offsets[v+1]`` are node v's,
    keyed ascending (class size, or distinct sensitive values), with classes and rows per key."""

    offsets: np.ndarray
    keys: np.ndarray
    classes: np.ndarray
    rows: np.ndarray
    cum_rows: np.ndarray = field(init=False, repr=False)
    cum_classes: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # writable C arrays: numba compiles a separate kernel for read-only ones (as DuckDB's
        # results are), which would land inside the first answer's time
        for name in ("offsets", "keys", "classes", "rows"):
            setattr(self, name, np.require(getattr(self, name), np.int64, ["C", "W"]))
        # running sums restart at each node, so a look-up is one binary search in the segment
        starts = np.repeat(self.offsets[:-1], np.diff(self.offsets))
        for name, values in (("cum_rows", self.rows), ("cum_classes", self.classes)):
            total = np.cumsum(values)
            base = np.concatenate([[0], total])[starts] if values.size else total
            setattr(self, name, total - base)

    @classmethod
    def from_parts(cls, parts: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray] | None]) -> Histograms:
        lengths = [0 if p is None else p[0].size for p in parts]
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        present = [p for p in parts if p is not None]
        if present:
            keys, classes, rows = (np.concatenate([p[i] for p in present]) for i in range(3))
        else:
            keys = classes = rows = np.zeros(0, np.int64)
        return cls(offsets, keys, classes, rows)

    def segment(self, node: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        a, b = self.offsets[node], self.offsets[node + 1]
        return self.keys[a:b], self.classes[a:b], self.rows[a:b]

    def rows_below_all(self, threshold: int) -> np.ndarray:
        """Rows with a key below ``threshold``, for every node at once."""
        cum = np.concatenate([[0], np.cumsum(np.where(self.keys < threshold, self.rows, 0))])
        return cum[self.offsets[1:]] - cum[self.offsets[:-1]]

    def below(self, node: int, threshold: int) -> tuple[int, int]:
        """(rows, classes) of node ``node`` with a key below ``threshold``."""
        a, b = int(self.offsets[node]), int(self.offsets[node + 1])
        pos = a + int(np.searchsorted(self.keys[a:b], threshold, side="left"))
        if pos == a:
            return 0, 0
        return int(self.cum_rows[pos - 1]), int(self.cum_classes[pos - 1])


class ColumnsFrame:
    """A table read from a file as column name -> array, made a DataFrame where first used."""

    def __init__(self, columns: Mapping[str, np.ndarray]):
        self.columns = dict(columns)



def check_criterion(lattice: LatticeTable, k: int | None,
                    models: Sequence[PrivacyModel] = ()) -> tuple[str, int]:
    """The one threshold the lattice's histograms answer, checked against the lattice: ``('k', k)``,
    or a lone model they count (``histogram``: distinct l) as ``(its key, its number)``."""
    models = list(models)
    if (k is None) == (not models) or len(models) > 1 or not all(m.histogram for m in models):
        raise ParameterError("give exactly one of k (k-anonymity) and l (naive l-diversity)")
    if k is not None:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 2 <= k <= lattice.n_rows:
            raise ParameterError(f"k must be an integer in [2, n_rows={lattice.n_rows}]; got {k!r}")
        return "k", int(k)
    model = models[0].checked()
    if lattice.sensitive is None:
        raise ParameterError(f"{model.key} needs a lattice built with a sensitive attribute (--sensitive)")
    model.check_column(lattice.sensitive, lattice.sensitive_values)
    return model.key, int(model.number())


def criterion_histograms(lattice: LatticeTable, criterion: str) -> Histograms:
    """The histograms a checked criterion reads: class sizes for "k", distinct sensitive values
    for "l" (:func:`check_criterion` has refused "l" on a lattice without them)."""
    hist = lattice.k_histograms if criterion == "k" else lattice.l_histograms
    if hist is None:
        raise ParameterError("l-diversity needs a lattice built with a sensitive attribute (--sensitive)")
    return hist
