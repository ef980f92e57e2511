"""The quick path: a candidate of the common shape (the pattern's group 2) checked by what
surrounds it; None leaves it to the walk, whose answers it must give (a property test)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from doikit._doi import valid_doi
from doikit._extract._found import Found, _new_found
from doikit._extract._make import _PREPRINT, _PREPRINTS, _as_letters, _versioned
from doikit._extract._pattern import (
    _ENDER_CHARS,
    _IS_PLACEHOLDER,
    _PLACEHOLDER_STARTS,
    _SHAPED,
    _TRAILING,
    _URN,
)
from doikit._extract._run import (
    _HYPHENS,
    _JOINS_AFTER,
    _NOT_CONTINUING,
    _NOT_CONTINUING_HEADS,
    _SICI_CHECK_BEGUN,
    _SICI_CHECK_BREAK,
    _TAG,
    _rejoined,
)
from doikit._extract._url import (
    _BADGE,
    _BOUNDARIES,
    _DOI_PARAMETER,
    _DOI_PATH_LABEL,
    _GLUED_FILE_LAST,
    _LOOKBACK,
    _OUP_HOST,
    _PARAMETER_STARTS,
    _URL_VIEW_AFTER,
    _VIEWS,
    _after_doi_path_label,
    _in_url,
    _in_url_length,
    _token_start,
    _url_name,
)
from doikit._hyphens import (
    _ARTICLE_HYPHENS,
    _ISBN_HYPHENS,
    _ISBN_STARTS,
    _MENDED_ANY,
    _MENDED_FIRST,
    _MENDED_NOT_ISBN,
    _MENDED_PREFIXES,
    _SPRINGER,
    mended,
)

if TYPE_CHECKING:
    from types import ModuleType

# What, right before a candidate of the common shape (which the pattern has found not glued
# to a word, '.', '-' or '_'), leaves the decision to the walk or a closer look: '/', '='
# or '%' (a URL or an escape), ':' (urn:doi: names use ':' and are walked; 'doi:' is
# checked for).
_QUICK_AFTER_NOT: Final = frozenset("/=:%")
# The resolver URLs _quick reads itself when they follow a boundary.
# (the commonest resolver URLs, decided by _quick: a subset of RESOLVER_HOSTS's, which the
# walk reads whole; a test checks that they are)
_QUICK_HEADS: Final = ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/")


# In a URL, what ends a DOI's run (the walk reads it), and with the views publishers append
# (_url._URL_VIEW_AFTER) what the quick path leaves to the walk in a URL with escapes.
_QUICK_URL_STOPS: Final = "?#'"
_QUICK_URL_STOP: Final = re.compile(rf"[{_QUICK_URL_STOPS}]").search
_QUICK_URL_ODD: Final = re.compile(rf"[{_QUICK_URL_STOPS}]|{_URL_VIEW_AFTER}", re.ASCII).search
# A start in the part of a URL's DOI or a preprint's name the quick path cuts: the walk goes
# on reading there, so the quick path leaves it to the walk.
_START: Final = "10."
# After a candidate, what surely ends a DOI: whitespace, '"' and the closers (no opener in
# the candidate is unbalanced).
_QUICK_ENDS: Final = frozenset(" \t\n\r\f\v\"')]}>" + _ENDER_CHARS)
_QUICK_TRIM: Final = "".join(sorted(_TRAILING))
_LINE_END_AHEAD: Final = re.compile(r"[ \t]*+\r?(?:\n|\Z)").match


def _quick(text: str, match: re.Match[str], resume: list[int] | None) -> Found | None:
    """The DOI of a candidate of the common shape, or None when the walk must decide."""
    start, end = match.span()
    length = len(text)
    if resume is not None and end + 1 >= length:
        return None  # the next chunk may go on with this DOI
    in_url = False
    if start:
        before = text[start - 1]
        if before in _QUICK_AFTER_NOT:
            if before == ":":
                if text[start - 8 : start].lower() == _URN or _after_doi_path_label(text, start):
                    return None  # a URN, or a URL path's '/doi:' (_in_url decides)
            elif before == "%":
                return None
            elif _after_resolver(text, start) or _in_url(text, start):
                if _QUICK_URL_STOP(text, start, end):
                    return None  # the run ends there: the walk reads it
                in_url = True
            elif before == "/" and text[start - 2 : start - 1].isdigit():
                return None  # a number's path outside a URL: the walk refuses it
            # (else '/' or '=' outside a URL: the walk reads the name as text)
    if end < length:
        after = text[end]
        if after not in _QUICK_ENDS and not (
            after == ","
            or (after == ";" and (end + 1 == length or text[end + 1] in _QUICK_ENDS))
            or (after == "<" and _TAG.match(text, end))  # an HTML or XML tag ends it (the walk's)
        ):
            return None
        if after == ";" and (
            _SICI_CHECK_BREAK(text, end - 2)
            or (resume is not None and _SICI_CHECK_BEGUN(text, end - 2))
        ):
            # a SICI name broken before its check character (or, in a stream, what the
            # chunk's end may cut so): the walk joins it
            return None
    suffix = match.start(_SHAPED)  # the registrant is no number: the pattern saw to it
    raw = match.group()
    if "\\" in raw:
        return None  # escapes (\\/, \\_) are read by the walk
    if _LINE_END_AHEAD(text, end) and (resume is not None or _rejoined(text, end) is not None):
        return None  # a DOI broken across lines goes on (or a stream's may): the walk joins it
    written = raw.rstrip(_QUICK_TRIM)
    if len(written) <= suffix - start:
        return None  # nothing of the suffix is left
    if written[suffix - start] in _PLACEHOLDER_STARTS and _IS_PLACEHOLDER(written, suffix - start):
        return None
    cut: str | None = written
    if in_url:
        cut = _in_url_written(text, start, end, written, suffix - start)
    if cut is not None and cut.startswith(_PREPRINTS):
        cut = _unversioned(text, start, end, cut)
    if cut is None:
        return None  # the walk reads on after what it cuts
    written = cut
    name = _url_name(written) if in_url and "%" in written else written
    if name is None or not name.isprintable():
        return None
    return _new_found(
        Found, (valid_doi(mended(_as_letters(name))), start, start + len(written), written)
    )


def _in_url_written(text: str, start: int, end: int, written: str, suffix: int) -> str | None:
    """How much of *written*, a candidate in a URL that ends at *end*, is the DOI, as the
    walk reads it (_url._in_url_length: a view, a file, a badge's image, an OUP page's
    number cut); None when the walk must read it: escapes with a view or a cut URL, nothing
    of the suffix (at *suffix*) left, or a start in what is cut."""
    if "%" in written:
        if _QUICK_URL_ODD(text, start, end) or _cut_in_url(text, start):
            return None
        return written
    kept = _in_url_length(text, start, written)
    if kept <= suffix or text.find(_START, start + kept, end) >= 0:
        return None
    return written[:kept]


def _unversioned(text: str, start: int, end: int, written: str) -> str | None:
    """*written*, a preprint server's name, without the version or file its link carries,
    as the walk cuts them (_make._PREPRINT); None when the walk must read it: escapes, or a
    start in what is cut."""
    version = _PREPRINT.fullmatch(written)
    if version is None:
        return written
    if "%" in written or text.find(_START, start + version.end(1), end) >= 0:
        return None
    return written[: version.end(1)]


def _cut_in_url(text: str, start: int) -> bool:
    """Whether the URL a candidate at *start* sits in may have its tail cut by the walk in
    ways the quick path does not read: a badge's (its image or colour) or an OUP page's
    (its article number)."""
    token = _token_start(text, start)
    return text.find(_BADGE, token, start) >= 0 or text.find(_OUP_HOST, token, start) >= 0


def _after_resolver(text: str, start: int) -> bool:
    """Whether a common resolver URL, right after a boundary, ends at *start*."""
    for head in _QUICK_HEADS:
        at = start - len(head)
        if at >= 0 and text.startswith(head, at) and (at == 0 or text[at - 1] in _BOUNDARIES):
            return True
    return False


def _configure_c_quick(speedups: ModuleType) -> None:
    """Hand the quick path in C (_speedups' quick.c, which the C scan runs before it hands
    a candidate to _decide) the parts it reads (_c_quick_parts)."""
    speedups.configure_quick(**_c_quick_parts())


def _c_quick_parts() -> dict[str, object]:
    """What the quick path in C reads: the rules' character sets, heads and markers, and
    the compiled patterns and functions of those with more to them, each as its module
    defines it."""
    return {
        "heads": _QUICK_HEADS,
        "boundaries": _BOUNDARIES,
        "lookback": _LOOKBACK,
        "parameter_starts": _PARAMETER_STARTS,
        "parameter": _DOI_PARAMETER,
        "url_stops": _QUICK_URL_STOPS,
        "views": tuple(_VIEWS.split("|")),
        "cut_markers": (_BADGE, _OUP_HOST),
        "ends": "".join(sorted(_QUICK_ENDS)),
        "tag": _TAG.match,
        "sici_check": _SICI_CHECK_BREAK,
        "rejoined": _rejoined,
        "joins": _JOINS_AFTER,
        "hyphens": _HYPHENS,
        "trailing": _QUICK_TRIM,
        "preprints": _PREPRINTS,
        "versioned": _versioned,
        "placeholder": "".join(sorted(_PLACEHOLDER_STARTS)),
        "is_placeholder": _IS_PLACEHOLDER,
        "glued_last": _GLUED_FILE_LAST,
        "url_name": _url_name,
        "mended_first": _MENDED_FIRST,
        "mended": mended,
        "mended_any": _MENDED_ANY,
        "isbn_starts": _ISBN_STARTS,
        "mended_prefixes": tuple(sorted(_MENDED_PREFIXES)),
        "not_isbn": _MENDED_NOT_ISBN,
        "article_hyphens": _ARTICLE_HYPHENS,
        "isbn_hyphens": tuple(sorted(_ISBN_HYPHENS.items())),
        "not_continuing": _NOT_CONTINUING,
        "not_continuing_heads": _NOT_CONTINUING_HEADS,
        "springer": _SPRINGER + "/",
        "colon_markers": (_URN, _DOI_PATH_LABEL),
    }
