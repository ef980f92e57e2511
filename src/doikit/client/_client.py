"""The two clients: :class:`Client` (httpx) and :class:`AsyncClient` (aiohttp or httpx)."""

from __future__ import annotations

import asyncio
import collections
import time
import urllib.request
from collections.abc import AsyncIterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, Self, overload
from urllib.parse import urlencode, urlsplit

import httpx

from doikit import __version__
from doikit._doi import DEFAULT_RESOLVER, DOI
from doikit._errors import (
    DOIError,
    MalformedResponse,
    TransportError,
)
from doikit.client._cache import Cache, cache_key
from doikit.client._deadline import DeadlineTransport, deadline
from doikit.client._native import PER_SERVER, AsyncNativeResolver, NativeResolver
from doikit.client._policy import Attempts, HostGate, RetryPolicy
from doikit.handle import HandleFormatError, loads
from doikit.handle.resolution import (
    MAX_ALIAS_HOPS,
    MAX_BODY,
    ReplyLimits,
    Request,
    metadata_request,
    read_metadata,
    read_resolution,
    read_shortdoi,
    resolution_step,
    resolve_request,
    shortdoi_request,
    too_many_aliases,
    urls_of,
    which_ra_requests,
)

try:
    import aiohttp
    import yarl
except ImportError:  # pragma: no cover - the client extra installs both
    aiohttp = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
    from types import TracebackType

    from doikit.handle import HandleRecord

DEFAULT_BASE_URL: Final = DEFAULT_RESOLVER.rstrip("/")
#: Requests in flight in :meth:`AsyncClient.resolve_many` by default: over HTTP, and over the
#: native protocol (UDP, at most ``per_server`` of them to one server).
CONCURRENCY: Final = 64
NATIVE_CONCURRENCY: Final = 4096

# What a metadata request is for, as its errors say: the proxy only redirects it, to the
# RA's metadata service or to the landing page.
_METADATA: Final = "getting the metadata of"

TextFormat = Literal["bibtex", "citation", "rdf-xml", "ris", "turtle"]
MetadataFormat = Literal["bibtex", "citation", "csl-json", "rdf-xml", "ris", "turtle"]


def _user_agent(mailto: str | None) -> str:
    agent = f"doikit/{__version__} (+https://pypi.org/project/doikit/"
    return agent + (f"; mailto:{mailto})" if mailto else ")")


def _doi(text: str | DOI) -> DOI:
    return text if isinstance(text, DOI) else DOI(text)


@dataclass(frozen=True, slots=True)
class _Reply:
    status: int
    content_type: str
    retry_after: str | None
    body: bytes


class _SendError(Exception):
    """The transport failed (refused, reset, timed out); the message says how. *final*:
    trying again cannot help (a redirect loop, an answer over the size limit). *at*: the
    host a redirect sent the request to, when it failed there (:func:`_elsewhere`)."""

    def __init__(self, message: str, *, final: bool = False, at: str | None = None) -> None:
        super().__init__(message)
        self.final = final
        self.at = at


def _elsewhere(first: str, hop: str) -> str | None:
    """The host of *hop* when redirects took the request there from *first*'s host (the
    content negotiation goes on to the RA's metadata service), else None.

    >>> _elsewhere("http://127.0.0.1:8000/10.1000/1", "https://ra.example/m/10.1000/1")
    'ra.example'
    >>> _elsewhere("http://127.0.0.1:8000/10.1000/1", "http://127.0.0.1:8000/10.1000/2")
    """
    there = urlsplit(hop).netloc
    return None if there == urlsplit(first).netloc else there


#: The statuses whose Location a content-negotiated request follows (as aiohttp and httpx).
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})


class _TooLargeError(Exception):
    """The answer went over :attr:`ReplyLimits.max_body`."""


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


class _Base:
    def __init__(
        self,
        base_url: str,
        *,
        timeout: float,
        mailto: str | None,
        cache: Cache | None,
        policy: RetryPolicy,
        rate_limit: float | None,
        max_body: int,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.limits = ReplyLimits(max_body=max_body, total=timeout)
        self.headers = {"User-Agent": _user_agent(mailto), "Accept": "application/json"}
        self.cache = cache
        self.policy = policy
        self._host = urlsplit(self.base_url).netloc or self.base_url
        self._gate = HostGate(rate_limit, policy.max_backoff)

    def _attempts(self, label: str, doing: str) -> Attempts:
        return Attempts(self.policy, self._gate, label, self._host, doing)

    def _url(self, request: Request) -> str:
        # The path is already percent-encoded (004 ch. 2); it is sent as it is.
        query = "?" + urlencode(request.params) if request.params else ""
        return self.base_url + request.path + query

    def _failed(self, label: str, attempts: Attempts, exc: _SendError) -> float:
        """The wait before the next attempt, or the error when trying again cannot help."""
        if exc.final:
            raise TransportError(label, f"{label}: {attempts.where(str(exc), exc.at)}")
        return attempts.failed(time.monotonic(), str(exc), at=exc.at)

    def _cached(self, key: str, auth: bool) -> HandleRecord | None:
        return None if auth or self.cache is None else self.cache.get(key)

    def _plan(
        self, doi: str | DOI, types: Sequence[str], indexes: Sequence[int], *, auth: bool
    ) -> tuple[DOI, str, HandleRecord | None, Request]:
        """What a resolution needs: the name, its cache key, the cached record (None when
        a request must be sent) and the request to send."""
        name = _doi(doi)
        key = cache_key(name, types, indexes)
        request = resolve_request(name, types=types, indexes=indexes, auth=auth)
        return name, key, self._cached(key, auth), request

    def _kept(self, key: str, record: HandleRecord) -> HandleRecord:
        """*record*, kept in the cache (a record the native resolver found)."""
        if self.cache is not None:
            self.cache.put(key, record)
        return record

    def _resolved(self, name: DOI, key: str, reply: _Reply) -> HandleRecord:
        """The record in *reply*, kept in the cache."""
        record = read_resolution(name, reply.status, reply.content_type, reply.body)
        if self.cache is not None:
            self.cache.put(key, record)
        return record

    @staticmethod
    def _ra_json(names: list[str], reply: _Reply) -> object:
        try:
            return loads(reply.body)
        except HandleFormatError:
            raise MalformedResponse(",".join(names), "Which RA did not answer JSON") from None

    @staticmethod
    def _which_ra(names: list[str], replies: list[object]) -> list[dict[str, str]]:
        out: list[dict[str, str]] = []
        for reply in replies:
            if not isinstance(reply, list):
                raise MalformedResponse(",".join(names), "Which RA did not answer a JSON list")
            out += [item for item in reply if isinstance(item, dict)]
        return out

    @staticmethod
    def _metadata(name: DOI, form: str, reply: _Reply) -> str | dict[str, Any]:
        text = read_metadata(name, form, reply.status, reply.content_type, reply.body)
        if form != "csl-json":
            return text
        try:
            obj = loads(text)
        except HandleFormatError:
            obj = None
        if not isinstance(obj, dict):
            raise MalformedResponse(str(name), f"{name}: the CSL-JSON is not a JSON object")
        return obj

    @staticmethod
    def _expanded(handle: str, reply: _Reply) -> DOI:
        record = read_resolution(handle, reply.status, reply.content_type, reply.body)
        return read_shortdoi(handle, record)


class Client(_Base):
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
            transport=transport or DeadlineTransport(_env_proxy(self.base_url)),
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

    def _get(self, request: Request) -> _Reply:
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
                            return _Reply(
                                response.status_code,
                                response.headers.get("content-type", ""),
                                response.headers.get("retry-after"),
                                _bounded(response.iter_bytes(), limits.max_body),
                            )
                    url, headers = following.url, dict(following.headers)
        except _TooLargeError as exc:
            at = _elsewhere(first, str(url))
            raise _SendError(limits.too_large(), final=True, at=at) from exc
        except httpx.HTTPError as exc:
            raise _SendError(
                f"{type(exc).__name__}: {exc}", at=_elsewhere(first, str(url))
            ) from exc
        raise _SendError(limits.too_many_redirects(), final=True)

    def _send(self, label: str, request: Request, doing: str = "resolving") -> _Reply:
        attempts = self._attempts(label, doing)
        while True:
            time.sleep(attempts.before(time.monotonic()))
            try:
                reply = self._get(request)
            except _SendError as exc:
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
            name = _doi(doi)
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
        name = _doi(doi)
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
        name = _doi(doi)
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


def _bounded(chunks: Iterable[bytes], limit: int) -> bytes:
    """The chunks joined, or :class:`_TooLargeError` once they pass *limit* bytes."""
    out = bytearray()
    for chunk in chunks:
        out += chunk
        if len(out) > limit:
            raise _TooLargeError
    return bytes(out)


async def _abounded(chunks: AsyncIterable[bytes], limit: int) -> bytes:
    """:func:`_bounded` for an async stream."""
    out = bytearray()
    async for chunk in chunks:
        out += chunk
        if len(out) > limit:
            raise _TooLargeError
    return bytes(out)


class _HttpxEngine:
    def __init__(self, http: httpx.AsyncClient, limits: ReplyLimits) -> None:
        self.http = http
        self.limits = limits

    async def get(self, url: str, headers: Mapping[str, str] | None, follow: bool) -> _Reply:
        limits = self.limits
        target, sent = httpx.URL(url), dict(headers or {})
        try:
            async with asyncio.timeout(limits.total):
                # Redirects followed here, their bodies never read (see Client._get).
                for _ in range(limits.max_redirects + 1):
                    async with self.http.stream("GET", target, headers=sent) as response:
                        following = response.next_request if follow else None
                        if following is None:
                            body = await _abounded(response.aiter_bytes(), limits.max_body)
                            break
                    target, sent = following.url, dict(following.headers)
                else:
                    raise _SendError(limits.too_many_redirects(), final=True)
        except _TooLargeError as exc:
            at = _elsewhere(url, str(target))
            raise _SendError(limits.too_large(), final=True, at=at) from exc
        except TimeoutError as exc:
            reason = f"no complete answer within {limits.total} s"
            raise _SendError(reason, at=_elsewhere(url, str(target))) from exc
        except httpx.HTTPError as exc:
            reason = f"{type(exc).__name__}: {exc}"
            raise _SendError(reason, at=_elsewhere(url, str(target))) from exc
        headers_in = response.headers
        return _Reply(
            response.status_code,
            headers_in.get("content-type", ""),
            headers_in.get("retry-after"),
            body,
        )

    async def close(self) -> None:
        await self.http.aclose()


def _env_proxy(base_url: str) -> str | None:
    """The proxy the environment names for *base_url* (``HTTPS_PROXY``, ``NO_PROXY``…), read
    once: aiohttp's ``trust_env`` reads it again for every request, at a third of the speed."""
    parts = urlsplit(base_url)
    if urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return urllib.request.getproxies().get(parts.scheme)


class _AiohttpEngine:
    def __init__(
        self, base_url: str, headers: dict[str, str], limits: ReplyLimits, max_connections: int
    ) -> None:
        self.base_url = base_url
        self.headers = headers
        self.limits = limits
        self.max_connections = max_connections
        self.session: aiohttp.ClientSession | None = None

    def _session(self) -> aiohttp.ClientSession:
        if self.session is None:
            self.session = aiohttp.ClientSession(
                headers=self.headers,
                timeout=aiohttp.ClientTimeout(total=self.limits.total),
                connector=aiohttp.TCPConnector(limit=self.max_connections, ttl_dns_cache=300),
                proxy=_env_proxy(self.base_url),
            )
        return self.session

    async def get(self, url: str, headers: Mapping[str, str] | None, follow: bool) -> _Reply:
        limits = self.limits
        target = yarl.URL(url, encoded=True)
        try:
            async with asyncio.timeout(limits.total):
                # Redirects followed here, as the httpx paths do, so that a failure after
                # one is known to be at the host it led to.
                for _ in range(limits.max_redirects + 1):
                    async with self._session().get(
                        target, headers=headers, allow_redirects=False
                    ) as response:
                        location = response.headers.get("location")
                        if not follow or response.status not in _REDIRECTS or not location:
                            body = await _abounded(response.content.iter_any(), limits.max_body)
                            break
                    try:
                        target = response.url.join(yarl.URL(location))
                    except ValueError as exc:
                        raise aiohttp.InvalidURL(location) from exc
                else:
                    raise _SendError(limits.too_many_redirects(), final=True)
        except _TooLargeError as exc:
            at = _elsewhere(url, str(target))
            raise _SendError(limits.too_large(), final=True, at=at) from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            reason = str(exc) or "no answer within the timeout"
            at = _elsewhere(url, str(target))
            raise _SendError(f"{type(exc).__name__}: {reason}", at=at) from exc
        return _Reply(
            response.status,
            response.headers.get("content-type", ""),
            response.headers.get("retry-after"),
            body,
        )

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()
            self.session = None


class AsyncClient(_Base):
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
        self._engine: _HttpxEngine | _AiohttpEngine
        if transport is None and aiohttp is not None:
            self._engine = _AiohttpEngine(self.base_url, self.headers, self.limits, max_connections)
        else:
            pool = httpx.Limits(max_connections=max_connections)
            self._engine = _HttpxEngine(
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

    async def _send(self, label: str, request: Request, doing: str = "resolving") -> _Reply:
        attempts = self._attempts(label, doing)
        url, headers = self._url(request), dict(request.headers) or None
        while True:
            wait = attempts.before(time.monotonic())
            if wait > 0:
                await asyncio.sleep(wait)
            try:
                reply = await self._engine.get(url, headers, request.follow)
            except _SendError as exc:
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
            name = _doi(doi)
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
        name = _doi(doi)
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
        name = _doi(doi)
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
        batch: _Batch
        if self.native is not None:  # names started without a task each
            from doikit.client._native_batch import NativeBatch  # noqa: PLC0415 - builds on _Batch

            batch = NativeBatch(self, types, indexes, ordered=ordered)
        else:
            batch = _Batch(self, types, indexes, ordered=ordered)
        try:
            index = 0
            async for text in _aiter(dois):
                for item in batch.add(index, text):
                    yield item
                index += 1
                # In order, the items done behind a slow one wait in `held`: read no
                # further than the window ahead of the oldest item not yet yielded.
                while (
                    batch.finished
                    or batch.running >= concurrency
                    or len(batch.held) + batch.running >= 4 * concurrency
                ):
                    for item in await batch.next_done():
                        yield item
            while batch.running or batch.finished:
                for item in await batch.next_done():
                    yield item
        finally:
            batch.cancel()


class _Batch:
    """The state of one ``resolve_many``: requests in flight, items done, order kept."""

    def __init__(
        self, client: AsyncClient, types: Sequence[str], indexes: Sequence[int], *, ordered: bool
    ) -> None:
        self.client = client
        self.types = types
        self.indexes = indexes
        self.ordered = ordered
        self.finished: collections.deque[Resolved] = collections.deque()
        self.wake = asyncio.Event()
        self.tasks: set[asyncio.Task[None]] = set()
        self.held: dict[int, Resolved] = {}
        self.next_out = 0
        self.running = 0  # requests started whose item is not in `finished` yet

    def add(self, index: int, text: str | DOI) -> list[Resolved]:
        """Start resolving *text*, or return its item at once (invalid, or in the cache)."""
        try:
            name = _doi(text)
        except DOIError as exc:
            return self._out(Resolved(index, str(text), None, exc))
        hit = self.client._cached(cache_key(name, self.types, self.indexes), auth=False)  # noqa: SLF001
        if hit is not None:
            return self._out(Resolved(index, str(text), hit, None))
        self.running += 1
        task = asyncio.create_task(self._work(index, text, name))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return []

    async def _work(self, index: int, text: str | DOI, name: DOI) -> None:
        try:
            record = await self.client.resolve(name, types=self.types, indexes=self.indexes)
            item = Resolved(index, str(text), record, None)
        except Exception as exc:  # noqa: BLE001 - one failure must not stop the batch
            item = Resolved(index, str(text), None, exc)
        self.running -= 1
        self.finished.append(item)
        self.wake.set()

    async def next_done(self) -> list[Resolved]:
        """The items ready to yield, waiting for a request to finish if none is."""
        if not self.finished:
            self.wake.clear()
            await self.wake.wait()
        out: list[Resolved] = []
        while self.finished:
            out += self._out(self.finished.popleft())
        return out

    def _out(self, item: Resolved) -> list[Resolved]:
        if not self.ordered:
            return [item]
        self.held[item.index] = item
        out = []
        while self.next_out in self.held:
            out.append(self.held.pop(self.next_out))
            self.next_out += 1
        return out

    def cancel(self) -> None:
        for task in self.tasks:
            task.cancel()


async def _aiter(items: Iterable[str | DOI] | AsyncIterable[str | DOI]) -> AsyncIterator[str | DOI]:
    if isinstance(items, AsyncIterable):
        async for item in items:
            yield item
    else:
        for item in items:
            yield item
