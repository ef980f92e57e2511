"""HTTP for the clients: one GET within the limits, its answer as a :class:`Reply`.

The async client's two engines (:class:`HttpxEngine`, :class:`AiohttpEngine`) follow
redirects themselves, so that a failure after one is known to be at the host it led to
(:func:`elsewhere`), and read a body only up to :attr:`ReplyLimits.max_body`
(:func:`bounded`, :func:`abounded`); the sync client does the same in ``Client._get``. A
transport's failure is a :class:`SendError`, which the clients turn into a
:class:`~doikit.TransportError` or a retry.
"""

from __future__ import annotations

import asyncio
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

import httpx

try:
    import aiohttp
    import yarl
except ImportError:  # pragma: no cover - the client extra installs both
    aiohttp = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from collections.abc import AsyncIterable, Iterable, Mapping

    from doikit.handle.resolution import ReplyLimits

#: Whether aiohttp is installed (the async client then sends with it).
AIOHTTP: Final = aiohttp is not None


@dataclass(frozen=True, slots=True)
class Reply:
    """An answer: its status, Content-Type, Retry-After and body (read within the limits)."""

    status: int
    content_type: str
    retry_after: str | None
    body: bytes


class SendError(Exception):
    """The transport failed (refused, reset, timed out); the message says how. *final*:
    trying again cannot help (a redirect loop, an answer over the size limit). *at*: the
    host a redirect sent the request to, when it failed there (:func:`elsewhere`)."""

    def __init__(self, message: str, *, final: bool = False, at: str | None = None) -> None:
        super().__init__(message)
        self.final = final
        self.at = at


def elsewhere(first: str, hop: str) -> str | None:
    """The host of *hop* when redirects took the request there from *first*'s host (the
    content negotiation goes on to the RA's metadata service), else None.

    >>> elsewhere("http://127.0.0.1:8000/10.1000/1", "https://ra.example/m/10.1000/1")
    'ra.example'
    >>> elsewhere("http://127.0.0.1:8000/10.1000/1", "http://127.0.0.1:8000/10.1000/2")
    """
    there = urlsplit(hop).netloc
    return None if there == urlsplit(first).netloc else there


#: The statuses whose Location a content-negotiated request follows (as aiohttp and httpx).
REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})


class TooLargeError(Exception):
    """The answer went over :attr:`ReplyLimits.max_body`."""


def bounded(chunks: Iterable[bytes], limit: int) -> bytes:
    """The chunks joined, or :class:`TooLargeError` once they pass *limit* bytes."""
    out = bytearray()
    for chunk in chunks:
        out += chunk
        if len(out) > limit:
            raise TooLargeError
    return bytes(out)


async def abounded(chunks: AsyncIterable[bytes], limit: int) -> bytes:
    """:func:`bounded` for an async stream."""
    out = bytearray()
    async for chunk in chunks:
        out += chunk
        if len(out) > limit:
            raise TooLargeError
    return bytes(out)


class HttpxEngine:
    def __init__(self, http: httpx.AsyncClient, limits: ReplyLimits) -> None:
        self.http = http
        self.limits = limits

    async def get(self, url: str, headers: Mapping[str, str] | None, follow: bool) -> Reply:
        limits = self.limits
        target, sent = httpx.URL(url), dict(headers or {})
        try:
            async with asyncio.timeout(limits.total):
                # Redirects followed here, their bodies never read (see Client._get).
                for _ in range(limits.max_redirects + 1):
                    async with self.http.stream("GET", target, headers=sent) as response:
                        following = response.next_request if follow else None
                        if following is None:
                            body = await abounded(response.aiter_bytes(), limits.max_body)
                            break
                    target, sent = following.url, dict(following.headers)
                else:
                    raise SendError(limits.too_many_redirects(), final=True)
        except TooLargeError as exc:
            at = elsewhere(url, str(target))
            raise SendError(limits.too_large(), final=True, at=at) from exc
        except TimeoutError as exc:
            reason = f"no complete answer within {limits.total} s"
            raise SendError(reason, at=elsewhere(url, str(target))) from exc
        except httpx.HTTPError as exc:
            reason = f"{type(exc).__name__}: {exc}"
            raise SendError(reason, at=elsewhere(url, str(target))) from exc
        headers_in = response.headers
        return Reply(
            response.status_code,
            headers_in.get("content-type", ""),
            headers_in.get("retry-after"),
            body,
        )

    async def close(self) -> None:
        await self.http.aclose()


def env_proxy(base_url: str) -> str | None:
    """The proxy the environment names for *base_url* (``HTTPS_PROXY``, ``NO_PROXY``…), read
    once: aiohttp's ``trust_env`` reads it again for every request, at a third of the speed."""
    parts = urlsplit(base_url)
    if urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return urllib.request.getproxies().get(parts.scheme)


class AiohttpEngine:
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
                proxy=env_proxy(self.base_url),
            )
        return self.session

    async def get(self, url: str, headers: Mapping[str, str] | None, follow: bool) -> Reply:
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
                        if not follow or response.status not in REDIRECTS or not location:
                            body = await abounded(response.content.iter_any(), limits.max_body)
                            break
                    try:
                        target = response.url.join(yarl.URL(location))
                    except ValueError as exc:
                        raise aiohttp.InvalidURL(location) from exc
                else:
                    raise SendError(limits.too_many_redirects(), final=True)
        except TooLargeError as exc:
            at = elsewhere(url, str(target))
            raise SendError(limits.too_large(), final=True, at=at) from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            reason = str(exc) or "no answer within the timeout"
            at = elsewhere(url, str(target))
            raise SendError(f"{type(exc).__name__}: {reason}", at=at) from exc
        return Reply(
            response.status,
            response.headers.get("content-type", ""),
            response.headers.get("retry-after"),
            body,
        )

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()
            self.session = None
