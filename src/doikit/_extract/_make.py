"""A walked candidate made a DOI: trimmed of what trails it, cut where a URL's view or a
preprint's version starts, its escapes, references and line breaks read (_make); and a
Springer chapter a blank cut off put back (_completed)."""

from __future__ import annotations

import contextlib
import html
import re
import unicodedata
from typing import Final

from doikit._doi import DOI, valid_doi
from doikit._errors import InvalidDOI
from doikit._extract._found import Found, _new_found
from doikit._extract._pattern import _PREPRINT_NAMES, _TRAILING
from doikit._extract._run import (
    _ENTITY_AT_END,
    _ESCAPED_PUNCTUATION,
    _HYPHEN_BREAK,
    _LINE_BREAK,
    _SOFT_HYPHEN,
    _WORD_BREAK_HYPHEN,
    _entity_char,
)
from doikit._extract._url import _DANGLING_ESCAPE, _in_url_length
from doikit._hyphens import is_springer_book, mended
from doikit._syntax import URN, PercentError, percent_decode

# A preprint name, its version and its file (group 1: the registered name).
_PREPRINTS: Final = ("10.1101/", "10.64898/", "10.48550/")
_PREPRINT: Final = re.compile(
    rf"(10\.{_PREPRINT_NAMES})(?:v[0-9]+)?(?:\.[a-z][a-z.-]*)?", re.IGNORECASE | re.ASCII
)


# A Springer chapter's '_' that a LaTeX PDF's text layer gives as a blank (the OT1 fonts
# draw the underscore as a rule, no glyph): '10.1007/978-3-319-21668-3 9.' (a HotOS
# paper). A Springer book's name (_hyphens.is_springer_book: an ISBN hyphenated by its
# ranges, its check digit holding), then a blank and 1 to 4 digits that end the line, or
# end before punctuation and a blank: the digits are the chapter (_completed). No labeled
# DOI is a bare ISBN followed so. The candidate pattern leaves such names undecided
# (_hyphens.MENDABLE_PREFIXED). (rule: springer-chapter-blank)
_CHAPTER_AFTER: Final = re.compile(r" ([0-9]{1,4})(?=[.,;)\]](?:\s|\Z)|[ \t]*(?:\r?\n|\Z))")
_CHAPTER_BEGUN: Final = re.compile(r" ?[0-9]{0,4}(?:[.,;)\]]|[ \t]*\r?)\Z")


def _completed(text: str, found: Found, resume: list[int] | None) -> Found | None:
    """*found*, with its chapter when a blank cut it off (_CHAPTER_AFTER); None when a
    stream's chunk ends where the chapter may be (*resume* is then set)."""
    end = found.end
    if text[end : end + 1] != " ":
        return found
    name = str(found.doi)
    if not is_springer_book(name):
        return found
    if resume is not None and _CHAPTER_BEGUN.match(text, end):
        resume.append(found.start)
        return None
    chapter = _CHAPTER_AFTER.match(text, end)
    if chapter is None:
        return found
    doi = valid_doi(f"{name}_{chapter[1]}")
    return found._replace(doi=doi, end=chapter.end(), text=text[found.start : chapter.end()])


def _versioned(written: str) -> bool:
    """Whether a preprint server's name carries a version or file after it (the walk cuts
    it)."""
    preprint = _PREPRINT.fullmatch(written)
    return preprint is not None and preprint.end(1) < len(written)


# (rule: ligatures-as-letters)
# The Latin ligatures (U+FB00-U+FB06: ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ) read as their letters: a PDF's text
# layer keeps the glyph a typesetter set for 'fi' ('10.1016/j.jﬁneco.2012.05.017', a Zotero
# thread), and no DOI name holds one (each is a compatibility character: NFKC maps it to
# the letters).
_LIGATURE_LETTERS: Final = str.maketrans(
    {chr(code): unicodedata.normalize("NFKC", chr(code)) for code in range(0xFB00, 0xFB07)}
)


def _as_letters(name: str) -> str:
    """*name* with its Latin ligatures written as letters (_LIGATURE_LETTERS)."""
    return name if name.isascii() else name.translate(_LIGATURE_LETTERS)


# (rule: tex-percent-escapes)
# A percent-escape written with TeX's '\%' ('\doi{…CO;2-\%23}', a BibTeX field rendered
# to HTML as '…42:1\%3C7::…'): the author wrote the DOI URL-encoded, so it is decoded as in
# a URL. No labeled DOI of the wild corpus and the team's corpora holds a '%'.
_TEX_PERCENT_ESCAPE: Final = re.compile(r"\\%[0-9A-Fa-f]{2}")


def _make(text: str, start: int, end: int, *, urn: bool, in_url: bool) -> Found | None:
    """Trim the candidate ``text[start:end]`` and read it as a DOI, or None."""
    if in_url and end == len(text):
        # A '%' that starts no escape ends a DOI in a URL; the walk cannot tell at the very
        # end of the text (a stream's escape may go on in the next chunk), so it is cut here.
        dangling = _DANGLING_ESCAPE.search(text, start, end)
        if dangling is not None:
            end = dangling.start()
    # (rule: trailing-punctuation-dropped) (rule: asterisk-trails) (rule: final-slash-trails)
    while end > start:
        last = text[end - 1]
        if last == ";" and "&" in text[max(start, end - 40) : end]:
            entity = _ENTITY_AT_END.search(text, max(start, end - 40), end)
            if entity is not None:
                char = _entity_char(entity)
                if char in _TRAILING or char.isspace():  # '&quot;', '&#46;', '&nbsp;'…
                    end = entity.start()
                    continue
                break  # '&gt;' ends a SICI DOI written in HTML: its ';' stays
        if not (last in _TRAILING or last.isspace()):
            break
        end -= 1
    raw = text[start:end]
    if in_url:
        kept = _in_url_length(text, start, raw)
        end -= len(raw) - kept
        raw = raw[:kept]
    if raw.startswith(_PREPRINTS):  # (rule: preprint-version-cut)
        version = _PREPRINT.fullmatch(raw)
        if version is not None:
            end -= len(raw) - version.end(1)
            raw = raw[: version.end(1)]
    name = raw
    if "\n" in raw:
        name = _LINE_BREAK.sub("", _HYPHEN_BREAK.sub("", raw) if _WORD_BREAK_HYPHEN in raw else raw)
    if _SOFT_HYPHEN in name:
        name = name.replace(_SOFT_HYPHEN, "")
    tex_escaped = False
    if "\\" in name:  # JSON's '\/', TeX's '\_', Markdown's '\(' and '\)'...
        tex_escaped = _TEX_PERCENT_ESCAPE.search(name) is not None
        name = _ESCAPED_PUNCTUATION.sub(r"\1", name)
    if "&" in name and ";" in name:
        name = html.unescape(name)
    try:
        if in_url or urn:
            name = percent_decode(name)
        elif tex_escaped:
            with contextlib.suppress(PercentError):  # else the name as written
                name = percent_decode(name)
        name = _as_letters(name)
        # (rule: lost-hyphen-mended: _hyphens.mended)
        doi = DOI(URN + name[len(URN) :] if urn else mended(name))
    except (InvalidDOI, PercentError):
        return None
    return _new_found(Found, (doi, start, end, raw))
