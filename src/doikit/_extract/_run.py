"""Where the run a DOI can be ends (_grow, _run_end): the walk goes from one stop character
to the next, and each stop has one rule, a small function of _STOP_RULES."""

from __future__ import annotations

import html
import re
from typing import Final

from doikit._extract._pattern import (
    _CLOSERS,
    _ENDERS,
    _FIELD_TAG,
    _NOT_GRAPHIC,
    _NUMBER_FIELD,
    _OPENERS,
)
from doikit._syntax import PREFIX_PATTERN, URI_HEADS

# An HTML tag or comment begins here: '</', '<!', or '<' + a letter + tag-like text + '>'.
_TAG: Final = re.compile(r"<(?:/|!|[a-z][a-z0-9]*(?:\s[^<>]*)?/?>)", re.IGNORECASE | re.ASCII)
# The start of one that reaches the end of the text (a stream's next chunk may close it):
# on one line and within 240 characters, so that a stray '<b ' before prose does not hold
# a stream's DOI until _MAX_CARRY.
_TAG_BEGUN: Final = re.compile(
    r"<(?:[a-z][a-z0-9]*(?:[ \t][^<>\r\n]{0,240})?/?)?\Z", re.IGNORECASE | re.ASCII
).match
# In a URL, publisher pages append views to the DOI (…/doi/10.1111/x/abstract), and a DOI
# badge names its image after it (Zenodo's …/badge/DOI/10.5281/zenodo.1.svg).
# Crossref's REST API routes after a DOI count as views too (api.crossref.org/works/10.…/agency),
# and so does a badge service's (…/papers/10.…/badges).


# (a year, a count, a page) or a list run together. Of the 2,918 DOIs of the wild corpus,
# 82 hold a ';', all SICI names' 'CO;' before a digit, so it ends a DOI; a SICI name's
# 'CO;2' is no field.
_FIELD_AFTER: Final = re.compile(rf"[A-Za-z]|{_NUMBER_FIELD}").match
# Another DOI, or a URL, right after a ';' (a row's next field).
_NEXT_DOI: Final = re.compile(
    r";\s*(?:(?:doi:\s*)?" + PREFIX_PATTERN + r"/|https?://|www\.)", re.IGNORECASE | re.ASCII
)


# What the walk stops at: the characters that decide where a DOI ends (brackets, ',' ';'
# and '&': _DECIDING), and those that end the run a DOI can be (whitespace, '"', what is
# never Graphic, and in a URL '?', '#', "'" and a '%' that starts no escape (one at the
# very end may be a stream's escape cut in two); the end of the text ends it too).
_STOPS_IN_TEXT: Final = re.compile(rf'[()\[\]{{}}<>,;&$\\\s"{_ENDERS}{_NOT_GRAPHIC}]').search
_STOPS_IN_URL: Final = re.compile(
    rf"[()\[\]{{}}<>,;&$\\\s\"?#'{_ENDERS}{_NOT_GRAPHIC}]|%(?![0-9A-Fa-f]{{2}}|[0-9A-Fa-f]?\Z)"
).search
_DECIDING: Final = frozenset("()[]{}<>,;&")
_SEMICOLONS: Final = re.compile(";+").match
_ESCAPED_TAG: Final = re.compile(r"&lt;(?:/|!|[a-zA-Z])")
_ESCAPED_PUNCTUATION: Final = re.compile(r"\\([!-/:-@\[-`{-~])")
_SOFT_HYPHEN: Final = "\xad"
_WINDOW: Final = 256
# An HTML character reference: decoded, it decides as the character it stands for.
_ENTITY: Final = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z][a-zA-Z0-9]{1,31});")
_ENTITY_BEGUN: Final = re.compile(
    r"&(?:#[0-9]{0,7}|#[xX][0-9a-fA-F]{0,6}|[a-zA-Z][a-zA-Z0-9]{0,31})?"
)
_ENTITY_AT_END: Final = re.compile(_ENTITY.pattern + r"\Z")


# A line break as PDF-to-text leaves it, and what may not begin the line after a joined
# break: a closer or quote, or the start of another DOI or presentation.
_LINE_BREAK: Final = re.compile(r"[ \t]*\r?\n[ \t]*")
# A DOI broken at a line end may go on after these (and before a line starting with '.'):
# the rules of _continues decide. Typesetters break DOIs after '/', '-', '.', ')' and ':'
# (pdftotext of real papers, the wild corpus's pdf kind), and after U+2010 HYPHEN, which
# man pages' renderer (groff) puts where it hyphenates a word at a line end
# ('10.1093/bioinfor‐' + 'matics/btr076'): no DOI holds one, so it goes with the break.
_WORD_BREAK_HYPHEN: Final = "\u2010"
_HYPHEN_BREAK: Final = re.compile(_WORD_BREAK_HYPHEN + r"[ \t]*\r?\n[ \t]*")
_JOINS_AFTER: Final = "/-.):" + _WORD_BREAK_HYPHEN
_BREAK_THEN_DOT: Final = re.compile(r"[ \t]*\r?\n[ \t]*\.").match
# A SICI name broken before its check character: '…3.0.CO;' + '2-P' on the next line.
_SICI_CHECK_BREAK: Final = re.compile(r"[Cc][Oo];[ \t]*\r?\n[ \t]*2-").match
_BLANKS_TO_END: Final = re.compile(r"[ \t]*(?:\r?\n[ \t]*|\r)?\Z").match
_WORD_TO_END: Final = re.compile(r"[^\s\"]*\Z").match
_CONTINUATION: Final = re.compile(
    r"(?![0-9]{1,3}[.)][ \t\r\n]|\[|[0-9]{1,4}(?:[ \t]+[^\s0-9]|[ \t]*(?:\r?\n|\Z)))"
    r"[^\s\"]*?[0-9]"
)
_BREAK_BEGUN: Final = re.compile(r"[ \t]*\r?")
_NOT_A_CONTINUATION: Final = re.compile(
    r"[)\]}>\"'\s]|10\.|"
    + "|".join(sorted({re.escape(head.split(":")[0] + ":") for head in URI_HEADS}))
    + "|https?:",
    re.IGNORECASE | re.ASCII,
)


def _grow(text: str, index: int, *, in_url: bool, stream: bool = False) -> tuple[int, int]:
    """The end of the DOI whose suffix starts at *index*, and of the run read for it.

    The DOI ends where its run ends (_run_end), or before a bracket opened in it that
    nothing in it closes: as a closer belongs to a DOI only when an opener in it balances
    it, an opener belongs to it only when a closer does ('…202311014.[Article in
    Chinese]'; no labeled DOI of the corpora holds an unbalanced bracket). A stream's wait
    for the next chunk (the text's end) is kept. The scan goes on after the run, which it
    has read ('10.1000/a(' repeated stays linear)."""
    opened: list[tuple[str, int]] = []
    end = _run_end(text, index, in_url=in_url, stream=stream, opened=opened)
    if opened and not (stream and end == len(text)):
        cut = opened[0][1]
        if cut > index and text[cut - 1] == "\\":
            cut -= 1  # an escaped opener ('\\(', Markdown's and TeX's) with its backslash
        return cut, end
    return end, end


def _run_end(
    text: str, index: int, *, in_url: bool, stream: bool, opened: list[tuple[str, int]]
) -> int:
    """The end of the run of the DOI whose suffix starts at *index*, leaving in *opened*
    the brackets still open at its end: the closer each waits for, and where it was opened.

    The scan goes from one character that matters to the next (_STOPS: a deciding
    character, or one that ends the run a DOI can be), so that its work is the length of the
    DOI, not of the run around it: a line of DOIs joined by ';' is read in linear time.

    A DOI broken across a line end is rejoined only where that is unambiguous: the line
    ends in '/' or '-' and the next line goes on with a character that can continue a DOI
    (not a closer, quote, new DOI or presentation); or the line ends in '.' and the next
    line starts with a digit. A break mid-token is never joined.
    """
    stops = _STOPS_IN_URL if in_url else _STOPS_IN_TEXT
    position = index
    reference_end = -1  # the ';' that ends a character reference: part of it, no separator
    while True:
        # In windows, so that a stop far away costs nothing when an unassigned code point
        # (not Graphic either, but no stop) ends the DOI early.
        window = min(len(text), position + _WINDOW)
        stop = stops(text, position, window)
        at = stop.start() if stop is not None else window
        if not text[position:at].isprintable():  # an unassigned code point ends it too
            return next(i for i in range(position, at) if not text[i].isprintable())
        if stop is None and window < len(text):
            position = window
            continue
        char = stop.group() if stop is not None else ""
        after = at + 1
        if char in _GOES_ON:
            position = _goes_on(text, at)
            if position < 0:
                return at
            continue
        run_ends = char not in _DECIDING
        if char == "&":
            entity = _ENTITY.match(text, at)
            if entity is None and stream and _ENTITY_BEGUN.fullmatch(text, at):
                return len(text)  # a character reference cut by the chunk's end: wait
            char = _entity_char(entity)
            if in_url and char == "&":
                run_ends = True  # a bare '&' or '&amp;' ends a DOI in a URL (parameters)
            elif char.isspace() or char == '"':
                return at  # '&nbsp;', '&quot;'
            elif entity is not None:
                after = reference_end = entity.end() - 1  # on to its ';'

        if run_ends:
            # The end of the run: rejoin a line break where that is unambiguous.
            # (text[index - 1] is the prefix's '/', so a break right after it joins too.)
            if stream and _BLANKS_TO_END(text, at):
                return len(text)  # a stream's next chunk decides whether a line goes on
            last = text[at - 1]
            if (
                last not in _JOINS_AFTER
                and not (last.isalnum() and _BREAK_THEN_DOT(text, at))
                and not (last == ";" and _SICI_CHECK_BREAK(text, at - 3))
            ):
                return at
            line_break = _LINE_BREAK.match(text, at)
            if line_break is None or line_break.end() == len(text):
                return at
            following = line_break.end()
            if stream and _WORD_TO_END(text, following):
                return len(text)  # the next line's first word is not whole yet: wait for it
            if not _continues(text, text[at - 1], following):
                return at
            position = following
            continue
        if char in _OPENERS:
            if (end := _opener_ends(text, at, char, stream=stream)) >= 0:
                return end
            opened.append((_OPENERS[char], at))
        elif char in _CLOSERS:
            if not opened or opened[-1][0] != char:
                return at
            opened.pop()
        elif char == ",":
            return at  # always, written or as a reference ('&#44;'): _AFTER_SEPARATOR_ENDS
        elif char == ";":
            # (a ';' before another goes on, _separated: a row of empty fields after a DOI is
            # passed over at once, to its last ';')
            after = max(after, _last_semicolon(text, at))
            if at != reference_end and (end := _separated(text, at, at + 1, stream=stream)) >= 0:
                return end
        position = after


def _last_semicolon(text: str, at: int) -> int:
    """The last ';' of the row of them that starts at *at*."""
    row = _SEMICOLONS(text, at)
    return at if row is None else row.end() - 1


def _opener_ends(text: str, at: int, char: str, *, stream: bool) -> int:
    """Where a DOI ends at the opener *char* at *at*: there when it starts an HTML tag (or
    one written with references) or an Entrez field tag; in a stream, at the chunk's end
    when a tag may be cut by it (the next chunk may close it); -1 when it opens a bracket
    of the DOI."""
    if (char == "<" and (_TAG.match(text, at) or _ESCAPED_TAG.match(text, at))) or (
        char == "[" and _FIELD_TAG(text, at)
    ):
        return at
    if stream and char == "<" and _TAG_BEGUN(text, at):
        return len(text)
    return -1


def _separated(text: str, at: int, after: int, *, stream: bool) -> int:
    """Where a DOI ends at the ';' at *at* (*after* is the next character): there when
    another DOI or a field follows (no real DOI has ';' then a letter or a number that
    fills a field); in a stream, at the chunk's end when a number reaches it (the next
    chunk may go on); -1 when the DOI goes on."""
    if _NEXT_DOI.match(text, at):
        return at
    field = _FIELD_AFTER(text, after)
    if field is None:
        return -1
    if stream and field.end() == len(text) and text[-1].isdigit():
        return len(text)
    return at


_GOES_ON: Final = frozenset("$\\" + _SOFT_HYPHEN)
_HYPHENS: Final = "/-" + _WORD_BREAK_HYPHEN


_ESCAPE_WORD: Final = re.compile(r"[A-Za-z@\"']")


def _continues(text: str, last: str, following: int) -> bool:
    """Whether the line starting at *following* goes on with the DOI whose line ended in
    *last*: after '/', '-' or U+2010 (_HYPHENS), unless a closer, quote, new DOI or
    presentation begins it;
    after '.', ')' or ':', and before a line that starts with '.', only when its first
    word holds a digit and is no list number ('8. Name', '2) Name', '[5] Name') or page
    number alone before words ('28 zoo: An S3 Class', a page's running head)."""
    if _NOT_A_CONTINUATION.match(text, following):
        return False
    if last in _HYPHENS:
        return True
    return _CONTINUATION.match(text, following) is not None


def _goes_on(text: str, at: int) -> int:
    """Where the DOI goes on after the '$' or soft hyphen at *at*, or -1 when it ends there.

    '$$' is a catalogue's subfield separator; a single '$' is part of the DOI. A soft hyphen
    hyphenates a word of the suffix (at a line break or not): the DOI goes on after it and
    the break, and _make drops both (a DOI's own hyphen is a '-')."""
    after = at + 1
    if text[at] == "$":
        return -1 if text.startswith("$$", at) else after
    if text[at] == "\\":
        # JSON's escapes (\n, \u00e9, \") and TeX's control words (\url, \@doiinfo) end it;
        # JSON's '\/' and TeX's '\_' are part of it (_make reads them).
        return -1 if _ESCAPE_WORD.match(text, after) else after
    line_break = _LINE_BREAK.match(text, after)
    if line_break is None and _BREAK_BEGUN.fullmatch(text, after):
        return len(text)  # only blanks to the end: a stream's line break may follow
    following = after if line_break is None else line_break.end()
    if following < len(text) and _NOT_A_CONTINUATION.match(text, following):
        return -1
    return following


def _entity_char(entity: re.Match[str] | None) -> str:
    """The character the HTML character reference *entity* (a match of _ENTITY) stands
    for; '&' when there is none (a bare '&', or a name HTML does not define)."""
    if entity is None:
        return "&"
    char = html.unescape(entity.group())
    return char if len(char) == 1 else "&"
