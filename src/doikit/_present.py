"""Presentations of a DOI name: reading every form a user meets, and writing each one.

Reading (:func:`parse`) accepts:

==========================  =============================================  ================
form                        example                                        decoding
==========================  =============================================  ================
bare name                   ``10.1000/182``                                literal
doi URI / label             ``doi:10.1000/182``, ``DOI: 10.1000/182``       percent (004)
info URI (RFC 4452)         ``info:doi/10.1000/182``                       percent
handle URI                  ``hdl:10.1000/182``                            percent
URN (seed 000)              ``urn:doi:10.123:456ABC%2Fzyz``                percent, ':'→'/'
resolver URL                ``https://doi.org/10.1000/182``                percent (path)
==========================  =============================================  ================

Resolver hosts are ``doi.org``, ``dx.doi.org``, ``www.doi.org`` and ``hdl.handle.net``, with
or without ``http(s)://``, in any case. In a URL a raw ``?`` or ``#`` starts the query or
fragment (RFC 3986 3.4, 3.5); inside the path, the prefixes the doi.org proxy strips
(``api/handles/``, ``doi:``, ``urn:doi:``, ``info:doi/``, ``hdl:``) are stripped too
(handle-api.md 2.1).
"""

from __future__ import annotations

import re
from typing import Final, Literal, NoReturn

from doikit._errors import InvalidDOI
from doikit._syntax import (
    HANDLE_URI,
    INFO_URI,
    PREFIX_RE,
    PRINTABLE_ASCII,
    RESOLVER_HOSTS_PATTERN,
    RESOLVER_HOSTS_TEXT,
    URI_HEADS,
    URI_HEADS_PATTERN,
    URI_KEEP,
    URL_MANDATORY,
    URL_RECOMMENDED,
    URN,
    TextError,
    decoded_index,
    describe,
    first_non_graphic,
    percent_decode,
    percent_encode,
    why_not_graphic,
)

Encoding = Literal["mandatory", "recommended"]

# The presentation prefixes, matched at the start of the stripped text. re.ASCII with
# re.IGNORECASE folds ASCII letters only, so 'K' (KELVIN SIGN) never matches 'k'.
_FORM: Final = re.compile(
    r"""
      (?P<url>(?:doi[ \t]*:[ \t]*)?(?:https?://)?
              """
    + RESOLVER_HOSTS_PATTERN
    + r"""(?::[0-9]{1,5})?(?:/|\Z))
    | (?P<urn>"""
    + re.escape(URN)
    + r""")
    | (?P<info>"""
    + re.escape(INFO_URI)
    + r""")
    | (?P<hdl>"""
    + re.escape(HANDLE_URI)
    + r""")
    | (?P<doi>doi(?:[ \t]*:[ \t]*|[ \t]+))
    | (?P<other>[a-z][a-z0-9+.-]*://[^/?\#\s]*)
    """,
    re.IGNORECASE | re.ASCII | re.VERBOSE,
)
# handle-api.md 2.1 step 4: what the proxy strips from a decoded path.
_PROXY_PREFIX: Final = re.compile(
    r"(?:api/handles/)?" + URI_HEADS_PATTERN + "?", re.IGNORECASE | re.ASCII
)
_URN_PREFIX: Final = re.compile(r"(?:api/handles/)?" + re.escape(URN), re.IGNORECASE | re.ASCII)
_QUERY_OR_FRAGMENT: Final = re.compile(r"[?#]")


def check_name(name: str) -> int:
    """Validate a DOI name; return the index of the '/' between prefix and suffix.

    :raises TextError: with the index into *name* of the first fault.
    """
    match = PREFIX_RE.match(name)
    if match is None:
        _diagnose_prefix(name)
    end = match.end()
    if end == len(name):
        raise TextError("empty-suffix", end, "the suffix after the '/' is empty")
    bad = first_non_graphic(name, end)
    if bad >= 0:
        char = name[bad]
        raise TextError(
            "not-graphic",
            bad,
            f"{describe(char)} is {why_not_graphic(char)}; a DOI name holds only "
            "Unicode Graphic characters (letters, marks, numbers, punctuation, symbols, spaces)",
        )
    return end - 1


def _diagnose_prefix(name: str) -> NoReturn:
    """Raise the precise error for a name whose prefix does not match ``10.<digits>/``."""
    if name.startswith("10/"):
        raise TextError(
            "short-doi",
            0,
            "'10/…' is a shortDOI alias, not a DOI name; expand it through a resolver first",
        )
    if not name.startswith("10."):
        index = 0 if not name.startswith("10") else 2
        raise TextError(
            "directory", index, "a DOI name starts with the directory indicator '10' and '.'"
        )
    segment_start = 3
    for index in range(3, len(name)):
        char = name[index]
        if char in "./":
            if index == segment_start:
                what = "the registrant code" if index == 3 else "a registrant subdivision"
                raise TextError("registrant", index, f"{what} is empty")
            if char == "/":
                break  # pragma: no cover - PREFIX_RE would have matched
            segment_start = index + 1
        elif not "0" <= char <= "9":
            raise TextError(
                "registrant",
                index,
                f"{describe(char)} is not allowed in a registrant code, "
                "which is ASCII digits 0-9 with optional '.' subdivisions",
            )
    if segment_start == len(name) and len(name) > 3:
        raise TextError("registrant", len(name) - 1, "a registrant subdivision is empty")
    if len(name) == 3:
        raise TextError("registrant", 3, "the registrant code is empty")
    raise TextError("missing-slash", len(name), "there is no '/' between the prefix and the suffix")


# The fast path: one pattern, matched in C, decides the common, unambiguous shapes whole: a
# bare name without '%'; a usual presentation head (doi.org, dx.doi.org, www.doi.org or
# hdl.handle.net URLs with or without http(s)://, ``doi:``, ``DOI: ``, ``DOI ``,
# ``info:doi/``, ``hdl:``) before a name of printable ASCII without a space, '?' or '#',
# its first '/' perhaps written %2F; and the URN ``urn:doi:10.<registrant>:<suffix>``. What
# it matches is ASCII, so ``str.lower()`` folds it exactly. Anything else, valid or not, takes
# the full parser (_parse_slow), which is the authority: the fast path only ever reaches the
# same answer sooner (tests/test_properties.py holds it to that). benchmarks/bench_names.py
# measures it: a match costs less than the str-method checks it replaced.
_QUICK_PATTERN: Final = re.compile(
    r"""
    (?:
      (?:(?=10\.)|((?i:(?:https?://)?"""
    + RESOLVER_HOSTS_PATTERN
    + r"""/
          |doi(?::\ ?|\ )|"""
    + re.escape(INFO_URI)
    + "|"
    + re.escape(HANDLE_URI)
    + r""")))    # a bare name first: it is the commonest
      (?P<name>10\.[0-9]+(?:\.[0-9]+(?:\.[0-9]+)*|)  # (a repeat only where there is one)
        (?(1)(?:/|%2[Ff])[!"$->@-~]++            # after a head: escapes decoded below
            |/[ -$&-~]*[!-$&-.0-~]))            # bare: literal, no '%', no final ' ' or '/'
    | (?i:"""
    + re.escape(URN)
    + r""")(?P<urn_prefix>10\.[0-9]+(?:\.[0-9]+(?:\.[0-9]+)*|)):(?P<urn_suffix>[!"$->@-~]++)
    )\Z
    """,
    re.ASCII | re.VERBOSE,
)
_QUICK: Final = _QUICK_PATTERN.match
#: The group of a :data:`_QUICK` match that holds a plain name (None for the URN), by number:
#: the hot paths index by it, and doikit._doi hands it to the C accelerator's configure().
_QUICK_NAME: Final = _QUICK_PATTERN.groupindex["name"]
_HEX_BYTE: Final = {
    f"{hi}{lo}": chr(16 * int(hi, 16) + int(lo, 16))
    for hi in "0123456789ABCDEFabcdef"
    for lo in "0123456789ABCDEFabcdef"
}


def quick_decode(text: str) -> str | None:
    """Strictly decode an ASCII text's escapes, or None when anything is irregular
    (the full decoder then reports it precisely)."""
    if not text.isascii():
        return None
    pieces = text.split("%")
    try:
        text = pieces[0] + "".join([_HEX_BYTE[piece[:2]] + piece[2:] for piece in pieces[1:]])
    except KeyError:
        return None
    if text.isascii():
        return text
    try:
        return text.encode("latin-1").decode("utf-8")
    except UnicodeDecodeError:
        return None


def quick_unescape(text: str) -> str | None:
    """*text*, printable ASCII, with its escapes decoded; None when one is irregular or
    decodes to something not printable (the full decoder then reports it precisely)."""
    # The commonest escapes: %2F (a '/'), and %3C %3E (the '<' '>' of every SICI DOI in
    # a Handbook URL). Replacing them cannot create or destroy another escape, since each
    # match starts at a '%' that begins that very escape; whatever '%' remains goes
    # through the strict decoder.
    text = text.replace("%2F", "/")
    if "%" in text:
        text = text.replace("%3C", "<").replace("%3E", ">")
        if "%" in text:
            decoded = quick_decode(text)
            # printable: every code point Graphic (isprintable() admits no other
            # whitespace than ' ', a stricter test than Graphic: the full parser decides
            # the rest).
            if decoded is None or not decoded.isprintable():
                return None
            return decoded
    return text


def parse_rest(text: str, match: re.Match[str] | None) -> str:
    """The name in *text* when its :data:`_QUICK` *match* is not a plain one (a URN, or
    escapes to decode) or there is none: the full parser decides what the match cannot.

    :raises InvalidDOI: with the position in *text* of the fault.
    """
    if match is not None:
        name = match[_QUICK_NAME]
        if name is None:  # the URN: its ':' stands for the first '/'
            name = f"{match['urn_prefix']}/{match['urn_suffix']}"
        name = quick_unescape(name) if "%" in name else name
        if name is not None:
            return name
    return _parse_slow(text)


def parse(text: str) -> str:
    """Read a DOI name from any presentation and return it, bare.

    :raises InvalidDOI: with the position in *text* of the fault.
    """
    match = _QUICK(text)
    if match is not None:
        name = match[_QUICK_NAME]
        if name is not None and "%" not in name:
            return name
    return parse_rest(text, match)


def _parse_slow(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("10"):
        # A bare name is taken literally: a '%' in it is a '%'.
        try:
            check_name(stripped)
        except TextError as exc:
            lead = len(text) - len(text.lstrip())
            raise _invalid(text, exc, lead + exc.index) from None
        return stripped
    form = _FORM.match(stripped)
    if form is None:
        _not_a_doi(text, stripped)
    kind = form.lastgroup
    start = form.end()
    raw = stripped[start:]
    if kind == "other":
        raise InvalidDOI(
            text,
            "unsupported-url",
            _lead(text),
            f"{form.group()!r} is not a DOI resolver; DOI URLs use {RESOLVER_HOSTS_TEXT}",
        )
    if kind == "url":
        cut = _QUERY_OR_FRAGMENT.search(raw)
        if cut is not None:
            raw = raw[: cut.start()]
    try:
        decoded = percent_decode(raw)
    except TextError as exc:
        raise InvalidDOI(text, exc.code, _lead(text) + start + exc.index, exc.detail) from None
    skip = 0
    urn = kind == "urn"
    if kind == "url":
        inner = _URN_PREFIX.match(decoded)
        urn = inner is not None
        inner = inner or _PROXY_PREFIX.match(decoded)
        skip = inner.end() if inner else 0
    name = decoded[skip:] if skip else decoded
    if urn:
        name = urn_colon(name)
    if not name:
        raise InvalidDOI(
            text, "empty", _lead(text) + len(stripped), "there is no DOI name after the prefix"
        )
    try:
        check_name(name)
    except TextError as exc:
        if exc.code == "directory" and kind == "url" and name.isalnum() and name.isascii():
            exc = TextError(
                "short-doi",
                0,
                "a doi.org/<code> URL is a shortDOI alias, not a DOI name; "
                "expand it through a resolver first",
            )
        position = _lead(text) + start + decoded_index(raw, skip + exc.index)
        raise _invalid(text, exc, position) from None
    return name


def urn_colon(name: str) -> str:
    """Seed 000 and handle-api.md 2.1 step 5: in a URN the first ':' stands for the first
    '/', when it comes before any '/' (``urn:doi:10.123:456`` names ``10.123/456``)."""
    colon = name.find(":")
    if colon >= 0:
        slash = name.find("/")
        if slash < 0 or colon < slash:
            return name[:colon] + "/" + name[colon + 1 :]
    return name


def _lead(text: str) -> int:
    return len(text) - len(text.lstrip())


def _invalid(text: str, exc: TextError, position: int) -> InvalidDOI:
    return InvalidDOI(text, exc.code, position, exc.detail)


def _not_a_doi(text: str, stripped: str) -> NoReturn:
    if not stripped:
        raise InvalidDOI(text, "empty", None, "the text is empty")
    if stripped[0].isdigit():
        raise InvalidDOI(
            text,
            "directory",
            _lead(text),
            "a DOI name starts with the directory indicator '10' and '.'",
        )
    raise InvalidDOI(
        text,
        "not-a-doi",
        _lead(text),
        "expected a DOI name ('10.…/…') or a presentation of one "
        f"({', '.join(URI_HEADS)}, or a URL of {RESOLVER_HOSTS_TEXT})",
    )


# --- Writing -------------------------------------------------------------------------

_URL_KEEP: Final[dict[str, frozenset[str]]] = {
    "mandatory": PRINTABLE_ASCII - URL_MANDATORY,
    "recommended": PRINTABLE_ASCII - URL_RECOMMENDED,
}
_URL_NEEDS_ESCAPE: Final[dict[str, re.Pattern[str]]] = {
    key: re.compile("[" + re.escape("".join(sorted(chars))) + "]")
    for key, chars in (("mandatory", URL_MANDATORY), ("recommended", URL_RECOMMENDED))
}


def url_path(name: str, encoding: Encoding = "recommended") -> str:
    """The name as a URL path under a resolver, by the Handbook's rules (seed 000).

    ``encoding="mandatory"`` escapes ``% " # SPACE ?``; ``"recommended"`` also
    ``< > { } ^ [ ] ` | \\ +``. Control and non-ASCII characters always become UTF-8
    escapes. A dot segment (``/./``, ``/../``, or ``/.``, ``/..`` at the end) gets one
    slash escaped (seed 000's NOTE) so that no URL library or browser removes it.

    >>> url_path("10.1000/456#789")
    '10.1000/456%23789'
    >>> url_path("10.1000/a/./b/..")
    '10.1000/a/.%2Fb%2F..'
    """
    try:
        keep = _URL_KEEP[encoding]
    except KeyError:
        msg = f"encoding must be 'mandatory' or 'recommended', not {encoding!r}"
        raise ValueError(msg) from None
    if name.isascii() and name.isprintable() and not _URL_NEEDS_ESCAPE[encoding].search(name):
        path = name
    else:
        path = percent_encode(name, keep)
    if "/." in path:
        path = _protect_dot_segments(path)
    return path


def _protect_dot_segments(path: str) -> str:
    segments = path.split("/")
    last = len(segments) - 1
    out = [segments[0]]
    for index in range(1, len(segments)):
        segment = segments[index]
        separator = "/"
        if segment in (".", "..") and index == last:
            separator = "%2F"  # nothing follows: escape the slash before it
        elif segments[index - 1] in (".", "..") and index - 1 >= 1:
            separator = "%2F"  # escape the slash after a dot segment
        out.append(separator)
        out.append(segment)
    return "".join(out)


def uri_part(part: str) -> str:
    """004 ch. 2: keep unreserved, sub-delims, ':' and '@'; percent-encode every other
    UTF-8 byte (so '/' inside a suffix becomes %2F).

    >>> uri_part("JDA.202212/SP_17(4).0000")
    'JDA.202212%2FSP_17(4).0000'
    """
    return percent_encode(part, URI_KEEP)


# --- The 2003 draft (seed 002) -------------------------------------------------------
# draft-paskin-doi-uri-04 4: "1. Normalize the case of the leading "doi:" token to be
# lowercase 2. Unescape all unreserved %-escaped characters 3. Normalize the case of the
# scheme-specific part including any %-escaped characters to be uppercase". Its example 5
# unescapes %2F %28 %29 %2C, so "unreserved" there means what RFC 2396 (its URI syntax)
# lets stand raw in a URI: alphanumerics, marks -_.!~*'() and reserved ;/:@&=+$, — less
# '?' (which would start a query).
_LEGACY_RAW: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'();/:@&=+$,"
)
_LEGACY_TOKEN: Final = re.compile(r"%[0-9A-Fa-f]{2}|[^%]|%", re.DOTALL)


def normalize_legacy_uri(text: str) -> str:
    """Normalize a ``doi:`` URI as the 2003 draft says (seed 002), for comparing legacy URIs.

    It does not validate the DOI name (the draft's own example, ``doi:dk/…``, is not one).
    Characters a URI may not hold raw (a space, non-ASCII) are escaped as UTF-8 first.
    The 2024 scheme (004) supersedes this normalization: new code compares ``DOI`` values.

    :raises InvalidDOI: ``not-a-uri`` without a ``doi:`` scheme; ``percent-escape`` for a
        ``%`` that does not start an escape.

    >>> normalize_legacy_uri("doi:dk%2FP%C3%A6dagogi%2037%282%29%2C%20562")
    'doi:DK/P%C3%A6DAGOGI%2037(2),%20562'
    """
    stripped = text.strip()
    if stripped[:4].lower() != "doi:":
        raise InvalidDOI(text, "not-a-uri", _lead(text), "a doi URI starts with 'doi:'")
    out: list[str] = []
    offset = _lead(text) + 4
    position = 0
    for piece in _LEGACY_TOKEN.findall(stripped, 4):
        if len(piece) == 3:
            char = chr(int(piece[1:], 16))
            out.append(char if char in _LEGACY_RAW else piece)
        elif piece == "%":
            raise InvalidDOI(
                text,
                "percent-escape",
                offset + position,
                "'%' does not start a %XX escape; a literal '%' is written %25",
            )
        else:
            out.append(piece if piece in _LEGACY_RAW or piece in "?#" else uri_part(piece))
        position += len(piece)
    return "doi:" + "".join(out).upper()
