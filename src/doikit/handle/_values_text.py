"""The stored values JSON as text: what :func:`~doikit.handle.values_to_json` writes, read
and written here without the codec's objects, for the server's hot paths (the redirect and
the value index read the common record without decoding it; a deposit line of a name and a
URL is written without building a value).

One owner, beside the codec: ``values_to_json`` writes every value's keys in one order,
compact, a quote inside a string always escaped (``index``, ``type``, ``data``, then
``permissions`` only when not ``"1110"``, ``ttl``, ``timestamp`` only when not 0), so the
patterns below can only match real keys. ``tests/test_values_text.py`` holds each function
to the codec on any values.
"""

from __future__ import annotations

import json
import re
from typing import Final

from doikit.handle._values import DEFAULT_TTL

_URL_HEAD: Final = '[{"index":1,"type":"URL","data":{"format":"string","value":'
# A string JSON writes as it is (nothing to escape).
_JSON_PLAIN: Final = re.compile(r'[^"\\\x00-\x1f]*')
# The values JSON of one public URL value as url_record_json writes it (type "URL" exactly,
# a string without escapes, no permissions).
_ONE_URL: Final = re.compile(
    r'\[\{"index":[0-9]+,"type":"URL","data":\{"format":"string","value":"([^"\\\x00]*)"\},'
    r'"ttl":[0-9]+(?:,"timestamp":"[^"]*")?\}\]'
)
# Where the first value of type URL starts (ASCII case ignored), and what must follow.
_URL_TYPE: Final = re.compile(r'"type":"(?i:url)"', re.ASCII)
_STRING_DATA: Final = ',"data":{"format":"string","value":"'
_TTL: Final = re.compile(r'\},"ttl":([0-9]+)[,}]', re.ASCII)
_DECODER: Final = json.JSONDecoder()
# A value that sends a resolution elsewhere: an alias, or 10320/loc's locations.
_DETOUR: Final = re.compile(r'"type":"(?i:hs_alias|10320/loc)"', re.ASCII)
#: What a value with permissions of its own looks like: its ``permissions`` key follows its
#: ``data`` object (written only when a value is not publicly readable).
_OWN_PERMISSIONS: Final = '},"permissions":'


def json_string(text: str) -> str:
    """*text* as a JSON string literal, as ``json.dumps(text, ensure_ascii=False)`` writes
    it (at once when nothing in it needs escaping).

    >>> print(json_string("10.1000/182"), json_string('a"b'))
    "10.1000/182" "a\\"b"
    """
    return f'"{text}"' if _JSON_PLAIN.fullmatch(text) else json.dumps(text, ensure_ascii=False)


def url_record_json(url: str, timestamp: str, ttl: int = DEFAULT_TTL) -> str:
    """The values JSON of a record of one URL value at index 1, with *timestamp* (as
    :func:`~doikit.handle.format_time` writes it), exactly as ``values_to_json`` writes it.

    >>> url_record_json("https://example.org/", "2026-11-28T00:00:00Z")
    '[{"index":1,"type":"URL","data":{"format":"string","value":"https://example.org/"},"ttl":86400,"timestamp":"2026-11-28T00:00:00Z"}]'
    """
    return f'{_URL_HEAD}{json_string(url)}}},"ttl":{ttl},"timestamp":"{timestamp}"}}]'


def one_url(values_json: str) -> str | None:
    """The URL of a record that is one public URL value whose text has no escapes (the
    common record, as a deposit writes it); ``None`` for any other record."""
    plain = _ONE_URL.fullmatch(values_json)
    return None if plain is None else plain.group(1)


def first_url(values_json: str) -> tuple[str, int] | None:
    """The first URL value's text and TTL, or ``None`` when that value is not plain string
    data with a TTL in seconds and no permissions of its own (or there is none)."""
    kind = _URL_TYPE.search(values_json)
    if kind is None or not values_json.startswith(_STRING_DATA, kind.end()):
        return None
    start = kind.end() + len(_STRING_DATA)  # just after the opening quote
    close = values_json.find('"', start)
    if close < 0:
        return None
    url = values_json[start:close]
    if "\\" in url:  # escapes, perhaps an escaped quote: JSON reads the string
        url, after = _DECODER.raw_decode(values_json, start - 1)
        close = after - 1
    ttl = _TTL.match(values_json, close + 1)
    if ttl is None or not isinstance(url, str):
        return None
    return url, int(ttl.group(1))


def detours(values_json: str) -> bool:
    """Whether a value sends a resolution elsewhere (``HS_ALIAS``, ``10320/loc``)."""
    return _DETOUR.search(values_json) is not None


def all_public(values_json: str) -> bool:
    """Whether every value is publicly readable, so that the record can be served as
    stored. An HS_ADMIN value's own ``permissions`` (inside its data) is not a value's
    permissions; a ``permissions`` key inside structured data that follows an object may
    make this False for a public record, which only sends it the long way.

    >>> admin = '[{"index":100,"type":"HS_ADMIN","data":{"format":"admin","value":{"handle":"0.NA/10.1","index":200,"permissions":"011111111111"}},"ttl":86400}]'
    >>> all_public(admin)
    True
    >>> all_public('[{"index":1,"type":"EMAIL","data":{"format":"string","value":"a@b"},"permissions":"1110","ttl":86400}]')
    False
    """  # noqa: E501 - the records as stored
    return _OWN_PERMISSIONS not in values_json
