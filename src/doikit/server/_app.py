"""The ASGI app of ``doikit serve``: the Handle REST API, the doi.org proxy, Which RA, deposit.

Every route answers as doi.org and the HANDLE.NET 9 software answer (handle-api.md); where
doikit goes further (bearer-token writes, batch deposit) it says so in the OpenAPI document.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import secrets
import time
from typing import TYPE_CHECKING, Final

from starlette.applications import Starlette
from starlette.convertors import Convertor, register_url_convertor
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from doikit._doi import DOI
from doikit._errors import InvalidDOI
from doikit._present import url_path, urn_colon
from doikit._syntax import PREFIX_ONLY_RE, fold
from doikit.handle import (
    RC_AUTHENTICATION_NEEDED,
    RC_ERROR,
    RC_HANDLE_ALREADY_EXISTS,
    RC_HANDLE_NOT_FOUND,
    RC_INSUFFICIENT_PERMISSIONS,
    RC_INVALID_HANDLE,
    RC_INVALID_VALUE,
    RC_PROTOCOL_ERROR,
    HandleFormatError,
    HandleRecord,
    HandleValue,
    filter_values,
    format_time,
    parse_locations,
    record_body,
    success_body,
    type_matches,
    values_from_json,
    values_to_json,
)
from doikit.handle._sansio import MAX_ALIAS_HOPS, choose_redirect
from doikit.server import _pages
from doikit.server._fast import FastPaths
from doikit.server._http import (
    BadPathError,
    api_error,
    api_reply,
    decode_path,
    expires,
    flag,
    page,
    present,
    query_params,
    raw_path,
    safe_location,
    valid_http_url,
    values_of,
)
from doikit.server._openapi import openapi
from doikit.server.stores import PutResult, Row, Store, open_store

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from starlette.requests import Request
    from starlette.types import ASGIApp

log = logging.getLogger("doikit.server")


def _compact(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


#: The largest body a single PUT may carry, and a batch deposit.
MAX_BODY: Final = 1 << 20
MAX_DEPOSIT_BODY: Final = 64 << 20

# The endpoints under /api/ that do not take every method.
_API_METHODS: Final = {"/api/deposit": "POST", "/api/handles": "GET, HEAD"}
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


def hash_token(token: str) -> str:
    """The digest under which a token is stored (SHA-256: tokens are 256 random bits)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    """A new bearer token: 256 bits from :mod:`secrets`, URL-safe."""
    return "doikit_" + secrets.token_urlsafe(32)


class _RefusedError(Exception):
    """A request the API refuses: carries the response code, message and HTTP status."""

    def __init__(self, response_code: int, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.response_code = response_code
        self.message = message
        self.status = status


def _require_prefix(allowed: tuple[str, ...], prefix: str, verb: str = "write") -> None:
    """Refuse (403 rc 401) a token whose prefixes do not include *prefix*."""
    if prefix not in allowed:
        raise _RefusedError(
            RC_INSUFFICIENT_PERMISSIONS, f"the token may not {verb} prefix {prefix}"
        )


def _bare_name(text: str) -> DOI:
    """A DOI name given bare (as in a write): valid, and nothing but the name.

    :raises _RefusedError: rc 102 with the core's message.
    """
    try:
        doi = DOI(text)
    except InvalidDOI as exc:
        raise _RefusedError(RC_INVALID_HANDLE, str(exc)) from None
    if str(doi) != text:
        raise _RefusedError(
            RC_INVALID_HANDLE, f"write the bare DOI name {str(doi)!r}, not {text!r}"
        )
    return doi


def check_values(values: tuple[HandleValue, ...]) -> None:
    """Refuse values a directory must not hold: bad URLs, aliases, 10320/loc.

    :raises HandleFormatError: naming the value and what is wrong.
    """
    if not values:
        raise HandleFormatError("values", "a record needs at least one value")
    for i, value in enumerate(values):
        where = f"values[{i}]"
        if not 0 < value.index < 2**31:
            raise HandleFormatError(f"{where}.index", f"must be 1 to 2147483647, not {value.index}")
        if type_matches(value.type, "URL.") or value.type == "0.TYPE/URL":
            text = value.text
            problem = "must be UTF-8 text" if text is None else valid_http_url(text)
            if problem:
                raise HandleFormatError(f"{where}.data", problem)
        elif type_matches(value.type, "HS_ALIAS"):
            text = value.text
            try:
                _bare_name(text or "")
            except _RefusedError as exc:
                raise HandleFormatError(
                    f"{where}.data", f"an alias must name a DOI: {exc}"
                ) from None
        elif type_matches(value.type, "10320/loc"):
            locations = parse_locations(value.text or "")
            for location in locations.locations:
                problem = valid_http_url(
                    location.href.replace("{hdl}", "x").replace("{hdl:path}", "x")
                )
                if problem:
                    raise HandleFormatError(f"{where}.data", f"{location.href!r}: {problem}")


def _stamp(values: tuple[HandleValue, ...], now: int | None = None) -> tuple[HandleValue, ...]:
    """Values with a timestamp: the one given (a mirror keeps it), else *now*."""
    now = int(time.time()) if now is None else now
    return tuple(
        v
        if v.timestamp
        else HandleValue(v.index, v.type, v.data, v.ttl, now, v.permissions, v.references)
        for v in values
    )


class DoikitApp:
    """The routes, sharing one store. Build it with :func:`create_app`."""

    def __init__(self, store: Store, *, ra_name: str) -> None:
        self.store = store
        self.ra_name = ra_name

    # --- authentication ------------------------------------------------------------------

    async def _authorize(self, request: Request, prefix: str) -> None:
        _require_prefix(await self._token(request), prefix)

    @staticmethod
    def _refused(exc: _RefusedError, handle: str | None, params: list[tuple[str, str]]) -> Response:
        headers = (
            {"WWW-Authenticate": 'Bearer realm="doikit"'} if exc.response_code == 402 else None
        )
        return api_error(
            exc.response_code,
            handle,
            exc.message,
            status=exc.status,
            params=params,
            headers=headers,
        )

    # --- the REST API --------------------------------------------------------------------

    async def api_handle(self, request: Request) -> Response:
        """``/api/handles/{handle}``: GET and HEAD read, PUT writes, DELETE removes."""
        params = query_params(request)
        if request.method in ("PUT", "DELETE"):
            params = _without_callback(params)
        raw = raw_path(request)[len(b"/api/handles/") :]
        if not raw:
            return api_error(RC_INVALID_HANDLE, message="Empty handle invalid", params=params)
        try:
            handle = decode_path(raw)
        except BadPathError as exc:
            return api_error(RC_INVALID_HANDLE, message=str(exc), params=params)
        try:
            if request.method == "PUT":
                return await self._put(request, handle, params)
            if request.method == "DELETE":
                return await self._delete(request, handle, params)
            return await self._get(request, handle, params)
        except _RefusedError as exc:
            return self._refused(exc, handle, params)

    async def _get(self, request: Request, handle: str, params: list[tuple[str, str]]) -> Response:
        indexes = []
        for text in values_of(params, "index"):
            try:
                indexes.append(int(text))
            except ValueError:
                message = f"index must be an integer, not {text!r}"
                return api_error(RC_PROTOCOL_ERROR, handle, message, params=params)
        types = tuple(values_of(params, "type"))
        stored = await self.store.get(fold(handle))
        if stored is None:
            return api_error(RC_HANDLE_NOT_FOUND, handle, params=params)
        public_only = True
        if any(k == "publicOnly" for k, _ in params) and not flag(params, "publicOnly"):
            await self._authorize(request, handle.partition("/")[0])
            public_only = False
        if not types and not indexes and '"permissions":' not in stored.values_json:
            # Every value is publicly readable and none is filtered out: answer as stored.
            return api_reply(success_body(handle, stored.values_json), 200, params)
        values = filter_values(
            values_from_json(json.loads(stored.values_json)), types, tuple(indexes)
        )
        if public_only:
            values = tuple(v for v in values if v.public_read)
        return api_reply(record_body(HandleRecord(handle, values)), 200, params)

    async def _put(self, request: Request, handle: str, params: list[tuple[str, str]]) -> Response:
        doi = await self._authorize_name(request, handle)
        body = await _read_body(request, MAX_BODY)
        values = _parse_values(body)
        row = Row(doi.key, str(doi), doi.prefix, values_to_json(_stamp(values)))
        overwrite = not any(k == "overwrite" for k, _ in params) or flag(params, "overwrite")
        result = await self.store.put(row, overwrite=overwrite)
        if result is PutResult.EXISTS:
            raise _RefusedError(RC_HANDLE_ALREADY_EXISTS, "the DOI name exists and overwrite=false")
        status = 201 if result is PutResult.CREATED else 200
        return api_reply(_compact({"responseCode": 1, "handle": handle}), status, params)

    async def _delete(
        self, request: Request, handle: str, params: list[tuple[str, str]]
    ) -> Response:
        doi = await self._authorize_name(request, handle)
        if not await self.store.delete(doi.key):
            return api_error(RC_HANDLE_NOT_FOUND, handle, params=params)
        return api_reply(_compact({"responseCode": 1, "handle": handle}), 200, params)

    async def _authorize_name(self, request: Request, handle: str) -> DOI:
        """The bare DOI name *handle*, once the request's token may write it.

        Checked before the body is read: no valid token is 401, an invalid name 400, a
        token for other prefixes 403.
        """
        allowed = await self._token(request)
        doi = _bare_name(handle)
        _require_prefix(allowed, doi.prefix)
        return doi

    async def api_list(self, request: Request) -> Response:
        """``GET /api/handles?prefix=P&page=N&pageSize=M``: the names under a prefix."""
        params = query_params(request)
        try:
            allowed = await self._token(request)
        except _RefusedError as exc:
            return self._refused(exc, None, params)
        prefixes = values_of(params, "prefix")
        if not prefixes or not PREFIX_ONLY_RE.fullmatch(prefixes[0]):
            message = "give prefix=10.NNNN, the DOI prefix whose names to list"
            return api_error(RC_PROTOCOL_ERROR, message=message, params=params)
        prefix = prefixes[0]
        try:
            page = int((values_of(params, "page") or ["0"])[0])
            size = int((values_of(params, "pageSize") or ["1000"])[0])
        except ValueError:
            return api_error(
                RC_PROTOCOL_ERROR, message="page and pageSize must be integers", params=params
            )
        if page < 0 or not 0 <= size <= 10000:
            message = "page must be 0 or more and pageSize 0 to 10000"
            return api_error(RC_PROTOCOL_ERROR, message=message, params=params)
        try:
            _require_prefix(allowed, prefix, "list")
        except _RefusedError as exc:
            return self._refused(exc, None, params)
        total, names = await self.store.list_names(prefix, page * size, size)
        body = {
            "responseCode": 1,
            "prefix": prefix,
            "totalCount": total,
            "handles": names if size else [],
        }
        return api_reply(_compact(body), 200, params)

    async def api_deposit(self, request: Request) -> Response:
        """``POST /api/deposit``: JSON Lines of records, all accepted lines in one transaction."""
        params = _without_callback(query_params(request))
        try:
            allowed = await self._token(request)
            body = await _read_body(request, MAX_DEPOSIT_BODY)
        except _RefusedError as exc:
            return self._refused(exc, None, params)
        if not body.strip():
            return api_error(
                RC_PROTOCOL_ERROR, message="the body is empty: send JSON Lines", params=params
            )
        rows: list[Row] = []
        rejected: list[dict[str, object]] = []
        now = int(time.time())
        for number, line in enumerate(body.split(b"\n"), 1):
            if not line.strip():
                continue
            try:
                rows.append(_deposit_row(line, allowed, now))
            except _LineError as exc:
                rejected.append(
                    {"line": exc.line or number, "doi": exc.doi, "message": exc.message}
                )
        if rows:
            await self.store.put_many(rows)
        out = {"responseCode": 1, "accepted": len(rows), "rejected": rejected}
        return api_reply(_compact(out), 200, params)

    async def _token(self, request: Request) -> tuple[str, ...]:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise _RefusedError(RC_AUTHENTICATION_NEEDED, "send Authorization: Bearer TOKEN")
        prefixes = await self.store.token_prefixes(hash_token(token.strip()))
        if prefixes is None:
            raise _RefusedError(RC_AUTHENTICATION_NEEDED, "the token is not known here")
        return prefixes

    async def api_unknown(self, request: Request) -> Response:
        """Any other ``/api/…`` path: 404 with rc 4, as HANDLE.NET's UnknownApiServlet."""
        allow = _API_METHODS.get(request.url.path)
        if allow is not None:
            # A known endpoint asked with another method: 405, as HANDLE.NET answers.
            message = f"{request.method} is not allowed on {request.url.path}; use {allow}"
            headers = {"Allow": allow}
            return api_error(RC_PROTOCOL_ERROR, message=message, status=405, headers=headers)
        message = f"Unknown HTTP API endpoint {request.method} {request.url.path}"
        return api_error(
            RC_PROTOCOL_ERROR, message=message, status=404, params=query_params(request)
        )

    async def openapi(self, _request: Request) -> Response:
        """The OpenAPI 3.1 description of the JSON API."""
        return JSONResponse(openapi(), headers={"Access-Control-Allow-Origin": "*"})

    # --- Which RA ------------------------------------------------------------------------

    async def which_ra(self, request: Request) -> Response:
        """``/ra/{dois}`` and ``/doiRA/{dois}``: the registration agency of each, in order."""
        raw = raw_path(request)
        raw = raw[raw.index(b"/", 1) + 1 :]
        out: list[dict[str, str]] = []
        # Split on raw commas before decoding: %2C is a comma inside a name (seed 000).
        for part in raw.split(b","):
            try:
                text = decode_path(part)
            except BadPathError:
                out.append({"DOI": part.decode("utf-8", "replace"), "status": "Invalid DOI"})
                continue
            out.append(await self._ra_of(text))
        return api_reply(_compact(out), 200)

    async def _ra_of(self, text: str) -> dict[str, str]:
        name = text.strip()
        if PREFIX_ONLY_RE.fullmatch(name):
            exists = await self.store.has_prefix(name)
        else:
            try:
                doi = DOI(name)
            except InvalidDOI:
                return {"DOI": text, "status": "Invalid DOI"}
            exists = await self.store.get(doi.key) is not None
        if exists:
            return {"DOI": text, "RA": self.ra_name}
        return {"DOI": text, "status": "DOI does not exist"}

    # --- pages and the proxy ---------------------------------------------------------------

    async def home(self, request: Request) -> Response:
        """The home page with its resolve form; ``?hdl=NAME`` resolves, as HANDLE.NET's form."""
        params = query_params(request)
        names = values_of(params, "hdl")
        if names and names[0].strip():
            try:
                doi = DOI(names[0])
            except InvalidDOI as exc:
                return page(_pages.home(None, str(exc), names[0]), 400)
            return Response(status_code=302, headers={"Location": "/" + url_path(str(doi))})
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
        record = await self._public_record(name)
        if record is None:
            return page(_pages.not_found(name), 404)
        if not present(params, "ignore_aliases") and record.first("HS_ALIAS") is not None:
            return await self._alias(record, request)
        action = (values_of(params, "action") or ["redirect"])[0]
        if action == "api":
            return api_reply(record_body(record.filter(*_filters(params)), name), 200, params)
        types, indexes = _filters(params)
        shown = record.filter(types, indexes)
        if present(params, "noredirect") or action == "showvalues":
            return page(_pages.record(shown))
        chosen = choose_redirect(shown, _locatt(params, request.headers.get("accept", "")))
        if chosen is None:
            note = "No value of this record is a URL to redirect to."
            return page(_pages.record(shown, note=note if not (types or indexes) else None))
        url = chosen.url + "".join(values_of(params, "urlappend")) + hash_tail
        location = safe_location(url)
        headers = {"Location": location, "Expires": expires(chosen.ttl)}
        if chosen.vary:
            headers["Vary"] = "Accept"
        return Response(
            _pages.redirect(location), chosen.status, headers, media_type="text/html; charset=utf-8"
        )

    async def _public_record(self, name: str) -> HandleRecord | None:
        """The record of *name* as the public may see it: only values with public read
        permission. Every proxy route reads records through here, so no route can show,
        redirect to or follow a value its permissions keep private."""
        stored = await self.store.get(fold(name))
        if stored is None:
            return None
        values = values_from_json(json.loads(stored.values_json))
        return HandleRecord(stored.name, tuple(v for v in values if v.public_read))

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
            found = await self._public_record(name)
            if found is None:
                target = HandleRecord(name, ())
                break
            target = found
        else:
            return page(
                _pages.error("Alias chain too long", f"more than {MAX_ALIAS_HOPS} hops"), 508
            )
        query = request.scope.get("query_string", b"").decode("latin-1")
        location = "/" + url_path(target.handle) + (f"?{query}" if query else "")
        return Response(
            _pages.redirect(location),
            301,
            {"Location": safe_location(location)},
            media_type="text/html; charset=utf-8",
        )


@functools.lru_cache(maxsize=8)
def _time_text(seconds: int) -> str:
    return format_time(seconds)


class _LineError(Exception):
    def __init__(self, message: str, doi: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.doi = doi
        self.line = line


def _deposit_row(line: bytes, allowed: tuple[str, ...], now: int) -> Row:
    try:
        obj = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _LineError(f"not JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise _LineError("each line must be a JSON object with doi and url or values")
    number = obj.get("line") if isinstance(obj.get("line"), int) else None
    name = obj.get("doi")
    if not isinstance(name, str):
        raise _LineError("'doi' must be a string", None, number)
    try:
        doi = _bare_name(name)
        _require_prefix(allowed, doi.prefix)
    except _RefusedError as exc:
        raise _LineError(exc.message, name, number) from None
    if "values" not in obj and not isinstance(obj.get("url"), str):
        raise _LineError("give 'url' (a string) or 'values' (a list)", name, number)
    if "values" not in obj:
        # The common line, {"doi", "url"}: one URL value, written without building objects.
        url = obj["url"]
        problem = valid_http_url(url)
        if problem:
            raise _LineError(f"url: {problem}", name, number)
        literal = (
            f'"{url}"' if url.isascii() and '"' not in url and "\\" not in url else _compact(url)
        )
        values_json = (
            '[{"index":1,"type":"URL","data":{"format":"string","value":'
            f'{literal}}},"ttl":86400,"timestamp":"{_time_text(now)}"}}]'
        )
        return Row(doi.key, str(doi), doi.prefix, values_json)
    try:
        values = values_from_json(obj["values"])
        check_values(values)
    except HandleFormatError as exc:
        raise _LineError(str(exc), name, number) from None
    return Row(doi.key, str(doi), doi.prefix, values_to_json(_stamp(values, now)))


def _without_callback(params: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The query parameters of a write, less ``callback``: JSONP is for reads (a <script>
    element can only GET), so a write always answers JSON, as its description says."""
    return [(key, value) for key, value in params if key != "callback"]


async def _read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 beyond *limit* bytes (checked as it arrives)."""
    declared = request.headers.get("content-length")
    if declared and declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise _RefusedError(RC_PROTOCOL_ERROR, f"the body is over {limit} bytes", 413)
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _RefusedError(RC_PROTOCOL_ERROR, f"the body is over {limit} bytes", 413)
        chunks.append(chunk)
    return b"".join(chunks)


def _parse_values(body: bytes) -> tuple[HandleValue, ...]:
    try:
        obj = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _RefusedError(RC_PROTOCOL_ERROR, f"the body is not JSON: {exc}") from None
    if isinstance(obj, dict) and "values" in obj:
        obj = obj["values"]
    try:
        values = values_from_json(obj)
        check_values(values)
    except HandleFormatError as exc:
        raise _RefusedError(RC_INVALID_VALUE, str(exc)) from None
    return values


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
    indexes = []
    for text in values_of(params, "index"):
        with contextlib.suppress(ValueError):
            indexes.append(int(text))
    return tuple(values_of(params, "type")), tuple(indexes)


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


class _AnyPath(Convertor[str]):
    """Like Starlette's ``path``, but also across decoded line breaks: a name may hold any
    character, and a path that does not match a route must not become a bare 404."""

    regex = r"[\s\S]*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("anypath", _AnyPath())


def create_app(
    store: Store | str | None = None, *, ra_name: str = "doikit", demo: bool = False
) -> ASGIApp:
    """The ASGI app of ``doikit serve`` over *store* (a :class:`Store` or a store URL).

    The store is opened when the app starts (ASGI lifespan) and closed when it stops;
    with *demo*, the demo records are loaded on start.
    """
    the_store = open_store(store) if store is None or isinstance(store, str) else store
    app = DoikitApp(the_store, ra_name=ra_name)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        await the_store.open()
        if demo:
            from doikit.server._demo import load_demo  # noqa: PLC0415

            await load_demo(the_store)
        try:
            yield
        finally:
            await the_store.close()

    async def server_error(request: Request, exc: Exception) -> Response:
        log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
        if request.url.path.startswith("/api/"):
            return api_error(RC_ERROR, message="unexpected server error")
        return page(_pages.error("Server error", "The server could not answer."), 500)

    read = ["GET", "HEAD", "POST"]
    routes = [
        Route("/api/handles", app.api_list, methods=["GET", "HEAD"]),
        Route("/api/handles/{handle:anypath}", app.api_handle, methods=[*read, "PUT", "DELETE"]),
        Route("/api/deposit", app.api_deposit, methods=["POST"]),
        Route("/api/{rest:anypath}", app.api_unknown),
        Route("/openapi.json", app.openapi, methods=["GET", "HEAD"]),
        Route("/ra/{dois:anypath}", app.which_ra, methods=["GET", "HEAD"]),
        Route("/doiRA/{dois:anypath}", app.which_ra, methods=["GET", "HEAD"]),
        Route("/", app.home, methods=["GET", "HEAD"]),
        Route("/{doi:anypath}", app.proxy, methods=["GET", "HEAD"]),
    ]
    starlette = Starlette(
        routes=routes, lifespan=lifespan, exception_handlers={Exception: server_error}
    )
    return FastPaths(starlette, the_store)
