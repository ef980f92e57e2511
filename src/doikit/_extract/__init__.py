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

The package's modules, by job (each private; this face re-exports what callers use):

- ``_pattern``: the candidate pattern, which decides the common DOI whole in the regex
  engine (C), and the character classes it is built from;
- ``_scan``: the loop over the pattern's matches (``_scan_python``; with the C accelerator
  ``_speedups.Scan`` runs it) and ``_decide``, which hands a candidate to a path;
- ``_quick``: the quick path, a short check of a candidate of the common shape;
- ``_walk``: the general walk, the authority (what stands before a start, spaced names);
- ``_run``: where the run a DOI can be ends, one rule per stop character;
- ``_make``: a walked candidate trimmed and read as a DOI; a chapter cut off by a blank;
- ``_url``: whether a DOI sits in a URL, and how much of a URL is the DOI;
- ``_stream``: files and chunks read in constant memory;
- ``_short``: shortDOIs, when asked for (``find_short``);
- ``_rules``: the index of the heuristics, one row per named rule, with its evidence and
  the paths that hold it (docs/extraction.md's tables are made from it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from doikit._doi import _SPEEDUPS, DOI
from doikit._extract._found import Found

# The package's parts that the tests, the benchmarks and the C scan's comments name as
# doikit._extract's, as when it was one module (so re-exported by name).
from doikit._extract._make import _completed as _completed
from doikit._extract._pattern import _CLOSERS as _CLOSERS
from doikit._extract._pattern import _OPENERS as _OPENERS
from doikit._extract._pattern import _TRAIL_CHARS as _TRAIL_CHARS
from doikit._extract._pattern import _candidates as _candidates
from doikit._extract._quick import _QUICK_HEADS as _QUICK_HEADS
from doikit._extract._quick import _c_quick_parts as _c_quick_parts
from doikit._extract._quick import _configure_c_quick
from doikit._extract._quick import _quick as _quick
from doikit._extract._run import _BREAK_THEN_DOT as _BREAK_THEN_DOT
from doikit._extract._run import _ENTITY as _ENTITY
from doikit._extract._run import _ESCAPED_TAG as _ESCAPED_TAG
from doikit._extract._run import _FIELD_AFTER as _FIELD_AFTER
from doikit._extract._run import _JOINS_AFTER as _JOINS_AFTER
from doikit._extract._run import _LINE_BREAK as _LINE_BREAK
from doikit._extract._run import _NEXT_DOI as _NEXT_DOI
from doikit._extract._run import _SICI_CHECK_BREAK as _SICI_CHECK_BREAK
from doikit._extract._run import _TAG as _TAG
from doikit._extract._run import _continues as _continues
from doikit._extract._run import _entity_char as _entity_char
from doikit._extract._run import _grow as _grow
from doikit._extract._scan import _decide as _decide
from doikit._extract._scan import _scan_python as _scan_python
from doikit._extract._scan import _walked as _walked
from doikit._extract._short import FoundShort, find_short
from doikit._extract._stream import _MAX_CARRY as _MAX_CARRY
from doikit._extract._stream import _TAIL as _TAIL
from doikit._extract._stream import _chunked as _chunked
from doikit._extract._stream import _chunks_of, _exact, _Readable
from doikit._extract._url import _GLUED_FILE_LAST as _GLUED_FILE_LAST
from doikit._extract._url import _LOOKBACK as _LOOKBACK
from doikit._extract._url import _url_name as _url_name
from doikit._extract._url import _url_plain as _url_plain
from doikit._extract._walk import _configure_c_walk
from doikit._extract._walk import _walk as _walk

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

__all__ = ["Found", "FoundShort", "find", "find_all", "find_short"]

# Both were defined here before the package was split, and pickles name them so.
Found.__module__ = FoundShort.__module__ = __name__


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


def _scan_chunk(
    buffer: str, scan_from: int, base: int, *, final: bool
) -> tuple[Iterator[Found], Callable[[], int]]:
    """_scan for _chunked: a DOI that may go on in the next chunk waits for it, unless the
    unfinished text has grown past _MAX_CARRY."""
    resume: list[int] = []  # _scan sets where the next scan must start
    final = final or len(buffer) - scan_from > _MAX_CARRY
    found = _scan(buffer, scan_from, None if final else resume, base)
    return found, lambda: resume[0] if resume else len(buffer)


if _SPEEDUPS is None:
    _scan = _scan_python
else:
    _Scan = _SPEEDUPS.Scan
    _configure_c_quick(_SPEEDUPS)
    _configure_c_walk(_SPEEDUPS)

    def _scan(text: str, position: int, resume: list[int] | None, base: int = 0) -> Iterator[Found]:
        """_scan_python's loop in C (_speedups.Scan), with the same answers."""
        # (the C loop reads the trailing punctuation and a URL candidate's odd last
        # characters from here, where the Python loop does)
        found = _Scan(
            _candidates().finditer, text, position, resume, base,
            DOI, Found, _decide, _walked, _TAIL, _TRAIL_CHARS, _GLUED_FILE_LAST,
        )  # fmt: skip
        return cast("Iterator[Found]", found)


def find(source: str | _Readable | Iterable[str]) -> Found | None:
    """The first DOI name in *source* (as for :func:`find_all`), or None.

    >>> find("no DOI here") is None
    True
    """
    return next(find_all(source), None)
