"""A starting release specification from a file's columns, types and metadata, for the curator
to edit.

The guesses are plain and said in comments, first from what the file says about a column, then
from its values:

- a column named like a survey weight (``weight``, ``wgt``, ``fnlwgt``, ``pweight``, ...) or
  labelled as one ("Final sampling weight") is the ``weight``;
- a column whose every value is distinct is an identifier: text, a name that says so ("id",
  "respid"), or whole numbers over at least ``_MANY_ROWS`` rows (a measurement of whole
  numbers is not distinct on every row of a file that size);
- a column with value labels (SPSS, Stata) or an SPSS measure of nominal or ordinal is
  categorical; an SPSS measure of scale is numeric;
- else a column of numbers with many distinct values is numeric, anything else categorical.

- a column named like what an intruder wants to learn rather than what they know (``income``,
  ``salary``, ``wage``, ``earnings``, ``diagnosis``, ``disease``) is ``sensitive``; other
  sensitive columns cannot be guessed: the spec says where to mark them.

User-missing codes are listed beside their column. A categorical column with a hierarchy file
among ``hierarchy_files`` whose name is the column's (compared without case, spaces and
punctuation, ARX's ``<data>_hierarchy_<column>.csv`` included) gets that file.

``max_suppression`` is the smallest of 1, 2, 5, 10 and 20 % that the proposed roles and
hierarchies can meet at k = 5 (the most general levels allowed, without a column turned to one
label, suppress the fewest rows), so the starting spec publishes as proposed; when none does,
it stays 1 % and a comment says what holds the rows back.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from ..io import NA_VALUES, coded_reason
from ._toml import toml_key

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
    more = f" + user-missing {', '.join(user)}" if user else ""
    if numeric and _is_weight_name(name, info.get("label")):
        return "weight", "a survey weight (by its " + ("name)" if _is_weight_name(name, None) else "label)")
    if _SENSITIVE_NAME.match(re.sub(r"[^0-9a-z]+", "_", name.casefold()).strip("_")):
        return "sensitive", (f"{distinct} values{more}: named like what an intruder wants to learn, not what "
                             "they know; or a quasi-identifier")
    id_like = (name in _ID_NAMES or name.endswith(("_id", "-id", " id")) or name.startswith(("id_", "id-")))
    whole = numeric and bool((numbers == numbers.round()).all())
    if n > 1 and distinct == n and n == column.shape[0] and (
            not numeric or id_like or (whole and n >= _MANY_ROWS)):
        return "identifier", f"every value is distinct ({distinct} values)"
    why = coded_reason(info)
    if why:
        return "categorical", f"{distinct} values{more} ({why})"
    measure = info.get("measure")
    if numeric and measure == "scale":
        return "numeric", f"numbers, {distinct} distinct values{more} (measure scale)"
    if numeric and distinct > _FEW_VALUES:
        return "numeric", f"numbers, {distinct} distinct values{more}"
    return "categorical", f"{distinct} distinct values{more}" + (" (numbers: a code?)" if numeric else "")


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
        ``privacy``, ``columns`` (a role, or a table with the role and the hierarchy) and
        ``missing``.
    """
    spec = _columns_only(data, hierarchy_files, base_dir)
    spec["privacy"]["max_suppression"], _ = _proposed_limit(data, spec, Path(base_dir) if base_dir is not None else None)
    return spec


def _columns_only(data: pd.DataFrame, hierarchy_files: Sequence[str | os.PathLike],
                  base_dir: str | os.PathLike | None) -> dict[str, Any]:
    """The proposal with its roles and hierarchies, and a 1 % limit still to be checked."""
    from ..generalization._hierarchy import propose_hierarchy_files

    proposed = propose_hierarchy_files([str(c) for c in data.columns], hierarchy_files)
    base = Path(base_dir) if base_dir is not None else None
    columns: dict[str, Any] = {}
    for c in data.columns:
        role = _guess(data[c])[0]
        if role == "categorical" and str(c) in proposed:
            columns[str(c)] = {"role": role, "hierarchy": _relative(proposed[str(c)], base)}
        else:
            columns[str(c)] = role
    return {
        "privacy": {"k": _PROPOSED_K, "max_suppression": "1%", "strategy": "generalize-then-microaggregate",
                    "method": "mdav"},
        "columns": columns,
        "missing": {"numeric": "error"},
    }


def proposed_limit(data: pd.DataFrame, spec: dict, base_dir: str | os.PathLike | None = None) -> str:
    """The ``max_suppression`` a starting spec proposes for ``spec``'s roles and hierarchies: the
    smallest of 1, 2, 5, 10 and 20 % they meet at k = 5 ("1%" when none does), as
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


def _proposed_limit(data: pd.DataFrame, spec: dict, base: Path | None) -> tuple[str, str | None]:
    """The smallest of :data:`_LIMITS` the proposal meets, and a comment when it is not 1 % (or
    when none is met, "1%" and what holds the rows back)."""
    from ..exceptions import IncrowdError
    from ..generalization._negotiate import max_suppression_count
    from ._gtm import no_hierarchy, top_suppression
    from ._prepare import prepare
    from ._spec import load_spec

    try:
        prep = prepare(data, load_spec(spec, base))
        if not prep.categorical:
            return "1%", None
        needed = top_suppression(prep)
    except IncrowdError:  # a proposal the file cannot meet as it stands: publish will say why
        return "1%", None
    n = int(data.shape[0])
    share = f"{needed} rows ({100 * needed / n:.1f} %)"
    flat = [a for a in prep.categorical if no_hierarchy(prep.spec.columns.get(a))]
    held = f"; {', '.join(flat)} {'has' if len(flat) == 1 else 'have'} no hierarchy" if flat else ""
    for pct in _LIMITS:
        if max_suppression_count(f"{pct}%", n) >= needed:
            why = None if pct == _LIMITS[0] else (
                f"1 % is too little: at their most general levels the quasi-identifiers still leave "
                f"{share} in classes under k = {_PROPOSED_K}{held}")
            return f"{pct}%", why
    return "1%", (f"no limit up to {_LIMITS[-1]} % publishes: at their most general levels the "
                  f"quasi-identifiers leave {share} in classes under k = {_PROPOSED_K}{held}; "
                  "give hierarchies, or make columns 'other'")


def hierarchy_files_in(folder: str | os.PathLike) -> list[Path]:
    """The ``.csv`` files of ``folder`` and of its ``hierarchies`` subfolder (none if absent)."""
    out: list[Path] = []
    for place in (Path(folder), Path(folder) / "hierarchies"):
        if place.is_dir():
            out += sorted(f for f in place.iterdir() if f.suffix.lower() == ".csv" and f.is_file())
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
    hierarchy_files : sequence of path-like
        Hierarchy files to propose, matched to columns by name.
    base_dir : path-like, optional
        The folder the spec will be read from: hierarchy paths are written relative to it.

    Returns
    -------
    str
        TOML text that :func:`incrowd.publishing.load_spec` reads.
    """
    from ..generalization._hierarchy import propose_hierarchy_files

    has_missing = any(_has_missing(data[c]) for c in data.columns)
    proposed = propose_hierarchy_files([str(c) for c in data.columns], hierarchy_files)
    base = Path(base_dir) if base_dir is not None else None
    limit, limit_why = _proposed_limit(data, _columns_only(data, hierarchy_files, base_dir), base)
    statfile = isinstance(data.attrs.get("statfile"), dict)
    lines = [
        f"# A starting release specification for {source} ({data.shape[0]} rows, {data.shape[1]} columns).",
        "# Check every role below: the guesses come from the "
        + ("file's metadata (value labels, measures) and " if statfile else "") + "the values' types.",
    ]
    if proposed:
        lines.append(f"# Hierarchy paths are relative to the spec's folder: save it beside {source}.")
    lines += [
        "",
        "[privacy]",
        "k = 5                     # every published class holds at least k rows",
        "# l = 2                   # distinct sensitive values per class (needs a \"sensitive\" column)",
        "# t = 0.3                 # t-closeness: earth mover's distance per class, in (0, 1]",
        *([f"# {limit_why}"] if limit_why else []),
        f"max_suppression = \"{limit}\"".ljust(26) + "# rows that may be left out",
        "strategy = \"generalize-then-microaggregate\"   # or \"joint\"",
        "method = \"mdav\"           # microaggregation method for the numeric columns",
        "# allow_full_suppression = true   # let a column be published as \"*\" in every row",
        "",
        "[columns]",
        "# roles: identifier (dropped), numeric, categorical (add hierarchy = \"file.csv\"),",
        "#        sensitive (protected by l and t), weight (a survey weight: kept, never a quasi-identifier),",
        "#        other (passes through unchanged)",
    ]
    for c in data.columns:
        role, why = _guess(data[c])
        name = str(c)
        if name in proposed:
            path = _relative(proposed[name], base).replace("\\", "\\\\").replace('"', '\\"')
            entry = f"{{ role = \"categorical\", hierarchy = \"{path}\" }}"
            if role == "categorical":
                lines.append(f"{toml_key(name)} = {entry}".ljust(40) + f"  # {why}")
                continue
            why += f"; or {entry}"
        lines.append(f"{toml_key(name)} = \"{role}\"".ljust(40) + f"# {why}")
    lines += [
        "",
        "[missing]",
        "numeric = \"error\"         # or \"separate\": publish rows by their missing pattern"
        + ("  (this file has missing values)" if has_missing else ""),
        "",
    ]
    return "\n".join(lines)


def _has_missing(column: pd.Series) -> bool:
    if column.isna().any():
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
    return {str(c): _guess(data[c])[1] for c in data.columns}
