"""The ASGI app of ``doikit serve``: routes, the store's life, and every refusal answered in
one place.

The routes live by job: :mod:`._reads` (the REST API's reads, the proxy, Which RA),
:mod:`._writes` (PUT, DELETE, deposit) and :mod:`._auth` (who is asking, and may they).
A route refuses by raising :class:`~._http.Refused`; a store that cannot answer raises
:class:`~.stores.StoreUnavailable`; the handlers here turn both into the Handle JSON answer
(or a page, off ``/api/``), and :class:`_Guard` makes sure nothing else escapes as a dropped
connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from operator import attrgetter
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Final

from starlette.applications import Starlette
from starlette.convertors import Convertor, register_url_convertor
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.routing import Route

from doikit.handle import RC_ERROR
from doikit.server import _pages
from doikit.server._auth import Authority
from doikit.server._fast import FastPaths, Reply
from doikit.server._http import Refused, api_error, page, query_params
from doikit.server._reads import Reads
from doikit.server._routes import API_ROUTES, ApiRoute
from doikit.server._tunnel import NativeTunnel
from doikit.server._upstream import Upstream
from doikit.server._writes import Writes
from doikit.server.stores import DamagedRecordError, Store, StoreUnavailable, open_store

if TYPE_CHECKING:
    import socket
    from collections.abc import AsyncIterator, Awaitable, Callable

    from starlette.requests import Request
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from doikit.server._native import NativeConfig

    Endpoint = Callable[[Request], Awaitable[Response]]


log = logging.getLogger("doikit.server")

#: What a 503 asks the client to wait before trying again, in seconds.
RETRY_AFTER: Final = 5
_WRITES: Final = frozenset({"PUT", "DELETE", "POST"})


class _Incidents:
    """One log line when the store stops answering and one when it answers again, however
    many requests are refused in between (a down database must not flood the log)."""

    def __init__(self) -> None:
        self.since: float | None = None
        self.refused = 0

    def unavailable(self, exc: Exception) -> None:
        self.refused += 1
        if self.since is None:
            self.since = time.monotonic()
            log.error("the store cannot answer (%s); answering 503 until it can", exc)

    def answered(self) -> None:
        if self.since is not None:
            took = time.monotonic() - self.since
            log.warning(
                "the store answers again after %.1f s; %d requests were refused",
                took,
                self.refused,
            )
            self.since, self.refused = None, 0


class _Guard:
    """The outermost layer: a response for every request. An exception after the handlers
    (a bug) is logged once and answered 500 when nothing was sent yet; either way the
    server sees the request end normally, so the connection is kept or closed cleanly.
    It also tells :class:`_Incidents` when the store answers again."""

    def __init__(
        self, inner: FastPaths, incidents: _Incidents, timeout: float | None, *, access_log: bool
    ) -> None:
        self.inner = inner
        self.incidents = incidents
        self.timeout = timeout
        self.access_log = access_log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        if self.idle:
            # The common request: nothing to time, log or watch; no wrapper around send.
            try:
                await self.inner(scope, receive, send)
            except Exception as exc:  # noqa: BLE001 - answered below, or already answered
                await self._failed(scope, send, exc)
            return
        started = False
        status = 500
        begun = time.monotonic()

        async def tracking(message: Message) -> None:
            nonlocal started, status
            if message["type"] == "http.response.start":
                started, status = True, int(message["status"])
            await send(message)

        try:
            if self.timeout is None:
                await self.inner(scope, receive, tracking)
            else:
                async with asyncio.timeout(self.timeout):
                    await self.inner(scope, receive, tracking)
        except Exception as exc:
            if started:
                return  # Starlette's handler answered and re-raised; it was logged there
            if isinstance(exc, TimeoutError):
                log.warning("%s %s took over %s s", scope["method"], scope["path"], self.timeout)
                status = 503
                await _answer(send, status, _TOO_LONG)
            else:
                log.exception("unexpected error on %s %s", scope["method"], scope["path"])
                await _answer(send, status, _UNEXPECTED)
            return
        finally:
            if self.access_log:
                _access(scope, status, time.monotonic() - begun)
        if status < 500:
            self.incidents.answered()

    @property
    def idle(self) -> bool:
        """Whether this layer has nothing to do for a request: no deadline, no access log,
        no incident under way."""
        return self.timeout is None and not self.access_log and self.incidents.since is None

    def now(self, target: bytes) -> Reply | None:
        """:meth:`FastPaths.now`, when this layer is :attr:`idle`: ``doikit serve``'s
        protocol then writes the reply itself (:mod:`._uvicorn`)."""
        return self.inner.now(target) if self.idle else None

    async def _failed(self, scope: Scope, send: Send, exc: Exception) -> None:
        """After an exception on the common path: a 500, unless a response went out (then
        Starlette's handler answered and logged it, and the server refuses a second one)."""
        try:
            await _answer(send, 500, _UNEXPECTED)
        except RuntimeError:
            return
        log.error("unexpected error on %s %s", scope["method"], scope["path"], exc_info=exc)


def _access(scope: Scope, status: int, seconds: float) -> None:
    """One access-log line on stdout: client, method, path as sent, status, time."""
    client = scope.get("client")
    who = client[0] if client else "-"
    path = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
    query = scope.get("query_string", b"").decode("latin-1")
    target = path + ("?" + query if query else "")
    print(  # noqa: T201 - the access log is this line
        f"{who} {scope['method']} {target!r} {status} {seconds * 1000:.1f} ms", flush=True
    )


_UNEXPECTED: Final = b'{"responseCode":2,"message":"unexpected server error"}'
_TOO_LONG: Final = b'{"responseCode":3,"message":"the request took too long"}'


async def _answer(send: Send, status: int, body: bytes) -> None:
    """A Handle JSON error answer sent straight through ASGI (no framework left to ask)."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json;charset=UTF-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class _AnyPath(Convertor[str]):
    """Like Starlette's ``path``, but also across decoded line breaks: a name may hold any
    character, and a path that does not match a route must not become a bare 404."""

    regex = r"[\s\S]*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


def _endpoint(route: ApiRoute, owners: SimpleNamespace) -> Endpoint:
    """What answers *route*: the one endpoint the table names for its methods, or one that
    picks by method (HEAD as GET)."""
    handlers: dict[str, Endpoint] = {
        method: attrgetter(operation.endpoint)(owners)
        for method, operation in route.methods.items()
    }
    if len(set(handlers.values())) == 1:
        return handlers[next(iter(handlers))]

    async def by_method(request: Request) -> Response:
        return await handlers["GET" if request.method == "HEAD" else request.method](request)

    return by_method


def create_app(
    store: Store | str | None = None,
    *,
    ra_name: str = "doikit",
    demo: bool = False,
    request_timeout: float | None = None,
    access_log: bool = False,
    native: NativeConfig | None = None,
    native_sockets: list[socket.socket] | None = None,
    upstream: str | None = None,
) -> ASGIApp:
    """The ASGI app of ``doikit serve`` over *store* (a :class:`Store` or a store URL).

    The store is opened when the app starts (ASGI lifespan) and closed when it stops;
    with *demo*, the demo records are loaded on start (``doikit serve`` says it is ready
    once its sockets listen: :mod:`._run`). A request that takes longer than
    *request_timeout* seconds is answered 503 (``doikit serve`` bounds it in its HTTP
    protocol instead, at no cost per request); with *access_log* each request is a line on
    stdout. With *native* the native Handle protocol
    is served too (:mod:`._native`), on the bound TCP and UDP *native_sockets* when given.
    With *upstream* (``""``: the published root; ``"HOST:PORT"``: a private one) names the
    store does not hold are resolved through the Handle System (:mod:`._upstream`).
    """
    register_url_convertor("anypath", _AnyPath())  # (Starlette keeps convertors in one table)
    the_store = open_store(store) if store is None or isinstance(store, str) else store
    authority = Authority(the_store)
    resolver = None if upstream is None else Upstream(upstream or None)
    reads = Reads(the_store, authority, ra_name=ra_name, upstream=resolver)
    writes = Writes(the_store, authority)
    incidents = _Incidents()
    tunnel = NativeTunnel()  # HANDLE.NET's HTTP interface; served once the store is open

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        await the_store.open()
        if demo:
            from doikit.server._demo import load_demo  # noqa: PLC0415

            await load_demo(the_store)
        listeners: list[Any] = []
        if native is not None:
            from doikit.server._native import serve_native  # noqa: PLC0415

            tunnel.service, listeners = await serve_native(
                the_store, writes, authority, native, native_sockets
            )
        try:
            yield
        finally:
            for listener in listeners:
                listener.close()
            if resolver is not None:
                await resolver.close()
            await the_store.close()

    async def refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Refused)  # noqa: S101 - registered for Refused only
        params = query_params(request)
        if request.method in _WRITES:
            params = [(k, v) for k, v in params if k != "callback"]  # JSONP is for reads
        return api_error(
            exc.response_code,
            exc.handle,
            exc.message,
            status=exc.status,
            params=params,
            headers=exc.headers,
        )

    async def unavailable(request: Request, exc: Exception) -> Response:
        incidents.unavailable(exc)
        headers = {"Retry-After": str(RETRY_AFTER)}
        if request.url.path.startswith("/api/"):
            message = "the store cannot answer now; try again later"
            return api_error(3, message=message, status=503, headers=headers)
        detail = "The directory cannot answer now. Try again in a few seconds."
        return page(_pages.error("Service unavailable", detail), 503, headers)

    async def damaged(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, DamagedRecordError)  # noqa: S101 - registered for DamagedRecordError only
        log.error("%s", exc)
        if request.url.path.startswith("/api/"):
            return api_error(RC_ERROR, exc.name, str(exc))
        return page(_pages.error("Server error", f"The record {exc.name} cannot be read."), 500)

    async def gone(_request: Request, _exc: Exception) -> Response:
        # The client left (or was closed for sending its body too slowly) while its body was
        # read: nobody to answer, nothing to report.
        return Response(status_code=400)

    async def server_error(request: Request, exc: Exception) -> Response:
        log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
        if request.url.path.startswith("/api/"):
            return api_error(RC_ERROR, message="unexpected server error")
        return page(_pages.error("Server error", "The server could not answer."), 500)

    owners = SimpleNamespace(reads=reads, writes=writes)
    api_methods = sorted({method for route in API_ROUTES for method in route.methods})
    routes = [
        *(Route(r.path, _endpoint(r, owners), methods=list(r.methods)) for r in API_ROUTES),
        # Any other path under /api/, with any method the API takes: HANDLE.NET's 404 (405
        # for a method an endpoint does not take), not the proxy's page.
        Route("/api/{rest:anypath}", reads.api_unknown, methods=api_methods),
        Route("/openapi.json", reads.openapi, methods=["GET", "HEAD"]),
        Route("/", reads.home, methods=["GET", "HEAD"]),
        Route("/{doi:anypath}", reads.proxy, methods=["GET", "HEAD"]),
    ]
    starlette = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            Refused: refused,
            StoreUnavailable: unavailable,
            DamagedRecordError: damaged,
            ClientDisconnect: gone,
            Exception: server_error,
        },
    )
    return _Guard(
        FastPaths(tunnel.wrap(starlette), the_store, misses=resolver is None),
        incidents,
        request_timeout,
        access_log=access_log,
    )
