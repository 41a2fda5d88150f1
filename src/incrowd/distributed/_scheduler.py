"""The ``--scheduler`` value: checked before anything starts, and a peer checked before Dask.

``local:N`` asks for a LocalCluster of N worker processes, N a whole number in [1, 4 x the
cores] (more only thrashes memory). Anything else is the address of a running scheduler,
``tcp://host:port`` (or ``host:port``); other Dask protocols (tls://, inproc://, ucx://) are
refused by name rather than half-supported.

Before handing an address to Dask, :func:`probe_scheduler` reads the first message a Dask
scheduler sends on every new connection (its handshake, a few hundred bytes) under a deadline.
A port that accepts TCP but stays silent (an HTTP server) then fails within the timeout, and a
peer that sends something else is refused at once, instead of Dask reading its first eight bytes
as a frame length and trying to allocate exabytes.
"""

from __future__ import annotations

import os
import re
import socket
import struct
import time
from dataclasses import dataclass

from ..exceptions import ParameterError

DEFAULT_TIMEOUT = 10.0
#: a Dask handshake is a small dict; anything announcing more is not one
_MAX_HANDSHAKE_BYTES = 1 << 20
_EXAMPLE = "e.g. local:4 or tcp://10.0.0.5:8786"


def max_local_workers() -> int:
    return 4 * (os.cpu_count() or 1)


@dataclass(frozen=True)
class SchedulerSpec:
    """A checked ``--scheduler``: ``workers`` for ``local:N``, else ``address`` (tcp://host:port)."""

    workers: int | None = None
    address: str | None = None
    host: str | None = None
    port: int | None = None


_ADDRESS = re.compile(r"^(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://)?(?P<host>\[[^\]]*\]|[^:/\[\]]*):(?P<port>[^:/]*)/?$")


def parse_scheduler(spec) -> SchedulerSpec:
    """Check a ``--scheduler`` value; a ParameterError names what is wrong with it."""
    if not isinstance(spec, str):
        raise ParameterError(f"--scheduler must be 'local:N' or a scheduler address ({_EXAMPLE}); got {spec!r}")
    text = spec.strip()
    if text.lower().startswith("local:") or text.lower() == "local":
        count = text[len("local:"):]
        cap = max_local_workers()
        if not re.fullmatch(r"[0-9]+", count):
            raise ParameterError(f"--scheduler local:N needs N >= 1 workers, a whole number in [1, {cap}]; "
                                 f"got {spec!r}")
        workers = int(count)
        if not 1 <= workers <= cap:
            raise ParameterError(f"--scheduler local:N needs N >= 1 workers and at most {cap} (4 x the "
                                 f"{os.cpu_count() or 1} cores of this machine); got {spec!r}")
        return SchedulerSpec(workers=workers)
    scheme = text.split("://", 1)[0].lower() if "://" in text else None
    if scheme is not None and scheme != "tcp":
        raise ParameterError(f"--scheduler address {spec!r} uses the {scheme}:// protocol; incrowd connects "
                             "to a Dask scheduler over tcp:// only (e.g. tcp://10.0.0.5:8786)")
    match = _ADDRESS.match(text)
    if not text or ":" not in text or match is None:
        raise ParameterError(f"--scheduler must be 'local:N' or a scheduler address ({_EXAMPLE}); got {spec!r}")
    host = match.group("host").strip("[]")
    port_text = match.group("port")
    if not host or not re.fullmatch(r"[0-9]{1,5}", port_text) or not 1 <= int(port_text) <= 65535:
        raise ParameterError(f"--scheduler address {spec!r} needs a host and a port in [1, 65535] "
                             f"({_EXAMPLE})")
    port = int(port_text)
    shown = f"[{host}]" if ":" in host else host
    return SchedulerSpec(address=f"tcp://{shown}:{port}", host=host, port=port)


def check_timeout(timeout) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 3600:
        raise ParameterError(f"--scheduler-timeout must be a number of seconds in (0, 3600]; got {timeout!r}")
    return float(timeout)


def _read_exactly(sock: socket.socket, n: int, deadline: float, spec: SchedulerSpec, timeout: float) -> bytes:
    chunks, got = [], 0
    while got < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ParameterError(_silent(spec, timeout))
        sock.settimeout(left)
        try:
            chunk = sock.recv(min(n - got, 65536))
        except TimeoutError:
            raise ParameterError(_silent(spec, timeout)) from None
        if not chunk:
            raise ParameterError(f"the peer at {spec.address} closed the connection without the Dask "
                                 "scheduler's greeting; is it a Dask scheduler?")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _silent(spec: SchedulerSpec, timeout: float) -> str:
    return (f"the peer at {spec.address} accepted the connection but sent no Dask scheduler greeting "
            f"within {timeout:g} s (--scheduler-timeout); is it a Dask scheduler?")


def probe_scheduler(spec: SchedulerSpec, timeout: float = DEFAULT_TIMEOUT) -> None:
    """Check within ``timeout`` seconds that ``spec.address`` speaks Dask's protocol."""
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((spec.host, spec.port), timeout=timeout)
    except TimeoutError:
        raise ParameterError(f"cannot reach the Dask scheduler at {spec.address}: no answer within "
                             f"{timeout:g} s (--scheduler-timeout)") from None
    except OSError as exc:
        raise ParameterError(f"cannot reach the Dask scheduler at {spec.address}: "
                             f"{exc.strerror or exc}") from None
    with sock:
        (size,) = struct.unpack("<Q", _read_exactly(sock, 8, deadline, spec, timeout))
        if not 16 <= size <= _MAX_HANDSHAKE_BYTES:
            raise ParameterError(f"the peer at {spec.address} does not speak the Dask protocol (its first "
                                 f"message announces {size} bytes); is it a Dask scheduler?")
        body = _read_exactly(sock, size, deadline, spec, timeout)
        (n_frames,) = struct.unpack_from("<Q", body)
        if not 1 <= n_frames <= 64 or 8 * (1 + n_frames) > size:
            raise ParameterError(f"the peer at {spec.address} does not speak the Dask protocol; is it a "
                                 "Dask scheduler?")
        lengths = struct.unpack_from(f"<{n_frames}Q", body, 8)
        if sum(lengths) > size - 8 * (1 + n_frames) + _MAX_HANDSHAKE_BYTES:
            raise ParameterError(f"the peer at {spec.address} does not speak the Dask protocol; is it a "
                                 "Dask scheduler?")
