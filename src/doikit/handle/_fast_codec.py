"""The native client's express codec: the one datagram of a resolution request, made from a
template the codec wrote, and the common one-packet answer read straight into a
:class:`~doikit.handle.HandleRecord`. Anything else goes through the full codec
(:mod:`doikit.handle._wire`); ``tests/test_native_resolver.py`` holds both equal.

A resolution request is the envelope (its request id at bytes 8-11, the message length at
16-19), the header (the expiration at 36-39, the body length at 40-43), then the body,
whose first field is the handle (handle-protocol.md §3, §4, §7.1); the indexes, the types
and the empty credential after it are the template's.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import TYPE_CHECKING, Final

from doikit._doi import _SPEEDUPS
from doikit.handle._native_values import TTL_RELATIVE, data_from_wire
from doikit.handle._values import Data, HandleRecord, HandleValue, Reference
from doikit.handle._wire import UDP_PAYLOAD, encode
from doikit.handle._wire_codes import OC_RESOLUTION, OpFlag
from doikit.handle._wire_messages import ResolutionRequest
from doikit.handle._wire_primitives import MAX_ARRAY_SIZE, MAX_HANDLE_LENGTH, MAX_HANDLE_VALUES

if TYPE_CHECKING:
    from collections.abc import Callable

    from doikit.handle._exchange import Express

# envelope (20) and header (24): major minor flags suggestMinor session request sequence
# length | op rc opFlags serial recursion reserved expiration bodyLength
_HEAD: Final = struct.Struct(">BBBBIIIiIIIhBBII")
_VALUE: Final = struct.Struct(">iiBiBi")  # index timestamp ttlType ttl permissions typeLength
_I32: Final = struct.Struct(">i")
_U32S: Final = struct.Struct(">III")
_PERMISSIONS: Final = tuple(format(bits, "04b") for bits in range(16))
_RC_SUCCESS: Final = 1
# What the C reader checks, handed over once (its order is answer.c's)
_CODES: Final = (
    OC_RESOLUTION, _RC_SUCCESS, int(OpFlag.REQUEST_DIGEST), TTL_RELATIVE,
    MAX_HANDLE_LENGTH, MAX_HANDLE_VALUES, MAX_ARRAY_SIZE,
)  # fmt: skip
_TEMPLATES: Final = 64  # (types, indexes, flags, version) kept; a batch uses one


class RequestTemplates:
    """Resolution requests as bytes: the codec encodes one with an empty handle per shape
    (types, indexes, flags, version), and each request splices in its handle, id and
    expiration."""

    def __init__(self) -> None:
        self._made: dict[tuple[object, ...], tuple[bytes, bytes, bytes, int, int]] = {}

    def request(
        self,
        handle: str,
        types: tuple[str, ...],
        indexes: tuple[int, ...],
        express: Express,
        request_id: int,
    ) -> bytes | None:
        """The one datagram of the request *express* starts, or ``None`` when it takes
        more than one datagram or the codec must say what is wrong with it."""
        shape = (types, indexes, express.op_flags, express.version)
        made = self._made.get(shape)
        if made is None:
            if len(self._made) >= _TEMPLATES:
                self._made.clear()
            empty = ResolutionRequest(
                "", indexes, types, op_flags=express.op_flags, version=express.version
            )
            made = self._made[shape] = _template(encode(empty))
        head, middle, tail, length, body = made
        try:
            name = handle.encode("utf-8")
        except UnicodeEncodeError:
            return None
        n = len(name)
        if length + n > UDP_PAYLOAD:
            return None
        return b"".join(
            (
                head,
                _U32S.pack(request_id, 0, length + n),  # request id, sequence, length
                middle,
                _U32S.pack(express.expiration, body + n, n),  # expiration, body length, n
                name,
                tail,
            )
        )


def _template(empty: bytes) -> tuple[bytes, bytes, bytes, int, int]:
    length = int.from_bytes(empty[16:20], "big")
    body = int.from_bytes(empty[40:44], "big")
    return empty[:8], empty[20:36], empty[48:], length, body


def read_answer(unit: bytes) -> HandleRecord | None:
    """The record a plain resolution answer carries (op 1, rc 1, no request digest, no
    credential, no encryption), as ``HandleRecord(m.handle, m.values)`` of ``m =
    decode(unit)``; ``None`` for any other message, or one the codec must judge. Read by
    the C accelerator when it is built (:func:`_read` is the reference)."""
    try:
        return _READER(unit)
    except (IndexError, struct.error, UnicodeDecodeError):
        return None


def _accelerated() -> Callable[[bytes], HandleRecord | None] | None:
    """The C reader of :func:`_read`, configured with the classes it builds; ``None`` in
    the pure-Python build, or when the classes are not frozen slots dataclasses without
    ``__post_init__`` (the C reader writes their slots as their ``__init__`` would)."""
    speedups = _SPEEDUPS
    if speedups is None:
        return None
    made = (HandleValue, HandleRecord, Reference)
    if any(hasattr(cls, "__post_init__") for cls in made):
        return None
    names = [tuple(field.name for field in dataclasses.fields(cls)) for cls in made]
    speedups.configure_answers(
        HandleValue, names[0], HandleRecord, names[1], Reference, names[2],
        data_from_wire, _PERMISSIONS, _CODES,
    )  # fmt: skip
    reader: Callable[[bytes], HandleRecord | None] = speedups.read_answer
    return reader


def _read(unit: bytes) -> HandleRecord | None:
    size = len(unit)
    (_, _, flags, _, _, _, sequence, length, op, rc, op_flags, _, _, reserved, _, body) = (
        _HEAD.unpack_from(unit)
    )
    if (
        flags & ~0x03  # encrypted, compressed, truncated, reserved: the codec's
        or sequence
        or length != size - 20
        or op != OC_RESOLUTION
        or rc != _RC_SUCCESS
        or op_flags & OpFlag.REQUEST_DIGEST
        or reserved
        or body > size - 44
    ):
        return None
    end = 44 + body
    n = _I32.unpack_from(unit, 44)[0]
    at = 48 + n
    if not 0 <= n <= MAX_HANDLE_LENGTH or at + 4 > end:
        return None
    handle = unit[48:at].decode("utf-8")
    count = _I32.unpack_from(unit, at)[0]
    at += 4
    if not 0 <= count <= MAX_HANDLE_VALUES or count * 26 > end - at:
        return None
    values = []
    for _ in range(count):
        if at + 18 > end:
            return None
        index, timestamp, ttl_type, ttl, perms, n = _VALUE.unpack_from(unit, at)
        at += 18
        if ttl_type != TTL_RELATIVE or perms > 0x0F or n < 0 or at + n + 4 > end:
            return None  # an absolute TTL is the codec's to convert
        kind = unit[at : at + n].decode("utf-8")
        at += n
        n = _I32.unpack_from(unit, at)[0]
        at += 4
        if n < 0 or at + n + 4 > end:
            return None
        data: Data = unit[at : at + n]
        at += n
        if kind[:3] in ("HS_", "hs_", "Hs_", "hS_"):  # every structured type is HS_...
            data = data_from_wire(kind, unit[at - n : at])
        refs = _I32.unpack_from(unit, at)[0]
        at += 4
        references: tuple[Reference, ...] = ()
        if refs:
            if not 0 < refs <= MAX_ARRAY_SIZE or refs * 8 > end - at:
                return None
            listed = []
            for _ in range(refs):
                n = _I32.unpack_from(unit, at)[0]
                if n < 0 or at + 4 + n + 4 > end:
                    return None
                ref = unit[at + 4 : at + 4 + n].decode("utf-8")
                listed.append(Reference(ref, _I32.unpack_from(unit, at + 4 + n)[0]))
                at += n + 8
            references = tuple(listed)
        values.append(
            HandleValue(index, kind, data, ttl, timestamp, _PERMISSIONS[perms], references)
        )
    if (
        at != end
        or (end < size and unit[end : end + 4] != b"\0\0\0\0")
        or size not in (end, end + 4)
    ):
        return None  # a credential, or bytes after the body: the codec's
    return HandleRecord(handle, tuple(values))


_READER: Final = _accelerated() or _read

__all__ = ["RequestTemplates", "read_answer"]
