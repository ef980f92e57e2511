"""Resolution without I/O: the requests a client sends, how it reads the answers, and what
a proxy redirects to.

Both clients (:mod:`doikit.client`) move bytes only; this module decides what to ask
(:class:`Request`, for every kind: records, metadata, shortDOIs, Which RA), what an answer
means, and how much of one is taken (:class:`ReplyLimits`), so the sync and async clients
cannot drift apart. ``doikit serve`` chooses its redirects with the same
:func:`choose_redirect` that the clients' ``url()`` follows.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from doikit._doi import DOI
from doikit._errors import DOINotFound, HandleServerError, InvalidDOI, MalformedResponse
from doikit._present import url_path
from doikit._syntax import RESOLVER_HOSTS
from doikit.handle._locations import Location, choose_location, parse_locations
from doikit.handle._protocol import RC_HANDLE_NOT_FOUND, RC_SUCCESS, RC_VALUES_NOT_FOUND
from doikit.handle._values import (
    HandleFormatError,
    HandleRecord,
    loads,
    record_from_json,
    type_matches,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

#: The largest answer a client takes by default, after decompression: 16 MiB.
MAX_BODY: Final = 16 << 20
#: How many HS_ALIAS hops ``url()`` follows, as the proxy.
MAX_ALIAS_HOPS: Final = 20


@dataclass(frozen=True, slots=True)
class Request:
    """A GET to send: the path and query under the client's base URL, extra headers, and
    whether to follow redirects (content negotiation goes on to the RA)."""

    path: str
    params: tuple[tuple[str, str], ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    follow: bool = False


@dataclass(frozen=True, slots=True)
class ReplyLimits:
    """How much of an answer a client takes, for every kind of request alike.

    *max_body* bounds the body after decompression (a small gzip reply can inflate to
    gigabytes); *total* bounds a request's time from the first byte sent to the last byte
    read, however slowly the server trickles; *max_redirects* bounds the redirects a
    content-negotiated request follows. JSON is read by :func:`doikit.handle.loads`,
    whose nesting is bounded by the stack: too deep is a malformed answer.
    """

    max_body: int = MAX_BODY
    total: float = 10.0
    max_redirects: int = 10

    def too_large(self) -> str:
        """Why an answer over :attr:`max_body` is refused."""
        return f"the answer is over {self.max_body} bytes"

    def too_many_redirects(self) -> str:
        """Why a request that went on redirecting is given up."""
        return f"more than {self.max_redirects} redirects"


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


def read_resolution(doi: DOI | str, status: int, content_type: str, body: bytes) -> HandleRecord:
    """The record in a REST reply, or the :class:`~doikit.ResolutionError` it means.

    :raises DOINotFound: rc 100 (HTTP 404).
    :raises HandleServerError: any other error code or HTTP error status.
    :raises MalformedResponse: a body that is not the Handle JSON.
    """
    name = str(doi)
    try:
        obj = loads(body)
    except HandleFormatError:
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


def which_ra_requests(names: Sequence[str]) -> list[Request]:
    """The Which RA requests for *names*, batched within the URL length limit."""
    return [Request(path) for path in which_ra_paths(names)]


def metadata_request(
    doi: DOI, form: str, style: str | None = None, locale: str | None = None
) -> Request:
    """The content-negotiated request for *doi*'s metadata as *form*: the proxy path with
    the ``Accept`` of :func:`metadata_accept`, redirects followed to the RA."""
    accept = metadata_accept(form, style, locale)
    return Request("/" + url_path(str(doi)), headers=(("Accept", accept),), follow=True)


def shortdoi_request(text: str) -> tuple[str, Request]:
    """The shortDOI's handle and the request for its alias.

    :raises InvalidDOI: when *text* is not a shortDOI.
    """
    handle = shortdoi_name(text)
    return handle, Request("/api/handles/" + handle, (("type", "HS_ALIAS"),))


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


#: The media type asked for by each ``metadata()`` format (handle-api.md §2.5; CSL-JSON,
#: BibTeX, formatted citations, RDF/XML and Turtle from Crossref, DataCite and mEDRA; RIS from
#: Crossref and DataCite).
METADATA_TYPES: Final = {
    "bibtex": "application/x-bibtex",
    "citation": "text/x-bibliography",
    "csl-json": "application/vnd.citationstyles.csl+json",
    "rdf-xml": "application/rdf+xml",
    "ris": "application/x-research-info-systems",
    "turtle": "text/turtle",
}


def metadata_accept(form: str, style: str | None = None, locale: str | None = None) -> str:
    """The ``Accept`` header that asks the proxy for *form* by content negotiation.

    >>> metadata_accept("citation", style="apa", locale="en-US")
    'text/x-bibliography; style=apa; locale=en-US'

    :raises ValueError: for an unknown format, or a style or locale on another format.
    """
    try:
        accept = METADATA_TYPES[form]
    except KeyError:
        known = ", ".join(METADATA_TYPES)
        raise ValueError(f"unknown metadata format {form!r}; use one of {known}") from None
    if (style or locale) and form != "citation":
        raise ValueError("style and locale apply to the 'citation' format only")
    for key, value in (("style", style), ("locale", locale)):
        if value:
            if not value.replace("-", "").replace("_", "").replace(".", "").isalnum():
                raise ValueError(f"{key} {value!r} is not a CSL {key} name")
            accept += f"; {key}={value}"
    return accept


def read_metadata(doi: DOI, form: str, status: int, content_type: str, body: bytes) -> str:
    """The metadata text in the answer to a content-negotiated request (after redirects).

    :raises DOINotFound: 404 (the proxy or the RA does not know the name).
    :raises HandleServerError: any other error status (406: the RA has no such format).
    :raises MalformedResponse: a success in another media type, such as the landing page a
        resolver without content negotiation redirects to.
    """
    name = str(doi)
    if status == 404:
        raise DOINotFound(name, f"{name}: no metadata, the DOI name is not known (404)")
    if status >= 400:
        raise HandleServerError(
            name, f"{name}: metadata as {form} failed with HTTP {status}", status=status
        )
    essence, _, params = content_type.partition(";")
    wanted = METADATA_TYPES[form]
    if essence.strip().lower() != wanted:
        got = essence.strip() or "no content type"
        raise MalformedResponse(
            name, f"{name}: asked for {wanted}, the resolver answered {got} (HTTP {status})"
        )
    charset = "utf-8"
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"')
    try:
        return body.decode(charset, errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def shortdoi_name(text: str) -> str:
    """The handle of a shortDOI in any presentation: ``10/abc``, ``abc``, ``doi:10/abc``,
    ``https://doi.org/10/abc`` (handle-api.md §5).

    >>> shortdoi_name("https://doi.org/10/G8R7PM")
    '10/g8r7pm'
    >>> shortdoi_name("b8xx35")
    '10/b8xx35'

    :raises InvalidDOI: when *text* is not a shortDOI.
    """
    rest = text.strip()
    lowered = rest.lower()
    for head in _SHORT_HEADS:
        if lowered.startswith(head):
            rest = rest[len(head) :]
            break
    code = rest.removeprefix("10/")
    if not code or not code.isascii() or not code.isalnum():
        raise InvalidDOI(text, "not-a-doi", None, "nor a shortDOI (10/ and letters or digits)")
    return "10/" + code.lower()


_SHORT_HEADS = (
    "doi:",
    *(scheme + host + "/" for host in RESOLVER_HOSTS for scheme in ("https://", "http://", "")),
)


def read_shortdoi(short: str, record: HandleRecord) -> DOI:
    """The DOI name a shortDOI's record aliases.

    :raises DOINotFound: when the record has no HS_ALIAS.
    """
    alias = record.first("HS_ALIAS")
    if alias is None or not alias.text:
        raise DOINotFound(short, f"{short} is not a shortDOI: its record has no HS_ALIAS")
    return DOI(alias.text)
