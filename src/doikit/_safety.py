"""Presentation safety: findings for DOI names that render ambiguously.

004 ch. 6: "presenting a DOI name by rendering its sequence of code points to glyphs can
be ambiguous … the security considerations at [UNICODE-TR36] apply". A finding is not an
error — a DOI name is what it is — but it warns the humans who read, type or link it.
Presenting such a name in its URI form (``DOI.to_uri()``) removes the ambiguity (004 ch. 2
NOTE 2).
"""

from __future__ import annotations

import unicodedata
from typing import Final, NamedTuple

from doikit._syntax import describe


class Finding(NamedTuple):
    """One presentation-safety finding: a stable ``code``, the ``position`` in the name,
    and a ``message`` for a person.

    Codes: ``confusable``, ``mixed-script``, ``not-nfc``, ``space``, ``bidi``,
    ``invisible``, ``combining-start``, ``trailing-punctuation``, ``reserved-suffix``.
    """

    code: str
    position: int
    message: str


# UTR #36 3.1 / UTS #39 confusables: non-ASCII characters that render like an ASCII one.
# NFKC catches the compatibility forms (fullwidth, mathematical, superscripts); this table
# holds the look-alikes NFKC leaves alone.
_LOOKALIKES: Final[dict[str, str]] = {
    **dict.fromkeys(
        "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u02d7\u2043\u2796\ufe58\ufe63", "-"
    ),
    **dict.fromkeys("\u2044\u2215\u29f8\u2571", "/"),
    **dict.fromkeys("\u2024\u00b7\u2027\u0660\u06f0", "."),
    **dict.fromkeys("\u2018\u2019\u201b\u2032\u02bc\u02b9\u00b4", "'"),
    **dict.fromkeys("\u201c\u201d\u201f\u2033\u02ba", '"'),
    **dict.fromkeys("\u2236\u02d0\ua789", ":"),
    **dict.fromkeys("\u037e", ";"),
    **dict.fromkeys(
        "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
        "\u202f\u205f\u3000",
        " ",
    ),
    # Cyrillic and Greek letters that look Latin.
    "\u0430": "a",
    "\u0435": "e",
    "\u043e": "o",
    "\u0440": "p",
    "\u0441": "c",
    "\u0443": "y",
    "\u0445": "x",
    "\u0456": "i",
    "\u0458": "j",
    "\u0455": "s",
    "\u0501": "d",
    "\u04bb": "h",
    "\u0410": "A",
    "\u0412": "B",
    "\u0415": "E",
    "\u041a": "K",
    "\u041c": "M",
    "\u041d": "H",
    "\u041e": "O",
    "\u0420": "P",
    "\u0421": "C",
    "\u0422": "T",
    "\u0425": "X",
    "\u0406": "I",
    "\u0408": "J",
    "\u0405": "S",
    "\u0391": "A",
    "\u0392": "B",
    "\u0395": "E",
    "\u0396": "Z",
    "\u0397": "H",
    "\u0399": "I",
    "\u039a": "K",
    "\u039c": "M",
    "\u039d": "N",
    "\u039f": "O",
    "\u03a1": "P",
    "\u03a4": "T",
    "\u03a5": "Y",
    "\u03a7": "X",
    "\u03bf": "o",
    "\u03bd": "v",
    "\u0131": "i",
    "\u0261": "g",
    "\u0251": "a",
}
# Graphic code points that render as nothing (UTS #39 "default ignorable" yet Graphic).
_INVISIBLE: Final = frozenset("\u115f\u1160\u3164\uffa0\u2800")
# UTS #39 5.1 "Highly Restrictive": these script sets may mix with Han.
_CJK_SETS: Final = (
    frozenset({"CJK", "HIRAGANA", "KATAKANA"}),
    frozenset({"CJK", "BOPOMOFO"}),
    frozenset({"CJK", "HANGUL"}),
)
_WIDTH_WORDS: Final = frozenset({"FULLWIDTH", "HALFWIDTH"})
_TRAILING: Final = frozenset(".,;:!?)]}>'\"")


def findings(name: str, slash: int) -> tuple[Finding, ...]:
    """Every presentation-safety finding for the DOI *name* (its '/' at index *slash*)."""
    found: list[Finding] = []
    if name.isascii():
        _ascii_findings(name, slash, found)
        return tuple(found)
    first_space = -1
    bidi_at = -1
    scripts: dict[str, int] = {}
    for index, char in enumerate(name):
        if char.isascii():
            if char == " " and first_space < 0:
                first_space = index
            elif char.isalpha():
                scripts.setdefault("LATIN", index)
            continue
        lookalike = _lookalike(char)
        if lookalike is not None:
            found.append(
                Finding(
                    "confusable",
                    index,
                    f"{describe(char)} looks like {lookalike!r} but is a different character",
                )
            )
        category = unicodedata.category(char)
        if category == "Zs" and first_space < 0:
            first_space = index
        if char in _INVISIBLE:
            found.append(Finding("invisible", index, f"{describe(char)} renders as nothing"))
        if bidi_at < 0 and unicodedata.bidirectional(char) in ("R", "AL", "AN"):
            bidi_at = index
        if category[0] == "L":
            scripts.setdefault(_script(char), index)
    if first_space >= 0:
        found.append(_space(name, first_space))
    if bidi_at >= 0:
        found.append(
            Finding(
                "bidi",
                bidi_at,
                "right-to-left characters change the order in which the name is displayed",
            )
        )
    scripts.pop("", None)
    if len(scripts) > 1 and not any(set(scripts) <= allowed for allowed in _CJK_SETS):
        ordered = sorted(scripts.items(), key=lambda item: item[1])
        names = ", ".join(script.title() for script, _ in ordered)
        found.append(
            Finding(
                "mixed-script",
                ordered[1][1],
                f"letters from several scripts ({names}) are mixed",
            )
        )
    if not unicodedata.is_normalized("NFC", name):
        found.append(
            Finding(
                "not-nfc",
                _first_not_nfc(name),
                "Unicode normalization (NFC) would change this name, so a copy made by software "
                "that normalizes is a different DOI name",
            )
        )
    suffix_start = slash + 1
    if suffix_start < len(name) and unicodedata.category(name[suffix_start])[0] == "M":
        found.append(
            Finding(
                "combining-start",
                suffix_start,
                "the suffix starts with a combining mark, which renders on top of the '/'",
            )
        )
    _ascii_findings(name, slash, found, spaces=False)
    found.sort(key=lambda finding: finding.position)
    return tuple(found)


def _ascii_findings(name: str, slash: int, found: list[Finding], *, spaces: bool = True) -> None:
    if spaces and " " in name:
        found.append(_space(name, name.index(" ")))
    if name[-1] in _TRAILING:
        found.append(
            Finding(
                "trailing-punctuation",
                len(name) - 1,
                f"the name ends in {name[-1]!r}, which readers and text scanners take for "
                "punctuation around the DOI; present it as a URL or URI",
            )
        )
    if len(name) > slash + 2 and name[slash + 2] == "/":
        found.append(
            Finding(
                "reserved-suffix",
                slash + 1,
                "Z39.84-2000 4.3 reserved suffixes of the form '*/…' (one character, then '/'); "
                "later standards dropped the rule, but old software may refuse the name",
            )
        )


def _space(name: str, index: int) -> Finding:
    return Finding(
        "space",
        index,
        f"the name contains {describe(name[index])}, which is lost or split when the name "
        "is copied from text",
    )


def _lookalike(char: str) -> str | None:
    found = _LOOKALIKES.get(char)
    if found is not None:
        return found
    compat = unicodedata.normalize("NFKC", char)
    if len(compat) == 1 and compat.isascii() and compat.isprintable():
        return compat
    return None


def _script(char: str) -> str:
    """The script of a letter, from the first word of its Unicode name (UAX #24 in
    miniature: enough to tell Latin from Cyrillic from Greek from Han)."""
    words = unicodedata.name(char, "").split()
    while words and words[0] in _WIDTH_WORDS:
        words.pop(0)
    if not words or words[0] in ("MATHEMATICAL", "MODIFIER", "SMALL", "SCRIPT"):
        return ""
    return words[0]


def _first_not_nfc(name: str) -> int:
    for index, char in enumerate(name):
        if unicodedata.combining(char) or not unicodedata.is_normalized("NFC", char):
            return index
    return 0  # pragma: no cover - some code point always differs
