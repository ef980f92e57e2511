"""The native Handle protocol in ``doikit serve`` (handle-protocol.md §1, §14, §17): the
same store answered over UDP and TCP on ``--handle-port``, as a prefix's handle server.

:class:`NativeService` turns a decoded request into its response (no I/O); the endpoints
of :mod:`._native_endpoints` move the bytes.

Served: GET_SITE_INFO (this server's ``HS_SITE``), RESOLUTION (type and index filters;
public-only answers hide values without public read exactly as the REST API does; a
prefix this server does not home is answered 301, as CNRI's server answers), and with an
administrator (:mod:`._native_admin`) challenges, sessions and every change. On a store
that reads on threads of its own, the common resolution is answered by the lanes of
:mod:`._native_lanes`, on every core; everything else by the endpoints here.

Hostile input: a message is at most 262,144 bytes (the protocol's limit; a length field
claiming more is refused before anything is read), a TCP connection that sends nothing
whole within ``TCP_IDLE`` seconds is closed, UDP requests of several packets wait at most a
few seconds for the rest, and what one address may be sent over UDP is limited by a byte
budget: no amplification beyond a few answers per second (:mod:`._native_endpoints`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol

from doikit._syntax import fold
from doikit.handle import (
    DIGEST_SHA256,
    INTERFACE_ADMIN,
    INTERFACE_QUERY,
    PROTOCOL_HTTP,
    PROTOCOL_TCP,
    PROTOCOL_UDP,
    RC_AUTHEN_TIMEOUT,
    RC_ERROR,
    RC_HANDLE_NOT_FOUND,
    RC_INSUFFICIENT_PERMISSIONS,
    RC_INVALID_ADMIN,
    RC_OPERATION_NOT_SUPPORTED,
    RC_PROTOCOL_ERROR,
    RC_SERVER_BACKUP,
    RC_SERVER_NOT_RESP,
    RC_SESSION_MESSAGE_REJECTED,
    RC_VALUES_NOT_FOUND,
    ChallengeAnswerRequest,
    ChallengeResponse,
    Credential,
    ErrorResponse,
    GetSiteInfoRequest,
    HandleWireError,
    Interface,
    OpFlag,
    RequestDigest,
    ResolutionRequest,
    ResolutionResponse,
    ServerInfo,
    SessionSetupRequest,
    SessionSetupResponse,
    SessionTerminateRequest,
    SiteInfo,
    SiteInfoResponse,
    SuccessResponse,
    VerifyChallengeRequest,
    VerifyChallengeResponse,
    decode,
    encode,
    filter_values,
    request_digest,
    signed_content,
)
from doikit.server._http import Refused
from doikit.server._native_admin import ADMIN_REQUESTS, CHANGES, Challenges, homes
from doikit.server._native_endpoints import TcpEndpoint, UdpEndpoint
from doikit.server._native_fast import EXPIRATION, FastResolution
from doikit.server._native_sessions import Sessions

if TYPE_CHECKING:
    import socket
    from collections.abc import Callable, Coroutine

    from doikit.handle import Message
    from doikit.server._auth import Authority, Caller
    from doikit.server._native_admin import NativeAdmin
    from doikit.server._native_keys import ServerKey
    from doikit.server._writes import Writes
    from doikit.server.stores import Store

log = logging.getLogger("doikit.server")


class SiteServer(NamedTuple):
    """One server of a site as ``HS_SITE`` lists it: its id, address, native port (UDP and
    TCP) and HTTP port."""

    server_id: int
    host: str
    port: int
    http_port: int | None = None

    @classmethod
    def parse(cls, text: str) -> SiteServer:
        """``ID=HOST:PORT`` or ``ID=HOST:PORT:HTTPPORT`` (an IPv6 host in brackets).

        >>> SiteServer.parse("2=192.0.2.7:2641:8000")
        SiteServer(server_id=2, host='192.0.2.7', port=2641, http_port=8000)

        :raises ValueError: saying what is wrong.
        """
        given, equals, rest = text.partition("=")
        host, _, ports = rest.rpartition("]") if rest.startswith("[") else ("", "", rest)
        if host:
            host, ports = host[1:], ports.removeprefix(":")
        else:
            host, _, ports = rest.partition(":")
        numbers = ports.split(":")
        if not equals or not given.isdigit() or not host or not 1 <= len(numbers) <= 2:
            msg = f"{text!r} is not ID=HOST:PORT or ID=HOST:PORT:HTTPPORT"
            raise ValueError(msg)
        if not all(n.isdigit() and 0 < int(n) < 65536 for n in numbers):
            msg = f"{text!r}: a port is a number from 1 to 65535"
            raise ValueError(msg)
        ipaddress.ip_address(host)  # raises ValueError naming it
        http = int(numbers[1]) if len(numbers) == 2 else None
        return cls(int(given), host, int(numbers[0]), http)


def build_site(
    servers: list[SiteServer], public_key: bytes = b"", *, primary: bool = True
) -> SiteInfo:
    """The ``HS_SITE`` of *servers*, which share the server key *public_key*: UDP (query)
    and TCP and HTTP (query, and admin on a primary site) on their ports.

    >>> site = build_site([SiteServer(1, "127.0.0.1", 2641)])
    >>> [(i.protocol, i.port) for i in site.servers[0].interfaces]
    [(0, 2641), (1, 2641)]
    """
    kind = INTERFACE_ADMIN | INTERFACE_QUERY if primary else INTERFACE_QUERY
    entries = []
    for server in servers:
        interfaces = [
            Interface(INTERFACE_QUERY, PROTOCOL_UDP, server.port),
            Interface(kind, PROTOCOL_TCP, server.port),
        ]
        if server.http_port is not None:
            interfaces.append(Interface(kind, PROTOCOL_HTTP, server.http_port))
        anywhere = server.host in ("", "0.0.0.0", "localhost")  # noqa: S104 - every address
        address = ipaddress.ip_address("127.0.0.1" if anywhere else server.host)
        entries.append(ServerInfo(server.server_id, address, public_key, tuple(interfaces)))
    desc = "doikit serve" if primary else "doikit serve (mirror)"
    return SiteInfo(tuple(entries), serial_number=1, primary=primary, attributes=(("desc", desc),))


def site_for(
    host: str, port: int, http_port: int | None = None, public_key: bytes = b""
) -> SiteInfo:
    """The ``HS_SITE`` of a one-server primary site at *host* (:func:`build_site`)."""
    return build_site([SiteServer(1, host, port, http_port)], public_key)


class NativeService:
    """The answers of one server over one store (sans-IO: requests in, responses out)."""

    def __init__(
        self,
        store: Store,
        site: SiteInfo,
        *,
        admin: NativeAdmin | None = None,
        key: ServerKey | None = None,
        mirror: bool = False,
    ) -> None:
        self.store = store
        self.site = site
        self.admin = admin
        self.key = key
        self.mirror = mirror
        self.challenges = Challenges()
        self.sessions = Sessions()
        get_now = getattr(store, "get_now", None)
        self._fast = None if get_now is None else FastResolution(get_now, site.serial_number)

    def _finish(self, response: Message, request: Message, **extra: Any) -> Message:  # noqa: ANN401 - fields of the message
        """*response* with the envelope and header fields an answer to *request* carries
        (§17), its request digest when asked (RD), signed when asked (CT) and a key is at
        hand."""
        flags = (request.op_flags | OpFlag.AUTHORITATIVE) & ~OpFlag.CONTINUOUS
        fields: dict[str, Any] = {
            "request_id": request.request_id,
            "session_id": request.session_id,
            "op_flags": flags,
            "site_info_serial": self.site.serial_number,
            "expiration": int(time.time()) + EXPIRATION,
            "request_digest": None,
            "credential": None,
        }
        if request.op_flags & OpFlag.REQUEST_DIGEST:
            fields["request_digest"] = request_digest(request)
        fields.update(extra)
        done = dataclasses.replace(response, **fields)
        # In a session the MAC stands for a signature (CNRI's server signs nothing there).
        in_session = bool(request.session_id) and self.sessions.get(request.session_id) is not None
        if request.op_flags & OpFlag.CERTIFY and self.key is not None and not in_session:
            signature = self.key.sign(signed_content(done, 0))
            done = dataclasses.replace(
                done, credential=Credential("HS_SIGNED", "SHA-256", signature)
            )
        return done

    def error(self, request: Message, code: int, message: str, **extra: Any) -> Message:  # noqa: ANN401 - as _finish
        """An error response to *request*."""
        return self._finish(ErrorResponse(request.op_code, code, message), request, **extra)

    async def answer(self, request: Message) -> list[Message]:
        """The responses to one decoded request (several for a long listing)."""
        if request.response_code != 0:
            return [self.error(request, RC_PROTOCOL_ERROR, "a response is not a request")]
        if isinstance(request, GetSiteInfoRequest):
            return [self._finish(SiteInfoResponse(site=self.site), request)]
        if isinstance(request, ResolutionRequest) and not request.session_id:
            return [await self._resolve(request)]
        if self.admin is not None:
            return await self._administer(request)
        return [
            self.error(
                request,
                RC_OPERATION_NOT_SUPPORTED,
                f"doikit serve does not do operation {request.op_code} over the native protocol"
                " yet; its REST API (/api/handles) does",
            )
        ]

    async def _administer(self, request: Message) -> list[Message]:
        """Sessions, challenges and the changes they authorize."""
        assert self.admin is not None  # noqa: S101 - only called with one
        if isinstance(request, SessionSetupRequest):
            session_id = self.challenges.next_id()
            data = self.sessions.setup(request, session_id)
            if isinstance(data, int):
                return [self.error(request, data, "only Diffie-Hellman sessions (mode 4)")]
            setup = SessionSetupResponse(request.key_exchange_mode, data)
            return [self._finish(setup, request, session_id=session_id)]
        if isinstance(request, ChallengeAnswerRequest):
            return await self._answered(request)
        if isinstance(request, VerifyChallengeRequest):
            # Another server asks whether a secret-key answer of an identity held here is
            # right (§11.2); the same throttle as any answer.
            data = request.nonce + request.challenge_digest.digest
            valid = await self.admin.proves(
                request.identity_handle,
                request.identity_index,
                "HS_SECKEY",
                request.signed_response,
                data,
            )
            return [self._finish(VerifyChallengeResponse(valid), request)]
        session = self.sessions.get(request.session_id) if request.session_id else None
        if session is not None and not self.sessions.authentic(session, request):
            return [self.error(request, RC_SESSION_MESSAGE_REJECTED, "no valid session MAC")]
        if isinstance(request, SessionTerminateRequest):
            self.sessions.end(request.session_id)
            return [self._finish(SuccessResponse(request.op_code), request)]
        if isinstance(request, ResolutionRequest):
            return [await self._resolve(request, session.caller if session else None)]
        if self.mirror and isinstance(request, CHANGES):
            return [self.error(request, RC_SERVER_BACKUP, "a mirror: send changes to the primary")]
        if isinstance(request, ADMIN_REQUESTS):
            if session is not None and session.caller is not None:
                return await self._carry_out(request, session.caller, request)
            return [self._challenge(request, request.session_id if session else None)]
        return [self.error(request, RC_OPERATION_NOT_SUPPORTED, f"no operation {request.op_code}")]

    def _challenge(self, request: Message, session_id: int | None) -> Message:
        session_id, pending = self.challenges.new(request, session_id)
        challenge = ChallengeResponse(request.op_code, pending.nonce)
        return self._finish(
            challenge,
            request,
            session_id=session_id,
            op_flags=request.op_flags | OpFlag.AUTHORITATIVE | OpFlag.REQUEST_DIGEST,
            request_digest=RequestDigest(DIGEST_SHA256, pending.digest),
        )

    async def _answered(self, answer: ChallengeAnswerRequest) -> list[Message]:
        assert self.admin is not None  # noqa: S101 - only called with one
        pending = self.challenges.take(answer.session_id)
        if pending is None:
            return [self.error(answer, RC_AUTHEN_TIMEOUT, "no challenge waits for this answer")]
        session = self.sessions.get(answer.session_id)
        original = pending.request
        # The answer to the original request goes out under the 200 message's ids (and the
        # session's, in a session).
        reply_to = dataclasses.replace(
            original,
            request_id=answer.request_id,
            session_id=answer.session_id if session is not None else 0,
        )
        caller = await self.admin.identify(answer, pending)
        if isinstance(caller, tuple):
            return [self.error(reply_to, *caller)]
        if session is not None:
            session.caller = caller
        return await self._carry_out(original, caller, reply_to)

    async def _carry_out(
        self, request: Message, caller: Caller, reply_to: Message
    ) -> list[Message]:
        assert self.admin is not None  # noqa: S101 - only called with one
        if isinstance(reply_to, ResolutionRequest):  # a read of values without public read
            return [await self._resolve(reply_to, caller)]
        try:
            responses = await self.admin.carry_out(request, caller)
        except Refused as exc:
            code = exc.response_code
            handle = getattr(request, "handle", "")
            if code == RC_INSUFFICIENT_PERMISSIONS and not await self.admin.authority.administers(
                caller, handle
            ):
                code = RC_INVALID_ADMIN  # no admin at all, as CNRI's server tells them apart
            return [self.error(reply_to, code, exc.message or "")]
        last = len(responses) - 1
        return [
            self._finish(
                response,
                reply_to,
                op_flags=(reply_to.op_flags | OpFlag.AUTHORITATIVE)
                | (OpFlag.CONTINUOUS if i < last else 0),
            )
            for i, response in enumerate(responses)
        ]

    async def _resolve(self, request: ResolutionRequest, caller: Caller | None = None) -> Message:
        handle = request.handle
        prefix, slash, suffix = handle.partition("/")
        if not slash:
            prefix, suffix = "0.NA", handle  # a slash-less name is a prefix handle (§16.2)
        stored = await self.store.get(fold(handle if slash else "0.NA/" + handle))
        if stored is None:  # (a name held makes its prefix homed: asked only without one)
            if not await homes(self.store, suffix if prefix.upper() == "0.NA" else prefix):
                return self.error(request, RC_SERVER_NOT_RESP, "That prefix doesn't live here")
            return self.error(request, RC_HANDLE_NOT_FOUND, "")
        values = stored.values()
        if request.op_flags & OpFlag.PUBLIC_ONLY:
            values = tuple(v for v in values if v.public_read)
        elif not all(v.public_read for v in values):
            # Values without public read: an identity with read_value may see them (§17).
            if caller is None:
                if self.admin is None:
                    return self.error(
                        request, RC_INSUFFICIENT_PERMISSIONS, "not without an identity"
                    )
                return self._challenge(request, request.session_id or None)
            assert self.admin is not None  # noqa: S101 - a caller comes from one
            try:
                await self.admin.authority.may_read_all(caller, prefix, values)
            except Refused as exc:
                return self.error(request, exc.response_code, exc.message or "")
        values = filter_values(values, request.types, request.indexes)
        if not values:
            return self.error(request, RC_VALUES_NOT_FOUND, "")
        return self._finish(ResolutionResponse(handle, values), request)

    def answer_now(self, unit: bytes) -> bytes | None:
        """The answer to the common request, made at once from bytes, or ``None`` for the
        full path (:mod:`._native_fast`)."""
        return None if self._fast is None else self._fast.answer(unit)

    async def answer_bytes(self, unit: bytes) -> list[bytes]:
        """The encoded responses to one encoded request (envelope + message); none when
        nothing can be answered (not even a request id could be read)."""
        try:
            request = decode(unit)
        except HandleWireError as exc:
            error = _protocol_error(unit, str(exc))
            return [] if error is None else [error]
        try:
            return [encode(response) for response in await self.answer(request)]
        except HandleWireError as exc:  # a value this build cannot put on the wire
            return [encode(self.error(request, RC_ERROR, f"the answer cannot be encoded: {exc}"))]
        except Exception:  # a bug: logged once, answered as CNRI answers one (rc 2)
            log.exception("native protocol: unexpected error on operation %s", request.op_code)
            return [encode(self.error(request, RC_ERROR, "unexpected server error"))]


def _protocol_error(unit: bytes, detail: str) -> bytes | None:
    """A PROTOCOL_ERROR response to bytes that did not decode, echoing what of the envelope
    and header could be read."""
    if len(unit) < 28:
        return None
    request_id = int.from_bytes(unit[8:12], "big", signed=True)
    session_id = int.from_bytes(unit[4:8], "big", signed=True)
    op_code = int.from_bytes(unit[20:24], "big", signed=True)
    try:
        return encode(
            ErrorResponse(
                op_code=op_code,
                response_code=RC_PROTOCOL_ERROR,
                message=detail[:400],
                request_id=request_id,
                session_id=session_id,
                op_flags=OpFlag.AUTHORITATIVE,
                expiration=int(time.time()) + EXPIRATION,
            )
        )
    except HandleWireError:
        return None


@dataclass(frozen=True)
class NativeConfig:
    """How ``doikit serve`` speaks the native protocol: where, in which site, and whether as
    a mirror; handed to uvicorn's worker in the environment, as :class:`~._limits.Limits`."""

    host: str
    port: int
    http_port: int | None = None
    keys: str | None = None  # the directory of the server key and the sealing key
    servers: tuple[SiteServer, ...] = ()  # the site's servers; () = this one alone
    server_id: int = 1
    mirror: bool = False
    processes: int = 1  # processes answering on the sockets (:mod:`._native_lanes`)
    relay: str | None = None  # the first process's local socket, for the others
    upstream: str | None = None  # the Handle System's root: "" the published, or HOST:PORT

    def site(self, public_key: bytes) -> SiteInfo:
        """This server's ``HS_SITE``."""
        servers = list(self.servers) or [
            SiteServer(self.server_id, self.host, self.port, self.http_port)
        ]
        return build_site(servers, public_key, primary=not self.mirror)

    def to_env(self) -> None:
        """Hand the configuration to the worker process."""
        os.environ[_ENV] = json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_env(cls) -> NativeConfig | None:
        """The configuration :meth:`to_env` handed over, or ``None``."""
        text = os.environ.get(_ENV)
        if not text:
            return None
        given = json.loads(text)
        given["servers"] = tuple(SiteServer(*server) for server in given["servers"])
        return cls(**given)


_ENV: Final = "DOIKIT_NATIVE"


def native_service(
    store: Store, writes: Writes, authority: Authority, config: NativeConfig
) -> NativeService:
    """The service of ``doikit serve --handle-port``: its server key and sealing key from
    the directory ``config.keys`` (made there on first start), its site from *config*."""
    from doikit.server._auth import SEALING  # noqa: PLC0415
    from doikit.server._native_admin import NativeAdmin, RemoteIdentities  # noqa: PLC0415
    from doikit.server._native_keys import SERVER_KEY_FILE, ServerKey, seal_key  # noqa: PLC0415

    keys = Path(config.keys) if config.keys is not None else None
    key = ServerKey(keys / SERVER_KEY_FILE) if keys is not None else None
    seal = seal_key(keys) if keys is not None else None
    SEALING.key = seal
    site = config.site(key.public_blob if key is not None else b"")
    remote = None if config.upstream is None else RemoteIdentities(config.upstream or None)
    admin = NativeAdmin(store, writes, authority, seal, remote)
    # A store on a streaming standby is a mirror's, whatever was said (its site says so
    # only when told: --mirror).
    mirror = config.mirror or bool(getattr(store, "standby", False))
    return NativeService(store, site, admin=admin, key=key, mirror=mirror)


async def serve_native(
    store: Store,
    writes: Writes,
    authority: Authority,
    config: NativeConfig,
    sockets: list[socket.socket] | None,
) -> tuple[NativeService, list[Listening]]:
    """The native service of *config*, listening (on *sockets* when given: with lanes
    when the store can read on their threads, :mod:`._native_lanes`; and the relay of
    the other processes when *config* names one)."""
    service = native_service(store, writes, authority, config)
    remote = service.admin.remote if service.admin is not None else None
    closing: list[Listening] = [] if remote is None else [_Closing(remote.close)]
    if not sockets or not hasattr(store, "point_reader"):
        started = await start_native(service, config.host, config.port, sockets=sockets)
        return service, [*started, *closing]
    from doikit.server._native_lanes import Lanes, Relay  # noqa: PLC0415

    lanes = Lanes(
        asyncio.get_running_loop(),
        store,
        service,
        service.site.serial_number,
        tcp=sockets[0],
        udp=sockets[-1],
        shares=config.processes,
    )
    listening: list[Listening] = [lanes, *closing]
    if config.relay is not None:
        relay = Relay(service)
        await relay.start(config.relay)
        listening.insert(0, relay)
    lanes.start()
    return service, listening


class Listening(Protocol):
    """What serves the native protocol until it is closed."""

    def close(self) -> None:
        """Stop serving."""


class _Closing:
    """A coroutine function to close with, as a :class:`Listening` (run as a task)."""

    def __init__(self, aclose: Callable[[], Coroutine[object, object, None]]) -> None:
        self.aclose = aclose
        self.task: asyncio.Task[None] | None = None

    def close(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self.aclose())


async def start_native(
    service: NativeService, host: str, port: int, *, sockets: list[socket.socket] | None = None
) -> list[Listening]:
    """Serve *service* at *host*:*port* over TCP and UDP, on the bound *sockets* when given
    (a listening TCP socket first, a UDP socket last)."""
    loop = asyncio.get_running_loop()
    if sockets:
        server = await loop.create_server(lambda: TcpEndpoint(service), sock=sockets[0])
        udp, _ = await loop.create_datagram_endpoint(lambda: UdpEndpoint(service), sock=sockets[-1])
    else:
        server = await loop.create_server(lambda: TcpEndpoint(service), host, port)
        udp, _ = await loop.create_datagram_endpoint(
            lambda: UdpEndpoint(service), local_addr=(host, port)
        )
    return [server, udp]
