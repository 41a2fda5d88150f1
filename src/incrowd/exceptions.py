"""Errors and warnings raised by incrowd.

Every error message has one shape: what was wrong, where (parameter, column, row), what is
allowed, and what was received, e.g. ``k must be an integer in [2, n_rows=1080]; got 1500``.

Exception tree::

    IncrowdError                    base of everything incrowd raises on purpose
    +-- ParameterError (ValueError) a parameter is out of range, unknown, or of the wrong type
    |   +-- WorkBudgetExceeded      a search (SUDA2) would take more than its work budget; the
    |                               message says what to leave out or reduce
    +-- DataError (ValueError)      the data cannot be used: missing or non-numeric values in a
    |                               quasi-identifier, unknown column, empty input, bad file
    |   +-- OutputWriteError (OSError) an output could not be written (full disk, no
    |                               permission); names the user's path, nothing was left behind
    +-- VerificationError           a result failed its privacy check (k-anonymity); nothing was
    |                               written
    +-- BuildCancelled              a lattice build was stopped by its caller (cancel request,
    |                               client gone)
    +-- StateLockedError            another process is writing the incremental state file and did
                                    not finish within the wait; nothing was written

Warnings::

    IncrowdWarning (UserWarning)
    +-- DataWarning                 something about the data changed how it was treated
                                    (a constant column got scale 1)
    +-- PrivacyWarning              something in the output is derived from the data in a way a
                                    curator should know about
"""

from __future__ import annotations


class IncrowdError(Exception):
    """Base class of the errors incrowd raises on purpose."""


class ParameterError(IncrowdError, ValueError):
    """A parameter is unknown, of the wrong type, or out of its allowed range."""


class WorkBudgetExceeded(ParameterError):
    """A search would need more steps than its work budget (SUDA2 on many keys): it was refused
    before it started or stopped when it reached the budget; the message says what to reduce."""


class DataError(IncrowdError, ValueError):
    """The input data cannot be used as asked (names the column and row where it can)."""


class OutputWriteError(DataError, OSError):
    """An output could not be written; the message names the path the user gave and the reason.

    Also an :class:`OSError`, with ``errno``, ``strerror`` and ``filename`` (the user's path)
    when the operating system gave them.
    """

    @classmethod
    def of(cls, exc: BaseException, path: str, what: str = "output", hide: str | None = None) -> OutputWriteError:
        """``exc`` as an error about ``path``; ``hide`` (a temporary name) never appears."""
        import errno as _errno
        import os as _os

        reason = getattr(exc, "strerror", None) if isinstance(exc, OSError) else None
        code = getattr(exc, "errno", None) if isinstance(exc, OSError) else None
        text = " ".join(str(exc).split())
        for known in (_errno.ENOSPC, _errno.EDQUOT, _errno.EACCES, _errno.EROFS, _errno.EIO, _errno.EFBIG):
            if not reason and _os.strerror(known) in text:  # DuckDB's and Arrow's messages wrap it
                reason, code = _os.strerror(known), known
        if not reason:
            reason = text or type(exc).__name__
            if hide:
                reason = reason.replace(hide, path)
        lead = f"cannot write {path!r}" if what == "output" else f"cannot write {what} {path!r}"
        error = cls(f"{lead}: {reason}")
        error.errno = code
        error.strerror = reason
        error.filename = path
        return error

    def __str__(self) -> str:  # OSError would print "[Errno n] ..." from the fields set above
        return str(self.args[0]) if self.args else ""


class VerificationError(IncrowdError):
    """A result failed its privacy verification; no output was written."""


class BuildCancelled(IncrowdError):
    """A lattice build or a web job was stopped by its caller (a cancel request, a client that
    left or a session that ended)."""


class StateLockedError(IncrowdError):
    """Another process holds the incremental state file's writer lock; nothing was written."""


class IncrowdWarning(UserWarning):
    """Base class of incrowd's warnings."""


class DataWarning(IncrowdWarning):
    """The data forced a choice the user should know about (e.g. a constant column)."""


class PrivacyWarning(IncrowdWarning):
    """Something in the output deserves a curator's attention before publication."""


def name_list(names, limit: int = 5) -> str:
    """Column (or other) names for an error message: all of them when few, else the first
    ``limit`` and how many more, so a message stays one readable line however many there are
    (``['a', 'b', 'c', 'd', 'e'] and 199,995 more``)."""
    names = [str(n) for n in names]
    if len(names) <= limit + 1:  # "and 1 more" would be no shorter than the name itself
        return repr(names)
    return f"{names[:limit]!r} and {len(names) - limit:,} more"


def cell_text(cell) -> str:
    """A cell for an error message as the file shows it: text quoted (``'abc'``), a number as
    Python writes it (``0.5``, ``nan``), never numpy's repr (``np.float64(nan)``)."""
    if isinstance(cell, str):
        return repr(cell)
    item = getattr(cell, "item", None)  # a numpy scalar
    return str(item() if callable(item) and not isinstance(cell, (list, tuple)) else cell)


__all__ = [
    "IncrowdError",
    "ParameterError",
    "DataError",
    "VerificationError",
    "OutputWriteError",
    "BuildCancelled",
    "StateLockedError",
    "IncrowdWarning",
    "DataWarning",
    "PrivacyWarning",
]
