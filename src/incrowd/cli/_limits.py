"""The lattice limits as the command line gives them (``--max-nodes``, ``--max-memory``), read
without loading typer: a one-shot ``incrowd publish`` reads them here."""

from __future__ import annotations

from ..generalization import DEFAULT_MAX_NODES, parse_max_nodes, parse_size

__all__ = ["DEFAULT_MAX_MEMORY_TEXT", "DEFAULT_MAX_NODES_TEXT", "lattice_limits"]

DEFAULT_MAX_NODES_TEXT = f"{DEFAULT_MAX_NODES}"
DEFAULT_MAX_MEMORY_TEXT = "8G"


def lattice_limits(max_nodes: str, max_memory: str) -> tuple[int | None, int | None]:
    """(node limit, byte limit) from the CLI's text; 'none' lifts either."""
    memory = None if max_memory.strip().lower() == "none" else parse_size(max_memory, "--max-memory")
    return parse_max_nodes(max_nodes, "--max-nodes"), memory
