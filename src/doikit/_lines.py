"""Reading lines of bytes as text, one policy for every reader of files and standard input.

A UTF-8 byte order mark before the first line is dropped (Excel and Notepad write one);
``\\r\\n`` and ``\\n`` end lines alike; a line that is not UTF-8 is refused, saying which byte
(counted from 1) is the first that is not.

>>> decode_line(b"\\xef\\xbb\\xbf10.1000/1\\r\\n", first=True)
'10.1000/1\\r\\n'
>>> decode_line(b"10.1000/\\xff\\n", first=False)
Traceback (most recent call last):
...
doikit._lines.NotUTF8: byte 9 is not UTF-8
"""

from __future__ import annotations

from typing import Final

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
