"""What :class:`~doikit.client.Client` and :class:`~doikit.client.AsyncClient` share: the
settings, the URL of a request, its attempts (:mod:`doikit.client._policy`), the cache, and
the reading of answers (:mod:`doikit.handle.resolution`). The clients only move the bytes.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from doikit import __version__
from doikit._doi import DOI
from doikit._errors import MalformedResponse, TransportError
from doikit.client._cache import cache_key
from doikit.client._policy import Attempts, HostGate
from doikit.handle import HandleFormatError, loads
from doikit.handle.resolution import (
    ReplyLimits,
    read_metadata,
    read_resolution,
    read_shortdoi,
    resolve_request,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from doikit.client._cache import Cache
    from doikit.client._http import Reply, SendError
    from doikit.client._policy import RetryPolicy
    from doikit.handle import HandleRecord
    from doikit.handle.resolution import Request


def user_agent(mailto: str | None) -> str:
    agent = f"doikit/{__version__} (+https://pypi.org/project/doikit/"
    return agent + (f"; mailto:{mailto})" if mailto else ")")


def as_doi(text: str | DOI) -> DOI:
    return text if isinstance(text, DOI) else DOI(text)


class BaseClient:
    """What both clients share: the settings, the URL of a request, its attempts, the
    cache, and the reading of answers (sans-IO; the clients only move the bytes)."""

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
        self.headers = {"User-Agent": user_agent(mailto), "Accept": "application/json"}
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

    def _failed(self, label: str, attempts: Attempts, exc: SendError) -> float:
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
        name = as_doi(doi)
        key = cache_key(name, types, indexes)
        request = resolve_request(name, types=types, indexes=indexes, auth=auth)
        return name, key, self._cached(key, auth), request

    def _kept(self, key: str, record: HandleRecord) -> HandleRecord:
        """*record*, kept in the cache (a record the native resolver found)."""
        if self.cache is not None:
            self.cache.put(key, record)
        return record

    def _resolved(self, name: DOI, key: str, reply: Reply) -> HandleRecord:
        """The record in *reply*, kept in the cache."""
        record = read_resolution(name, reply.status, reply.content_type, reply.body)
        if self.cache is not None:
            self.cache.put(key, record)
        return record

    @staticmethod
    def _ra_json(names: list[str], reply: Reply) -> object:
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
    def _metadata(name: DOI, form: str, reply: Reply) -> str | dict[str, Any]:
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
    def _expanded(handle: str, reply: Reply) -> DOI:
        record = read_resolution(handle, reply.status, reply.content_type, reply.body)
        return read_shortdoi(handle, record)
