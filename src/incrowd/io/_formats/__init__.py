"""File formats, one module each, and the registry the CLI help, the web upload and the spec read.

A :class:`Format` names what incrowd already does for a format (its reader, writer and read-back
live in ``_tables``, ``_statfiles`` and ``_written``); it only gathers in one place what used to be
spelled in many: suffixes, a label, upload MIME types. No pandas is imported here.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import PurePath
from typing import Callable

from .._compression import strip_suffix


@dataclass(frozen=True)
class Format:
    """One file format.

    ``reader``, ``writer`` and ``read_back`` are ``"module:function"`` references to the existing
    functions (resolved on use, so that listing the formats loads no pandas); ``writer`` is None
    for a format that is read, not written.
    """

    name: str
    title: str
    suffixes: tuple[str, ...]
    mime_types: tuple[str, ...] = ()
    reader: str | None = None
    writer: str | None = None
    read_back: str | None = None
    #: a compressed file of this format is read (``a.csv.gz``)
    compressible: bool = False
    #: a statistical file (labels, missing codes): the web keeps the upload as it came, to write
    #: its release back with the same labels
    statistical: bool = False
    #: what a user should know when naming a file of this format, shown after its suffixes in help
    note: str = ""

    @property
    def label(self) -> str:
        """``SPSS (.sav, .zsav)``."""
        return f"{self.title} ({', '.join(self.suffixes)})"

    @property
    def written(self) -> bool:
        return self.writer is not None

    def function(self, which: str) -> Callable:
        """The reader, writer or read-back function this format points at."""
        ref = getattr(self, which)
        if ref is None:
            raise LookupError(f"{self.title} has no {which}")
        module, _, attr = ref.partition(":")
        return getattr(importlib.import_module(module, __package__), attr)


#: name -> format, in the order a user reads them
FORMATS: dict[str, Format] = {}


def register_format(fmt: Format) -> Format:
    """Add a format (or replace the one of the same name); its suffixes must be its own."""
    taken = {s: f.name for f in FORMATS.values() if f.name != fmt.name for s in f.suffixes}
    clash = [s for s in fmt.suffixes if s in taken]
    if clash:
        raise ValueError(f"format {fmt.name!r}: suffix {clash[0]!r} is already {taken[clash[0]]!r}'s")
    FORMATS[fmt.name] = fmt
    return fmt


def unregister_format(name: str) -> None:
    FORMATS.pop(name, None)


def format_of(path: str | os.PathLike) -> Format | None:
    """The format a file name says (a compression suffix looked through), None if no suffix matches."""
    name = strip_suffix(PurePath(path).name.lower())
    # the longest suffix first: '.csv.gz' before '.gz'
    pairs = sorted(((s, f) for f in FORMATS.values() for s in f.suffixes), key=lambda p: -len(p[0]))
    return next((f for s, f in pairs if name.endswith(s)), None)


def suffix(name: str) -> str:
    """The suffix of a file of format ``name`` that incrowd names itself (its first):
    ``suffix("csv")`` is ``".csv"``, ``suffix("parquet")`` is ``".parquet"``."""
    return FORMATS[name].suffixes[0]


def short_label(name: str) -> str:
    """The format's title and its first suffix: ``SPSS (.sav)``."""
    return f"{FORMATS[name].title} ({suffix(name)})"


def suffixes(*, written: bool = False) -> tuple[str, ...]:
    """Every suffix read (or, with ``written``, written), in registry order."""
    return tuple(s for f in FORMATS.values() if f.written or not written for s in f.suffixes)


def statistical_suffixes() -> tuple[str, ...]:
    return tuple(s for f in FORMATS.values() if f.statistical for s in f.suffixes)


def mime_types() -> tuple[str, ...]:
    return tuple(m for f in FORMATS.values() for m in f.mime_types)


def describe_formats(*, written: bool = False, notes: bool = False, conjunction: str = "or") -> str:
    """``CSV (.csv), Parquet (.parquet, .pq), ... or SAS transport (.xpt)``: the formats read (or,
    with ``written``, written), each with its note where ``notes``."""
    labels = [f"{f.label[:-1]}; {f.note})" if notes and f.note else f.label
              for f in FORMATS.values() if f.written or not written]
    return labels[0] if len(labels) < 2 else f"{', '.join(labels[:-1])} {conjunction} {labels[-1]}"


def upload_accept() -> str:
    """A file picker's accept list: every suffix and, for a compressible format, '.gz' (a browser
    matches the last suffix only)."""
    out = list(suffixes())
    if any(f.compressible for f in FORMATS.values()):
        out.append(".gz")
    return ",".join(dict.fromkeys(out))


# each registers itself, in the order a user reads them
from . import _csv  # noqa: E402, I001
from . import _parquet  # noqa: E402
from . import _spss  # noqa: E402
from . import _stata  # noqa: E402
from . import _sas  # noqa: E402
from . import _xport  # noqa: E402

__all__ = ["Format", "FORMATS", "register_format", "unregister_format", "format_of", "suffix", "short_label", "suffixes",
           "mime_types", "statistical_suffixes", "describe_formats", "upload_accept", "_csv", "_parquet", "_sas", "_spss",
           "_stata", "_xport"]
