"""The native protocol's lanes: every core answering on the same sockets.

A *lane* is a thread that waits on one of ``--handle-port``'s sockets in a blocking call
and answers the common request — a plain public resolution (:mod:`._native_fast`) — from
its own reader of the store, without the event loop: one system call in, one out. Anything
else (site information, challenges, sessions, changes, filters, several packets) goes to
the event loop's endpoints (:class:`~._native.UdpEndpoint`, :class:`~._native.TcpEndpoint`),
as before.

``doikit serve --handle-processes N`` (the default: one per CPU, at most
:data:`MAX_PROCESSES`) runs N-1 more processes, each with its two lanes on the *same*
sockets (inherited, so the kernel hands each datagram and each connection to whichever
process waits first). Their event loops answer nothing themselves: what their lanes pass
on goes to the first process over a local socket (:class:`Relay`), which holds the one
table of challenges and sessions — CNRI's client opens a connection per request, so the
answer to a challenge may arrive at any process. A process that loses the relay (the first
process ended) ends too.

Only a store that can read on a thread of its own (SQLite's ``point_reader``) has lanes;
on PostgreSQL the event loop answers everything, in one process, as before.

The UDP budget (:class:`~._native._UdpBudget`) is kept per process and per lane, each
with an equal share of an address's rate and burst, so an address is sent no more than one
budget whatever process answers it; an answer is still at most ten times its question.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import signal
import socket
import struct
import sys
import threading
import time
from typing import TYPE_CHECKING, Final, Protocol, cast

from doikit.handle import MAX_MESSAGE_LENGTH, split_datagrams
from doikit.server._native_endpoints import UDP_PACKET, TcpEndpoint, UdpBudget, UdpEndpoint
from doikit.server._native_fast import FastResolution

if TYPE_CHECKING:
    from collections.abc import Callable

    from doikit.server._native_endpoints import Answering
    from doikit.server.stores import Store, StoredRecord

log = logging.getLogger("doikit.server")

#: Processes ``--handle-processes`` runs by default: one per CPU, at most this many.
MAX_PROCESSES: Final = 8
#: The most a lane reads of a datagram (the protocol's are at most 512 bytes; a longer
#: one arrives cut, and is refused as no packet of the protocol).
_DATAGRAM: Final = 4096
#: The most a lane reads of a new connection before deciding whether it is the common case.
_FIRST_READ: Final = 4096
#: Work a lane may have handed to the event loop and not yet seen taken: more is dropped
#: (a datagram: the client asks again; a connection: closed).
MAX_HANDED: Final = 4096
#: Requests one relay connection carries at once; more wait (a datagram over it: dropped).
MAX_RELAYED: Final = 1024
#: How long a relayed request waits for the first process's answer.
RELAY_TIMEOUT: Final = 30.0
#: How long a new process tries to reach the first one's relay.
RELAY_CONNECT: Final = 60.0
#: Seconds a connection from a client that has sent nothing waits in the kernel before it
#: is accepted (the client speaks first in the Handle protocol).
_DEFER_ACCEPT: Final = 5

_FRAME: Final = struct.Struct(">II")  # request id, length
_MAX_UNIT: Final = 20 + MAX_MESSAGE_LENGTH  # an envelope and the longest message
_COUNT: Final = struct.Struct(">II")  # request id, number of answers
_LENGTH: Final = struct.Struct(">I")


def default_processes() -> int:
    """One process per CPU this process may run on, at most :data:`MAX_PROCESSES`."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # (not on every system)
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_PROCESSES, cpus))


class _Sender:
    """The one transport method :class:`UdpEndpoint` uses, on a lane's socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.closing = False

    def sendto(self, data: bytes, addr: tuple[str | object, ...]) -> None:
        with contextlib.suppress(OSError):
            self.sock.sendto(data, addr)

    def is_closing(self) -> bool:
        return self.closing


class Lanes:
    """A UDP lane and a TCP lane on *udp* and *tcp*, answering the common request from a
    reader of *store* and handing the rest to *service*'s endpoints on *loop*."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        store: Store,
        service: Answering,
        serial: int,
        *,
        tcp: socket.socket,
        udp: socket.socket,
        shares: int = 1,
    ) -> None:
        self.loop = loop
        self.store = store
        self.serial = serial
        self.tcp = tcp
        self.udp = udp
        self.shares = shares
        self._stop = threading.Event()
        self._sender = _Sender(udp)
        self.endpoint = UdpEndpoint(service, shares=2 * shares)  # (the lane holds the other)
        self.endpoint.connection_made(cast("asyncio.DatagramTransport", self._sender))
        self.service = service
        self._handed = 0  # (written by the lanes)
        self._taken = 0  # (written by the loop)
        self._threads: list[threading.Thread] = []
        if hasattr(socket, "TCP_DEFER_ACCEPT"):
            with contextlib.suppress(OSError):
                tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, _DEFER_ACCEPT)

    def start(self) -> None:
        """Start both lanes."""
        for target, name in ((self._udp_lane, "udp"), (self._tcp_lane, "tcp")):
            reader = self.store.point_reader()  # type: ignore[attr-defined]
            thread = threading.Thread(
                target=target, args=(reader,), name=f"doikit-native-{name}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def close(self) -> None:
        """Stop the lanes: each wakes to a datagram or a connection sent to itself (another
        process may take it first, so a few are sent)."""
        self._stop.set()
        self._sender.closing = True
        for _ in range(50):
            if not any(thread.is_alive() for thread in self._threads):
                break
            _wake(self.udp, self.tcp)
            for thread in self._threads:
                thread.join(0.02)

    def _hand(self, callback: Callable[..., object], *args: object) -> bool:
        """Whether *callback* could be handed to the loop (not too much is waiting)."""
        if self._handed - self._taken >= MAX_HANDED:
            return False
        self._handed += 1
        try:
            self.loop.call_soon_threadsafe(self._run, callback, *args)
        except RuntimeError:  # the loop is closed
            return False
        return True

    def _run(self, callback: Callable[..., object], *args: object) -> None:
        self._taken += 1
        callback(*args)

    def _udp_lane(self, reader: _Reader) -> None:
        fast = FastResolution(reader.get, self.serial)
        budget = UdpBudget(2 * self.shares)
        recv = self.udp.recvfrom
        send = self.udp.sendto
        clock = time.monotonic
        dontwait = socket.MSG_DONTWAIT
        try:
            while not self._stop.is_set():
                try:
                    try:
                        data, addr = recv(_DATAGRAM, dontwait)
                    except BlockingIOError:
                        reader.rest()  # nothing to do: no read transaction kept meanwhile
                        data, addr = recv(_DATAGRAM)
                except OSError:
                    continue  # (an ICMP error of an earlier answer, a signal)
                if self._stop.is_set():
                    break
                reply = fast.answer(data)
                if reply is None:
                    if len(data) >= 20:  # (shorter is no packet: no answer to amplify)
                        self._hand(self.endpoint.datagram_received, data, addr)
                    continue
                if not budget.take(addr[0], len(reply), len(data), clock()):
                    self.endpoint.dropped += 1
                    continue
                try:
                    if len(reply) <= UDP_PACKET:
                        send(reply, addr)
                    else:
                        for packet in split_datagrams(reply):
                            send(packet, addr)
                except OSError:
                    continue
        finally:
            reader.close()

    def _tcp_lane(self, reader: _Reader) -> None:
        fast = FastResolution(reader.get, self.serial)
        accept = self.tcp.accept
        dontwait = socket.MSG_DONTWAIT
        try:
            while not self._stop.is_set():
                reader.rest()
                try:
                    conn, _ = accept()
                except OSError as exc:
                    if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                        time.sleep(0.05)  # out of descriptors: let the loop close some
                    continue
                if self._stop.is_set():
                    conn.close()
                    break
                try:
                    data = conn.recv(_FIRST_READ, dontwait)
                except BlockingIOError:
                    data = b""
                except OSError:
                    conn.close()
                    continue
                if not data:
                    conn.close()  # (closed before a word)
                    continue
                reply = fast.answer(data)
                if reply is not None:
                    try:
                        sent = conn.send(reply, dontwait)
                    except OSError:
                        sent = -1
                    if sent == len(reply):
                        conn.close()
                        continue
                    if sent < 0:
                        conn.close()
                        continue
                    reply = reply[sent:]
                if not self._hand(self._adopt, conn, data, reply):
                    conn.close()
        finally:
            reader.close()

    def _adopt(self, conn: socket.socket, data: bytes, rest: bytes | None) -> None:
        """Serve *conn* on the loop, *data* read from it already (or the rest of an answer
        to write, then close)."""
        self.loop.create_task(self._adopted(conn, data, rest))

    async def _adopted(self, conn: socket.socket, data: bytes, rest: bytes | None) -> None:
        conn.setblocking(False)  # noqa: FBT003 - socket's own API
        try:
            transport, endpoint = await self.loop.connect_accepted_socket(
                lambda: TcpEndpoint(self.service), sock=conn
            )
        except OSError:
            conn.close()
            return
        if rest is not None:
            transport.write(rest)
            transport.close()
        elif data:
            endpoint.data_received(data)


class _Reader(Protocol):
    def get(self, key: str) -> StoredRecord | None: ...
    def rest(self) -> None: ...
    def close(self) -> None: ...


def _wake(udp: socket.socket, tcp: socket.socket) -> None:
    """Send a datagram and a connection (with a byte: the kernel holds back connections
    that said nothing) to the sockets' own addresses."""
    for sock, kind in ((udp, socket.SOCK_DGRAM), (tcp, socket.SOCK_STREAM)):
        with contextlib.suppress(OSError):
            address = sock.getsockname()
            host = address[0]
            if host in ("0.0.0.0", ""):  # noqa: S104 - the address bound, not one to bind
                host = "127.0.0.1"
            elif host == "::":
                host = "::1"
            with socket.socket(sock.family, kind) as waker:
                waker.settimeout(0.2)
                if kind == socket.SOCK_DGRAM:
                    waker.sendto(b"\0", (host, *address[1:]))
                else:
                    waker.connect((host, *address[1:]))
                    waker.send(b"\0")


class Relay:
    """The first process's side: requests from the other processes' loops answered by the
    one :class:`~._native.NativeService` (its challenges and sessions)."""

    def __init__(self, service: Answering) -> None:
        self.service = service
        self.server: asyncio.AbstractServer | None = None

    async def start(self, path: str) -> None:
        """Listen at *path* (in a directory only this user may enter)."""
        self.server = await asyncio.start_unix_server(self._serve, path=path)

    def close(self) -> None:
        """Stop listening."""
        if self.server is not None:
            self.server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        slots = asyncio.Semaphore(MAX_RELAYED)
        tasks: set[asyncio.Task[None]] = set()
        try:
            while True:
                head = await reader.readexactly(_FRAME.size)
                request_id, length = _FRAME.unpack(head)
                if length > _MAX_UNIT:  # no unit of the protocol: nothing is read for it
                    log.warning("native relay: a frame of %d bytes; closing it", length)
                    break
                unit = await reader.readexactly(length)
                await slots.acquire()
                task = asyncio.create_task(self._answer(writer, request_id, unit, slots))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _answer(
        self,
        writer: asyncio.StreamWriter,
        request_id: int,
        unit: bytes,
        slots: asyncio.Semaphore,
    ) -> None:
        try:
            replies = await self.service.answer_bytes(unit)
            writer.write(
                _COUNT.pack(request_id, len(replies))
                + b"".join(_LENGTH.pack(len(reply)) + reply for reply in replies)
            )
        finally:
            slots.release()


class RelayedService:
    """Another process's service: the common answer from its own store, the rest asked of
    the first process over its relay."""

    def __init__(self, store: Store, serial: int) -> None:
        get_now: Callable[[str], StoredRecord | None] = store.get_now  # type: ignore[attr-defined]
        self._fast = FastResolution(get_now, serial)
        self._ids = 0
        self._waiting: dict[int, asyncio.Future[list[bytes]]] = {}
        self._writer: asyncio.StreamWriter | None = None
        self.lost = asyncio.Event()

    async def connect(self, path: str) -> None:
        """Reach the first process's relay (it may still be opening its store).

        :raises OSError: when it cannot be reached within :data:`RELAY_CONNECT` seconds.
        """
        deadline = time.monotonic() + RELAY_CONNECT
        parent = int(os.environ.get("DOIKIT_NATIVE_PARENT", "0"))
        while True:
            try:
                reader, self._writer = await asyncio.open_unix_connection(path)
                break
            except OSError:
                if time.monotonic() > deadline or os.getppid() != parent:
                    raise  # (the first process is gone: nobody to relay to)
                await asyncio.sleep(0.05)
        asyncio.get_running_loop().create_task(self._read(reader))

    async def _read(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                request_id, count = _COUNT.unpack(await reader.readexactly(_COUNT.size))
                replies = []
                for _ in range(count):
                    (length,) = _LENGTH.unpack(await reader.readexactly(_LENGTH.size))
                    replies.append(await reader.readexactly(length))
                waiting = self._waiting.pop(request_id, None)
                if waiting is not None and not waiting.done():
                    waiting.set_result(replies)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            for waiting in self._waiting.values():
                if not waiting.done():
                    waiting.set_result([])
            self._waiting.clear()
            self.lost.set()

    def answer_now(self, unit: bytes) -> bytes | None:
        """The common answer from this process's store (a connection kept alive asks again
        on the loop)."""
        return self._fast.answer(unit)

    async def answer_bytes(self, unit: bytes) -> list[bytes]:
        """The first process's answers to *unit*; none when it cannot be asked now."""
        if self._writer is None or self.lost.is_set() or len(self._waiting) >= MAX_RELAYED:
            return []
        self._ids = (self._ids + 1) & 0xFFFFFFFF
        request_id = self._ids
        waiting = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = waiting
        self._writer.write(_FRAME.pack(request_id, len(unit)) + unit)
        try:
            return await asyncio.wait_for(waiting, RELAY_TIMEOUT)
        except TimeoutError:
            return []
        finally:
            self._waiting.pop(request_id, None)


def _fds_to_env(sockets: list[socket.socket]) -> str:
    return ",".join(str(sock.fileno()) for sock in sockets)


def spawn(count: int, tcp: socket.socket, udp: socket.socket) -> list[object]:
    """Start *count* more processes on *tcp* and *udp* (``doikit serve``'s own
    configuration is in the environment); the processes, to be ended with :func:`end`."""
    import subprocess  # noqa: PLC0415

    env = dict(
        os.environ, DOIKIT_NATIVE_FDS=_fds_to_env([tcp, udp]), DOIKIT_NATIVE_PARENT=str(os.getpid())
    )
    return [
        subprocess.Popen(
            [sys.executable, "-m", "doikit.server._native_lanes"],
            pass_fds=(tcp.fileno(), udp.fileno()),
            env=env,
            stdin=subprocess.DEVNULL,
        )
        for _ in range(count)
    ]


def end(processes: list[object]) -> None:
    """End the processes :func:`spawn` started."""
    import subprocess  # noqa: PLC0415

    for process in processes:
        with contextlib.suppress(OSError):
            cast("subprocess.Popen[bytes]", process).terminate()
    for process in processes:
        try:
            cast("subprocess.Popen[bytes]", process).wait(5)
        except subprocess.TimeoutExpired:
            cast("subprocess.Popen[bytes]", process).kill()


async def _other_process() -> None:
    from doikit.server._native import NativeConfig  # noqa: PLC0415
    from doikit.server.stores import open_store  # noqa: PLC0415

    config = NativeConfig.from_env()
    if config is None or config.relay is None:
        raise SystemExit("doikit: the native protocol's lanes are started by doikit serve")
    tcp_fd, udp_fd = (int(fd) for fd in os.environ["DOIKIT_NATIVE_FDS"].split(","))
    tcp = socket.socket(fileno=tcp_fd)
    udp = socket.socket(fileno=udp_fd)
    store = open_store(os.environ["DOIKIT_STORE"])
    await store.open()
    try:
        serial = config.site(b"").serial_number
        service = RelayedService(store, serial)
        await service.connect(config.relay)
        lanes = Lanes(
            asyncio.get_running_loop(),
            store,
            service,
            serial,
            tcp=tcp,
            udp=udp,
            shares=config.processes,
        )
        lanes.start()
        await service.lost.wait()  # the first process ended: so does this one
        lanes.close()
    finally:
        await store.close()


def main() -> None:
    """A process of ``doikit serve --handle-processes`` after the first."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # (Ctrl-C ends the first; this follows)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    with contextlib.suppress(OSError):
        asyncio.run(_other_process())


if __name__ == "__main__":
    main()
