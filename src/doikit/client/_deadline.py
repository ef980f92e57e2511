"""A total time limit for the sync client's requests.

httpx's timeouts apply to each read and write: a server that sends a byte every half second
holds a request with ``timeout=2`` for as long as it likes. :class:`DeadlineTransport` is
httpx's own transport over a network backend whose every connect, read and write gets only
what is left of the request's deadline (set by :func:`deadline` for the request in hand),
so the whole exchange, head and body, ends within it.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from typing import TYPE_CHECKING

import httpcore
import httpx

if TYPE_CHECKING:
    import ssl
    from collections.abc import Iterable, Iterator

    from httpcore._backends.base import SOCKET_OPTION

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "doikit_deadline", default=None
)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Every network operation inside ends within *seconds* from now, all together."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _left(timeout: float | None) -> float | None:
    """*timeout* cut to what is left of the deadline; past it, a timeout."""
    end = _DEADLINE.get()
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("no complete answer within the request's time limit")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self.inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, _left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, _left(timeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        return _Stream(self.inner.start_tls(ssl_context, server_hostname, _left(timeout)))

    def get_extra_info(self, info: str) -> object:
        return self.inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self.inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self.inner.connect_tcp(host, port, _left(timeout), local_address, socket_options)
        return _Stream(stream)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        return _Stream(self.inner.connect_unix_socket(path, _left(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's HTTP transport, through *proxy* if one is given, over the deadline backend.

    (A client given a transport no longer reads proxies from the environment: the caller
    passes the one the environment names for its host.)
    """

    def __init__(self, proxy: str | None = None) -> None:
        super().__init__(proxy=proxy)
        # httpcore's pools (direct and through a proxy) open every connection through their
        # network backend; httpx has no parameter for it, so it is set here.
        self._pool._network_backend = _Backend()  # noqa: SLF001
