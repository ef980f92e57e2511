"""doikit's own write formats, each with one owner: the bare name a write takes, and the
deposit line — written by ``doikit deposit`` (:mod:`doikit._deposit`), read by the
server's ``POST /api/deposit`` (:mod:`doikit.server._writes`). The values a line's URL
becomes are the stored values JSON's (:func:`doikit.handle.url_record_json`).

A deposit line is one JSON object: ``{"doi": NAME, "url": URL}`` or ``{"doi": NAME,
"values": [...]}``, with ``"line": N`` (its line in the depositor's file) so that what is
refused is named by line. The common line, a name and a URL with nothing to escape, is
written and read without a JSON codec (a third of a line's cost); a property test holds
both ways to the codec's bytes and answers.
"""

from __future__ import annotations

import json
import re
from typing import Final

from doikit._doi import DOI
from doikit.handle import json_string

_PLAIN_KEYS: Final = ["doi", "url", "line"]
# The common line as encoded() writes it (the separators as json.dumps writes them, or
# without spaces), read without a JSON decoder.
_PLAIN_LINE: Final = re.compile(
    rb'\{"doi": ?"([^"\\\x00-\x1f]*)", ?"url": ?"([^"\\\x00-\x1f]*)"'
    rb'(?:, ?"line": ?([1-9][0-9]{0,8}))?\}'
)


def bare_doi(text: str) -> DOI:
    """The DOI *text* names, given bare — nothing but the name, as every write takes it
    (the REST API, the native protocol, a deposit line).

    >>> bare_doi("doi:10.1000/182")
    Traceback (most recent call last):
    ...
    ValueError: write the bare DOI name '10.1000/182', not 'doi:10.1000/182'

    :raises ValueError: an invalid name (:class:`~doikit.InvalidDOI`), or one in
        another presentation.
    """
    doi = DOI(text)
    if str(doi) != text:
        msg = f"write the bare DOI name {str(doi)!r}, not {text!r}"
        raise ValueError(msg)
    return doi


def encoded(item: dict[str, object]) -> bytes:
    """*item* as one deposit line, as ``json.dumps(item, ensure_ascii=False)`` writes it; the
    common line (``doi``, ``url``, ``line``) is written without the encoder, in the form
    :func:`plain_line` reads when nothing in it needs escaping."""
    if list(item) == _PLAIN_KEYS:
        doi, url, line = item["doi"], item["url"], item["line"]
        if type(doi) is str and type(url) is str and type(line) is int:
            return (
                f'{{"doi": {json_string(doi)}, "url": {json_string(url)}, "line": {line}}}'.encode()
            )
    return json.dumps(item, ensure_ascii=False).encode("utf-8")


def plain_line(line: bytes) -> tuple[str, str, int | None] | None:
    """The name, URL and line number of a common line, read without a JSON decoder;
    ``None`` for any other line (the JSON path reads it, and says what is wrong)."""
    plain = _PLAIN_LINE.fullmatch(line)
    if plain is None:
        return None
    given_name, given_url, given_number = plain.groups()
    try:
        name, url = given_name.decode("utf-8"), given_url.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return name, url, int(given_number) if given_number else None
