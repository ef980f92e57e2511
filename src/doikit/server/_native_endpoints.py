"""The native protocol's endpoints in the event loop: :class:`UdpEndpoint` and
:class:`TcpEndpoint` move the bytes of any service that answers them (:class:`Answering`:
:class:`~._native.NativeService`, or another process's relay to one), through the codec's
:class:`~doikit.handle.UdpReassembler` and :class:`~doikit.handle.TcpFramer`, within the
limits here: a TCP connection that sends nothing whole within :data:`TCP_IDLE` seconds is
closed, and what one address may be sent over UDP is limited by :class:`UdpBudget`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Final, Protocol, cast

from doikit.handle import HandleWireError, OpFlag, TcpFramer, UdpReassembler, split_datagrams

log = logging.getLogger("doikit.server")

#: Seconds a TCP connection may wait without sending a whole message.
TCP_IDLE: Final = 30.0
#: What one address may be sent over UDP (then answers are dropped, and the client falls
#: back to TCP, as CNRI's clients do after three tries): up to UDP_AMPLIFICATION bytes for
#: each byte it sent, plus UDP_RATE bytes a second, within a burst of UDP_BURST. A client
#: asking in earnest is never held back (an answer is a few times its question); a forged
#: source address gets no more than ten times what the forger sent.
UDP_AMPLIFICATION: Final = 10
UDP_RATE: Final = 64 * 1024
UDP_BURST: Final = 256 * 1024
#: The largest datagram of the protocol: an envelope and 492 message bytes.
UDP_PACKET: Final = 512
#: Addresses whose UDP budget is remembered.
_MAX_ADDRESSES: Final = 100_000


class UdpBudget:
    """Bytes each address may still be sent over UDP: a token bucket per address, with
    one of *shares* equal parts of an address's rate and burst (several buckets, in
    several lanes and processes, answer the same addresses)."""

    def __init__(self, shares: int = 1) -> None:
        self._buckets: dict[object, tuple[float, float]] = {}
        self._rate = UDP_RATE / shares
        self._burst = UDP_BURST / shares

    def take(self, address: object, size: int, asked: int, now: float) -> bool:
        """Whether *size* bytes may be sent to *address*, which sent *asked* bytes."""
        burst = self._burst
        tokens, last = self._buckets.pop(address, (burst, now))
        earned = (now - last) * self._rate + asked * UDP_AMPLIFICATION
        tokens = min(burst, tokens + earned)
        allowed = tokens >= size
        self._buckets[address] = (tokens - size if allowed else tokens, now)
        if len(self._buckets) > _MAX_ADDRESSES:
            del self._buckets[next(iter(self._buckets))]
        return allowed


class Answering(Protocol):
    """What the endpoints ask of a service: a :class:`NativeService`, or another
    process's relay to one (:class:`~._native_lanes.RelayedService`)."""

    def answer_now(self, unit: bytes) -> bytes | None:
        """The common answer at once, or ``None``."""

    async def answer_bytes(self, unit: bytes) -> list[bytes]:
        """The encoded answers to *unit*."""


class UdpEndpoint(asyncio.DatagramProtocol):
    """The native protocol over UDP: datagrams reassembled, answered in packets of 512;
    *shares*: as :class:`UdpBudget`'s."""

    def __init__(self, service: Answering, *, shares: int = 1) -> None:
        self.service = service
        self.transport: asyncio.DatagramTransport | None = None
        self.reassembler = UdpReassembler()
        self.budget = UdpBudget(shares)
        self.dropped = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast("asyncio.DatagramTransport", transport)  # uvloop's is no subclass

    def datagram_received(self, data: bytes, addr: tuple[str | object, ...]) -> None:
        now = time.monotonic()
        try:
            unit = self.reassembler.feed(data, addr, now)
        except HandleWireError:
            return  # a datagram that is no packet of the protocol: no answer to amplify
        if unit is None:
            return
        reply = self.service.answer_now(unit)
        if reply is None:
            asyncio.get_running_loop().create_task(self._answer(unit, addr))
        elif self.transport is not None and self.budget.take(addr[0], len(reply), len(unit), now):
            if len(reply) <= UDP_PACKET:
                self.transport.sendto(reply, addr)
            else:  # (492 message bytes a packet)
                for packet in split_datagrams(reply):
                    self.transport.sendto(packet, addr)
        else:
            self.dropped += 1

    async def _answer(self, unit: bytes, addr: tuple[str | object, ...]) -> None:
        asked = len(unit)
        for reply in await self.service.answer_bytes(unit):
            if self.transport is None or self.transport.is_closing():
                return
            if not self.budget.take(addr[0], len(reply), asked, time.monotonic()):
                self.dropped += 1
                return
            asked = 0
            for packet in split_datagrams(reply):
                self.transport.sendto(packet, addr)


class TcpEndpoint(asyncio.Protocol):
    """The native protocol over TCP: one request per connection unless the client asks to
    keep it (KEEP_ALIVE), as CNRI's server does."""

    def __init__(self, service: Answering) -> None:
        self.service = service
        self.transport: asyncio.Transport | None = None
        self.framer = TcpFramer()
        self.busy = False
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast("asyncio.Transport", transport)
        self._arm()

    def _arm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer = asyncio.get_running_loop().call_later(TCP_IDLE, self._idle)

    def _idle(self) -> None:
        if self.transport is not None and not self.busy:
            self.transport.close()

    def connection_lost(self, _exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.framer.feed(data)
        if not self.busy:
            self._next()

    def _next(self) -> None:
        if self.transport is None:
            return
        try:
            unit = self.framer.next_unit()
        except HandleWireError as exc:  # an envelope no message can follow: say so, close
            log.debug("native TCP: %s", exc)
            self.transport.close()
            return
        if unit is None:
            return
        reply = self.service.answer_now(unit)
        if reply is not None and not int.from_bytes(unit[28:32], "big") & OpFlag.KEEP_ALIVE:
            self.transport.write(reply)
            self.transport.close()
            return
        self.busy = True
        self.transport.pause_reading()
        asyncio.get_running_loop().create_task(self._answer(unit))

    async def _answer(self, unit: bytes) -> None:
        replies = await self.service.answer_bytes(unit)
        transport = self.transport
        if transport is None:
            return
        transport.write(b"".join(replies))
        keep = len(unit) >= 32 and int.from_bytes(unit[28:32], "big") & OpFlag.KEEP_ALIVE
        if not keep or not replies:
            transport.close()
            return
        self.busy = False
        self._arm()
        transport.resume_reading()
        self._next()
