"""The native resolver's drivers: :class:`NativeResolver` (blocking sockets) and
:class:`AsyncNativeResolver` (asyncio), over the sans-IO core in
:mod:`doikit.handle._resolver`, which decides what to ask of whom. They only move bytes: UDP
datagrams (CNRI's retry scheme, multi-packet answers reassembled), a TCP connection per
request, or an HTTP POST of ``application/x-hdl-message``; and they keep one total deadline
per resolution.

The async driver shares one UDP socket among every request in flight (answers are matched by
request id and source address) and keeps at most ``per_server`` UDP requests in flight to
one server (:data:`PER_SERVER`); identical questions in flight at once (a batch's prefix
lookups) are asked once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
import socket
import time
from typing import TYPE_CHECKING, Final, cast
from urllib.parse import quote

import httpx

from doikit._errors import TransportError
from doikit.handle import NATIVE_MEDIA_TYPE
from doikit.handle._native_site import PROTOCOL_HTTP, PROTOCOL_TCP, PROTOCOL_UDP
from doikit.handle._resolver import NEGATIVE_TTL, Exchange, Failure, Resolver
from doikit.handle._wire import TcpFramer, UdpReassembler, decode, encode, encode_datagrams
from doikit.handle._wire_codes import OpFlag
from doikit.handle._wire_primitives import HandleWireError

if TYPE_CHECKING:
    from collections.abc import Generator

    from doikit.handle._resolver import Reply, Resolution
    from doikit.handle._values import HandleRecord
    from doikit.handle._wire_messages import (
        Message,
        VerifyChallengeRequest,
        VerifyChallengeResponse,
    )

#: The most UDP requests the async driver keeps in flight to one server: thousands of names
#: in a batch reach a server 128 at a time. A burst of 128 small requests fits in Linux's
#: default receive buffer of a UDP socket (208 KiB, about 1 KiB a datagram); 512 did not,
#: and what a server's socket drops is sent again only after CNRI's 0.5 s.
PER_SERVER: Final = 128
#: The media type of native messages over HTTP (§15).
_MAX_DATAGRAM: Final = 65535
_RECEIVE_BUFFER: Final = 4 << 20


class _Driver:
    """What both drivers share: the core, the deadline, request ids, the HTTP request."""

    def __init__(
        self,
        root: str | None,
        *,
        timeout: float,
        certify: bool,
        negative_ttl: float,
        user_agent: str,
    ) -> None:
        self.core = Resolver(root, certify=certify, negative_ttl=negative_ttl)
        self.timeout = timeout
        self.user_agent = user_agent

    @staticmethod
    def new_id() -> int:
        """A request id: random, positive, 31 bits, as CNRI's ``abs(random int)`` — one a
        host off the path cannot guess to answer in the server's place."""
        return secrets.randbits(31) or 1

    def late(self, label: str, exchange: Exchange | None) -> TransportError:
        """The error for a resolution that ran past its deadline."""
        where = f" (last asked: {exchange.target})" if exchange is not None else ""
        msg = f"resolving {label}: no answer within {self.timeout} s{where}"
        return TransportError(label, msg)

    def http_request(
        self, exchange: Exchange, request: Message
    ) -> tuple[str, bytes, dict[str, str]]:
        """URL, body and headers of an exchange over HTTP (``POST /<handle>``, §15)."""
        target = exchange.target
        host = f"[{target.host}]" if ":" in target.host else target.host
        handle = getattr(request, "handle", "/")
        url = f"http://{host}:{target.port}/{quote(handle, safe='')}"
        headers = {
            "Content-Type": NATIVE_MEDIA_TYPE,
            "Accept": NATIVE_MEDIA_TYPE,
            "User-Agent": self.user_agent,
        }
        return url, encode(request), headers


def _first(data: bytes, request_id: int) -> Message | Failure:
    """The first whole answer to *request_id* in a TCP stream or HTTP body."""
    framer = TcpFramer()
    framer.feed(data)
    try:
        while (message := framer.next_message()) is not None:
            if message.request_id == request_id and not message.op_flags & OpFlag.CONTINUOUS:
                return message
    except HandleWireError as exc:
        return Failure(f"an answer that does not decode: {exc}")
    return Failure("no whole answer")


def _decoded(unit: bytes) -> Message | Failure:
    try:
        return decode(unit)
    except HandleWireError as exc:
        return Failure(f"an answer that does not decode: {exc}")


def _silent(exchange: Exchange, waited: float) -> Failure:
    tries = len(exchange.waits)
    return Failure(f"no answer to {tries} tries in {waited:.1f} s")


class NativeResolver(_Driver):
    """Resolves handles over the native protocol with blocking sockets, one at a time.

    :param root: ``"HOST:PORT"`` of a private root, or ``None`` for the published root sites.
    :param timeout: seconds for one resolution, every lookup, retry and fallback included.
    :param certify: ask for signed answers and refuse any whose signature does not verify.
    :param negative_ttl: seconds a "not found" is remembered.
    """

    def __init__(
        self,
        root: str | None = None,
        *,
        timeout: float = 10.0,
        certify: bool = False,
        negative_ttl: float = NEGATIVE_TTL,
        user_agent: str = "doikit",
    ) -> None:
        super().__init__(
            root,
            timeout=timeout,
            certify=certify,
            negative_ttl=negative_ttl,
            user_agent=user_agent,
        )
        self._http: httpx.Client | None = None

    def close(self) -> None:
        """Close the HTTP connections."""
        if self._http is not None:
            self._http.close()
            self._http = None

    def resolve(
        self, handle: str, types: tuple[str, ...] = (), indexes: tuple[int, ...] = ()
    ) -> HandleRecord:
        """The record of *handle*; see :meth:`doikit.handle._resolver.Resolver.resolution`."""
        return self._run(self.core.resolution(handle, types, indexes), handle)

    def _run(
        self, gen: Resolution | Generator[Exchange, Reply, object], label: str
    ) -> HandleRecord:
        deadline = time.monotonic() + self.timeout
        exchange: Exchange | None = None
        try:
            exchange = next(gen)
            while True:
                if time.monotonic() >= deadline:
                    gen.close()
                    raise self.late(label, exchange)
                exchange = gen.send(self._exchange(exchange, deadline))
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]

    def _exchange(self, exchange: Exchange, deadline: float) -> Reply:
        request = dataclasses.replace(exchange.request, request_id=self.new_id())
        protocol = exchange.target.protocol
        if protocol == PROTOCOL_UDP:
            return self._udp(exchange, request, deadline)
        if protocol == PROTOCOL_TCP:
            return self._tcp(exchange, request, deadline)
        if protocol == PROTOCOL_HTTP:
            return self._post(exchange, request, deadline)
        return Failure(f"protocol {protocol} is not spoken here")

    def _udp(self, exchange: Exchange, request: Message, deadline: float) -> Reply:
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
                            return _decoded(unit)
                    if time.monotonic() >= deadline:
                        break
        except ConnectionRefusedError:
            return Failure("refused (nothing listens on the port)")
        except OSError as exc:
            return Failure(f"{type(exc).__name__}: {exc}")
        return _silent(exchange, time.monotonic() - started)

    def _tcp(self, exchange: Exchange, request: Message, deadline: float) -> Reply:
        target = exchange.target
        left = min(exchange.waits[0], deadline - time.monotonic())
        try:
            with socket.create_connection((target.host, target.port), timeout=left) as sock:
                sock.sendall(encode(request))
                stream = bytearray()
                end = time.monotonic() + left
                while True:
                    sock.settimeout(max(0.001, end - time.monotonic()))
                    data = sock.recv(65536)
                    if not data:
                        break
                    stream += data
                    got = _first(bytes(stream), request.request_id)
                    if not isinstance(got, Failure):
                        return got
        except TimeoutError:
            return Failure(f"no answer within {left:.1f} s")
        except OSError as exc:
            return Failure(f"{type(exc).__name__}: {exc}")
        return _first(bytes(stream), request.request_id)

    def _post(self, exchange: Exchange, request: Message, deadline: float) -> Reply:
        url, body, headers = self.http_request(exchange, request)
        left = min(exchange.waits[0], deadline - time.monotonic())
        if self._http is None:
            self._http = httpx.Client(trust_env=False)
        try:
            response = self._http.post(url, content=body, headers=headers, timeout=left)
        except httpx.HTTPError as exc:
            return Failure(f"{type(exc).__name__}: {exc}")
        if response.status_code != 200:
            return Failure(f"HTTP {response.status_code}")
        return _first(response.content, request.request_id)


def _expire(future: asyncio.Future[bytes | None]) -> None:
    if not future.done():
        future.set_result(None)


class _UdpMux(asyncio.DatagramProtocol):
    """One UDP socket for every request in flight: answers go to the request whose id and
    server they match; multi-packet answers are reassembled first."""

    def __init__(self) -> None:
        self.transport: asyncio.DatagramTransport | None = None
        self.waiting: dict[int, tuple[asyncio.Future[bytes | None], tuple[str, int]]] = {}
        self.reassembler = UdpReassembler(max_pending=4096, max_pending_bytes=64 << 20)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def datagram_received(self, data: bytes, addr: tuple[str | int, ...]) -> None:
        if len(data) < 20:
            return
        entry = self.waiting.get(int.from_bytes(data[8:12], "big"))
        if entry is None or entry[0].done() or (addr[0], addr[1]) != entry[1]:
            return
        try:
            unit = self.reassembler.feed(data, addr[:2], time.monotonic())
        except HandleWireError:
            return
        if unit is not None:
            entry[0].set_result(unit)

    def error_received(self, exc: Exception) -> None:
        """An ICMP error on the shared socket says nothing of which request: ignored."""


class AsyncNativeResolver(_Driver):
    """The asyncio driver: the parameters of :class:`NativeResolver`, and *per_server*, the
    most UDP requests in flight to one server (:data:`PER_SERVER`)."""

    def __init__(
        self,
        root: str | None = None,
        *,
        timeout: float = 10.0,
        certify: bool = False,
        negative_ttl: float = NEGATIVE_TTL,
        user_agent: str = "doikit",
        per_server: int = PER_SERVER,
    ) -> None:
        super().__init__(
            root,
            timeout=timeout,
            certify=certify,
            negative_ttl=negative_ttl,
            user_agent=user_agent,
        )
        if per_server < 1:
            msg = "per_server must be at least 1"
            raise ValueError(msg)
        self.per_server = per_server
        self._muxes: dict[int, _UdpMux] = {}
        self._slots: dict[tuple[str, int], asyncio.Semaphore] = {}
        self._users: dict[tuple[str, int], int] = {}
        self._inflight: dict[tuple[object, ...], asyncio.Future[Reply]] = {}
        self._http: httpx.AsyncClient | None = None
        self._opening = asyncio.Lock()

    async def aclose(self) -> None:
        """Close the UDP socket and the HTTP connections."""
        for mux in self._muxes.values():
            if mux.transport is not None:
                mux.transport.close()
        self._muxes.clear()
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def resolve(
        self, handle: str, types: tuple[str, ...] = (), indexes: tuple[int, ...] = ()
    ) -> HandleRecord:
        """The record of *handle*; see :meth:`NativeResolver.resolve`."""
        return await self._run(self.core.resolution(handle, types, indexes), handle)

    async def root(self) -> None:
        """Reach the root (a private root is asked for its site information).

        :raises doikit.TransportError: when it does not answer within the timeout.
        """
        await self._run(self.core.root(), self.core.root_address or "the root")

    async def verify_challenge(self, request: VerifyChallengeRequest) -> VerifyChallengeResponse:
        """*request* asked of the server that holds its identity, the answer signed and
        verified (:meth:`doikit.handle.Resolver.verification`): how a handle server checks
        a secret-key answer of an identity held elsewhere.

        :raises doikit.DOINotFound: no service for the identity's prefix.
        :raises doikit.HandleServerError: an error answer, a bad or missing signature.
        :raises doikit.TransportError: no server answered within the timeout.
        """
        answer = await self._run(self.core.verification(request), request.identity_handle)
        return cast("VerifyChallengeResponse", answer)

    async def _run(self, gen: Generator[Exchange, Reply, object], label: str) -> HandleRecord:
        deadline = time.monotonic() + self.timeout
        exchange: Exchange | None = None
        try:
            exchange = next(gen)
            while True:
                if time.monotonic() >= deadline:
                    gen.close()
                    raise self.late(label, exchange)
                exchange = gen.send(await self._shared(exchange, deadline))
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]

    async def _shared(self, exchange: Exchange, deadline: float) -> Reply:
        """The reply to *exchange*, asked once however many ask the same at once."""
        key = exchange.key
        pending = self._inflight.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            reply = await self._exchange(exchange, deadline)
            future.set_result(reply)
            return reply
        finally:
            del self._inflight[key]
            if not future.done():  # cancelled: those waiting on it ask again
                future.set_result(Failure("the request was cancelled"))

    async def _exchange(self, exchange: Exchange, deadline: float) -> Reply:
        protocol = exchange.target.protocol
        if protocol == PROTOCOL_UDP:
            return await self._udp(exchange, deadline)
        request = dataclasses.replace(exchange.request, request_id=self.new_id())
        if protocol == PROTOCOL_TCP:
            return await self._tcp(exchange, request, deadline)
        if protocol == PROTOCOL_HTTP:
            return await self._post(exchange, request, deadline)
        return Failure(f"protocol {protocol} is not spoken here")

    async def _mux(self, family: int) -> _UdpMux:
        mux = self._muxes.get(family)
        if mux is not None:
            return mux
        async with self._opening:
            mux = self._muxes.get(family)
            if mux is not None:
                return mux
            mux = _UdpMux()
            local = ("::", 0) if family == socket.AF_INET6 else ("0.0.0.0", 0)  # noqa: S104 - any
            transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(
                lambda: mux, local_addr=local, family=family
            )
            sock = transport.get_extra_info("socket")
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _RECEIVE_BUFFER)
            self._muxes[family] = mux
            return mux

    async def _udp(self, exchange: Exchange, deadline: float) -> Reply:
        # A server's slots live while requests to it are in flight or waiting: the table
        # holds no more servers than there are requests.
        address = (exchange.target.host, exchange.target.port)
        slots = self._slots.get(address)
        if slots is None:
            slots = self._slots[address] = asyncio.Semaphore(self.per_server)
        self._users[address] = self._users.get(address, 0) + 1
        try:
            return await self._udp_in(exchange, deadline, slots)
        finally:
            left = self._users[address] - 1
            if left:
                self._users[address] = left
            else:
                del self._users[address], self._slots[address]

    async def _udp_in(self, exchange: Exchange, deadline: float, slots: asyncio.Semaphore) -> Reply:
        target = exchange.target
        address = (target.host, target.port)
        started = time.monotonic()
        async with slots:
            try:
                mux = await self._mux(socket.AF_INET6 if ":" in target.host else socket.AF_INET)
            except OSError as exc:
                return Failure(f"{type(exc).__name__}: {exc}")
            request_id = self.new_id()
            while request_id in mux.waiting:
                request_id = self.new_id()
            loop = asyncio.get_running_loop()
            # Encoded once, the id written into each envelope (bytes 8-11): no copy of the
            # request per id.
            packets = [
                packet[:8] + request_id.to_bytes(4, "big") + packet[12:]
                for packet in encode_datagrams(exchange.request)
            ]
            try:
                for wait in exchange.waits:
                    transport = mux.transport
                    if transport is None or transport.is_closing():
                        return Failure("the client was closed")
                    left = min(wait, deadline - time.monotonic())
                    if left <= 0:
                        break
                    # One future per try, ended by the answer or by a timer (cheaper than
                    # asyncio.wait's waiter and callbacks, once per name in a batch).
                    future: asyncio.Future[bytes | None] = loop.create_future()
                    mux.waiting[request_id] = (future, address)
                    for packet in packets:
                        transport.sendto(packet, address)
                    timer = loop.call_later(left, _expire, future)
                    try:
                        unit = await future
                    finally:
                        timer.cancel()
                    if unit is not None:
                        return _decoded(unit)
            finally:
                mux.waiting.pop(request_id, None)
        return _silent(exchange, time.monotonic() - started)

    async def _tcp(self, exchange: Exchange, request: Message, deadline: float) -> Reply:
        target = exchange.target
        left = min(exchange.waits[0], deadline - time.monotonic())
        stream = bytearray()
        try:
            async with asyncio.timeout(left):
                reader, writer = await asyncio.open_connection(target.host, target.port)
                try:
                    writer.write(encode(request))
                    while data := await reader.read(65536):
                        stream += data
                        got = _first(bytes(stream), request.request_id)
                        if not isinstance(got, Failure):
                            return got
                finally:
                    writer.close()
                    with contextlib.suppress(OSError):
                        await writer.wait_closed()
        except TimeoutError:
            return Failure(f"no answer within {left:.1f} s")
        except OSError as exc:
            return Failure(f"{type(exc).__name__}: {exc}")
        return _first(bytes(stream), request.request_id)

    async def _post(self, exchange: Exchange, request: Message, deadline: float) -> Reply:
        url, body, headers = self.http_request(exchange, request)
        left = min(exchange.waits[0], deadline - time.monotonic())
        if self._http is None:
            self._http = httpx.AsyncClient(trust_env=False)
        try:
            response = await self._http.post(url, content=body, headers=headers, timeout=left)
        except httpx.HTTPError as exc:
            return Failure(f"{type(exc).__name__}: {exc}")
        if response.status_code != 200:
            return Failure(f"HTTP {response.status_code}")
        return _first(response.content, request.request_id)


__all__ = ["NATIVE_MEDIA_TYPE", "PER_SERVER", "AsyncNativeResolver", "NativeResolver"]
