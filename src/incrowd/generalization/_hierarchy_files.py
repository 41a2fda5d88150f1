"""How a hierarchy file is named: ARX's CSV files, ``<attribute>`` or
``<dataset>_hierarchy_<attribute>`` with the CSV suffix of the I/O's format registry.

Light on purpose (no numpy): the command line's help and the web's upload read these names.
"""

from __future__ import annotations

import os
from pathlib import PurePath

from ..io import suffix


def hierarchy_suffix() -> str:
    """The suffix of a hierarchy file: a hierarchy is a CSV file."""
    return suffix("csv")


def is_hierarchy_file(path: str | os.PathLike) -> bool:
    """Whether a file's suffix makes it a candidate hierarchy file (case ignored)."""
    return PurePath(path).suffix.lower() == hierarchy_suffix()


def hierarchy_file_name(attribute: str) -> str:
    """The file an attribute's hierarchy is looked for first: ``age`` -> ``age`` + the CSV suffix."""
    return f"{attribute}{hierarchy_suffix()}"


def arx_hierarchy_name(attribute: str, dataset: str = "*") -> str:
    """ARX's name of an attribute's hierarchy file (``*`` as the dataset: the glob pattern)."""
    return f"{dataset}_hierarchy_{attribute}{hierarchy_suffix()}"


def hierarchy_file_names(attribute: str = "<attribute>", dataset: str = "<name>") -> str:
    """Both names, quoted, as help and messages spell them."""
    return f"'{hierarchy_file_name(attribute)}' or '{arx_hierarchy_name(attribute, dataset)}'"


def attribute_from_filename(name: str) -> str:
    """The attribute a hierarchy file's name gives: the plain name and ARX's
    ``<dataset>_hierarchy_<attribute>`` both name it."""
    stem = name[: -len(hierarchy_suffix())] if is_hierarchy_file(name) else name
    marker = "hierarchy_"
    return stem[stem.rfind(marker) + len(marker):] if marker in stem else stem
