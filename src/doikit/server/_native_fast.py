"""The native protocol's hot path: a plain public resolution answered from bytes, without
the codec's message objects, coroutines or a task (the full path costs ~100 µs a request,
most of it there; BENCHMARKS.md).

It takes only the common request, and gives the same bytes the full path gives
(``tests/test_native_server.py`` holds them equal, but for the expiration time): one
packet, RESOLUTION, no session, no digest or signature asked, no type or index filter, a
name held in the store (which homes its prefix) whose values are all public. Anything else
is ``None``, and goes the full way.
"""

from __future__ import annotations

import json
import struct
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Final

from doikit._syntax import fold
from doikit.handle import OpFlag, value_to_wire, values_from_json

if TYPE_CHECKING:
    from collections.abc import Callable

    from doikit.server.stores import StoredRecord

_ENVELOPE: Final = struct.Struct(">BBBBiiii")
_HEADER: Final = struct.Struct(">iiIhBBii")
_REQUEST_HEAD: Final = struct.Struct(">BBBBiiiiiiIhBBii")  # envelope + header, 44 bytes
_LENGTH: Final = struct.Struct(">i")
# Request flags the fast path leaves to the full one: certify, encrypt, continuous, keep
# alive (TCP), request digest (the answer would carry one). Plain ints: the hot path does
# int arithmetic, not IntFlag's.
_FULL_WAY: Final = int(
    OpFlag.CERTIFY | OpFlag.ENCRYPT | OpFlag.CONTINUOUS | OpFlag.KEEP_ALIVE | OpFlag.REQUEST_DIGEST
)
_AUTHORITATIVE: Final = int(OpFlag.AUTHORITATIVE)
#: How long an answer stays good, as CNRI's server sets it (§17): twelve hours.
EXPIRATION: Final = 12 * 3600
#: Records whose encoded values are kept (each with the values JSON it was made from).
MAX_ENCODED: Final = 50_000


class FastResolution:
    """Answers plain public resolutions from a store's synchronous read (*get_now*)."""

    def __init__(self, get_now: Callable[[str], StoredRecord | None], serial: int) -> None:
        self.get_now = get_now
        self.serial = serial
        self._encoded: OrderedDict[str, tuple[str, bytes | None]] = OrderedDict()

    def answer(self, unit: bytes) -> bytes | None:
        """The answer to *unit* (one envelope and message), or ``None`` — also when anything
        goes wrong here (the store cannot answer, a value cannot be encoded): the full path
        then answers it, or reports it."""
        try:
            return self._answer(unit)
        except Exception:  # noqa: BLE001 - the full path answers it, or reports it
            return None

    def _answer(self, unit: bytes) -> bytes | None:
        if len(unit) < 56:  # envelope, header, an empty handle and two empty lists
            return None
        (
            major,
            _,
            flags,
            _,
            session,
            request_id,
            sequence,
            length,
            op_code,
            code,
            op_flags,
            _,
            _recursion,
            _reserved,
            _,
            body_length,
        ) = _REQUEST_HEAD.unpack_from(unit)
        if (
            major != 2
            or flags & 0xFC  # (an envelope flag, or bits the codec refuses)
            or _reserved
            or session
            or sequence
            or op_code != 1
            or code
            or op_flags & _FULL_WAY
            or length != len(unit) - 20
            or body_length < 12
        ):
            return None
        size = _LENGTH.unpack_from(unit, 44)[0]
        end = 48 + size
        if size <= 0 or end + 8 > 44 + body_length or 44 + body_length > len(unit):
            return None
        if unit[end : end + 8] != b"\x00" * 8 or end + 8 != 44 + body_length:
            return None  # a type or index filter, or more: the full way
        if unit[44 + body_length :] not in (b"", b"\x00\x00\x00\x00"):
            return None  # a credential
        raw = unit[48:end]
        try:
            handle = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if "/" not in handle or handle[:2] == "0." or not handle.isprintable():
            return None
        key = fold(handle)
        stored = self.get_now(key)
        if stored is None:
            return None
        values = self._values(key, stored)
        if values is None:
            return None  # a value without public read: the full way hides it
        body = _LENGTH.pack(len(raw)) + raw + values
        message = (
            _HEADER.pack(
                1,
                1,
                (op_flags | _AUTHORITATIVE) & 0xFFFFFFFF,
                self.serial,
                0,
                0,
                int(time.time()) + EXPIRATION,
                len(body),
            )
            + body
            + b"\x00\x00\x00\x00"
        )
        return _ENVELOPE.pack(2, 11, 2, 11, 0, request_id, 0, len(message)) + message

    def _values(self, key: str, stored: StoredRecord) -> bytes | None:
        """The encoded values of *stored* (count and values), ``None`` when one of them has
        no public read (decided on the values themselves, not on the JSON's text)."""
        kept = self._encoded.get(key)
        if kept is not None and kept[0] == stored.values_json:
            return kept[1]
        values = values_from_json(json.loads(stored.values_json))
        encoded: bytes | None = None
        if all(v.public_read for v in values):
            out = bytearray(_LENGTH.pack(len(values)))
            for value in values:
                out += value_to_wire(value)
            encoded = bytes(out)
        self._encoded.pop(key, None)
        self._encoded[key] = (stored.values_json, encoded)
        if len(self._encoded) > MAX_ENCODED:
            self._encoded.popitem(last=False)
        return encoded
