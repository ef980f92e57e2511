"""Writes: ``PUT`` and ``DELETE /api/handles/{doi}`` as HANDLE.NET 9 does them, and the batch
``POST /api/deposit``.

HANDLE.NET's ``HandleJsonRestApiServlet`` is the authority (handle-api.md §1): a ``PUT``
without ``index`` creates or replaces the whole record; with ``index=N`` (repeatable) or
``index=various`` it adds or replaces only those values and keeps every other one; a
``DELETE`` with ``index`` removes only those values. Every write is checked whole, then made
by one compare-and-set of the record (:meth:`Store.swap`), so it is atomic and a concurrent
writer's change is never lost. A parameter these routes do not implement is refused (400),
never ignored into a wider operation.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
import uuid
from typing import TYPE_CHECKING, Final

from doikit._deposit import MAX_REQUEST
from doikit._syntax import fold
from doikit._written import bare_doi, plain_line
from doikit.handle import (
    RC_HANDLE_ALREADY_EXISTS,
    RC_HANDLE_NOT_FOUND,
    RC_INVALID_HANDLE,
    RC_INVALID_VALUE,
    RC_PROTOCOL_ERROR,
    RC_VALUES_NOT_FOUND,
    HandleFormatError,
    HandleValue,
    done_body,
    format_time,
    loads,
    parse_locations,
    type_matches,
    url_record_json,
    value_from_json,
    values_from_json,
    values_to_json,
)
from doikit.server._auth import is_hashed_secret, stored_secret
from doikit.server._http import (
    BadPathError,
    Refused,
    api_reply,
    decode_path,
    numbers,
    only_params,
    query_params,
    raw_after,
    valid_http_url,
    values_of,
)
from doikit.server.stores import MAX_NAME_BYTES, DamagedRecordError, Row

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from starlette.requests import Request
    from starlette.responses import Response

    from doikit._doi import DOI
    from doikit.server._auth import Authority, Caller
    from doikit.server.stores import Store, StoredRecord

log = logging.getLogger("doikit.server")

#: The largest body a single PUT may carry, and a batch deposit (which ``doikit deposit``
#: knows, to split its input by it).
MAX_BODY: Final = 1 << 20
MAX_DEPOSIT_BODY: Final = MAX_REQUEST
#: The most lines a deposit request may hold: each gets an answer when it is refused.
MAX_DEPOSIT_LINES: Final = 100_000
#: The largest 10320/loc value a write may store (a few locations take a few hundred bytes).
MAX_LOCATIONS_BYTES: Final = 16 * 1024
# HANDLE.NET's status for response code 201 (a value's index exists) and 200 on a write.
RC_VALUE_ALREADY_EXISTS: Final = 201
# A compare-and-set that keeps losing to other writers gives up after this many tries.
_TRIES: Final = 8
_PUT_PARAMS: Final = frozenset({"index", "overwrite", "mintNewSuffix", "pretty"})
_DELETE_PARAMS: Final = frozenset({"index", "pretty"})


def java_boolean(params: list[tuple[str, str]], name: str, *, default: bool) -> bool:
    """A parameter read as HANDLE.NET reads ``overwrite`` and ``mintNewSuffix``
    (``Boolean.parseBoolean``): absent is *default*; present, only ``true`` in any ASCII
    case is true (so ``?overwrite`` alone is false)."""
    given = values_of(params, name)
    if not given:
        return default
    return given[0].lower() == "true"


def bare_name(text: str) -> DOI:
    """A DOI name given bare (as in a write): valid, nothing but the name, and short enough
    for every store (:data:`MAX_NAME_BYTES`).

    :raises Refused: rc 102 with the reason.
    """
    try:
        doi = bare_doi(text)
    except ValueError as exc:
        raise Refused(RC_INVALID_HANDLE, str(exc)) from None
    # (a name of at most a quarter of the limit in characters fits in any encoding)
    size = len(text) if len(text) <= MAX_NAME_BYTES // 4 else len(text.encode("utf-8"))
    if size > MAX_NAME_BYTES:
        raise Refused(
            RC_INVALID_HANDLE, f"the name is {size} bytes in UTF-8; the most is {MAX_NAME_BYTES}"
        )
    return doi


def check_values(values: tuple[HandleValue, ...]) -> None:
    """Refuse values a directory must not hold: indexes out of range, aliases that name no
    DOI, 10320/loc values too large or with a location that is no http(s) URL.

    :raises HandleFormatError: naming the value and what is wrong.
    """
    if not values:
        raise HandleFormatError("values", "a record needs at least one value")
    for i, value in enumerate(values):
        where = f"values[{i}]"
        if not 0 < value.index < 2**31:
            raise HandleFormatError(f"{where}.index", f"must be 1 to 2147483647, not {value.index}")
        # A URL value may hold any string, as HANDLE.NET stores it (b2handle's own tests
        # write www.url.foo); the proxy redirects only to one that is an absolute http(s)
        # URL (:func:`redirectable`).
        if type_matches(value.type, "HS_ALIAS"):
            try:
                bare_name(value.text or "")
            except Refused as exc:
                raise HandleFormatError(
                    f"{where}.data", f"an alias must name a DOI: {exc}"
                ) from None
        elif type_matches(value.type, "10320/loc"):
            if isinstance(value.data, bytes) and len(value.data) > MAX_LOCATIONS_BYTES:
                raise HandleFormatError(
                    f"{where}.data",
                    f"a 10320/loc value holds at most {MAX_LOCATIONS_BYTES} bytes: the proxy"
                    " reads it on every resolution",
                )
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


def _restamp(
    new: tuple[HandleValue, ...], old: tuple[HandleValue, ...], now: int
) -> tuple[HandleValue, ...]:
    """A PUT's values as HANDLE.NET stores them: each timestamped *now*, except a value
    that is unchanged, which keeps the time it was last changed."""
    kept = {v.index: v for v in old}
    out = []
    for v in new:
        was = kept.get(v.index)
        same = was is not None and (v.type, v.data, v.ttl, v.permissions, v.references) == (
            was.type,
            was.data,
            was.ttl,
            was.permissions,
            was.references,
        )
        stamp = was.timestamp if same and was is not None else now
        out.append(HandleValue(v.index, v.type, v.data, v.ttl, stamp, v.permissions, v.references))
    return tuple(out)


def _query_indexes(params: list[tuple[str, str]]) -> tuple[list[int], bool]:
    """The ``index`` parameters as integers, and whether the first is ``various``."""
    given = values_of(params, "index")
    if given and given[0] == "various":
        return [], True
    out = numbers(params, "index", also="various")
    return out, False


def parse_body(body: bytes, handle: str) -> tuple[HandleValue, ...]:
    """A PUT body in any form HANDLE.NET reads: a list of values, ``{"values": […]}``
    (whose ``handle``, if given, must be the path's), or one value object.

    :raises Refused: 400 rc 4 for a body that is none of these, rc 202 for a bad value,
        409 rc 201 for an index given twice.
    """
    try:
        obj = loads(body)
    except HandleFormatError as exc:
        raise Refused(
            RC_PROTOCOL_ERROR, f"the body is not JSON a server reads: {exc.detail}"
        ) from None
    if isinstance(obj, dict) and "values" in obj:
        named = obj.get("handle")
        if named is not None and (not isinstance(named, str) or fold(named) != fold(handle)):
            raise Refused(
                RC_PROTOCOL_ERROR, f"the body names the handle {named!r}, the path {handle!r}"
            )
        obj = obj["values"] if obj["values"] is not None else []
    elif isinstance(obj, dict) and {"index", "type", "data"} <= obj.keys():
        obj = [obj]
    if not isinstance(obj, list):
        raise Refused(
            RC_PROTOCOL_ERROR,
            'the body must be a list of values, {"values": [...]}, or one value object',
        )
    try:
        values = tuple(value_from_json(v, where=f"values[{i}]") for i, v in enumerate(obj))
    except HandleFormatError as exc:
        raise Refused(RC_INVALID_VALUE, str(exc)) from None
    seen: set[int] = set()
    for value in values:
        if value.index in seen:
            raise Refused(
                RC_VALUE_ALREADY_EXISTS, f"index {value.index} appears twice in the body", 409
            )
        seen.add(value.index)
    if not values:
        raise Refused(
            RC_INVALID_VALUE, "the body holds no values: a record needs at least one value"
        )
    return values


def _secret_key(value: HandleValue) -> HandleValue:
    """A value as a directory keeps it: an HS_SECKEY is stored only as a salted hash, and
    only its admins may read it (``1100``), however it was written."""
    if not type_matches(value.type, "HS_SECKEY") or not isinstance(value.data, bytes):
        return value
    data = value.data
    if not is_hashed_secret(data):
        data = stored_secret(data.decode("utf-8", "surrogateescape")).encode()
    return HandleValue(
        value.index, value.type, data, value.ttl, value.timestamp, "1100", value.references
    )


def _valid(values: tuple[HandleValue, ...]) -> None:
    try:
        check_values(values)
    except HandleFormatError as exc:
        raise Refused(RC_INVALID_VALUE, str(exc)) from None


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 beyond *limit* bytes (checked as it arrives)."""
    declared = request.headers.get("content-length")
    if declared and declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise Refused(RC_PROTOCOL_ERROR, f"the body is over {limit} bytes", 413)
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise Refused(RC_PROTOCOL_ERROR, f"the body is over {limit} bytes", 413)
        chunks.append(chunk)
    return b"".join(chunks)


def _content_type(request: Request) -> None:
    """HANDLE.NET takes a PUT body only as ``application/json``; doikit also takes a body
    sent without a content type (curl's ``--data-binary`` default is a form type, which is
    refused, saying so)."""
    given = request.headers.get("content-type")
    if given is None:
        return
    media = given.partition(";")[0].strip().lower()
    if media != "application/json" and not media.endswith("+json"):
        raise Refused(RC_PROTOCOL_ERROR, f"send the body as application/json, not {given!r}")


def _reply(handle: str, status: int, params: list[tuple[str, str]]) -> Response:
    return api_reply(done_body(handle), status, params)


class Writes:
    """The write routes over one store."""

    def __init__(self, store: Store, authority: Authority) -> None:
        self.store = store
        self.authority = authority
        self._turns: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def _turn(self, key: str) -> AsyncIterator[None]:
        """Writers of one name in this process, one at a time: the compare-and-set then
        contends only with other processes, so a writer that waits its turn gets in."""
        lock, users = self._turns.get(key) or (asyncio.Lock(), 0)
        self._turns[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._turns[key]
            if users == 1:
                del self._turns[key]
            else:
                self._turns[key] = (lock, users - 1)

    async def handle(self, request: Request) -> Response:
        """``PUT`` and ``DELETE /api/handles/{handle}``."""
        params = [(k, v) for k, v in query_params(request) if k != "callback"]
        raw = raw_after(request, b"/api/handles/")
        if raw is None:
            raise Refused(RC_PROTOCOL_ERROR, "write to /api/handles/NAME", 404)
        try:
            handle = decode_path(raw) if raw else ""
        except BadPathError as exc:
            raise Refused(RC_INVALID_HANDLE, str(exc)) from None
        if not handle:
            raise Refused(RC_INVALID_HANDLE, "Empty handle invalid")
        try:
            if request.method == "PUT":
                return await self._put(request, handle, params)
            return await self._delete(request, handle, params)
        except Refused as exc:
            exc.handle = exc.handle or handle
            raise

    async def _put(self, request: Request, handle: str, params: list[tuple[str, str]]) -> Response:
        only_params(params, _PUT_PARAMS, "PUT /api/handles/NAME")
        indexes, various = _query_indexes(params)
        overwrite = java_boolean(params, "overwrite", default=True)
        mint = java_boolean(params, "mintNewSuffix", default=False)
        caller = await self.authority.caller(request)
        named = handle
        if mint:
            handle += str(uuid.uuid4())
        doi = bare_name(handle)
        _content_type(request)
        values = parse_body(await read_body(request, MAX_BODY), named)
        values = tuple(_secret_key(v) for v in values)
        if indexes or various:
            if not various and set(indexes) != {v.index for v in values}:
                raise Refused(
                    RC_PROTOCOL_ERROR,
                    "Mismatched indexes in PUT request: the query names "
                    f"{sorted(set(indexes))}, the body {sorted(v.index for v in values)}",
                )
            return await self.put_values(caller, doi, values, overwrite=overwrite, params=params)
        return await self.put_record(caller, doi, values, overwrite=overwrite, params=params)

    async def put_record(
        self,
        caller: Caller,
        doi: DOI,
        values: tuple[HandleValue, ...],
        *,
        overwrite: bool,
        params: list[tuple[str, str]],
    ) -> Response:
        _valid(values)
        async with self._turn(doi.key):
            async for stored in self._versions(doi.key):
                if stored is None:
                    await self.authority.may_create(caller, doi.prefix)
                    before: tuple[HandleValue, ...] = ()
                else:
                    if not overwrite:
                        raise Refused(RC_HANDLE_ALREADY_EXISTS, "Handle already exists")
                    readable = await self._readable(caller, doi, stored)
                    before = () if readable is None else readable
                    if readable is not None:
                        await self.authority.may_change(
                            caller, doi.prefix, before, values, whole=True
                        )
                row = self._row(doi, _restamp(values, before, int(time.time())))
                if await self.store.swap(
                    doi.key, None if stored is None else stored.values_json, row
                ):
                    return _reply(str(doi), 201 if stored is None else 200, params)
            raise _busy()

    async def put_values(
        self,
        caller: Caller,
        doi: DOI,
        values: tuple[HandleValue, ...],
        *,
        overwrite: bool,
        params: list[tuple[str, str]],
    ) -> Response:
        _valid(values)  # the values given; the others are as they were
        async with self._turn(doi.key):
            async for stored in self._versions(doi.key):
                if stored is None:
                    raise Refused(RC_HANDLE_NOT_FOUND, None)
                before = stored.values()
                have = {v.index for v in before}
                clashes = sorted(v.index for v in values if v.index in have)
                if clashes and not overwrite:
                    raise Refused(
                        RC_VALUE_ALREADY_EXISTS,
                        f"Index conflict for {', '.join(map(str, clashes))} (overwrite=false)",
                        409,
                    )
                given = {v.index: v for v in values}
                after = tuple(given.pop(v.index, v) for v in before) + tuple(given.values())
                after = tuple(sorted(after, key=lambda v: v.index))
                await self.authority.may_change(caller, doi.prefix, before, after)
                row = self._row(doi, _restamp(after, before, int(time.time())))
                if await self.store.swap(doi.key, stored.values_json, row):
                    return _reply(str(doi), 200 if clashes else 201, params)
            raise _busy()

    async def _delete(
        self, request: Request, handle: str, params: list[tuple[str, str]]
    ) -> Response:
        only_params(params, _DELETE_PARAMS, "DELETE /api/handles/NAME")
        indexes, various = _query_indexes(params)
        if various:
            raise Refused(RC_PROTOCOL_ERROR, "DELETE takes index=N, not index=various")
        caller = await self.authority.caller(request)
        return await self.delete_as(caller, bare_name(handle), indexes, params)

    async def delete_as(
        self, caller: Caller, doi: DOI, indexes: list[int], params: list[tuple[str, str]]
    ) -> Response:
        """Delete the name *doi* (no *indexes*) or those values of it, as *caller*."""
        async with self._turn(doi.key):
            async for stored in self._versions(doi.key):
                if stored is None:
                    raise Refused(RC_HANDLE_NOT_FOUND, None)
                if not indexes:
                    before = await self._readable(caller, doi, stored)
                    if before is not None:
                        await self.authority.may_change(caller, doi.prefix, before, None)
                    row = None
                else:
                    before = stored.values()
                    missing = sorted(set(indexes) - {v.index for v in before})
                    if missing:
                        raise Refused(
                            RC_VALUES_NOT_FOUND,
                            f"no value at index {', '.join(map(str, missing))}",
                            400,
                        )
                    after = tuple(v for v in before if v.index not in indexes)
                    if not after:
                        raise Refused(
                            RC_INVALID_VALUE,
                            "that would leave the name without values: DELETE the name instead",
                        )
                    await self.authority.may_change(caller, doi.prefix, before, after)
                    row = self._row(doi, after)
                if await self.store.swap(doi.key, stored.values_json, row):
                    return _reply(str(doi), 200, params)
            raise _busy()

    async def _readable(
        self, caller: Caller, doi: DOI, stored: StoredRecord
    ) -> tuple[HandleValue, ...] | None:
        """The values of *stored*; None for a record this build cannot read (an older build
        stored values that today's checks refuse), after checking that *caller* administers
        its prefix: its HS_ADMIN values cannot be read, and the prefix's administrators may
        replace or delete it whole (a per-value change needs the values, and answers 500)."""
        try:
            return stored.values()
        except DamagedRecordError:
            await self.authority.may_create(caller, doi.prefix)
            return None

    async def _versions(self, key: str) -> AsyncIterator[StoredRecord | None]:
        """The record under *key* as it is now, once per attempt of a compare-and-set: a
        short random wait, doubling each time, before each retry, so writers contending
        for one name take turns; after :data:`_TRIES` the caller gives up (:func:`_busy`)."""
        for attempt in range(_TRIES):
            if attempt:
                await asyncio.sleep(random.uniform(0, 0.005 * 2**attempt))  # noqa: S311 - jitter
            yield await self.store.get(key)

    @staticmethod
    def _row(doi: DOI, values: tuple[HandleValue, ...]) -> Row:
        return Row(doi.key, str(doi), doi.prefix, values_to_json(values))

    async def deposit(self, request: Request) -> Response:
        """``POST /api/deposit``: JSON Lines of records; every good line is committed in one
        transaction and every bad one reported with its number and reason."""
        params = [(k, v) for k, v in query_params(request) if k != "callback"]
        only_params(params, frozenset({"pretty"}), "POST /api/deposit")
        caller = await self.authority.caller(request)
        if caller.identity is not None:
            raise Refused(
                RC_PROTOCOL_ERROR, "deposit with a bearer token (doikit token create)", 403
            )
        body = await read_body(request, MAX_DEPOSIT_BODY)
        if not body.strip():
            raise Refused(RC_PROTOCOL_ERROR, "the body is empty: send JSON Lines")
        count = body.count(b"\n") + 1
        if count > MAX_DEPOSIT_LINES:
            raise Refused(
                RC_PROTOCOL_ERROR,
                f"the body has {count} lines; a deposit takes at most {MAX_DEPOSIT_LINES}"
                " (doikit deposit sends 10,000 at a time)",
            )
        # Reading a large body is CPU work: off the event loop, so reads keep flowing; and
        # in batches, so that the store writes one while the next is read (one transaction).
        lines = body.removeprefix(b"\xef\xbb\xbf").split(b"\n")
        now = int(time.time())
        accepted = 0
        rejected: list[dict[str, object]] = []

        async def batches() -> AsyncIterator[list[Row]]:
            nonlocal accepted
            for first in range(0, len(lines), _READ_BATCH):
                part = lines[first : first + _READ_BATCH]
                rows, refused = await asyncio.to_thread(
                    deposit_rows, part, caller.prefixes, now, first + 1
                )
                accepted += len(rows)
                rejected.extend(refused)
                yield rows

        await self.store.put_batches(batches())
        out = {"responseCode": 1, "accepted": accepted, "rejected": rejected}
        text = await asyncio.to_thread(json.dumps, out, ensure_ascii=False, separators=(",", ":"))
        return api_reply(text, 200, params)


def _busy() -> Refused:
    return Refused(3, "the name is being changed by others; try again", 503)


class _LineError(Exception):
    def __init__(self, message: str, doi: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.doi = doi
        self.line = line


#: Lines a deposit reads at a time, while the store writes the lines before them.
_READ_BATCH: Final = 2000


def deposit_rows(
    lines: list[bytes], allowed: tuple[str, ...], now: int | None = None, first: int = 1
) -> tuple[list[Row], list[dict[str, object]]]:
    """The rows of a deposit's *lines* (numbered from *first*) and the lines refused, each
    with its number and reason.

    Whatever a line holds, it is refused on its own: its neighbours go in.
    """
    now = int(time.time()) if now is None else now
    stamp = format_time(now)
    unexpected = 0
    rows: list[Row] = []
    rejected: list[dict[str, object]] = []
    for number, line in enumerate(lines, first):
        if not line.strip():
            continue
        try:
            rows.append(_deposit_row(line, allowed, now, stamp))
        except _LineError as exc:
            rejected.append({"line": exc.line or number, "doi": exc.doi, "message": exc.message})
        except Exception:
            # Never expected; but one line must not lose the others, whatever it holds.
            if not unexpected:
                log.exception("deposit line %d could not be read", number)
            unexpected += 1
            rejected.append({"line": number, "doi": None, "message": "the line cannot be read"})
    if unexpected > 1:
        log.error("%d more deposit lines of that request could not be read", unexpected - 1)
    return rows, rejected


def _deposit_row(line: bytes, allowed: tuple[str, ...], now: int, stamp: str) -> Row:
    plain = plain_line(line)  # (the common line; any other takes the JSON path)
    if plain is not None:
        name, url, number = plain
        return _url_row(_named(name, allowed, number), name, url, number, stamp)
    return _json_row(line, allowed, now, stamp)


def _json_row(line: bytes, allowed: tuple[str, ...], now: int, stamp: str) -> Row:
    """A deposit line read as JSON: any object with doi and url or values."""
    try:
        obj = loads(line)
    except HandleFormatError as exc:
        raise _LineError(exc.detail if exc.detail.startswith("not ") else f"not {exc}") from None
    if not isinstance(obj, dict):
        raise _LineError("each line must be a JSON object with doi and url or values")
    given = obj.get("line")  # doikit deposit sends each record's line in its file
    number = given if type(given) is int and given > 0 else None
    name = obj.get("doi")
    if not isinstance(name, str):
        raise _LineError("'doi' must be a string", None, number)
    doi = _named(name, allowed, number)
    if "values" not in obj and not isinstance(obj.get("url"), str):
        raise _LineError("give 'url' (a string) or 'values' (a list)", name, number)
    if "values" not in obj:
        return _url_row(doi, name, obj["url"], number, stamp)
    try:
        values = values_from_json(obj["values"])
        check_values(values)
    except HandleFormatError as exc:
        raise _LineError(str(exc), name, number) from None
    values = tuple(_secret_key(v) for v in values)
    return Row(doi.key, str(doi), doi.prefix, values_to_json(_stamp(values, now)))


def _named(name: str, allowed: tuple[str, ...], number: int | None) -> DOI:
    """The DOI a deposit line names, if the caller may write its prefix."""
    try:
        doi = bare_name(name)
    except Refused as exc:
        raise _LineError(str(exc), name, number) from None
    if doi.prefix not in allowed:
        raise _LineError(f"the token may not write prefix {doi.prefix}", name, number)
    return doi


def _url_row(doi: DOI, name: str, url: str, number: int | None, stamp: str) -> Row:
    """The common line, {"doi", "url"}: one URL value, written without building objects."""
    problem = valid_http_url(url)
    if problem:
        raise _LineError(f"url: {problem}", name, number)
    return Row(doi.key, str(doi), doi.prefix, url_record_json(url, stamp))
