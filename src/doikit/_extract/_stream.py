"""Sources read in constant memory: a text file or str chunks, each an exact str, run
through a scan with what it leaves for the next chunk (_chunked)."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Final, Protocol, cast

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class _Readable(Protocol):
    def read(self, size: int, /) -> str: ...


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
