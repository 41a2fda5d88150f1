"""Who may talk to the server: the Host a request names, the origin a state-changing request
comes from, and the headers that keep pages out of frames and foreign scripts out of pages.

DNS rebinding points a name the attacker controls at 127.0.0.1, so the browser sends that
name as Host: only the names the server was bound to (and those given with --allowed-host)
are answered. A page on another site can still make the visitor's browser POST here; browsers
send ``Origin`` (and ``Sec-Fetch-Site``) on every cross-origin POST, so a state-changing
request must carry this server's own origin or ``Sec-Fetch-Site: same-origin``/``none``. A
request with neither header does not come from a browser's cross-site fetch or form (curl, a
script, TestClient) and is let through: it could only do what its sender could do anyway.
Another site's page may link here (a navigation), but not load anything from here as an
image, script or fetch: each such request would make a new session, since the SameSite=strict
cookie stays behind.

A plain ASGI middleware: Starlette's ``BaseHTTPMiddleware`` would hide a client's disconnect
from the lattice build.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from urllib.parse import urlsplit

LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: Starlette's TestClient sends ``Host: testserver``; a name no DNS answers for an attacker.
TEST_CLIENT_HOST = "testserver"
_STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_SAME_ORIGIN_FETCH = frozenset({"same-origin", "none"})
_CROSS_FETCH = frozenset({"cross-site", "same-site"})
_DEFAULT_PORT = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_DOCS = ("/docs", "/redoc")
# FastAPI's /docs and /redoc load their scripts from a CDN; they show no user data.
_DOCS_CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
             "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; img-src 'self' data: https:; "
             "frame-ancestors 'none'; base-uri 'none'; object-src 'none'")


def _csp(nonce: str) -> str:
    # Inline <script> blocks carry the nonce; style attributes stay allowed (the pages set
    # widths inline), which cannot run code.
    return (f"default-src 'self'; script-src 'self' 'nonce-{nonce}'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; "
            "frame-ancestors 'none'")


def split_host(value: str) -> tuple[str, int | None]:
    """(lower-case name, port or None) of a Host header or an --allowed-host entry; IPv6
    addresses may come with or without brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif value.count(":") == 1:
        name, _, port = value.partition(":")
    else:  # a bare name or an unbracketed IPv6 address
        name, port = value, ""
    if port and not port.isdigit():
        raise ValueError(f"port {port!r} is not a number")
    return name.rstrip("."), int(port) if port else None


def bound_hosts(host: str, port: int, extra: Iterable[str] = ()) -> list[str]:
    """The hosts a server bound to ``host``:``port`` answers to: the loopback names and ``host``,
    each with ``port``, and ``extra`` as given (a name alone allows any port)."""
    names = dict.fromkeys([*LOOPBACK, split_host(host)[0]])
    return [f"[{n}]:{port}" if ":" in n else f"{n}:{port}" for n in names] + list(extra)


class Guard:
    """Refuses foreign hosts (400) and cross-site state-changing requests (403), and adds the
    security headers to every response. ``allowed_hosts``: "name" (any port), "name:port", or
    "*" for any host (behind a proxy that checks it)."""

    def __init__(self, app, allowed_hosts: Iterable[str]):
        self.app = app
        entries = list(allowed_hosts)
        self.any_host = "*" in entries
        self.allowed = {split_host(e) for e in entries if e != "*"}

    def _host_ok(self, host: str | None) -> bool:
        if self.any_host:
            return True
        if not host:
            return False
        try:
            name, port = split_host(host)
        except ValueError:
            return False
        return (name, None) in self.allowed or (name, port) in self.allowed

    @staticmethod
    def _same_origin(scope, headers: dict[str, str]) -> bool:
        fetch_site = headers.get("sec-fetch-site")
        if fetch_site is not None and fetch_site not in _SAME_ORIGIN_FETCH:
            return False
        origin = headers.get("origin")
        if origin is None:
            return True  # a browser's cross-origin request always has Origin; see the module text
        parts = urlsplit(origin)
        if parts.scheme not in _DEFAULT_PORT or not parts.hostname:
            return False  # "null" (sandboxed frames, file: pages) and the like
        try:
            o_name, o_port = split_host(parts.netloc)
            h_name, h_port = split_host(headers.get("host", ""))
        except ValueError:
            return False
        default = _DEFAULT_PORT[parts.scheme]
        own_default = _DEFAULT_PORT.get(scope.get("scheme", "http"), 80)
        return o_name == h_name and (o_port or default) == (h_port or own_default)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        nonce = secrets.token_urlsafe(16)
        scope.setdefault("state", {})["csp_nonce"] = nonce
        csp = _DOCS_CSP if scope["path"].startswith(_DOCS) else _csp(nonce)
        extra = [(b"content-security-policy", csp.encode()), (b"x-frame-options", b"DENY"),
                 (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer")]

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []), *(h for h in extra if h[0] not in present)]
            await send(message)

        if not self._host_ok(headers.get("host")):
            await _refuse(send_with_headers, 400, f"host {headers.get('host', '')!r} is not served here; "
                          "start the server with --allowed-host to add it")
        elif ((scope["method"] in _STATE_CHANGING and not self._same_origin(scope, headers))
              or (headers.get("sec-fetch-site") in _CROSS_FETCH and headers.get("sec-fetch-mode") != "navigate")):
            await _refuse(send_with_headers, 403, "cross-site request refused: only this server's own "
                          "pages may send it")
        else:
            await self.app(scope, receive, send_with_headers)


async def _refuse(send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def csp_nonce(request) -> str:
    """The nonce this request's inline scripts must carry."""
    return request.scope.get("state", {}).get("csp_nonce", "")
