"""The two hot requests, answered without the framework: a plain read and a plain redirect.

``GET /api/handles/{doi}`` and ``GET /{doi}`` with a plain ASCII path and no query are what
a resolver serves all day. This ASGI layer answers them straight from the store, with the
same bytes the full routes produce (a test compares the two); anything else — escapes,
presentations, queries, aliases, 10320/loc, non-public values, misses — goes on to the
Starlette app unchanged.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Final

from doikit._syntax import fold
from doikit.handle import success_body
from doikit.server import _pages
from doikit.server._http import expires, safe_location

if TYPE_CHECKING:
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
# Where the first value of type URL starts (ASCII case ignored), and what must follow.
_URL_TYPE: Final = re.compile(r'"type":"(?i:url)"', re.ASCII)
_STRING_DATA: Final = ',"data":{"format":"string","value":"'
_DECODER: Final = json.JSONDecoder()
_TTL: Final = re.compile(r'\},"ttl":([0-9]+)[,}]', re.ASCII)


def _first_url(text: str) -> tuple[str, int] | None:
    """The first URL value's text and TTL in canonical values JSON, or None when that value
    is not plain string data with a TTL in seconds (the full route then decides)."""
    kind = _URL_TYPE.search(text)
    if kind is None or not text.startswith(_STRING_DATA, kind.end()):
        return None
    start = kind.end() + len(_STRING_DATA)  # just after the opening quote
    close = text.find('"', start)
    if close < 0:
        return None
    url = text[start:close]
    if "\\" in url:  # escapes, perhaps an escaped quote: JSON reads the string
        url, after = _DECODER.raw_decode(text, start - 1)
        close = after - 1
    ttl = _TTL.match(text, close + 1)
    if ttl is None or not isinstance(url, str):
        return None
    return url, int(ttl.group(1))


_DETOUR: Final = re.compile(r'"type":"(?i:hs_alias|10320/loc)"', re.ASCII)


class FastPaths:
    """ASGI middleware: the hot reads from *store*, everything else to *inner*."""

    def __init__(self, inner: ASGIApp, store: Store) -> None:
        self.inner = inner
        self.store = store

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["method"] in {"GET", "HEAD"}
            and not scope["query_string"]
        ):
            raw: bytes = scope.get("raw_path") or b""
            if raw.isascii() and b"%" not in raw and b"#" not in raw and b"?" not in raw:
                if raw.startswith(b"/api/handles/10."):
                    if await self._api(raw[13:].decode("ascii"), send):
                        return
                elif raw.startswith(b"/10.") and await self._redirect(
                    raw[1:].decode("ascii"), send
                ):
                    return
        await self.inner(scope, receive, send)

    async def _lookup(self, name: str) -> StoredRecord | None:
        try:
            return await self.store.get(fold(name))
        except Exception:  # noqa: BLE001 - the full route repeats the lookup and reports it
            return None

    async def _api(self, name: str, send: Send) -> bool:
        stored = await self._lookup(name)
        if stored is None or '"permissions":' in stored.values_json:
            return False
        body = success_body(name, stored.values_json).encode("utf-8")
        headers = [*_JSON_HEADERS, (b"content-length", str(len(body)).encode("ascii"))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return True

    async def _redirect(self, name: str, send: Send) -> bool:
        if name.strip() != name:
            return False
        stored = await self._lookup(name)
        if stored is None:
            return False
        # The values are doikit's own canonical JSON (values_to_json), where a quote inside a
        # string is always escaped: these patterns can only match real keys.
        text = stored.values_json
        if _DETOUR.search(text) or '"permissions":' in text:
            # The full route follows aliases, chooses locations and hides private values.
            return False
        found = _first_url(text)
        if found is None:
            return False
        url, ttl = found
        location = url if _PLAIN_URL.fullmatch(url) else safe_location(url)
        body = _pages.redirect(location).encode("ascii")
        headers = [
            (b"location", location.encode("ascii")),
            (b"expires", expires(ttl).encode("ascii")),
            _HTML,
            (b"content-length", str(len(body)).encode("ascii")),
        ]
        await send({"type": "http.response.start", "status": 302, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return True
