"""Reading lines of bytes as text, one policy for every reader of files and standard input.

A UTF-8 byte order mark before the first line is dropped (Excel and Notepad write one);
``\\r\\n`` and ``\\n`` end lines alike; a line that is not UTF-8 is refused, saying which byte
(counted from 1) is the first that is not. Memory stays bounded whatever the input: a line
of names longer than :data:`MAX_LINE` is read past (:func:`bounded_lines`), and text to
search is read in blocks of lines, a long line in pieces (:class:`TextBlocks`).

>>> decode_line(b"\\xef\\xbb\\xbf10.1000/1\\r\\n", first=True)
'10.1000/1\\r\\n'
>>> decode_line(b"10.1000/\\xff\\n", first=False)
Traceback (most recent call last):
...
doikit._lines.NotUTF8: byte 9 is not UTF-8
"""

from __future__ import annotations

import re
from typing import IO, TYPE_CHECKING, Final, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterator

BOM: Final = b"\xef\xbb\xbf"


class NotUTF8(ValueError):  # noqa: N818 - read as "the line is not UTF-8"
    """A line whose bytes are not UTF-8; ``byte`` is the first bad one, counted from 1."""

    def __init__(self, byte: int) -> None:
        super().__init__(f"byte {byte} is not UTF-8")
        self.byte = byte


def decode_line(raw: bytes, *, first: bool) -> str:
    """*raw* as text, its line ending kept; a BOM is dropped when it is the *first* line.

    :raises NotUTF8: when the bytes are not UTF-8.
    """
    skipped = len(BOM) if first and raw.startswith(BOM) else 0
    try:
        return raw[skipped:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotUTF8(skipped + exc.start + 1) from None


def without_ending(text: str) -> str:
    """*text* without one ``\\n`` or ``\\r\\n`` at its end.

    >>> without_ending("a\\r\\n"), without_ending("a\\n"), without_ending("a")
    ('a', 'a', 'a')
    """
    return text.removesuffix("\n").removesuffix("\r")


#: The longest line taken as one name, in bytes (64 KiB): a name is never near it, and a
#: line past it (500 MB without a line break) is skipped in constant memory.
MAX_LINE: Final = 1 << 16


class LineTooLong(ValueError):  # noqa: N818 - read as "the line is too long"
    """A line longer than the limit; ``size`` is its length in bytes."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{size:,} bytes, longer than {limit:,}, the limit for one line: not read")
        self.size = size


def bounded_lines(stream: IO[bytes], limit: int = MAX_LINE) -> Iterator[bytes | LineTooLong]:
    """The lines of *stream*, each with its ending; one longer than *limit* bytes is read
    past in pieces and given as :class:`LineTooLong`, so memory stays bounded (unless its
    first *limit* bytes hold a NUL byte: binary data, given as read so far).

    >>> import io
    >>> lines = bounded_lines(io.BytesIO(b"ab\\nabcdef\\nc"), 4)
    >>> [str(x) if isinstance(x, LineTooLong) else x for x in lines]
    [b'ab\\n', '7 bytes, longer than 4, the limit for one line: not read', b'c']
    """
    while raw := stream.readline(limit + 1):
        if len(raw) <= limit or raw.endswith(b"\n") or b"\0" in raw:
            yield raw  # (a NUL byte: binary data, given as read so far for the caller to stop)
            continue
        size = len(raw)
        while raw and not raw.endswith(b"\n"):
            raw = stream.readline(1 << 16)
            size += len(raw)
        yield LineTooLong(size, limit)


class Readable(Protocol):
    """A binary file to read (a file, stdin's buffer, a :class:`gzip.GzipFile`)."""

    def read(self, size: int = -1, /) -> bytes: ...


# A line (or the piece of one that a block holds) with a byte that is not UTF-8, read with
# surrogateescape: from its first such byte to its end.
_BAD_LINE: Final = re.compile("[\udc80-\udcff][^\n]*")


class TextBlocks:
    """The text of a byte stream in blocks of whole lines, in constant memory, read as
    :func:`decode_line` reads lines (a BOM before the first dropped; line endings kept).

    A block holds the lines that end in the bytes read at once (at most *size*); a line
    longer than *longest* bytes comes in pieces. Bytes that are not UTF-8 become lone
    surrogates (surrogateescape), which end a DOI, so the rest of their line is still
    read; ``bad_lines`` counts the lines that hold such bytes and ``first_bad`` is the
    first of them: (line number, :class:`NotUTF8`). ``read`` counts the bytes read.

    >>> import io
    >>> blocks = TextBlocks(io.BytesIO(b"\\xef\\xbb\\xbfa\\nb\\xff\\n\\xfe\\nc"))
    >>> "".join(blocks), blocks.bad_lines, blocks.first_bad
    ('a\\nb\\udcff\\n\\udcfe\\nc', 2, (2, NotUTF8('byte 2 is not UTF-8')))
    """

    def __init__(self, stream: Readable, *, size: int = 1 << 16, longest: int = 1 << 20) -> None:
        self._stream = stream
        self._size = size
        self._longest = longest
        self.read = 0
        self.bad_lines = 0
        self.first_bad: tuple[int, NotUTF8] | None = None
        self._line = 1  # the number of the line the next block starts in
        self._into_line = 0  # bytes of that line in earlier blocks (a long line's pieces)
        self._open_bad = False  # that line's earlier pieces held a byte not UTF-8

    def __iter__(self) -> Iterator[str]:
        read = getattr(self._stream, "read1", self._stream.read)
        carry = b""
        while len(carry) < len(BOM) and (chunk := read(self._size)):
            carry += chunk
        if carry.startswith(BOM):
            carry = carry[len(BOM) :]
            self._into_line = len(BOM)  # counted in line 1's bytes, as decode_line counts
        self.read = len(carry)
        while True:
            end = carry.rfind(b"\n") + 1
            if end:
                yield self._decoded(carry[:end])
                carry = carry[end:]
            while len(carry) > self._longest:
                end = _utf8_boundary(carry, self._longest)
                yield self._decoded(carry[:end])
                carry = carry[end:]
            chunk = read(self._size)
            if not chunk:
                break
            self.read += len(chunk)
            carry += chunk
        if carry:
            yield self._decoded(carry)

    def _decoded(self, raw: bytes) -> str:
        try:
            text = raw.decode("utf-8")
            tail_bad = False
        except UnicodeDecodeError as exc:
            text = raw.decode("utf-8", "surrogateescape")
            self._note_bad(raw, text, exc.start)
            tail_bad = _BAD_LINE.search(text, text.rfind("\n") + 1) is not None
        breaks = raw.count(b"\n")
        if breaks:
            self._line += breaks
            self._into_line = len(raw) - raw.rfind(b"\n") - 1
            self._open_bad = tail_bad
        else:
            self._into_line += len(raw)
            self._open_bad = self._open_bad or tail_bad
        return text

    def _note_bad(self, raw: bytes, text: str, first: int) -> None:
        """Count the lines of a block that hold bytes not UTF-8 (the line it starts in once,
        though earlier pieces of it held some too); note the first."""
        newline = text.find("\n")
        head_bad = _BAD_LINE.search(text, 0, len(text) if newline < 0 else newline) is not None
        self.bad_lines += len(_BAD_LINE.findall(text)) - (self._open_bad and head_bad)
        if self.first_bad is None:
            line_start = raw.rfind(b"\n", 0, first) + 1
            before = self._into_line if line_start == 0 else 0
            line = self._line + raw.count(b"\n", 0, first)
            self.first_bad = (line, NotUTF8(before + first - line_start + 1))


def _utf8_boundary(raw: bytes, limit: int) -> int:
    """An end at most *limit* bytes into *raw* (which is longer) that cuts no UTF-8
    sequence: before the lead byte of one that would be cut."""
    for end in range(limit, limit - 4, -1):
        if not 0x80 <= raw[end] < 0xC0:  # not a continuation byte
            return end
    return limit
