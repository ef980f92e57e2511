"""uvicorn's httptools protocol with :class:`~._limits.Limits` enforced (see there), and
the hot reads answered in it.

Deadlines are kept as times in one table that a sweep reads four times a second, not as a
timer per request: arming and cancelling a loop timer twice per request cost about a
quarter of the read benchmark's throughput (BENCHMARKS.md).

The two hot reads (``GET /api/handles/{doi}`` and ``GET /{doi}`` on a plain path, see
:mod:`._fast`) are answered as soon as their head is in, when the app can answer them
without waiting (:attr:`GuardedProtocol.answer`, set by the ``doikit serve`` app over
SQLite): the reply is written in one piece, without the ASGI task, messages and checks
that cost a read most of its time. It is the reply the ASGI layer would send, byte for
byte (the same function makes it; uvicorn's status line, date and keep-alive rules are
followed here), and the request goes the usual way whenever anything else is in play: a
response still going out (pipelining), an upgrade, another method, a query.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, ClassVar, Final

import uvicorn
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from doikit.server._limits import Limits

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable

    from uvicorn.config import Config
    from uvicorn.server import ServerState

    from doikit.server._fast import Reply


class _HeadTooBigError(Exception):
    """Raised inside the parser's callback to stop it."""


class _Done:
    """What uvicorn's protocol finds as its current request cycle after a reply written
    here: a complete one (a body still arriving is dropped, as after any early answer)."""

    response_complete = True
    disconnected = False
    keep_alive = True
    more_body = False

    class message_event:  # noqa: N801 - the attribute uvicorn sets on disconnect
        """No one waits on it."""

        @staticmethod
        def set() -> None:
            """Nothing to wake."""


_DONE: Any = _Done()


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the head and body deadlines, the head size and
    the connection cap of :class:`Limits` (read once per worker from the environment)."""

    limits: ClassVar[Limits | None] = None
    # Connections that have not sent a complete head, oldest first (dicts keep order).
    waiting: ClassVar[dict[GuardedProtocol, None]] = {}
    # Connections receiving a request's body: when its head ended (loop time), oldest first.
    bodies: ClassVar[dict[GuardedProtocol, float]] = {}
    # Each connection's deadline (loop time), while one runs; read by the sweep.
    deadlines: ClassVar[dict[GuardedProtocol, float]] = {}
    sweeping: ClassVar[asyncio.AbstractEventLoop | None] = None
    # The app's synchronous answer to a hot read (the request target as sent), or None.
    answer: ClassVar[Callable[[bytes], Reply | None] | None] = None

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        if GuardedProtocol.limits is None:
            GuardedProtocol.limits = Limits.from_env().resolved()
        self._limits = GuardedProtocol.limits
        self._head_seen = 0
        self._waiting = False
        self._head_too_big = False
        self._body_in = False
        self._body_bytes = 0
        self._answered = False

    # --- the connection ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Admit the connection, making room by closing the oldest waiting one at the cap."""
        if len(self.connections) >= self._limits.connections:
            # The oldest connection that waits for a head and has nothing left to send (a
            # response still being delivered is never cut).
            oldest = next(
                (
                    waiting
                    for waiting in GuardedProtocol.waiting
                    if not waiting.transport.get_write_buffer_size()
                ),
                None,
            ) or next(
                (slow for slow in GuardedProtocol.bodies if slow.body_too_slow(self.loop.time())),
                None,
            )
            if oldest is None:
                transport.abort()  # every connection is busy with a request
                return
            oldest.transport.abort()
            GuardedProtocol.waiting.pop(oldest, None)
            GuardedProtocol.bodies.pop(oldest, None)
        super().connection_made(transport)
        if GuardedProtocol.sweeping is not self.loop:
            GuardedProtocol.sweeping = self.loop
            self.loop.call_later(_SWEEP, _sweep, self.loop)
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        """Forget the connection and its timers."""
        GuardedProtocol.waiting.pop(self, None)
        GuardedProtocol.bodies.pop(self, None)
        self._cancel()
        if self.transport is not None:
            super().connection_lost(exc)

    # --- the head ---------------------------------------------------------------------------

    def _await_head(self) -> None:
        GuardedProtocol.waiting[self] = None
        self._waiting = True
        self._head_seen = 0
        self._arm(self._limits.head_timeout)

    def data_received(self, data: bytes) -> None:
        """Count the head's bytes, parse, and refuse a head that is still incomplete after
        more than its size: the parser has seen at most one read beyond the limit."""
        if self._waiting:
            self._head_seen += len(data)
        super().data_received(data)
        if self._waiting and self._head_seen > self._limits.head_bytes:
            self._refuse_head()

    def send_400_response(self, msg: str) -> None:
        """Uvicorn's answer to a request the parser refused; 431 when it was the head's
        size that stopped the parser (:meth:`on_headers_complete`)."""
        if self._head_too_big:
            self._refuse_head()
        else:
            super().send_400_response(msg)

    def _refuse_head(self) -> None:
        self._waiting = False
        GuardedProtocol.waiting.pop(self, None)
        self._cancel()
        message = f"the request head is over {self._limits.head_bytes} bytes"
        self.transport.write(
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain\r\n"
            b"content-length: "
            + str(len(message)).encode()
            + b"\r\nconnection: close\r\n\r\n"
            + message.encode()
        )
        self.transport.close()

    def on_headers_complete(self) -> None:
        """The head is in: from now the request's deadline counts (its body arriving and
        the app answering). A head over its size that arrived whole stops the parser here
        (uvicorn then calls :meth:`send_400_response`)."""
        if self._head_seen > self._limits.head_bytes:  # the read that ended it was large
            size = len(self.url) + sum(len(k) + len(v) + 4 for k, v in self.headers)
            if size > self._limits.head_bytes:
                self._head_too_big = True
                raise _HeadTooBigError
        self._waiting = False
        GuardedProtocol.waiting.pop(self, None)
        # A reply written here arms uvicorn's keep-alive timer (on_response_complete); a
        # request pipelined behind it in the same read must not run under that timer.
        self._unset_keepalive_if_required()
        self._arm(self._limits.request_timeout)
        self._body_bytes = 0
        GuardedProtocol.bodies[self] = self.loop.time()
        if GuardedProtocol.answer is not None and self._answer_now(GuardedProtocol.answer):
            return
        super().on_headers_complete()

    def _answer_now(self, answer: Callable[[bytes], Reply | None]) -> bool:
        """Write the reply to a hot read now, in one piece, if the app has it at hand."""
        parser = self.parser
        method = parser.get_method()
        if (
            (method != b"GET" and method != b"HEAD")  # noqa: PLR1714 - bytes, not a set
            or self.pipeline
            or self.flow.write_paused  # the client is not reading: wait as the usual way does
            or self.transport.is_closing()
            or (self.cycle is not None and not self.cycle.response_complete)
            or self.root_path
            or parser.should_upgrade()
        ):
            return False
        try:
            reply = answer(self.url)
        except Exception:  # noqa: BLE001 - the usual way answers, or reports, it
            return False
        if reply is None:
            return False
        status, headers, body = reply
        keep_alive = parser.get_http_version() != "1.0" and parser.should_keep_alive()
        out = [STATUS_LINE[status]]
        for name, value in (*self.server_state.default_headers, *headers):
            out += (name, b": ", value, b"\r\n")
        if not keep_alive:
            out.append(b"connection: close\r\n")
        out.append(b"\r\n")
        if method == b"GET":
            out.append(body)
        self.transport.write(b"".join(out))
        self.cycle = _DONE
        if not keep_alive:
            self.transport.close()
        self.on_response_complete()
        return True

    def on_message_begin(self) -> None:
        """A request starts: its body is not in yet."""
        self._body_in = False
        super().on_message_begin()

    def on_body(self, body: bytes) -> None:
        """Count the body's bytes for its rate."""
        self._body_bytes += len(body)
        super().on_body(body)

    def body_too_slow(self, now: float) -> bool:
        """Whether this connection's body has arrived below the body rate since its head."""
        started = GuardedProtocol.bodies.get(self)
        if started is None or not self._limits.body_rate:
            return False
        if self.flow.read_paused:  # the app is not reading it yet: no fault of the client
            return False
        return self._body_bytes < self._limits.body_rate * (now - started)

    def on_message_complete(self) -> None:
        """The body is in; if the response went out already, the next head may come."""
        GuardedProtocol.bodies.pop(self, None)
        self._body_in = True
        super().on_message_complete()
        if self._answered:
            self._next_head()

    def on_response_complete(self) -> None:
        """The response went out; once the request's body is in too (an app may answer
        before reading it, as a refusal does), the next head may come. uvicorn resumes
        reading here whatever is queued; with more than :data:`_PIPELINE` pipelined
        requests waiting, reading stays paused until they are answered, so a client that
        sends without reading holds a bounded amount of memory."""
        self._answered = True
        super().on_response_complete()
        if len(self.pipeline) > _PIPELINE:
            self.flow.pause_reading()
        if self._body_in:
            self._next_head()
        elif (
            GuardedProtocol.deadlines.get(self, 0.0) > self.loop.time() + self._limits.body_timeout
        ):
            # Answered before its body came in (a refusal): the rest of the body gets the
            # body's deadline, not the request's.
            self._arm(self._limits.body_timeout)

    def _next_head(self) -> None:
        """Wait for the next request's head, within the deadline (unless it is in already,
        pipelined)."""
        self._answered = False
        busy = self.cycle is not None and not self.cycle.response_complete
        if not busy and not self.pipeline and not self.transport.is_closing():
            self._await_head()

    # --- timers -----------------------------------------------------------------------------

    def _arm(self, seconds: float) -> None:
        GuardedProtocol.deadlines[self] = self.loop.time() + seconds

    def _cancel(self) -> None:
        GuardedProtocol.deadlines.pop(self, None)

    def _expire(self) -> None:
        self._waiting = False
        GuardedProtocol.deadlines.pop(self, None)
        GuardedProtocol.waiting.pop(self, None)
        GuardedProtocol.bodies.pop(self, None)
        if not self.transport.is_closing():
            self.transport.close()


# Pipelined requests a connection may have waiting before reading pauses (uvicorn queues
# every request it has parsed; a read of 64 KiB can hold hundreds).
_PIPELINE = 32

# How often the deadlines are read, in seconds: a deadline is kept within this much.
_SWEEP = 0.25


def _sweep(loop: asyncio.AbstractEventLoop) -> None:
    """Close every connection past its deadline, and every one whose body has been arriving
    below the body rate for longer than the grace; run again in :data:`_SWEEP` seconds."""
    now = loop.time()
    late = [p for p, at in GuardedProtocol.deadlines.items() if at <= now]
    late += [
        p
        for p, started in GuardedProtocol.bodies.items()
        if now - started > p._limits.body_grace and p.body_too_slow(now)  # noqa: SLF001
    ]
    for protocol in late:
        protocol._expire()  # noqa: SLF001 - the sweep is the class's own timer
    if not loop.is_closed():
        loop.call_later(_SWEEP, _sweep, loop)


# --- what is borrowed from uvicorn ----------------------------------------------------------

#: uvicorn's version GuardedProtocol was written against and tested with.
WRITTEN_FOR: Final = "0.54"
#: HttpToolsProtocol's methods GuardedProtocol calls or overrides (beyond the asyncio
#: protocol's own), and the state it reads from an instance.
_BORROWED_METHODS: Final = (
    "_unset_keepalive_if_required",
    "on_message_begin",
    "on_headers_complete",
    "on_body",
    "on_message_complete",
    "on_response_complete",
    "send_400_response",
)
_BORROWED_STATE: Final = ("connections", "server_state", "root_path", "pipeline", "parser", "loop")


def missing_members() -> list[str]:
    """What of uvicorn's ``HttpToolsProtocol`` this module borrows that the installed
    uvicorn lacks: empty when :class:`GuardedProtocol` fits it. The state an instance
    holds is read from what ``__init__`` assigns (making one would load a config and make
    an event loop in the process that serves)."""
    missing = [
        name for name in _BORROWED_METHODS if not callable(getattr(HttpToolsProtocol, name, None))
    ]
    if 200 not in STATUS_LINE:
        missing.append("STATUS_LINE")
    try:
        made = inspect.getsource(HttpToolsProtocol.__init__)
    except (OSError, TypeError):  # no source installed: the methods are all it can tell
        return missing
    missing += [
        name
        for name in _BORROWED_STATE
        if f"self.{name} " not in made and f"self.{name}:" not in made
    ]
    return missing


def http_protocol() -> tuple[type[HttpToolsProtocol] | str, str | None]:
    """The HTTP protocol for uvicorn: :class:`GuardedProtocol` when it fits the installed
    uvicorn, else uvicorn's own (``"httptools"``) with the warning to print, since the
    limits and the hot reads are then off."""
    missing = missing_members()
    if not missing:
        return GuardedProtocol, None
    warning = (
        f"doikit serve: uvicorn {uvicorn.__version__} lacks {', '.join(missing)} (doikit's"
        f" HTTP protocol was written for uvicorn {WRITTEN_FOR}): serving with uvicorn's own"
        " protocol, without doikit's head and body deadlines, connection cap and fast reads;"
        f" install uvicorn {WRITTEN_FOR}.x to have them"
    )
    return "httptools", warning
