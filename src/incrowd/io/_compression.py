"""Compressed CSV files: which compression a file uses, reading it whole, writing it.

The compression is taken from the file's first bytes (its magic number) and checked against its
name, so a ``.gz`` that is not gzip, or a truncated or corrupted stream, is refused with the file
named before any row is used. A compressed input is decompressed whole in memory first: a
damaged stream then fails here, with one clear message, and never half-way through parsing.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import zlib
from pathlib import Path
from typing import Any, Callable

from ..exceptions import DataError

#: compression -> (file name suffix, magic bytes at the start of the file)
FORMATS: dict[str, tuple[str, bytes]] = {
    "gzip": (".gz", b"\x1f\x8b"),
    "bz2": (".bz2", b"BZh"),
    "xz": (".xz", b"\xfd7zXZ\x00"),
    "zstd": (".zst", b"\x28\xb5\x2f\xfd"),
}


def suffix(kind: str) -> str:
    """The file name suffix of a compression: ``suffix("gzip")`` is ``".gz"``."""
    return FORMATS[kind][0]


def by_name(path: str | Path) -> str | None:
    """The compression a file name asks for (``data.csv.xz`` -> ``'xz'``), or None."""
    name = Path(path).name.lower()
    for kind, (suffix, _) in FORMATS.items():
        if name.endswith(suffix):
            return kind
    return None


def strip_suffix(name: str) -> str:
    """The file name without its compression suffix (``a.csv.gz`` -> ``a.csv``)."""
    kind = by_name(name)
    return name[: -len(FORMATS[kind][0])] if kind else name


def by_content(head: bytes) -> str | None:
    for kind, (_, magic) in FORMATS.items():
        if head.startswith(magic):
            return kind
    return None


def detect(path: Path) -> str | None:
    """The compression of an existing file, from its magic bytes; a name that promises a
    compression the bytes do not have is a DataError."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        raise DataError(f"cannot read input file {str(path)!r}: {exc.strerror or exc}") from exc
    found = by_content(head)
    named = by_name(path)
    if named is not None and found != named:
        raise DataError(
            f"input file {str(path)!r} is named {FORMATS[named][0]} but is not {named}-compressed "
            f"({'it looks ' + found + '-compressed' if found else 'its first bytes are not ' + named + ' data'})"
        )
    return found


def _zstandard():
    try:
        import zstandard
    except ImportError:
        return None
    return zstandard


def _decompress(kind: str, data: bytes) -> bytes:
    if kind == "gzip":
        return gzip.decompress(data)
    if kind == "bz2":
        return bz2.decompress(data)
    if kind == "xz":
        return lzma.decompress(data)
    zstd = _zstandard()
    decompressor, parts, rest = zstd.ZstdDecompressor(), [], data
    while rest:  # one frame at a time: a stream reader would stop quietly at a truncation
        frame = decompressor.decompressobj()
        parts.append(frame.decompress(rest))
        if not frame.eof:
            raise EOFError("compressed data ended before the end-of-frame marker")
        rest = frame.unused_data
    return b"".join(parts)


def read_bytes(path: Path, kind: str) -> bytes:
    """The decompressed content of ``path``; a damaged or truncated stream is a DataError."""
    if kind == "zstd" and _zstandard() is None:
        raise DataError(
            f"input file {str(path)!r} is zstd-compressed (.zst), which needs the 'zstandard' "
            "package (pip install zstandard); or decompress it first (zstd -d)"
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read input file {str(path)!r}: {exc.strerror or exc}") from exc
    try:
        out = _decompress(kind, data)
    except (EOFError, OSError, zlib.error, lzma.LZMAError, ValueError) as exc:
        # EOFError: truncated stream; OSError/zlib.error/LZMAError: corrupted bytes or CRC
        raise DataError(
            f"input file {str(path)!r} is not a readable {kind} stream (truncated or corrupted): "
            f"{exc or type(exc).__name__}"
        ) from exc
    except Exception as exc:  # zstandard.ZstdError, whose class only exists when installed
        raise DataError(
            f"input file {str(path)!r} is not a readable {kind} stream (truncated or corrupted): {exc}"
        ) from exc
    return out


def open_decoded(path: Path):
    """A binary reader of the decoded content, read as a stream (the web's upload limits count
    what it decodes), or None where only ``read_table`` can say what is wrong (zstd without the
    ``zstandard`` package)."""
    kind = detect(path)
    if kind is None:
        return open(path, "rb")
    if kind != "zstd":
        return _READERS[kind](path, "rb")
    zstandard = _zstandard()
    return None if zstandard is None else zstandard.ZstdDecompressor().stream_reader(open(path, "rb"), closefd=True)


#: the stream readers of the compressions Python has built in (zstd needs the package)
_READERS: dict[str, Callable[..., Any]] = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}


def pandas_compression(kind: str) -> dict:
    """pandas' ``compression=`` for an output of this kind (gzip without a timestamp, so the
    same table gives the same bytes)."""
    if kind == "zstd" and _zstandard() is None:
        raise DataError("writing a .zst file needs the 'zstandard' package (pip install zstandard)")
    return {"method": kind, "mtime": 0} if kind == "gzip" else {"method": kind}


def open_for_writing(path, kind: str | None):
    """A binary file object writing ``path`` compressed as ``kind`` (None: plain)."""
    if kind is None:
        return open(path, "wb")
    if kind == "gzip":
        return gzip.GzipFile(path, "wb", mtime=0)
    if kind == "bz2":
        return bz2.open(path, "wb")
    if kind == "xz":
        return lzma.open(path, "wb")
    zstd = _zstandard()
    if zstd is None:
        raise DataError("writing a .zst file needs the 'zstandard' package (pip install zstandard)")
    return zstd.open(path, "wb")
