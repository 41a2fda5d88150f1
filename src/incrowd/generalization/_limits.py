"""Size limits of a lattice build, checked before the work starts, and its cancellation.

A full lattice has prod(levels + 1) nodes over the quasi-identifiers: 14 of Adult's attributes
with ARX's hierarchies give 17,496,000 nodes, which no machine finishes in memory. The node
count is known from the hierarchies alone, so it is checked before the data are read; the
memory estimate also needs the bottom-class count (distinct quasi-identifier combinations),
which one DuckDB ``SELECT DISTINCT`` gives without encoding the data.

The defaults suit a 24 GiB machine. The per-node and per-class costs below were measured by
``bench/bench_lattice_memory.py`` (see docs/performance.md, "Lattice memory") and rounded up.
"""

from __future__ import annotations

import math
import numbers
import re
from typing import Callable, Mapping, Sequence

from ..exceptions import BuildCancelled, DataError, ParameterError

DEFAULT_MAX_NODES = 200_000
"""The most lattice nodes a build or a search takes on by default (``max_nodes=None`` lifts it)."""
DEFAULT_MAX_MEMORY = 8 * 1024**3
"""The most memory, in bytes (8 GiB), a lattice build may estimate to need by default
(``max_memory=None`` lifts it)."""

# every node of the lattice, built or not: level vectors (and their meshgrid temporaries while
# ranking), score, flags, class counts, histogram offsets and list slots
_BYTES_PER_NODE_AND_ATTRIBUTE = 24
_BYTES_PER_NODE = 96
# every computed node: the Python tuples and small arrays holding its histograms until they are
# joined; then per histogram entry the parts, their joined copies and running sums. A node has
# at most one entry per distinct class size, fewer than sqrt(2 n_rows); Adult's have about half
_BYTES_PER_COMPUTED_NODE = 2_000
_BYTES_PER_COMPUTED_NODE_SENSITIVE = 700
_BYTES_PER_ENTRY = 96

_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)


def parse_size(value: int | float | str | None, what: str = "--max-memory") -> int | None:
    """Bytes from ``8G``, ``512M``, ``1.5GiB`` or a plain number of bytes; None stays None.

    Parameters
    ----------
    value : int, float, str or None
        The size as given.
    what : str, default "--max-memory"
        The option's name, for the error message.

    Returns
    -------
    int or None
        Bytes, or None.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise ParameterError(f"{what} must be a size such as 8G or 512M; got {value!r}")
    if isinstance(value, (int, float)):
        number, unit = float(value), ""
    else:
        match = _SIZE.match(str(value))
        if match is None:
            raise ParameterError(f"{what} must be a size such as 8G or 512M (K, M, G, T = powers of 1024); got {value!r}")
        number, unit = float(match.group(1)), match.group(2).upper()
    size = number * _UNITS[unit]
    if not math.isfinite(size) or size < 1:
        raise ParameterError(f"{what} must be a positive size such as 8G or 512M; got {value!r}")
    return int(size)


def check_max_nodes(value, what: str = "max_nodes") -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ParameterError(f"{what} must be a positive integer; got {value!r}")
    return int(value)


def node_count(depths: Sequence[int]) -> int:
    """Nodes of the full lattice: the product of (levels + 1), as an exact Python integer.

    Parameters
    ----------
    depths : sequence of int
        The number of levels of each attribute's hierarchy (top included).

    Returns
    -------
    int
        The node count.
    """
    return math.prod(int(d) for d in depths)


def computed_nodes(n_nodes: int, fraction: float) -> int:
    """Nodes a build computes: all of them, or a partial build's share plus the top node."""
    if fraction >= 1:
        return n_nodes
    return min(n_nodes, max(1, math.ceil(fraction * n_nodes)) + 1)


def estimate_bytes(depths: Sequence[int], fraction: float, bottom_classes: int, *, n_rows: int,
                   sensitive: bool = False, encoding: bool = True) -> int:
    """Memory a build needs beyond its input: per node of the lattice, per computed node and
    histogram entry, the class tables of the roll-up path (one per height, each up to the
    bottom-class count) and, with ``encoding``, the level-0 codes of every row.

    Parameters
    ----------
    depths : sequence of int
        The number of levels of each attribute's hierarchy.
    fraction : float
        The share of nodes computed.
    bottom_classes : int
        Classes of the bottom node (at most the row count).
    n_rows : int
        Rows of the data.
    sensitive : bool, default False
        Whether l histograms are computed too.
    encoding : bool, default True
        Count the level-0 codes of every row.

    Returns
    -------
    int
        The estimated bytes.
    """
    m = len(depths)
    n_nodes = node_count(depths)
    computed = computed_nodes(n_nodes, fraction)
    width = m + (1 if sensitive else 0)
    entries = max(1, min(int(bottom_classes), math.ceil(0.5 * math.sqrt(2 * max(1, n_rows)))))
    per_node = _BYTES_PER_NODE + _BYTES_PER_NODE_AND_ATTRIBUTE * m
    per_computed = _BYTES_PER_COMPUTED_NODE + entries * _BYTES_PER_ENTRY
    if sensitive:
        per_computed += _BYTES_PER_COMPUTED_NODE_SENSITIVE + entries * _BYTES_PER_ENTRY
    class_bytes = 4 * width + 8
    path = (sum(int(d) - 1 for d in depths) + 2) if fraction >= 1 else 3
    tables = class_bytes * int(bottom_classes) * path
    encode = 3 * 4 * width * n_rows if encoding else 0  # codes, the frame DuckDB groups, its result
    return per_node * n_nodes + per_computed * computed + tables + encode


#: counts from this size on are written as a power of ten: a lattice over thousands of columns
#: has a node count of thousands of digits, which no one reads
_SHORT_FROM = 10**12


def count_text(count: int) -> str:
    """``count`` for a message: with thousands separators, or from 10^12 on as ``about 2.0 x 10^3010``."""
    count = int(count)
    if count < _SHORT_FROM:
        return f"{count:,}"
    # a float log10 may land a hair either side of a power of ten: the mantissa puts it right
    exponent = int(math.log10(count))
    mantissa = count // 10 ** (exponent - 2) / 100
    if mantissa < 1:
        exponent, mantissa = exponent - 1, mantissa * 10
    if round(mantissa, 1) >= 10:
        exponent, mantissa = exponent + 1, mantissa / 10
    return f"about {mantissa:.1f} x 10^{exponent}"


def _fmt_bytes(size: int) -> str:
    if size >= _SHORT_FROM * 1024**4:
        return f"{count_text(size // 1024**4)} TiB"
    for unit, factor in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor:
            return f"{size / factor:.1f} {unit}"
    return f"{size} B"


def check_nodes(depths: Sequence[int], fraction: float, max_nodes: int | None, *,
                way_out: str | None = None) -> None:
    """Refuse a lattice with more nodes to compute than ``max_nodes`` (None: no limit);
    ``way_out`` replaces the advice of a full lattice's refusal (a caller without --partial)."""
    if max_nodes is None:
        return
    n_nodes = node_count(depths)
    computed = computed_nodes(n_nodes, fraction)
    if computed <= max_nodes:
        return
    if computed == n_nodes:
        raise ParameterError(
            f"the lattice has {count_text(n_nodes)} nodes (limit {max_nodes:,}); "
            + (way_out or "use --partial or fewer quasi-identifiers, or raise --max-nodes "
                          "(Python: fraction=, max_nodes=)")
        )
    raise ParameterError(
        f"the partial lattice would compute {count_text(computed)} of {count_text(n_nodes)} nodes "
        f"(limit {max_nodes:,}); "
        "use a smaller --partial share or fewer quasi-identifiers, or raise --max-nodes "
        "(Python: fraction=, max_nodes=)"
    )


def check_memory(depths: Sequence[int], fraction: float, bottom_classes: int, max_memory: int | None, *,
                 n_rows: int, sensitive: bool = False, encoding: bool = True, way_out: str | None = None) -> int:
    """Refuse a build whose estimated memory exceeds ``max_memory`` bytes; returns the estimate.
    ``way_out`` replaces the advice at the end of the refusal."""
    need = estimate_bytes(depths, fraction, bottom_classes, n_rows=n_rows, sensitive=sensitive,
                          encoding=encoding)
    if max_memory is not None and need > max_memory:
        n_nodes = node_count(depths)
        raise ParameterError(
            f"building the lattice needs about {_fmt_bytes(need)} ({count_text(n_nodes)} nodes, "
            f"{count_text(computed_nodes(n_nodes, fraction))} computed, {bottom_classes:,} bottom classes; limit "
            f"{_fmt_bytes(max_memory)}); "
            + (way_out or "use --partial or fewer quasi-identifiers, or raise --max-memory "
                          "(Python: fraction=, max_memory=)")
        )
    return need


def count_bottom_classes(data, columns: Sequence[str]) -> int:
    """Distinct combinations of ``columns`` in a pandas frame: one DuckDB query, no encoding."""
    import duckdb

    frame = data[list(columns)]
    con = duckdb.connect()
    try:
        con.register("frame", frame)
        return int(con.execute("SELECT COUNT(*) FROM (SELECT DISTINCT * FROM frame)").fetchone()[0])
    except duckdb.Error:  # a column DuckDB cannot scan (mixed Python objects): pandas hashes it
        return int(frame.drop_duplicates().shape[0])
    finally:
        con.close()


def cancel_check(cancel) -> Callable[[], None]:
    """A function that raises :class:`BuildCancelled` once ``cancel`` says so: ``cancel`` is
    None, a ``threading.Event`` (or anything with ``is_set``) or a callable returning a bool."""
    if cancel is None:
        return lambda: None
    probe = cancel.is_set if hasattr(cancel, "is_set") else cancel
    if not callable(probe):
        raise ParameterError(f"cancel must be a threading.Event or a callable; got {cancel!r}")

    def check() -> None:
        if probe():
            raise BuildCancelled("the lattice build was cancelled")

    return check


def parse_max_nodes(text: str | int | None, what: str = "--max-nodes") -> int | None:
    """A node limit from CLI text ("200000", "200,000", "200_000"); "none" lifts it."""
    if text is None or isinstance(text, numbers.Integral) and not isinstance(text, bool):
        return check_max_nodes(text, what)
    t = str(text).strip().replace(",", "").replace("_", "")
    if t.lower() == "none":
        return None
    if not t.isdigit() or int(t) < 1:
        raise ParameterError(f"{what} must be a positive integer (or 'none'); got {text!r}")
    return int(t)


def precheck_nodes(quasi_identifiers: Sequence[str], hierarchies, intervals, fraction: float,
                   max_nodes: int | None) -> None:
    """The node limit from the hierarchy files and interval widths alone, before the data are
    read; when an attribute's depth is not known yet the build checks it later, still before
    encoding."""
    from ._hierarchy import find_hierarchy_file, read_hierarchy

    if max_nodes is None:
        return
    intervals = dict(intervals or {})
    depths = []
    for a in quasi_identifiers:
        if a in intervals:
            depths.append(len(intervals[a]) + 2)  # the values, one level per width, then '*'
        elif isinstance(hierarchies, Mapping):
            if a not in hierarchies:
                return
            depths.append(hierarchies[a].depth)
        elif hierarchies is not None:
            try:
                depths.append(read_hierarchy(find_hierarchy_file(hierarchies, a), a).depth)
            except DataError:
                return  # the build names the missing column or file in its own words
        else:
            return
    check_nodes(depths, fraction, max_nodes)


def partial_fraction(text: str | None) -> float:
    """``--partial`` / the web's partial share: "0.3" or "30%" -> 0.3; None -> 1.0 (every node)."""
    if text is None:
        return 1.0
    t = text.strip()
    try:
        value = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1:
        raise ParameterError(f"--partial must be a share of the nodes in (0, 1] or (0%, 100%]; got {text!r}")
    return value
