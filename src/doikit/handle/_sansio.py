"""Resolution without I/O: the requests a client sends and how it reads the answers.

Both clients (:mod:`doikit.client`) move bytes only; this module decides what to ask and
what an answer means, so the sync and async clients cannot drift apart.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from urllib.parse import quote

from doikit._errors import DOINotFound, HandleServerError, MalformedResponse
from doikit.handle._locations import choose_location, parse_locations
from doikit.handle._protocol import RC_HANDLE_NOT_FOUND, RC_SUCCESS, RC_VALUES_NOT_FOUND
from doikit.handle._values import HandleFormatError, HandleRecord, record_from_json, type_matches

if TYPE_CHECKING:
    from collections.abc import Sequence

    from doikit._doi import DOI

#: How many HS_ALIAS hops ``url()`` follows, as the proxy.
MAX_ALIAS_HOPS: Final = 20


@dataclass(frozen=True, slots=True)
class Request:
    """A GET to send: the path and query under the client's base URL."""

    path: str
    params: tuple[tuple[str, str], ...] = ()


def handle_path(doi: DOI) -> str:
    """The REST path of a name: the doi URI's scheme-specific part, encoded as 004 ch. 2.

    So ``#``, ``?``, ``%``, spaces and non-ASCII survive the trip.

    >>> from doikit import DOI
    >>> handle_path(DOI("10.1000/456#789 x"))
    '/api/handles/10.1000/456%23789%20x'
    """
    return "/api/handles/" + doi.to_uri()[len("doi:") :]


def resolve_request(
    doi: DOI, *, types: Sequence[str] = (), indexes: Sequence[int] = (), auth: bool = False
) -> Request:
    """The request that resolves *doi*, filtered by *types* and *indexes*."""
    params = [("type", t) for t in types] + [("index", str(i)) for i in indexes]
    if auth:
        params.append(("auth", "true"))
    return Request(handle_path(doi), tuple(params))


def read_resolution(doi: DOI, status: int, content_type: str, body: bytes) -> HandleRecord:
    """The record in a REST reply, or the :class:`~doikit.ResolutionError` it means.

    :raises DOINotFound: rc 100 (HTTP 404).
    :raises HandleServerError: any other error code or HTTP error status.
    :raises MalformedResponse: a body that is not the Handle JSON.
    """
    name = str(doi)
    try:
        obj = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        obj = None
    code = obj.get("responseCode") if isinstance(obj, dict) else None
    if code == RC_HANDLE_NOT_FOUND or (status == 404 and code is None):
        raise DOINotFound(name, f"{name} is not a DOI name the resolver knows (404)")
    if status >= 400 or (isinstance(code, int) and code not in {RC_SUCCESS, RC_VALUES_NOT_FOUND}):
        message = obj.get("message", "") if isinstance(obj, dict) else ""
        detail = f": {message}" if message else ""
        raise HandleServerError(
            name,
            f"resolving {name} failed with HTTP {status}, responseCode {code}{detail}",
            status=status,
            response_code=code if isinstance(code, int) else None,
        )
    if obj is None or code is None:
        kind = content_type.split(";", 1)[0] or "no content type"
        raise MalformedResponse(
            name, f"resolving {name}: HTTP {status} without Handle JSON ({kind})"
        )
    try:
        return record_from_json(obj)
    except HandleFormatError as exc:
        raise MalformedResponse(name, f"resolving {name}: {exc}") from None


def alias_of(record: HandleRecord) -> str | None:
    """The DOI name an HS_ALIAS value points to, if the record has one."""
    value = record.first("HS_ALIAS")
    return None if value is None else value.text


def urls_of(record: HandleRecord) -> list[str]:
    """Every URL of a record, for multiple resolution: 10320/loc locations, then URL values."""
    out: list[str] = []
    loc = record.first("10320/loc")
    if loc is not None:
        with contextlib.suppress(HandleFormatError):
            out += [
                location.url(record.handle)
                for location in parse_locations(loc.text or "").locations
            ]
    out += [v.text for v in record.values if type_matches(v.type, "URL.") and v.text]
    return out


def url_of(record: HandleRecord, locatt: tuple[tuple[str, str], ...] = ()) -> str | None:
    """The URL the proxy would redirect to (aliases aside): 10320/loc first, then URL."""
    loc = record.first("10320/loc")
    if loc is not None:
        try:
            locations = parse_locations(loc.text or "")
        except HandleFormatError:
            locations = None
        if locations is not None and locations.locations:
            chosen = choose_location(locations.locations, locatt, locations.chooseby)
            if chosen is not None:
                return chosen.url(record.handle)
    for wanted in ("URL", "URL."):
        for value in record.values:
            if type_matches(value.type, wanted) and value.text:
                return value.text
    return None


def which_ra_paths(names: Sequence[str], limit: int = 4000) -> list[str]:
    """``/ra/…`` paths for *names*, as few as fit in *limit* characters each; a ``,``
    inside a name is sent as ``%2C``."""
    paths: list[str] = []
    current: list[str] = []
    size = 4
    for name in names:
        part = quote(name, safe="/:;()[]<>@!$&'*+=-._~").replace(",", "%2C")
        if current and size + len(part) + 1 > limit:
            paths.append("/ra/" + ",".join(current))
            current, size = [], 4
        current.append(part)
        size += len(part) + 1
    if current:
        paths.append("/ra/" + ",".join(current))
    return paths
