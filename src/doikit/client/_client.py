"""The two clients: :class:`Client` (httpx) and :class:`AsyncClient` (aiohttp or httpx)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, Self, cast, overload

import httpx

from doikit._doi import DEFAULT_RESOLVER, DOI
from doikit.client._base import BaseClient, as_doi
from doikit.client._cache import cache_key
from doikit.client._deadline import DeadlineTransport, deadline
from doikit.client._http import (
    AIOHTTP,
    AiohttpEngine,
    HttpxEngine,
    Reply,
    SendError,
    TooLargeError,
    bounded,
    elsewhere,
    env_proxy,
)
from doikit.client._native import PER_SERVER, AsyncNativeResolver, NativeResolver
from doikit.client._policy import RetryPolicy
from doikit.handle.resolution import (
    MAX_ALIAS_HOPS,
    MAX_BODY,
    Request,
    metadata_request,
    resolution_step,
    shortdoi_request,
    too_many_aliases,
    urls_of,
    which_ra_requests,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence
    from types import TracebackType

    from doikit.client._cache import Cache
    from doikit.handle import HandleRecord

DEFAULT_BASE_URL: Final = DEFAULT_RESOLVER.rstrip("/")
#: Requests in flight in :meth:`AsyncClient.resolve_many` by default: over HTTP, and over the
#: native protocol (UDP, at most ``per_server`` of them to one server).
CONCURRENCY: Final = 64
NATIVE_CONCURRENCY: Final = 4096

# What a metadata request is for, as its errors say: the proxy only redirects it, to the
# RA's metadata service or to the landing page.
_METADATA: Final = "getting the metadata of"
_END: Final = object()  # the end of resolve_many's input

TextFormat = Literal["bibtex", "citation", "rdf-xml", "ris", "turtle"]
MetadataFormat = Literal["bibtex", "citation", "csl-json", "rdf-xml", "ris", "turtle"]


@dataclass(frozen=True, slots=True)
class Resolved:
    """One item of :meth:`AsyncClient.resolve_many`: the input as given (``doi``), its
    position in the input (``index``), and either the record (``result``) or the exception
    that resolving it raised (``error``: an :class:`~doikit.InvalidDOI` or a
    :class:`~doikit.ResolutionError`)."""

    index: int
    doi: str
    result: HandleRecord | None
    error: Exception | None

    @property
    def ok(self) -> bool:
        """Whether the DOI resolved."""
        return self.error is None


class Client(BaseClient):
    """A synchronous resolver client (httpx).

    :param base_url: the proxy (``https://doi.org``, ``https://hdl.handle.net``, or a
        ``doikit serve``).
    :param timeout: seconds for each request.
    :param mailto: an address for the User-Agent, as polite bulk clients send.
    :param cache: a :class:`Cache` to answer repeated resolutions from, within their TTL.
    :param retries: further attempts after a transport failure or a 429/502/503/504
        (``Retry-After`` honoured; exponential backoff from *backoff* seconds with full
        jitter, at most *max_backoff*).
    :param rate_limit: at most this many requests per second to the host.
    :param native: resolve over the native Handle protocol from the root down
        (:class:`~doikit.client._native.NativeResolver`: UDP, then TCP, then HTTP; *timeout*
        is then the total time of one resolution) instead of asking *base_url*; the other
        methods still ask *base_url*. Given *root* (``"HOST:PORT"``), a private root replaces
        the published one (and implies *native*). *certify* asks every server to sign its
        answers and refuses any whose signature does not verify.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        timeout: float = 10.0,
        mailto: str | None = None,
        cache: Cache | None = None,
        retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        rate_limit: float | None = None,
        max_body: int = MAX_BODY,
        transport: httpx.BaseTransport | None = None,
        native: bool = False,
        root: str | None = None,
        certify: bool = False,
    ) -> None:
        policy = RetryPolicy(retries, backoff, max_backoff)
        super().__init__(
            base_url,
            timeout=timeout,
            mailto=mailto,
            cache=cache,
            policy=policy,
            rate_limit=rate_limit,
            max_body=max_body,
        )
        self._http = httpx.Client(
            headers=self.headers,
            timeout=timeout,
            transport=transport or DeadlineTransport(env_proxy(self.base_url)),
            max_redirects=self.limits.max_redirects,
        )
        self.native: NativeResolver | None = None
        if native or root is not None:
            agent = self.headers["User-Agent"]
            self.native = NativeResolver(root, timeout=timeout, certify=certify, user_agent=agent)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections."""
        self._http.close()
        if self.native is not None:
            self.native.close()

    def _get(self, request: Request) -> Reply:
        """One attempt, within the limits: the total time (the transport's reads and writes
        each get what is left of it) and the body's size after decompression."""
        limits = self.limits
        first = self._url(request)
        url, headers = httpx.URL(first), dict(request.headers)
        try:
            with deadline(limits.total):
                # Redirects are followed here, not by httpx, which reads each redirect's
                # body whole: none of them is read at all.
                for _ in range(limits.max_redirects + 1):
                    with self._http.stream("GET", url, headers=headers) as response:
                        following = response.next_request if request.follow else None
                        if following is None:
                            return Reply(
                                response.status_code,
                                response.headers.get("content-type", ""),
                                response.headers.get("retry-after"),
                                bounded(response.iter_bytes(), limits.max_body),
                            )
                    url, headers = following.url, dict(following.headers)
        except TooLargeError as exc:
            at = elsewhere(first, str(url))
            raise SendError(limits.too_large(), final=True, at=at) from exc
        except httpx.HTTPError as exc:
            raise SendError(f"{type(exc).__name__}: {exc}", at=elsewhere(first, str(url))) from exc
        raise SendError(limits.too_many_redirects(), final=True)

    def _send(self, label: str, request: Request, doing: str = "resolving") -> Reply:
        attempts = self._attempts(label, doing)
        while True:
            time.sleep(attempts.before(time.monotonic()))
            try:
                reply = self._get(request)
            except SendError as exc:
                time.sleep(self._failed(label, attempts, exc))
                continue
            delay = attempts.answered(time.monotonic(), reply.status, reply.retry_after)
            if delay is None:
                return reply
            time.sleep(delay)

    def resolve(
        self,
        doi: str | DOI,
        *,
        types: Sequence[str] = (),
        indexes: Sequence[int] = (),
        auth: bool = False,
    ) -> HandleRecord:
        """The record of *doi* (any presentation), filtered by *types* and *indexes*.

        *auth* asks the server to skip its caches, and skips the client's.

        :raises InvalidDOI: before any request, for text that is not a DOI name.
        :raises ResolutionError: DOINotFound, HandleServerError, MalformedResponse or
            TransportError.
        """
        if self.native is not None:
            name = as_doi(doi)
            key = cache_key(name, types, indexes)
            cached = self._cached(key, auth)
            if cached is not None:
                return cached
            return self._kept(key, self.native.resolve(str(name), tuple(types), tuple(indexes)))
        name, key, cached, request = self._plan(doi, types, indexes, auth=auth)
        if cached is not None:
            return cached
        return self._resolved(name, key, self._send(str(name), request))

    def url(self, doi: str | DOI) -> str:
        """The URL the proxy would redirect to: HS_ALIAS followed, 10320/loc chosen, URL.

        :raises DOINotFound: also when the record has no URL to go to.
        """
        name = as_doi(doi)
        for _ in range(MAX_ALIAS_HOPS):
            step = resolution_step(self.resolve(name))
            if isinstance(step, str):
                return step
            name = step
        raise too_many_aliases(doi)

    def urls(self, doi: str | DOI) -> list[str]:
        """Multiple resolution: every URL of the record (10320/loc locations, URL values)."""
        return urls_of(self.resolve(doi))

    def which_ra(self, dois: Iterable[str]) -> list[dict[str, str]]:
        """Which RA for each name, in order (batched within the URL length limit)."""
        names = list(dois)
        label = ",".join(names)
        replies = [
            self._ra_json(names, self._send(label, request)) for request in which_ra_requests(names)
        ]
        return self._which_ra(names, replies)

    @overload
    def metadata(
        self, doi: str | DOI, format: Literal["csl-json"] = ..., *, style: None = None
    ) -> dict[str, Any]: ...
    @overload
    def metadata(
        self,
        doi: str | DOI,
        format: TextFormat,
        *,
        style: str | None = None,
        locale: str | None = None,
    ) -> str: ...
    @overload
    def metadata(
        self,
        doi: str | DOI,
        format: MetadataFormat,
        *,
        style: str | None = None,
        locale: str | None = None,
    ) -> str | dict[str, Any]: ...
    def metadata(
        self,
        doi: str | DOI,
        format: MetadataFormat = "csl-json",  # noqa: A002 - the issue's name for it
        *,
        style: str | None = None,
        locale: str | None = None,
    ) -> str | dict[str, Any]:
        """The metadata of *doi* by content negotiation (referent retrieval, 004 ch. 5): the
        proxy redirects to the RA's metadata service for the ``Accept`` type of *format*.

        ``csl-json`` gives a dict; every other format its text. *style* and *locale* (CSL
        names such as ``apa`` and ``en-US``) apply to ``citation``.

        :raises DOINotFound: 404 from the proxy or the RA.
        :raises MalformedResponse: an answer in another media type (a landing page: that
            resolver does not negotiate content for this name).
        """
        name = as_doi(doi)
        request = metadata_request(name, format, style, locale)
        reply = self._send(str(name), request, _METADATA)
        return self._metadata(name, format, reply)

    def expand_short(self, shortdoi: str) -> DOI:
        """The DOI name a shortDOI (``10/abc``, ``abc``, ``https://doi.org/10/abc``) stands for.

        :raises InvalidDOI: for text that is not a shortDOI.
        :raises DOINotFound: for an unknown shortDOI.
        """
        handle, request = shortdoi_request(shortdoi)
        return self._expanded(handle, self._send(handle, request))


class AsyncClient(BaseClient):
    """The asynchronous client: the methods of :class:`Client`, and batches.

    :meth:`resolve_many` resolves any number of names concurrently. The parameters are those
    of :class:`Client`, and:

    :param max_connections: the most connections open to the host at once.
    :param transport: an httpx transport (such as ``httpx.ASGITransport``); the client then
        sends with httpx.
    :param native: *root*, *certify*: as :class:`Client` (the native resolver is then
        :class:`~doikit.client._native.AsyncNativeResolver`).
    :param per_server: over the native protocol, the most UDP requests in flight to one
        server (:data:`~doikit.client._native.PER_SERVER`).
    """

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        timeout: float = 10.0,
        mailto: str | None = None,
        cache: Cache | None = None,
        retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        rate_limit: float | None = None,
        max_connections: int = 100,
        max_body: int = MAX_BODY,
        transport: httpx.AsyncBaseTransport | None = None,
        native: bool = False,
        root: str | None = None,
        certify: bool = False,
        per_server: int = PER_SERVER,
    ) -> None:
        policy = RetryPolicy(retries, backoff, max_backoff)
        super().__init__(
            base_url,
            timeout=timeout,
            mailto=mailto,
            cache=cache,
            policy=policy,
            rate_limit=rate_limit,
            max_body=max_body,
        )
        self._engine: HttpxEngine | AiohttpEngine
        if transport is None and AIOHTTP:
            self._engine = AiohttpEngine(self.base_url, self.headers, self.limits, max_connections)
        else:
            pool = httpx.Limits(max_connections=max_connections)
            self._engine = HttpxEngine(
                httpx.AsyncClient(
                    headers=self.headers,
                    timeout=timeout,
                    transport=transport,
                    limits=pool,
                    max_redirects=self.limits.max_redirects,
                ),
                self.limits,
            )
        self.native: AsyncNativeResolver | None = None
        if native or root is not None:
            self.native = AsyncNativeResolver(
                root,
                timeout=timeout,
                certify=certify,
                user_agent=self.headers["User-Agent"],
                per_server=per_server,
            )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connections."""
        await self._engine.close()
        if self.native is not None:
            await self.native.aclose()

    async def _send(self, label: str, request: Request, doing: str = "resolving") -> Reply:
        attempts = self._attempts(label, doing)
        url, headers = self._url(request), dict(request.headers) or None
        while True:
            wait = attempts.before(time.monotonic())
            if wait > 0:
                await asyncio.sleep(wait)
            try:
                reply = await self._engine.get(url, headers, request.follow)
            except SendError as exc:
                await asyncio.sleep(self._failed(label, attempts, exc))
                continue
            delay = attempts.answered(time.monotonic(), reply.status, reply.retry_after)
            if delay is None:
                return reply
            await asyncio.sleep(delay)

    async def resolve(
        self,
        doi: str | DOI,
        *,
        types: Sequence[str] = (),
        indexes: Sequence[int] = (),
        auth: bool = False,
    ) -> HandleRecord:
        """The record of *doi*; see :meth:`Client.resolve`."""
        if self.native is not None:
            name = as_doi(doi)
            key = cache_key(name, types, indexes)
            cached = self._cached(key, auth)
            if cached is not None:
                return cached
            found = await self.native.resolve(str(name), tuple(types), tuple(indexes))
            return self._kept(key, found)
        name, key, cached, request = self._plan(doi, types, indexes, auth=auth)
        if cached is not None:
            return cached
        return self._resolved(name, key, await self._send(str(name), request))

    async def url(self, doi: str | DOI) -> str:
        """The URL the proxy would redirect to; see :meth:`Client.url`."""
        name = as_doi(doi)
        for _ in range(MAX_ALIAS_HOPS):
            step = resolution_step(await self.resolve(name))
            if isinstance(step, str):
                return step
            name = step
        raise too_many_aliases(doi)

    async def urls(self, doi: str | DOI) -> list[str]:
        """Multiple resolution; see :meth:`Client.urls`."""
        return urls_of(await self.resolve(doi))

    async def which_ra(self, dois: Iterable[str]) -> list[dict[str, str]]:
        """Which RA for each name, in order; see :meth:`Client.which_ra`."""
        names = list(dois)
        label = ",".join(names)
        replies = [
            self._ra_json(names, await self._send(label, request))
            for request in which_ra_requests(names)
        ]
        return self._which_ra(names, replies)

    @overload
    async def metadata(
        self, doi: str | DOI, format: Literal["csl-json"] = ..., *, style: None = None
    ) -> dict[str, Any]: ...
    @overload
    async def metadata(
        self,
        doi: str | DOI,
        format: TextFormat,
        *,
        style: str | None = None,
        locale: str | None = None,
    ) -> str: ...
    @overload
    async def metadata(
        self,
        doi: str | DOI,
        format: MetadataFormat,
        *,
        style: str | None = None,
        locale: str | None = None,
    ) -> str | dict[str, Any]: ...
    async def metadata(
        self,
        doi: str | DOI,
        format: MetadataFormat = "csl-json",  # noqa: A002 - the issue's name for it
        *,
        style: str | None = None,
        locale: str | None = None,
    ) -> str | dict[str, Any]:
        """The metadata of *doi* by content negotiation; see :meth:`Client.metadata`."""
        name = as_doi(doi)
        request = metadata_request(name, format, style, locale)
        reply = await self._send(str(name), request, _METADATA)
        return self._metadata(name, format, reply)

    async def expand_short(self, shortdoi: str) -> DOI:
        """The DOI name a shortDOI stands for; see :meth:`Client.expand_short`."""
        handle, request = shortdoi_request(shortdoi)
        return self._expanded(handle, await self._send(handle, request))

    async def resolve_many(
        self,
        dois: Iterable[str | DOI] | AsyncIterable[str | DOI],
        *,
        concurrency: int | None = None,
        ordered: bool = False,
        types: Sequence[str] = (),
        indexes: Sequence[int] = (),
    ) -> AsyncIterator[Resolved]:
        """Resolve every DOI of *dois* (any iterable, sync or async, read lazily), yielding a
        :class:`Resolved` for each as it completes (``ordered=True``: in input order).

        At most *concurrency* requests are in flight (default :data:`CONCURRENCY`, and
        :data:`NATIVE_CONCURRENCY` over the native protocol, where at most ``per_server`` UDP
        requests go to one server at once); memory stays bounded for any input size. An
        invalid or unresolvable DOI gives an item with its ``error`` and never stops the batch.
        Answers from the cache are yielded without a request. Leaving the loop early cancels
        the requests still in flight.
        """
        if concurrency is None:
            concurrency = NATIVE_CONCURRENCY if self.native is not None else CONCURRENCY
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        # Imported here: the batches build on this module's Resolved.
        from doikit.client._batch import Batch  # noqa: PLC0415

        batch: Batch
        if self.native is not None:  # names started without a task each
            from doikit.client._native_batch import NativeBatch  # noqa: PLC0415

            batch = NativeBatch(self, types, indexes, ordered=ordered)
        else:
            batch = Batch(self, types, indexes, ordered=ordered)
        # A sync iterable is read without an async step per name.
        stream = aiter(dois) if isinstance(dois, AsyncIterable) else None
        source = iter(dois) if isinstance(dois, Iterable) and stream is None else None
        try:
            index = 0
            while True:
                if source is not None:
                    text: str | DOI | object = next(source, _END)
                else:
                    text = await anext(stream, _END)  # type: ignore[arg-type]
                if text is _END:
                    break
                for item in batch.add(index, cast("str | DOI", text)):
                    yield item
                index += 1
                # In order, the items done behind a slow one wait in `held`: read no
                # further than the window ahead of the oldest item not yet yielded.
                while (
                    batch.finished
                    or batch.running >= concurrency
                    or len(batch.held) + batch.running >= 4 * concurrency
                    or (batch.running and batch.full())
                ):
                    done = batch.take() if batch.finished else await batch.next_done()
                    for item in done:
                        yield item
            while batch.running or batch.finished:
                for item in await batch.next_done():
                    yield item
        finally:
            batch.cancel()
