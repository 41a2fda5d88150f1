"""Generalization and suppression, negotiated in user time (after Pilalidou & Vassiliadis).

- :class:`Hierarchy`, :func:`read_hierarchy`, :func:`load_hierarchies` (ARX-style CSV files,
  validated), :func:`interval_hierarchy` (nested bins for numeric columns);
- :class:`Lattice`: every level vector of the quasi-identifiers with its class-size histogram
  and, with a sensitive attribute, its distinct-values histogram; built in one pass
  (:meth:`Lattice.build`, full or partial), stored in a DuckDB file (:meth:`Lattice.save`,
  :meth:`Lattice.open`);
- :func:`negotiate`: a request (k or l, maximum levels, maximum suppression) answered exactly
  or with the three relaxations (:class:`Negotiation`, :class:`Node`);
- :func:`generalize`: apply a node to the data, suppress, verify (:class:`GeneralizationResult`);
- utility metrics (:data:`METRICS`: ``loss``, ``discernibility``, ``entropy``, ``aecs``,
  ``precision``, ``height``, ``classification``) of a lattice node (:func:`node_metrics`) or of
  a released table (:func:`released_metrics`); :func:`negotiate` answers with the least one.
- :func:`local_recoding`: each class at its own levels (Mondrian over the hierarchies),
  verified k-anonymous (:class:`LocalRecodingResult`);
- :func:`safepub`: (epsilon, delta)-differential privacy by SafePub (a random sample, the scheme
  drawn by the exponential mechanism, classes below the derived k suppressed;
  :class:`SafePubResult`, :class:`PrivacyBudget`); internal until publish calls it;
- :func:`local_suppression`: suppress single quasi-identifier cells until k holds, a missing
  value matching any value (sdcMicro's wildcard) or only itself (:class:`LocalSuppressionResult`).
"""

import os
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any, Sequence

from .._runtime import lazy as _lazy

if _TYPE_CHECKING:  # what type checkers see; at run time the names load on first use
    import pandas as pd

    from ._apply import GeneralizationResult, generalize
    from ._hierarchy import (
        Hierarchy,
        find_hierarchy_file,
        interval_hierarchy,
        load_hierarchies,
        parse_assignments,
        read_hierarchy,
    )
    from ._lattice import Lattice
    from ._limits import DEFAULT_MAX_MEMORY, DEFAULT_MAX_NODES, estimate_bytes, node_count, parse_size
    from ._local_recoding import LocalRecodingResult, local_recoding
    from ._local_suppression import LocalSuppressionResult, local_suppression
    from ._negotiate import RELAXATIONS, Negotiation, Node, max_suppression_count, negotiate
    from ._utility_metrics import METRICS, node_metrics, released_metrics

#: the internal API (not public, not in ``__all__``): what the Dask backend's lattice, publish, the
#: report and the web take from here, so that they name no private module of this package
_INTERNAL = {
    **dict.fromkeys(["encode_cells", "as_value_labels", "match_mode", "qi_labels", "value_label_map",
                     "recode_groups", "attach_recodes"], "._cells"),
    **dict.fromkeys(["value_labels", "propose_hierarchy_files", "hierarchy_from_rows", "check_widths"],
                    "._hierarchy"),
    "parse_max_nodes": "._limits",
    **dict.fromkeys(["hierarchy_suffix", "is_hierarchy_file", "hierarchy_file_name", "arx_hierarchy_name",
                     "hierarchy_file_names", "attribute_from_filename"], "._hierarchy_files"),
    "one_request": "._search_plain",
    "check_importance": "._importance",
    "generalization_promise": "._apply", "verified_as_written": "._apply",
    **dict.fromkeys(["majority", "ColumnTables", "check_weights"], "._utility_metrics"),
    "node_classes": "._node_classes",
    **dict.fromkeys(["PrivacyBudget", "SafePubResult", "exponential_mechanism", "node_score", "safepub"],
                    "._safepub"),
    **dict.fromkeys(["check_fraction", "resolve_hierarchies", "sensitive_codes"], "._lattice"),
    **dict.fromkeys(["check_max_nodes", "check_memory", "check_nodes", "precheck_nodes", "partial_fraction"],
                    "._limits"),
}

# loaded on first use, so that a process answering from a lattice file never loads what
# building or applying one needs (and ``import incrowd`` loads none of it)
__getattr__, __dir__ = _lazy.attach(__name__, {
    "GeneralizationResult": "._apply", "generalize": "._apply",
    **dict.fromkeys(["Hierarchy", "find_hierarchy_file", "interval_hierarchy", "load_hierarchies",
                     "parse_assignments", "read_hierarchy"], "._hierarchy"),
    "Lattice": "._lattice",
    "LocalRecodingResult": "._local_recoding", "local_recoding": "._local_recoding",
    "LocalSuppressionResult": "._local_suppression", "local_suppression": "._local_suppression",
    **dict.fromkeys(["DEFAULT_MAX_MEMORY", "DEFAULT_MAX_NODES", "estimate_bytes", "node_count", "parse_size"],
                    "._limits"),
    **dict.fromkeys(["RELAXATIONS", "Negotiation", "Node", "max_suppression_count", "negotiate"], "._negotiate"),
    **dict.fromkeys(["METRICS", "node_metrics", "released_metrics"], "._utility_metrics"),
    **_INTERNAL,
})


def build_lattice(data: "pd.DataFrame", quasi_identifiers: "Sequence[str] | str", *, client: Any = None,
                  **kwargs: Any) -> "Lattice":
    """Same as :meth:`Lattice.build`; with ``client`` (a ``dask.distributed`` client), the same
    lattice built over partitioned data on the client's workers (``data``: a dask dataframe, a
    Parquet dataset folder or a list of pandas frames in row order; needs ``incrowd[dask]``).

    Parameters
    ----------
    data : pandas.DataFrame, dask dataframe, str or list of pandas.DataFrame
        The table (with ``client``: partitioned data, see above).
    quasi_identifiers : str or sequence of str
        The attributes of the lattice.
    client : distributed.Client or None, default None
        Build on the client's workers (None: in this process).
    **kwargs
        The options of :meth:`Lattice.build` (``hierarchies``, ``intervals``, ``sensitive``,
        ``fraction``, ``max_nodes``, ``max_memory``, ...).

    Returns
    -------
    Lattice
        The lattice with its per-node histograms.
    """
    if client is not None:
        from .._runtime import backends as _backends

        return _backends.get("dask").build_lattice(data, quasi_identifiers, client=client, **kwargs)
    from ._lattice import Lattice

    return Lattice.build(data, quasi_identifiers, **kwargs)


def open_lattice(path: "str | os.PathLike") -> "Lattice":
    """Same as :meth:`Lattice.open`.

    Parameters
    ----------
    path : str or os.PathLike
        A lattice file written by :meth:`Lattice.save`.

    Returns
    -------
    Lattice
        The lattice as it was saved.
    """
    from ._lattice import Lattice

    return Lattice.open(path)


__all__ = [
    "Hierarchy",
    "read_hierarchy",
    "load_hierarchies",
    "find_hierarchy_file",
    "interval_hierarchy",
    "parse_assignments",
    "Lattice",
    "DEFAULT_MAX_NODES",
    "DEFAULT_MAX_MEMORY",
    "node_count",
    "estimate_bytes",
    "parse_size",
    "build_lattice",
    "open_lattice",
    "negotiate",
    "Negotiation",
    "Node",
    "RELAXATIONS",
    "max_suppression_count",
    "generalize",
    "GeneralizationResult",
    "METRICS",
    "node_metrics",
    "released_metrics",
    "local_suppression",
    "LocalSuppressionResult",
    "local_recoding",
    "LocalRecodingResult",
]
