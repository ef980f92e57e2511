"""Finding DOI names in text: reference lists, prose, HTML, exports.

A scan looks for the start of a DOI name (``10.<registrant>/``, or ``10.<registrant>:``
after ``urn:doi:``) and grows it as a careful human reads it:

- it ends at whitespace, a control character, a ``"``, or an HTML tag (``</…``, ``<a …``);
- a closing ``) ] } >`` belongs to the DOI only when an opener inside the DOI balances it,
  so ``(doi:10.1000/182)`` gives ``10.1000/182`` and a SICI DOI stays whole;
- trailing ``. , ; : ! ? …`` and closing quotes are dropped (nothing of the DOI follows);
- a ``,`` ends a DOI; a ``;`` directly followed by another DOI separates the two;
- inside a URL (``https://doi.org/…``, a publisher's ``…/doi/10.…``, ``?doi=10.…``) a raw
  ``?``, ``#`` or ``&`` ends the DOI and percent-escapes are decoded; outside URLs the
  text is taken literally, so ``…3.0.CO;2-#`` keeps its ``#``.

Each candidate must then be a valid :class:`~doikit.DOI`; the span reported is where the
DOI is written in the text.
"""

from __future__ import annotations

import contextlib
import functools
import html
import itertools
import re
import unicodedata
from collections import Counter
from typing import TYPE_CHECKING, Final, NamedTuple, Protocol, TypeVar, cast
from urllib.parse import unquote

from doikit._doi import _SPEEDUPS, DOI, valid_doi
from doikit._errors import InvalidDOI
from doikit._hyphens import (
    AID_SHORT,
    CHECK_SHORT,
    MENDABLE_PREFIXED,
    MENDABLE_SUFFIX,
    is_springer_book,
    mended,
)
from doikit._present import quick_unescape
from doikit._syntax import (
    DOI_ORG_HOSTS_PATTERN,
    PREFIX_PATTERN,
    RESOLVER_HOSTS_PATTERN,
    URI_HEADS,
    URN,
    PercentError,
    percent_decode,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Found(NamedTuple):
    """A DOI found in text: the ``doi``, its ``start`` and ``end`` in the text, and the
    ``text`` as written there (``text[start:end]``)."""

    doi: DOI
    start: int
    end: int
    text: str


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
_NOT_GRAPHIC: Final = (
    "\\x00-\\x1f\\x7f-\\x9f\\xad\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890\\u0891\\u08e2\\u180e"
    "\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u206f\\ud800-\\uf8ff\\ufeff\\ufff9-\\ufffb"
    "\\U000110bd\\U000110cd\\U00013430-\\U00013438\\U0001bca0-\\U0001bca3\\U0001d173-\\U0001d17a"
    "\\U000e0001\\U000e0020-\\U000e007f\\U000f0000-\\U0010ffff"
)
_ANY_PLAIN: Final = rf"[^\s\"()\[\]{{}}<>,;&${_ENDERS}{_NOT_GRAPHIC}]"
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
# What may follow a DOI the pattern decides, in one look-ahead whose first branches take
# the common cases at once: a quote, closer or ender; blanks before more text; or a line
# break, when the line does not end in a character after which a broken DOI may go on
# ('/', '.', '-', ')', ':', and ';' for a SICI name's check character) and the next line
# starts with neither '.' nor a blank; or a ',' last in the trailing punctuation. Anything
# else (the end of the text, a blank line, a next line starting with '.') is left to the
# walk, which decides every case.
_DECIDED_END: Final = r"(?=[\")\]}>|`]|[ \t]++[^\s]|(?<![/.\-):;])[ \t]*+\r?\n[ \t]*+[^.\s]|(?<=,))"
_DECIDED_END_IN_URL: Final = (
    r"(?=[\")\]}>?#'|`]|[ \t]++[^\s]|(?<![/.\-):;])[ \t]*+\r?\n[ \t]*+[^.\s]|(?<=,))"
)
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
    rf"|(?<![0-9A-Za-z._\-]10\.)(?=[^\s\"]{{0,255}}+(?:[\s\"]|\Z))"
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
# A start glued to a word, a number or a dot is no start ("110.1/x", "v10.1/x", "1.10.1/x").
_GLUED: Final = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz.-_")
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
# A doi query parameter, or a MediaWiki template's doi field ('|doi=10.…').
_PARAMETER_STARTS: Final = "?&;|"
_DOI_PARAMETER: Final = re.compile(
    rf"[{_PARAMETER_STARTS}][a-z_]*doi[a-z_]*=\Z", re.IGNORECASE | re.ASCII
).match
_BOUNDARIES: Final = " \t\n\r\f\v\"'<>([{`|;,"
_ESCAPES: Final = frozenset({"3A", "3a", "2F", "2f"})
_ESCAPED_SLASHES: Final = frozenset({"%2F", "%2f"})
# A catalogue record's subfield code before its value: Alma/Primo's '$$a', MARC's mnemonic
# '$a' and binary MARC's unit separator (U+001F) with the code.
_SUBFIELD_BEFORE: Final = re.compile(r"(?:\$\$?|\x1f)[a-z0-9]\Z")
# A page range that some publishers glue to the DOI after it ('5: 45-10.1016/…'): a number
# and '-' with nothing glued before them.
_PAGE_RANGE_BEFORE: Final = re.compile(r"(?<![0-9A-Za-z._\-/])[0-9]{1,6}-\Z")
_LOOKBACK: Final = 1024
_OPENERS: Final = {"(": ")", "[": "]", "{": "}", "<": ">"}
_CLOSERS: Final = frozenset(_OPENERS.values())
_OPENER_OF: Final = {closer: opener for opener, closer in _OPENERS.items()}
# (_TRAIL_CHARS and what else trails a DOI: ellipsis, closing quotes, a soft hyphen)
_TRAILING: Final = frozenset(_TRAIL_CHARS + '…"”’»›\xad')
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
_URL_TAILS: Final = re.compile(rf"/(?:{_VIEWS})(?:/.*)?$|{_GLUED_FILE}", re.IGNORECASE | re.ASCII)
_FILE_AFTER: Final = r"/[A-Za-z0-9_-]+\.(?:svg|png|json|xml|html?)\Z"
_URL_FILE: Final = re.compile(_FILE_AFTER, re.ASCII)
# A shields.io badge names its message after its label and '-' (a '-' in the label is
# written '--'), and its colour after the last '-': img.shields.io/badge/DOI-10.5281/
# zenodo.1-blue, …/badge/Bioinformatics-10.1093%2Fbioinformatics%2Fbtr703-brightgreen.svg.
_SHIELDS_BADGE: Final = re.compile(r"/badge/(?:[^/\s-]|--){0,48}-\Z", re.IGNORECASE | re.ASCII)


def _after_shields_badge(text: str, start: int) -> bool:
    """Whether a shields.io badge's label and '-' end at *start* (the DOI is its message)."""
    return _SHIELDS_BADGE.search(text, max(0, start - 64), start) is not None


_BADGE_COLOUR: Final = re.compile(r"-[A-Za-z]+(?:\.(?:svg|png))?\Z", re.ASCII)
# A preprint name, its version and its file (group 1: the registered name).
_PREPRINTS: Final = ("10.1101/", "10.64898/", "10.48550/")
_PREPRINT: Final = re.compile(
    rf"(10\.{_PREPRINT_NAMES})(?:v[0-9]+)?(?:\.[a-z][a-z.-]*)?", re.IGNORECASE | re.ASCII
)
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
_BADGE_IMAGE: Final = re.compile(r"\.(?:svg|png)\Z", re.IGNORECASE | re.ASCII)
# A letter right after ';' (no space), or a number that fills a field: a row's next field
# (a year, a count, a page) or a list run together. Of the 2,918 DOIs of the wild corpus,
# 82 hold a ';', all SICI names' 'CO;' before a digit, so it ends a DOI; a SICI name's
# 'CO;2' is no field.
_FIELD_AFTER: Final = re.compile(rf"[A-Za-z]|{_NUMBER_FIELD}").match
# Another DOI, or a URL, right after a ';' (a row's next field).
_NEXT_DOI: Final = re.compile(
    r";\s*(?:(?:doi:\s*)?" + PREFIX_PATTERN + r"/|https?://|www\.)", re.IGNORECASE | re.ASCII
)


class _Readable(Protocol):
    def read(self, size: int, /) -> str: ...


def find_all(source: str | _Readable | Iterable[str]) -> Iterator[Found]:
    """Every DOI name in *source*, in order of appearance.

    *source* is a ``str``, a text file object, or an iterable of ``str`` chunks; files and
    chunks are read in constant memory, and a DOI split across two chunks is still found
    whole. Offsets count from the start of the whole stream. A ``str`` subclass (markupsafe's
    ``Markup``, BeautifulSoup's ``NavigableString``) is read as its characters, and the
    answers are plain ``str``. Any text is read in time linear in its length.

    :raises TypeError: when *source* or a chunk is no ``str`` (a binary file).

    >>> text = "Refs: 10.1000/182, 10.1038/nature12373; 10.1093/nar/27.2.573."
    >>> [str(found.doi) for found in find_all(text)]
    ['10.1000/182', '10.1038/nature12373', '10.1093/nar/27.2.573']
    >>> found = find("(see https://doi.org/10.1002/(SICI)1097-4258(199906)14:2%3C123::AID-XYZ%3E3.0.CO;2-1)")
    >>> found.doi
    DOI('10.1002/(SICI)1097-4258(199906)14:2<123::AID-XYZ>3.0.CO;2-1')
    >>> found.start, found.end
    (21, 84)
    >>> [(str(f.doi), f.start) for f in find_all(["see 10.10", "00/18", "2 and doi:10.1/x"])]
    [('10.1000/182', 4), ('10.1/x', 24)]
    """
    if type(source) is str:
        return _scan(source, 0, None)
    if isinstance(source, str):
        return _scan(_exact(source), 0, None)
    return _chunked(_chunks_of(source), _scan_chunk, _LOOKBACK)


_CHUNK: Final = 1 << 16
# What a streaming scan keeps between chunks besides an unfinished DOI: enough for a start
# split across chunks ('urn:doi:10.<registrant>') and for the URL look-back.
_TAIL: Final = 256
# An unfinished DOI longer than this is taken to end at the chunk boundary, so that text
# with no whitespace at all cannot make the scan hold unbounded memory.
_MAX_CARRY: Final = 1 << 20


def _chunks_of(source: _Readable | Iterable[str]) -> Iterable[str]:
    """The chunks of a text file object (read in _CHUNK pieces) or of an iterable, each an
    exact str (_exact)."""
    read = getattr(source, "read", None)
    if callable(read):
        return map(_exact, iter(lambda: read(_CHUNK), ""))
    return map(_exact, cast("Iterable[str]", source))


def _exact(text: object) -> str:
    """*text* as an exact str: a subclass (BeautifulSoup's NavigableString,
    markupsafe.Markup, numpy.str_) is read as its characters, none of its methods, so that
    every build gives the same exact str answers at the same offsets (Markup's slices are
    Markup, and joined to a str, it escapes the str's characters; the C scan takes an exact
    str only).

    :raises TypeError: when *text* is no str (bytes: a file opened in binary mode)."""
    if type(text) is str:
        return text
    if isinstance(text, str):
        return str.__str__(text)
    msg = f"DOIs are found in text: a str, a text file or str chunks, not {type(text).__name__}"
    raise TypeError(msg)


class _ChunkScan(Protocol[T_co]):
    def __call__(
        self, buffer: str, scan_from: int, base: int, *, final: bool
    ) -> tuple[Iterator[T_co], Callable[[], int]]: ...


def _chunked(chunks: Iterable[str], scan: _ChunkScan[T], keep: int) -> Iterator[T]:
    """Run *scan* over the stream of *chunks* in constant memory.

    ``scan(buffer, scan_from, base, final)`` gives what it finds in ``buffer`` from
    ``scan_from`` on (``base`` is the stream offset of ``buffer[0]``; ``final`` says no chunk
    follows), and a function that tells, once that is read, where the next scan must start.
    The buffer keeps *keep* characters before that point, for the scan's look-back.
    """
    # chain() reads each chunk's finds to the end before it asks for the next chunk's, and
    # hands each find on in C: a DOI passes through one generator, not a yield-from chain.
    return itertools.chain.from_iterable(_chunk_scans(chunks, scan, keep))


def _chunk_scans(chunks: Iterable[str], scan: _ChunkScan[T], keep: int) -> Iterator[Iterator[T]]:
    buffer = ""
    base = 0
    scan_from = 0
    due = 0  # the unscanned length at which the next scan is due
    for chunk in chunks:
        buffer += chunk
        if len(buffer) - scan_from < due:
            continue
        found, after = scan(buffer, scan_from, base, final=False)
        yield found
        next_scan = after()
        cut = max(0, next_scan - keep)
        buffer = buffer[cut:]
        base += cut
        scan_from = next_scan - cut
        # What the scan left, it left for want of text (a DOI that may go on, the tail a
        # start may be split in): scanning it again before it has doubled would make many
        # small chunks re-read a long unfinished DOI once each, quadratic up to _MAX_CARRY.
        due = 2 * (len(buffer) - scan_from)
    yield scan(buffer, scan_from, base, final=True)[0]


def _scan_chunk(
    buffer: str, scan_from: int, base: int, *, final: bool
) -> tuple[Iterator[Found], Callable[[], int]]:
    """_scan for _chunked: a DOI that may go on in the next chunk waits for it, unless the
    unfinished text has grown past _MAX_CARRY."""
    resume: list[int] = []  # _scan sets where the next scan must start
    final = final or len(buffer) - scan_from > _MAX_CARRY
    found = _scan(buffer, scan_from, None if final else resume, base)
    return found, lambda: resume[0] if resume else len(buffer)


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
            name = written if _url_plain(written) else _url_name(written)
            if name is not None:
                start = match.start()
                end = start + len(written)
                doi = valid_doi(name)
                return _new_found(Found, (doi, start + base, end + base, written)), end, _GO_ON
    elif kind == _SHAPED:
        quick = _quick(text, match, resume)
        if quick is not None:
            quick = _completed(text, quick, resume)
            if quick is None:
                return None, -1, _STOP
            return _moved(quick, base), quick.end, _GO_ON
    found, position = _walk(text, match, resume)
    if found is None:
        return None, position, _STOP if position < 0 else _RESTART
    found = _completed(text, found, resume)
    if found is None:
        return None, -1, _STOP
    return _moved(found, base), max(position, found.end), _RESTART


# A Springer chapter's '_' that a LaTeX PDF's text layer gives as a blank (the OT1 fonts
# draw the underscore as a rule, no glyph): '10.1007/978-3-319-21668-3 9.' (a HotOS
# paper). A Springer book's name (_hyphens.is_springer_book: an ISBN hyphenated by its
# ranges, its check digit holding), then a blank and 1 to 4 digits that end the line, or
# end before punctuation and a blank: the digits are the chapter (_completed). No labeled
# DOI is a bare ISBN followed so. The candidate pattern leaves such names undecided
# (_hyphens.MENDABLE_PREFIXED).
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


if _SPEEDUPS is None:
    _scan = _scan_python
else:
    _Scan = _SPEEDUPS.Scan

    def _scan(text: str, position: int, resume: list[int] | None, base: int = 0) -> Iterator[Found]:
        """_scan_python's loop in C (_speedups.Scan), with the same answers."""
        # (the C loop reads the trailing punctuation and a URL candidate's odd last
        # characters from here, where the Python loop does)
        found = _Scan(
            _candidates().finditer, text, position, resume, base,
            DOI, Found, _decide, _TAIL, _TRAIL_CHARS, _GLUED_FILE_LAST,
        )  # fmt: skip
        return cast("Iterator[Found]", found)


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


# What, right before a candidate of the common shape (which the pattern has found not glued
# to a word, '.', '-' or '_'), leaves the decision to the walk or a closer look: '/', '='
# or '%' (a URL or an escape), ':' (urn:doi: names use ':' and are walked; 'doi:' is
# checked for).
_QUICK_AFTER_NOT: Final = frozenset("/=:%")
# The resolver URLs _quick reads itself when they follow a boundary.
# (the commonest resolver URLs, decided by _quick: a subset of RESOLVER_HOSTS's, which the
# walk reads whole; a test checks that they are)
_QUICK_HEADS: Final = ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/")
# In a URL, what _quick leaves to the walk: the characters that end a DOI there, escapes,
# and the views publishers append (_URL_TAILS).
_URL_VIEW_AFTER: Final = rf"/(?i:{_VIEWS})(?![a-zA-Z0-9])"
# A view after a name the pattern has decided (which holds no '?', '#' or "'"). The literal
# '/' it starts with lets the engine search for it at string-search speed.
_URL_VIEW: Final = re.compile(rf"{_URL_VIEW_AFTER}|{_FILE_AFTER}", re.ASCII).search
_QUICK_URL_ODD: Final = re.compile(rf"[?#']|{_URL_VIEW_AFTER}", re.ASCII).search
# After a candidate, what surely ends a DOI: whitespace, '"' and the closers (no opener in
# the candidate is unbalanced).
_QUICK_ENDS: Final = frozenset(" \t\n\r\f\v\"')]}>" + _ENDER_CHARS)
_QUICK_TRIM: Final = "".join(sorted(_TRAILING))
_LINE_END_AHEAD: Final = re.compile(r"[ \t]*+\r?(?:\n|\Z)").match
_new_found = tuple.__new__


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
            elif (
                before != "/"
                or not _after_resolver(text, start)
                or _QUICK_URL_ODD(text, start, end)
            ):
                return None
            else:
                in_url = True
    if end < length:
        after = text[end]
        if after not in _QUICK_ENDS and not (
            after == "," or (after == ";" and (end + 1 == length or text[end + 1] in _QUICK_ENDS))
        ):
            return None
        if after == ";" and _SICI_CHECK_BREAK(text, end - 2):
            return None  # a SICI name broken before its check character: the walk joins it
    suffix = match.start(_SHAPED)  # the registrant is no number: the pattern saw to it
    raw = match.group()
    if "\\" in raw:
        return None  # escapes (\\/, \\_) are read by the walk
    if _LINE_END_AHEAD(text, end):
        return None  # a DOI broken across lines may go on: the walk decides
    written = raw.rstrip(_QUICK_TRIM)
    if len(written) <= suffix - start:
        return None  # nothing of the suffix is left
    if written.startswith(_PREPRINTS) and _versioned(written):
        return None
    if written[suffix - start] in _PLACEHOLDER_STARTS and _IS_PLACEHOLDER(written, suffix - start):
        return None
    name = _url_name(written) if in_url else written
    if name is None or not name.isprintable():
        return None
    return _new_found(
        Found, (valid_doi(mended(_as_letters(name))), start, start + len(written), written)
    )


def _after_resolver(text: str, start: int) -> bool:
    """Whether a common resolver URL, right after a boundary, ends at *start*."""
    for head in _QUICK_HEADS:
        at = start - len(head)
        if at >= 0 and text.startswith(head, at) and (at == 0 or text[at - 1] in _BOUNDARIES):
            return True
    return False


# How many starts the rest of a run the walk has read may hold for the scan to read it again
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
        return None, position  # '10.123:456' names a DOI only in the URN form
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
        return None, position  # a number's path outside a URL ('114/10.654206/0.3')
    if not (urn or in_url) and _looks_like_a_number(text, start, prefix):
        return None, position
    end, run_end = _grow(text, position, in_url=in_url, stream=resume is not None)
    if resume is not None and end == len(text):
        # the run reaches the chunk's end (_run_end's wait): the next chunk decides, the
        # placeholder check too ('10.1000/xxx' + 'u')
        resume.append(start)
        return None, -1
    line_break = _LINE_BREAK.match(text, position)  # ('https://doi.org/10.1145/⏎nnnnnnn…')
    if _IS_PLACEHOLDER(text, position if line_break is None else line_break.end()):
        return None, run_end  # past the whole token: a scan from its start again is quadratic
    if text.startswith("\\@", end):
        # a TeX macro's template ('10.1007/s\@doiinfo'), no DOI
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


def _moved(found: Found, base: int) -> Found:
    return found._replace(start=base + found.start, end=base + found.end) if base else found


def _after_doi_path_label(text: str, start: int) -> bool:
    """Whether a 'doi:' label starts a URL path's segment right before *start*
    (api.semanticscholar.org/graph/v1/paper/DOI:10.…?fields=…): the DOI is then in the URL.
    The candidate pattern's look-behind for 'doi:' (not after ':' or '/') leaves such a
    DOI to _quick, which leaves it to the walk (_in_url)."""
    return text[start - 5 : start].lower() == "/doi:"


def _token_start(text: str, start: int) -> int:
    """Where the token that reaches *start* begins: after the last boundary (a blank, a
    quote, a bracket), at most _LOOKBACK back."""
    # rfind stops at the nearest boundary, and each boundary found narrows the window for
    # the next; the window keeps a scan linear on text with no boundaries at all. A URL
    # longer than the window is read as plain text.
    low = max(0, start - _LOOKBACK)
    for char in _BOUNDARIES:
        at = text.rfind(char, low, start)
        if at >= 0:
            low = at + 1
    return low


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


def find(source: str | _Readable | Iterable[str]) -> Found | None:
    """The first DOI name in *source* (as for :func:`find_all`), or None.

    >>> find("no DOI here") is None
    True
    """
    return next(find_all(source), None)


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


def _versioned(written: str) -> bool:
    """Whether a preprint server's name carries a version or file after it (the walk cuts
    it)."""
    preprint = _PREPRINT.fullmatch(written)
    return preprint is not None and preprint.end(1) < len(written)


def _escaped_end(raw: str) -> int:
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
    if raw.startswith(_PREPRINTS):
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
        doi = DOI(URN + name[len(URN) :] if urn else mended(name))
    except (InvalidDOI, PercentError):
        return None
    return _new_found(Found, (doi, start, end, raw))


# --- shortDOIs, when asked for ------------------------------------------------------------


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
