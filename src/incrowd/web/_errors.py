"""Every error the server answers is JSON ``{"error": message}``, and no message shows where
the server keeps its files.

User data that cannot be decoded is the user's error (400), whatever the decoder raised. An
exception nobody expected becomes a JSON 500 naming only its type; the traceback goes to the
server's log. Before an error leaves, every server path in it is replaced: a sample's file by
the sample's name, a session folder, the data folder, the temporary folder or the home folder
by ``<server>``.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import tempfile
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from ..exceptions import DataError
from ..io import read_table

log = logging.getLogger("incrowd.web")
_DECODE_ERRORS: tuple[type[BaseException], ...] = (ValueError, TypeError, OSError, EOFError, zlib.error,
                                                   UnicodeError, OverflowError, IndexError, KeyError)
try:  # pyarrow is how Parquet is read; its errors subclass these in most versions, not all
    import pyarrow as _pa

    _DECODE_ERRORS += (_pa.ArrowException,)
except ImportError:  # pragma: no cover - pyarrow is a dependency
    pass
_MAX_DETAIL = 300


def read_user_table(path: Path, display: str) -> pd.DataFrame:
    """A user's file (an upload or a sample) as a frame of plain cells; any failure to decode it
    is a :class:`DataError` naming ``display``, never ``path``."""
    try:
        frame = read_table(path, parse=True)
    except DataError as exc:
        raise DataError(str(exc).replace(str(path), display)) from None
    except _DECODE_ERRORS as exc:
        detail = str(exc).replace(str(path), display)[:_MAX_DETAIL]
        raise DataError(f"cannot read {display!r}: {detail or type(exc).__name__}") from None
    for column in frame.columns:
        values = frame[column]
        if values.dtype == object:
            nested = values.map(lambda v: isinstance(v, (list, tuple, dict, set)) or hasattr(v, "__array__"))
            if nested.any():
                raise DataError(f"column {str(column)!r} of {display!r} holds lists or structures, not one "
                                "value per cell; flatten it before uploading")
    return frame


class Scrubber:
    """Replaces server paths in a message: ``names`` maps a file to what the user calls it;
    ``roots`` are folders whose paths are shown as ``<server>``."""

    def __init__(self, names: Mapping[str, str] = (), roots: Iterable[str | os.PathLike] = ()):
        self.names = sorted(dict(names).items(), key=lambda kv: -len(kv[0]))
        found = {str(r) for r in roots if r} | {tempfile.gettempdir(), str(Path.home()), sys.prefix}
        for r in list(found):
            found.add(os.path.realpath(r))
        roots = sorted((r for r in found if len(r) > 1), key=len, reverse=True)
        self._roots = re.compile("(?:" + "|".join(re.escape(r) for r in roots) + r")(?:[/\\][^\s'\"]*|(?![\w.-]))")

    def __call__(self, message: str) -> str:
        for path, name in self.names:
            message = message.replace(path, name)
        return self._roots.sub("<server>", message)


class JSONErrors:
    """Outermost-but-one ASGI layer: turns an unhandled exception into a JSON error and strips
    server paths from every JSON error body."""

    def __init__(self, app, scrub: Scrubber):
        self.app = app
        self.scrub = scrub

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False
        held: dict | None = None
        chunks: list[bytes] = []

        async def scrubbing_send(message):
            nonlocal started, held
            if message["type"] == "http.response.start":
                started = True
                if message["status"] >= 400:
                    held = message  # an error body is small: hold it until it is complete
                    return
            elif message["type"] == "http.response.body" and held is not None:
                chunks.append(message.get("body", b""))
                if message.get("more_body"):
                    return
                await self._send_error(send, held["status"], b"".join(chunks), held.get("headers", []))
                return
            await send(message)

        try:
            await self.app(scope, receive, scrubbing_send)
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            log.error("unhandled error in %s %s", scope.get("method"), scope.get("path"), exc_info=exc)
            if started:
                raise
            if isinstance(exc, DataError | ValueError):
                status, message = 400, f"the request could not be processed: {self.scrub(str(exc))[:_MAX_DETAIL]}"
            else:
                status, message = 500, f"internal error ({type(exc).__name__}); the server's log has the details"
            await self._send_error(send, status, json.dumps({"error": message}).encode(), [])

    async def _send_error(self, send, status: int, body: bytes, headers) -> None:
        try:
            payload = json.loads(body)
            if isinstance(payload, dict) and isinstance(payload.get("error"), str):
                payload["error"] = self.scrub(payload["error"])
            elif isinstance(payload, dict) and "detail" in payload:  # FastAPI's own HTTPException bodies
                payload = {"error": self.scrub(str(payload["detail"]))}
            body = json.dumps(payload).encode()
        except ValueError:  # a plain-text error from a lower layer
            text = body.decode("utf-8", "replace").strip() or f"HTTP {status}"
            body = json.dumps({"error": self.scrub(text[:_MAX_DETAIL])}).encode()
        kept = [(k, v) for k, v in headers if k.lower() not in (b"content-length", b"content-type")]
        await send({"type": "http.response.start", "status": status,
                    "headers": [*kept, (b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
