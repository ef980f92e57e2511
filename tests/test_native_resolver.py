"""The native resolver (issue 29) against doikit's own native servers on loopback: a root
`doikit serve` whose store holds prefix handles ``0.NA/<prefix>`` with HS_SITE and HS_SERV
values, two prefix servers, and small test-only peers built with doikit's codec where a
`doikit serve` cannot misbehave on purpose (a referral, a truncated or silent UDP answer).
Real sockets throughout; nothing of doikit is mocked."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import ipaddress
import json
import os
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conftest import DOIKIT, free_port, start_server, stop_server
from doikit import DOIError, DOINotFound, HandleServerError, TransportError
from doikit.client import AsyncClient, Client, Resolved
from doikit.client._native import AsyncNativeResolver, NativeResolver
from doikit.handle import (
    PROTOCOL_HTTP,
    PROTOCOL_TCP,
    PROTOCOL_UDP,
    Express,
    GetSiteInfoRequest,
    HandleRecord,
    HandleValue,
    Interface,
    OpFlag,
    ReferralResponse,
    RequestTemplates,
    ResolutionRequest,
    ResolutionResponse,
    Resolver,
    ServerInfo,
    SiteInfo,
    SiteInfoResponse,
    data_from_wire,
    decode,
    encode,
    encode_datagrams,
    prefix_handle,
    read_answer,
    root_sites,
    signature_problem,
    site_to_bytes,
    values_to_json,
)
from doikit.server import Row, open_store
from test_native_server import udp

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from conftest import Server

BIG_URL = "https://example.org/" + "long/" * 150  # an answer of more than one UDP packet


def _url(name: str) -> str:
    return f"https://example.org/{name}"


def _record(name: str, url: str | None = None) -> HandleValue:
    return HandleValue(1, "URL", (url or _url(name)).encode())


def _site_value(site: SiteInfo, index: int = 1) -> HandleValue:
    return HandleValue(index, "HS_SITE", data_from_wire("HS_SITE", site_to_bytes(site)))


def _write(store: str, records: dict[str, tuple[HandleValue, ...]]) -> None:
    async def put() -> None:
        opened = open_store(store)
        await opened.open()
        try:
            rows = []
            for name, values in records.items():
                prefix = name.partition("/")[0]
                rows.append(Row(name.lower(), name, prefix, values_to_json(values)))
            await opened.put_many(rows)
        finally:
            await opened.close()

    asyncio.run(put())


def _site_of(server_port: int) -> SiteInfo:
    answer = udp(server_port, GetSiteInfoRequest("/"))
    assert isinstance(answer, SiteInfoResponse)
    return answer.site


def _one_server(port_udp: int | None, port_tcp: int | None, key: bytes = b"") -> SiteInfo:
    interfaces = []
    if port_udp is not None:
        interfaces.append(Interface(2, PROTOCOL_UDP, port_udp))
    if port_tcp is not None:
        interfaces.append(Interface(3, PROTOCOL_TCP, port_tcp))
    server = ServerInfo(1, ipaddress.IPv4Address("127.0.0.1"), key, tuple(interfaces))
    return SiteInfo((server,), primary=True)


class Peer:
    """A UDP socket on loopback answered by *answer* (request bytes, sender) in a thread:
    a test-only peer built with doikit's codec."""

    def __init__(self, answer: Callable[[bytes, socket.socket, tuple[str, int]], None]) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = int(self.sock.getsockname()[1])
        self.answer = answer
        self.asked = 0
        self.stopped = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopped:
            try:
                data, addr = self.sock.recvfrom(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            self.asked += 1
            with contextlib.suppress(Exception):
                self.answer(data, self.sock, addr)

    def close(self) -> None:
        self.stopped = True
        self.thread.join(2)
        self.sock.close()


@dataclasses.dataclass
class Network:
    root: Server
    root_port: int
    a: Server
    a_port: int
    b: Server
    b_port: int
    dead_port: int
    peers: dict[str, Peer]

    @property
    def root_address(self) -> str:
        return f"127.0.0.1:{self.root_port}"


def _silent(_data: bytes, _sock: socket.socket, _addr: tuple[str, int]) -> None:
    return


def _referring(site: SiteInfo) -> Callable[[bytes, socket.socket, tuple[str, int]], None]:
    def answer(data: bytes, sock: socket.socket, addr: tuple[str, int]) -> None:
        request = decode(data)
        referral = ReferralResponse(
            op_code=request.op_code,
            response_code=302,
            handle="",
            values=(_site_value(site),),
            request_id=request.request_id,
            op_flags=OpFlag.AUTHORITATIVE,
        )
        for packet in encode_datagrams(referral):
            sock.sendto(packet, addr)

    return answer


def _truncating(upstream: int) -> Callable[[bytes, socket.socket, tuple[str, int]], None]:
    """Asks *upstream* and passes on only the first packet of each answer."""

    def answer(data: bytes, sock: socket.socket, addr: tuple[str, int]) -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as relay:
            relay.settimeout(2)
            relay.sendto(data, ("127.0.0.1", upstream))
            first, _ = relay.recvfrom(65536)
        sock.sendto(first, addr)

    return answer


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Network]:
    here: Path = tmp_path_factory.mktemp("native-resolver")
    stores = {}
    for name in ("root", "a", "b"):  # each in its own directory: the server key lives there
        (here / name).mkdir()
        stores[name] = f"sqlite:///{here / name / 'store.sqlite3'}"
    _write(
        stores["a"],
        {
            "10.5555/found": (_record("10.5555/found"),),
            **{f"10.7777/{i}": (_record(f"10.7777/{i}"),) for i in range(40)},
            "10.8888/signed": (_record("10.8888/signed"),),
            "10.9999/referred": (_record("10.9999/referred"),),
            "10.4444/silent": (_record("10.4444/silent"),),
            "10.3333/big": (_record("10.3333/big", BIG_URL),),
            "10.2222/http": (_record("10.2222/http"),),
            **{f"10.5555/many-{i}": (_record(f"10.5555/many-{i}"),) for i in range(500)},
        },
    )
    _write(stores["b"], {"10.6666/chained": (_record("10.6666/chained"),)})
    ports = {name: free_port() for name in ("root", "a", "b")}
    servers: list[Server] = []
    peers: dict[str, Peer] = {}
    try:
        for name in ("a", "b"):
            options = ("--handle-port", str(ports[name]))
            servers.append(start_server(stores[name], demo=False, options=options))
        site_a, site_b = _site_of(ports["a"]), _site_of(ports["b"])
        key_a, key_b = site_a.servers[0].public_key, site_b.servers[0].public_key
        dead_port = free_port()
        dead = ServerInfo(
            2,
            ipaddress.IPv4Address("127.0.0.1"),
            key_a,
            (Interface(2, PROTOCOL_UDP, dead_port), Interface(3, PROTOCOL_TCP, dead_port)),
        )
        two = dataclasses.replace(site_a, servers=(site_a.servers[0], dead))
        wrong_key = dataclasses.replace(
            site_a, servers=(dataclasses.replace(site_a.servers[0], public_key=key_b),)
        )
        peers["refer"] = Peer(_referring(site_a))
        peers["silent"] = Peer(_silent)
        peers["truncate"] = Peer(_truncating(ports["a"]))
        a_http = int(servers[0].url.rsplit(":", 1)[1])
        only_http = _one_server(peers["silent"].port, dead_port)  # silent UDP, refused TCP
        only_http = dataclasses.replace(
            only_http,
            servers=(
                dataclasses.replace(
                    only_http.servers[0],
                    interfaces=(
                        *only_http.servers[0].interfaces,
                        Interface(3, PROTOCOL_HTTP, a_http),
                    ),
                ),
            ),
        )
        desc = HandleValue(2, "DESC", b"test root")
        _write(
            stores["root"],
            {
                "0.NA/10.5555": (_site_value(site_a),),
                "0.NA/10.6666": (HandleValue(1, "HS_SERV", b"0.SERV/B"),),
                "0.NA/0.SERV": (desc,),
                "0.SERV/B": (_site_value(site_b),),
                "0.NA/10.7777": (_site_value(two),),
                "0.NA/10.8888": (_site_value(wrong_key),),
                "0.NA/10.9999": (_site_value(_one_server(peers["refer"].port, None)),),
                "0.NA/10.4444": (_site_value(_one_server(peers["silent"].port, ports["a"])),),
                "0.NA/10.3333": (_site_value(_one_server(peers["truncate"].port, ports["a"])),),
                "0.NA/10.2222": (_site_value(only_http),),
                "0.NA/10.1111": (HandleValue(1, "HS_SERV", b"0.SERV/LOOP-1"),),
                "0.SERV/LOOP-1": (HandleValue(1, "HS_SERV", b"0.SERV/LOOP-2"),),
                "0.SERV/LOOP-2": (HandleValue(1, "HS_SERV", b"0.SERV/LOOP-1"),),
            },
        )
        options = ("--handle-port", str(ports["root"]))
        servers.append(start_server(stores["root"], demo=False, options=options))
        a, b, root = servers
        yield Network(root, ports["root"], a, ports["a"], b, ports["b"], dead_port, peers)
    finally:
        for peer in peers.values():
            peer.close()
        for server in servers:
            stop_server(server)


def test_a_name_found_through_the_root(network: Network) -> None:
    with Client(root=network.root_address, timeout=10) as client:
        record = client.resolve("10.5555/found")
        assert record.handle == "10.5555/found"
        assert record.first("URL") is not None
        assert client.url("doi:10.5555/FOUND") == _url("10.5555/found")
        with pytest.raises(DOINotFound, match="not found"):
            client.resolve("10.5555/absent")
        with pytest.raises(DOINotFound, match=r"0\.NA/10\.1234 is not registered"):
            client.resolve("10.1234/anything")


def test_an_hs_serv_chain(network: Network) -> None:
    resolver = NativeResolver(network.root_address, timeout=10)
    record = resolver.resolve("10.6666/chained")
    assert record.values[0].data == _url("10.6666/chained").encode()
    # The service handle's sites are kept for their TTL: the next name needs no prefix lookup.
    assert resolver.core.cache.sites("0.NA/10.6666") is not None
    assert resolver.core.cache.sites("0.SERV/B") is not None


def test_an_hs_serv_loop_ends_at_the_depth_limit(network: Network) -> None:
    resolver = NativeResolver(network.root_address, timeout=10)
    with pytest.raises(HandleServerError, match="HS_SERV chain deeper than 20"):
        resolver.resolve("10.1111/loop")


def test_a_referral_loop_ends_at_the_limit() -> None:
    # The sans-IO core alone: every answer a referral back to the same site.
    core = Resolver("127.0.0.1:9")
    site = _one_server(9, None)
    gen = core.resolution("10.5555/x")
    exchange = next(gen)
    assert isinstance(exchange.request, GetSiteInfoRequest)
    exchange = gen.send(SiteInfoResponse(site=site))
    prefix = ResolutionResponse("0.NA/10.5555", (_site_value(site),))
    exchange = gen.send(prefix)
    refer = ReferralResponse(1, 302, "", (_site_value(site),))
    counts = []
    try:
        for _ in range(100):
            exchange = gen.send(refer)
            counts.append(getattr(exchange.request, "recursion_count", None))
    except HandleServerError as exc:
        assert "more than 40 referrals" in str(exc)
    assert counts == list(range(1, 41))  # each referral counted, then given up
    assert str(exchange.target) == "udp://127.0.0.1:9"


def _targets(resolver: NativeResolver, name: str) -> list[str]:
    """The servers asked, in order, resolving *name* (the driver's exchanges, watched)."""
    deadline = time.monotonic() + resolver.timeout
    gen = resolver.core.resolution(name)
    asked = []
    with contextlib.suppress(StopIteration):
        exchange = next(gen)
        while True:
            asked.append(str(exchange.target))
            exchange = gen.send(resolver._exchange(exchange, deadline))
    return asked


def test_a_site_of_two_servers_hash_picks_and_a_dead_one_is_skipped(network: Network) -> None:
    resolver = NativeResolver(network.root_address, timeout=10)
    sites = resolver.core.cache.sites  # filled by the first resolution
    live = f"udp://127.0.0.1:{network.a_port}"
    dead = f"udp://127.0.0.1:{network.dead_port}"
    names = [f"10.7777/{i}" for i in range(40)]
    assert _targets(resolver, names[0])
    (site,) = sites("0.NA/10.7777") or ()
    picks = {name: site.server_for(name) for name in names}
    on_dead = [n for n, s in picks.items() if s is not None and s.server_id == 2]
    on_live = [n for n, s in picks.items() if s is not None and s.server_id == 1]
    assert on_dead
    assert on_live
    assert _targets(resolver, on_live[-1]) == [live]  # the hash's server, asked first
    fresh = NativeResolver(network.root_address, timeout=10)
    asked = _targets(fresh, on_dead[0])
    assert asked[-2:] == [dead, live]  # the hash's server first; it is dead: the other one
    # Remembered as down: asked last afterwards, so the next name goes straight to the live one.
    assert _targets(fresh, on_dead[1]) == [live]
    for name in names:
        assert fresh.resolve(name).values[0].data == _url(name).encode()


def test_a_bad_signature_is_refused(network: Network) -> None:
    with Client(root=network.root_address, certify=True, timeout=10) as client:
        assert client.resolve("10.5555/found").first("URL") is not None  # signed, verified
        with pytest.raises(HandleServerError, match="signature does not verify"):
            client.resolve("10.8888/signed")
    with Client(root=network.root_address, timeout=10) as client:  # not asked to certify
        assert client.resolve("10.8888/signed").first("URL") is not None


def test_a_referral_is_followed(network: Network) -> None:
    with Client(root=network.root_address, timeout=10) as client:
        record = client.resolve("10.9999/referred")
    assert record.values[0].data == _url("10.9999/referred").encode()
    assert network.peers["refer"].asked >= 1


def test_a_silent_udp_server_falls_back_to_tcp(network: Network) -> None:
    started = time.monotonic()
    with Client(root=network.root_address, timeout=10) as client:
        record = client.resolve("10.4444/silent")
    assert record.values[0].data == _url("10.4444/silent").encode()
    assert 2.9 < time.monotonic() - started < 8  # CNRI's three UDP tries (3 s), then TCP
    assert network.peers["silent"].asked == 3


def test_a_truncated_udp_answer_falls_back_to_tcp(network: Network) -> None:
    resolver = NativeResolver(network.root_address, timeout=10)
    started = time.monotonic()
    record = resolver.resolve("10.3333/big")
    assert record.values[0].data == BIG_URL.encode()
    assert time.monotonic() - started > 2.9  # the first packet alone, three times; then TCP
    assert network.peers["truncate"].asked == 3


def test_http_when_udp_is_silent_and_tcp_refused(network: Network) -> None:
    async def run() -> None:
        async with AsyncClient(root=network.root_address, timeout=10) as client:
            record = await client.resolve("10.2222/http")
            assert record.values[0].data == _url("10.2222/http").encode()

    asyncio.run(run())
    with Client(root=network.root_address, timeout=10) as client:
        assert client.url("10.2222/http") == _url("10.2222/http")


def test_a_silent_root_is_an_error_within_the_deadline(network: Network) -> None:
    silent = network.peers["silent"]
    resolver = NativeResolver(f"127.0.0.1:{silent.port}", timeout=2)
    started = time.monotonic()
    with pytest.raises(TransportError, match="no answer within 2"):
        resolver.resolve("10.5555/found")
    assert time.monotonic() - started < 3


def test_async_batch_keeps_many_in_flight(network: Network) -> None:
    names = [f"10.5555/many-{i}" for i in range(500)] + ["10.5555/none", "not a doi"]

    async def run() -> list[tuple[int, str | None, str | None]]:
        async with AsyncClient(root=network.root_address, timeout=15, per_server=64) as client:
            out = []
            async for item in client.resolve_many(names, ordered=True):
                url = item.result.first("URL") if item.result is not None else None
                error = type(item.error).__name__ if item.error is not None else None
                out.append((item.index, url.text if url is not None else None, error))
            return out

    items = asyncio.run(run())
    assert [i for i, _, _ in items] == list(range(len(names)))
    assert [u for _, u, _ in items[:500]] == [_url(n) for n in names[:500]]
    assert [e for _, _, e in items[500:]] == ["DOINotFound", "InvalidDOI"]


class HoldingRoot:
    """A test-only UDP peer built with doikit's codec that is its own root and holds every
    request 50 ms before answering it: the most requests it held at once is what a client
    kept in flight to it."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.01)
        self.port = int(self.sock.getsockname()[1])
        self.site = _one_server(self.port, None)
        self.most = 0
        self.asked: list[str] = []  # the handles of the resolution requests answered
        self.stopped = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _answer(self, data: bytes) -> bytes:
        request = decode(data)
        flags = OpFlag.AUTHORITATIVE
        if isinstance(request, GetSiteInfoRequest):
            return encode(SiteInfoResponse(site=self.site, request_id=request.request_id))
        assert isinstance(request, ResolutionRequest)
        handle = request.handle
        self.asked.append(handle)
        value = _site_value(self.site) if handle.startswith("0.NA/") else _record(handle)
        answer = ResolutionResponse(handle, (value,), request_id=request.request_id, op_flags=flags)
        return encode(answer)

    def _serve(self) -> None:
        held: list[tuple[bytes, tuple[str, int]]] = []
        since = time.monotonic()
        while not self.stopped:
            with contextlib.suppress(TimeoutError):
                held.append(self.sock.recvfrom(65536))
                self.most = max(self.most, len({data[8:12] for data, _ in held}))
            if held and time.monotonic() - since >= 0.05:
                for data, addr in held:
                    self.sock.sendto(self._answer(data), addr)
                held, since = [], time.monotonic()
            elif not held:
                since = time.monotonic()

    def close(self) -> None:
        self.stopped = True
        self.thread.join(2)
        self.sock.close()


def test_a_batch_keeps_at_most_per_server_in_flight_to_a_server() -> None:
    peer = HoldingRoot()
    names = [f"10.5555/held-{i}" for i in range(2000)]

    async def run() -> int:
        async with AsyncClient(root=f"127.0.0.1:{peer.port}", timeout=30, per_server=50) as c:
            done = 0
            async for item in c.resolve_many(names):  # 4,096 names may be in flight
                assert item.error is None, item.error
                done += 1
            return done

    try:
        assert asyncio.run(run()) == len(names)
    finally:
        peer.close()
    assert 40 <= peer.most <= 50  # many at once, never more than the cap


def test_async_driver_certify_and_root_check(network: Network) -> None:
    async def run() -> None:
        resolver = AsyncNativeResolver(network.root_address, certify=True, timeout=10)
        try:
            await resolver.root()
            record = await resolver.resolve("10.6666/chained")
            assert record.first("URL") is not None
            with pytest.raises(HandleServerError, match="signature"):
                await resolver.resolve("10.8888/signed")
        finally:
            await resolver.aclose()
        dead = AsyncNativeResolver(f"127.0.0.1:{network.dead_port}", timeout=1.5)
        try:
            with pytest.raises(TransportError):
                await dead.root()
        finally:
            await dead.aclose()

    asyncio.run(run())


def test_signatures_of_cnri_s_own_server_verify() -> None:
    # The certified answer CNRI's server signed in the captured TCP session (V6), checked
    # with the key of its GET_SITE_INFO answer (V2); one byte changed, it no longer does.
    vectors = Path(__file__).parent / "vectors" / "handle-native" / "tcp.jsonl"
    site = signed = None
    for line in vectors.read_text().splitlines():
        item = json.loads(line)
        if item["dir"] != "s2c":
            continue
        message = decode(bytes.fromhex(item["hex"]))
        if isinstance(message, SiteInfoResponse):
            site = message.site
        elif isinstance(message, ResolutionResponse) and message.credential is not None:
            signed = message
    assert site is not None
    assert signed is not None
    key = site.servers[0].public_key
    assert signature_problem(signed, key) is None
    changed = dataclasses.replace(signed, request_id=signed.request_id ^ 1)
    assert signature_problem(changed, key) == (
        "the signature does not verify with the key its site lists"
    )
    assert signature_problem(dataclasses.replace(signed, credential=None), key) is not None


def test_prefix_handles_and_the_shipped_root() -> None:
    assert prefix_handle("10.abc/x") == "0.NA/10.ABC"
    assert prefix_handle("0.NA/10.1000") is None
    sites = root_sites()
    assert len(sites) >= 10
    assert all(s.servers and s.servers[0].public_key for s in sites)
    assert sites[0].primary
    assert Resolver().root_label == "the Global Handle Registry"


def _cli(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DOIKIT_RESOLVER"}
    return subprocess.run(
        [DOIKIT, "resolve", "--native", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        env=env,
    )


def test_cli_resolve_native(network: Network) -> None:
    root = ("--root", network.root_address)
    done = _cli(*root, "10.5555/found", "10.6666/chained")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [_url("10.5555/found"), _url("10.6666/chained")]
    as_json = _cli(*root, "--json", "10.5555/found")
    assert '"type": "URL"' in as_json.stdout
    missing = _cli(*root, "10.5555/absent")
    assert missing.returncode == 1
    assert "DOINotFound" in missing.stderr
    assert "not found" in missing.stderr
    assert missing.stdout == ""


def test_cli_root_that_is_no_address() -> None:
    done = _cli("--root", "example.org", "10.5555/found")
    assert done.returncode == 2
    assert done.stderr.startswith("doikit: --root: root 'example.org' is not HOST:PORT")


@pytest.mark.parametrize("kind", ["dead", "silent"])
def test_cli_a_dead_or_silent_root_is_one_line(network: Network, kind: str) -> None:
    port = network.dead_port if kind == "dead" else network.peers["silent"].port
    started = time.monotonic()
    done = _cli("--root", f"127.0.0.1:{port}", "--timeout", "2", "10.5555/found", "10.5555/b")
    assert time.monotonic() - started < 8
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"127.0.0.1:{port}" in lines[0]
    assert "Traceback" not in done.stderr


def _two_server_site(port: int) -> SiteInfo:
    interfaces = (Interface(2, PROTOCOL_UDP, port), Interface(2, PROTOCOL_TCP, port))
    servers = tuple(
        ServerInfo(n, ipaddress.IPv4Address(f"127.0.0.{n}"), b"", interfaces) for n in (1, 2)
    )
    return SiteInfo(servers, protocol_version=(2, 10))


def test_express_starts_as_the_resolution_does() -> None:
    # The express lane's one UDP exchange is the resolution's first (the hashed server of
    # the first site, the site's version); its plain answer is kept as resolution keeps it.
    core = Resolver("127.0.0.1:1")
    assert core.express("10.5555/a") is None  # the service is not known yet
    core.cache.keep_sites("0.NA/10.5555", 3600, (_two_server_site(2641),))
    hosts = set()
    for name in (f"10.5555/Name-{i}" for i in range(40)):
        express = core.express(name, ("URL",))
        assert isinstance(express, Express)
        first = next(core.resolution(name, ("URL",)))
        assert express.target == first.target
        hosts.add(express.target.host)
        request = first.request
        assert isinstance(request, ResolutionRequest)
        assert (express.version, express.op_flags) == (request.version, request.op_flags)
        assert abs(express.expiration - request.expiration) <= 1
        assert express.key == (name.upper(), ("URL",), ())
    assert hosts == {"127.0.0.1", "127.0.0.2"}
    express = core.express("10.5555/kept")
    assert isinstance(express, Express)
    assert not core.express_answer(express, HandleRecord("10.5555/other", ()))
    record = HandleRecord("10.5555/KEPT", (_record("10.5555/kept"),))
    assert core.express_answer(express, record)
    assert core.express("10.5555/kept") is record
    # a "not found" in the cache is raised; a certifying resolver has no express lane
    core.cache.keep_answer(("10.5555/GONE", (), ()), 30, "gone")
    with pytest.raises(DOINotFound, match="gone"):
        core.express("10.5555/gone")
    certifying = Resolver("127.0.0.1:1", certify=True)
    certifying.cache.keep_sites("0.NA/10.5555", 3600, (_two_server_site(2641),))
    assert certifying.express("10.5555/a") is None


# --- the express codec: parity with the full codec ---------------------------------------

_VECTORS = Path(__file__).parent / "vectors" / "handle-native"


def _captured_answers() -> list[bytes]:
    units = []
    for path in sorted(_VECTORS.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            item = json.loads(line)
            raw = bytes.fromhex(item["hex"])
            if item["dir"] == "s2c" and item["relay"] in ("tcp", "udp"):
                units.append(raw)
    return units


def _answers() -> list[bytes]:
    """Answers of many shapes: the captured ones, and ones the codec writes (structured and
    absolute-TTL values, references, a credential, a request digest, errors, referrals)."""
    from datetime import UTC, datetime  # noqa: PLC0415

    from doikit.handle import (  # noqa: PLC0415
        AdminData,
        Credential,
        ErrorResponse,
        Reference,
        RequestDigest,
    )

    site = _two_server_site(2641)
    values = [
        (_record("10.5555/a"),),
        (),
        (
            HandleValue(1, "URL", "https://例え.jp/é".encode(), 0, 1700000000, "0110"),
            HandleValue(2, "EMAIL", b"\xff\xfe not utf-8", 3600, -5, "1111"),
            HandleValue(3, "URL.mirror", b"", 86400, 0, "0010", (Reference("10.5555/r", 7),)),
        ),
        (HandleValue(100, "HS_ADMIN", AdminData("0.NA/10.5555", 200)),),
        (HandleValue(100, "hs_admin", b"\x00\x01legacy"),),
        (HandleValue(4, "HS_VLIST", (Reference("10.5555/x", 1), Reference("10.5555/y", 2))),),
        (_site_value(site),),
        (HandleValue(5, "URL", b"x", datetime(2030, 1, 1, tzinfo=UTC)),),
    ]
    made = [
        encode(ResolutionResponse(handle, vals, request_id=index))
        for index, vals in enumerate(values)
        for handle in ("10.5555/A", "10.5555/ünïcode", "")
    ]
    signed = Credential("HS_SIGNED", "SHA-256", b"signature", signer_handle="0.NA/10.5555")
    answer = ResolutionResponse("10.5555/a", values[0], request_id=9)
    made.append(encode(dataclasses.replace(answer, credential=signed)))
    made.append(
        encode(
            dataclasses.replace(
                answer,
                op_flags=OpFlag.REQUEST_DIGEST,
                request_digest=RequestDigest(2, bytes(20)),
            )
        )
    )
    made.append(encode(ErrorResponse(1, 100, "not found", request_id=3)))
    made.append(encode(ReferralResponse(1, 302, "0.NA/10.5555", request_id=4)))
    made.append(encode(SiteInfoResponse(site=site, request_id=5)))
    return made + _captured_answers()


def _full(unit: bytes) -> HandleRecord | None:
    try:
        message = decode(unit)
    except Exception:  # noqa: BLE001 - what the full codec refuses, the express one must too
        return None
    if isinstance(message, ResolutionResponse):
        return HandleRecord(message.handle, message.values)
    return None


def test_express_read_is_the_full_decoder_s() -> None:
    answers = _answers()
    read = 0
    for unit in answers:
        fast = read_answer(unit)
        if fast is not None:
            read += 1
            assert fast == _full(unit), unit.hex()
    assert read >= 20  # the plain answers are read by the express codec
    # Damaged answers: the express codec gives the full decoder's record or nothing.
    for unit in answers:
        for at in range(0, len(unit), max(1, len(unit) // 60)):
            for byte in (0x00, 0x01, 0x7F, 0xFF):
                damaged = unit[:at] + bytes([byte]) + unit[at + 1 :]
                fast = read_answer(damaged)
                if fast is not None:
                    assert fast == _full(damaged), (at, byte, unit.hex())
        for cut in (1, 4, 20, 44, len(unit) - 1):
            assert read_answer(unit[:cut]) in (None, _full(unit[:cut]))


@pytest.mark.parametrize("version", [(2, 11), (2, 10), (2, 7)])
def test_express_request_is_the_codec_s(version: tuple[int, int]) -> None:
    templates = RequestTemplates()
    one = _two_server_site(2641)
    site = dataclasses.replace(one, servers=one.servers[:1], protocol_version=version)
    core = Resolver("127.0.0.1:1")
    core.cache.keep_sites("0.NA/10.5555", 3600, (site,))
    shapes = [((), ()), (("URL",), ()), (("URL", "HS_ADMIN."), (1, 100)), ((), (7,))]
    for types, indexes in shapes:
        for handle in ("10.5555/a", "10.5555/ÉCOLE", "10.5555/" + "x" * 300, "10.5555/\ud800"):
            express = core.express(handle, types, indexes)
            assert isinstance(express, Express)
            made = templates.request(handle, types, indexes, express, 123456789)
            request = ResolutionRequest(
                handle,
                indexes,
                types,
                request_id=123456789,
                op_flags=express.op_flags,
                expiration=express.expiration,
                version=express.version,
            )
            if made is None:  # several datagrams, or a handle the codec must refuse
                assert "\ud800" in handle or len(encode_datagrams(request)) > 1
            else:
                assert [made] == encode_datagrams(request)


# --- the batch path without a task per name ---------------------------------------------


def _items(items: list[Resolved]) -> list[tuple[int, str, str | None, str | None]]:
    out = []
    for item in items:
        url = item.result.first("URL") if item.result is not None else None
        error = type(item.error).__name__ if item.error is not None else None
        out.append((item.index, item.doi, url.text if url is not None else None, error))
    return out


def test_the_batch_path_gives_resolve_many_s_items(network: Network) -> None:
    # Found, chained, not found, invalid, twice the same, a silent UDP server (TCP then),
    # a referral: resolve_many's batch path (no task per name) gives what resolving each
    # name alone gives, in order, whatever path each took.
    names = [f"10.5555/many-{i}" for i in range(300)] + [
        "10.5555/found", "10.6666/chained", "10.5555/none", "not a doi", "10.5555/many-7",
        "10.4444/silent", "10.9999/referred", "10.5555/found",
    ]  # fmt: skip

    async def run(batch: bool) -> list[Resolved]:
        async with AsyncClient(root=network.root_address, timeout=15, per_server=64) as client:
            if batch:
                return [i async for i in client.resolve_many(names, concurrency=100, ordered=True)]
            alone = []
            for index, text in enumerate(names):
                try:
                    record = await client.resolve(text)
                    alone.append(Resolved(index, text, record, None))
                except DOIError as exc:
                    alone.append(Resolved(index, text, None, exc))
            return alone

    batch = _items(asyncio.run(run(batch=True)))
    assert batch == _items(asyncio.run(run(batch=False)))
    assert [i for i, *_ in batch] == list(range(len(names)))
    assert batch[300][2] == _url("10.5555/found")
    assert [e for *_, e in batch[302:304]] == ["DOINotFound", "InvalidDOI"]


def test_the_batch_path_keeps_at_most_per_server_in_flight() -> None:
    peer = HoldingRoot()
    names = (f"10.5555/held-{i}" for i in range(2000))  # read lazily

    async def run() -> int:
        async with AsyncClient(root=f"127.0.0.1:{peer.port}", timeout=30, per_server=50) as c:
            items = c.resolve_many(names, concurrency=4096)
            done = 0
            async for item in items:
                assert item.error is None, item.error
                done += 1
            return done

    try:
        assert asyncio.run(run()) == 2000
    finally:
        peer.close()
    assert 40 <= peer.most <= 50


def test_the_same_question_in_flight_is_asked_once() -> None:
    # Twenty askers of one name at once (a batch's, and resolve()'s, one of them cancelled):
    # one request goes out, and every asker still waiting gets the record.
    peer = HoldingRoot()

    async def run() -> list[Resolved]:
        async with AsyncClient(root=f"127.0.0.1:{peer.port}", timeout=30) as c:
            await c.resolve("10.5555/warm")  # the root's site is known: the express way
            names = ["10.5555/same"] * 10 + ["10.5555/other"] + ["10.5555/same"] * 9
            alone = asyncio.ensure_future(c.resolve("10.5555/same"))
            cancelled = asyncio.ensure_future(c.resolve("10.5555/same"))
            await asyncio.sleep(0.01)
            cancelled.cancel()
            items = [i async for i in c.resolve_many(names, ordered=True)]
            assert (await alone).handle == "10.5555/same"
            return items

    try:
        items = asyncio.run(run())
    finally:
        peer.close()
    assert [item.result.handle for item in items if item.result] == [i.doi for i in items]
    assert peer.asked.count("10.5555/same") == 1
    assert peer.asked.count("10.5555/other") == 1


def test_leaving_the_batch_early_and_closing() -> None:
    peer = HoldingRoot()

    async def run() -> None:
        async with AsyncClient(root=f"127.0.0.1:{peer.port}", timeout=30) as c:
            names = (f"10.5555/early-{i}" for i in range(10_000))
            async with contextlib.aclosing(c.resolve_many(names, concurrency=500)) as items:  # type: ignore[type-var]
                async for item in items:
                    assert item.error is None
                    break
            # the resolver still answers afterwards
            assert (await c.resolve("10.5555/after")).first("URL") is not None

    try:
        asyncio.run(run())
    finally:
        peer.close()


def test_request_ids_are_random_and_a_forked_child_draws_its_own() -> None:
    from doikit.client._native_udp import new_id  # noqa: PLC0415 - the lane's own ids

    ids = [new_id() for _ in range(3000)]  # more than one draw of 1,024
    assert all(0 < i < 2**31 for i in ids)
    assert len(set(ids)) > 2990
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next ids, to the parent
        os.write(write, json.dumps([new_id() for _ in range(8)]).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read) as pipe:
        child = json.loads(pipe.read())
    assert child != [new_id() for _ in range(8)]  # not the parent's buffered ones
