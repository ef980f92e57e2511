"""The two hot requests, answered without the framework: a plain read and a plain redirect.

``GET /api/handles/{doi}`` and ``GET /{doi}`` with a plain ASCII path and no query are what
a resolver serves all day. This ASGI layer answers them straight from the store, with the
same bytes the full routes produce (a test compares the two), and so does a name the store
does not hold when it is all there is (no ``--upstream``): a 404 reads the store once.
Anything else — escapes, presentations, queries, aliases, 10320/loc, non-public values,
misses with an upstream, a store that cannot answer — goes on to the Starlette app unchanged.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from doikit._syntax import fold
from doikit.handle import RC_HANDLE_NOT_FOUND, all_public, detours, first_url, success_body
from doikit.server import _pages
from doikit.server._http import api_error, expires, page, redirectable, safe_location

if TYPE_CHECKING:
    from collections.abc import Callable

    from starlette.types import ASGIApp, Receive, Scope, Send

    from doikit.server.stores import Store, StoredRecord

_JSON_HEADERS: Final = [
    (b"content-type", b"application/json;charset=UTF-8"),
    (b"access-control-allow-origin", b"*"),
]
_HTML: Final = (b"content-type", b"text/html; charset=utf-8")
# A Location that needs no escaping: printable ASCII without space and without the
# characters safe_location would escape.
_PLAIN_URL: Final = re.compile(r"[!#$%&'()*+,\-./0-9:;=?@A-Z\[\]_a-z~]+")
#: A reply: status, headers (lower-case names) and body.
Reply = tuple[int, list[tuple[bytes, bytes]], bytes]


def _hot(raw: bytes) -> tuple[bool, str] | None:
    """Whether a request target is one of the two hot reads: (is it the API, the name), or
    None. A plain ASCII path without escapes, query or fragment."""
    if not raw.isascii() or b"%" in raw or b"#" in raw or b"?" in raw:
        return None
    if raw.startswith(b"/api/handles/10."):
        return True, raw[13:].decode("ascii")
    if raw.startswith(b"/10."):
        return False, raw[1:].decode("ascii")
    return None


def _api_reply(name: str, stored: StoredRecord) -> Reply | None:
    if not all_public(stored.values_json):
        return None
    body = success_body(name, stored.values_json).encode("utf-8")
    return 200, [*_JSON_HEADERS, (b"content-length", str(len(body)).encode("ascii"))], body


def _redirect_reply(name: str, stored: StoredRecord) -> Reply | None:
    if name.strip() != name:
        return None
    # The values are doikit's own canonical JSON (values_to_json), where a quote inside a
    # string is always escaped: these patterns can only match real keys.
    text = stored.values_json
    if detours(text) or not all_public(text):
        # The full route follows aliases, chooses locations and hides private values.
        return None
    found = first_url(text)
    if found is None:
        return None
    url, ttl = found
    if not redirectable(url):
        return None  # the full route shows the values instead
    location = url if _PLAIN_URL.fullmatch(url) else safe_location(url)
    body = _pages.redirect(location).encode("ascii")
    headers = [
        (b"location", location.encode("ascii")),
        (b"expires", expires(ttl).encode("ascii")),
        _HTML,
        (b"content-length", str(len(body)).encode("ascii")),
    ]
    return 302, headers, body


def _missing(api: bool, name: str) -> Reply | None:
    """The 404 the full routes answer for *name*, which the store does not hold: the
    refusal ``create_app``'s handler makes of rc 100, or the proxy's page."""
    if not name.isprintable() or name.strip() != name:
        return None  # the proxy trims such a name before it reads
    response = api_error(RC_HANDLE_NOT_FOUND, name) if api else page(_pages.not_found(name), 404)
    return response.status_code, list(response.raw_headers), bytes(response.body)


class FastPaths:
    """ASGI middleware: the hot reads from *store*, everything else to *inner*.

    With a store that reads without a coroutine (SQLite's ``get_now``), :meth:`now` answers
    the same requests synchronously, for ``doikit serve``'s HTTP protocol, which then
    writes the reply itself without an ASGI cycle (:mod:`._uvicorn`)."""

    def __init__(self, inner: ASGIApp, store: Store, *, misses: bool) -> None:
        self.inner = inner
        self.store = store
        #: Whether a name the store lacks is a 404 here (no upstream to ask).
        self.misses = misses
        self._get_now: Callable[[str], StoredRecord | None] | None = getattr(store, "get_now", None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["method"] in {"GET", "HEAD"}
            and not scope["query_string"]
        ):
            hot = _hot(scope.get("raw_path") or b"")
            if hot is not None:
                reply = await self._answer(*hot)
                if reply is not None:
                    status, headers, body = reply
                    await send(
                        {"type": "http.response.start", "status": status, "headers": headers}
                    )
                    await send({"type": "http.response.body", "body": body})
                    return
        await self.inner(scope, receive, send)

    async def _answer(self, api: bool, name: str) -> Reply | None:
        """The reply to a hot read of *name* (the API's or the redirect), or None."""
        try:
            stored = await self.store.get(fold(name))
        except Exception:  # noqa: BLE001 - the full route repeats the lookup and reports it
            return None
        return self._reply(api, name, stored)

    def _reply(self, api: bool, name: str, stored: StoredRecord | None) -> Reply | None:
        if stored is None:
            return _missing(api, name) if self.misses else None
        return _api_reply(name, stored) if api else _redirect_reply(name, stored)

    def now(self, target: bytes) -> Reply | None:
        """The reply to ``GET`` *target* (the request target as sent), if it is a hot read
        that the store can answer without waiting; None sends the request the usual way."""
        get_now = self._get_now
        hot = _hot(target)
        if get_now is None or hot is None:
            return None
        api, name = hot
        try:
            stored = get_now(fold(name))
        except Exception:  # noqa: BLE001 - the full route repeats the lookup and reports it
            return None
        return self._reply(api, name, stored)
