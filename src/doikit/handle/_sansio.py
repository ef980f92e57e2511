"""Resolution without I/O: the requests a client sends and how it reads the answers.

Both clients (:mod:`doikit.client`) move bytes only; this module decides what to ask and
what an answer means, so the sync and async clients cannot drift apart.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from doikit._doi import DOI
from doikit._errors import DOINotFound, HandleServerError, MalformedResponse
from doikit._present import url_path
from doikit.handle._locations import Location, choose_location, parse_locations
from doikit.handle._protocol import RC_HANDLE_NOT_FOUND, RC_SUCCESS, RC_VALUES_NOT_FOUND
from doikit.handle._values import HandleFormatError, HandleRecord, record_from_json, type_matches

if TYPE_CHECKING:
    from collections.abc import Sequence

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


def resolution_step(record: HandleRecord) -> str | DOI:
    """One step of single resolution: the URL the proxy would send a client to, or the DOI
    name the record's HS_ALIAS points to (the next record to resolve).

    :raises DOINotFound: when the record has neither.
    :raises InvalidDOI: when the alias does not name a DOI.
    """
    alias = record.first("HS_ALIAS")
    if alias is not None:
        return DOI(alias.text or "")
    redirect = choose_redirect(record)
    if redirect is None:
        raise DOINotFound(record.handle, f"{record.handle} has no URL to resolve to")
    return redirect.url


def too_many_aliases(doi: object) -> HandleServerError:
    """The error for an alias chain longer than :data:`MAX_ALIAS_HOPS`."""
    return HandleServerError(str(doi), f"{doi}: more than {MAX_ALIAS_HOPS} aliases")


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


@dataclass(frozen=True, slots=True)
class Redirect:
    """Where the proxy sends a resolution: the URL, the status, the TTL in seconds, and
    whether some location negotiates content (the answer then varies by ``Accept``)."""

    url: str
    status: int
    ttl: int
    vary: bool


def choose_redirect(
    record: HandleRecord, locatt: tuple[tuple[str, str], ...] = ()
) -> Redirect | None:
    """Where the proxy redirects for *record* (aliases aside), or None (handle-api.md §2.2,
    §2.4): a 10320/loc location chosen by *locatt* and weight, with the record's URL values
    as weight-0 last resorts; without 10320/loc, the first URL value, else the first URL.x.
    """
    loc_value = record.first("10320/loc")
    if loc_value is not None:
        try:
            locations = parse_locations(loc_value.text or "")
        except HandleFormatError:
            locations = None
        if locations is not None:
            legacy = tuple(
                Location(v.text or "", 0.0, (("mode", "legacy"),))
                for v in record.values
                if type_matches(v.type, "URL.")
            )
            pool = locations.locations + legacy
            vary = any("conneg" in (loc.get("http_role") or "") for loc in pool)
            chosen = choose_location(pool, locatt, locations.chooseby)
            if chosen is not None:
                url = chosen.url(record.handle)
                return Redirect(url, locations.http_sc, loc_value.ttl_seconds(), vary)
    for wanted in ("URL", "URL."):
        for value in record.values:
            if type_matches(value.type, wanted) and value.text:
                return Redirect(value.text, 302, value.ttl_seconds(), vary=False)
    return None


def which_ra_paths(names: Sequence[str], limit: int = 4000) -> list[str]:
    """``/ra/…`` paths for *names*, as few as fit in *limit* characters each; a ``,``
    inside a name is sent as ``%2C``."""
    paths: list[str] = []
    current: list[str] = []
    size = 4
    for name in names:
        part = url_path(name).replace(",", "%2C")  # the Handbook's encoding; ',' for Which RA
        if current and size + len(part) + 1 > limit:
            paths.append("/ra/" + ",".join(current))
            current, size = [], 4
        current.append(part)
        size += len(part) + 1
    if current:
        paths.append("/ra/" + ",".join(current))
    return paths
