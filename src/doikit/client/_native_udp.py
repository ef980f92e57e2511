"""UDP for the native resolver: CNRI's retry scheme (each try waits its turn of
``exchange.waits``), multi-packet answers reassembled, an answer matched by its request id.

The blocking driver asks each question over a socket of its own (:func:`exchange_udp`). The
async driver shares one socket per address family among every question in flight
(:class:`UdpLane`, opened by :func:`open_lane`): an answer goes to the question whose id and
server it matches, at most *per_server* questions are in flight to one server, every datagram
waiting on the socket is read in one wake-up of the loop, and one timer serves every retry.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import os
import socket
import struct
import time
from typing import TYPE_CHECKING, Final

from doikit.handle import (
    UDP_PAYLOAD,
    Failure,
    HandleWireError,
    UdpReassembler,
    decode,
    encode_datagrams,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from doikit.handle import Exchange, Message

_MAX_DATAGRAM: Final = 65535
_RECEIVE_BUFFER: Final = 4 << 20
_DRAIN: Final = 1024  # datagrams read in one wake-up of the loop, at most


class _Ids:
    """Request ids: random, positive, 31 bits, as CNRI's ``abs(random int)`` — ones a
    host off the path cannot guess to answer in the server's place. Drawn from the
    operating system's generator 1,024 at a time (one system call, not one per request);
    a forked child draws its own."""

    _BATCH: Final = 1024

    def __init__(self) -> None:
        self._left: list[int] = []
        os.register_at_fork(after_in_child=self._left.clear)

    def __call__(self) -> int:
        left = self._left
        if not left:
            left.extend(struct.unpack(f">{self._BATCH}I", os.urandom(4 * self._BATCH)))
        return (left.pop() & 0x7FFFFFFF) or 1


new_id: Final = _Ids()


def decoded(unit: bytes) -> Message | Failure:
    """The message in *unit* (envelope + message), or why it is none."""
    try:
        return decode(unit)
    except HandleWireError as exc:
        return Failure(f"an answer that does not decode: {exc}")


def silent(tries: int, waited: float) -> Failure:
    """The failure of a question that no try had an answer to."""
    return Failure(f"no answer to {tries} tries in {waited:.1f} s")


def exchange_udp(exchange: Exchange, request: Message, deadline: float) -> Message | Failure:
    """*request* asked of *exchange*'s server over a socket of its own (the blocking
    driver), until an answer, the last try's wait or *deadline*."""
    target = exchange.target
    family = socket.AF_INET6 if ":" in target.host else socket.AF_INET
    started = time.monotonic()
    try:
        packets = encode_datagrams(request)
        with socket.socket(family, socket.SOCK_DGRAM) as sock:
            sock.connect((target.host, target.port))  # so a refusal is seen (ICMP)
            reassembler = UdpReassembler()
            for wait in exchange.waits:
                for packet in packets:
                    sock.send(packet)
                end = min(time.monotonic() + wait, deadline)
                while (left := end - time.monotonic()) > 0:
                    sock.settimeout(left)
                    try:
                        data = sock.recv(_MAX_DATAGRAM)
                    except TimeoutError:
                        break
                    try:
                        unit = reassembler.feed(data, None, time.monotonic())
                    except HandleWireError:
                        continue
                    if unit is not None and unit[8:12] == request.request_id.to_bytes(4, "big"):
                        return decoded(unit)
                if time.monotonic() >= deadline:
                    break
    except ConnectionRefusedError:
        return Failure("refused (nothing listens on the port)")
    except OSError as exc:
        return Failure(f"{type(exc).__name__}: {exc}")
    return silent(len(exchange.waits), time.monotonic() - started)


class Ask:
    """One UDP question: its datagrams (request id at bytes 8-11), CNRI's waits, the
    deadline, and *done*, called once as ``done(ask, answer)`` with the answer (envelope +
    message) or ``None``."""

    __slots__ = ("address", "deadline", "done", "due", "packets", "request_id", "tries", "waits")

    def __init__(
        self,
        address: tuple[str, int],
        packets: Sequence[bytes],
        request_id: int,
        waits: tuple[float, ...],
        *,
        deadline: float,
        done: Callable[[Ask, bytes | None], object],
    ) -> None:
        self.address = address
        self.packets = packets
        self.request_id = request_id
        self.waits = waits
        self.deadline = deadline
        self.done = done
        self.tries = 0
        self.due = 0.0  # when the current try ends; -1 once done


class UdpLane:
    """One UDP socket for every question in flight, at most *per_server* of them to one
    server (the others wait their turn in order): answers go to the question whose id and
    server they match (multi-packet answers reassembled first), every datagram waiting on
    the socket read in one wake-up of the loop (the questions their answers make room for
    sent after them, together), and one timer for all the retries."""

    def __init__(self, loop: asyncio.AbstractEventLoop, per_server: int) -> None:
        self.loop = loop
        self.per_server = per_server
        self.send: Callable[[bytes, tuple[str, int]], object] = _unsent
        self.closing: Callable[[], object] = _unsent
        self.closed = False
        self.waiting: dict[int, Ask] = {}
        self.busy: dict[tuple[str, int], int] = {}
        self.queued: dict[tuple[str, int], collections.deque[Ask]] = {}
        self.held: list[Ask] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.timer_at = 0.0
        self.reassembler = UdpReassembler(max_pending=4096, max_pending_bytes=64 << 20)

    @property
    def waiting_turn(self) -> int:
        """How many questions wait for a server's turn, every server."""
        return sum(map(len, self.queued.values()))

    def ask(self, ask: Ask) -> None:
        """Send *ask* now, or when its server has a free slot."""
        address = ask.address
        busy = self.busy.get(address, 0)
        if busy >= self.per_server and not self.closed:
            queue = self.queued.get(address)
            if queue is None:
                queue = self.queued[address] = collections.deque()
            queue.append(ask)
            return
        self.busy[address] = busy + 1
        if not self._start(ask):
            self._finish(ask, None)

    def withdraw(self, ask: Ask) -> None:
        """Forget *ask* (its asker was cancelled): its slot goes to the next."""
        if ask.due < 0:
            return
        queue = self.queued.get(ask.address)
        if queue is not None and ask in queue:
            queue.remove(ask)
            if not queue:
                del self.queued[ask.address]
            ask.due = -1
            return
        self._release(ask)

    def _start(self, ask: Ask) -> bool:
        """Send *ask*'s first try; ``False`` (nothing sent) past its deadline or closed."""
        now = time.monotonic()
        left = min(ask.waits[0], ask.deadline - now)
        if left <= 0 or self.closed:
            return False
        if ask.request_id in self.waiting:
            request_id = new_id()
            while request_id in self.waiting:
                request_id = new_id()
            rid = request_id.to_bytes(4, "big")
            ask.packets = [packet[:8] + rid + packet[12:] for packet in ask.packets]
            ask.request_id = request_id
        self.waiting[ask.request_id] = ask
        self._send(ask, now + left)
        return True

    def _send(self, ask: Ask, due: float) -> None:
        if self.held is not None:
            self.held.append(ask)
        else:
            self._transmit(ask)
        ask.due = due
        if self.timer is None or due < self.timer_at:
            if self.timer is not None:
                self.timer.cancel()
            self.timer = self.loop.call_at(due, self._expire)
            self.timer_at = due

    def _expire(self) -> None:
        # One timer for every question in flight: at the earliest end of a try, the
        # questions in flight (at most per_server a server) are looked over; nothing is
        # kept per try sent, so an answered question leaves nothing behind.
        self.timer = None
        now = time.monotonic()
        for ask in [ask for ask in self.waiting.values() if ask.due <= now]:
            ask.tries += 1
            left = (
                min(ask.waits[ask.tries], ask.deadline - now) if ask.tries < len(ask.waits) else 0
            )
            if left > 0 and not self.closed:
                self._send(ask, now + left)
            else:
                self._finish(ask, None)
        if self.waiting and self.timer is None and not self.closed:
            self.timer_at = min(ask.due for ask in self.waiting.values())
            self.timer = self.loop.call_at(self.timer_at, self._expire)

    def _release(self, ask: Ask) -> None:
        """End *ask*; its slot goes to the next question waiting for that server."""
        if self.waiting.get(ask.request_id) is ask:
            del self.waiting[ask.request_id]
        ask.due = -1
        address = ask.address
        queue = self.queued.get(address)
        late = []
        while queue:
            follower = queue.popleft()
            if not queue:
                del self.queued[address]
            if self._start(follower):
                break
            follower.due = -1
            late.append(follower)
        else:
            left = self.busy[address] - 1
            if left:
                self.busy[address] = left
            else:
                del self.busy[address]
        for follower in late:
            follower.done(follower, None)

    def _finish(self, ask: Ask, unit: bytes | None) -> None:
        self._release(ask)
        ask.done(ask, unit)

    def readable(self, sock: socket.socket) -> None:
        """Read every datagram waiting on *sock* (at most :data:`_DRAIN`)."""
        receive = sock.recvfrom
        held: list[Ask] = []
        self.held = held  # what the answers free is sent after them, together
        try:
            for _ in range(_DRAIN):
                try:
                    data, addr = receive(_MAX_DATAGRAM)
                except BlockingIOError:
                    return
                except OSError:  # an ICMP error says nothing of which question
                    continue
                self.received(data, addr)
        finally:
            self.held = None
            for ask in held:
                if ask.due >= 0:
                    self._transmit(ask)

    def _transmit(self, ask: Ask) -> None:
        for packet in ask.packets:
            self.send(packet, ask.address)

    def received(self, data: bytes, addr: tuple[str | int, ...]) -> None:
        """Give *data*, a datagram from *addr*, to the question it answers."""
        if len(data) < 20:
            return
        ask = self.waiting.get(int.from_bytes(data[8:12], "big"))
        if ask is None or (addr[0], addr[1]) != ask.address:
            return
        if (
            data[12:16] == b"\0\0\0\0"
            and int.from_bytes(data[16:20], "big") == len(data) - 20 <= UDP_PAYLOAD
            and not data[2] & ~_ENVELOPE_FLAGS
        ):
            unit: bytes | None = data  # one packet: what the reassembler would give back
        else:
            try:
                unit = self.reassembler.feed(data, addr[:2], time.monotonic())
            except HandleWireError:
                return
        if unit is not None:
            self._finish(ask, unit)

    def close(self) -> None:
        """Close the socket; every question still waiting ends with ``None``."""
        self.closed = True
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.closing()
        waiting = list(self.waiting.values())
        queued = [ask for queue in self.queued.values() for ask in queue]
        self.queued.clear()
        for ask in waiting:
            if ask.due >= 0:
                self._finish(ask, None)
        for ask in queued:
            ask.due = -1
            ask.done(ask, None)


_ENVELOPE_FLAGS: Final = 0xE3  # the flag bits and the suggested major version (§3)


def _unsent(*_: object) -> None:
    """What a lane does before its socket is open."""


def _sender(sock: socket.socket) -> Callable[[bytes, tuple[str, int]], None]:
    send = sock.sendto

    def sendto(packet: bytes, address: tuple[str, int]) -> None:
        try:  # noqa: SIM105 - once per datagram: cheaper than contextlib.suppress
            send(packet, address)
        except OSError:  # a full buffer or an ICMP error: as a datagram lost, tried again
            pass

    return sendto


def _closer(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> None:
    with contextlib.suppress(Exception):
        loop.remove_reader(sock)
    sock.close()


class _Endpoint(asyncio.DatagramProtocol):
    """A lane's socket through asyncio's datagram transport, where the loop has no
    ``add_reader`` (Windows' proactor): one datagram per wake-up."""

    def __init__(self, lane: UdpLane) -> None:
        self.lane = lane

    def datagram_received(self, data: bytes, addr: tuple[str | int, ...]) -> None:
        self.lane.received(data, addr)

    def error_received(self, exc: Exception) -> None:
        """An ICMP error on the shared socket says nothing of which request: ignored."""


async def open_lane(family: int, per_server: int) -> UdpLane:
    """A lane on a new UDP socket of *family*, bound to any port, read by the running loop."""
    loop = asyncio.get_running_loop()
    lane = UdpLane(loop, per_server)
    sock = socket.socket(family, socket.SOCK_DGRAM)
    try:
        sock.settimeout(0.0)  # non-blocking
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _RECEIVE_BUFFER)
        sock.bind(("::", 0) if family == socket.AF_INET6 else ("0.0.0.0", 0))  # noqa: S104
        loop.add_reader(sock, lane.readable, sock)
    except NotImplementedError:  # no add_reader: asyncio's datagram transport
        transport, _ = await loop.create_datagram_endpoint(lambda: _Endpoint(lane), sock=sock)
        lane.send, lane.closing = transport.sendto, transport.close
    except BaseException:
        sock.close()
        raise
    else:
        lane.send = _sender(sock)
        lane.closing = functools.partial(_closer, loop, sock)
    return lane
