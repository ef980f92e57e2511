"""Finding DOI names in text: reference lists, prose, HTML, exports.

A scan looks for the start of a DOI name (``10.<registrant>/``, or ``10.<registrant>:``
after ``urn:doi:``) and grows it as a careful human reads it:

- it ends at whitespace, a control character, a ``"``, or an HTML tag (``</…``, ``<a …``);
- a closing ``) ] } >`` belongs to the DOI only when an opener inside the DOI balances it,
  so ``(doi:10.1000/182)`` gives ``10.1000/182`` and a SICI DOI stays whole;
- trailing ``. , ; : ! ? …`` and closing quotes are dropped (nothing of the DOI follows);
- a ``,`` or ``;`` directly followed by another DOI separates the two;
- inside a URL (``https://doi.org/…``, a publisher's ``…/doi/10.…``, ``?doi=10.…``) a raw
  ``?``, ``#`` or ``&`` ends the DOI and percent-escapes are decoded; outside URLs the
  text is taken literally, so ``…3.0.CO;2-#`` keeps its ``#``.

Each candidate must then be a valid :class:`~doikit.DOI`; the span reported is where the
DOI is written in the text.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Final, NamedTuple

from doikit._doi import DOI
from doikit._errors import InvalidDOI
from doikit._syntax import PercentError, percent_decode

if TYPE_CHECKING:
    from collections.abc import Iterator


class Found(NamedTuple):
    """A DOI found in text: the ``doi``, its ``start`` and ``end`` in the text, and the
    ``text`` as written there (``text[start:end]``)."""

    doi: DOI
    start: int
    end: int
    text: str


# A DOI name starts at '10.' not glued to a preceding word, number or dot (so "110.1/x",
# "v10.1/x" and CiteSeerX-like "1.10.1/x" are not starts). URN forms use ':' for the '/'.
_START: Final = re.compile(
    r"(?<![0-9A-Za-z.\-_])(?P<urn>urn:doi:)?10\.[0-9]+(?:\.[0-9]+)*(?(urn)[:/]|(?:/|%2[Ff]))",
    re.IGNORECASE | re.ASCII,
)
# What, just before the start, makes the DOI part of a URL (its path or query).
_URL_BEFORE: Final = re.compile(
    r"[a-z][a-z0-9+.-]*://[^\s\"'<>]*$"  # scheme://… up to the start
    r"|(?:^|[\s\"'(<\[])(?:(?:dx\.|www\.)?doi\.org|hdl\.handle\.net)/$"  # doi.org/ (no scheme)
    r"|[?&;][a-z_]*doi[a-z_]*=$",  # a query parameter: ?doi=, &rft_id-like doi=
    re.IGNORECASE | re.ASCII,
)
_OPENERS: Final = {"(": ")", "[": "]", "{": "}", "<": ">"}
_CLOSERS: Final = frozenset(_OPENERS.values())
_TRAILING: Final = frozenset(".,;:!?…\"'”’»›")
# An HTML tag or comment begins here: '</', '<!', or '<' + a letter + tag-like text + '>'.
_TAG: Final = re.compile(r"<(?:/|!|[a-z][a-z0-9]*(?:\s[^<>]*)?/?>)", re.IGNORECASE | re.ASCII)
# In a URL, publisher pages append views to the DOI: …/doi/10.1111/x/abstract.
_URL_TAILS: Final = re.compile(
    r"/(?:abstract|full|fulltext|pdf|epdf|pdfdirect|html|references|citedby|suppl|figures)"
    r"(?:/.*)?$",
    re.IGNORECASE | re.ASCII,
)
_NEXT_DOI: Final = re.compile(
    r"[,;]\s*(?:doi:\s*)?10\.[0-9]+(?:\.[0-9]+)*/", re.IGNORECASE | re.ASCII
)


def find_all(text: str) -> Iterator[Found]:
    """Every DOI name in *text*, in order of appearance.

    >>> text = "Refs: 10.1000/182, 10.1038/nature12373; 10.1093/nar/27.2.573."
    >>> [str(found.doi) for found in find_all(text)]
    ['10.1000/182', '10.1038/nature12373', '10.1093/nar/27.2.573']
    >>> found = find("(see https://doi.org/10.1002/(SICI)1097-4258(199906)14:2%3C123::AID-XYZ%3E3.0.CO;2-1)")
    >>> found.doi
    DOI('10.1002/(SICI)1097-4258(199906)14:2<123::AID-XYZ>3.0.CO;2-1')
    >>> found.start, found.end
    (21, 84)
    """
    position = 0
    while True:
        start_match = _START.search(text, position)
        if start_match is None:
            return
        start = start_match.start()
        in_url = _URL_BEFORE.search(text, 0, start) is not None
        end = _grow(text, start_match.end(), in_url=in_url)
        found = _make(text, start, end, urn=start_match.group("urn") is not None, in_url=in_url)
        if found is not None:
            yield found
            position = found.end
        else:
            position = start_match.end()


def find(text: str) -> Found | None:
    """The first DOI name in *text*, or None.

    >>> find("no DOI here") is None
    True
    """
    return next(find_all(text), None)


def _grow(text: str, index: int, *, in_url: bool) -> int:
    """The end of the DOI whose suffix starts at *index*."""
    depth: list[str] = []
    length = len(text)
    while index < length:
        char = text[index]
        if char.isspace() or not char.isprintable() or char == '"':
            break
        if in_url and char in "?#&'":
            break
        if char == "<" and _TAG.match(text, index):
            break
        if char in _OPENERS:
            depth.append(_OPENERS[char])
        elif char in _CLOSERS:
            if not depth or depth[-1] != char:
                break
            depth.pop()
        elif char in ",;" and _NEXT_DOI.match(text, index):
            break
        index += 1
    return index


def _make(text: str, start: int, end: int, *, urn: bool, in_url: bool) -> Found | None:
    """Trim the candidate ``text[start:end]`` and read it as a DOI, or None."""
    while end > start and text[end - 1] in _TRAILING:
        end -= 1
    raw = text[start:end]
    if in_url:
        tail = _URL_TAILS.search(raw)
        if tail is not None:
            end -= len(raw) - tail.start()
            raw = raw[: tail.start()]
    name = raw
    if "&" in name and ";" in name:
        name = html.unescape(name)
    try:
        if in_url or urn:
            name = percent_decode(name)
        doi = DOI("urn:doi:" + name[8:] if urn else name)
    except (InvalidDOI, PercentError):
        return None
    return Found(doi, start, end, raw)
