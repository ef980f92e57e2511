"""The primitives of the native Handle protocol, and the one error every malformed byte raises.

Every integer is big-endian; a string or byte block is ``int4 length`` + bytes; a list is
``int4 count`` + items (handle-protocol.md §2). :class:`Reader` reads them from a slice of
a buffer and fails with :class:`HandleWireError` naming the field and the absolute byte
offset; it checks every length and count against the bytes left *before* it allocates, so
a length field claiming 2 GB costs nothing. The ``put_*`` writers append to a
:class:`bytearray` and refuse values a field cannot hold.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Final, TypeVar

from doikit.handle._values import HandleFormatError

if TYPE_CHECKING:
    from collections.abc import Callable

_T = TypeVar("_T")

#: The largest message (header + body + credential) CNRI's decoder accepts (``Common``).
MAX_MESSAGE_LENGTH: Final = 262144
#: The most items CNRI reads in one list (``MAX_ARRAY_SIZE``).
MAX_ARRAY_SIZE: Final = 1048576
#: The most values, and the longest handle, in a resolution or referral answer.
MAX_HANDLE_VALUES: Final = 2048
MAX_HANDLE_LENGTH: Final = 2048

_U8: Final = struct.Struct(">B")
_I16: Final = struct.Struct(">h")
_U16: Final = struct.Struct(">H")
_I32: Final = struct.Struct(">i")
_U32: Final = struct.Struct(">I")
_I64: Final = struct.Struct(">q")
_RANGES: Final = {
    _U8: "0 to 255",
    _I16: "-32768 to 32767",
    _U16: "0 to 65535",
    _I32: "-2147483648 to 2147483647",
    _U32: "0 to 4294967295",
    _I64: "a signed 64-bit integer",
}


class HandleWireError(HandleFormatError):
    """Bytes that are not a native Handle message (or value layout), or a message that cannot
    be encoded. ``.offset`` is the byte where the input goes wrong, counted from the start of
    the bytes given (``None`` when encoding); ``.field`` names the field.

    >>> Reader(b"\\x00\\x00\\x00\\x09abc").text("handle")
    Traceback (most recent call last):
      ...
    doikit.handle._wire_primitives.HandleWireError: byte 0 (handle): length 9 runs past the end (3 bytes left)
    """  # noqa: E501 - a doctest's output is one line

    def __init__(self, detail: str, offset: int | None = None, field: str = "") -> None:
        self.offset = offset
        self.field = field
        where = field if offset is None else f"byte {offset}" + (f" ({field})" if field else "")
        super().__init__(where, detail)

    def __reduce__(self) -> tuple[type[HandleWireError], tuple[str, int | None, str]]:
        return (type(self), (self.detail, self.offset, self.field))


class Reader:
    """Reads primitives from ``data[pos:end]``; offsets in errors are positions in *data*."""

    __slots__ = ("data", "end", "pos")

    def __init__(self, data: bytes, pos: int = 0, end: int | None = None) -> None:
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end

    @property
    def left(self) -> int:
        """How many bytes are left to read."""
        return self.end - self.pos

    def fail(self, field: str, detail: str, at: int | None = None) -> HandleWireError:
        """The error for *field* at *at* (default: the current position)."""
        return HandleWireError(detail, offset=self.pos if at is None else at, field=field)

    def _take(self, size: int, field: str) -> int:
        pos = self.pos
        if self.end - pos < size:
            noun = "byte" if size == 1 else "bytes"
            raise self.fail(field, f"needs {size} {noun}, {self.end - pos} left")
        self.pos = pos + size
        return pos

    def u8(self, field: str) -> int:
        """One unsigned byte."""
        return self.data[self._take(1, field)]

    def i16(self, field: str) -> int:
        """A signed int2."""
        return int(_I16.unpack_from(self.data, self._take(2, field))[0])

    def u16(self, field: str) -> int:
        """An unsigned int2."""
        return int(_U16.unpack_from(self.data, self._take(2, field))[0])

    def i32(self, field: str) -> int:
        """A signed int4 (a Java ``int``)."""
        return int(_I32.unpack_from(self.data, self._take(4, field))[0])

    def u32(self, field: str) -> int:
        """An unsigned int4 (ids, flags, times)."""
        return int(_U32.unpack_from(self.data, self._take(4, field))[0])

    def i64(self, field: str) -> int:
        """A signed int8."""
        return int(_I64.unpack_from(self.data, self._take(8, field))[0])

    def raw(self, size: int, field: str) -> bytes:
        """*size* bytes as they are."""
        pos = self._take(size, field)
        return self.data[pos : pos + size]

    def length(self, field: str, unit: int = 1, limit: int | None = None) -> int:
        """An int4 length or count of items of at least *unit* bytes each, checked against
        the bytes left (and *limit*) before anything is read or allocated."""
        at = self.pos
        n = self.i32(field)
        if n < 0:
            raise self.fail(field, f"length {n} is negative", at)
        if limit is not None and n > limit:
            raise self.fail(field, f"length {n} is over the limit of {limit}", at)
        if n * unit > self.end - self.pos:
            kind = "length" if unit == 1 else "count"
            raise self.fail(
                field, f"{kind} {n} runs past the end ({self.end - self.pos} bytes left)", at
            )
        return n

    def block(self, field: str, limit: int | None = None) -> bytes:
        """A byte block: int4 length + bytes."""
        n = self.length(field, 1, limit)
        pos = self.pos
        self.pos = pos + n
        return self.data[pos : pos + n]

    def text(self, field: str, limit: int | None = None) -> str:
        """A UTF-8 string: int4 length + bytes, which must be UTF-8."""
        n = self.length(field, 1, limit)
        pos = self.pos
        self.pos = pos + n
        try:
            return self.data[pos : pos + n].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.fail(field, "is not UTF-8", pos + exc.start) from None

    def count(self, field: str, unit: int, limit: int = MAX_ARRAY_SIZE) -> int:
        """A list's int4 count, each item at least *unit* bytes long."""
        return self.length(field, unit, limit)

    def ints(self, field: str) -> tuple[int, ...]:
        """A list of int4: count + items."""
        n = self.count(field, 4)
        pos = self.pos
        self.pos = pos + 4 * n
        return struct.unpack_from(f">{n}i", self.data, pos)

    def texts(self, field: str) -> tuple[str, ...]:
        """A list of UTF-8 strings: count + strings."""
        n = self.count(field, 4)
        return tuple(self.text(f"{field}[{i}]") for i in range(n))

    def done(self, what: str) -> None:
        """Fail unless every byte up to the end was read."""
        left = self.end - self.pos
        if left:
            count = "1 byte follows" if left == 1 else f"{left} bytes follow"
            raise self.fail(what, f"{count} the end of the {what}")


def _put(out: bytearray, fmt: struct.Struct, value: int, field: str) -> None:
    try:
        out += fmt.pack(value)
    except struct.error:
        raise HandleWireError(f"{value!r} is not in {_RANGES[fmt]}", field=field) from None


def put_u8(out: bytearray, value: int, field: str) -> None:
    """Append one unsigned byte."""
    _put(out, _U8, value, field)


def put_i16(out: bytearray, value: int, field: str) -> None:
    """Append a signed int2."""
    _put(out, _I16, value, field)


def put_u16(out: bytearray, value: int, field: str) -> None:
    """Append an unsigned int2."""
    _put(out, _U16, value, field)


def put_i32(out: bytearray, value: int, field: str) -> None:
    """Append a signed int4."""
    _put(out, _I32, value, field)


def put_u32(out: bytearray, value: int, field: str) -> None:
    """Append an unsigned int4."""
    _put(out, _U32, value, field)


def put_i64(out: bytearray, value: int, field: str) -> None:
    """Append a signed int8."""
    _put(out, _I64, value, field)


def put_block(out: bytearray, value: bytes, field: str) -> None:
    """Append a byte block: int4 length + bytes."""
    put_i32(out, len(value), field)
    out += value


def encode_text(value: str, field: str) -> bytes:
    """*value* as UTF-8; a lone surrogate has no UTF-8 form and is refused."""
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise HandleWireError(
            f"U+{ord(value[exc.start]):04X} at position {exc.start} is a lone surrogate",
            field=field,
        ) from None


def put_text(out: bytearray, value: str, field: str) -> None:
    """Append a UTF-8 string: int4 length + bytes."""
    put_block(out, encode_text(value, field), field)


def put_ints(out: bytearray, values: tuple[int, ...], field: str) -> None:
    """Append a list of int4."""
    put_i32(out, len(values), field)
    for i, value in enumerate(values):
        put_i32(out, value, f"{field}[{i}]")


def put_texts(out: bytearray, values: tuple[str, ...], field: str) -> None:
    """Append a list of UTF-8 strings."""
    put_i32(out, len(values), field)
    for i, value in enumerate(values):
        put_text(out, value, f"{field}[{i}]")


def read_all(data: bytes, read: Callable[[Reader], _T], what: str) -> _T:
    """``read`` over the whole of *data*, which must be used up."""
    r = Reader(data)
    out = read(r)
    r.done(what)
    return out
