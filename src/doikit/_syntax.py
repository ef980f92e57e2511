"""The grammar of DOI names and their presentations: each character class, and the table of
the resolvers whose URLs present a name, defined once, under the citation of the text it
implements.

The standards are cited by number (docs/names.md has the rules and their sources):
000 DOI Handbook, "DOI Name Encoding Rules for URL Presentation"; 001 ANSI/NISO Z39.84-2000;
002 draft-paskin-doi-uri-04 (2003); 003 the DOI Foundation's "Handling of Special
Characters"; 004 DOI Foundation, "DOI URI Scheme" specification (2024).
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING, Final, NewType

if TYPE_CHECKING:
    from doikit._errors import ErrorCode

# --- The presentations' resolvers -----------------------------------------------------
#: The hosts of the resolvers whose URLs present a DOI name: the doi.org proxy under its
#: names, and the Handle System's proxy (handle-api.md 2.1). Every reader of presentations
#: takes them from here: the parser's patterns, the C accelerator (through its
#: configuration), the extractor's shortDOI reader, the client's shortDOI reader and the
#: messages that list them. Adding a host is this one change.
RESOLVER_HOSTS: Final = ("doi.org", "dx.doi.org", "www.doi.org", "hdl.handle.net")
#: :data:`RESOLVER_HOSTS` as a regular-expression alternation (for re.IGNORECASE).
RESOLVER_HOSTS_PATTERN: Final = "(?:" + "|".join(map(re.escape, RESOLVER_HOSTS)) + ")"
#: The doi.org proxy's hosts: the ones that also serve shortDOIs without '10/'.
DOI_ORG_HOSTS_PATTERN: Final = (
    "(?:" + "|".join(re.escape(h) for h in RESOLVER_HOSTS if h.endswith("doi.org")) + ")"
)
#: The hosts as a reader lists them (``doi.org, dx.doi.org, www.doi.org or hdl.handle.net``).
RESOLVER_HOSTS_TEXT: Final = ", ".join(RESOLVER_HOSTS[:-1]) + " or " + RESOLVER_HOSTS[-1]

#: The heads of a DOI name's URI and URN presentations: the doi URI (004 ch. 2), the info
#: URI (RFC 4452), the URN (000) and the handle URI. The parser's patterns, the extractor
#: and the messages take them from here; the C reader decides the same heads (the literals
#: of head_length in _c/lib/reader.c: a test holds them to this table).
DOI_URI: Final = "doi:"
INFO_URI: Final = "info:doi/"
URN: Final = "urn:doi:"
HANDLE_URI: Final = "hdl:"
URI_HEADS: Final = (DOI_URI, INFO_URI, URN, HANDLE_URI)
#: :data:`URI_HEADS` as a regular-expression alternation (for re.IGNORECASE).
URI_HEADS_PATTERN: Final = "(?:" + "|".join(map(re.escape, URI_HEADS)) + ")"

# --- The name ------------------------------------------------------------------------
# Z39.84 4 and Appendix A; ISO 26324 4.1.2; Handbook 2.2:
#   <DIR>.<REG>/<DSS>, DIR = "10", REG numeric with optional "."-separated subdivisions.
# re.ASCII: [0-9] must never match Arabic-Indic or other Unicode digits (peers.md, idutils).
#: The DOI prefix as a pattern (directory indicator, registrant, subdivisions), unanchored.
PREFIX_PATTERN: Final = r"10\.[0-9]+(?:\.[0-9]+)*"
PREFIX_RE: Final = re.compile(PREFIX_PATTERN + "/", re.ASCII)
#: A whole DOI prefix and nothing else (``10.1000``, ``10.1000.10``).
PREFIX_ONLY_RE: Final = re.compile(PREFIX_PATTERN, re.ASCII)

# 004 ch. 2 and Handbook 2.2: "a DOI name consists of an ordered sequence of Unicode code
# points of the Graphic type". Unicode 3.3 D31 / Table 2-3: Graphic = L, M, N, P, S, Zs.
GRAPHIC_CATEGORIES: Final = frozenset(
    [
        "Lu",
        "Ll",
        "Lt",
        "Lm",
        "Lo",
        "Mn",
        "Mc",
        "Me",
        "Nd",
        "Nl",
        "No",
        "Pc",
        "Pd",
        "Ps",
        "Pe",
        "Pi",
        "Pf",
        "Po",
        "Sm",
        "Sc",
        "Sk",
        "So",
        "Zs",
    ]
)

_CATEGORY_NAMES: Final = {
    "Cc": "a control character",
    "Cf": "a format character (invisible)",
    "Cs": "a surrogate",
    "Co": "a private-use character",
    "Cn": "an unassigned code point",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}


def first_non_graphic(text: str, start: int = 0) -> int:
    """Index of the first code point of *text* at or after *start* that is not Graphic,
    or -1.

    ``str.isprintable`` is the C-speed fast path: it is false for every category that is
    not Graphic (C*, Zl, Zp) and also for Zs other than U+0020, which is Graphic, so only
    a ``False`` needs the exact check.
    """
    if text.isprintable():
        return -1
    category = unicodedata.category
    for index in range(start, len(text)):
        if category(text[index]) not in GRAPHIC_CATEGORIES:
            return index
    return -1


def describe(char: str) -> str:
    """``U+200B ZERO WIDTH SPACE``: how a message names one code point."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X} {name}".rstrip()


def why_not_graphic(char: str) -> str:
    """A phrase saying what kind of non-Graphic code point *char* is."""
    return _CATEGORY_NAMES.get(unicodedata.category(char), "not a graphic character")


# --- ASCII-only case folding ---------------------------------------------------------
# 004 ch. 3 NOTE and Handbook 2.4: "case-insensitive only with respect to the Basic Latin
# Unicode block". str.lower() folds far beyond ASCII (KELVIN SIGN -> k, U+0130 -> i̇), so
# non-ASCII text is folded as UTF-8 bytes, where bytes.lower() touches A-Z only.

#: The comparison key of a DOI name or handle, as :func:`fold` gives it: what names are
#: compared, hashed and stored by. A ``str`` is a Key only once folded.
Key = NewType("Key", str)

if TYPE_CHECKING:

    def ascii_fold(name: str, /) -> Key:
        """:func:`fold` of a name known to be ASCII."""

else:
    ascii_fold = str.lower  # for ASCII, fold is str.lower: no call of ours, no cost


def fold(name: str) -> Key:
    """ASCII-only lower-casing: the comparison key of a DOI name.

    >>> fold("10.1000/ABC-É")
    '10.1000/abc-É'
    >>> fold("10.1000/\\u212a")  # KELVIN SIGN is not folded to 'k'
    '10.1000/\\u212a'
    """
    if name.isascii():
        return ascii_fold(name)
    return Key(name.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass"))


# --- Percent-encoding ----------------------------------------------------------------
# RFC 3986 2.1: pct-encoded = "%" HEXDIG HEXDIG; 004 ch. 2 and 3: UTF-8 octets.
_ESCAPE_RUN: Final = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


class TextError(Exception):
    """A fault at ``index`` of a text being read: a bad escape (:func:`percent_decode`) or
    a DOI name that is not one (``doikit._present.check_name``), with ``code`` and
    ``detail`` as :class:`~doikit.InvalidDOI` has them. The caller knows where that text sits
    in its input, so it raises InvalidDOI with the position there (or refuses otherwise).
    """

    def __init__(self, code: ErrorCode, index: int, detail: str) -> None:
        super().__init__(detail)
        self.code: ErrorCode = code
        self.index = index
        self.detail = detail

    def __reduce__(self) -> tuple[type[TextError], tuple[ErrorCode, int, str]]:
        return (type(self), (self.code, self.index, self.detail))


#: :class:`TextError` by the name the server, the deposit reader and the extractor catch it by.
PercentError = TextError


def percent_decode(text: str) -> str:
    """Decode every ``%XX`` of *text* as UTF-8, strictly.

    Characters that are not escapes stay as they are (a space or non-ASCII letter typed by
    hand is itself). A ``%`` that does not start an escape is an error, as seed 003 says
    ("Percent (%) will always be interpreted as the start of a hex encoded character"), and
    so are escapes that are not UTF-8.

    :raises TextError: with the index into *text* of the offending ``%``.

    >>> percent_decode("caf%C3%A9%2Fx")
    'café/x'
    """
    if "%" not in text:
        return text
    parts: list[str] = []
    pos = 0
    for match in _ESCAPE_RUN.finditer(text):
        start = match.start()
        _no_stray_percent(text, pos, start)
        parts.append(text[pos:start])
        run = match.group()
        try:
            parts.append(bytes.fromhex(run.replace("%", "")).decode("utf-8"))
        except UnicodeDecodeError as exc:
            index = start + 3 * exc.start
            bad = run[3 * exc.start : 3 * exc.start + 12]
            detail = f"the escapes {bad}… do not decode as UTF-8"
            raise TextError("utf8", index, detail) from None
        pos = match.end()
    _no_stray_percent(text, pos, len(text))
    parts.append(text[pos:])
    return "".join(parts)


def _no_stray_percent(text: str, start: int, end: int) -> None:
    index = text.find("%", start, end)
    if index >= 0:
        seen = text[index : index + 3]
        raise TextError(
            "percent-escape",
            index,
            f"{seen!r} is not a %XX escape; a literal '%' is written %25",
        )


def decoded_index(encoded: str, index: int) -> int:
    """Map *index* in ``percent_decode(encoded)`` back to an index in *encoded*.

    Used only to report an error's position, so it may be slow.
    """
    out = 0
    pos = 0
    for match in _ESCAPE_RUN.finditer(encoded):
        plain = match.start() - pos
        if index < out + plain:
            return pos + (index - out)
        out += plain
        pos = match.start()
        decoded = bytes.fromhex(match.group().replace("%", "")).decode("utf-8", "replace")
        offset = 0
        for char in decoded:
            if out == index:
                return pos + offset
            out += 1
            offset += 3 * len(char.encode("utf-8", "replace"))
        pos = match.end()
    return pos + (index - out)


def percent_encode(text: str, keep: frozenset[str]) -> str:
    """Percent-encode every UTF-8 byte of *text* except ASCII characters in *keep*.

    Hex digits are upper-case (RFC 3986 2.1 "should use uppercase"; seed 000's table).

    >>> percent_encode("a/é", frozenset("a"))
    'a%2F%C3%A9'
    """
    out: list[str] = []
    for char in text:
        if char in keep:
            out.append(char)
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
    return "".join(out)


# RFC 3986 2.3 unreserved and 2.2 sub-delims; 004 ch. 2 keeps these, ":" and "@".
ALPHA_DIGIT: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
UNRESERVED: Final = ALPHA_DIGIT | frozenset("-._~")
SUB_DELIMS: Final = frozenset("!$&'()*+,;=")
URI_KEEP: Final = UNRESERVED | SUB_DELIMS | frozenset(":@")

# Seed 000, "Mandatory Rules": % " # SPACE ?  (? is mandatory only in the Handbook; Z39.84
# Table 1 and seed 003 list % " # SPACE; the newest, the Handbook, wins.)
URL_MANDATORY: Final = frozenset('%"# ?')
# Seed 000, "Recommended Rules": < > { } ^ [ ] ` | \ +  (Z39.84 Table 2 prints the
# backtick's code as "%6a"; it is %60, as seed 000 says.) "," is needed only for Which RA.
URL_RECOMMENDED: Final = URL_MANDATORY | frozenset("<>{}^[]`|\\+")
# Printable ASCII, from which each table removes its characters; everything else (control
# and non-ASCII) is always escaped as UTF-8 (seed 000 and 004 ch. 2).
PRINTABLE_ASCII: Final = frozenset(chr(c) for c in range(0x21, 0x7F))
