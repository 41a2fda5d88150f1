"""What every privacy model is: its spec key, its monotonicity, the per-class statistics it reads
(:class:`ClassStats`) and its check of every equivalence class at once.

Monotonicity, as ARX declares it (``PrivacyCriterion.isMonotonicWithGeneralization`` and
``isMonotonicWithSuppression``), is what a search may prune with:

- ``monotone_generalization``: two classes that pass, merged into one (what a coarser
  generalization does), pass;
- ``monotone_suppression``: a class that passes, merged with *any* class (one the search would
  suppress at the finer node included), passes.

Counting rules of the sensitive column are those of ``publish`` (:func:`incrowd.values.sensitive_codes`):
a missing value (the NA vocabulary, system missing) is one code of its own, after every present
value; the models of the l family, alpha, beta and delta never count it as a value (it discloses
nothing), t-closeness compares it as one category, as the written-file check always has.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Self

import numpy as np

from ..exceptions import DataError, ParameterError

#: a float comparison of a class with its bound absorbs this much rounding (as t's distance does)
TOLERANCE = 1e-12


@dataclass(frozen=True)
class ClassStats:
    """The equivalence classes of one table, as the models read them.

    Attributes
    ----------
    sizes : numpy.ndarray
        Rows of each class (int64, one per class).
    counts : numpy.ndarray or None
        Rows of each sensitive code per class, shape (classes, codes); None without a sensitive
        column. With ``missing`` the last code is the missing value.
    table_counts : numpy.ndarray or None
        Rows of each code in the whole table (the reference distribution of t, beta and delta).
    missing : bool
        Whether the last code is the missing value.
    ordered : bool
        Whether the codes are in the order of an ordinal or numeric column (t's ordered distance).
    values : tuple
        The present sensitive values, in code order.
    first_rows : numpy.ndarray
        The first data row (0-based) of each class, to name a failing class.
    column : str or None
        The sensitive column the counts are of.
    population : numpy.ndarray or None
        Records of the population table in each class (int64, one per class; the population
        grouped on the same quasi-identifier values); None without a population table.
    population_only : numpy.ndarray or None
        The sizes of the population's classes that hold no row of the table (delta-presence
        bounds their share, 0, from below).
    weights : numpy.ndarray or None
        The sum of the sampling weights of each class (float64); None without a weight column.
        Their total is the estimated population size.
    matches : numpy.ndarray or None
        Where a missing quasi-identifier value matches any value (sdcMicro's wildcard), the rows
        each class's rows match (int64, one per class; equal rows match alike); None where a
        missing value is a value of its own (then a class's rows match its size).

    Memory: ``counts`` holds classes x codes integers (8 bytes each); a numeric sensitive column
    with thousands of distinct values in a table of thousands of classes takes hundreds of MB.
    """

    sizes: np.ndarray
    counts: np.ndarray | None = None
    table_counts: np.ndarray | None = None
    missing: bool = False
    ordered: bool = False
    values: tuple = ()
    first_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    column: str | None = None
    population: np.ndarray | None = None
    population_only: np.ndarray | None = None
    weights: np.ndarray | None = None
    matches: np.ndarray | None = None

    @property
    def n_classes(self) -> int:
        return int(self.sizes.size)

    def known(self) -> np.ndarray:
        """The counts of the present values only (the missing code left out)."""
        counts = self._need(self.counts)
        return counts[:, :-1] if self.missing else counts

    def table_known(self) -> np.ndarray:
        """The whole table's counts of the present values only."""
        counts = self._need(self.table_counts)
        return counts[:-1] if self.missing else counts

    def population_counts(self, key: str) -> np.ndarray:
        """The population records of each class, for the model with spec key ``key``."""
        if self.population is None:
            raise ParameterError(f"{key} needs a population table: a file with the quasi-identifier columns, one "
                                 "row per person of the population")
        return self.population

    def population_size(self, key: str) -> float:
        """The population size the weights estimate (their sum), for the model with spec key ``key``."""
        if self.weights is None:
            raise ParameterError(f"{key} needs the sampling weights: give a column the role \"weight\"")
        total, rows = float(self.weights.sum()), int(self.sizes.sum())
        if total < rows:
            raise DataError(f"{key}: the sampling weights sum to {total:g}, fewer than the table's {rows} rows; a "
                            "population holds at least its sample")
        return total

    def _need(self, array: np.ndarray | None) -> np.ndarray:
        if array is None:
            raise ParameterError("this privacy model needs a sensitive column; the class statistics have none")
        return array


@dataclass(frozen=True)
class SpecNumber:
    """The one number a model takes from its ``[privacy]`` value (``k = 5``, ``t = { value = 0.2,
    column = "income" }``): the model's field it fills, what the error says it must be, and its range.

    Attributes
    ----------
    field : str
        The model's field the number fills.
    what : str
        What the number must be, in a ParameterError ("an integer >= 2 (rows per class)").
    low, high : float
        The range; ``low_open`` and ``high_open`` say whether the ends are excluded.
    integer : bool
        Whether it must be an integer (the field gets an int).
    """

    field: str
    what: str
    low: float
    low_open: bool = True
    high: float = math.inf
    high_open: bool = True
    integer: bool = False


@dataclass(frozen=True)
class PrivacyModel(ABC):
    """One privacy model: a frozen value with its parameters and the sensitive column it protects.

    A subclass sets the class attribute ``key`` (its ``[privacy]`` spec key), declares
    ``monotone_generalization`` and ``monotone_suppression`` where they hold and
    ``needs_sensitive`` where it does not, and defines
    :meth:`classes_ok` and :meth:`describe`; a model of one number sets ``spec_number``, any
    other defines :meth:`from_spec`.

    Attributes
    ----------
    column : str or None
        The sensitive column it protects (None: every column with the ``sensitive`` role).
    """

    #: the model's key in the spec's ``[privacy]`` table
    key: ClassVar[str]
    #: whether a class that meets the model still meets it once generalized further (merged with
    #: others) or once rows are suppressed: a search prunes on a property only where a model
    #: declares it, so a model that says nothing is judged at every node
    monotone_generalization: ClassVar[bool] = False
    monotone_suppression: ClassVar[bool] = False
    #: whether the model reads the counts of a sensitive column
    needs_sensitive: ClassVar[bool] = True
    #: whether it compares a class with the whole table's distribution (t, beta, delta): a
    #: release is compared with its input's, not with its own
    reads_distribution: ClassVar[bool] = False
    #: whether its check of a class reads the whole release (k-map's estimate of the population
    #: from the rows and weights published): then a search judges the classes it keeps again
    reads_release: ClassVar[bool] = False
    #: the model's line in an example spec: its ``[privacy]`` setting and what it promises
    #: (``("l = 2", "distinct sensitive values per class")``); None: its key and class's summary
    example: ClassVar[tuple[str, str] | None] = None
    #: the model's one number, read by the default :meth:`from_spec`
    spec_number: ClassVar[SpecNumber | None] = None
    #: whether a generalization lattice's histograms count the model (class sizes, distinct
    #: sensitive values per class), so that its compiled search answers the model alone
    histogram: ClassVar[bool] = False
    #: how a refusal asks for the model to be loosened ("relax alpha"; "lower l", "raise t")
    lever: ClassVar[str] = "relax"
    #: whether publish meets the model by merging each failing group with its nearest group
    #: after microaggregation (:meth:`merge_gap`; Soria-Comas et al.'s merging)
    merges: ClassVar[bool] = False

    column: str | None = field(default=None, kw_only=True)

    @abstractmethod
    def classes_ok(self, stats: ClassStats) -> np.ndarray:
        """Whether each class of ``stats`` meets the model, all classes at once.

        Parameters
        ----------
        stats : ClassStats
            The classes of one table (and the counts of the model's sensitive column).

        Returns
        -------
        numpy.ndarray
            One bool per class.
        """

    def release_ok(self, stats: ClassStats) -> bool:
        """Whether the whole release meets the model; a global model (average risk, population
        uniqueness) judges a figure of the release here, the others every class.

        Parameters
        ----------
        stats : ClassStats
            The classes of the release.

        Returns
        -------
        bool
        """
        return bool(np.all(self.classes_ok(stats)))

    def merge_gap(self, distinct: np.ndarray, distances: np.ndarray) -> np.ndarray:
        """How far each group is from meeting the model, for a model that ``merges``: above
        :data:`TOLERANCE` where the group fails, and the larger the farther (publish merges the
        farthest group first). A merged group holds every value of its parts and a mixture of
        their distributions, so merging never moves a group away.

        Parameters
        ----------
        distinct : numpy.ndarray
            The distinct present sensitive values of each group (a missing value is none).
        distances : numpy.ndarray
            Each group's earth mover's distance to the reference distribution.

        Returns
        -------
        numpy.ndarray
            One figure per group.
        """
        raise NotImplementedError(f"{type(self).__name__} is not met by merging groups")

    def merge_share(self, distinct: np.ndarray, distances: np.ndarray, reach: float) -> np.ndarray | None:
        """For a model that ``merges`` but is not monotone under suppression: the least share of
        each class's rows that fail the model in any split of the class into smaller classes,
        from the class's figures (as :meth:`merge_gap` reads them) and ``reach``, the largest
        distance any class of the column can have; None for a model whose failing classes fail
        in every split (a search counts all their rows).

        Parameters
        ----------
        distinct, distances : numpy.ndarray
            Per class, as for :meth:`merge_gap`.
        reach : float
            The largest distance a class can have.

        Returns
        -------
        numpy.ndarray or None
            A share in [0, 1] per class.
        """
        return None

    def check_column(self, column: str, n_values: int) -> None:
        """Refuse, in one line, a sensitive column no class can meet the model on, before any
        search: ``n_values`` is its count of distinct present values (a missing value is none).

        Parameters
        ----------
        column : str
            The sensitive column's name.
        n_values : int
            Its distinct present values.

        Returns
        -------
        None
        """
        return None  # most models: any column may meet them in classes of its values

    def number(self) -> float:
        """The model's one number (the field its :attr:`spec_number` fills: k's k, l's l, t's t).

        Returns
        -------
        float or int
        """
        spec = self.spec_number
        if spec is None:
            raise ParameterError(f"{self.key} takes more than one number")
        return getattr(self, spec.field)

    def checked(self) -> Self:
        """The model, its number checked against its range (as :meth:`from_spec` checks it); a
        ParameterError names the key and what is allowed.

        Returns
        -------
        PrivacyModel
        """
        spec = self.spec_number
        if spec is not None:
            number(self.key, getattr(self, spec.field), spec.what, low=spec.low, low_open=spec.low_open,
                   high=spec.high, high_open=spec.high_open, integer=spec.integer)
        return self

    def split_floor(self, stats: ClassStats) -> np.ndarray | None:
        """The fewest rows of each class that fail the model however the class is split into
        smaller classes (what a finer generalization makes of it), or None where the model
        gives no such bound. A search that meets the model suppresses at least these rows at
        every node below, so a node whose floor passes the limit rules out its down-set.

        Parameters
        ----------
        stats : ClassStats

        Returns
        -------
        numpy.ndarray or None
            Rows per class (int64), 0 for a class that passes.
        """
        return None

    def release_figure(self, stats: ClassStats) -> str:
        """The release's figure and the model's bound, for a release :meth:`release_ok` refuses
        ("average risk 0.25 > 0.05"); a model whose classes pass but whose release can fail
        says which figure failed.

        Parameters
        ----------
        stats : ClassStats

        Returns
        -------
        str
        """
        return "the release fails"

    @abstractmethod
    def describe(self) -> str:
        """The model in one line of the report's verdict ("entropy 2-diverse in 'income'").

        Returns
        -------
        str
        """

    @classmethod
    def from_spec(cls, value: Any, column: str | None = None, *,
                  privacy: Mapping[str, Any] | None = None) -> Self:
        """The model from its ``[privacy]`` value; a ParameterError names the key and what is allowed.

        Parameters
        ----------
        value : object
            The key's value: the parameter (``2``) or a table with it and ``column``.
        column : str, optional
            The sensitive column (wins over the value's ``column``).
        privacy : mapping, optional
            The whole ``[privacy]`` table, for a model that reads a sibling key (alpha reads k).

        Returns
        -------
        PrivacyModel
        """
        spec = cls.spec_number
        if spec is None:
            raise NotImplementedError(f"{cls.__name__} reads more than one number: it defines from_spec")
        entries, named = spec_table(cls.key, value, ("value",), column)
        column = named if cls.needs_sensitive else None  # a model without a sensitive column ignores one
        x = number(cls.key, entries.get("value"), spec.what, low=spec.low, low_open=spec.low_open, high=spec.high,
                   high_open=spec.high_open, integer=spec.integer)
        return cls(**{spec.field: int(x) if spec.integer else x}, column=column)

    def on(self, column: str) -> PrivacyModel:
        """The same model protecting ``column``.

        Parameters
        ----------
        column : str
            The sensitive column.

        Returns
        -------
        PrivacyModel
        """
        return replace(self, column=column)

    def _where(self) -> str:
        return f"in {self.column!r}" if self.column is not None else "in every sensitive column"


def share_floor(known: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """Rows per class that fail "a value's share of the class's present values is at most its
    bound" in any split of the class: a class's share is its parts' shares weighted by their
    present values, a passing part's is at most the bound and a failing part's at most 1, so
    the failing parts hold at least ``present * (share - bound) / (1 - bound)`` present values,
    rounded down, with a margin for the float division. ``known``: counts per class and value;
    ``bound``: per value (a bound of 1 or more gives nothing)."""
    present = known.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = known / np.maximum(present, 1)[:, None]
        room = 1.0 - bound
        need = np.where((room > 0) & (share > bound), (share - bound) / np.where(room > 0, room, 1.0), 0.0)
    worst = need.max(axis=1, initial=0.0) if need.size else np.zeros(known.shape[0])
    return np.floor(present * worst * (1.0 - 1e-9)).astype(np.int64)


def spec_table(key: str, value: Any, allowed: tuple[str, ...], column: str | None,
               table_only: str | None = None) -> tuple[dict, str | None]:
    """A spec value given as a table: its entries (unknown ones refused) and the column it names
    (``column`` given by the caller wins). A bare value is ``{"value": value}``, or, for a model
    with ``table_only`` (what the table must be, "a table such as { c = 3, l = 2 }"), refused."""
    if not isinstance(value, Mapping):
        if table_only is not None:
            raise ParameterError(f"{key} must be {table_only}; got {value!r}")
        return {"value": value}, column
    unknown = [name for name in value if name not in (*allowed, "column")]
    if unknown:
        raise ParameterError(f"{key}: unknown entry {unknown[0]!r}; allowed: {', '.join((*allowed, 'column'))}")
    named = value.get("column")
    if named is not None and (not isinstance(named, str) or not named):
        raise ParameterError(f"{key}: column must be a column name; got {named!r}")
    return dict(value), column if column is not None else named


def file_name(key: str, value: Any) -> str:
    """``value`` checked as a file name; the ParameterError names ``key``."""
    if not isinstance(value, str) or not value:
        raise ParameterError(f"{key} must be a file name; got {value!r}")
    return value


def number(key: str, value: Any, what: str, *, low: float, low_open: bool = True,
           high: float = math.inf, high_open: bool = True, integer: bool = False) -> float:
    """``value`` checked as a number in the given range; the ParameterError names ``key`` and says
    ``what`` it is."""
    ok = not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))
    if ok:
        x = float(value)
        ok = (math.isfinite(x) and (x > low if low_open else x >= low) and (x < high if high_open else x <= high)
              and (not integer or isinstance(value, (int, np.integer))))
    if not ok:
        raise ParameterError(f"{key} must be {what}; got {value!r}")
    return float(value)
