"""The upload limit, enforced while the request arrives: Starlette's multipart parser spools a
whole body to a temporary file before any endpoint runs, so a check in the endpoint comes
after the disk has already taken every byte. A plain ASGI middleware (not ``BaseHTTPMiddleware``,
which would hide a client's disconnect from the lattice build) refuses a declared
``Content-Length`` over the limit before reading any of the body, and counts the bytes of a
body without one (chunked), stopping the request as soon as the count passes the limit."""

from __future__ import annotations

import json

#: room for the multipart boundaries and part headers around a file of exactly the limit
MULTIPART_OVERHEAD = 64 * 1024


class _BodyTooLarge(Exception):
    """Raised into the app from ``receive`` so that its body parser stops reading."""


def _message(limit: int) -> str:
    return (f"the request body is larger than the upload limit of {limit / (1024 * 1024):g} MB; start the "
            "server with a larger --max-upload-mb or upload a smaller file")


async def _refuse(send, limit: int) -> None:
    body = json.dumps({"error": _message(limit)}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class BodyLimit:
    """Every request body is capped at ``limit`` bytes plus the multipart overhead."""

    def __init__(self, app, limit: int):
        self.app = app
        self.limit = int(limit)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = self.limit + MULTIPART_OVERHEAD
        declared = dict(scope.get("headers") or ()).get(b"content-length", b"").strip()
        if declared.isdigit() and int(declared) > cap:
            await _refuse(send, self.limit)
            return
        received = 0
        over = False
        started = False

        async def counted_receive():
            nonlocal received, over
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap:
                    over = True
                    raise _BodyTooLarge
            return message

        async def guarded_send(message):
            nonlocal started
            if over:  # the app's own answer to the stopped body (400 or 500) gives way to ours
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except Exception:
            if not over:
                raise
        if over and not started:
            await _refuse(send, self.limit)
