"""Where the run a DOI can be ends (_grow, _run_end): the walk goes from one stop character
to the next, and each stop has one rule, a small function of _STOP_RULES."""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Final, TypeAlias

from doikit._extract._pattern import (
    _ENDERS,
    _FIELD_TAG,
    _NOT_GRAPHIC,
    _NUMBER_FIELD,
    _OPENERS,
    _TAG_SOURCE,
)
from doikit._syntax import PREFIX_PATTERN, URI_HEADS

if TYPE_CHECKING:
    from collections.abc import Callable

# An HTML tag or comment begins here (_pattern._TAG_SOURCE).
_TAG: Final = re.compile(_TAG_SOURCE, re.IGNORECASE | re.ASCII)
# The start of one that reaches the end of the text (a stream's next chunk may close it):
# on one line and within 240 characters, so that a stray '<b ' before prose does not hold
# a stream's DOI until _MAX_CARRY.
_TAG_BEGUN: Final = re.compile(
    r"<(?:[a-z][a-z0-9]*(?:[ \t][^<>\r\n]{0,240})?/?)?\Z", re.IGNORECASE | re.ASCII
).match


# A letter right after ';' (no space), or a number that fills a field: a row's next field
# (a year, a count, a page) or a list run together. Of the 2,918 DOIs of the wild corpus,
# 82 hold a ';', all SICI names' 'CO;' before a digit, so it ends a DOI; a SICI name's
# 'CO;2' is no field.
_FIELD_AFTER: Final = re.compile(rf"[A-Za-z]|{_NUMBER_FIELD}").match
# Another DOI, or a URL, right after a ';' (a row's next field): blanks, then a prefix
# and '/' (maybe after 'doi:' and blanks) or a URL's head, in either case.
_NEXT_DOI_MARKER: Final = "doi:"
_NEXT_URL_HEADS: Final = ("http://", "https://", "www.")
_NEXT_DOI: Final = re.compile(
    rf";\s*(?:(?:{re.escape(_NEXT_DOI_MARKER)}\s*)?{PREFIX_PATTERN}/|"
    + "|".join(map(re.escape, _NEXT_URL_HEADS))
    + ")",
    re.IGNORECASE | re.ASCII,
)


# What the walk stops at (rule: enders) (rule: text-is-literal) (rule: url-ends-at-query):
# the characters that decide where a DOI ends (brackets, ',' ';'
# and '&': _STOP_RULES), and those that end the run a DOI can be (whitespace, '"', what is
# never Graphic, and in a URL '?', '#', "'" and a '%' that starts no escape (one at the
# very end may be a stream's escape cut in two); the end of the text ends it too).
_STOPS_IN_TEXT: Final = re.compile(rf'[()\[\]{{}}<>,;&$\\\s"{_ENDERS}{_NOT_GRAPHIC}]').search
_STOPS_IN_URL: Final = re.compile(
    rf"[()\[\]{{}}<>,;&$\\\s\"?#'{_ENDERS}{_NOT_GRAPHIC}]|%(?![0-9A-Fa-f]{{2}}|[0-9A-Fa-f]?\Z)"
).search
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
_SICI_CHECK_BEGUN: Final = re.compile(r"[Cc][Oo];[ \t]*\r?\n[ \t]*2?\Z").match
_BLANKS_TO_END: Final = re.compile(r"[ \t]*(?:\r?\n[ \t]*|\r)?\Z").match
# (the first word and blanks: _CONTINUATION tells a page number alone at a line's end by
# what follows it, which the next chunk holds)
_WORD_TO_END: Final = re.compile(r"[^\s\"]*[ \t]*\r?\Z").match
_CONTINUATION: Final = re.compile(
    r"(?![0-9]{1,3}[.)][ \t\r\n]|\[|[0-9]{1,4}(?:[ \t]+[^\s0-9]|[ \t]*(?:\r?\n|\Z)))"
    r"[^\s\"]*?[0-9]"
)
_BREAK_BEGUN: Final = re.compile(r"[ \t]*\r?")
# (a closer or quote, whitespace, or a start: each written once, for the pattern and the C
# walk, which reads the heads in either case)
_NOT_CONTINUING: Final = ")]}>\"'"
_NOT_CONTINUING_HEADS: Final = (
    "10.",
    "http:",
    "https:",
    *sorted({head.split(":")[0] + ":" for head in URI_HEADS}),
)
_NOT_A_CONTINUATION: Final = re.compile(
    rf"[{re.escape(_NOT_CONTINUING)}\s]|" + "|".join(map(re.escape, _NOT_CONTINUING_HEADS)),
    re.IGNORECASE | re.ASCII,
)


def _grow(text: str, index: int, *, in_url: bool, stream: bool = False) -> tuple[int, int]:
    """The end of the DOI whose suffix starts at *index*, and of the run read for it.

    The DOI ends where its run ends (_run_end), or before a bracket opened in it that
    nothing in it closes: as a closer belongs to a DOI only when an opener in it balances
    it, an opener belongs to it only when a closer does (rule: unclosed-opener-ends:
    '…202311014.[Article in Chinese]'; no labeled DOI of the corpora holds an unbalanced
    bracket). A stream's wait for the next chunk (the text's end) is kept. The scan goes on
    after the run, which it has read ('10.1000/a(' repeated stays linear)."""
    opened: list[tuple[str, int]] = []
    end = _run_end(text, index, in_url=in_url, stream=stream, opened=opened)
    if opened and not (stream and end == len(text)):
        cut = opened[0][1]
        if cut > index and text[cut - 1] == "\\":
            cut -= 1  # an escaped opener ('\\(', Markdown's and TeX's) with its backslash
        return cut, end
    return end, end


class _Run:
    """A run being read: what its stops' rules read, and the brackets it holds open."""

    __slots__ = ("in_url", "opened", "reference_end", "stream", "text")

    def __init__(
        self, text: str, *, in_url: bool, stream: bool, opened: list[tuple[str, int]]
    ) -> None:
        self.text = text
        self.in_url = in_url
        self.stream = stream
        # the brackets still open: the closer each waits for, and where it was opened
        self.opened = opened
        # the ';' that ends a character reference: part of it, no separator
        self.reference_end = -1


# A stop's rule: rule(run, char, at, after) for the stop *char* at *at* (a character
# reference's, as the character it stands for), where *after* is where the reading goes on
# past it. It answers where the run ends (>= 0), or ~position (< 0): the reading goes on
# at position. (An int either way: a stop costs one call, no tuple.)
_Rule: TypeAlias = "Callable[[_Run, str, int, int], int]"


def _run_end(
    text: str, index: int, *, in_url: bool, stream: bool, opened: list[tuple[str, int]]
) -> int:
    """The end of the run of the DOI whose suffix starts at *index*, leaving in *opened*
    the brackets still open at its end: the closer each waits for, and where it was opened.

    The scan goes from one character that matters to the next (_STOPS: a deciding
    character, or one that ends the run a DOI can be), so that its work is the length of the
    DOI, not of the run around it: a line of DOIs joined by ';' is read in linear time.
    Each stop's rule (_STOP_RULES; _line_end for every stop that ends the run, and for the
    end of the text) says whether the run ends there or goes on, and where.
    """
    stops = _STOPS_IN_URL if in_url else _STOPS_IN_TEXT
    rule_of = _STOP_RULES.get
    run = _Run(text, in_url=in_url, stream=stream, opened=opened)
    position = index
    while True:
        # In windows, so that a stop far away costs nothing when an unassigned code point
        # (not Graphic either, but no stop) ends the DOI early.
        window = min(len(text), position + _WINDOW)
        stop = stops(text, position, window)
        at = stop.start() if stop is not None else window
        if not text[position:at].isprintable():  # (rule: blank-quote-tag-end)
            return next(i for i in range(position, at) if not text[i].isprintable())
        if stop is None and window < len(text):
            position = window
            continue
        char = stop.group() if stop is not None else ""
        answer = rule_of(char, _line_end)(run, char, at, at + 1)
        if answer >= 0:
            return answer
        position = ~answer


def _line_end(run: _Run, char: str, at: int, after: int) -> int:  # noqa: ARG001
    """Whitespace, a quote, what is never Graphic, the text's end (rule: blank-quote-tag-end;
    and in a URL '?', '#', "'", '&' and a '%' that starts no escape) end the run, but for a
    line break rejoined where that is unambiguous (rule: line-break-rejoined): the line ends in a
    character after which typesetters break a DOI (_JOINS_AFTER), in a letter or digit
    before a line that starts with '.', or in a SICI name's 'CO;' before its check
    character (rule: sici-check-break). A stream waits for the next chunk where it decides."""
    # (text[index - 1] is the prefix's '/', so a break right after it joins too)
    text = run.text
    if run.stream and _BLANKS_TO_END(text, at):
        return len(text)  # a stream's next chunk decides whether a line goes on
    following = _rejoined(text, at, stream=run.stream)
    if following is None:
        return at
    if following < 0:
        return len(text)  # the next line's first word is not whole yet: wait for it
    return ~following


def _rejoined(text: str, at: int, *, stream: bool = False) -> int | None:
    """Where the line after the break at *at* goes on with the DOI before it (rule:
    line-break-rejoined; see :func:`_line_end`), or ``None`` when the DOI ends at *at*; in
    a stream, -1 when the next line's first word is not whole yet."""
    last = text[at - 1]
    if (
        last not in _JOINS_AFTER
        and not (last.isalnum() and _BREAK_THEN_DOT(text, at))
        and not (last == ";" and _SICI_CHECK_BREAK(text, at - 3))
    ):
        if stream and last == ";" and _SICI_CHECK_BEGUN(text, at - 3):
            return -1  # the chunk's end cuts what may be a SICI's check character: wait
        return None
    line_break = _LINE_BREAK.match(text, at)
    if line_break is None or line_break.end() == len(text):
        return None
    following = line_break.end()
    if stream and _WORD_TO_END(text, following):
        return -1
    if not _continues(text, last, following):
        return None
    return following


def _opener(run: _Run, char: str, at: int, after: int) -> int:
    """An opener ends the run when it starts an HTML tag (rule: blank-quote-tag-end), or one
    written with references (rule: escaped-html-tag-ends), or an Entrez field tag, '[doi]'
    (rule: entrez-field-tag); in a stream, at the chunk's end when a tag may be cut by it
    (the next chunk may close it). Else it opens a bracket of the DOI, which a closer must
    balance (rule: brackets-balance); _grow cuts the DOI before one that none closes."""
    text = run.text
    if (char == "<" and (_TAG.match(text, at) or _ESCAPED_TAG.match(text, at))) or (
        char == "[" and _FIELD_TAG(text, at)
    ):
        return at
    if run.stream and char == "<" and _TAG_BEGUN(text, at):
        return len(text)
    run.opened.append((_OPENERS[char], at))
    return ~after


def _closer(run: _Run, char: str, at: int, after: int) -> int:
    """A closer belongs to the DOI only when it closes the bracket last opened in it
    (rule: brackets-balance): '(doi:10.1000/182)' gives 10.1000/182, a SICI name stays
    whole."""
    opened = run.opened
    if not opened or opened[-1][0] != char:
        return at
    opened.pop()
    return ~after


def _comma(run: _Run, char: str, at: int, after: int) -> int:  # noqa: ARG001
    """A ',' ends a DOI, always (rule: comma-ends; _AFTER_SEPARATOR_ENDS in the pattern),
    written or as a reference, '&#44;' (rule: escaped-comma-ends)."""
    return at


def _semicolon(run: _Run, char: str, at: int, after: int) -> int:  # noqa: ARG001
    """A ';' ends the DOI when another DOI (rule: semicolon-before-a-doi), a URL (rule:
    semicolon-before-a-url), a letter (rule: semicolon-before-a-letter) or a number that
    fills a field (rule: semicolon-before-a-number-field) follows (_separated);
    not the ';' that ends a character reference. A row of them goes on at once to its last
    ';' (a row of empty fields after a DOI)."""
    text = run.text
    if at != run.reference_end and (end := _separated(text, at, at + 1, stream=run.stream)) >= 0:
        return end
    return ~max(after, _last_semicolon(text, at))


def _reference(run: _Run, char: str, at: int, after: int) -> int:
    """An HTML character reference decides as the character it stands for
    (rule: references-decide-as-their-characters): a blank or '"' ends the DOI, a bracket, ','
    or ';' takes that stop's rule, and the reading goes on at its own ';'. In a URL a bare
    '&' or '&amp;' ends the run (rule: url-ends-at-query); in text it is the name's. A
    stream waits for a reference its chunk's end cuts."""
    text = run.text
    entity = _ENTITY.match(text, at)
    if entity is None and run.stream and _ENTITY_BEGUN.fullmatch(text, at):
        return len(text)  # a character reference cut by the chunk's end: wait
    char = _entity_char(entity)
    if run.in_url and char == "&":
        return _line_end(run, char, at, after)  # (parameters)
    if char.isspace() or char == '"':
        return at  # '&nbsp;', '&quot;'
    if entity is not None:
        after = run.reference_end = entity.end() - 1  # on to its ';'
    rule = _DECIDING_RULES.get(char)
    return ~after if rule is None else rule(run, char, at, after)


def _dollar(run: _Run, char: str, at: int, after: int) -> int:  # noqa: ARG001
    """'$$' (a catalogue's subfield separator) ends a DOI; a single '$' is part of it
    (rule: double-dollar-ends)."""
    return at if run.text.startswith("$$", at) else ~after


def _backslash(run: _Run, char: str, at: int, after: int) -> int:  # noqa: ARG001
    r"""A backslash before a letter, '@' or a quote ends a DOI (JSON's \n, \u00e9, \", TeX's
    control words \url, \@doiinfo); before other punctuation it escapes it (JSON's '\/',
    TeX's '\_', Markdown's '\('), which _make reads (rule: backslash-escapes)
    (rule: json-and-tex-escapes)."""
    return at if _ESCAPE_WORD.match(run.text, after) else ~after


def _soft_hyphen(run: _Run, char: str, at: int, after: int) -> int:  # noqa: ARG001
    """A soft hyphen hyphenates a word of the suffix, at a line break or not: the DOI goes
    on after it and the break (unless a closer, quote, new DOI or presentation follows),
    and _make drops both (rule: typeset-line-breaks; a DOI's own hyphen is a '-')."""
    text = run.text
    line_break = _LINE_BREAK.match(text, after)
    if line_break is None and _BREAK_BEGUN.fullmatch(text, after):
        return ~len(text)  # only blanks to the end: a stream's line break may follow
    following = after if line_break is None else line_break.end()
    if following < len(text) and _NOT_A_CONTINUATION.match(text, following):
        return at
    return ~following


def _last_semicolon(text: str, at: int) -> int:
    """The last ';' of the row of them that starts at *at*."""
    row = _SEMICOLONS(text, at)
    return at if row is None else row.end() - 1


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


# The rules of the stops that decide where a DOI ends (brackets, ',' and ';'), which a
# character reference standing for one of them takes too; and of every stop that is no
# end of the run (_line_end's).
_DECIDING_RULES: Final[dict[str, _Rule]] = {
    **dict.fromkeys("([{<", _opener),
    **dict.fromkeys(")]}>", _closer),
    ",": _comma,
    ";": _semicolon,
}
_STOP_RULES: Final[dict[str, _Rule]] = {
    **_DECIDING_RULES,
    "&": _reference,
    "$": _dollar,
    "\\": _backslash,
    _SOFT_HYPHEN: _soft_hyphen,
}
_HYPHENS: Final = "/-" + _WORD_BREAK_HYPHEN
_ESCAPE_WORD: Final = re.compile(r"[A-Za-z@\"']")


def _continues(text: str, last: str, following: int) -> bool:
    """Whether the line starting at *following* goes on with the DOI whose line ended in
    *last* (rule: typeset-line-breaks): after '/', '-' or U+2010 (_HYPHENS) (rule:
    word-break-hyphen), unless a closer, quote, new DOI or
    presentation begins it;
    after '.', ')' or ':', and before a line that starts with '.', only when its first
    word holds a digit and is no list number ('8. Name', '2) Name', '[5] Name') or page
    number alone before words ('28 zoo: An S3 Class', a page's running head)."""
    if _NOT_A_CONTINUATION.match(text, following):
        return False
    if last in _HYPHENS:
        return True
    return _CONTINUATION.match(text, following) is not None


def _entity_char(entity: re.Match[str] | None) -> str:
    """The character the HTML character reference *entity* (a match of _ENTITY) stands
    for; '&' when there is none (a bare '&', or a name HTML does not define)."""
    if entity is None:
        return "&"
    char = html.unescape(entity.group())
    return char if len(char) == 1 else "&"
