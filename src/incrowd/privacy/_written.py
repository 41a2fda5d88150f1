"""The privacy check of a release as read back from its file: what ``incrowd.io`` runs on the
table its reader gives, without knowing the models.

The verdict is :func:`check_table`'s, over the models the release promises; the records (the
``k_anonymity``, ``l_diversity`` and ``t_closeness`` entries of a verification, and one entry per
other model under its spec key) and the one-line refusals name what failed, where, as the
written file holds it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np
import pandas as pd

from ..exceptions import IncrowdError, VerificationError
from ..values import class_ids, match_counts, sensitive_keys
from ._model import PrivacyModel
from ._registry import MODELS
from ._stats import Failure, _columns_of, check_table
from ._verify import verify_k_anonymity, verify_l_diversity, verify_t_closeness
from .k_anonymity import KAnonymity

if TYPE_CHECKING:
    from .distinct_l import DistinctL
    from .t_closeness import TCloseness


# l's and t's classes are looked up only for a model of their key: a release that promises
# neither loads neither module
def _is_l(model: PrivacyModel) -> TypeGuard[DistinctL]:
    return model.key == "l" and isinstance(model, MODELS["l"])


def _is_t(model: PrivacyModel) -> TypeGuard[TCloseness]:
    return model.key == "t" and isinstance(model, MODELS["t"])


@dataclass(frozen=True)
class ReleaseCheck:
    """The models a release promises and what checking them on its file needs.

    Called by :func:`incrowd.io.verify_frame` (and so by every written release) with the table
    as read back; raises :class:`~incrowd.exceptions.VerificationError` in one line naming the
    model and the class that fails, and returns the records of what held.

    Attributes
    ----------
    models : tuple of PrivacyModel
        The models to meet (a model without a column of its own protects each ``sensitive`` column).
    sensitive : tuple of str
        The columns with the ``sensitive`` role.
    ordered : mapping
        Per sensitive column, the order t used in memory: a list of in-memory values, True for
        their sorted order, False for the equal distance.
    reference : pandas.DataFrame or None
        The input's sensitive columns as read (t's reference distribution); the file's check
        compares the classes with them written and read back in the release's format.
    missing_matches : {"itself", "any"}
        How a missing quasi-identifier value matches when k is counted: a value of its own, or
        any value (sdcMicro's wildcard).
    weight : str or None
        The sampling-weight column k-map's estimators and population uniqueness read.
    population : pandas.DataFrame or None
        k-map's and delta-presence's population table spelled as the release is (one row per
        person); the written file's check compares it written and read back the same way.
    """

    models: tuple[PrivacyModel, ...]
    sensitive: tuple[str, ...] = ()
    ordered: Mapping[str, Any] = field(default_factory=dict)
    reference: pd.DataFrame | None = None
    missing_matches: str = "itself"
    #: the sampling-weight column (k-map's estimators, population uniqueness), or None
    weight: str | None = None
    #: k-map's and delta-presence's population table, spelled as the release is (one row per
    #: person), or None; the file's check compares it written and read back in the release's format
    population: pd.DataFrame | None = None

    def resolved(self) -> list[PrivacyModel]:
        """Each model on each column it protects (a model with no column of its own, once per
        sensitive column)."""
        out = []
        for model in self.models:
            for column in _columns_of(model, self.sensitive):
                out.append(model if column is None or model.column == column else model.on(column))
        return out

    @property
    def columns(self) -> tuple[str, ...]:
        """The sensitive columns the file must hold."""
        return tuple(dict.fromkeys(m.column for m in self.resolved() if m.column is not None))

    @property
    def reference_columns(self) -> pd.DataFrame | None:
        """The input's columns to write as the release is and read back (None: t not promised)."""
        if self.reference is None or not any(m.reads_distribution for m in self.models):
            return None
        return self.reference[[c for c in self.columns if c in self.reference.columns]]

    def to_dict(self) -> dict[str, Any]:
        """What was promised, as a verification record states it: ``k``, ``l``, ``t`` (None where
        not asked), ``sensitive`` and every model in one line (``models``)."""
        k = next((m for m in self.models if isinstance(m, KAnonymity)), None)
        l = next((m for m in self.models if _is_l(m)), None)
        t = next((m for m in self.models if _is_t(m)), None)
        out: dict[str, Any] = {"k": k.k if k is not None else None, "l": l.l if l is not None else None,
                               "t": t.t if t is not None else None,
                               "sensitive": list(self.sensitive), "models": [m.describe() for m in self.resolved()]}
        if self.missing_matches != "itself":
            out["missing_matches"] = self.missing_matches  # a blank matched any value when k was counted
        return out

    def __call__(self, table: pd.DataFrame, quasi_identifiers: Sequence[str], *, what: str,
                 reference: pd.DataFrame | None = None, population: pd.DataFrame | None = None) -> dict[str, Any]:
        """Check ``table`` (a release as read back; ``what`` names it in messages).

        Parameters
        ----------
        table : pandas.DataFrame
            The release.
        quasi_identifiers : sequence of str
            Its quasi-identifier columns.
        what : str
            The release in a message ("the written file" and its name).
        reference : pandas.DataFrame, optional
            The input's sensitive columns as the file writes them (default: :attr:`reference`,
            else the table's own columns).
        population : pandas.DataFrame, optional
            The population table as the file writes it (default: :attr:`population`).

        Returns
        -------
        dict
            The records: ``k_anonymity``; ``l_diversity`` and ``t_closeness`` per column; per
            other model its spec key, then per column where it reads one.
        """
        qis = list(quasi_identifiers)
        models = self.resolved()
        base = reference if reference is not None else self.reference
        refs = {c: (base if base is not None and c in base.columns else table)[c] for c in self.columns}
        orders = {c: _file_order(self.reference[c] if self.reference is not None and c in self.reference.columns
                                 else table[c], refs[c], self.ordered.get(c, False)) for c in self.columns}
        # t, beta and delta compare a class with the input's distribution, as publish's search did
        t_columns = {m.column for m in models if m.reads_distribution and m.column is not None}
        try:
            failures = check_table(table, qis, models, sensitive=self.sensitive, ordered=orders,
                                   reference={c: refs[c] for c in t_columns},
                                   missing_matches=self.missing_matches,
                                   weight=self.weight if self.weight is not None and self.weight in table.columns
                                   else None,
                                   population=population if population is not None else self.population)
        except IncrowdError as exc:
            if not t_columns:
                raise VerificationError(f"{what} cannot be checked ({exc}); nothing was written") from None
            raise VerificationError(f"{what}: column {sorted(t_columns)[0]!r} cannot be compared with the input's "
                                    f"distribution ({exc}); nothing was written") from None
        records = self._records(table, qis, models, failures, refs, orders)
        # fail closed: a verifier's record that says a model fails refuses the file too
        failed = {(f.model.key, f.model.column) for f in failures}
        failures += [Failure(model=m, n_classes=0, n_rows=0, row=0, values={}) for m in models
                     if (m.key, m.column) not in failed and not _record_ok(records, m)]
        if failures:
            raise VerificationError(self._refusal(table, qis, failures[0], records, refs, orders, what))
        return records

    def _records(self, table, qis, models, failures: list[Failure], refs, orders) -> dict[str, Any]:
        failed = {(f.model.key, f.model.column): f for f in failures}
        out: dict[str, Any] = {}
        for model in models:
            got = failed.get((model.key, model.column))
            if isinstance(model, KAnonymity):
                out["k_anonymity"] = verify_k_anonymity(table, qis, model.k,
                                                        missing_matches=self.missing_matches).to_dict()
            elif _is_l(model) and model.column is not None:
                out.setdefault("l_diversity", {})[model.column] = verify_l_diversity(
                    table, qis, model.column, model.l).to_dict()
            elif _is_t(model) and model.hierarchy is None and model.column is not None:
                out.setdefault("t_closeness", {})[model.column] = verify_t_closeness(
                    table, qis, model.column, model.t, ordered=orders[model.column],
                    reference=refs[model.column]).to_dict()
            else:
                record: dict[str, Any] = {"model": model.describe(), "ok": got is None}
                if got is not None:
                    record.update(n_classes=got.n_classes, n_rows=got.n_rows, row=got.row)
                    if got.figure is not None:
                        record["figure"] = got.figure
                if model.column is None:
                    out[model.key] = record
                else:
                    out.setdefault(model.key, {})[model.column] = record
        return out

    def _refusal(self, table, qis, failure: Failure, records, refs, orders, what: str) -> str:
        model = failure.model
        if isinstance(model, KAnonymity):
            got = records["k_anonymity"]
            if self.missing_matches != "itself":
                counts = match_counts(table, qis, missing_matches=self.missing_matches)
                row = int(np.argmin(counts))
                return (f"{what} is not {model.k}-anonymous over {qis} with a missing value matching any value: "
                        f"data row {row + 1} {_describe(tuple(table[qis].iloc[row]))} matches {int(counts[row])} "
                        f"row(s) ({got['n_rows_in_small_classes']} rows match fewer than k); nothing was written")
            sizes = _classes(table, qis).size()
            return (f"{what} is not {model.k}-anonymous over {qis}: the class {_describe(_key(sizes.idxmin()))} "
                    f"holds {int(sizes.min())} row(s) ({got['n_rows_in_small_classes']} rows in classes below k); "
                    "nothing was written")
        name = model.column
        if _is_l(model) and name is not None:
            # the poorest class as the models count values (a missing one never counts)
            classes = class_ids(table[qis]) if qis else np.zeros(table.shape[0], dtype=np.int64)
            keys, _ = sensitive_keys(table[name])
            distinct = pd.Series(keys, dtype=object).groupby(classes).nunique(dropna=True)
            rows = classes == distinct.idxmin()
            values = tuple(table.loc[rows, qis].iloc[0]) if qis else ()
            shown = _describe(pd.unique(table.loc[rows, name])[:5])
            return (f"{what} is not {model.l}-diverse in {name!r}: the class {_describe(values)} holds "
                    f"{int(distinct.min())} distinct value(s) {shown}; nothing was written")
        if _is_t(model) and model.hierarchy is None and name is not None:
            far = _farthest(table, qis, name, model.t, orders[name], refs[name])
            distance = records["t_closeness"][name]["max_distance"]
            return (f"{what} is not {model.t}-close in {name!r}: the class {_describe(far)} lies at distance "
                    f"{distance:.6g} from the input's distribution; nothing was written")
        return f"{what} is {failure}; nothing was written"


def _record_ok(records: Mapping[str, Any], model: PrivacyModel) -> bool:
    """Whether the verifier's record of ``model`` says it held (True where it has none)."""
    if isinstance(model, KAnonymity):
        got = records.get("k_anonymity") or {}
    elif _is_l(model):
        got = (records.get("l_diversity") or {}).get(model.column) or {}
    elif _is_t(model) and model.hierarchy is None:
        got = (records.get("t_closeness") or {}).get(model.column) or {}
    else:
        return True
    return bool(got.get("ok", True))


def verified_lines(verification: Mapping[str, Any], *, with_k: bool = True) -> list[str]:
    """What a verification record says was verified, one line per model (and sensitive column):
    the report's HTML page and the web's Publish page show these.

    Parameters
    ----------
    verification : mapping
        A release's ``verification`` (:class:`incrowd.Verification` or its JSON).
    with_k : bool, default True
        Whether to give k's line (False where the caller says k in its own words).

    Returns
    -------
    list of str
        ``"k-anonymous over all quasi-identifiers (k=5): smallest class 7 rows"``, then per
        sensitive column its l and t lines, then every other model's.
    """
    lines = []
    ka = verification.get("k_anonymity") or {}
    if ka and with_k:
        lines.append(f"k-anonymous over all quasi-identifiers (k={ka.get('k')}): smallest class "
                     f"{ka.get('min_class_size')} rows")
    for name, got in _per_column(verification.get("l_diversity")):
        lines.append(f"{name}: l-diverse (l={got.get('l')}), fewest distinct values per class {got.get('min_distinct')}")
    for name, got in _per_column(verification.get("t_closeness")):
        lines.append(f"{name}: t-close (t={got.get('t')}), largest distance {float(got.get('max_distance', 0.0)):.4f}")
    for key, records in verification.items():
        # every other model's record names its model (ReleaseCheck writes it so)
        for _column, got in _per_column(records if key not in ("promise", "risk_targets") else None):
            if "model" in got:
                held = "held" if got.get("ok") else f"failed: {got.get('n_rows', 0)} row(s) in failing classes"
                lines.append(f"{got['model']} ({held})")  # the model's line names its column
    return lines


def _per_column(records: Any) -> list[tuple[str, dict]]:
    """(column, record) pairs of a model's records: one record (no column) or one per column."""
    if not isinstance(records, Mapping):
        return []
    if "ok" in records:
        return [("", dict(records))]
    return [(str(name), dict(got)) for name, got in records.items() if isinstance(got, Mapping)]


def _describe(values: Sequence[Any]) -> str:
    return "(" + ", ".join("missing" if _is_missing(v) else repr(_plain(v)) for v in values) + ")"


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _is_missing(value) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _key(values) -> tuple:
    return values if isinstance(values, tuple) else (values,)


def _classes(frame: pd.DataFrame, qis: list[str]):
    return frame.groupby(qis, dropna=False, sort=False)


def _farthest(table: pd.DataFrame, qis: list[str], name: str, t: float, order, ref) -> tuple:
    """The quasi-identifier values of the class farthest from the reference (only on failure)."""
    best, where = -1.0, ()
    for values, rows in _classes(table, qis):
        got = verify_t_closeness(rows, [], name, t, ordered=order, reference=ref)
        if got.max_distance > best:
            best, where = got.max_distance, _key(values)
    return where


def _file_order(mem: pd.Series, file: pd.Series, ordered) -> list | bool:
    """The in-memory order of a sensitive column, carried to the values the file holds.

    A value the file writes differently (a number as text) takes its in-memory place; values
    the file holds where memory had a missing one (user-missing codes) come last, in order."""
    if ordered is False or ordered is None:
        return False
    if not isinstance(ordered, (bool, np.bool_)):
        # a list is already in the values as sensitive_keys counts them (numbers as numbers, no
        # trailing blanks, user-missing codes as the file holds them), which is how the models
        # read the file's cells too: mapping text back would sort "10" < "2"
        return list(ordered)
    present = ~mem.isna().to_numpy()
    try:
        order = sorted(pd.unique(mem[present]))
    except TypeError:
        return True  # the in-memory check refused these already
    pairs = pd.DataFrame({"m": mem.astype(object).to_numpy(), "f": file.astype(object).to_numpy()}).drop_duplicates()
    file_present = pairs[~pairs["f"].isna()]
    out: list = []
    seen: set = set()

    def add(values) -> None:
        try:
            values = sorted(values)
        except TypeError:
            values = list(values)
        for v in values:
            if v not in seen:
                seen.add(v)
                out.append(v)

    for value in order:
        add(file_present.loc[file_present["m"].map(lambda m, value=value: not _is_missing(m) and m == value), "f"])
    add(file_present["f"])
    return out
