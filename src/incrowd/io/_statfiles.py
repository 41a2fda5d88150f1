"""SPSS, Stata and SAS files: reading them with their metadata, and writing them back.

Read: ``.sav``/``.zsav`` (SPSS), ``.dta`` (Stata), ``.sas7bdat`` and ``.xpt`` (SAS), raw codes,
never value labels applied. Written: ``.sav``/``.zsav``, ``.dta`` and ``.xpt``.

The file's metadata lives in ``frame.attrs["statfile"]`` as a plain JSON-serializable dict::

    {"format": "spss", "file_label": ..., "notes": [...], "changed": [],
     "columns": {name: {"type": "double" | "string", "label": ..., "value_labels": [[code, label], ...],
                        "missing": {"ranges": [[lo, hi], ...]} or {"codes": ["a", ...]},
                        "missing_codes": [...], "format": ..., "measure": ..., "display_width": ...}}}

A user-defined missing value (SPSS: a declared code or range such as 99 = "refused"; Stata and
SAS: the extended missing values ``.a`` .. ``.z``) is NaN in the frame, so every algorithm counts
it as missing. Which code it was rides in the NaN's payload bits (an index into the column's
``missing_codes``): unlike a list of row positions it survives dropping, reordering and copying
rows, so a pass-through column is written back with the very code, in any row that is kept.
A plain NaN (system missing) has no payload and stays system missing.

A caller that changed a column's values (microaggregated, generalized) lists it in
``attrs["statfile"]["changed"]`` (:func:`mark_changed`): its variable label is kept, but its value
labels, missing-value definitions, user-missing codes and display format no longer describe it
and are not written. A generalized column of codes held as text is written back to SPSS and Stata
as labelled codes when ``attrs["statfile"]["recoded"]`` gives its recode (see
:func:`incrowd.generalization._cells.recode_groups`); a microaggregated column keeps its display
format, with two decimals where its means need them, and its measure.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable

from ..exceptions import DataError, ParameterError
from . import _compression

#: file name suffix -> format
READ_SUFFIXES = {".sav": "spss", ".zsav": "spss", ".dta": "stata", ".sas7bdat": "sas7bdat", ".xpt": "xport"}
WRITE_FORMATS = ("spss", "stata", "xport")
NAMES = {"spss": "SPSS", "stata": "Stata", "sas7bdat": "SAS (sas7bdat)", "xport": "SAS transport (xpt)"}
WRITTEN_TEXT = ".csv (also .gz, .bz2, .xz, .zst), .parquet/.pq, .sav/.zsav (SPSS), .dta (Stata), .xpt (SAS transport)"

# A quiet NaN whose mantissa carries this tag in its upper bits and a code index in its lowest
# 16; np.nan (0x7FF8000000000000) and the NaN of an invalid operation (0/0) never carry it.
_TAG = 0x7FF8_49C0_0000_0000
_TAG_MASK = 0xFFFF_FFFF_FFFF_0000
_INDEX_MASK = 0xFFFF
_MAX_CODES = _INDEX_MASK + 1

# compiled by re's cache on the first SPSS file written: its Unicode ranges take milliseconds
# to compile, which every command that imports this module would pay
_SPSS_NAME = r"^[A-Za-z@#$\u0080-\uffff][\w.@#$\u0080-\uffff]*$"
_STATA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def format_of(path: str | os.PathLike) -> str | None:
    """The statistical format a file name asks for (``'spss'``, ``'stata'``, ...) or None; a
    compression suffix is looked through (``a.sav.gz`` is SPSS)."""
    name = _compression.strip_suffix(Path(path).name.lower())
    for suffix, fmt in READ_SUFFIXES.items():
        if name.endswith(suffix):
            return fmt
    return None


def check_writable(path: str | os.PathLike, what: str = "output") -> None:
    """Refuse, before any work, an output whose extension names a format incrowd reads only."""
    fmt = format_of(path)
    if fmt is None:
        return
    suffix = next(s for s, f in READ_SUFFIXES.items() if f == fmt)
    if fmt not in WRITE_FORMATS:
        raise ParameterError(f"{what} {os.fspath(path)!r}: incrowd reads {suffix} files but does not "
                             f"write them; write one of {WRITTEN_TEXT}")
    if _compression.by_name(path) is not None:
        hint = " (.zsav is a compressed SPSS file)" if fmt == "spss" else ""
        raise ParameterError(f"{what} {os.fspath(path)!r}: a compressed {suffix} file is not written; "
                             f"name it {suffix}{hint}")


class StatMeta(dict):
    """The ``attrs["statfile"]`` dict. pandas deep-copies ``attrs`` into every frame and column
    it derives (each ``df[name]``), which for a wide file with many labels costs tens of
    milliseconds a time; this copy is cheap instead: its own top level and ``changed`` list (so
    marking one frame's columns never marks another's), the per-column metadata shared. Treat
    ``columns`` as read-only."""

    def __deepcopy__(self, memo):
        return StatMeta({**self, "changed": list(self.get("changed") or ())})


def mark_changed(frame, columns: Iterable[str]) -> None:
    """Note that ``columns`` of ``frame`` no longer hold the coding they were read with."""
    meta = frame.attrs.get("statfile")
    if not isinstance(meta, dict):
        return
    changed = set(meta.get("changed") or ()) | {str(c) for c in columns}
    frame.attrs["statfile"] = StatMeta({**meta, "changed": sorted(changed)})


def coded_reason(info: dict) -> str | None:
    """Why a column of a labelled file holds codes of categories, not amounts ("value labels",
    "measure nominal", both), or None: ``info`` is its entry in ``attrs["statfile"]["columns"]``.
    Labels on user-missing codes alone (99 "Not stated" on an amount) do not make a code."""
    missing = info.get("missing_codes") or ()
    labelled = any(not isinstance(code, str) and code not in missing for code, _ in info.get("value_labels") or ())
    measure = info.get("measure")
    coded_measure = measure in ("nominal", "ordinal")
    if not (labelled or coded_measure):
        return None
    return ", ".join((["value labels"] if labelled else []) + ([f"measure {measure}"] if coded_measure else []))


# ---------------------------------------------------------------------------------------------
# NaN payloads


def _tag_cells(values, mask, index):
    """values (float64, modified) with the cells of ``mask`` set to NaN carrying ``index``."""
    import numpy as np

    bits = values.view(np.uint64)
    bits[mask] = np.uint64(_TAG) | index[mask].astype(np.uint64)
    return values


def code_indices(values):
    """Per cell, the index of its user-missing code, or -1 (a value or a system missing)."""
    import numpy as np

    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)
    tagged = (bits & np.uint64(_TAG_MASK)) == np.uint64(_TAG)
    return np.where(tagged, (bits & np.uint64(_INDEX_MASK)).astype(np.int64), -1)


# ---------------------------------------------------------------------------------------------
# Reading


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


def read(path: Path, source=None):
    """The table of a statistical file, with its metadata in ``attrs["statfile"]``.

    ``source`` (a file object) replaces ``path`` as what is read, e.g. a decompressed copy.
    """
    import pyreadstat

    fmt = format_of(path)
    name = NAMES[fmt]
    readers = {"spss": pyreadstat.read_sav, "stata": pyreadstat.read_dta,
               "sas7bdat": pyreadstat.read_sas7bdat, "xport": pyreadstat.read_xport}
    options: dict[str, Any] = {}
    if fmt in ("spss", "stata"):
        options["apply_value_formats"] = False  # codes, not their labels
    if fmt != "xport":  # transport files have no user-missing values
        options["user_missing"] = True
    try:
        frame, meta = readers[fmt](source if source is not None else str(path), **options)
    except MemoryError:
        raise
    except Exception as exc:  # pyreadstat raises bare ReadstatError/PyreadstatError and friends
        raise DataError(f"cannot read {name} file {str(path)!r}: it is damaged, truncated or in "
                        f"another format ({_reason(exc)})") from None
    if fmt == "stata":
        _check_stata_complete(path, source)
    elif fmt == "xport":
        _check_xport_complete(path, source)
    frame.attrs["statfile"] = _metadata(frame, meta, fmt)
    return frame


def read_raw(path: str | os.PathLike, fmt: str):
    """A statistical file as a user's pyreadstat reads it: raw codes, a user-missing code as the
    code the file holds (SPSS 8 is 8, Stata ``.a`` is ``'a'``), strings as stored (readstat
    strips trailing blanks). No metadata, no NaN payloads: what a release is verified on."""
    import pyreadstat

    readers = {"spss": pyreadstat.read_sav, "stata": pyreadstat.read_dta,
               "sas7bdat": pyreadstat.read_sas7bdat, "xport": pyreadstat.read_xport}
    options: dict[str, Any] = {}
    if fmt in ("spss", "stata"):
        options.update(apply_value_formats=False, user_missing=True)
    frame, _ = readers[fmt](os.fspath(path), **options)
    return frame


def _check_stata_complete(path: Path, source) -> None:
    """A Stata 13+ file cut short at its end reads without error but loses its value labels;
    its closing tag tells."""
    if source is not None:
        data = source.getvalue()
        head, tail = data[:11], data[-64:]
    else:
        with open(path, "rb") as fh:
            head = fh.read(11)
            fh.seek(max(0, os.path.getsize(path) - 64))
            tail = fh.read()
    if head == b"<stata_dta>" and not tail.rstrip().endswith(b"</stata_dta>"):
        raise DataError(f"cannot read Stata file {str(path)!r}: it is truncated (it does not end "
                        "with </stata_dta>, so its value labels may be lost)")


_XPORT_RECORD = 80
_XPORT_MEMBER = b"HEADER RECORD*******MEMB"


def _check_xport_complete(path: Path, source) -> None:
    """A transport file is a sequence of 80-byte records whose headers give each row's size, and
    (version 8) the number of rows; the reader stops quietly wherever the file ends, so a file cut
    short would be read as fewer rows. Its headers are walked as the reader walks them and the
    data checked against them: whole records, every declared row present, and no partial row.
    A version 5 file does not record its row count: one cut at a record boundary that falls
    between rows cannot be told from a shorter file."""
    if source is not None:
        data = source.getvalue()
        size = len(data)

        def at(offset: int, length: int) -> bytes:
            return data[offset:offset + length]
    else:
        size = os.path.getsize(path)
        handle = open(path, "rb")

        def at(offset: int, length: int) -> bytes:
            handle.seek(offset)
            return handle.read(length)
    try:
        problem = _xport_problem(at, size)
    finally:
        if source is None:
            handle.close()
    if problem:
        raise DataError(f"cannot read {NAMES['xport']} file {str(path)!r}: {problem}")


def _xport_header(record: bytes) -> tuple[str, bytes] | None:
    if len(record) < _XPORT_RECORD or not record.startswith(b"HEADER RECORD*******") \
            or record[28:48] != b"HEADER RECORD!!!!!!!":
        return None
    return record[20:28].decode("ascii", "replace").strip(), record[48:78]


def _xport_number(field: bytes) -> int | None:
    text = field.decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None


def _xport_problem(at, size: int) -> str | None:
    """What is wrong with the transport file's structure, or None (headers the reader already
    refused are not judged again here)."""
    rec = _XPORT_RECORD
    library = _xport_header(at(0, rec))
    if library is None or library[0] not in ("LIBRARY", "LIBV8"):
        return None
    v8 = library[0] == "LIBV8"
    member = _xport_header(at(3 * rec, rec))
    namestr = _xport_header(at(7 * rec, rec))
    if member is None or namestr is None:
        return None
    width = _xport_number(member[1][26:30]) or 140  # a namestr's length (140; 136 on VAX)
    count = _xport_number(namestr[1][5:10])
    if count is None:
        return None
    start = 8 * rec
    names = at(start, count * width)
    if len(names) < count * width:
        return "it is truncated (its variable descriptions end early)"
    row_length = sum(int.from_bytes(names[i * width + 4:i * width + 6], "big") for i in range(count))
    pos = -(-(start + count * width) // rec) * rec
    header = _xport_header(at(pos, rec))
    if v8 and header is not None and header[0] in ("LABELV8", "LABELV9"):
        entries = _xport_number(header[1][:5]) or 0
        shorts = 3 if header[0] == "LABELV8" else 5
        pos += rec
        for _ in range(entries):
            head = at(pos, 2 * shorts)
            if len(head) < 2 * shorts:
                return "it is truncated (its long labels end early)"
            lengths = [int.from_bytes(head[2 * j:2 * j + 2], "big") for j in range(1, shorts)]
            pos += 2 * shorts + sum(lengths)
        pos = -(-pos // rec) * rec
        header = _xport_header(at(pos, rec))
    if header is None or header[0] not in ("OBS", "OBSV8"):
        return None
    data_start = pos + rec
    if size % rec:
        return (f"it is truncated (its {size} bytes are not a whole number of {rec}-byte "
                "records)")
    if row_length == 0:
        return None
    length = max(size - data_start, 0)
    declared = _xport_number(header[1]) if v8 else None
    if declared:  # version 8 records the row count: the data must hold exactly that
        need = declared * row_length
        if length < need:
            return (f"it is truncated (its header declares {declared} rows, the file holds "
                    f"{length // row_length})")
        padded = -(-need // rec) * rec
        rest = at(data_start + padded, length - padded)
        if rest.startswith(_XPORT_MEMBER):
            return "it holds more than one dataset; incrowd reads transport files of one dataset"
        if rest.strip(b" \x00"):
            return f"it has {len(rest)} bytes after its {declared} declared rows (damaged)"
        return None
    whole = length // row_length
    tail = at(data_start + whole * row_length, length - whole * row_length)
    if tail.strip(b" "):  # records are padded with blanks: anything else is a row cut short
        return f"it is truncated (its last row, row {whole + 1}, is cut short)"
    return None


def _plain(value):
    """A JSON-friendly number or text (numpy scalars become Python ones)."""
    return value.item() if hasattr(value, "item") else value


def _metadata(frame, meta, fmt: str) -> dict:
    import numpy as np
    import pandas as pd

    labels = dict(zip(meta.column_names, meta.column_labels or [None] * len(meta.column_names)))
    types = getattr(meta, "readstat_variable_types", None) or {}
    formats = getattr(meta, "original_variable_types", None) or {}
    measures = getattr(meta, "variable_measure", None) or {}
    widths = getattr(meta, "variable_display_width", None) or {}
    value_labels = getattr(meta, "variable_value_labels", None) or {}
    ranges = getattr(meta, "missing_ranges", None) or {}
    user_values = getattr(meta, "missing_user_values", None) or {}
    columns: dict[str, dict] = {}
    for name in frame.columns:
        info: dict[str, Any] = {"type": "string" if types.get(name) == "string" else "double"}
        if labels.get(name):
            info["label"] = labels[name]
        if name in value_labels:
            info["value_labels"] = [[_plain(code), text] for code, text in value_labels[name].items()]
        if formats.get(name):
            info["format"] = formats[name]
        if fmt == "spss":
            if measures.get(name) not in (None, "unknown"):
                info["measure"] = measures[name]
            if widths.get(name):
                info["display_width"] = int(widths[name])
        if name in ranges:
            info["missing"] = {"ranges": [[_plain(r["lo"]), _plain(r["hi"])] for r in ranges[name]]}
        elif name in user_values:
            info["missing"] = {"codes": [str(c) for c in user_values[name]]}
        column = frame[name]
        if "missing" in info and info["type"] == "double":
            # SPSS: declared codes read as numbers; Stata, SAS: letters in a numeric column
            if "ranges" in info["missing"]:
                values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
                mask = np.zeros(values.shape, dtype=bool)
                for lo, hi in info["missing"]["ranges"]:
                    mask |= (values >= lo) & (values <= hi)
                found = sorted({float(v) for v in values[mask]})
                key = values
            else:
                raw = column.to_numpy(dtype=object)
                codes = set(info["missing"]["codes"])
                mask = np.array([isinstance(v, str) and v in codes for v in raw], dtype=bool)
                found = sorted({raw[i] for i in np.flatnonzero(mask)})
                values = np.array([np.nan if m else v for v, m in zip(raw, mask)], dtype=np.float64)
                key = raw
            if len(found) > _MAX_CODES:
                raise DataError(f"column {name!r} uses {len(found)} distinct user-missing codes; at most "
                                f"{_MAX_CODES} are kept")
            if mask.any():
                position = {code: i for i, code in enumerate(found)}
                index = np.full(values.shape, -1, dtype=np.int64)
                index[mask] = [position[key[i]] for i in np.flatnonzero(mask)]
                frame[name] = _tag_cells(values.copy(), mask, index)
                info["missing_codes"] = [_plain(c) for c in found]
        columns[str(name)] = info
    return StatMeta(format=fmt, file_label=getattr(meta, "file_label", None) or None,
                    notes=list(getattr(meta, "notes", None) or []), columns=columns, changed=[])


# ---------------------------------------------------------------------------------------------
# Writing


def _is_numeric(series) -> bool:
    import pandas as pd

    return pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype)


def _kind(series) -> str:
    """'string' or 'double' (numbers, dates and times), as the file stores the column."""
    import pandas as pd

    if pd.api.types.is_string_dtype(series.dtype) or isinstance(series.dtype, pd.CategoricalDtype):
        present = series.dropna()
        return "string" if present.empty or isinstance(present.iloc[0], str) else "double"
    return "double"


def _check_names(frame, fmt: str, shown: str) -> None:
    for name in frame.columns:
        text = str(name)
        if fmt == "stata" and (not _STATA_NAME.match(text) or len(text) > 32):
            raise DataError(f"column {text!r} cannot be a Stata variable name (letters, digits and _, "
                            f"at most 32 characters, not starting with a digit); rename it before "
                            f"writing {shown!r}")
        if fmt == "spss" and (not re.match(_SPSS_NAME, text) or len(text.encode("utf-8")) > 64):
            raise DataError(f"column {text!r} cannot be an SPSS variable name (letters, digits and "
                            f"_ . @ # $, starting with a letter, at most 64 bytes); rename it before "
                            f"writing {shown!r}")
        if fmt == "xport" and (not _STATA_NAME.match(text) or len(text) > 32):
            raise DataError(f"column {text!r} cannot be a SAS variable name (letters, digits and _, "
                            f"at most 32 characters); rename it before writing {shown!r}")


def _labels_that_fit(pairs, numeric: bool, fmt: str, same: bool) -> dict:
    """The value labels a column of this kind can carry in ``fmt``."""
    fit = {}
    for code, text in pairs:
        if isinstance(code, str) and numeric:
            if fmt == "stata" and same:  # a Stata label of an extended missing value (.a)
                fit[code] = text
            continue
        if isinstance(code, str) != (not numeric):
            continue
        if fmt == "stata" and isinstance(code, float):
            if not code.is_integer():
                continue  # Stata labels integers only
            code = int(code)
        fit[code] = text
    return fit


def _recoded(series, info: dict, recode: dict, fmt: str, same: bool, name, shown: str):
    """(codes, the column's metadata as written) of a generalized column held as text: an
    unchanged cell (its code as text) its code, a group its code from ``recode``; a missing cell
    stays as it is (a user-missing code keeps its NaN payload)."""
    import numpy as np
    import pandas as pd

    # a group that is a user-missing code (Stata's .a) is that code: a NaN carrying its index
    codes_in = list(info.get("missing_codes") or ()) if same else []
    groups = {}
    for code, label in recode["groups"]:
        if isinstance(code, str):
            if code not in codes_in:
                continue
            tagged = np.array([np.nan])
            groups[str(label)] = float(_tag_cells(tagged, np.array([True]), np.array([codes_in.index(code)]))[0])
        else:
            groups[str(label)] = float(code)
    cells = series.to_numpy(dtype=object)
    text = np.array([isinstance(v, str) for v in cells], dtype=bool)
    values = np.full(cells.shape[0], np.nan)
    if (~text).any():
        # Python floats keep a NaN's payload bits (which user-missing code it is)
        values[~text] = np.array([np.nan if v is None else v for v in cells[~text]], dtype=np.float64)
    uniques: list = []
    if text.any():
        factor, uniques = pd.factorize(cells[text])
        codes = np.empty(len(uniques))
        for j, label in enumerate(uniques):
            if label in groups:
                codes[j] = groups[label]
                continue
            try:
                codes[j] = float(label)
            except ValueError:
                raise DataError(f"cannot write {NAMES[fmt]} file {shown!r}: column {str(name)!r} holds "
                                f"{label!r}, neither a code nor a group of its hierarchy") from None
        values[text] = codes[factor]
    pairs = [list(p) for p in (info.get("value_labels") or ()) if not isinstance(p[0], str) or same]
    # "*" (values with no common ancestor) is labelled only where a cell holds it: a label for
    # a value the file never holds would tell a reader some row might be "*"
    pairs += [[code, label] for code, label in recode["groups"]
              if not isinstance(code, str) and (label != "*" or "*" in set(uniques))]
    width = len(str(int(max([abs(c) for c, _ in recode["groups"] if not isinstance(c, str)] + [1]))))
    written = {**info, "type": "double", "value_labels": pairs, "measure": recode["measure"],
               "format": f"F{max(width, 1) + 1}.0" if fmt == "spss" else "%8.0g"}
    ranges = (info.get("missing") or {}).get("ranges") or ()
    new = [c for c, _ in recode["groups"] if not isinstance(c, str) and c not in (info.get("missing_codes") or ())]
    if not same or any(lo <= code <= hi for code in new for lo, hi in ranges):
        written.pop("missing", None)  # a group's code must never read as missing
        written.pop("missing_codes", None)
    return pd.Series(values), written


def _rescaled(series, info: dict, fmt: str, same: bool, name, formats: dict, measures: dict) -> None:
    """A microaggregated column keeps its display format, with decimals enough for its means,
    and its measure."""
    import numpy as np

    if fmt == "spss" and info.get("measure"):
        measures[name] = info["measure"]
    if not same or not info.get("format"):
        return
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    whole = bool(np.all(~np.isfinite(values) | (values == np.round(values))))
    text = str(info["format"])
    if fmt == "spss":
        m = re.fullmatch(r"(F|COMMA|DOT|DOLLAR|PCT|N)(\d+)(?:\.(\d+))?", text.upper())
        if m is None:
            formats[name] = text  # a date or time: means of dates are dates
            return
        kind, width, decimals = m.group(1), int(m.group(2)), int(m.group(3) or 0)
        wanted = decimals if whole else max(decimals, 2)
        kind = "F" if kind == "N" else kind  # N holds whole numbers only
        formats[name] = f"{kind}{width + (wanted - decimals) + (1 if decimals == 0 and wanted else 0)}.{wanted}"
    elif fmt == "stata":
        m = re.fullmatch(r"%(-?)(\d+)\.(\d+)([fg])(c?)", text)
        if m is None or m.group(4) == "g" or whole:
            formats[name] = text  # %g shows the decimals a mean has; dates stay dates
            return
        width, decimals = int(m.group(2)), int(m.group(3))
        wanted = max(decimals, 2)
        formats[name] = f"%{m.group(1)}{width + wanted - decimals}.{wanted}f{m.group(5)}"


def _with_missing_codes(series, codes: list, fmt: str):
    """A numeric column whose tagged missing cells hold their user-missing codes again, as the
    format writes them (SPSS: the code's number; Stata: its extended missing value)."""
    import numpy as np
    import pandas as pd

    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    index = code_indices(values)
    if fmt == "spss":
        return pd.Series(np.where(index >= 0, np.take(np.asarray(codes, dtype=np.float64), np.maximum(index, 0)),
                                  values))
    if fmt == "stata":
        coded = values.astype(object)
        for i in np.flatnonzero(index >= 0):
            coded[i] = codes[index[i]]
        return pd.Series(coded, dtype=object)
    return series


def write(frame, tmp: str, fmt: str, shown: str) -> None:
    """Write ``frame`` to ``tmp`` as ``fmt`` (the user's name for it is ``shown``)."""
    import pandas as pd
    import pyreadstat

    _check_names(frame, fmt, shown)
    meta = frame.attrs.get("statfile") if isinstance(frame.attrs.get("statfile"), dict) else {}
    described = meta.get("columns") or {}
    changed = set(meta.get("changed") or ())
    recoded = (meta.get("recoded") or {}) if fmt in ("spss", "stata") else {}  # a transport file holds text
    same = meta.get("format") == fmt
    columns: dict[str, Any] = {}
    column_labels: dict[str, str] = {}
    value_labels: dict[str, dict] = {}
    missing: dict[str, list] = {}
    formats: dict[str, str] = {}
    measures: dict[str, str] = {}
    widths: dict[str, int] = {}
    for name in frame.columns:
        series = frame[name].reset_index(drop=True)
        info = described.get(str(name)) or {}
        numeric = _is_numeric(series)
        # a column still of its type and not marked changed keeps its coding
        kept = bool(info) and str(name) not in changed and _kind(series) == info.get("type")
        if str(name) in recoded and not numeric:
            series, info = _recoded(series, info, recoded[str(name)], fmt, same, name, shown)
            numeric = kept = True
        elif str(name) in changed and numeric and info.get("type") == "double":
            _rescaled(series, info, fmt, same, name, formats, measures)
        if info.get("label"):
            column_labels[name] = info["label"]
        fit = _labels_that_fit(info.get("value_labels") or (), numeric, fmt, same) if kept else {}
        if fit and fmt != "xport":
            value_labels[name] = fit
        codes = info.get("missing_codes") if kept and same else None
        if codes and numeric:
            series = _with_missing_codes(series, codes, fmt)
        if kept and same and info.get("missing") and fmt in ("spss", "stata"):
            if fmt == "spss" and "ranges" in info["missing"]:
                missing[name] = [lo if lo == hi else {"lo": lo, "hi": hi} for lo, hi in info["missing"]["ranges"]]
            elif fmt == "stata" and "codes" in info["missing"]:
                missing[name] = list(info["missing"]["codes"])
        if kept and same and info.get("format"):
            formats[name] = info["format"]
        if kept and fmt == "spss":
            if info.get("measure"):
                measures[name] = info["measure"]
            if info.get("display_width"):
                widths[name] = info["display_width"]
        columns[name] = series
    options: dict[str, Any] = {"file_label": meta.get("file_label") or "", "column_labels": column_labels or None}
    if fmt == "spss":
        writer = pyreadstat.write_sav
        options.update(compress=Path(shown).name.lower().endswith(".zsav"), note=meta.get("notes") or None,
                       variable_value_labels=value_labels or None, missing_ranges=missing or None,
                       variable_measure=measures or None, variable_display_width=widths or None,
                       variable_format=formats or None)
    elif fmt == "stata":
        writer = pyreadstat.write_dta
        options.update(variable_value_labels=value_labels or None, missing_user_values=missing or None,
                       variable_format=formats or None)
    else:
        writer = pyreadstat.write_xport
        options.update(variable_format=formats or None)
    try:
        writer(pd.DataFrame(columns, columns=list(frame.columns)), tmp, **options)
    except MemoryError:
        raise
    except OSError:
        raise  # the atomic writer names the user's path and the reason
    except Exception as exc:  # pyreadstat's own errors: one line naming the user's file
        raise DataError(f"cannot write {NAMES[fmt]} file {shown!r}: {_reason(exc)}") from None


def shape(path: str | os.PathLike) -> tuple[int | None, int]:
    """(rows, columns) of a statistical file from its header alone, before any row is decoded:
    what a server checks against its limits first. Rows are None where the format does not
    record them (a SAS transport file). A compressed file is not looked into (None, 0): its
    size is only known once decompressed. Raises :class:`DataError` as :func:`read` does."""
    import pyreadstat

    fmt = format_of(path)
    if fmt is None:
        raise ParameterError(f"{os.fspath(path)!r} is not an SPSS, Stata or SAS file")
    if _compression.detect(Path(path)) is not None:
        return None, 0
    readers = {"spss": pyreadstat.read_sav, "stata": pyreadstat.read_dta,
               "sas7bdat": pyreadstat.read_sas7bdat, "xport": pyreadstat.read_xport}
    try:
        _, meta = readers[fmt](os.fspath(path), metadataonly=True)
    except MemoryError:
        raise
    except Exception as exc:  # pyreadstat's own errors, as in read()
        raise DataError(f"cannot read {NAMES[fmt]} file {os.fspath(path)!r}: it is damaged, truncated or in "
                        f"another format ({_reason(exc)})") from None
    rows = meta.number_rows
    return (None if rows is None or rows < 0 else int(rows)), int(meta.number_columns or 0)
