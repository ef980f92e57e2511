"""Resolve DOI names over the Handle REST API: :class:`Client` and :class:`AsyncClient`.

Both speak to any Handle proxy — doi.org by default, or a ``doikit serve`` — and share the
sans-IO core in :mod:`doikit.handle.resolution` (what to ask, what an answer means) and
:mod:`doikit.client._policy` (when to retry, how fast to ask): they only move bytes. Errors are
always a :class:`doikit.ResolutionError` (never an httpx or aiohttp exception)::

    with Client(mailto="you@example.org") as client:
        record = client.resolve("doi:10.1000/182")
        print(client.url("10.1000/182"))

    async with AsyncClient(rate_limit=20) as client:
        async for item in client.resolve_many(lines):
            print(item.doi, item.result or item.error)

With ``native=True`` (or ``root="HOST:PORT"``) both resolve over the native Handle protocol
from the root down instead (:class:`NativeResolver`, :class:`AsyncNativeResolver`: UDP, TCP,
HTTP; no proxy); docs/resolution.md says what is cached and how signatures are checked.

The sync client sends with httpx. The async client sends with aiohttp when it is installed
(the ``client`` extra installs it): for many small requests it is several times faster than
httpx's async stack on the same machine (BENCHMARKS.md). Given an httpx ``transport`` (such as
``httpx.ASGITransport`` for an in-process server), or without aiohttp, it sends with httpx.
"""

from doikit._errors import (
    DOINotFound,
    HandleServerError,
    MalformedResponse,
    ResolutionError,
    TransportError,
)
from doikit.client._cache import Cache
from doikit.client._client import (
    CONCURRENCY,
    DEFAULT_BASE_URL,
    NATIVE_CONCURRENCY,
    AsyncClient,
    Client,
    MetadataFormat,
    Resolved,
)
from doikit.client._native import PER_SERVER, AsyncNativeResolver, NativeResolver
from doikit.client._policy import RetryPolicy
from doikit.handle.resolution import METADATA_TYPES, ReplyLimits

__all__ = [
    "CONCURRENCY",
    "DEFAULT_BASE_URL",
    "METADATA_TYPES",
    "NATIVE_CONCURRENCY",
    "PER_SERVER",
    "AsyncClient",
    "AsyncNativeResolver",
    "Cache",
    "Client",
    "DOINotFound",
    "HandleServerError",
    "MalformedResponse",
    "MetadataFormat",
    "NativeResolver",
    "ReplyLimits",
    "ResolutionError",
    "Resolved",
    "RetryPolicy",
    "TransportError",
]
