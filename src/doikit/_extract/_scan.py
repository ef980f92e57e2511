"""The scan's loop over the candidate pattern's matches, and _decide, which hands each
candidate the pattern has not decided to the quick path or the walk. With the C
accelerator the same loop runs in C (_speedups.Scan), which calls this module's _decide."""

from __future__ import annotations

from typing import TYPE_CHECKING

from doikit._doi import valid_doi
from doikit._extract._found import Found, _moved, _new_found
from doikit._extract._make import _completed
from doikit._extract._pattern import _IN_URL, _SHAPED, _TRAIL_CHARS, _candidates
from doikit._extract._quick import _quick
from doikit._extract._stream import _TAIL
from doikit._extract._url import _url_name, _url_plain
from doikit._extract._walk import _walk

if TYPE_CHECKING:
    import re
    from collections.abc import Iterator


def _scan_python(
    text: str, position: int, resume: list[int] | None, base: int = 0
) -> Iterator[Found]:
    """The DOIs in *text* from *position* on, their spans counted from *base* (the stream
    offset of ``text[0]``). With a *resume* list the text is a chunk of a stream: a DOI that
    reaches the end of the text may go on in the next chunk, so the scan stops before it
    and puts in *resume* where the next scan must start."""
    # Three paths reach the same answers (_CANDIDATE_PATTERN's alternatives): a DOI the pattern
    # has decided is only trimmed (and in a URL decoded) here; a candidate of the common
    # shape is checked by _quick; everything else, and anything _quick is unsure of, takes
    # the general walk (_walk), which is the authority. A property test checks that the
    # three agree. With the C accelerator the same loop runs in C (_speedups.Scan), which
    # hands _decide what this loop does.
    # In a stream, a DOI that the pattern ends at the end of the chunk may go on.
    stream = resume is not None
    near_end = len(text) - 1
    candidates = _candidates().finditer
    restart = True
    while restart:
        restart = False
        for match in candidates(text, position):
            if match.lastindex is None and (not stream or match.end() < near_end):
                written = match[0].rstrip(_TRAIL_CHARS)
                doi = valid_doi(written)
                start = match.start()
                end = position = start + len(written)
                if base:  # a stream's chunk (adding 0 would still make new ints)
                    start += base
                    end += base
                yield _new_found(Found, (doi, start, end, written))
                continue
            found, position, action = _decide(text, match, resume, base)
            if found is not None:
                yield found
            if action == _STOP:
                return  # a stream's chunk ends inside a DOI: resume has been set
            if action == _RESTART:
                restart = True  # scan on from position, past what _walk took or refused
                break
    if resume is not None:
        # A start may be split at the end of the chunk ('…10.10' + '00/182').
        resume.append(max(position, len(text) - _TAIL))


# What the scan does after _decide: go on with the same matches, start a new search at
# the position, or stop (a stream's chunk ends inside a DOI).
_GO_ON, _RESTART, _STOP = 0, 1, 2


def _decide(
    text: str, match: re.Match[str], resume: list[int] | None, base: int
) -> tuple[Found | None, int, int]:
    """A candidate that is not a decided DOI in text: the DOI it gives (spans from *base*)
    or None, where the scan goes on, and how (_GO_ON, _RESTART or _STOP)."""
    kind = match.lastindex
    if kind == _IN_URL:
        if resume is None or match.end() < len(text) - 1:
            written = match[0].rstrip(_TRAIL_CHARS)
            plain = _url_plain(written)
            name = written if plain else _url_name(written)
            if name is not None:
                start = match.start()
                end = start + len(written)
                found = _new_found(Found, (valid_doi(name), start, end, written))
                # (an escape may write a Springer book's first digit: its chapter is read)
                completed = found if plain else _completed(text, found, resume)
                if completed is None:
                    return None, -1, _STOP
                return _moved(completed, base), completed.end, _GO_ON
    elif kind == _SHAPED:
        quick = _quick(text, match, resume)
        if quick is not None:
            quick = _completed(text, quick, resume)
            if quick is None:
                return None, -1, _STOP
            return _moved(quick, base), quick.end, _GO_ON
    return _walked(text, match, resume, base)


def _walked(
    text: str, match: re.Match[str], resume: list[int] | None, base: int
) -> tuple[Found | None, int, int]:
    """_decide's answer by the general walk: for a candidate no quicker path decides (the C
    scan calls it for one its quick path has refused, as _quick refuses it)."""
    found, position = _walk(text, match, resume)
    if found is None:
        return None, position, _STOP if position < 0 else _RESTART
    found = _completed(text, found, resume)
    if found is None:
        return None, -1, _STOP
    return _moved(found, base), max(position, found.end), _RESTART
