"""The general walk, the authority: a candidate read with every rule (what stands before
its start, whether it sits in a URL, where its run ends, then _make), and names spaced out
behind a DOI marker (_spaced)."""

from __future__ import annotations

import html
import itertools
import re
from typing import TYPE_CHECKING, Final

from doikit._doi import DOI
from doikit._errors import InvalidDOI
from doikit._extract._found import Found, _new_found
from doikit._extract._make import _PREPRINT, _make
from doikit._extract._pattern import (
    _BARE,
    _BARE_START,
    _FIELD_TAG,
    _IS_PLACEHOLDER,
    _OPENERS,
    _SPACED,
    _URN,
)
from doikit._extract._run import (
    _ENTITY,
    _ESCAPE_WORD,
    _ESCAPED_PUNCTUATION,
    _ESCAPED_TAG,
    _LINE_BREAK,
    _NEXT_DOI_MARKER,
    _NEXT_URL_HEADS,
    _STOPS_IN_TEXT,
    _STOPS_IN_URL,
    _entity_char,
    _grow,
)
from doikit._extract._url import (
    _BADGE_IMAGES,
    _ESCAPED_SLASHES,
    _ESCAPES,
    _FILES_AFTER,
    _GLUED_FILES,
    _OUP,
    _SHIELDS_LABEL,
    _SHIELDS_WINDOW,
    _after_shields_badge,
    _in_url,
    _in_url_length,
)
from doikit._syntax import PercentError, percent_decode

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

# A start glued to a word, a number or a dot is no start ("110.1/x", "v10.1/x", "1.10.1/x")
# (rule: look-alikes-skipped).
_GLUED: Final = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz.-_")


# (rule: subfield-code-is-no-glue)
# A catalogue record's subfield code before its value: Alma/Primo's '$$a', MARC's mnemonic
# '$a' and binary MARC's unit separator (U+001F) with the code.
_SUBFIELD_BEFORE: Final = re.compile(r"(?:\$\$?|\x1f)[a-z0-9]\Z")
# (rule: page-range-glued)
# A page range that some publishers glue to the DOI after it ('5: 45-10.1016/…'): a number
# and '-' with nothing glued before them.
_PAGE_RANGE_BEFORE: Final = re.compile(r"(?<![0-9A-Za-z._\-/])[0-9]{1,6}-\Z")


# (_read_on), and what counts as one: a '10.' the candidate pattern tries (_BARE_START).
_STARTS_READ_AGAIN: Final = 2
_MAY_START: Final = re.compile(rf"10\.{_BARE_START}").finditer


def _walk(text: str, match: re.Match[str], resume: list[int] | None) -> tuple[Found | None, int]:
    """Read the candidate at *match* with every rule: the DOI (or None) and where the scan
    goes on; -1 when a stream's chunk ends inside the DOI (then *resume* is set)."""
    if match.lastindex == _SPACED:
        return _spaced(text, match, resume)
    start = match.start()
    position = match.end() if match.lastindex == _BARE else text.index("/", start) + 1
    prefix = text[start:position]
    urn = start >= 8 and text[start - 8 : start].lower() == _URN
    if urn:
        start -= 8
    elif prefix[-1] == ":":
        return None, position  # '10.123:456' names a DOI only in the URN form (rule: urn-colon)
    # (rule: escaped-presentation-in-url)
    # After an escaped ':' or '/' ('?id=doi%3A10.…', '…%2F10.…') the start is not glued
    # to the hex digit: the name sits in a URL, escaped.
    escaped = start >= 3 and text[start - 3] == "%" and text[start - 2 : start] in _ESCAPES
    if (
        start > 0
        and text[start - 1] in _GLUED
        and not escaped
        and not _PAGE_RANGE_BEFORE.search(text, max(0, start - 8), start)
        and not _after_shields_badge(text, start)
        and not _SUBFIELD_BEFORE.search(text, max(0, start - 3), start)
    ):
        return None, position
    # A name whose '/' is written '%2F' behind a DOI marker ('doi = 10.1000%2Fxyz', a
    # template field) is escaped; without one, '%2F' is no separator (a bare '%' is literal).
    in_url = (
        _in_url(text, start, escaped=escaped)
        or _after_shields_badge(text, start)
        or (
            prefix[-3:] in _ESCAPED_SLASHES
            and (escaped or _MARKER.search(text, max(0, start - 12), start) is not None)
        )
    )
    if (
        not (in_url or urn)
        and text[start - 1 : start] == "/"
        and text[start - 2 : start - 1].isdigit()
    ):
        # a number's path outside a URL ('114/10.654206/0.3') (rule: number-path-is-no-doi)
        return None, position
    if not (urn or in_url) and _looks_like_a_number(text, start, prefix):
        return None, position
    end, run_end = _grow(text, position, in_url=in_url, stream=resume is not None)
    if resume is not None and end == len(text):
        # the run reaches the chunk's end (_run_end's wait): the next chunk decides, the
        # placeholder check too ('10.1000/xxx' + 'u')
        resume.append(start)
        return None, -1
    line_break = _LINE_BREAK.match(text, position)  # ('https://doi.org/10.1145/⏎nnnnnnn…')
    # (rule: placeholder-is-no-doi)
    if _IS_PLACEHOLDER(text, position if line_break is None else line_break.end()):
        return None, run_end  # past the whole token: a scan from its start again is quadratic
    if text.startswith("\\@", end):
        # a TeX macro's template ('10.1007/s\@doiinfo'), no DOI (rule: tex-macro-template)
        return None, _read_on(text, position, run_end)
    # (nothing after the prefix is no DOI: not parsed, which a run of such starts pays for)
    found = _make(text, start, end, urn=urn, in_url=in_url) if end > position else None
    # Cut before an unclosed bracket (_grow), the rest of the run may hold another DOI
    # ('10.1000/a(https://doi.org/10.1000/b'); so may the rest of a candidate refused, or
    # cut by _make (a view after a DOI in a URL).
    after = end if end < run_end else (position if found is None else found.end)
    return found, _read_on(text, after, run_end)


def _read_on(text: str, after: int, run_end: int) -> int:
    """Where the scan goes on after a walk that has read the run up to *run_end* and taken
    (or refused) the text only up to *after*: there when the rest of the run holds at most
    _STARTS_READ_AGAIN starts, else after the run. Each start in the rest reads the rest of
    the run again, so that '10.1000/a(' or '10.1000/a+' repeated before a '\\@' would be
    quadratic (issue 27); no DOI of the corpora shares its run with more than two others."""
    if after < run_end:
        more = itertools.islice(_MAY_START(text, after, run_end), _STARTS_READ_AGAIN, None)
        if next(more, None) is not None:
            return run_end
    return after


# (rule: spaced-name)
# A name spaced out after its '10.', as the text layers of Chinese journals' PDFs write it
# ('doi:10. 15889 / j. issn. 1002 - 1302. 2016. 10. 042'): the registrant, '/' with or
# without blanks, then runs of letters and digits joined by '.', '/', '_', ':' or '-' with a
# blank on either side or none; after a blank the next run starts with a small letter or a
# digit (a capital after '. ' starts the next sentence), not a DOI marker. Taken
# only behind a DOI marker.
_SPACED_JOIN: Final = r"(?:[./_:-]| ?[./_:-] (?=[0-9a-z])(?!doi)| [./_:-](?=[0-9a-z])(?!doi))"
_SPACED_NAME: Final = re.compile(
    rf"[0-9]{{4,9}}(?:\.[0-9]+)* ?/ ?[0-9A-Za-z]+(?:{_SPACED_JOIN}[0-9A-Za-z]+)*", re.ASCII
)
# What may go on with a spaced name, or become one, in a stream's next chunk.
_SPACED_GOES_ON: Final = re.compile(r" ?[./_:-]? ?\Z")
_SPACED_BEGUN: Final = re.compile(r"[0-9.]* ?/? ?\Z")


def _spaced(text: str, match: re.Match[str], resume: list[int] | None) -> tuple[Found | None, int]:
    """_walk for a name spaced out behind a DOI marker (_SPACED_NAME)."""
    start = match.start()
    spaced = _SPACED_NAME.match(text, match.end())
    if spaced is None:
        if resume is not None and _SPACED_BEGUN.match(text, match.end()):
            resume.append(start)
            return None, -1
        return None, match.end()
    end = spaced.end()
    if resume is not None and _SPACED_GOES_ON.match(text, end):
        resume.append(start)
        return None, -1
    name = spaced.group().replace(" ", "")
    if _IS_PLACEHOLDER(name, name.index("/") + 1):
        return None, end
    try:
        doi = DOI("10." + name)
    except InvalidDOI:
        return None, end
    return _new_found(Found, (doi, start, end, text[start:end])), end


# Bare look-alikes: a prefix shaped like an IPv4 address (10.0.0.1/24), or a registrant
# code of fewer than 4 digits in all (a ratio like 10.5/20). Behind a DOI marker (doi:,
# BibTeX's doi = {, RIS's DO  - ) they are still DOIs.
_REGISTRANT_CODE: Final = re.compile(r"[0-9]+(?:\.[0-9]+)*")
_IPV4_PREFIX: Final = re.compile(r"10\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\D", re.ASCII)
_MARKER: Final = re.compile(r"(?:doi[\s:={(\"'\[]{0,5}|DO  - )\Z", re.IGNORECASE | re.ASCII)


def _looks_like_a_number(text: str, start: int, prefix: str) -> bool:
    """Whether a bare start without a DOI marker is more likely a number than a DOI."""
    # prefix is '10.' + digits and dots + a separator ('/', '\\/', ':', '%2F', '&#x2F;'…).
    registrant = _REGISTRANT_CODE.match(prefix, 3)
    digits = registrant.end() - 3 - prefix.count(".", 3, registrant.end()) if registrant else 0
    if digits >= 4 and not _IPV4_PREFIX.match(prefix):
        return False
    return _MARKER.search(text, max(0, start - 12), start) is None


def _configure_c_walk(speedups: ModuleType) -> None:
    """Hand the walk in C (_speedups' walk.c, which the C scan runs for a candidate of a
    whole text that the quick path has refused, or a bare start) the parts it reads
    (_c_walk_parts)."""
    speedups.configure_walk(**_c_walk_parts())


def _ascii_matching(pattern: Callable[[str], object]) -> str:
    """The ASCII characters *pattern* (a compiled pattern's match or search) finds alone."""
    return "".join(char for char in map(chr, range(128)) if pattern(char))


def _c_walk_parts() -> dict[str, object]:
    """What the walk in C reads: the stops' characters as the walk's own patterns find them,
    and the compiled patterns and functions of the rules with more to them; the rules the
    quick path reads too it takes from the quick path in C (_quick._c_quick_parts)."""
    return {
        "glued": "".join(sorted(_GLUED)),
        "urn": _URN,
        "escapes": tuple(sorted(_ESCAPES)),
        "slashes": tuple(sorted(_ESCAPED_SLASHES)),
        "stops": _ascii_matching(_STOPS_IN_TEXT),
        # ('%' is a stop only where it starts no escape: walk.c reads it so)
        "url_stops": _ascii_matching(_STOPS_IN_URL).replace("%", ""),
        "openers": "".join(_OPENERS),
        "closers": "".join(_OPENERS.values()),
        "field_tag": _FIELD_TAG,
        "next_marker": _NEXT_DOI_MARKER,
        "next_heads": _NEXT_URL_HEADS,
        "entity": _ENTITY.match,
        "escape_word": _ascii_matching(_ESCAPE_WORD.match),
        "unescaped": "".join(
            char for char in map(chr, range(128)) if _ESCAPED_PUNCTUATION.fullmatch("\\" + char)
        ),
        "url_length": _in_url_length,
        "decode": percent_decode,
        "decode_error": PercentError,
        "preprint": _PREPRINT.fullmatch,
        "page_range": _PAGE_RANGE_BEFORE.search,
        "shields": _after_shields_badge,
        "subfield": _SUBFIELD_BEFORE.search,
        "number": _looks_like_a_number,
        "entity_char": _entity_char,
        "escaped_tag": _ESCAPED_TAG.match,
        "unescape": html.unescape,
        "glued_files": _GLUED_FILES,
        "files_after": _FILES_AFTER,
        "badge_images": _BADGE_IMAGES,
        "oup": _OUP,
        "shields_window": _SHIELDS_WINDOW,
        "shields_label": _SHIELDS_LABEL,
    }
