"""Hyphens a PDF's text layer lost, put back where the identifier inside a DOI shows them.

A text layer joins the lines a typesetter broke, and where the break fell at a hyphen of
the DOI, the hyphen is often lost with the break: ``10.1007/978-3540-85064-9_8`` for
``10.1007/978-3-540-85064-9_8``, ``10.1002/(SICI)1096987X(…`` for ``…1096-987X(…``. Nothing
in the text says a hyphen went missing, but some publishers build their names from an
identifier whose hyphens are fixed: an ISBN (hyphenated by the ranges of the International
ISBN Agency), an ISSN (``NNNN-NNNC``, in a SICI or an Elsevier PII), Springer Nature's
article ids (``s41586-020-2649-2``), the APA's book numbers (``10762-000``). A name whose
identifier lacks exactly one of its hyphens, and whose check digit holds where it has one,
gets that hyphen back; every other name is left as written. None of the 5,041 labeled DOIs
of the three corpora is changed by :func:`mended` (a test holds it so).

>>> mended("10.1007/978-3540-85064-9_8")
'10.1007/978-3-540-85064-9_8'
>>> mended("10.1002/(SICI)1096987X(199803)19:4<377::AIDJCC1>3.0.CO;2-P")
'10.1002/(SICI)1096-987X(199803)19:4<377::AID-JCC1>3.0.CO;2-P'
>>> mended("10.1016/S0049237X(09)70189-2"), mended("10.1007/s00249011-0700-9")
('10.1016/S0049-237X(09)70189-2', '10.1007/s00249-011-0700-9')
>>> mended("10.1037/10762000")
'10.1037/10762-000'
>>> mended("10.1007/978-3540-85064-8_8")  # the check digit fails: left as written
'10.1007/978-3540-85064-8_8'
"""

from __future__ import annotations

import functools
import re
from typing import Final

from doikit._isbn_ranges import RANGES

# The registrants whose names carry an identifier of their own (the shapes below).
_WILEY: Final = "10.1002"
_SPRINGER: Final = "10.1007"
_SPRINGER_PREFIXES: Final = frozenset({_SPRINGER, "10.1038", "10.1186", "10.1140"})
_APA: Final = "10.1037"


def _behind(prefixes: frozenset[str], first: str) -> str:
    """A look-behind, from a suffix's *first* character, for a registrant of *prefixes*:
    at the registrant's last digit first (one class, the cheapest), then at its code."""
    codes = sorted(prefix[3:] for prefix in prefixes)
    last = sorted({code[-1] for code in codes})
    digit = last[0] if len(last) == 1 else f"[{''.join(last)}]"
    return rf"(?<={digit}/{first})(?<=(?:{'|'.join(codes)})/{first})"


# A SICI's contribution segment and check character a hyphen short, for the extractor's
# candidate pattern, which leaves such a SICI undecided where it reads them (after its '<',
# after its 'CO;'): 'AID' then a letter ('<377::AIDJCC1>'), '2' then the check character.
AID_SHORT: Final = r"[0-9]++::AID[A-Z]"
CHECK_SHORT: Final = r"2[0-9A-Z#](?![-0-9A-Za-z])"
# The names mended() may change, for the extractor's candidate pattern, at a suffix's
# start: it decides none of them alone (nor a Springer book's name followed by a blank and
# a chapter, which _extract._completed reads) and leaves them to _quick and the walk. A
# test holds that the pattern decides no name mended() changes (with AID_SHORT and
# CHECK_SHORT). The pattern tries this at every candidate, and each branch costs (a first,
# plain list of the shapes took a quarter of the scan's speed; this one 6%), so each branch
# starts with a character or a class the engine checks before it enters, and a
# registrant's own shapes look behind at the registrant (_behind).
MENDABLE_PREFIXED: Final = (
    rf"[0-9]{_behind(frozenset({_SPRINGER, _APA, _WILEY}), '[0-9]')}(?:"
    # an ISBN-10 a hyphen short, its check character after the last hyphen or not
    rf"(?<={_SPRINGER[3:]}/[0-9])[0-9]*+(?:-[0-9]++-(?:[0-9]++[Xx]?|[Xx])(?![0-9A-Za-z-])"
    r"|(?:-[0-9]++){2,3}-[0-9Xx] [0-9]{1,4}(?:[.,;)\]]|[ \t]*+(?:\r?\n|\Z)))"  # a chapter
    rf"|(?<={_APA[3:]}/[0-9])[0-9]{{7}}(?:[0-9]{{2}})?(?![0-9])"  # an APA book
    # a Wiley SICI: its 'AID' or check character may have lost its hyphen anywhere in it
    rf"|(?<={_WILEY[3:]}/[0-9])[0-9]{{3}}-[0-9]{{3}}[0-9X]\("
    r")"
    # a Springer Nature article id a hyphen short (its check character a letter or digit)
    rf"|s{_behind(_SPRINGER_PREFIXES, 's')}"
    r"[0-9]{5}(?:[0-9]{3}-|-[0-9]{7}|-[0-9]{3}-[0-9]{4}[0-9A-Za-z])"
)
MENDABLE_SUFFIX: Final = (
    r"97[89][0-9]*+-[0-9]++-[0-9]++-[0-9]++(?![0-9-])"  # an ISBN-13 a hyphen short
    r"|S[0-9]{7}[0-9X]\("  # a PII's ISSN without its hyphen
    r"|\(SICI\)[0-9]{4}-?[0-9]{3}[0-9X]\("  # a SICI: its ISSN's, 'AID''s or check's hyphen
)

# --- ISBN -------------------------------------------------------------------------------------
# The ranges of the International ISBN Agency, generated from its range file (_isbn_ranges:
# scripts/update_isbn_ranges.py names the file and its date); an ISBN in no range the file
# knows (a range assigned later) is left as written.


@functools.cache
def _ranges(key: str) -> tuple[tuple[str, str], ...]:
    """The (low, high) bounds of the elements after *key* (a prefix, or prefix and group)."""
    table = RANGES.get(key, "")
    return tuple((low, high) for low, _, high in (b.partition("-") for b in table.split(",") if b))


def _element(digits: str, key: str) -> int:
    """The length of the element *digits* start with, by the ranges of *key*; 0 if none."""
    for low, high in _ranges(key):
        if low <= digits[: len(low)] <= high:
            return len(low)
    return 0


def _isbn_cuts(digits: str) -> tuple[int, ...]:
    """Where an ISBN-13's *digits* take their hyphens (after the prefix, group, registrant
    and publication), or () when its ranges are not known here."""
    prefix = digits[:3]
    group = _element(digits[3:], prefix)
    if not group:
        return ()
    registrant = _element(digits[3 + group :], digits[: 3 + group])
    if not registrant:
        return ()
    return (3, 3 + group, 3 + group + registrant, 12)


def _isbn13_checks(digits: str) -> bool:
    return sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(digits)) % 10 == 0


def _isbn10_checks(digits: str) -> bool:
    total = sum(int(d) * (10 - i) for i, d in enumerate(digits[:9]))
    check = 10 if digits[9] in "Xx" else int(digits[9])
    return (total + check) % 11 == 0


# An ISBN as the start of a suffix (Springer's books and chapters, 10.1007/978-3-540-…_8),
# with a chapter, entry or part after it ('_8'), or nothing.
_ISBN_SUFFIX: Final = re.compile(r"([0-9][0-9-]{8,15}[0-9Xx])(_.*)?\Z", re.ASCII)


def _hyphenated(digits: str) -> str | None:
    """The ISBN of *digits* (13 or 10, its check digit holding) hyphenated by its ranges."""
    if not digits.isascii():
        return None  # (str.isdigit() takes digits int() does not read, '²' among them)
    if len(digits) == 13 and digits.isdigit() and _isbn13_checks(digits):
        cuts = _isbn_cuts(digits)
    elif (
        len(digits) == 10
        and digits[:9].isdigit()
        and (digits[9].isdigit() or digits[9] in "Xx")  # (the check character)
        and _isbn10_checks(digits)
    ):
        cuts = tuple(cut - 3 for cut in _isbn_cuts("978" + digits)[1:])
    else:
        return None
    if not cuts:
        return None
    return "-".join(digits[a:b] for a, b in zip((0, *cuts), (*cuts, len(digits)), strict=True))


# The hyphens of an ISBN hyphenated whole, by its number of digits (_hyphenated).
_ISBN_HYPHENS: Final = {13: 4, 10: 3}


def _mend_isbn(isbn: str) -> str | None:
    """*isbn* (digits and hyphens) with the one hyphen it lacks, or None."""
    digits = isbn.replace("-", "")
    if isbn.count("-") + 1 != _ISBN_HYPHENS.get(len(digits)):
        return None  # not one hyphen short (most: whole), whatever its ranges say
    whole = _hyphenated(digits)
    if whole is None or whole.count("-") != isbn.count("-") + 1:
        return None
    # the written hyphens must be the whole's but one: drop each of the whole's in turn
    at = 0
    while (at := whole.find("-", at) + 1) > 0:
        if whole[: at - 1] + whole[at:] == isbn:
            return whole
    return None


# --- ISSN (in a SICI, an Elsevier PII) ----------------------------------------------------
# An ISSN written without its hyphen where a name holds it hyphenated, before the '(' of a
# date: behind 'S' in an Elsevier PII (10.1016/S0049-237X(09)70189-2), behind '(SICI)' in
# a Wiley SICI. (A Wiley SICI without '(SICI)', 10.1002/1521-3951(200103)…, gets its 'AID-'
# and check character's hyphens only: no tuning snippet lost its ISSN's.)
_ISSN_UNHYPHENATED: Final = re.compile(r"(\(SICI\)|S)([0-9]{7}[0-9X])(?=\()", re.ASCII)
# A SICI: its ISSN and the '(' of its date ('(SICI)' in Wiley's names).
_SICI_START: Final = re.compile(r"(?:\(SICI\))?[0-9]{4}-[0-9]{3}[0-9X]\(", re.ASCII)
# A SICI's contribution segment ('<377::AID-JCC1>'): 'AID' takes a hyphen.
_AID_UNHYPHENATED: Final = re.compile(r"(?<=[0-9]::AID)(?=[A-Z])", re.ASCII)
# Its last element: the SICI's version ('2') and, after a hyphen, the check character.
_CHECK_UNHYPHENATED: Final = re.compile(r"(?<=>[0-9]\.[0-9]\.CO;2)(?=[0-9A-Z#]\Z)", re.ASCII)


def _issn_checks(issn: str) -> bool:
    total = sum(int(d) * (8 - i) for i, d in enumerate(issn[:7]))
    return (-total % 11) == (10 if issn[7] == "X" else int(issn[7]))


# --- The American Psychological Association's books -----------------------------------------
# 10.1037/10762-000, 10.1037/0000165-000: the book (5 or 7 digits) and a chapter (3 digits,
# 000 for the whole book). APA's other names start with a letter or an ISSN
# (10.1037/a0012345, 10.1037/0022-3514.53.5.1024).
_APA_BOOK_LOST_HYPHEN: Final = re.compile(r"(?:[0-9]{5}|0000[0-9]{3})[0-9]{3}\Z", re.ASCII)


# --- Springer Nature's article ids ----------------------------------------------------------
# 's', the journal (5 digits), the year's code (3), the article (4 or 5), a check character:
# s00249-011-0700-9, s41467-019-13973-7. With one hyphen lost, which one is plain from
# the lengths of the other elements.
_ARTICLE_LOST_HYPHEN: Final = re.compile(
    r"s([0-9]{5})-?([0-9]{3})-?([0-9]{4,5})-?([0-9A-Za-z])\Z", re.ASCII
)


def is_springer_book(name: str) -> bool:
    """Whether *name* is a Springer book's: 10.1007/ and an ISBN, hyphenated as its ranges
    say, with nothing after (a chapter's '_' may have been lost: _extract._completed).

    >>> is_springer_book("10.1007/978-3-319-21668-3")
    True
    >>> is_springer_book("10.1007/978-3-319-21668-3_9")
    False
    >>> is_springer_book("10.1628/978-3-16-157012-4")  # (Mohr Siebeck's)
    False
    """
    prefix, _, isbn = name.partition("/")
    return prefix == _SPRINGER and "-" in isbn and _hyphenated(isbn.replace("-", "")) == isbn


_MENDED_FIRST: Final = "(Ss0123456789"
# Of those, what mended() reads: a suffix that starts with one of _MENDED_ANY, an ISBN's
# start (_ISBN_STARTS), or a name of these registrants; it leaves every other name as it
# is (the C quick path, _c/python/quick.c, asks it only about these).
_MENDED_ANY: Final = "(S"
_ISBN_STARTS: Final = ("978", "979")
_MENDED_PREFIXES: Final = frozenset({_WILEY, _APA, *_SPRINGER_PREFIXES})
# The registrants whose names with a digit first mended() reads as an ISSN's or an APA
# book's, not an ISBN's; the hyphens a Springer Nature article id a hyphen short holds.
_MENDED_NOT_ISBN: Final = (_WILEY, _APA)
_ARTICLE_HYPHENS: Final = 2


def mended(name: str) -> str:
    """*name* with the hyphen its identifier lost put back (see the module), else *name*."""
    slash = name.find("/")
    if slash < 0:
        return name  # (no suffix: a name cut back to its prefix, '10.10020/.' as '10.10020')
    first = name[slash + 1 : slash + 2]
    if first not in _MENDED_FIRST:
        return name  # (most names: a letter first)
    prefix, suffix = name[:slash], name[slash + 1 :]
    if first in _MENDED_ANY or (first.isdigit() and prefix == _WILEY):
        return f"{prefix}/{_mend_issn(suffix)}"
    if first == "s":
        article = _ARTICLE_LOST_HYPHEN.match(suffix)
        if (
            article is not None
            and prefix in _SPRINGER_PREFIXES
            and suffix.count("-") == _ARTICLE_HYPHENS
        ):
            return f"{prefix}/s{'-'.join(article.groups())}"
    elif prefix == _APA:
        if _APA_BOOK_LOST_HYPHEN.match(suffix):
            return f"{prefix}/{suffix[:-3]}-{suffix[-3:]}"
    elif suffix.startswith(_ISBN_STARTS) or (first.isdigit() and prefix == _SPRINGER):
        isbn = _ISBN_SUFFIX.match(suffix)
        whole = _mend_isbn(isbn[1]) if isbn is not None and "-" in isbn[1] else None
        if whole is not None:
            return f"{prefix}/{whole}{isbn[2] or ''}"  # type: ignore[index]
    return name


def _mend_issn(suffix: str) -> str:
    """A SICI's or a PII's *suffix* with the hyphens it lacks (its ISSN's when the check
    digit holds; a SICI's 'AID-' and check character's)."""
    issn = _ISSN_UNHYPHENATED.match(suffix)
    if issn is not None and _issn_checks(issn[2]):
        suffix = f"{issn[1]}{issn[2][:4]}-{issn[2][4:]}{suffix[issn.end() :]}"
    if "::AID" not in suffix or not _SICI_START.match(suffix):
        return suffix
    return _CHECK_UNHYPHENATED.sub("-", _AID_UNHYPHENATED.sub("-", suffix))
