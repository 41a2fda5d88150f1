"""A starting release specification from a file's columns, types and metadata, for the curator
to edit.

The guesses are plain and said in comments, first from what the file says about a column, then
from its values:

- a column named like a survey weight (``weight``, ``wgt``, ``fnlwgt``, ``pweight``, ...) or
  labelled as one ("Final sampling weight") is the ``weight``;
- a column whose every value is distinct is an identifier when it is id-like: text, a name that
  says so ("id", "respid", "*_id"), or whole numbers over at least ``_MANY_ROWS`` rows that
  number the rows (increasing, or every number of their range once) and are no measurement (a
  scale measure, a label such as "Household expenditure"): an amount distinct on every row is
  a value to protect, not an identifier;
- a column of whole numbers or text, without value labels or a scale measure, whose every value
  stands on consecutive rows, 1.5 to 20 rows a value, with many values or a name like ``*hid*``
  or ``household*``, and within whose groups some other column varies (persons differ; rows
  that repeat one another are no household), is the household id (role ``household``);
- with a household id, a categorical column that is the same for every member of each
  household (urban or rural, the water source) is proposed with ``household_level = true``:
  blanked for the whole household at once, so no housemate gives a blank away;
- of two weights, the one that varies within households (else the one not named for
  households) is the ``weight``, the other "other";
- a column with value labels (SPSS, Stata) or an SPSS measure of nominal or ordinal is
  categorical; an SPSS measure of scale is numeric;
- else a column of numbers with many distinct values is numeric, anything else categorical;
- a numeric column that is an amount of money (income, expenditure, savings) is ``perturb``, a
  variable changed on its own after the keys are protected (sdcMicro's numVars), with a
  ``[[perturb]]`` step that microaggregates such columns together (k = 3). An amount: numbers
  >= 0 with more than 15 distinct values, that its name or variable label calls an amount
  (income, expend, saving, salary, wage, earning, amount, cost, price, revenue, sales, spending,
  consumption, asset, profit, debt, loan, capital) or that have a heavy right tail (skewness
  >= 1). Not where it would leave the file without a quasi-identifier (a file of amounts only):
  there they stay the numeric keys.

- a column named like what an intruder wants to learn rather than what they know (``income``,
  ``salary``, ``wage``, ``earnings``, ``diagnosis``, ``disease``) and that is no amount of money
  (above) is ``sensitive``; other
  sensitive columns cannot be guessed: the spec says where to mark them.

User-missing codes are listed beside their column. A categorical column with a hierarchy file
among ``hierarchy_files`` whose name is the column's (compared without case, spaces and
punctuation, ARX's ``<data>_hierarchy_<column>.csv`` included) gets that file.

``max_suppression`` is the smallest of 1, 2, 5, 10 and 20 % that the proposed roles and
hierarchies can meet at k = 5 (the most general levels allowed, without a column turned to one
label, suppress the fewest rows), so the starting spec publishes as proposed. When none does while
the columns without a hierarchy keep two values or more, the fewest of them (most values first)
are allowed to end as "*" (``allow_full_suppression``) until one does; when even that fails, it
stays 1 % and a comment says what holds the rows back. A proposal whose lattice is larger than
publish searches is not tried (a file of thousands of labelled columns): a comment says so.
Comments list a few names, then how many more, so no line grows with the file's width.
"""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..exceptions import IncrowdError
from ..generalization import DEFAULT_MAX_NODES, hierarchy_file_name, is_hierarchy_file, max_suppression_count, node_count
from ..io import NA_VALUES, code_indices, coded_reason
from ..privacy import MODELS
from ._gtm import lattice_depths, no_hierarchy, top_suppression
from ._prepare import prepare
from ._spec import load_spec
from ._toml import toml_key, toml_value

#: a column of numbers with at most this many distinct values is proposed as categorical
_FEW_VALUES = 15
#: whole numbers distinct on every row of at least this many rows are an identifier
_MANY_ROWS = 100
_WEIGHT_NAME = re.compile(r"^(?:[a-z]*_)?(?:[pfaisn]?weight|[pfais]?wgt|fnlwgt|wght|[pfa]?wt|finalwt)s?(?:_[a-z0-9]*)?$")
_SENSITIVE_NAME = re.compile(r"^(?:[a-z]*_)?(?:income|salary|salaries|wages?|earnings?|diagnos[ie]s|disease)"
                             r"(?:_[a-z0-9]*)?$")
#: the suppression limits a starting spec proposes, the smallest that publishes first
_LIMITS = (1, 2, 5, 10, 20)
_PROPOSED_K = 5
#: a household id: values on consecutive rows, at most this many rows a value on average
_HOUSEHOLD_SIZE = 20
#: ... and at least this many: amounts with a few equal neighbours are no household id
_SEVERAL = 1.5
_HOUSEHOLD_NAME = re.compile(r"hid|^household|^hh")
#: a variable label that says a column is a measurement, not a numbering
_MEASUREMENT_LABEL = re.compile(r"expend|income|amount|salary|wage|earning|saving|cost|price|value|revenue|"
                                r"sales|spending|consumption|weight|height|size|area|age\b")
#: a name or variable label that says a column is an amount of money
_MONEY = re.compile(r"income|expend|saving|salar|wage|earning|amount|cost|price|revenue|sales|spending|consumption|"
                    r"asset|profit|debt|loan|capital")
#: the skewness from which a non-negative amount has a heavy right tail (incomes, turnovers)
_HEAVY_TAIL = 1.0
#: the group size of the [[perturb]] microaggregation proposed for amounts (sdcMicro's aggr)
_PERTURB_K = 3
#: names and codes listed in one comment, then "and N more"
_LISTED = 5
#: the width a long comment is wrapped to
_WIDTH = 180
_ID_NAMES = ("id", "ident", "identifier", "respondent", "record", "respid", "caseid", "serial", "recid")


def _info(column: pd.Series) -> dict:
    meta = column.attrs.get("statfile")
    return ((meta.get("columns") or {}).get(str(column.name)) or {}) if isinstance(meta, dict) else {}


def _is_weight_name(name: str, label: str | None) -> bool:
    plain = re.sub(r"[^0-9a-z]+", "_", name.casefold()).strip("_")
    return bool(_WEIGHT_NAME.match(plain)) or "weight" in (label or "").casefold()


def _user_missing(info: dict) -> list[str]:
    """The column's user-missing codes with their labels, as a comment shows them."""
    codes = info.get("missing_codes") or []
    labels = {(str(c) if isinstance(c, str) else float(c)): t for c, t in info.get("value_labels") or ()}
    out = []
    for code in codes:
        key = str(code) if isinstance(code, str) else float(code)
        shown = f".{code}" if isinstance(code, str) else (str(int(code)) if float(code).is_integer() else repr(code))
        out.append(f"{shown} \"{labels[key]}\"" if key in labels else shown)
    return out


def _plain_name(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", name.casefold()).strip("_")


def _guess(column: pd.Series) -> tuple[str, str]:
    info = _info(column)
    values = column.dropna()
    if not pd.api.types.is_numeric_dtype(column.dtype):
        values = values[~values.isin(NA_VALUES)]
    distinct = int(values.nunique())
    n = int(values.shape[0])
    numbers = pd.to_numeric(values, errors="coerce")
    numeric = n > 0 and not numbers.isna().any()
    name = str(column.name).lower()
    user = _user_missing(info)
    more = f" + user-missing {_few(user)}" if user else ""
    if numeric and _is_weight_name(name, info.get("label")):
        return "weight", "a survey weight (by its " + ("name)" if _is_weight_name(name, None) else "label)")
    amount = _amount(numbers, name, info, distinct) if numeric and coded_reason(info) is None else None
    if _SENSITIVE_NAME.match(_plain_name(name)) and amount is None:
        return "sensitive", (f"{distinct} values{more}: named like what an intruder wants to learn, not what "
                             "they know; or a quasi-identifier")
    id_like = (name in _ID_NAMES or name.endswith(("_id", "-id", " id")) or name.startswith(("id_", "id-")))
    whole = numeric and bool((numbers == numbers.round()).all())
    measure = info.get("measure")
    why = coded_reason(info)
    labelled = why is not None and why.startswith("value labels")
    complete = n == column.shape[0]
    if n > 1 and distinct == n and complete and (
            not numeric or id_like or (whole and n >= _MANY_ROWS and _numbering(numbers)
                                       and not _measurement(measure, info.get("label")))):
        return "identifier", f"every value is distinct ({distinct} values)"
    if (complete and not labelled and measure != "scale" and (whole or not numeric)
            and 1 < distinct and _SEVERAL * distinct <= n <= _HOUSEHOLD_SIZE * distinct
            and (distinct > _FEW_VALUES or bool(_HOUSEHOLD_NAME.search(_plain_name(name))))
            and _runs(column) == distinct):
        return "household", (f"{distinct} values, each on consecutive rows ({n / distinct:.1f} rows a value): "
                             "a household id")
    if why:
        return "categorical", f"{distinct} values{more} ({why})"
    if amount is not None:
        return "perturb", (f"numbers >= 0, {distinct} distinct values{more}, {amount}: an amount, perturbed on its "
                           "own after the keys are protected (see [[perturb]]); or \"numeric\", a quasi-identifier")
    if numeric and measure == "scale":
        return "numeric", f"numbers, {distinct} distinct values{more} (measure scale)"
    if numeric and distinct > _FEW_VALUES:
        return "numeric", f"numbers, {distinct} distinct values{more}"
    return "categorical", f"{distinct} distinct values{more}" + (" (numbers: a code?)" if numeric else "")


def _amount(numbers: pd.Series, name: str, info: dict, distinct: int) -> str | None:
    """Why a numeric column is an amount of money (its name or label, its right tail), or None."""
    if distinct <= _FEW_VALUES or not bool((numbers >= 0).all()):
        return None
    label = str(info.get("label") or "")
    for text, what in ((_plain_name(name), "named"), (label.casefold(), "labelled")):
        found = _MONEY.search(text)
        if found:
            return f"{what} as an amount ({found.group(0)!r})"
    skew = float(numbers.astype(np.float64).skew())
    return f"a heavy right tail (skewness {skew:.1f})" if np.isfinite(skew) and skew >= _HEAVY_TAIL else None


def _numbering(numbers: pd.Series) -> bool:
    """Whole numbers that number the rows: in increasing order, or every number of their range
    once. A measurement (an amount, an income) distinct on every row is neither."""
    values = numbers.to_numpy(dtype=np.float64)
    return bool((np.diff(values) > 0).all()) or values.max() - values.min() + 1 == values.size


def _measurement(measure: str | None, label: str | None) -> bool:
    return measure == "scale" or bool(_MEASUREMENT_LABEL.search((label or "").casefold()))


def _runs(column: pd.Series) -> int:
    """Runs of equal values on consecutive rows."""
    values = column.to_numpy()
    return 1 + int((values[1:] != values[:-1]).sum()) if values.size else 0


def _few(items: Sequence[str], most: int = _LISTED) -> str:
    """At most ``most`` items, then how many more: a comment stays one readable line on a file
    of thousands of columns."""
    shown = ", ".join(items[:most])
    return shown if len(items) <= most else f"{shown} and {len(items) - most:,} more"


def _guesses(data: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """The role and its reason per column. One weight: a file with a person weight and a
    household weight gets the person weight, and the other becomes "other" with the reason."""
    out = {str(c): _guess(data[c]) for c in data.columns}
    for c, (role, why) in list(out.items()):
        if role == "household" and not _varies_within(data, c):
            out[c] = ("other", f"{why.split(': ')[0]}, but every other column is the same within each value: "
                               "rows that repeat one another, no household id")
    amounts = [c for c, (role, _) in out.items() if role == "perturb"]
    if amounts and not any(role in ("numeric", "categorical") for role, _ in out.values()):
        # a file of amounts only: they are what an intruder knows, the quasi-identifiers
        for c in amounts:
            out[c] = ("numeric", out[c][1].split(": an amount")[0] + ": an amount, but the file has no other "
                                 "quasi-identifier")
    weights = [c for c, (role, _) in out.items() if role == "weight"]
    if len(weights) < 2:
        return out
    household = next((c for c, (role, _) in out.items() if role == "household"), None)
    within = {c: household is not None and bool(data.groupby(data[household].to_numpy())[c].nunique().max() == 1)
              for c in weights}

    named = {c: bool(_HOUSEHOLD_NAME.search(_plain_name(c))) for c in weights}
    # the person weight: one that varies within households, else one not named for households
    chosen = min(weights, key=lambda c: (within[c], named[c], weights.index(c)))
    for c in weights:
        if c != chosen:
            kind = "a household weight" if within[c] or named[c] else "another weight"
            out[c] = ("other", f"{out[c][1]}: {kind}; a release has one weight, {chosen}")
    return out


def _varies_within(data: pd.DataFrame, household: str) -> bool:
    """Whether some column other than ``household`` differs within one of its groups."""
    ids = pd.factorize(data[household])[0]
    return any(bool((data[c].groupby(ids).nunique(dropna=False) > 1).any())
               for c in data.columns if str(c) != household)


def _household_level(data: pd.DataFrame, guesses: dict[str, tuple[str, str]]) -> list[str]:
    """The proposed categorical columns the same for every member of each household (none
    without a household id)."""
    household = next((c for c, (role, _) in guesses.items() if role == "household"), None)
    if household is None:
        return []
    ids = pd.factorize(data[household])[0]
    return [c for c, (role, _) in guesses.items()
            if role == "categorical" and int(data[c].groupby(ids).nunique(dropna=False).max()) == 1]


def _relative(path: Path, base: Path | None) -> str:
    if base is not None:
        try:
            return Path(os.path.relpath(path, base)).as_posix()
        except ValueError:  # another drive
            pass
    return path.as_posix()


def example_spec(data: pd.DataFrame, hierarchy_files: Sequence[str | os.PathLike] = (),
                 base_dir: str | os.PathLike | None = None) -> dict[str, Any]:
    """The starting spec as a dict (the structure :func:`incrowd.publish` takes).

    Parameters
    ----------
    data : pandas.DataFrame
        The file to publish, as :func:`incrowd.read_table` reads it (a statistical file's
        metadata in ``attrs["statfile"]``).
    hierarchy_files : sequence of path-like
        Hierarchy files to propose, matched to columns by name.
    base_dir : path-like, optional
        The folder the spec will be read from: hierarchy paths are written relative to it.

    Returns
    -------
    dict
        ``privacy``, ``columns`` (a role, or a table with the role and the hierarchy, or with
        ``allow_full_suppression = true`` where a column without a hierarchy must be allowed to
        end as "*" for the proposed ``max_suppression`` to publish) and ``missing``.
    """
    return _proposal(data, hierarchy_files, base_dir)[0]


def _proposal(data: pd.DataFrame, hierarchy_files: Sequence[str | os.PathLike],
              base_dir: str | os.PathLike | None) -> tuple[dict[str, Any], dict[str, tuple[str, str]], str | None]:
    """The spec, each column's guess (role, reason) and the comment on its ``max_suppression``."""
    guesses = _guesses(data)
    proposed = _hierarchies_for(data, hierarchy_files, base_dir)
    base = Path(base_dir) if base_dir is not None else None
    columns: dict[str, Any] = {}
    for name, (role, _) in guesses.items():
        if role == "categorical" and name in proposed:
            columns[name] = {"role": role, "hierarchy": proposed[name]}
        else:
            columns[name] = role
    for name in _household_level(data, guesses):
        columns[name] = {**_entry(columns[name]), "household_level": True}
        guesses[name] = ("categorical", f"{guesses[name][1]}; the same for every member of each household")
    spec: dict[str, Any] = {
        "privacy": {"k": _PROPOSED_K, "max_suppression": "1%", "strategy": "generalize-then-microaggregate",
                    "method": "mdav"},
        "columns": columns,
        "missing": {"numeric": "error"},
    }
    amounts = [name for name, (role, _) in guesses.items() if role == "perturb"]
    if amounts:
        spec["perturb"] = [{"columns": amounts, "method": "microaggregation", "k": _PERTURB_K}]
    limit, why, allowed = _proposed_limit(data, spec, base)
    spec["privacy"]["max_suppression"] = limit
    for name in allowed:
        columns[name] = {**_entry(columns[name]), "allow_full_suppression": True}
    return spec, guesses, why


def _entry(entry: Any) -> dict[str, Any]:
    """A column's entry as a table (a role alone becomes ``{role = ...}``)."""
    return dict(entry) if isinstance(entry, dict) else {"role": entry}


def proposed_limit(data: pd.DataFrame, spec: dict, base_dir: str | os.PathLike | None = None) -> str:
    """The ``max_suppression`` a starting spec proposes for ``spec``'s roles and hierarchies: the
    smallest of 1, 2, 5, 10 and 20 % they meet at k = 5 with every column telling something (no
    column taken to its top, one label in every row; "1%" when none does), as
    :func:`example_spec` proposes it; for a caller that sets the hierarchies itself (the web
    page proposes uploaded files by the names the user gave them).

    Parameters
    ----------
    data : pandas.DataFrame
        The file to publish.
    spec : dict
        A starting specification whose hierarchy paths can be read.
    base_dir : path-like, optional
        The folder relative hierarchy paths are read from.

    Returns
    -------
    str
        The limit, e.g. ``"5%"``.
    """
    return _proposed_limit(data, spec, Path(base_dir) if base_dir is not None else None)[0]


def _proposed_limit(data: pd.DataFrame, spec: dict, base: Path | None) -> tuple[str, str | None, list[str]]:
    """The smallest of :data:`_LIMITS` the proposal meets, a comment when it is not 1 %, and the
    flat columns that must be allowed to end as "*" for any limit to be met (none when it is
    met without). When nothing is met even so, "1%" and what holds the rows back."""
    # measured with every column below its top: "*" throughout meets any k, and a proposal
    # that leans on it would hand the curator a release that drops whole columns
    informative = {**spec, "privacy": {**(spec.get("privacy") or {}), "allow_full_suppression": False}}
    try:
        loaded = load_spec(informative, base)
        depths = lattice_depths(loaded)
        if depths is not None and node_count(depths) > DEFAULT_MAX_NODES:
            # publish refuses such a lattice before reading the data: trying it would take
            # minutes on a file of thousands of labelled columns, to say the same
            return "1%", (f"{len(depths):,} categorical quasi-identifiers make more combinations of levels "
                          f"than publish searches ({DEFAULT_MAX_NODES:,}): keep as quasi-identifiers the "
                          "few columns an intruder could know, make the rest 'other'"), []
        prep = prepare(data, loaded)
        if not prep.categorical:
            return "1%", None, []
        flat = [a for a in prep.categorical if no_hierarchy(prep.spec.columns.get(a))]
        n = int(data.shape[0])
        needed = top_suppression(prep)
        limit = _smallest_limit(needed, n)
        held = f"; {_few(flat)} {'has' if len(flat) == 1 else 'have'} no hierarchy" if flat else ""
        share = f"{needed} rows ({100 * needed / n:.1f} %)"
        if limit is not None:
            return limit, None if limit == f"{_LIMITS[0]}%" else (
                f"1 % is too little: at their most general levels the quasi-identifiers still leave "
                f"{share} in classes under k = {_PROPOSED_K}{held}"), []
        allowed = _allowed_to_blank(data, spec, base, flat)
    except IncrowdError:  # a proposal the file cannot meet as it stands: publish will say why
        return "1%", None, []
    if allowed is not None:
        names, limit = allowed
        return limit, (f"no limit up to {_LIMITS[-1]} % publishes while every column keeps two values or "
                       f"more: at their most general levels the quasi-identifiers leave {share} in classes "
                       f"under k = {_PROPOSED_K}{held}. So {_few(names)} may end as \"*\" in every row "
                       "(allow_full_suppression): give hierarchies instead where you can"), names
    return "1%", (f"no limit up to {_LIMITS[-1]} % publishes: at their most general levels the "
                  f"quasi-identifiers leave {share} in classes under k = {_PROPOSED_K}{held}; "
                  "give hierarchies, or make columns 'other'"), []


def _smallest_limit(needed: int, n: int) -> str | None:
    return next((f"{pct}%" for pct in _LIMITS if max_suppression_count(f"{pct}%", n) >= needed), None)


def _allowed_to_blank(data: pd.DataFrame, spec: dict, base: Path | None,
                      flat: list[str]) -> tuple[list[str], str] | None:
    """The fewest flat columns, most distinct values first, that once allowed to end as "*" let
    one of :data:`_LIMITS` publish, and that limit; None when all of them do not."""
    if not flat:
        return None
    columns = dict(spec["columns"])
    for name in flat:
        columns[name] = {**_entry(columns[name]), "allow_full_suppression": True}
    prep = prepare(data, load_spec({**spec, "columns": columns}, base))
    # the columns with the most values split the most classes: blanking them first frees the most rows
    order = sorted(flat, key=lambda a: -int(prep.hierarchies[a].labels[0].size))
    n = int(data.shape[0])
    for i in range(1, len(order) + 1):
        limit = _smallest_limit(top_suppression(prep, order[i:]), n)
        if limit is not None:
            return order[:i], limit
    return None


def hierarchy_files_in(folder: str | os.PathLike) -> list[Path]:
    """The hierarchy (CSV) files of ``folder`` and of its ``hierarchies`` subfolder (none if absent)."""
    out: list[Path] = []
    for place in (Path(folder), Path(folder) / "hierarchies"):
        if place.is_dir():
            out += sorted(f for f in place.iterdir() if is_hierarchy_file(f) and f.is_file())
    return out


def example_toml(data: pd.DataFrame, source: str = "the data", hierarchy_files: Sequence[str | os.PathLike] = (),
                 base_dir: str | os.PathLike | None = None) -> str:
    """The spec as commented TOML text, ready to edit and pass to ``incrowd publish --spec``.

    Parameters
    ----------
    data : pandas.DataFrame
        The file to publish (see :func:`example_spec`).
    source : str
        The file's name, for the header comment.
    hierarchy_files, base_dir
        As in :func:`example_spec`.

    Returns
    -------
    str
        TOML text that :func:`incrowd.publishing.load_spec` reads.
    """
    spec, guesses, limit_why = _proposal(data, hierarchy_files, base_dir)
    has_missing = any(_has_missing(data[c]) for c in data.columns)
    statfile = isinstance(data.attrs.get("statfile"), dict)
    lines = [
        f"# A starting release specification for {source} ({data.shape[0]} rows, {data.shape[1]} columns).",
        "# Check every role below: the guesses come from "
        + ("the file's metadata (value labels, measures) and " if statfile else "") + "the values' types.",
    ]
    if any(isinstance(entry, dict) and "hierarchy" in entry for entry in spec["columns"].values()):
        lines.append(f"# Hierarchy paths are relative to the spec's folder: save it beside {source}.")
    lines += [
        "",
        "[privacy]",
        "k = 5                     # every published class holds at least k rows",
        *_model_lines(),
        *(f"# {line}" for line in _wrapped(limit_why or "")),
        f"max_suppression = \"{spec['privacy']['max_suppression']}\"".ljust(26) + "# rows that may be left out",
        "strategy = \"generalize-then-microaggregate\"   # or \"joint\"",
        "method = \"mdav\"           # microaggregation method for the numeric columns",
        "# allow_full_suppression = false  # forbid a column published as \"*\" in every row (allowed by default)",
        "",
        "[columns]",
        f"# roles: identifier (dropped), numeric, categorical (add hierarchy = \"{hierarchy_file_name('file')}\"),",
        "#        sensitive (protected by l and t), weight (a survey weight: kept, never a quasi-identifier),",
        "#        household (the household id: never a quasi-identifier; household_id under [privacy] keeps,",
        "#        renumbers or drops it), household_level = true on a categorical column that is the",
        "#        same for every member of a household (blanked for the whole household at once),",
        "#        perturb (an amount changed on its own after the keys are protected: see [[perturb]]),",
        "#        other (passes through unchanged)",
    ]
    proposed = _hierarchies_for(data, hierarchy_files, base_dir)
    for name, entry in spec["columns"].items():
        role, why = guesses[name]
        if isinstance(entry, dict):
            lines.append(f"{toml_key(name)} = {toml_value(entry, 'the example spec')}".ljust(40) + f"  # {why}")
            continue
        if name in proposed:
            why += f"; or {toml_value({'role': 'categorical', 'hierarchy': proposed[name]}, 'the example spec')}"
        lines.append(f"{toml_key(name)} = \"{role}\"".ljust(40) + f"# {why}")
    lines += _perturb_lines(spec.get("perturb") or [])
    lines += [
        "",
        "[missing]",
        "numeric = \"error\"         # or \"separate\": publish rows by their missing pattern"
        + ("  (this file has missing values)" if has_missing else ""),
        "",
    ]
    return "\n".join(lines)


def _perturb_lines(steps: list[dict[str, Any]]) -> list[str]:
    """The proposed [[perturb]] step, with the other methods it could be."""
    lines = []
    for step in steps:
        lines += [
            "",
            "# The amounts are perturbed on their own after the keys are protected (sdcMicro's numVars); the report",
            "# measures them (IL1s, eigenvalues, correlations, dRisk, record linkage). Other methods: \"noise\" (amount),",
            "# \"rank_swap\" (p), \"shuffle\" (by), \"top_code\" / \"bottom_code\" (value, replacement), \"round\" (base).",
            "[[perturb]]",
            f"columns = {toml_value(step['columns'], 'the example spec')}",
            f"method = \"{step['method']}\"  # mdav, as sdcMicro's microaggregation; or \"mondrian\", ...",
            f"k = {step['k']}".ljust(29) + "# each value replaced by the mean of a group of at least k alike rows",
            "# aggregate = \"median\"       # the group's median instead of its mean",
            "# jointly = false            # each column grouped on its own",
        ]
    return lines


def _model_lines() -> list[str]:
    """A commented line per registered privacy model beyond k (its own example: setting and
    what it promises), in the registry's order, so that the example spec shows every model."""
    lines = []
    for key, model in MODELS.items():
        if key == "k":  # set above, not commented
            continue
        setting, said = model.example or (f"{key} = ...", (model.__doc__ or model.__name__).strip().splitlines()[0])
        lines.append(f"# {setting}".ljust(24) + f"  # {said}")
    return lines


def _wrapped(text: str) -> list[str]:
    """``text`` in lines of at most :data:`_WIDTH` characters, never parting a number from its "%"."""
    return [line.replace("\0", " ") for line in textwrap.wrap(text.replace(" %", "\0%"), _WIDTH)]


def _hierarchies_for(data: pd.DataFrame, hierarchy_files: Sequence[str | os.PathLike],
                     base_dir: str | os.PathLike | None) -> dict[str, str]:
    """The hierarchy file proposed per column by its name, as the spec writes its path."""
    from ..generalization import propose_hierarchy_files

    base = Path(base_dir) if base_dir is not None else None
    proposed = propose_hierarchy_files([str(c) for c in data.columns], hierarchy_files)
    return {name: _relative(path, base) for name, path in proposed.items()}


def _has_missing(column: pd.Series) -> bool:
    """Whether the column has a missing value that is not a declared user-missing code: a
    code such as 9 "Not stated" is a value of its own to publish, not a gap."""
    missing = column.isna().to_numpy()
    if missing.any() and _info(column).get("missing_codes") and column.dtype == np.float64:
        missing = missing & (code_indices(column.to_numpy()) < 0)
    if missing.any():
        return True
    return not pd.api.types.is_numeric_dtype(column.dtype) and bool(column.isin(NA_VALUES).any())


def column_notes(data: pd.DataFrame) -> dict[str, str]:
    """Why each column's role is proposed: the comment ``--example-spec`` writes beside it (its
    values, user-missing codes with their labels, the metadata that decided), by column name.

    Parameters
    ----------
    data : pandas.DataFrame
        The file to publish (see :func:`example_spec`).

    Returns
    -------
    dict
        Column name -> the reason, as text.
    """
    return {name: why for name, (_, why) in _guesses(data).items()}
