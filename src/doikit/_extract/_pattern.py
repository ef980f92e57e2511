"""The candidate pattern: one compiled regular expression whose alternatives decide the
common DOI whole in the regex engine (in C), catch the common shape for the quick path
(_quick), and mark every other start for the general walk (_walk); with the character
classes and the rules' shapes it is built from, each written once and shared with the
paths that check the same rule in Python."""

from __future__ import annotations

import functools
import re
from typing import Final

from doikit._hyphens import AID_SHORT, CHECK_SHORT, MENDABLE_PREFIXED, MENDABLE_SUFFIX
from doikit._syntax import URN

# Candidates, found in C. Every match starts with the literal '10.', so that the engine
# scans for it at string-search speed; the alternatives, tried in order:
#
# - in text (no group) and in a URL (group 1): a DOI whose every boundary the pattern itself
#   decides, in printable ASCII. The match holds the DOI and trailing punctuation, which _scan
#   cuts (the URL's group is empty: it marks which alternative matched). Before it: nothing
#   glued (a word character, '.', '-', '_', '/', '=', ':', '%'), or 'doi:' after anything but
#   ':' (so not 'urn:doi:'), or, in a URL, https://doi.org/ or http://dx.doi.org/ after a
#   boundary. A registrant that is no number (_REGISTRANT). A suffix that does not start with
#   trailing punctuation, whose brackets come in single balanced pairs ('(20)', '[0044:PTLBTR]',
#   SICI's '<123::AID-XYZ>', whose '<' a digit follows, so that it is no HTML tag) and whose
#   ';' have more of it after them (a ',' ends it). After it, something that surely ends a
#   DOI, and no line end ahead of a final '/', '-' or '.', where a broken DOI may go on.
# - group 2: not glued, in a token of under 256 characters, a registrant that is no
#   number, and a suffix (the group) of the same shape with any characters; _quick checks what
#   surrounds it.
# - group 3 (empty): else the bare prefix and its separator: '/', JSON's '\/', '%2F' (in
#   URLs), ':' (only after urn:doi:) or an HTML reference to '/', for the general walk (_walk);
#   not inside a number (_BARE_START).
_SEPARATOR: Final = r"(?:/|\\/|%2[Ff]|:|&#[xX]0*2[Ff];|&#0*47;|&sol;)"
_ASCII_GRAPHIC: Final = "".join(map(chr, range(0x21, 0x7F)))
# Legal in a DOI name, but no real DOI holds them and real text writes them right after
# DOIs (the README's rules table): MediaWiki's field separator '|', Markdown's code-span
# backtick, CJK and full-width punctuation ('。', '，', '）', '：', the ideographic space). Each
# ends a DOI, as whitespace does (a regular expression class's contents).
_ENDERS: Final = "|`\\u3000-\\u303f\\uff00-\\uffef"
_ENDER_CHARS: Final = "|`" + "".join(map(chr, [*range(0x3000, 0x3040), *range(0xFF00, 0xFFF0)]))
# '$' is in 8 of 23,000 real DOIs, but a catalogue's '$$' subfield separator follows a DOI:
# the walk decides it ('$$' ends a DOI, a single '$' does not).
_DECIDE_IN_TEXT: Final = '"()[]{}<>,;&\\|`$'
_DECIDE_IN_URL: Final = _DECIDE_IN_TEXT + "?#'"


def _class(chars: str) -> str:
    """A character class of *chars*, written as ranges (a short pattern compiles faster)."""
    codes = sorted(set(map(ord, chars)))
    ranges: list[list[int]] = []
    for code in codes:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    return (
        "["
        + "".join(
            re.escape(chr(low)) + ("" if low == high else "-" + re.escape(chr(high)))
            for low, high in ranges
        )
        + "]"
    )


# A search field tag glued to a DOI, as NCBI's Entrez queries write it ('term=10.…[doi]'),
# ends it: no DOI holds one.
_TAG_AFTER_BRACKET: Final = r"[Dd][Oo][Ii]\]"
_NO_FIELD_TAG: Final = rf"(?!{_TAG_AFTER_BRACKET})"
_FIELD_TAG: Final = re.compile(rf"\[{_TAG_AFTER_BRACKET}", re.ASCII).match
# A number that is a whole field after ';' ('10.1000/abc;2019;Nature'); not the lone '2'
# after a SICI name's 'CO;' ('…3.0.CO;2'). Matched at the character after the separator.
_FIELD_END: Final = r"(?:[,;\s\"]|\Z)"
_NUMBER_FIELD: Final = rf"(?!(?<=[Cc][Oo];)2{_FIELD_END})[-+]?[0-9]+(?:\.[0-9]+)?{_FIELD_END}"
# What ends a DOI right after a ';' (the separator is then no part of it). A ',' always
# ends one: none of the 1,840 labeled DOIs of the wild corpus's tuning part and the team's
# corpora holds one, Crossref's recommended pattern leaves it out, and CSV rows put every
# kind of field after it.
_AFTER_SEPARATOR_ENDS: Final = rf"[\s\"A-Za-z]|\Z|10\.|{_NUMBER_FIELD}|(?<=[Cc][Oo];){CHECK_SHORT}"
# A SICI a hyphen short (_hyphens): the pattern leaves it to the walk, which mends it; so
# is a SICI's check character after 'CO;' without its hyphen (above).
_NO_AID_SHORT: Final = rf"(?!{AID_SHORT})"


# A template's placeholder where a suffix should be: a run of x or n standing for its
# characters ('10.1145/nnnnnnn.nnnnnnn', '10.1007/xxxx'), or a template variable
# ('10.1101/{ext_id}', '{{ doi }}'). None of the 1,840 labeled DOIs of the wild corpus's
# tuning part and the team's corpora has a suffix that starts so: the candidate pattern
# leaves such a start to the walk (_suffix's guard, tried only at a suffix that starts with
# one of _PLACEHOLDER_FIRST or an opener), and the walk refuses it (_walk, _quick,
# _spaced), on the text as written.
_PLACEHOLDER: Final = r"(?:[xX]{3,}|[nN]{4,})(?![0-9A-Za-z])|\{\{|\{ ?[A-Za-z_][A-Za-z0-9_.]* ?\}"
_PLACEHOLDER_FIRST: Final = "xXnN"
_PLACEHOLDER_STARTS: Final = frozenset(_PLACEHOLDER_FIRST + "{")
_IS_PLACEHOLDER: Final = re.compile(_PLACEHOLDER).match


def _suffix(plain: str, first: str, guarded: str = "", *, gate: str = "") -> str:
    """A suffix of *plain* characters and the special ones, starting with a *first* one or
    an opened bracket, unrolled (runs of plain characters between the special ones),
    which keeps the match near the speed of a plain character class. With *guarded*
    characters (not in *first*), a suffix may start with one of them too, or with an
    opened bracket, when it is no _PLACEHOLDER. With a *gate*, no suffix that starts as
    *gate* does."""
    # The engine skips an alternative whose first item is a character (class) the text
    # does not have at no cost, but sets up every repeat and look-around it meets (about a
    # tenth of a match each). So the repeats sit behind such alternatives: the tail is tried
    # only at a ';' or opener, and a look-behind then tells which it was.
    # (';' then a letter, a blank, a quote, the end, a number that fills a field or the
    # next DOI ends the DOI: _FIELD_AFTER and _NEXT_DOI in the walk; 'doi:', 'https://' and
    # 'www.' start with a letter. A ',' ends it always.)
    # The repeats of separated and bracketed parts are possessive: given back, a part leaves
    # the match at its ';' or opener, where _TRAIL and the end the pattern looks for read the
    # characters they read without it; but the trailing punctuation was read again after each
    # one given back, quadratic on '10.1000/a' followed by ';' repeated (issue 27).
    separator = rf";(?!{_AFTER_SEPARATOR_ENDS})"
    inner = rf"{plain}*+(?:{separator}{plain}*+(?:{separator}{plain}*+)*+|)"
    opened = rf"\({inner}\)|\[{_NO_FIELD_TAG}{inner}\]|\{{{inner}\}}|<{_NO_AID_SHORT}[0-9]{inner}>"
    special = rf"{separator}|{opened}"
    tail = (
        rf"(?:[;(\[{{<](?:(?<=;)(?!{_AFTER_SEPARATOR_ENDS})"
        rf"|(?<=\(){inner}\)|(?<=\[){_NO_FIELD_TAG}{inner}\]|(?<=\{{){inner}\}}"
        rf"|(?<=<){_NO_AID_SHORT}[0-9]{inner}>)"
        rf"{plain}*+(?:(?:{special}){plain}*+)*+|)"
    )
    if guarded:
        opened = rf"(?!{_PLACEHOLDER})(?:{_class(guarded)}|{opened})"
    held = rf"(?!{gate})" if gate else ""
    return rf"{held}(?:{first}{plain}*+|(?:{opened}){plain}*+){tail}"


_TEXT_PLAIN: Final = _class("".join(c for c in _ASCII_GRAPHIC if c not in _DECIDE_IN_TEXT))
_URL_PLAIN: Final = _class("".join(c for c in _ASCII_GRAPHIC if c not in _DECIDE_IN_URL))
# What trails a DOI in text and is no part of it when nothing of the DOI follows: sentence
# punctuation, '*' (Markdown's emphasis) and '/' (a directory's URL, a path: none of the
# 4,879 labeled DOIs of the corpora ends in one). In ASCII: _TRAILING adds the rest.
_TRAIL_CHARS: Final = ".,;:!?'*/"
# A decided suffix does not start with trailing punctuation.
# (the first characters of a placeholder are guarded: _suffix)
_TEXT_FIRST: Final = _class(
    "".join(
        c for c in _ASCII_GRAPHIC if c not in _DECIDE_IN_TEXT + _TRAIL_CHARS + _PLACEHOLDER_FIRST
    )
)
_URL_FIRST: Final = _class(
    "".join(
        c for c in _ASCII_GRAPHIC if c not in _DECIDE_IN_URL + _TRAIL_CHARS + _PLACEHOLDER_FIRST
    )
)
# Code points that are never part of a DOI name and end every run at once (controls, the
# format characters, surrogates, private use: every assigned code point that is not Graphic,
# as of Python 3.11's Unicode), so that binary or odd text never makes a run long only for
# isprintable() to cut it back; the rest (unassigned code points) isprintable() still cuts.
_NOT_GRAPHIC_BMP: Final = (
    "\\x00-\\x1f\\x7f-\\x9f\\xad\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890\\u0891\\u08e2\\u180e"
    "\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u206f\\ud800-\\uf8ff\\ufeff\\ufff9-\\ufffb"
)
_NOT_GRAPHIC: Final = _NOT_GRAPHIC_BMP + (
    "\\U000110bd\\U000110cd\\U00013430-\\U00013438\\U0001bca0-\\U0001bca3\\U0001d173-\\U0001d17a"
    "\\U000e0001\\U000e0020-\\U000e007f\\U000f0000-\\U0010ffff"
)
# Python's whitespace (str.isspace(), what '\s' matches in a str pattern: a test holds the
# two equal), spelled out: in a class without '\s' the engine tells a character by one
# table look-up, where '\s' costs it a call (BENCHMARKS.md, session 25).
_WHITESPACE: Final = (
    "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a"
    "\\u2028\\u2029\\u202f\\u205f\\u3000"
)
# The characters of group 2's run (the common shape): any but whitespace, '"', the brackets,
# the deciding and ending characters, and what is never Graphic; outside the BMP, none (no
# real DOI holds one): its run ends there, and the walk reads the rest. One range there, not
# the eight of _NOT_GRAPHIC, which the engine would try one by one for every character of
# every candidate in a text that holds any character outside the BMP (an emoji makes the
# whole text so): a twelfth of the pattern's time on the wild corpus.
_ANY_PLAIN: Final = (
    rf"[^{_WHITESPACE}\"()\[\]{{}}<>,;&${_ENDERS}{_NOT_GRAPHIC_BMP}\U00010000-\U0010ffff]"
)
# A registrant code with 4 digits in a row in one of its first three segments: neither a
# ratio nor an IPv4 route (_looks_like_a_number), with or without a DOI marker.
_REGISTRANT: Final = (
    r"(?:[0-9]{4,}|[0-9]{1,3}\.[0-9]{4,}|[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{4,})"
    r"(?:\.[0-9]+(?:\.[0-9]+)*|)"
)
# Trailing punctuation: the match goes on over it, and _scan cuts it from the group (the
# pattern could, with a look-behind, but giving back the characters it has read costs more
# than str.rstrip).
_TRAIL: Final = rf"{_class(_TRAIL_CHARS)}*+"
# Preprint servers register a name without the version their links carry: bioRxiv and
# medRxiv (10.1101/2020.03.22.002386v2.full.pdf; bioRxiv's newer prefix 10.64898 the same) and
# arXiv (10.48550/arXiv.2101.00001v2).
# Their names after '10.', spelled for patterns with and without IGNORECASE.
_PREPRINT_NAMES: Final = (
    r"(?:(?:1101|64898)/(?:[0-9]{4}\.[0-9]{2}\.[0-9]{2}\.)?[0-9]{6,8}"
    r"|48550/[aA][rR][xX][iI][vV]\.[0-9]{4}\.[0-9]{4,5})"
)
# What the pattern leaves to _quick and the walk: a preprint server's name with a version
# or file after it (_PREPRINT: they cut it), after the '10.'; and a name a PDF's text layer
# may have broken (_hyphens.MENDABLE: they mend it), at the suffix's start (a look-ahead
# there costs the scan 6%: callgrind, BENCHMARKS.md).
_NO_PREPRINT: Final = rf"(?!{_PREPRINT_NAMES}(?:[vV][0-9]|\.[a-zA-Z]))"
_SUFFIX_GATE: Final = rf"{MENDABLE_PREFIXED}|{MENDABLE_SUFFIX}"
# An HTML tag or comment begins here: '</', '<!', or '<' + a letter + tag-like text + '>'
# (ASCII, either case; _run._TAG, the walk's, is compiled from it).
_TAG_SOURCE: Final = r"<(?:/|!|[a-z][a-z0-9]*(?:\s[^<>]*)?/?>)"
# What may follow a DOI the pattern decides, in one look-ahead whose first branches take
# the common cases at once: a quote, closer or ender; blanks before more text; a line
# break, when the line does not end in a character after which a broken DOI may go on
# ('/', '.', '-', ')', ':', and ';' for a SICI name's check character) and the next line
# starts with neither '.' nor a blank; a line break before a blank line or other whitespace
# (no line is joined across one: _run._continues); an HTML tag (the walk's _run._opener
# ends the DOI there); or a ',' last in the trailing punctuation. Anything else (the end
# of the text, a next line starting with '.') is left to the walk, which decides every
# case.
_LINE_END_DECIDES: Final = (
    r"(?<![/.\-):;])[ \t]*+\r?\n[ \t]*+[^.\s]|[ \t]*+\r?\n[ \t]*+\s|(?ai:" + _TAG_SOURCE + ")"
)
_DECIDED_END: Final = rf"(?=[\")\]}}>|`]|[ \t]++[^\s]|{_LINE_END_DECIDES}|(?<=,))"
_DECIDED_END_IN_URL: Final = rf"(?=[\")\]}}>?#'|`]|[ \t]++[^\s]|{_LINE_END_DECIDES}|(?<=,))"
# Where the bare start (group 3) is tried. The walk refuses a start glued to a digit or '.'
# (_GLUED), save after a catalogue's subfield code ('$$1', _SUBFIELD_BEFORE) or before a line
# break (it refuses that start too, but the scan then goes on after the next line's prefix).
# Every '10.' inside a run of digits and dots is such a start: tried, each would read the
# run to its end again, quadratic on '10.' repeated (issue 27).
_BARE_START: Final = r"(?:(?<![0-9.]10\.)|(?<=[$\x1f][0-9]10\.)|(?=[ \t]*\r?\n))"
_CANDIDATE_PATTERN: Final = (
    r"10\.(?:"
    # in text (no group: the commonest match, told apart by match.lastindex being None)
    r"(?:(?<![0-9A-Za-z._\-/=:%]10\.)"
    r"|(?<=[^:/][Dd][Oo][Ii]:10\.))"
    rf"{_NO_PREPRINT}{_REGISTRANT}/"
    rf"{_suffix(_TEXT_PLAIN, _TEXT_FIRST, _PLACEHOLDER_FIRST, gate=_SUFFIX_GATE)}{_TRAIL}"
    rf"{_DECIDED_END}"
    # 1: after https://doi.org/ or http://dx.doi.org/
    r"|(?:(?<=[ \t\n\r\"'<>(\[{]https://doi\.org/10\.)"
    r"|(?<=[ \t\n\r\"'<>(\[{]http://dx\.doi\.org/10\.))"
    rf"{_NO_PREPRINT}{_REGISTRANT}/"
    rf"{_suffix(_URL_PLAIN, _URL_FIRST, _PLACEHOLDER_FIRST, gate=_SUFFIX_GATE)}{_TRAIL}"
    rf"{_DECIDED_END_IN_URL}()"
    # 2: registrant and suffix (the group) of the same shape, any characters
    rf"|(?<![0-9A-Za-z._\-]10\.)(?=[^{_WHITESPACE}\"]{{0,255}}+(?:[{_WHITESPACE}\"]|\Z))"
    rf"{_REGISTRANT}/({_suffix(_ANY_PLAIN, _ANY_PLAIN)})"
    # 3: the bare start (a line break may follow '10.': 'doi:10.' + '1162/…' in PDF text)
    rf"|{_BARE_START}(?:[ \t]*\r?\n[ \t]*)?[0-9]+(?:\.[0-9]+)*{_SEPARATOR}()"
    # 4: a name spaced out behind a DOI marker (_spaced)
    r"|(?:(?<=[Dd][Oo][Ii][:\uff1a]10\.)|(?<=[Dd][Oo][Ii][:\uff1a] 10\.)) (?=[0-9]{4})())"
)


@functools.cache
def _candidates() -> re.Pattern[str]:
    """_CANDIDATE_PATTERN, compiled on first use: it takes the regex compiler about 13 ms,
    which `import doikit` (and every CLI command that finds no DOIs in text) need not pay."""
    return re.compile(_CANDIDATE_PATTERN)


# match.lastindex of each alternative but the first
_IN_URL, _SHAPED, _BARE, _SPACED = 1, 2, 3, 4

_URN: Final = URN


_OPENERS: Final = {"(": ")", "[": "]", "{": "}", "<": ">"}
_CLOSERS: Final = frozenset(_OPENERS.values())
_OPENER_OF: Final = {closer: opener for opener, closer in _OPENERS.items()}


# (_TRAIL_CHARS and what else trails a DOI: ellipsis, closing quotes, a soft hyphen)
_TRAILING: Final = frozenset(_TRAIL_CHARS + '…"”’»›\xad')
