"""ShortDOIs (10/abc1), when asked for: find_short."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final, NamedTuple

from doikit._extract._found import _new_found
from doikit._extract._stream import _chunked, _chunks_of, _exact, _Readable
from doikit._syntax import DOI_ORG_HOSTS_PATTERN, RESOLVER_HOSTS_PATTERN

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator


class FoundShort(NamedTuple):
    """A shortDOI found in text: its ``handle`` (``10/`` and the code, lower-cased, as
    :meth:`doikit.client.Client.expand_short` takes it), its ``start`` and ``end`` in the
    text, and the ``text`` as written there."""

    handle: str
    start: int
    end: int
    text: str


# A shortDOI code is ASCII letters and digits with at least one letter. It counts behind a
# DOI marker ('doi:', 'DOI ', a doi.org or hdl.handle.net URL: '…/10/abc'); in a doi.org
# URL without '10/' ('https://doi.org/abc1') when it is 4-10 characters with a digit among
# them (doi.org's own pages, /faq or /help, have none); bare ('10/abc1') only with a digit
# and a letter, so that units and dates ('10/min', '10/12') are not taken. Nothing glued
# to a word, '.', '/' or '-' before it, nor a word character, '/' or '-' after it.
_SHORT: Final = re.compile(
    r"""(?<![A-Za-z0-9._/-])
    (?:
        (?:doi[ \t]*:[ \t]*|doi[ \t]+|(?:https?://)?"""
    + RESOLVER_HOSTS_PATTERN
    + r"""/)
        (10/(?=[0-9]*[a-z])[a-z0-9]{1,32})
      | (?:https?://)?"""
    + DOI_ORG_HOSTS_PATTERN
    + r"""/((?=[a-z]*[0-9])(?=[0-9]*[a-z])[a-z0-9]{4,10})
      | (10/(?=[a-z]*[0-9])(?=[0-9]*[a-z])[a-z0-9]{2,32})
    )(?![A-Za-z0-9_/-])""",
    re.IGNORECASE | re.ASCII | re.VERBOSE,
)
# What a stream keeps between chunks: more than the longest marker and shortDOI.
_SHORT_KEEP: Final = 128


def find_short(source: str | _Readable | Iterable[str]) -> Iterator[FoundShort]:
    """Every shortDOI (``10/abc1``, ``doi:10/abc``, ``https://doi.org/10/abc``,
    ``https://doi.org/abc1``) in *source*, in order of appearance. :func:`find_all` skips
    them, since a shortDOI is an alias of a DOI name, not a name: expand one through a
    resolver (:meth:`doikit.client.Client.expand_short`). *source* is read as by
    :func:`find_all`, in constant memory.

    >>> [(s.handle, s.text) for s in find_short("See doi:10/ABC and https://doi.org/b8xx35.")]
    [('10/abc', '10/ABC'), ('10/b8xx35', 'b8xx35')]
    >>> list(find_short("10 mg/kg, 10/min, 2020/10/12"))
    []
    """
    if isinstance(source, str):
        return _short_in(_exact(source), 0, len(source), 0)
    return _chunked(_chunks_of(source), _short_chunk, _SHORT_KEEP)


def _short_in(text: str, position: int, until: int, base: int) -> Iterator[FoundShort]:
    for match in _SHORT.finditer(text, position):
        if match.end() > until:
            return
        kind = match.lastindex or 0
        code = match[kind]
        start = match.start(kind)
        handle = code.lower() if kind != 2 else "10/" + code.lower()
        yield _new_found(FoundShort, (handle, base + start, base + match.end(), code))


def _short_chunk(
    buffer: str, scan_from: int, base: int, *, final: bool
) -> tuple[Iterator[FoundShort], Callable[[], int]]:
    """_short_in for _chunked: a match that ends before the last character is decided (its
    look-ahead saw what follows); one that might go on waits for the next chunk."""
    last = [scan_from]

    def found() -> Iterator[FoundShort]:
        until = len(buffer) if final else len(buffer) - 1
        for short in _short_in(buffer, scan_from, until, base):
            last[0] = short.end - base
            yield short

    return found(), lambda: max(last[0], len(buffer) - _SHORT_KEEP)
