"""Reading requests and writing replies the way HANDLE.NET and doi.org do (handle-api.md §1–2)."""

from __future__ import annotations

import contextlib
import email.utils
import json
import re
import time
import unicodedata
from typing import TYPE_CHECKING, Final
from urllib.parse import quote, unquote, urlsplit

from starlette.responses import Response

from doikit._present import url_path
from doikit._syntax import PercentError, percent_decode
from doikit.handle import HTTP_STATUS, RC_PROTOCOL_ERROR, error_body

if TYPE_CHECKING:
    from starlette.requests import Request

JSON_TYPE: Final = "application/json;charset=UTF-8"
HTML_TYPE: Final = "text/html; charset=utf-8"
#: Pages are plain HTML: no scripts at all. (No form-action: browsers apply it to the
#: redirects after a submission too, and the resolve form must end at another site.)
PAGE_HEADERS: Final = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
    "X-Content-Type-Options": "nosniff",
}
CORS: Final = {"Access-Control-Allow-Origin": "*"}


#: The longest TTL the proxy turns into an ``Expires`` header (HANDLE.NET: two days).
MAX_RECOGNIZED_TTL: Final = 2 * 86400
_EXPIRES: dict[int, tuple[int, str]] = {}


def expires(ttl: int) -> str:
    """The ``Expires`` header for a value with *ttl* seconds to live, capped at two days.

    Formatted once a second per TTL: it is on every redirect.
    """
    ttl = min(ttl, MAX_RECOGNIZED_TTL)
    now = int(time.time())
    cached = _EXPIRES.get(ttl)
    if cached is None or cached[0] != now:
        if len(_EXPIRES) > 64:
            _EXPIRES.clear()
        cached = (now, email.utils.formatdate(now + ttl, usegmt=True))
        _EXPIRES[ttl] = cached
    return cached[1]


class BadPathError(Exception):
    """The request path cannot be read as UTF-8 percent-encoding (a 400, never a 500)."""


class Refused(Exception):  # noqa: N818 - a refusal is an answer, not a failure
    """A request the REST API refuses: raised anywhere in a route, answered in one place
    (``create_app``'s handler) as a Handle JSON error with this response code.

    The HTTP status follows from the response code (:data:`HTTP_STATUS`) unless given.
    """

    def __init__(
        self,
        response_code: int,
        message: str | None,
        status: int | None = None,
        *,
        handle: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message or f"response code {response_code}")
        self.response_code = response_code
        self.message = message
        self.status = status
        self.handle = handle
        self.headers = headers


def only_params(params: list[tuple[str, str]], allowed: frozenset[str], what: str) -> None:
    """Refuse (400 rc 4) a parameter *what* does not implement, naming it: no request may
    do more than it names because a parameter was ignored."""
    for key, _ in params:
        if key not in allowed:
            known = ", ".join(sorted(allowed))
            raise Refused(RC_PROTOCOL_ERROR, f"{what} does not take {key!r} (only {known})")


def raw_after(request: Request, head: bytes) -> bytes | None:
    """The raw path after *head*, or ``None`` when the client did not write *head* itself.

    Routing matches the decoded path, so ``/api%2Fhandles/x`` reaches the same route as
    ``/api/handles/x``; a route reads its name from the raw path only through here, never
    by slicing at a fixed offset.
    """
    raw = raw_path(request)
    return raw[len(head) :] if raw.startswith(head) else None


def raw_path(request: Request) -> bytes:
    """The path as the client sent it, escapes intact and without the query.

    ASGI servers put it in ``raw_path``; some (httpx's ASGI transport) append the query.
    """
    raw: bytes = request.scope.get("raw_path") or request.scope["path"].encode()
    return raw.split(b"?", 1)[0]


def decode_path(raw: bytes) -> str:
    """Percent-decode a path segment as UTF-8, strictly; ``+`` stays ``+``.

    :raises BadPathError: saying what and where, for an invalid escape or invalid UTF-8.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadPathError(f"the path has bytes that are not UTF-8 at byte {exc.start}") from None
    try:
        return percent_decode(text)
    except PercentError as exc:
        raise BadPathError(
            f"the path has a bad escape at position {exc.index}: {exc.detail}"
        ) from None


_SPLIT: Final = re.compile(r"[&;]")


def query_params(request: Request) -> list[tuple[str, str]]:
    """The query as HANDLE.NET reads it: split on ``&`` and ``;``, ``+`` kept as ``+``."""
    qs = request.scope.get("query_string", b"").decode("latin-1")
    out = []
    for part in _SPLIT.split(qs):
        if not part:
            continue
        key, _, value = part.partition("=")
        out.append((unquote(key, errors="replace"), unquote(value, errors="replace")))
    return out


def flag(params: list[tuple[str, str]], name: str) -> bool:
    """A boolean parameter: present without a value, empty, ``true`` or ``yes`` (any case)."""
    return any(k == name and v.lower() in {"", "true", "yes"} for k, v in params)


def present(params: list[tuple[str, str]], name: str) -> bool:
    """Whether *name* appears at all (the proxy's HTML URLs read flags this way)."""
    return any(k == name for k, _ in params)


def values_of(params: list[tuple[str, str]], name: str) -> list[str]:
    """Every value of a repeatable parameter."""
    return [v for k, v in params if k == name]


def number(text: str) -> int | None:
    """*text* as a query's whole number: ASCII digits only, at most 19 of them; ``None`` for
    anything else (``int()`` would also take ``+5``, ``" 5"``, ``5_0`` and other scripts'
    digits, which no Handle client sends for a number).

    >>> number("5"), number("+5"), number(" 5"), number("5_0"), number("\u0665")
    (5, None, None, None, None)
    """
    if text.isascii() and text.isdigit() and len(text) <= 19:
        return int(text)
    return None


def numbers(params: list[tuple[str, str]], name: str, *, also: str = "") -> list[int]:
    """Every value of the parameter *name* as a :func:`number` (*also*: a word taken
    besides, named in the refusal).

    :raises Refused: 400 rc 4 for a value that is not one, naming it.
    """
    out = []
    for text in values_of(params, name):
        value = number(text)
        if value is None:
            other = f" or {also!r}" if also else ""
            raise Refused(
                RC_PROTOCOL_ERROR, f"{name} must be a number in ASCII digits{other}, not {text!r}"
            )
        out.append(value)
    return out


def scrub_callback(name: str) -> str:
    """A JSONP function name with every character JavaScript would not take replaced by ``_``.

    >>> scrub_callback("cb(alert(1))//")
    'cb_alert_1____'
    """
    out = []
    for i, char in enumerate(name):
        ok = char in "_$" or ("a" <= char.lower() <= "z") or char >= "\u00a0"
        ok = ok or (i > 0 and "0" <= char <= "9")
        out.append(char if ok and char not in "\u2028\u2029" else "_")
    return "".join(out) or "_"


def api_reply(
    body: str,
    status: int,
    params: list[tuple[str, str]] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """A REST API reply with ``pretty`` and ``callback`` applied and CORS open."""
    params = params or []
    if flag(params, "pretty"):
        body = json.dumps(json.loads(body), ensure_ascii=False, indent=2)
    all_headers = dict(CORS)
    if headers:
        all_headers.update(headers)
    callbacks = values_of(params, "callback")
    if callbacks and callbacks[0]:
        safe = body.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
        text = f"{scrub_callback(callbacks[0])}({safe});"
        return Response(text, status, all_headers, media_type="application/javascript")
    return Response(body, status, all_headers, media_type=JSON_TYPE)


def api_error(
    response_code: int,
    handle: str | None = None,
    message: str | None = None,
    *,
    status: int | None = None,
    params: list[tuple[str, str]] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """An error reply whose HTTP status follows from the response code (§1.6)."""
    body = error_body(response_code, handle, message)
    return api_reply(body, status or HTTP_STATUS.get(response_code, 500), params, headers)


def page(body: str, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """An HTML page with the pages' security headers."""
    all_headers = dict(PAGE_HEADERS)
    if headers:
        all_headers.update(headers)
    return Response(body, status, all_headers, media_type=HTML_TYPE)


def local_path(name: str) -> str:
    """The path of *name* on this resolver, ``/`` and the name by the Handbook's rules; a
    leading ``/`` of the name is escaped, so the path can never read as ``//host``.

    >>> local_path("10.1000/a b"), local_path("/evil.example")
    ('/10.1000/a%20b', '/%2Fevil.example')
    """
    path = url_path(name)
    return "/" + ("%2F" + path[1:] if path.startswith("/") else path)


# RFC 3986 characters a Location may carry as they are; everything else is escaped, so no
# space, CR, LF, control or non-ASCII character can reach a header.
_URI_SAFE: Final = "!#$%&'()*+,-./:;=?@[]_~"
_AUTHORITY: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)([^/?#]*)")


def safe_location(url: str) -> str:
    """*url* as an ASCII URI for a ``Location`` header: IDN host in punycode, the rest escaped.

    >>> safe_location("https://bücher.example/a b?q=\\r\\nSet-Cookie:x")
    'https://xn--bcher-kva.example/a%20b?q=%0D%0ASet-Cookie:x'
    """
    if not url.isascii():
        match = _AUTHORITY.match(url)
        if match:
            userinfo, at, hostport = match.group(2).rpartition("@")
            host, colon, port = hostport.partition(":")
            if not host.isascii():
                with contextlib.suppress(UnicodeError):
                    ascii_host = host.encode("idna").decode("ascii")
                    authority = userinfo + at + ascii_host + colon + port
                    url = match.group(1) + authority + url[match.end() :]
    return quote(url, safe=_URI_SAFE)


# An absolute http(s) URL of printable ASCII with a plain host name: valid as it stands.
_PLAIN_HTTP_URL: Final = re.compile(
    r"[Hh][Tt][Tt][Pp][Ss]?://[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,4})?"
    r"(?:[/?#][!-~]*)?"
)


def append_to_url(url: str, tail: str) -> str | None:
    """*url* with *tail* appended (the proxy's ``urlappend``), or ``None`` when the tail
    would change where the URL points: its scheme, host or port (``@evil.example`` after a
    URL without a path makes the original host a user name).

    >>> append_to_url("https://e.org/a", "?x=1"), append_to_url("https://e.org", "@evil.example")
    ('https://e.org/a?x=1', None)
    """
    joined = url + tail
    if not tail:
        return joined
    try:
        before, after = urlsplit(url), urlsplit(joined)
    except ValueError:
        return None
    if (before.scheme, before.netloc) != (after.scheme, after.netloc):
        return None
    return joined


def redirectable(url: str) -> bool:
    """Whether the proxy may redirect to a URL value: an absolute http(s) URL (a value may
    hold any string, as HANDLE.NET stores it; ``www.example.org`` would be read by a browser
    as a path on the proxy itself)."""
    return valid_http_url(url) is None


def valid_http_url(text: str) -> str | None:
    """Why *text* is not an absolute http(s) URL fit for a redirect, or ``None`` if it is."""
    if _PLAIN_HTTP_URL.fullmatch(text):
        return None  # the common case, decided without parsing
    plain = text.isascii() and text.isprintable() and " " not in text
    for i, char in enumerate("" if plain else text):
        if char.isspace() or unicodedata.category(char) in {"Cc", "Cf", "Zl", "Zp"}:
            return f"the URL has a space or control character at position {i}"
    try:
        parts = urlsplit(text)
    except ValueError as exc:
        return f"the URL cannot be parsed: {exc}"
    if parts.scheme.lower() not in {"http", "https"}:
        return f"the URL must start with http:// or https://, not {parts.scheme or text[:10]!r}"
    if not parts.hostname:
        return "the URL has no host"
    try:
        parts.port  # noqa: B018 - reading it checks it
    except ValueError:
        return "the URL's port is not a number from 0 to 65535"
    return None
