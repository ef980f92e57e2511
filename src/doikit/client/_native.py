"""The native resolver's drivers: :class:`NativeResolver` (blocking sockets) and
:class:`AsyncNativeResolver` (asyncio), over the sans-IO core in
:mod:`doikit.handle._resolver`, which decides what to ask of whom. They only move bytes: UDP
datagrams (CNRI's retry scheme, multi-packet answers reassembled), a TCP connection per
request, or an HTTP POST of ``application/x-hdl-message``; and they keep one total deadline
per resolution.

The async driver shares one UDP socket among every request in flight (answers are matched by
request id and source address) and keeps at most ``per_server`` UDP requests in flight to
one server (:data:`PER_SERVER`); identical questions in flight at once (a batch's prefix
lookups) are asked once. UDP, for both drivers, is :mod:`doikit.client._native_udp`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import socket
import time
from typing import TYPE_CHECKING, Any, Final, cast
from urllib.parse import quote

import httpx

from doikit._errors import TransportError
from doikit.client._native_udp import (
    Ask,
    UdpLane,
    decoded,
    exchange_udp,
    new_id,
    open_lane,
    silent,
)
from doikit.handle import (
    NATIVE_MEDIA_TYPE,
    NEGATIVE_TTL,
    PROTOCOL_HTTP,
    PROTOCOL_TCP,
    PROTOCOL_UDP,
    ROOT_REFRESH,
    UDP_WAITS,
    Exchange,
    Express,
    Failure,
    HandleRecord,
    HandleWireError,
    OpFlag,
    RequestTemplates,
    Resolver,
    TcpFramer,
    encode,
    encode_datagrams,
    read_answer,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Generator

    from doikit.handle import (
        Message,
        Reply,
        Resolution,
        Target,
        VerifyChallengeRequest,
        VerifyChallengeResponse,
    )

#: The most UDP requests the async driver keeps in flight to one server: thousands of names
#: in a batch reach a server 128 at a time. A burst of 128 small requests fits in Linux's
#: default receive buffer of a UDP socket (208 KiB, about 1 KiB a datagram); 512 did not,
#: and what a server's socket drops is sent again only after CNRI's 0.5 s.
PER_SERVER: Final = 128


class _Driver:
    """What both drivers share: the core, the deadline, the HTTP request."""

    def __init__(
        self,
        root: str | None,
        *,
        timeout: float,
        certify: bool,
        negative_ttl: float,
        user_agent: str,
        root_info: str | None = None,
        root_refresh: float = ROOT_REFRESH,
    ) -> None:
        self.core = Resolver(
            root, certify=certify, negative_ttl=negative_ttl, root_info=root_info,
            root_refresh=root_refresh,
        )  # fmt: skip
        self.timeout = timeout
        self.user_agent = user_agent

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


def _settle(future: asyncio.Future[bytes | None], unit: bytes | None) -> None:
    if not future.done():  # not cancelled meanwhile
        future.set_result(unit)


def _settle_ask(future: asyncio.Future[bytes | None], _: Ask, unit: bytes | None) -> None:
    _settle(future, unit)


class _Question(Ask):
    """An express question, and who asked it: the first asker's *user*, *tag* and
    *owner* (see :meth:`AsyncNativeResolver._ask`), then any that joined it in flight."""

    __slots__ = ("express", "handle", "indexes", "joined", "key", "owner", "tag", "types", "user")

    key: tuple[object, ...]
    handle: str
    types: tuple[str, ...]
    indexes: tuple[int, ...]
    express: Express
    user: Callable[[Any, Any], object] | None
    tag: object
    owner: Owner | None
    joined: list[tuple[Callable[[Any, Any], object], object, Owner | None, float]] | None


class Owner:
    """Who started resolutions with :meth:`AsyncNativeResolver.start` (a batch): the tasks
    of those that needed more than the express way, and whether it still wants answers."""

    __slots__ = ("closed", "tasks")

    def __init__(self) -> None:
        self.closed = False
        self.tasks: set[asyncio.Task[None]] = set()

    def close(self) -> None:
        """Want no more answers: the tasks are cancelled, questions in flight ignored."""
        self.closed = True
        for task in list(self.tasks):
            task.cancel()


class NativeResolver(_Driver):
    """Resolves handles over the native protocol with blocking sockets, one at a time.

    :param root: ``"HOST:PORT"`` of a private root, or ``None`` for the published root sites.
    :param timeout: seconds for one resolution, every lookup, retry and fallback included.
    :param certify: ask for signed answers and refuse any whose signature does not verify.
    :param negative_ttl: seconds a "not found" is remembered.
    :param root_info: the published root information to start from (see
        :class:`~doikit.handle.Resolver`); ``None`` for the copy doikit ships.
    :param root_refresh: seconds before the root is asked for its sites again (23 hours).
    """

    def __init__(
        self,
        root: str | None = None,
        *,
        timeout: float = 10.0,
        certify: bool = False,
        negative_ttl: float = NEGATIVE_TTL,
        user_agent: str = "doikit",
        root_info: str | None = None,
        root_refresh: float = ROOT_REFRESH,
    ) -> None:
        super().__init__(
            root,
            timeout=timeout,
            certify=certify,
            negative_ttl=negative_ttl,
            user_agent=user_agent,
            root_info=root_info,
            root_refresh=root_refresh,
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
        request = dataclasses.replace(exchange.request, request_id=new_id())
        protocol = exchange.target.protocol
        if protocol == PROTOCOL_UDP:
            return exchange_udp(exchange, request, deadline)
        if protocol == PROTOCOL_TCP:
            return self._tcp(exchange, request, deadline)
        if protocol == PROTOCOL_HTTP:
            return self._post(exchange, request, deadline)
        return Failure(f"protocol {protocol} is not spoken here")

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


class AsyncNativeResolver(_Driver):
    """The asyncio driver: the parameters of :class:`NativeResolver`, and *per_server*, the
    most UDP requests in flight to one server (:data:`PER_SERVER`).

    A resolution whose service is known (:meth:`Resolver.express`) goes the express way: its
    request made from a template, its plain answer read straight into the record
    (:mod:`doikit.handle._fast_codec`); anything else it meets goes to the core's generator.
    """

    def __init__(
        self,
        root: str | None = None,
        *,
        timeout: float = 10.0,
        certify: bool = False,
        negative_ttl: float = NEGATIVE_TTL,
        user_agent: str = "doikit",
        root_info: str | None = None,
        root_refresh: float = ROOT_REFRESH,
        per_server: int = PER_SERVER,
    ) -> None:
        super().__init__(
            root,
            timeout=timeout,
            certify=certify,
            negative_ttl=negative_ttl,
            user_agent=user_agent,
            root_info=root_info,
            root_refresh=root_refresh,
        )
        if per_server < 1:
            msg = "per_server must be at least 1"
            raise ValueError(msg)
        self.per_server = per_server
        self._lanes: dict[int, UdpLane] = {}
        self._inflight: dict[tuple[object, ...], asyncio.Future[Reply]] = {}
        self._asked: dict[tuple[object, ...], _Question] = {}
        self._answered = self._on_answer  # one bound method for every express question
        self._templates = RequestTemplates()
        self._http: httpx.AsyncClient | None = None
        self._opening = asyncio.Lock()

    async def aclose(self) -> None:
        """Close the UDP socket and the HTTP connections."""
        lanes = list(self._lanes.values())
        self._lanes.clear()
        for lane in lanes:
            lane.close()
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def saturated(self) -> bool:
        """Whether *per_server* questions for each server in use already wait for a
        server's turn: a batch starts no more names until one is answered (what waits holds
        its request; names for the other servers still go out while one is busy)."""
        waiting = servers = 0
        for lane in self._lanes.values():
            waiting += lane.waiting_turn
            servers += len(lane.busy)
        return waiting >= self.per_server * max(1, servers)

    async def resolve(
        self, handle: str, types: tuple[str, ...] = (), indexes: tuple[int, ...] = ()
    ) -> HandleRecord:
        """The record of *handle*; see :meth:`NativeResolver.resolve`."""
        express = self.core.express(handle, types, indexes)
        if isinstance(express, HandleRecord):
            return express
        deadline = time.monotonic() + self.timeout
        first: tuple[Target, Reply] | None = None
        if express is not None:
            future: asyncio.Future[bytes | None] = asyncio.get_running_loop().create_future()
            question = self._ask(handle, types, indexes, express, deadline, _settle, future, None)
            if question is not None:
                try:
                    unit = await future
                finally:
                    self._unask(question, future)
                got = self._express_reply(express, unit, deadline)
                if isinstance(got, HandleRecord):
                    return got
                first = (express.target, got)
        return await self._run(
            self.core.resolution(handle, types, indexes), handle, deadline, first
        )

    def start(  # noqa: PLR0917 - one name of a batch
        self,
        handle: str,
        types: tuple[str, ...],
        indexes: tuple[int, ...],
        done: Callable[[Any, HandleRecord | Exception], object],
        owner: Owner,
        tag: object = None,
    ) -> None:
        """Resolve *handle* as :meth:`resolve` does, without a task when the express way
        answers: ``done(tag, got)`` is called once with the record or the error (from the
        loop, or at once). What needs more runs as a task of *owner*; once *owner* is
        closed, nothing more is started for it, and *done* is no longer called."""
        try:
            express = self.core.express(handle, types, indexes)
        except Exception as exc:  # noqa: BLE001 - the resolution's error, for done()
            done(tag, exc)
            return
        if isinstance(express, HandleRecord):
            done(tag, express)
            return
        deadline = time.monotonic() + self.timeout
        if express is not None and self._ask(
            handle, types, indexes, express, deadline, done, tag, owner
        ):
            return
        self._spawn(handle, types, indexes, deadline, None, functools.partial(done, tag), owner)

    def _spawn(  # noqa: PLR0917 - what a resolution's task needs
        self,
        handle: str,
        types: tuple[str, ...],
        indexes: tuple[int, ...],
        deadline: float,
        first: tuple[Target, Reply] | None,
        done: Callable[[HandleRecord | Exception], object],
        owner: Owner,
    ) -> None:
        async def full() -> None:
            gen = self.core.resolution(handle, types, indexes)
            try:
                record = await self._run(gen, handle, deadline, first)
            except Exception as exc:  # noqa: BLE001 - the resolution's error, for done()
                done(exc)
            else:
                done(record)

        if not owner.closed:
            task = asyncio.ensure_future(full())
            owner.tasks.add(task)
            task.add_done_callback(owner.tasks.discard)

    def _ask(  # noqa: PLR0917 - the express way of one resolution, and who waits for it
        self,
        handle: str,
        types: tuple[str, ...],
        indexes: tuple[int, ...],
        express: Express,
        deadline: float,
        user: Callable[[Any, Any], object],
        tag: object,
        owner: Owner | None,
    ) -> _Question | None:
        """Send the express way's request (or join the same question in flight). Its
        answer goes to ``user(tag, unit)`` when *owner* is ``None`` (:meth:`resolve`), and
        as :meth:`start` says otherwise. The question, or ``None`` when it takes the full
        way (no UDP socket open yet, a request of several datagrams)."""
        target = express.target
        key = (target.host, target.port, handle, types, indexes)
        question = self._asked.get(key)
        if question is not None:  # the same question is in flight: asked once
            if question.joined is None:
                question.joined = []
            question.joined.append((user, tag, owner, deadline))
            return question
        lane = self._lanes.get(socket.AF_INET6 if ":" in target.host else socket.AF_INET)
        if lane is None or lane.closed:
            return None
        request_id = new_id()
        packet = self._templates.request(handle, types, indexes, express, request_id)
        if packet is None:
            return None
        question = _Question(
            (target.host, target.port), (packet,), request_id, UDP_WAITS, deadline=deadline,
            done=self._answered,
        )  # fmt: skip
        question.key, question.handle, question.types = key, handle, types
        question.indexes, question.express = indexes, express
        question.user, question.tag, question.owner = user, tag, owner
        question.joined = None
        self._asked[key] = question
        lane.ask(question)
        return question

    def _on_answer(self, question: Ask, unit: bytes | None) -> None:
        """The lane's answer to an express *question* (or ``None``: none came), for each
        who asked it."""
        assert isinstance(question, _Question)  # noqa: S101 - the lane's own asks
        if self._asked.get(question.key) is question:
            del self._asked[question.key]
        if question.user is not None:
            self._deliver(
                question, question.user, question.tag, question.owner, unit, question.deadline
            )
        for user, tag, owner, deadline in question.joined or ():
            self._deliver(question, user, tag, owner, unit, deadline)

    def _deliver(  # noqa: PLR0917 - one asker of a question
        self,
        question: _Question,
        user: Callable[[Any, Any], object],
        tag: object,
        owner: Owner | None,
        unit: bytes | None,
        deadline: float,
    ) -> None:
        if owner is None:  # resolve(): the bytes, to its future
            user(tag, unit)
            return
        if owner.closed:
            return
        got = self._express_reply(question.express, unit, deadline)
        if isinstance(got, HandleRecord):
            user(tag, got)
        else:
            first = (question.express.target, got)
            done = functools.partial(user, tag)
            self._spawn(
                question.handle, question.types, question.indexes, deadline, first, done, owner
            )

    def _unask(self, question: _Question, tag: object) -> None:
        """The asker of *tag* wants no answer (it was cancelled): the question is withdrawn
        when no one else waits for it."""
        if question.tag is tag:
            question.user = question.tag = None
        elif question.joined:
            question.joined = [asker for asker in question.joined if asker[1] is not tag]
        if question.user is None and not question.joined:
            if self._asked.get(question.key) is question:
                del self._asked[question.key]
            for lane in self._lanes.values():
                lane.withdraw(question)

    def _express_reply(
        self, express: Express, unit: bytes | None, deadline: float
    ) -> HandleRecord | Reply:
        """The record the express way's answer gives, or the reply for the generator."""
        if unit is None:
            if any(lane.closed for lane in self._lanes.values()) or not self._lanes:
                return Failure("the client was closed")
            return silent(len(UDP_WAITS), time.monotonic() - (deadline - self.timeout))
        record = read_answer(unit)
        if record is not None and self.core.express_answer(express, record, unit):
            return record
        return decoded(unit)

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

    async def _run(
        self,
        gen: Generator[Exchange, Reply, object],
        label: str,
        deadline: float | None = None,
        first: tuple[Target, Reply] | None = None,
    ) -> HandleRecord:
        """Drive *gen* to its record; *first* is the reply the express way already had to
        the exchange of that target (given to *gen* when it asks the same first)."""
        if deadline is None:
            deadline = time.monotonic() + self.timeout
        exchange: Exchange | None = None
        try:
            exchange = next(gen)
            if first is not None and exchange.target == first[0]:
                exchange = gen.send(first[1])
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
        request = dataclasses.replace(exchange.request, request_id=new_id())
        if protocol == PROTOCOL_TCP:
            return await self._tcp(exchange, request, deadline)
        if protocol == PROTOCOL_HTTP:
            return await self._post(exchange, request, deadline)
        return Failure(f"protocol {protocol} is not spoken here")

    async def _lane(self, family: int) -> UdpLane:
        lane = self._lanes.get(family)
        if lane is not None:
            return lane
        async with self._opening:
            lane = self._lanes.get(family)
            if lane is None:
                lane = self._lanes[family] = await open_lane(family, self.per_server)
            return lane

    async def _udp(self, exchange: Exchange, deadline: float) -> Reply:
        target = exchange.target
        started = time.monotonic()
        try:
            lane = await self._lane(socket.AF_INET6 if ":" in target.host else socket.AF_INET)
        except OSError as exc:
            return Failure(f"{type(exc).__name__}: {exc}")
        request_id = new_id()
        # Encoded once, the id written into each envelope (bytes 8-11): no copy of the
        # request per id.
        rid = request_id.to_bytes(4, "big")
        packets = [p[:8] + rid + p[12:] for p in encode_datagrams(exchange.request)]
        future: asyncio.Future[bytes | None] = asyncio.get_running_loop().create_future()
        address, done = (target.host, target.port), functools.partial(_settle_ask, future)
        ask = Ask(address, packets, request_id, exchange.waits, deadline=deadline, done=done)
        lane.ask(ask)
        try:
            unit = await future
        finally:
            lane.withdraw(ask)
        if unit is not None:
            return decoded(unit)
        if lane.closed:
            return Failure("the client was closed")
        return silent(len(exchange.waits), time.monotonic() - started)

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
