"""Errors and warnings raised by incrowd.

Every error message has one shape: what was wrong, where (parameter, column, row), what is
allowed, and what was received, e.g. ``k must be an integer in [2, n_rows=1080]; got 1500``.

Exception tree::

    IncrowdError                    base of everything incrowd raises on purpose
    +-- ParameterError (ValueError) a parameter is out of range, unknown, or of the wrong type
    +-- DataError (ValueError)      the data cannot be used: missing or non-numeric values in a
    |                               quasi-identifier, unknown column, empty input, bad file
    +-- VerificationError           a result failed its privacy check (k-anonymity); nothing was
    |                               written
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


class DataError(IncrowdError, ValueError):
    """The input data cannot be used as asked (names the column and row where it can)."""


class VerificationError(IncrowdError):
    """A result failed its privacy verification; no output was written."""


class StateLockedError(IncrowdError):
    """Another process holds the incremental state file's writer lock; nothing was written."""


class IncrowdWarning(UserWarning):
    """Base class of incrowd's warnings."""


class DataWarning(IncrowdWarning):
    """The data forced a choice the user should know about (e.g. a constant column)."""


class PrivacyWarning(IncrowdWarning):
    """Something in the output deserves a curator's attention before publication."""


__all__ = [
    "IncrowdError",
    "ParameterError",
    "DataError",
    "VerificationError",
    "StateLockedError",
    "IncrowdWarning",
    "DataWarning",
    "PrivacyWarning",
]
