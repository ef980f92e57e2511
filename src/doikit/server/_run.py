"""Running the server (uvicorn) and creating tokens, for the CLI."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import inspect
import os
import shutil
import socket
import sys
import tempfile
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

import uvicorn
from uvicorn.supervisors import Multiprocess

from doikit._syntax import fold
from doikit.handle import values_to_json
from doikit.server._app import create_app
from doikit.server._auth import (
    SEALING,
    hash_token,
    new_secret,
    new_token,
    stored_secret,
    with_key,
    with_member,
)
from doikit.server._limits import Limits
from doikit.server._uvicorn import GuardedProtocol, http_protocol
from doikit.server.stores import Row, default_store_url, open_store

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from doikit.handle import HandleValue
    from doikit.server._native import NativeConfig, SiteServer
    from doikit.server.stores import Store


def app_from_env() -> object:
    """The app for uvicorn's worker processes, configured through the environment; its hot
    reads are answered by :class:`GuardedProtocol` itself when the store allows."""
    app = create_app(
        os.environ["DOIKIT_STORE"],
        ra_name=os.environ.get("DOIKIT_RA", "doikit"),
        demo=os.environ.get("DOIKIT_DEMO") == "1",
        access_log=os.environ.get("DOIKIT_ACCESS_LOG") == "1",
        native=_native_config(),
        native_sockets=NATIVE_SOCKETS or None,
        upstream=os.environ.get("DOIKIT_UPSTREAM"),
    )
    GuardedProtocol.answer = getattr(app, "now", None)
    return app


#: The native protocol's sockets, bound by :func:`run` for the one worker that serves them.
NATIVE_SOCKETS: list[socket.socket] = []


def _native_config() -> NativeConfig | None:
    from doikit.server._native import NativeConfig  # noqa: PLC0415

    return NativeConfig.from_env()


def shown_url(url: str) -> str:
    """A store URL fit to print: any password replaced by ``***``.

    >>> shown_url("postgresql://app:s3cret@db.example/doikit")
    'postgresql://app:***@db.example/doikit'
    """
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(":" + parts.password + "@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def check_store(url: str) -> None:
    """Open and close the store once, so that a bad one is one clear error before serving.

    :raises StoreError: saying what is wrong with it.
    """

    async def work() -> None:
        the_store = open_store(url)
        await the_store.open()
        await the_store.close()

    asyncio.run(work())


#: Connections the kernel queues before the server accepts them (uvicorn's default).
_BACKLOG: Final = 2048


class ListenError(Exception):
    """The server cannot listen where it was asked to; the message says where and why."""


def listen(
    host: str, port: int, *, datagram: bool = False, option: str = "--port"
) -> list[socket.socket]:
    """Sockets bound and listening on every address *host* names, at *port* (0: a free
    port), as asyncio's ``create_server`` would make them, inheritable by uvicorn's workers.

    Bound here, before uvicorn starts, so that a busy port is one clear error and the ready
    line can say that the server listens. *datagram*: UDP sockets, bound (the native
    Handle protocol's); *option* is named in the error.

    :raises ListenError: saying which address, and why.
    """
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        kind = socket.SOCK_DGRAM if datagram else socket.SOCK_STREAM
        found = socket.getaddrinfo(host or None, port, type=kind, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ListenError(f"cannot listen on {where}: {exc.strerror}") from None
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(found):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            if os.name == "posix":  # restart at once, past the old connections' TIME_WAIT
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # :: is IPv6 only, as asyncio binds it
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            if not datagram:
                sock.listen(_BACKLOG)
            sock.set_inheritable(True)
    except OSError as exc:
        for sock in sockets:
            sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ListenError(
                f"{where} is in use: another program listens there (choose another {option})"
            ) from None
        raise ListenError(f"cannot listen on {where}: {exc.strerror or exc}") from None
    return sockets


def run(
    *,
    store: str | None,
    host: str,
    port: int,
    workers: int,
    demo: bool,
    ra_name: str,
    limits: Limits | None = None,
    access_log: bool = False,
    handle_port: int | None = None,
    handle_processes: int | None = None,
    site_servers: Sequence[SiteServer] = (),
    server_id: int = 1,
    mirror: bool = False,
    upstream: str | None = None,
) -> None:
    """Serve until interrupted: uvicorn with uvloop and httptools, the limits enforced.

    The ready line goes to stdout once the sockets listen: a request sent from then on
    waits in the kernel's queue until the app has opened the store and answers it.

    :raises StoreError: before serving, when the store cannot be opened.
    :raises ListenError: before serving, when *host* and *port* cannot be listened on.
    """
    url = store or default_store_url()
    check_store(url)
    os.environ["DOIKIT_STORE"] = url
    os.environ["DOIKIT_RA"] = ra_name
    os.environ["DOIKIT_DEMO"] = "1" if demo else "0"
    os.environ["DOIKIT_ACCESS_LOG"] = "1" if access_log else "0"
    if upstream is not None:  # "" for the published root
        os.environ["DOIKIT_UPSTREAM"] = upstream
    (limits or Limits()).resolved().to_env()
    sockets = listen(host, port)
    with contextlib.ExitStack() as stack:
        for sock in sockets:
            stack.callback(sock.close)
        port = sockets[0].getsockname()[1]
        native_note = ""
        if handle_port is not None:
            if workers > 1:
                raise ListenError("--handle-port serves from one worker: leave out --workers")
            from doikit.server._native import NativeConfig  # noqa: PLC0415
            from doikit.server._native_keys import keys_dir  # noqa: PLC0415

            native = listen(host, handle_port, option="--handle-port")
            for sock in native:
                stack.callback(sock.close)
            handle_port = native[0].getsockname()[1]
            native += listen(host, handle_port, datagram=True, option="--handle-port")
            stack.callback(native[-1].close)
            NATIVE_SOCKETS[:] = native
            processes, relay = _processes(url, handle_processes, stack)
            NativeConfig(
                host,
                handle_port,
                port,
                keys=str(keys_dir(url)),
                servers=tuple(site_servers),
                server_id=server_id,
                mirror=mirror,
                processes=processes,
                relay=relay,
                upstream=upstream,
            ).to_env()
            if processes > 1:
                from doikit.server import _native_lanes  # noqa: PLC0415

                others = _native_lanes.spawn(processes - 1, native[0], native[-1])
                stack.callback(_native_lanes.end, others)
            native_note = f", the Handle protocol on udp and tcp port {handle_port}"
            if processes > 1:
                native_note += f" ({processes} processes)"
        shown_host = f"[{host}]" if ":" in host else host
        workers_note = f", {workers} workers" if workers > 1 else ""
        print(  # noqa: T201 - the one line that says it is up
            f"doikit serve: listening on http://{shown_host}:{port}, store {shown_url(url)}"
            + native_note
            + workers_note,
            flush=True,
        )
        http, warning = http_protocol()
        if warning is not None:
            print(warning, file=sys.stderr, flush=True)  # noqa: T201 - the operator must know
        config = uvicorn.Config(
            "doikit.server._run:app_from_env",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            http=http,
            log_level="warning",
            access_log=False,
            server_header=False,
            backlog=_BACKLOG,
        )
        with contextlib.suppress(KeyboardInterrupt):  # as uvicorn.run: Ctrl-C ends quietly
            if workers > 1:
                _supervise(config, sockets)
            else:
                server = uvicorn.Server(config)
                server.run(sockets=sockets)
                if not server.started:  # the app did not start (uvicorn.run's exit status)
                    raise SystemExit(3)


def _processes(url: str, asked: int | None, stack: contextlib.ExitStack) -> tuple[int, str | None]:
    """How many processes answer the native protocol, and the path of the first one's
    relay for the others (a private directory, removed at the end): on SQLite *asked* or
    one per CPU; on PostgreSQL one (:mod:`._native_lanes` reads on threads of its own only
    from SQLite).

    :raises ListenError: when more than one is asked for on PostgreSQL.
    """
    from doikit.server._native_lanes import default_processes  # noqa: PLC0415

    if not url.startswith("sqlite:///"):
        if asked is not None and asked > 1:
            raise ListenError("--handle-processes above 1 needs a SQLite store")
        return 1, None
    processes = asked if asked is not None else default_processes()
    if processes == 1 or os.name != "posix":
        return 1, None
    directory = tempfile.mkdtemp(prefix="doikit-relay-")  # (mode 0700)
    stack.callback(shutil.rmtree, directory, ignore_errors=True)
    return processes, os.path.join(directory, "relay")  # noqa: PTH118 - a socket path, as text


def _supervise(config: uvicorn.Config, sockets: list[socket.socket]) -> None:
    """Run ``config.workers`` processes on *sockets* under uvicorn's supervisor, as
    ``uvicorn.run`` does (the supervisor of older uvicorns also takes the worker's target)."""
    supervisor: Any = Multiprocess
    if "target" in inspect.signature(Multiprocess).parameters:
        supervisor(config, target=uvicorn.Server(config).run, sockets=sockets).run()
    else:
        supervisor(config, sockets=sockets).run()


def create_token(store: str | None, prefixes: tuple[str, ...]) -> str:
    """Create a token for *prefixes* in *store*; return it (only its digest is stored)."""
    token = new_token()

    async def work() -> None:
        the_store = open_store(store)
        await the_store.open()
        try:
            await the_store.add_token(hash_token(token), prefixes)
        finally:
            await the_store.close()

    asyncio.run(work())
    return token


async def _change(
    store: Store,
    name: str,
    change: Callable[[tuple[HandleValue, ...]], tuple[HandleValue, ...]],
) -> None:
    """Apply *change* to the values of *name* (none when it does not exist), by
    compare-and-set, as the server's writes are made."""
    while True:
        stored = await store.get(fold(name))
        before = () if stored is None else stored.values()
        shown = name if stored is None else stored.name
        row = Row(fold(name), shown, name.partition("/")[0], values_to_json(change(before)))
        if await store.swap(fold(name), None if stored is None else stored.values_json, row):
            return


def check_public_key(blob: bytes) -> None:
    """Refuse (ValueError) bytes that are no RSA or DSA public key blob."""
    from doikit.handle import DSAPublicKey, HandleWireError, RSAPublicKey, public_key_from_bytes  # noqa: PLC0415

    try:
        key = public_key_from_bytes(blob)
    except HandleWireError as exc:
        raise ValueError(f"the public key file is no Handle key blob: {exc}") from None
    if not isinstance(key, RSAPublicKey | DSAPublicKey):
        raise ValueError("the public key file holds no RSA or DSA key")  # noqa: TRY004 - a bad file, as above


def create_admin(
    store: str | None, index: int, handle: str, prefix: str, public_key: bytes | None = None
) -> str:
    """Make ``index:handle`` an administrator of *prefix* in *store* and return its new
    secret key (only a salted hash is kept): the identity's handle gets the HS_SECKEY value
    at *index*, and the prefix's handle ``0.NA/<prefix>`` its admin group (HS_VLIST 200)
    with the identity in it. Run again, it gives the identity a new key. With *public_key*
    (a key blob as HANDLE.NET's tools write it, RSA or DSA) the identity is that public key,
    an HS_PUBKEY value, and no secret is made ("" is returned).

    :raises ValueError: when *index* of the handle holds a value of another type, or
        *public_key* is no RSA or DSA key blob.
    """
    from doikit.server._native_keys import keys_dir, seal_key  # noqa: PLC0415

    secret = "" if public_key is not None else new_secret()
    if public_key is not None:
        check_public_key(public_key)

    async def work() -> None:
        the_store = open_store(store)
        await the_store.open()  # (a store that cannot be opened says so before any key)
        if public_key is not None:
            kind, data, permissions = "HS_PUBKEY", public_key, "1110"
        else:
            SEALING.key = seal_key(keys_dir(store or default_store_url()))
            kind, data, permissions = "HS_SECKEY", stored_secret(secret).encode(), "1100"
        try:
            await _change(
                the_store,
                handle,
                lambda v: with_key(v, index, kind, data, permissions=permissions, prefix=prefix),
            )
            await _change(
                the_store,
                "0.NA/" + prefix,
                lambda v: with_member(v, index, handle, "0.NA/" + prefix),
            )
        finally:
            await the_store.close()

    asyncio.run(work())
    return secret
