"""Apply one node: generalize the quasi-identifiers, suppress the rows of too-small (or too
uniform) classes, and verify the table before anyone writes it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .._runtime._compile import compiled_so_far
from ..exceptions import ParameterError, VerificationError
from ..io._statfiles import mark_changed
from ..io._tables import resolve_roles
from ..metrics import verify_k_anonymity, verify_l_diversity
from ._hierarchy import Hierarchy, factorize_labels
from ._lattice import resolve_hierarchies
from ._table import _as_level


@dataclass
class GeneralizationResult:
    """The anonymized table and what was done to get it."""

    table: pd.DataFrame
    levels: dict[str, int]
    k: int | None
    l: int | None
    sensitive: str | None
    n_rows: int
    suppressed: int
    classes: int
    min_class_size: int
    min_distinct: int | None
    seconds: float
    kept_rows: np.ndarray
    verification: dict = field(default_factory=dict)
    #: numba compiling (or loading cached kernels) during the call, left out of ``seconds``
    compile_seconds: float = 0.0

    @property
    def height(self) -> int:
        return int(sum(self.levels.values()))

    def to_dict(self) -> dict:
        out = {
            "levels": dict(self.levels), "height": self.height, "rows_in": self.n_rows,
            "rows_out": self.n_rows - self.suppressed, "suppressed": self.suppressed,
            "suppressed_fraction": self.suppressed / self.n_rows if self.n_rows else 0.0,
            "classes": self.classes, "min_class_size": self.min_class_size,
            "seconds": self.seconds, "compile_seconds": self.compile_seconds,
            "verification": self.verification,
        }
        if self.k is not None:
            out["k"] = self.k
        if self.l is not None:
            out["l"] = self.l
            out["sensitive"] = self.sensitive
            out["min_distinct"] = self.min_distinct
        return out


def _check_threshold(name: str, value, upper: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 2 <= value <= upper:
        raise ParameterError(f"{name} must be an integer in [2, {what}={upper}]; got {value!r}")
    return int(value)


def generalize(data: pd.DataFrame, levels: Mapping[str, int], *, k: int | None = None,
               l: int | None = None, sensitive: str | None = None,
               hierarchies: Mapping[str, Hierarchy] | str | None = None,
               intervals: Mapping[str, Sequence[float]] | None = None,
               quasi_identifiers: Sequence[str] | str | None = None,
               identifiers: Sequence[str] | str | None = None) -> GeneralizationResult:
    """Generalize ``data`` to ``levels`` and suppress (remove) the rows of classes smaller than
    ``k`` or with fewer than ``l`` distinct ``sensitive`` values.

    Quasi-identifiers are the attributes of ``levels`` (plus any in ``quasi_identifiers``, kept at
    level 0); identifiers are dropped; other columns pass unchanged. The returned table has been
    verified k-anonymous (and l-diverse); rows keep their order.
    """
    t0, c0 = time.perf_counter(), compiled_so_far()
    if k is None and l is None:
        raise ParameterError("give k (k-anonymity), l (naive l-diversity, with sensitive=), or both")
    if l is not None and sensitive is None:
        raise ParameterError("l-diversity needs the sensitive attribute (sensitive=...)")
    levels = dict(levels or {})
    extra = [] if quasi_identifiers is None else (
        [q.strip() for q in quasi_identifiers.split(",") if q.strip()]
        if isinstance(quasi_identifiers, str) else list(quasi_identifiers))
    qis = list(dict.fromkeys([*levels.keys(), *extra]))
    if not qis:
        raise ParameterError("name the quasi-identifiers: give a level for at least one attribute")
    roles = resolve_roles(data, qis, identifiers)
    qis, hier = resolve_hierarchies(data, list(roles.quasi_identifiers), hierarchies, intervals, sensitive)
    chosen = {a: _as_level(levels.get(a, 0), a, hier[a].max_level) for a in qis}
    n = int(data.shape[0])
    if k is not None:
        k = _check_threshold("k", k, n, "n_rows")
    codes0 = {a: hier[a].encode(data[a]) for a in qis}
    codes = np.column_stack([hier[a].code_map(chosen[a])[codes0[a]] for a in qis])
    _, class_of, sizes = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
    class_of = class_of.ravel()
    keep = np.ones(n, dtype=bool)
    if k is not None:
        keep &= sizes[class_of] >= k
    min_distinct = None
    if l is not None:
        s_codes, s_uniques = factorize_labels(data[sensitive])
        l = _check_threshold("l", l, max(len(s_uniques), 2), f"distinct values of {sensitive!r}")
        pairs = np.unique(np.column_stack([class_of, s_codes]), axis=0)
        distinct = np.bincount(pairs[:, 0], minlength=sizes.size)
        keep &= distinct[class_of] >= l
    out = data.drop(columns=list(roles.identifiers)).copy()
    for a in qis:
        out[a] = hier[a].generalize(codes0[a], chosen[a])
    out = out.loc[keep].reset_index(drop=True)
    mark_changed(out, qis)  # a statistical file's labels no longer describe them
    suppressed = int(n - keep.sum())
    verification: dict = {}
    if k is not None:
        report = verify_k_anonymity(out, qis, k)
        verification["k_anonymity"] = report.to_dict()
        if not report:
            raise VerificationError(f"generalized table is not {k}-anonymous ({report.to_dict()}); nothing written")
    if l is not None:
        report_l = verify_l_diversity(out, qis, sensitive, l)
        verification["l_diversity"] = report_l.to_dict()
        if not report_l:
            raise VerificationError(f"generalized table is not {l}-diverse ({report_l.to_dict()}); nothing written")
        min_distinct = report_l.min_distinct
    kept_sizes = out.groupby(qis, sort=False).size().to_numpy() if len(out) else np.zeros(0, int)
    compile_seconds = compiled_so_far() - c0
    seconds = (time.perf_counter() - t0) - compile_seconds
    return GeneralizationResult(
        table=out, levels=chosen, k=k, l=l, sensitive=sensitive, n_rows=n, suppressed=suppressed,
        classes=int(kept_sizes.size), min_class_size=int(kept_sizes.min()) if kept_sizes.size else 0,
        min_distinct=min_distinct, seconds=seconds, compile_seconds=compile_seconds, kept_rows=np.flatnonzero(keep),
        verification=verification,
    )
