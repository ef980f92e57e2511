"""Reads: the REST API's ``GET``s, the doi.org proxy's redirects and pages, and Which RA.

Everything a caller without credentials can reach is built from a record's **public**
values only (:meth:`Reads.public_record`): a value without public read permission is never
shown, redirected to, followed or searched.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import TYPE_CHECKING, Final

from starlette.responses import JSONResponse, Response

from doikit._doi import DOI
from doikit._errors import InvalidDOI
from doikit._present import urn_colon
from doikit._syntax import PREFIX_ONLY_RE, fold
from doikit.handle import (
    RC_HANDLE_NOT_FOUND,
    RC_INVALID_HANDLE,
    RC_PROTOCOL_ERROR,
    HandleRecord,
    all_public,
    filter_values,
    record_body,
    success_body,
    type_matches,
)
from doikit.handle.resolution import MAX_ALIAS_HOPS, choose_redirect
from doikit.server import _pages
from doikit.server._http import (
    BadPathError,
    Refused,
    api_reply,
    append_to_url,
    decode_path,
    expires,
    flag,
    local_path,
    number,
    numbers,
    only_params,
    page,
    present,
    query_params,
    raw_after,
    raw_path,
    redirectable,
    safe_location,
    values_of,
)
from doikit.server._openapi import openapi
from doikit.server._routes import API_ROUTES
from doikit.server._upstream import STALE_WARNING
from doikit.server.stores import INDEXED_CHARS, Found, stored_values

if TYPE_CHECKING:
    from starlette.requests import Request

    from doikit.server._auth import Authority
    from doikit.server._upstream import Upstream
    from doikit.server.stores import Store

# The endpoints under /api/ that do not take every method, and what they take.
_API_METHODS: Final = {
    route.path: route.allow
    for route in API_ROUTES
    if route.path.startswith("/api/") and "{" not in route.path
}
# What a REST read takes (HANDLE.NET's servlet: auth and cert ask for an authoritative,
# certified answer, which every answer of this directory is). Anything else is refused.
_GET_PARAMS: Final = frozenset(
    {"type", "index", "auth", "cert", "publicOnly", "pretty", "callback"}
)
_LIST_PARAMS: Final = frozenset({"prefix", "page", "pageSize", "pretty", "callback"})
# The proxy strips these presentation prefixes, ignoring case (HDLServletRequest).
_PROXY_PREFIXES: Final = ("info:doi/", "info:hdl/", "hdl:", "doi:")
_URN_PREFIXES: Final = ("urn:doi:", "urn:hdl:")
# Trimmed from both ends of a proxy path (HANDLE.NET 9.3.1): whitespace, controls, NBSP,
# U+2000-U+200D and the BOM.
_TRIM: Final = (
    "".join(chr(c) for c in range(0x21))
    + "\x7f\u00a0\ufeff"
    + "".join(chr(c) for c in range(0x2000, 0x200E))
)
_BROWSER_TYPES: Final = (
    "text/html",
    "application/xhtml",
    "application/pdf",
    "image/",
    "audio/",
    "video/",
)
#: The largest offset a listing reads; a page beyond it is empty (as any page past the end).
_MAX_OFFSET: Final = 2**62


class Reads:
    """The read routes over one store."""

    def __init__(
        self, store: Store, authority: Authority, *, ra_name: str, upstream: Upstream | None = None
    ) -> None:
        self.store = store
        self.authority = authority
        self.ra_name = ra_name
        self.upstream = upstream
        self._searches = asyncio.Semaphore(MAX_SEARCHES)

    async def public_record(self, name: str) -> HandleRecord | None:
        """The record of *name* as the public may see it: only values with public read (from
        the upstream when the store does not hold it and there is one)."""
        return (await self._public(name))[0]

    async def _public(self, name: str) -> tuple[HandleRecord | None, bool]:
        """:meth:`public_record`, and whether it is a stale answer of the upstream."""
        stored = await self.store.get(fold(name))
        if stored is None:
            return (None, False) if self.upstream is None else await self.upstream.record(name)
        values = stored.values()
        return HandleRecord(stored.name, tuple(v for v in values if v.public_read)), False

    # --- the REST API ------------------------------------------------------------------------

    async def api_handle(self, request: Request) -> Response:
        """``GET /api/handles/{handle}``: the record, filtered by ``type`` and ``index``."""
        params = query_params(request)
        raw = raw_after(request, b"/api/handles/")
        if raw is None:
            raise Refused(RC_PROTOCOL_ERROR, "read /api/handles/NAME", 404)
        if not raw:
            raise Refused(RC_INVALID_HANDLE, "Empty handle invalid")
        try:
            handle = decode_path(raw)
        except BadPathError as exc:
            raise Refused(RC_INVALID_HANDLE, str(exc)) from None
        try:
            return await self._get(request, handle, params)
        except Refused as exc:
            exc.handle = exc.handle or handle
            raise

    async def _get(self, request: Request, handle: str, params: list[tuple[str, str]]) -> Response:
        only_params(params, _GET_PARAMS, "GET /api/handles/NAME")
        indexes = tuple(numbers(params, "index"))
        types = tuple(values_of(params, "type"))
        stored = await self.store.get(fold(handle))
        if stored is None and self.upstream is not None:
            found, stale = await self.upstream.record(handle)
            if found is None:
                raise Refused(RC_HANDLE_NOT_FOUND, None)
            body = record_body(found.filter(types, indexes), handle)
            return _staled(api_reply(body, 200, params), stale=stale)
        if stored is None:
            raise Refused(RC_HANDLE_NOT_FOUND, None)
        public_only = not present(params, "publicOnly") or flag(params, "publicOnly")
        if public_only and not types and not indexes and all_public(stored.values_json):
            # Every value is publicly readable and none is filtered out: answer as stored.
            return api_reply(success_body(handle, stored.values_json), 200, params)
        values = stored.values()
        if public_only:
            values = tuple(v for v in values if v.public_read)
        elif not all(v.public_read for v in values):  # (all public: anyone, as HANDLE.NET)
            caller = await self.authority.caller(request)
            await self.authority.may_read_all(caller, handle.partition("/")[0], values)
        values = filter_values(values, types, indexes)
        return api_reply(record_body(HandleRecord(handle, values)), 200, params)

    async def api_list(self, request: Request) -> Response:
        """``GET /api/handles?prefix=P&page=N&pageSize=M``: the names under a prefix."""
        params = query_params(request)
        only_params(params, _LIST_PARAMS, "GET /api/handles")
        caller = await self.authority.caller(request)
        prefixes = values_of(params, "prefix")
        if not prefixes or not PREFIX_ONLY_RE.fullmatch(prefixes[0]):
            raise Refused(
                RC_PROTOCOL_ERROR, "give prefix=10.NNNN, the DOI prefix whose names to list"
            )
        prefix = prefixes[0]
        page_number = (numbers(params, "page") or [0])[0]
        size = (numbers(params, "pageSize") or [1000])[0]
        if page_number < 0 or not 0 <= size <= 10000:
            raise Refused(RC_PROTOCOL_ERROR, "page must be 0 or more and pageSize 0 to 10000")
        await self.authority.may_list(caller, prefix)
        offset = page_number * size
        names: list[str]
        if offset > _MAX_OFFSET:
            total, names = (await self.store.list_names(prefix, 0, 0))[0], []
        else:
            total, names = await self.store.list_names(prefix, offset, size)
        body = {"responseCode": 1, "prefix": prefix, "totalCount": total, "handles": names}
        return api_reply(json.dumps(body, ensure_ascii=False, separators=(",", ":")), 200, params)

    async def reverse_lookup(self, request: Request) -> Response:
        """``GET /hrls/handles?URL=…``: the names with a public value of that type matching
        the pattern (``*`` for any run of characters), as EUDAT's reverse-lookup servlet
        answers pyhandle's ``search_handle``: a JSON list of names. Every other parameter
        name is a value type, all of which must match; ``limit`` (default 1000, at most
        10000) and ``page`` (from 0) page the list. Needs credentials, as the servlet does.
        """
        params = query_params(request)
        await self.authority.caller(request)
        limit = (numbers(params, "limit") or [1000])[0]
        page_number = (numbers(params, "page") or [0])[0]
        if not 0 < limit <= 10000 or page_number < 0:
            raise Refused(RC_PROTOCOL_ERROR, "limit must be 1 to 10000 and page 0 or more")
        wanted = [(k, v) for k, v in params if k not in {"limit", "page"}]
        if not wanted:
            raise Refused(RC_PROTOCOL_ERROR, "give a value type and a pattern, as URL=https://*")
        for kind, pattern in wanted:
            if not kind or not kind.isprintable() or any(c.isspace() for c in kind):
                raise Refused(RC_PROTOCOL_ERROR, f"{kind!r} is not a value type")
            if pattern.count("*") > MAX_STARS:
                raise Refused(RC_PROTOCOL_ERROR, f"a pattern holds at most {MAX_STARS} '*'")
        if page_number * limit > MAX_SKIP:
            raise Refused(RC_PROTOCOL_ERROR, f"page * limit may be at most {MAX_SKIP}")
        async with self._searches:
            names = await search(self.store, wanted, page_number * limit, limit)
        return api_reply(json.dumps(names, ensure_ascii=False, separators=(",", ":")), 200)

    async def api_unknown(self, request: Request) -> Response:
        """Any other ``/api/…`` path: 404 with rc 4, as HANDLE.NET's UnknownApiServlet."""
        allow = _API_METHODS.get(request.url.path)
        if allow is not None:
            # A known endpoint asked with another method: 405, as HANDLE.NET answers.
            message = f"{request.method} is not allowed on {request.url.path}; use {allow}"
            raise Refused(RC_PROTOCOL_ERROR, message, 405, headers={"Allow": allow})
        message = f"Unknown HTTP API endpoint {request.method} {request.url.path}"
        if request.url.path.startswith("/api/sessions"):
            # HANDLE.NET's sessions are not offered: what its UnknownApiServlet answers for a
            # servlet that is not there, with what to do instead.
            message += (
                ": this server offers no sessions; authenticate each request with HTTP Basic"
                " (index:handle and secret key) or a bearer token"
            )
        raise Refused(RC_PROTOCOL_ERROR, message, 404)

    async def openapi(self, _request: Request) -> Response:
        """The OpenAPI 3.1 description of the JSON API."""
        return JSONResponse(openapi(), headers={"Access-Control-Allow-Origin": "*"})

    # --- Which RA ----------------------------------------------------------------------------

    async def which_ra(self, request: Request) -> Response:
        """``/ra/{dois}`` and ``/doiRA/{dois}``: the registration agency of each, in order."""
        raw = raw_after(request, b"/ra/")
        if raw is None:
            raw = raw_after(request, b"/doiRA/")
        if raw is None:
            return page(_pages.bad_request("write /ra/ and the DOI names"), 400)
        out: list[dict[str, str]] = []
        # Split on raw commas before decoding: %2C is a comma inside a name (the Handbook's
        # URL encoding rules).
        for part in raw.split(b","):
            try:
                text = decode_path(part)
            except BadPathError:
                out.append({"DOI": part.decode("utf-8", "replace"), "status": "Invalid DOI"})
                continue
            out.append(await self._ra_of(text))
        return api_reply(json.dumps(out, ensure_ascii=False, separators=(",", ":")), 200)

    async def _ra_of(self, text: str) -> dict[str, str]:
        """This server's RA for a name or prefix it holds; with an upstream, for one the
        Handle System holds, the RA its prefix's records name (:meth:`Upstream.ra_name`), or
        "Unknown" when they name none."""
        name = text.strip()
        if PREFIX_ONLY_RE.fullmatch(name):
            prefix = name
            exists = await self.store.has_prefix(name)
            handle = f"0.NA/{name}"  # a prefix exists where its prefix handle does
        else:
            try:
                doi = DOI(name)
            except InvalidDOI:
                return {"DOI": text, "status": "Invalid DOI"}
            prefix = doi.prefix
            exists = await self.store.get(doi.key) is not None
            handle = str(doi)
        if exists:
            return {"DOI": text, "RA": self.ra_name}
        if self.upstream is not None:
            found, _ = await self.upstream.record(handle)
            if found is not None:
                ra = await self.upstream.ra_name(prefix)
                return {"DOI": text, "status": "Unknown"} if ra is None else {"DOI": text, "RA": ra}
        return {"DOI": text, "status": "DOI does not exist"}

    # --- pages and the proxy -----------------------------------------------------------------

    async def home(self, request: Request) -> Response:
        """The home page with its resolve form; ``?hdl=NAME`` resolves, as HANDLE.NET's form."""
        params = query_params(request)
        names = values_of(params, "hdl")
        if names and names[0].strip():
            try:
                doi = DOI(names[0])
            except InvalidDOI as exc:
                return page(_pages.home(None, str(exc), names[0]), 400)
            return Response(status_code=302, headers={"Location": local_path(str(doi))})
        return page(_pages.home(None))

    async def proxy(self, request: Request) -> Response:
        """``GET /{doi}``: resolve and redirect, as the doi.org proxy does (handle-api.md §2)."""
        params = query_params(request)
        raw = raw_path(request)[1:]
        hash_tail = ""
        if not request.scope.get("query_string") and b"#" in raw:
            raw, _, tail = raw.partition(b"#")
            hash_tail = "#" + tail.decode("utf-8", "replace")
        try:
            name = _proxy_name(decode_path(raw))
        except BadPathError as exc:
            return page(_pages.bad_request(str(exc)), 400)
        if not name:
            return await self.home(request)
        record, stale = await self._public(name)
        if record is None:
            return page(_pages.not_found(name), 404)
        return _staled(await self._proxied(request, params, name, record, hash_tail), stale=stale)

    async def _proxied(
        self,
        request: Request,
        params: list[tuple[str, str]],
        name: str,
        record: HandleRecord,
        hash_tail: str,
    ) -> Response:
        """The proxy's answer for the record of *name*."""
        if not present(params, "ignore_aliases") and record.first("HS_ALIAS") is not None:
            return await self._alias(record, request)
        action = (values_of(params, "action") or ["redirect"])[0]
        types, indexes = _filters(params)
        if action == "api":
            return api_reply(record_body(record.filter(types, indexes), name), 200, params)
        shown = record.filter(types, indexes)
        if present(params, "noredirect") or action == "showvalues":
            return page(_pages.record(shown))
        chosen = choose_redirect(shown, _locatt(params, request.headers.get("accept", "")))
        if chosen is None:
            note = "No value of this record is a URL to redirect to."
            return page(_pages.record(shown, note=note if not (types or indexes) else None))
        if not redirectable(chosen.url):
            note = f"The URL value {chosen.url!r} is not an http(s) address to redirect to."
            return page(_pages.record(shown, note=note))
        url = append_to_url(chosen.url, "".join(values_of(params, "urlappend")))
        if url is None:
            detail = "urlappend may add a path, query or fragment, not change the host"
            return page(_pages.bad_request(detail), 400)
        location = safe_location(url + hash_tail)
        headers = {"Location": location, "Expires": expires(chosen.ttl)}
        if chosen.vary:
            headers["Vary"] = "Accept"
        return Response(
            _pages.redirect(location), chosen.status, headers, media_type="text/html; charset=utf-8"
        )

    async def _alias(self, record: HandleRecord, request: Request) -> Response:
        """A 301 to the end of the HS_ALIAS chain, within :data:`MAX_ALIAS_HOPS`."""
        seen = {fold(record.handle)}
        target = record
        for _ in range(MAX_ALIAS_HOPS):
            alias = target.first("HS_ALIAS")
            if alias is None:
                break
            name = alias.text or ""
            if fold(name) in seen:
                return page(
                    _pages.error("Alias loop", f"{record.handle} is an alias in a loop."), 508
                )
            seen.add(fold(name))
            found = await self.public_record(name)
            if found is None:
                target = HandleRecord(name, ())
                break
            target = found
        else:
            return page(
                _pages.error("Alias chain too long", f"more than {MAX_ALIAS_HOPS} hops"), 508
            )
        query = request.scope.get("query_string", b"").decode("latin-1")
        location = local_path(target.handle) + (f"?{query}" if query else "")
        return Response(
            _pages.redirect(location),
            301,
            {"Location": safe_location(location)},
            media_type="text/html; charset=utf-8",
        )


def _staled(response: Response, *, stale: bool) -> Response:
    """*response*, saying it is stale when it is (:mod:`._upstream`)."""
    if stale:
        response.headers["Warning"] = STALE_WARNING
    return response


def _proxy_name(path: str) -> str:
    """The DOI name in a proxy path: trimmed, presentation prefixes stripped (§2.1)."""
    name = path.strip(_TRIM)
    lower = name[:9].lower()
    for prefix in _PROXY_PREFIXES:
        if lower.startswith(prefix):
            return name[len(prefix) :].strip(_TRIM)
    for prefix in _URN_PREFIXES:
        if lower.startswith(prefix):
            return urn_colon(name[len(prefix) :])
    return name


def _filters(params: list[tuple[str, str]]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    # The proxy, like doi.org's, ignores an index it cannot read: links carry what they carry.
    indexes = (number(text) for text in values_of(params, "index"))
    return tuple(values_of(params, "type")), tuple(i for i in indexes if i is not None)


def _accept_locatt(accept: str) -> tuple[tuple[str, str], ...]:
    """The locatt filters content negotiation adds for an ``Accept`` header (§2.5)."""
    ranked = []
    for i, item in enumerate(accept.split(",")):
        media, *parameters = (p.strip() for p in item.split(";"))
        q = 1.0
        for parameter in parameters:
            if parameter.startswith("q="):
                with contextlib.suppress(ValueError):
                    q = float(parameter[2:])
        if media:
            ranked.append((-q, i, media.lower()))
    ranked.sort()
    if not ranked or ranked[0][0] == 0:
        return ()
    top = ranked[0][2]
    if "*" in top or top.startswith(_BROWSER_TYPES):
        return ()
    pairs = [("http_role", "conneg")]
    for _, _, media in ranked:
        pairs += [("ctype", media), ("media-type", media)]
    return tuple(pairs)


def _locatt(params: list[tuple[str, str]], accept: str) -> tuple[tuple[str, str], ...]:
    """The request's ``locatt=key:value`` filters, then those its ``Accept`` adds."""
    given = tuple(
        (key, value)
        for key, _, value in (p.partition(":") for p in values_of(params, "locatt") if ":" in p)
    )
    return given + _accept_locatt(accept)


#: The most '*' a reverse-lookup pattern may hold, and the most names it may skip (page).
MAX_STARS: Final = 8
MAX_SKIP: Final = 100_000
#: The most index entries one reverse lookup may read (a pattern without a literal start,
#: ``URL=*x``, reads every value of its type), and how many lookups run at once per worker
#: (more wait their turn); the matching runs off the event loop.
MAX_EXAMINED: Final = 50_000
MAX_SEARCHES: Final = 2


def glob_match(pattern: str, text: str) -> bool:
    """Whether *text* matches *pattern*, where ``*`` stands for any run of characters, in
    time linear in the text for any pattern (no backtracking: each piece between stars is
    found leftmost, which is always right when ``*`` is the only wildcard).

    >>> glob_match("https://*.org/*", "https://e.org/a"), glob_match("a*b*c", "acb")
    (True, False)
    """
    pieces = pattern.split("*")
    if len(pieces) == 1:
        return text == pattern
    head, *middle, tail = pieces
    if len(text) < len(head) + len(tail) or not text.startswith(head) or not text.endswith(tail):
        return False
    at, end = len(head), len(text) - len(tail)
    for piece in middle:
        found = text.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def _bounds(pattern: str) -> tuple[str, str]:
    """The range of indexed texts that can match *pattern*: its literal start."""
    literal = pattern.split("*", 1)[0][:INDEXED_CHARS]
    # No indexed text holds NUL (PostgreSQL text cannot), so literal + U+0001 bounds the
    # texts equal to the literal.
    if "*" not in pattern and len(literal) < INDEXED_CHARS:
        return literal, literal + "\x01"  # only the text itself
    if len(literal) == INDEXED_CHARS:
        return literal, literal + "\x01"  # longer texts are indexed by these characters
    return literal, literal + "\U0010ffff"


def _matching(batch: list[Found], wanted: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``(key, name)`` of the records in *batch* whose public values match every ``(type,
    pattern)`` of *wanted* (each record once)."""
    out = []
    keys: set[str] = set()
    for found in batch:
        if found.key in keys:
            continue
        values = [v for v in stored_values(found.name, found.values_json) if v.public_read]
        if all(
            any(
                type_matches(v.type, t) and v.text is not None and glob_match(p, v.text)
                for v in values
            )
            for t, p in wanted
        ):
            keys.add(found.key)
            out.append((found.key, found.name))
    return out


async def search(store: Store, wanted: list[tuple[str, str]], skip: int, limit: int) -> list[str]:
    """The names, in the index's order, whose public values match every ``(type,
    pattern)`` of *wanted*; *skip* of them passed over, at most *limit* returned."""
    first_type, first = wanted[0]
    kind = first_type.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")
    low, high = _bounds(first)
    out: list[str] = []
    seen: set[str] = set()
    after = ("", "")
    examined = 0
    while len(out) < limit:
        if examined >= MAX_EXAMINED:
            raise Refused(
                RC_PROTOCOL_ERROR,
                f"this search read {examined} values and was stopped before the end; give"
                " the pattern a literal start (URL=https://example.org/*) to narrow it",
            )
        batch = await store.find(kind, low, high, after, 1000)
        examined += len(batch)
        fresh = [found for found in batch if found.key not in seen]
        for key, name in await asyncio.to_thread(_matching, fresh, wanted):
            seen.add(key)
            if skip:
                skip -= 1
            elif len(out) < limit:
                out.append(name)
        if len(batch) < 1000:
            break
        after = (batch[-1].text, batch[-1].key)
    return out
