"""URLs: whether a DOI sits in one (_in_url), the name in a URL candidate the pattern has
decided (_url_plain, _url_name), and how much of a URL candidate is the DOI (its escapes,
and the views, files, badges and article numbers that pages put after it)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Final
from urllib.parse import unquote

from doikit._extract._pattern import _CLOSERS, _OPENER_OF, _TRAILING
from doikit._present import quick_unescape

# A DOI is inside a URL when the token it sits in (the text since the last space, quote,
# bracket or angle bracket) starts with a scheme or a resolver host, or when it is the
# value of a doi query parameter (?doi=10.…).
# A link written without its scheme counts: 'www.' or a host name with a top-level domain
# and a '/' (onlinelibrary.wiley.com/doi/10.…).
_URL_TOKEN: Final = re.compile(
    r"(?:[a-z][a-z0-9_-]*=)?"
    r"(?:[a-z][a-z0-9+.-]*://|www\.|(?:[a-z0-9-]+\.)+[a-z]{2,}(?::[0-9]{1,5})?/|/(?=[a-z]))",
    re.IGNORECASE | re.ASCII,
)
# A doi query parameter, or a MediaWiki template's doi field ('|doi=10.…')
# (rule: link-without-scheme).
_PARAMETER_STARTS: Final = "?&;|"
_DOI_PARAMETER: Final = re.compile(
    rf"[{_PARAMETER_STARTS}][a-z_]*doi[a-z_]*=\Z", re.IGNORECASE | re.ASCII
).match
_BOUNDARIES: Final = " \t\n\r\f\v\"'<>([{`|;,"
_ESCAPES: Final = frozenset({"3A", "3a", "2F", "2f"})
_ESCAPED_SLASHES: Final = frozenset({"%2F", "%2f"})


_LOOKBACK: Final = 1024


# In a URL, publisher pages append views to the DOI (…/doi/10.1111/x/abstract), and a DOI
# badge names its image after it (Zenodo's …/badge/DOI/10.5281/zenodo.1.svg).
# Crossref's REST API routes after a DOI count as views too (api.crossref.org/works/10.…/agency),
# and so does a badge service's (…/papers/10.…/badges).
_VIEWS: Final = (
    "abstract|full|fulltext|pdf|epdf|pdfdirect|html|references|citedby|suppl|figures"
    "|agency|transform|works|badges|meta"
)
# A page's file glued to the DOI in a URL (…/10.1000/x.pdf, CNKI's …/10.13336/j.x.html; no
# labeled DOI ends so), and the last letters of one (what a candidate must end in for it).
_GLUED_FILES: Final = ("pdf", "html", "htm")
_GLUED_FILE: Final = rf"\.(?i:{'|'.join(_GLUED_FILES)})\Z"
_GLUED_FILE_LAST: Final = "".join(sorted({c for e in _GLUED_FILES for c in (e[-1], e[-1].upper())}))
# A file after the DOI (…/10.1000/x/status.svg, …/data.json), or a file glued to it.
# (rule: url-files-and-views-cut)
_URL_TAILS: Final = re.compile(rf"/(?:{_VIEWS})(?:/.*)?$|{_GLUED_FILE}", re.IGNORECASE | re.ASCII)
_FILES_AFTER: Final = ("svg", "png", "json", "xml", "html", "htm")
_FILE_AFTER: Final = rf"/[A-Za-z0-9_-]+\.(?:{'|'.join(_FILES_AFTER)})\Z"
_URL_FILE: Final = re.compile(_FILE_AFTER, re.ASCII)
# A shields.io badge names its message after its label and '-' (a '-' in the label is
# written '--'), and its colour after the last '-': img.shields.io/badge/DOI-10.5281/
# zenodo.1-blue, …/badge/Bioinformatics-10.1093%2Fbioinformatics%2Fbtr703-brightgreen.svg.
# (its label of at most _SHIELDS_LABEL characters, each '-' in it written '--'; looked for
# in the _SHIELDS_WINDOW characters before the DOI)
_SHIELDS_LABEL: Final = 48
_SHIELDS_WINDOW: Final = 64
_SHIELDS_BADGE: Final = re.compile(
    rf"/badge/(?:[^/\s-]|--){{0,{_SHIELDS_LABEL}}}-\Z", re.IGNORECASE | re.ASCII
)


def _after_shields_badge(text: str, start: int) -> bool:
    """Whether a shields.io badge's label and '-' end at *start* (the DOI is its message)."""
    return _SHIELDS_BADGE.search(text, max(0, start - _SHIELDS_WINDOW), start) is not None


_BADGE_IMAGES: Final = ("svg", "png")
_BADGE_COLOUR: Final = re.compile(rf"-[A-Za-z]+(?:\.(?:{'|'.join(_BADGE_IMAGES)}))?\Z", re.ASCII)


# In a URL, an escape that decodes to what ends a DOI (whitespace, '"', '|', '`'), and one
# at the end that decodes to trailing punctuation or a closer.
_ESCAPED_STOP: Final = re.compile(r"%(?:2[02]|7[Cc]|60|0[9AaDd]|[Cc]2%[Aa]0)")
_ESCAPE_AT_END: Final = re.compile(r"%(2[12279CcEeFf]|3[ABEFabef]|5[Dd]|7[Dd])\Z")
# What makes a URL candidate that the pattern has decided need the walk after all: those
# escapes, or a file glued to the end.
_URL_ODD_END: Final = re.compile(
    rf"{_ESCAPED_STOP.pattern}|{_ESCAPE_AT_END.pattern}|{_GLUED_FILE}", re.ASCII
).search
_DANGLING_ESCAPE: Final = re.compile(r"%[0-9A-Fa-f]?\Z")
_BADGE: Final = "/badge/"
_BADGE_IMAGE: Final = re.compile(rf"\.(?:{'|'.join(_BADGE_IMAGES)})\Z", re.IGNORECASE | re.ASCII)


def _url_plain(written: str) -> bool:
    """Whether a URL candidate the pattern has decided (group 1) is its name as written:
    no escape, no second '/' (a view or file after the name), no last letter of a glued
    file (_GLUED_FILE_LAST). The C loop (_speedups.Scan) decides these alike, reading
    _GLUED_FILE_LAST from here; the others go to _url_name in both loops."""
    return "%" not in written and written.count("/") == 1 and written[-1] not in _GLUED_FILE_LAST


def _url_name(written: str) -> str | None:
    """The name in a URL candidate the pattern has decided (group 1) that is not plain
    (_url_plain), its escapes decoded; None when an escape, a file or a view after the
    name needs the walk."""
    if written.count("/") > 1 and _URL_VIEW(written):
        return None
    if ("%" in written or written[-1] in _GLUED_FILE_LAST) and _URL_ODD_END(written):
        return None
    return quick_unescape(written) if "%" in written else written


# In a URL, what _quick leaves to the walk: the characters that end a DOI there, escapes,
# and the views publishers append (_URL_TAILS).
_URL_VIEW_AFTER: Final = rf"/(?i:{_VIEWS})(?![a-zA-Z0-9])"
# A view after a name the pattern has decided (which holds no '?', '#' or "'"). The literal
# '/' it starts with lets the engine search for it at string-search speed.
_URL_VIEW: Final = re.compile(rf"{_URL_VIEW_AFTER}|{_FILE_AFTER}", re.ASCII).search


_DOI_PATH_LABEL: Final = "/doi:"


def _after_doi_path_label(text: str, start: int) -> bool:  # (rule: url-path-views-and-doi-label)
    """Whether a 'doi:' label starts a URL path's segment right before *start*
    (api.semanticscholar.org/graph/v1/paper/DOI:10.…?fields=…): the DOI is then in the URL.
    The candidate pattern's look-behind for 'doi:' (not after ':' or '/') leaves such a
    DOI to _quick, which leaves it to the walk (_in_url)."""
    return text[start - len(_DOI_PATH_LABEL) : start].lower() == _DOI_PATH_LABEL


# The last boundary in a window: the greedy '.*' runs to the window's end and gives back
# characters until one (one pass over the token, which is short; the whole window when it
# holds none, which keeps a scan linear on text with no boundaries at all).
_LAST_BOUNDARY: Final = re.compile(rf"(?s:.*)[{re.escape(_BOUNDARIES)}]").match


def _token_start(text: str, start: int) -> int:
    """Where the token that reaches *start* begins: after the last boundary (a blank, a
    quote, a bracket), at most _LOOKBACK back. A URL longer than that is read as plain
    text."""
    low = max(0, start - _LOOKBACK)
    last = _LAST_BOUNDARY(text, low, start)
    return low if last is None else last.end()


def _in_url(text: str, start: int, *, escaped: bool = False) -> bool:
    """Whether the DOI starting at *start* is part of a URL."""
    if start == 0 or (
        text[start - 1] not in "/=" and not escaped and not _after_doi_path_label(text, start)
    ):
        # in a URL a DOI follows '/' (a path), '=' (a query value), an escape, or 'doi:' as
        # a path segment's start (_after_doi_path_label)
        return False
    token = _token_start(text, start)
    if _URL_TOKEN.match(text, token, start) is not None:
        return True
    if text[start - 1] != "=":
        return False
    # The parameter's name runs from the last of _PARAMETER_STARTS to the '=': matched
    # there, not searched for from the token's start (over and over in a long token).
    at = max(text.rfind(char, token, start) for char in _PARAMETER_STARTS)
    return at >= 0 and _DOI_PARAMETER(text, at, start) is not None


def _in_url_length(text: str, start: int, raw: str) -> int:
    """How much of the URL candidate *raw* (at *start* in *text*) is the DOI: not what
    its escapes end (_escaped_end), nor a view, a file or a badge's image or colour."""
    kept = _escaped_end(raw) if "%" in raw else len(raw)
    raw = raw[:kept]
    # (a tail holds no line break and ends at the end or before a last one: it sits in the
    # last line; searched for from every view's '/' in the lines before, each read on to
    # its line's end, quadratic on a view repeated across joined lines)
    tail = _URL_TAILS.search(raw, raw.rfind("\n", 0, len(raw) - 1) + 1)
    if (
        tail is None
        and text.find(_BADGE, max(0, start - _LOOKBACK), start) >= 0  # (the token is in it)
        and text.find(_BADGE, _token_start(text, start), start) >= 0
    ):
        # (rule: badge-image-cut) (rule: shields-badge)
        # a badge's image is named after the DOI (…/badge/DOI/10.1093/x/btu153.svg), and
        # a shields.io badge's after the DOI and its colour
        tail = (_BADGE_COLOUR if _after_shields_badge(text, start) else _BADGE_IMAGE).search(raw)
    if tail is None:
        tail = _URL_FILE.search(raw)
        if tail is not None and tail.start() < _suffix_start(raw):
            tail = None  # the whole suffix: the name itself (https://doi.org/10.1000/x.png)
    if tail is None and raw.startswith(_OUP) and raw.count("/") > 2:
        tail = _OUP_ARTICLE_NUMBER.search(raw)
        if tail is not None and text.find(_OUP_HOST, _token_start(text, start), start) < 0:
            tail = None
    return kept if tail is None else tail.start()


# (rule: oup-article-number)
# Oxford University Press's pages put their own article number after the DOI
# (academic.oup.com/bioinformatics/article/doi/10.1093/bioinformatics/btaa025/5714742, a
# purge_dups thread): OUP's names are a journal and a code (10.1093/bioinformatics/btaa025,
# 10.1093/ije/26.6.1323), so a third segment of digits in an OUP page's URL is its number.
_OUP: Final = "10.1093/"
_OUP_HOST: Final = "academic.oup.com/"
_OUP_ARTICLE_NUMBER: Final = re.compile(r"/[0-9]+\Z")


def _suffix_start(raw: str) -> int:
    """Where the suffix of the candidate *raw* starts (after '/' or an escaped '/')."""
    return min(
        (at + len(mark) for mark in ("/", "%2F", "%2f") if (at := raw.find(mark)) >= 0), default=0
    )


def _escaped_end(raw: str) -> int:  # (rule: escaped-stop-in-url)
    """How much of the URL candidate *raw* is the DOI, read as its escapes decode: it ends
    before an escape of what ends a DOI, and without escaped trailing punctuation or an
    escaped closer that nothing in it opens."""
    stop = _ESCAPED_STOP.search(raw)
    end = len(raw) if stop is None else stop.start()
    brackets: Counter[str] | None = None  # of raw[:end] decoded, once a closer asks
    while end:
        escape = _ESCAPE_AT_END.search(raw, max(0, end - 3), end)
        char = chr(int(escape.group(1), 16)) if escape is not None else raw[end - 1]
        cut = 3 if escape is not None else 1
        if char in _TRAILING:
            end -= cut
        elif char in _CLOSERS and escape is not None:
            # (each escape decodes to one character, and an ASCII one never joins the bytes
            # around it: the counts of what is cut one by one from the end are kept, not
            # decoded again for each, which is quadratic on '%29' repeated)
            if brackets is None:
                brackets = Counter(unquote(raw[:end]))
            brackets[char] -= 1
            if brackets[_OPENER_OF[char]] > brackets[char]:
                break
            end -= cut
        else:
            break
    return end
