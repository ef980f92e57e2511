"""The native Handle protocol's codec: whole messages, what digests and signatures cover, and
framing over UDP and TCP. Pure and without I/O — the server and the clients move the bytes.

A message on the wire (handle-protocol.md §1-§5)::

    envelope (20)  major minor flags|suggestMajor suggestMinor sessionId requestId seq length
    header   (24)  opCode responseCode opFlags siteInfoSerial(2) recursion(1) 0(1) expiration bodyLength
    body           [int1 alg + request digest, in a response with RD set] + the op's layout
    credential     int4 length + a signature or session MAC (length 0: none)

:func:`decode` takes any bytes and gives a message or raises :class:`HandleWireError`; what
it accepts, :func:`encode` writes back byte for byte (except a missing credential section,
which it writes as an empty one).

>>> from doikit.handle import ResolutionRequest, OpFlag
>>> wire = encode(ResolutionRequest("10.5555/TEST4", request_id=7, op_flags=OpFlag.PUBLIC_ONLY))
>>> decode(wire) == ResolutionRequest("10.5555/TEST4", request_id=7, op_flags=OpFlag.PUBLIC_ONLY)
True
>>> decode(wire[:30])
Traceback (most recent call last):
  ...
doikit.handle._wire_primitives.HandleWireError: byte 16 (envelope.message_length): the envelope announces 53 message bytes, 10 follow
"""  # noqa: E501 - a doctest's output is one line

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from doikit.handle._protocol import RC_AUTHENTICATION_NEEDED, RC_SUCCESS
from doikit.handle._wire_codes import (
    DIGEST_MD5,
    DIGEST_MD5_OLD,
    DIGEST_SHA1,
    DIGEST_SHA256,
    ERROR_CODES,
    RC_PREFIX_REFERRAL,
    RC_SERVICE_REFERRAL,
    RESPONSE_CODES,
    EnvelopeFlag,
    OpFlag,
    RequestDigest,
    put_credential,
    put_digest,
    read_credential,
    read_digest,
)
from doikit.handle._wire_messages import (
    REQUESTS,
    SUCCESS_WITHOUT_BODY,
    SUCCESSES,
    ChallengeResponse,
    ErrorResponse,
    Message,
    ReferralResponse,
    SuccessResponse,
)
from doikit.handle._wire_primitives import (
    MAX_MESSAGE_LENGTH,
    HandleWireError,
    Reader,
    put_block,
    put_i16,
    put_u8,
    put_u32,
)

if TYPE_CHECKING:
    from collections.abc import Hashable

#: The media type of native messages over HTTP (handle-protocol.md §15).
NATIVE_MEDIA_TYPE: Final = "application/x-hdl-message"
ENVELOPE_SIZE: Final = 20
HEADER_SIZE: Final = 24
#: Message bytes per UDP datagram: 512 minus the envelope (``MAX_UDP_DATA_SIZE``).
UDP_PAYLOAD: Final = 492
_ENVELOPE: Final = struct.Struct(">BBBBIIIi")
_HEADER: Final = struct.Struct(">IIIhBBII")
_SIGNED_IDS: Final = struct.Struct(">IIi")
_FLAG_BITS: Final = 0xE0
_SUGGEST_BITS: Final = 0x03
_UNREADABLE: Final = EnvelopeFlag.ENCRYPTED | EnvelopeFlag.COMPRESSED


@dataclass(frozen=True, slots=True)
class Envelope:
    """The 20 bytes before every message and every UDP datagram (§3). ``suggested_version``
    is as sent: ``(0, x)`` means none (then the envelope's version is meant); see
    :attr:`suggested`."""

    version: tuple[int, int]
    suggested_version: tuple[int, int]
    flags: int
    session_id: int
    request_id: int
    sequence: int
    message_length: int

    @property
    def suggested(self) -> tuple[int, int]:
        """The version the sender suggests, as CNRI reads it."""
        return self.version if self.suggested_version[0] == 0 else self.suggested_version


@dataclass(frozen=True, slots=True)
class Header:
    """The 24-byte message header (§4)."""

    op_code: int
    response_code: int
    op_flags: int
    site_info_serial: int
    recursion_count: int
    expiration: int
    body_length: int


def decode_envelope(data: bytes, *, max_length: int = MAX_MESSAGE_LENGTH) -> Envelope:
    """The envelope at the start of *data* (a datagram, a stream, a whole message).

    :raises HandleWireError: for fewer than 20 bytes, reserved flag bits, or a message length
        that is negative or over *max_length* — checked before anything is allocated.
    """
    if len(data) < ENVELOPE_SIZE:
        raise HandleWireError(f"needs {ENVELOPE_SIZE} bytes, {len(data)} given", 0, "envelope")
    major, minor, flags, suggest_minor, session, request, sequence, length = _ENVELOPE.unpack_from(
        data
    )
    if flags & ~(_FLAG_BITS | _SUGGEST_BITS):
        raise HandleWireError(f"reserved bits set in 0x{flags:02x}", 2, "envelope.flags")
    if length < 0 or length > max_length:
        detail = f"message length {length} is not 0 to {max_length}"
        raise HandleWireError(detail, 16, "envelope.message_length")
    return Envelope(
        (major, minor),
        (flags & _SUGGEST_BITS, suggest_minor),
        EnvelopeFlag(flags & _FLAG_BITS),
        session,
        request,
        sequence,
        length,
    )


def encode_envelope(envelope: Envelope) -> bytes:
    """The 20 bytes of *envelope*.

    :raises HandleWireError: for a field out of its range.
    """
    out = bytearray()
    put_u8(out, envelope.version[0], "envelope.version")
    put_u8(out, envelope.version[1], "envelope.version")
    suggest_major, suggest_minor = envelope.suggested_version
    if envelope.flags & ~_FLAG_BITS or suggest_major & ~_SUGGEST_BITS:
        detail = f"flags 0x{envelope.flags:02x}, suggested major {suggest_major}"
        raise HandleWireError(f"{detail}: only 0xe0 and 0 to 3 fit", field="envelope.flags")
    out.append(envelope.flags | suggest_major)
    put_u8(out, suggest_minor, "envelope.suggested_version")
    put_u32(out, envelope.session_id, "session_id")
    put_u32(out, envelope.request_id, "request_id")
    put_u32(out, envelope.sequence, "envelope.sequence")
    put_u32(out, envelope.message_length, "envelope.message_length")
    return bytes(out)


def decode_header(message: bytes, offset: int = 0) -> Header:
    """The header of the message starting at *offset* of *message* — what a server reads
    to answer a message it cannot decode (its op code) with the right error.

    :raises HandleWireError: for fewer than 24 bytes or a reserved byte that is not 0.
    """
    if len(message) - offset < HEADER_SIZE:
        detail = f"needs {HEADER_SIZE} bytes, {max(0, len(message) - offset)} left"
        raise HandleWireError(detail, offset, "header")
    op, rc, flags, serial, recursion, reserved, expiration, body = _HEADER.unpack_from(
        message, offset
    )
    if reserved:
        raise HandleWireError(f"reserved byte is 0x{reserved:02x}, not 0", offset + 15, "header")
    return Header(op, rc, OpFlag(flags), serial, recursion, expiration, body)


# --- messages -------------------------------------------------------------------------------


def _check(msg: Message) -> None:
    """Refuse what would not decode back to *msg*: one rule per field pair."""
    if msg.envelope_flags & ~EnvelopeFlag.TRUNCATED:
        raise HandleWireError(
            "encrypted or compressed: encode the message, transform it, and write the envelope"
            " with encode_envelope",
            field="envelope_flags",
        )
    digest = msg.request_digest is not None
    if msg.response_code == 0:
        if digest:
            raise HandleWireError("a request carries no request digest", field="request_digest")
        return
    if bool(msg.op_flags & OpFlag.REQUEST_DIGEST) != digest:
        detail = "a response has a request digest if and only if OpFlag.REQUEST_DIGEST is set"
        raise HandleWireError(detail, field="request_digest")
    rc = msg.response_code
    if isinstance(msg, ErrorResponse):
        if rc not in ERROR_CODES and not (rc == RC_PREFIX_REFERRAL and msg.version < (2, 5)):
            detail = f"{rc} is not an error code (a 303 before 2.5 is)"
            raise HandleWireError(detail, field="response_code")
    elif isinstance(msg, ReferralResponse) and not (
        rc == RC_SERVICE_REFERRAL or (rc == RC_PREFIX_REFERRAL and msg.version >= (2, 5))
    ):
        raise HandleWireError(f"{rc} is not 302 or (from 2.5 on) 303", field="response_code")


def _encode_parts(msg: Message) -> tuple[bytearray, bytes]:
    """The header and body, and the credential section, of *msg*."""
    _check(msg)
    body = bytearray()
    if msg.request_digest is not None:
        put_digest(body, msg.request_digest, "request_digest")
    msg.put_body(body)
    out = bytearray()
    put_u32(out, msg.op_code, "op_code")
    put_u32(out, msg.response_code, "response_code")
    put_u32(out, msg.op_flags, "op_flags")
    put_i16(out, msg.site_info_serial, "site_info_serial")
    put_u8(out, msg.recursion_count, "recursion_count")
    out.append(0)
    put_u32(out, msg.expiration, "expiration")
    put_u32(out, len(body), "body")
    out += body
    if msg.credential is None:
        return out, b"\x00\x00\x00\x00"
    cred = bytearray()
    put_credential(cred, msg.credential)
    section = bytearray()
    put_block(section, bytes(cred), "credential")
    return out, bytes(section)


def encode_message(msg: Message) -> bytes:
    """The message bytes of *msg* (header, body, credential section), without envelope.

    :raises HandleWireError: for a field out of range, fields that contradict each other
        (a response's RD flag without its digest, an error code on a success class, …) or a
        message over 262,144 bytes, which no CNRI peer reads.
    """
    head_body, credential = _encode_parts(msg)
    size = len(head_body) + len(credential)
    if size > MAX_MESSAGE_LENGTH:
        raise HandleWireError(
            f"{size} bytes is over the limit of {MAX_MESSAGE_LENGTH}", field="message"
        )
    return bytes(head_body + credential)


def _envelope_of(msg: Message, length: int) -> Envelope:
    return Envelope(
        msg.version,
        msg.suggested_version,
        msg.envelope_flags,
        msg.session_id,
        msg.request_id,
        0,
        length,
    )


def encode(msg: Message) -> bytes:
    """Envelope + message: what TCP and HTTP carry, and one UDP datagram when it fits.

    :raises HandleWireError: as :func:`encode_message`, or for an envelope field out of range.
    """
    message = encode_message(msg)
    return encode_envelope(_envelope_of(msg, len(message))) + message


def decode(data: bytes) -> Message:
    """The message in *data*: an envelope (sequence 0) and exactly the message it announces.

    :raises HandleWireError: for anything else, saying what and at which byte of *data*.
    """
    envelope = decode_envelope(data)
    if envelope.sequence:
        detail = f"is {envelope.sequence} in a whole message (only UDP packets count)"
        raise HandleWireError(detail, 12, "envelope.sequence")
    if len(data) - ENVELOPE_SIZE != envelope.message_length:
        detail = f"the envelope announces {envelope.message_length} message bytes, "
        raise HandleWireError(
            detail + f"{len(data) - ENVELOPE_SIZE} follow", 16, "envelope.message_length"
        )
    return _decode(data, ENVELOPE_SIZE, envelope)


def decode_message(message: bytes, envelope: Envelope) -> Message:
    """The message in *message* (no envelope), with the ids and versions of *envelope* — for
    a message a server decrypted itself (clear ``ENCRYPTED`` in the envelope it passes).

    :raises HandleWireError: saying what is wrong at which byte of *message*.
    """
    return _decode(message, 0, envelope)


def _decode(data: bytes, start: int, env: Envelope) -> Message:
    if env.flags & _UNREADABLE:
        raise HandleWireError(
            "the message is encrypted or compressed: decrypt it, then decode_message()",
            2 if start else None,
            "envelope.flags",
        )
    head = decode_header(data, start)
    r = Reader(data, start + HEADER_SIZE)
    if head.body_length > r.left:
        detail = f"body length {head.body_length} runs past the end ({r.left} bytes left)"
        raise HandleWireError(detail, start + 20, "header.body_length")
    body_end = r.pos + head.body_length
    body = Reader(data, r.pos, body_end)
    op, rc = head.op_code, head.response_code
    fields: dict[str, object] = {}
    cls: type[Message] | None
    if rc == 0:
        cls = REQUESTS.get(op)
        if cls is None:
            raise HandleWireError(f"unknown request op code {op}", start, "header.op_code")
    else:
        if rc not in RESPONSE_CODES:
            raise HandleWireError(f"unknown response code {rc}", start + 4, "header.response_code")
        if head.op_flags & OpFlag.REQUEST_DIGEST:
            fields["request_digest"] = read_digest(body, "request_digest")
        if rc == RC_SUCCESS:
            cls = SUCCESSES.get(op)
            if cls is None:
                if op not in SUCCESS_WITHOUT_BODY:
                    raise HandleWireError(
                        f"no success response to op {op}", start, "header.op_code"
                    )
                cls = SuccessResponse
                fields["op_code"] = op
        elif rc == RC_AUTHENTICATION_NEEDED:
            cls = ChallengeResponse
            fields["op_code"] = op
        else:
            referral = rc == RC_SERVICE_REFERRAL or (
                rc == RC_PREFIX_REFERRAL and env.version >= (2, 5)
            )
            cls = ReferralResponse if referral else ErrorResponse
            fields["op_code"] = op
            fields["response_code"] = rc
    fields.update(cls.read_body(body))
    body.done("body")
    r.pos = body_end
    if r.left:  # a message may end right after its body (CNRI reads a credential if it can)
        size = r.length("credential")
        if size:
            cred = Reader(data, r.pos, r.pos + size)
            fields["credential"] = read_credential(cred)
            cred.done("credential")
            r.pos += size
        r.done("message")
    return cls(
        request_id=env.request_id,
        session_id=env.session_id,
        op_flags=head.op_flags,
        site_info_serial=head.site_info_serial,
        recursion_count=head.recursion_count,
        expiration=head.expiration,
        version=env.version,
        suggested_version=env.suggested_version,
        envelope_flags=env.flags,
        **fields,  # type: ignore[arg-type]
    )


# --- what digests and signatures cover (§5, §12, §13) ---------------------------------------


def header_and_body(msg: Message) -> bytes:
    """The bytes of *msg* a request digest, a signature and a session MAC cover: its header
    and body, without envelope and credential."""
    return bytes(_encode_parts(msg)[0])


def request_digest(request: Message, alg: int = DIGEST_SHA256) -> RequestDigest:
    """The digest of *request* a response carries when RD is set (SHA-256 from 2.7 on,
    SHA-1 from 2.1, the old MD5 form before)."""
    data = header_and_body(request)
    if alg in (DIGEST_MD5, DIGEST_MD5_OLD):
        return RequestDigest(alg, hashlib.md5(data, usedforsecurity=False).digest())
    if alg == DIGEST_SHA1:
        return RequestDigest(alg, hashlib.sha1(data, usedforsecurity=False).digest())
    if alg == DIGEST_SHA256:
        return RequestDigest(alg, hashlib.sha256(data).digest())
    raise HandleWireError(f"unknown digest algorithm {alg}", field="alg")


def signed_content(msg: Message, counter: int | None = None) -> bytes:
    """What an HS_SIGNED signature or an HS_MAC (HMAC) covers from protocol 2.7 on: major,
    minor, the suggested major and minor (from 2.8), session id, request id, session
    counter (default: the credential's), then :func:`header_and_body`.

    :raises HandleWireError: for a message of a version before 2.7, whose layouts differ.
    """
    if msg.version < (2, 7):
        raise HandleWireError(f"version {msg.version} signs another layout", field="version")
    if counter is None:
        counter = msg.credential.counter if msg.credential is not None else 0
    prefix = bytearray(msg.version)
    if msg.version >= (2, 8):
        suggested = msg.suggested_version
        prefix += bytes(msg.version if suggested[0] == 0 else suggested)
    prefix += _SIGNED_IDS.pack(msg.session_id, msg.request_id, counter)
    return bytes(prefix) + header_and_body(msg)


# --- framing: UDP (§14) and TCP (§1) --------------------------------------------------------


def split_datagrams(unit: bytes) -> list[bytes]:
    """Datagrams for an encoded message (envelope + message): 492 message bytes each, every
    one with the envelope and its sequence number; the packets of a multi-packet *request*
    carry ``TRUNCATED``, which CNRI's server needs to wait for the rest (its responses do not).

    :raises HandleWireError: when *unit* is not an envelope and the message it announces.
    """
    envelope = decode_envelope(unit)
    message = memoryview(unit)[ENVELOPE_SIZE:]
    if len(message) != envelope.message_length:
        detail = f"the envelope announces {envelope.message_length} message bytes, "
        raise HandleWireError(detail + f"{len(message)} follow", 16, "envelope.message_length")
    if len(message) <= UDP_PAYLOAD:
        return [bytes(unit)]
    head = bytearray(unit[:ENVELOPE_SIZE])
    if envelope.message_length >= 8 and unit[24:28] == bytes(4):  # response code 0: a request
        head[2] |= EnvelopeFlag.TRUNCATED
    packets = []
    for sequence, at in enumerate(range(0, len(message), UDP_PAYLOAD)):
        head[12:16] = sequence.to_bytes(4, "big")
        packets.append(bytes(head) + message[at : at + UDP_PAYLOAD])
    return packets


def encode_datagrams(msg: Message) -> list[bytes]:
    """The UDP datagrams of *msg*: :func:`split_datagrams` of :func:`encode`."""
    return split_datagrams(encode(msg))


@dataclass(slots=True)
class _Pending:
    started: float
    count: int
    parts: dict[int, bytes] = field(default_factory=dict)
    size: int = 0


class UdpReassembler:
    """Puts multi-packet UDP messages back together (sans-IO: the caller passes each
    datagram, where it came from and the time).

    A single-packet message comes straight back. Packets are grouped by source and by their
    envelope without the sequence number; duplicates (a client's retries) are ignored. At
    most *max_pending* messages and *max_pending_bytes* are held — the oldest is dropped to
    make room — and a message not complete within *timeout* seconds is dropped.
    """

    def __init__(
        self,
        *,
        max_message_length: int = MAX_MESSAGE_LENGTH,
        max_pending: int = 64,
        max_pending_bytes: int = 4 << 20,
        timeout: float = 10.0,
    ) -> None:
        self.max_message_length = max_message_length
        self.max_pending = max_pending
        self.max_pending_bytes = max_pending_bytes
        self.timeout = timeout
        self._pending: dict[tuple[Hashable, bytes], _Pending] = {}
        self._bytes = 0

    @property
    def pending(self) -> int:
        """How many messages wait for more packets."""
        return len(self._pending)

    def _drop(self, key: tuple[Hashable, bytes]) -> None:
        self._bytes -= self._pending.pop(key).size

    def expire(self, now: float) -> None:
        """Drop the messages started more than *timeout* seconds before *now*."""
        for key in [k for k, p in self._pending.items() if now - p.started > self.timeout]:
            self._drop(key)

    def feed(self, datagram: bytes, source: Hashable = None, now: float = 0.0) -> bytes | None:
        """The whole message (envelope with sequence 0 + message, for :func:`decode`) once
        *datagram* completes it, else ``None``.

        :raises HandleWireError: for a datagram that is no packet of a message: a bad
            envelope, a sequence number past the last packet, or the wrong number of bytes.
        """
        envelope = decode_envelope(datagram, max_length=self.max_message_length)
        total, sequence = envelope.message_length, envelope.sequence
        count = max(1, -(-total // UDP_PAYLOAD))
        if sequence >= count:
            detail = f"packet {sequence} of a {total}-byte message of {count} packets"
            raise HandleWireError(detail, 12, "envelope.sequence")
        expected = min(UDP_PAYLOAD, total - UDP_PAYLOAD * sequence)
        if len(datagram) - ENVELOPE_SIZE != expected:
            detail = f"packet {sequence} carries {len(datagram) - ENVELOPE_SIZE} message bytes"
            raise HandleWireError(f"{detail}, not {expected}", ENVELOPE_SIZE, "datagram")
        if count == 1:
            return bytes(datagram)
        self.expire(now)
        key = (source, bytes(datagram[:12]) + bytes(datagram[16:20]))
        pending = self._pending.get(key)
        if pending is None:
            while self._pending and (
                len(self._pending) >= self.max_pending
                or self._bytes + total > self.max_pending_bytes
            ):
                self._drop(next(iter(self._pending)))
            pending = self._pending[key] = _Pending(now, count)
        if sequence not in pending.parts:
            pending.parts[sequence] = bytes(datagram[ENVELOPE_SIZE:])
            pending.size += expected
            self._bytes += expected
        if len(pending.parts) < count:
            return None
        self._drop(key)
        head = bytes(datagram[:12]) + bytes(4) + bytes(datagram[16:20])
        return head + b"".join(pending.parts[i] for i in range(count))


class TcpFramer:
    """Cuts a byte stream (TCP, or an HTTP body of several messages) into messages.

    :meth:`feed` the bytes as they come; :meth:`next_message` (or :meth:`next_unit` for the
    raw envelope + message) gives each complete one. A bad envelope (a length of 2 GB, …)
    raises at once, before its message is waited for or any room made; the stream cannot be
    followed past it, so every later call raises the same error. A message that does not
    decode raises too, but the framer goes on with the next.
    """

    def __init__(self, *, max_message_length: int = MAX_MESSAGE_LENGTH) -> None:
        self.max_message_length = max_message_length
        self._buffer = bytearray()
        self._consumed = 0
        self._error: HandleWireError | None = None

    @property
    def buffered(self) -> int:
        """Bytes fed and not yet returned."""
        return len(self._buffer)

    def feed(self, data: bytes) -> None:
        """Add bytes read from the stream."""
        self._buffer += data

    def _shifted(self, exc: HandleWireError, base: int) -> HandleWireError:
        offset = None if exc.offset is None else exc.offset + base
        return HandleWireError(exc.detail, offset, exc.field)

    def next_unit(self) -> bytes | None:
        """The next whole envelope + message, or ``None`` until more bytes come.

        :raises HandleWireError: for a bad envelope (offsets count from the stream's start).
        """
        if self._error is not None:
            raise self._error
        if len(self._buffer) < ENVELOPE_SIZE:
            return None
        try:
            head = bytes(self._buffer[:ENVELOPE_SIZE])
            envelope = decode_envelope(head, max_length=self.max_message_length)
        except HandleWireError as exc:
            self._error = self._shifted(exc, self._consumed)
            raise self._error from None
        end = ENVELOPE_SIZE + envelope.message_length
        if len(self._buffer) < end:
            return None
        unit = bytes(self._buffer[:end])
        del self._buffer[:end]
        self._consumed += end
        return unit

    def next_message(self) -> Message | None:
        """The next message, decoded, or ``None`` until more bytes come.

        :raises HandleWireError: for a bad envelope, or a message that does not decode.
        """
        base = self._consumed
        unit = self.next_unit()
        if unit is None:
            return None
        try:
            return decode(unit)
        except HandleWireError as exc:
            raise self._shifted(exc, base) from None
