"""Resolve DOI names over the Handle REST API: :class:`Client` and :class:`AsyncClient` (httpx).

Both speak to any Handle proxy — doi.org by default, or a ``doikit serve`` — and share the
sans-IO core in :mod:`doikit.handle._sansio`: they only move bytes. Errors are always a
:class:`doikit.ResolutionError` (never an httpx exception)::

    with Client() as client:
        record = client.resolve("doi:10.1000/182")
        print(client.url("10.1000/182"))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Self

import httpx

from doikit import __version__
from doikit._doi import DOI
from doikit._errors import (
    DOINotFound,
    HandleServerError,
    MalformedResponse,
    ResolutionError,
    TransportError,
)
from doikit.handle._sansio import (
    MAX_ALIAS_HOPS,
    Request,
    read_resolution,
    resolution_step,
    resolve_request,
    too_many_aliases,
    urls_of,
    which_ra_paths,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from types import TracebackType

    from doikit.handle import HandleRecord

DEFAULT_BASE_URL: Final = "https://doi.org"


def _user_agent(mailto: str | None) -> str:
    agent = f"doikit/{__version__} (+https://pypi.org/project/doikit/"
    return agent + (f"; mailto:{mailto})" if mailto else ")")


def _transport_error(doi: DOI, exc: httpx.HTTPError) -> TransportError:
    return TransportError(str(doi), f"resolving {doi}: {type(exc).__name__}: {exc}")


def _doi(text: str | DOI) -> DOI:
    return text if isinstance(text, DOI) else DOI(text)


class _Base:
    def __init__(self, base_url: str, timeout: float, mailto: str | None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.headers = {"User-Agent": _user_agent(mailto), "Accept": "application/json"}

    def _url(self, request: Request) -> httpx.URL:
        # The path is already percent-encoded (004 ch. 2); httpx must send it as it is.
        return httpx.URL(self.base_url + request.path, params=list(request.params))

    @staticmethod
    def _record(doi: DOI, response: httpx.Response) -> HandleRecord:
        return read_resolution(
            doi, response.status_code, response.headers.get("content-type", ""), response.content
        )

    @staticmethod
    def _ra_json(names: list[str], response: httpx.Response) -> object:
        try:
            return response.json()
        except ValueError:
            raise MalformedResponse(",".join(names), "Which RA did not answer JSON") from None

    @staticmethod
    def _which_ra(names: list[str], replies: list[object]) -> list[dict[str, str]]:
        out: list[dict[str, str]] = []
        for reply in replies:
            if not isinstance(reply, list):
                raise MalformedResponse(",".join(names), "Which RA did not answer a JSON list")
            out += [item for item in reply if isinstance(item, dict)]
        return out


class Client(_Base):
    """A synchronous resolver client.

    :param base_url: the proxy (``https://doi.org``, ``https://hdl.handle.net``, or a
        ``doikit serve``).
    :param timeout: seconds for each request.
    :param mailto: an address for the User-Agent, as polite bulk clients send.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        timeout: float = 10.0,
        mailto: str | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(base_url, timeout, mailto)
        self._http = httpx.Client(headers=self.headers, timeout=timeout, transport=transport)

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

    def _get(self, doi: DOI, request: Request) -> httpx.Response:
        try:
            return self._http.get(self._url(request))
        except httpx.HTTPError as exc:
            raise _transport_error(doi, exc) from exc

    def resolve(
        self,
        doi: str | DOI,
        *,
        types: Sequence[str] = (),
        indexes: Sequence[int] = (),
        auth: bool = False,
    ) -> HandleRecord:
        """The record of *doi* (any presentation), filtered by *types* and *indexes*.

        :raises InvalidDOI: before any request, for text that is not a DOI name.
        :raises ResolutionError: DOINotFound, HandleServerError, MalformedResponse or
            TransportError.
        """
        name = _doi(doi)
        request = resolve_request(name, types=types, indexes=indexes, auth=auth)
        return self._record(name, self._get(name, request))

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
        replies = []
        for path in which_ra_paths(names):
            try:
                response = self._http.get(self.base_url + path)
            except httpx.HTTPError as exc:
                raise TransportError(",".join(names), f"Which RA: {exc}") from exc
            replies.append(self._ra_json(names, response))
        return self._which_ra(names, replies)


class AsyncClient(_Base):
    """The asynchronous client: the same methods as :class:`Client`, awaited."""

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        timeout: float = 10.0,
        mailto: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(base_url, timeout, mailto)
        self._http = httpx.AsyncClient(headers=self.headers, timeout=timeout, transport=transport)

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
        await self._http.aclose()

    async def resolve(
        self,
        doi: str | DOI,
        *,
        types: Sequence[str] = (),
        indexes: Sequence[int] = (),
        auth: bool = False,
    ) -> HandleRecord:
        """The record of *doi*; see :meth:`Client.resolve`."""
        name = _doi(doi)
        request = resolve_request(name, types=types, indexes=indexes, auth=auth)
        try:
            response = await self._http.get(self._url(request))
        except httpx.HTTPError as exc:
            raise _transport_error(name, exc) from exc
        return self._record(name, response)

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
        replies = []
        for path in which_ra_paths(names):
            try:
                response = await self._http.get(self.base_url + path)
            except httpx.HTTPError as exc:
                raise TransportError(",".join(names), f"Which RA: {exc}") from exc
            replies.append(self._ra_json(names, response))
        return self._which_ra(names, replies)


__all__ = [
    "DEFAULT_BASE_URL",
    "AsyncClient",
    "Client",
    "DOINotFound",
    "HandleServerError",
    "MalformedResponse",
    "ResolutionError",
    "TransportError",
]
