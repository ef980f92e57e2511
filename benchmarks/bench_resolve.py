"""Batch resolution against a local `doikit serve`, against a sequential urllib loop, same run.

    python benchmarks/bench_resolve.py [--records 10000] [--concurrency 64] [--rounds 2]

1. Fills a fresh SQLite store with N records (10.5555/bench-0 … N-1) and starts `doikit serve`
   on it (uvicorn, one worker), on this machine: client and server share its cores.
2. Resolves all N names, each way, in each round (the best round counts; the machine is
   shared):
   - the baseline: a sequential loop of plain `urllib.request.urlopen` calls to the REST API,
     reading each body (what python-doi's `validate_doi` does against doi.org);
   - `AsyncClient.resolve_many(concurrency=C)`, as shipped (aiohttp underneath), every
     answer parsed into a `HandleRecord`;
   - the same through httpx's own async transport, to show why the async client does not
     use it;
   - `resolve_many` again with every answer in the client's memory cache (cache hits).
3. Prints resolutions per second and the ratio to the urllib loop.

With ``--native``, the same `doikit serve` also serves the native Handle protocol
(``--handle-port``) and is its own root (``0.NA/10.5555`` holds its HS_SITE): the native
column is `AsyncClient(root=...).resolve_many` over UDP, every answer a `HandleRecord`.
``--native-names N`` then measures the native client alone, in a child process, against a
small UDP peer built with doikit's codec (no per-address UDP budget, answers made from the
request): names per second and the child's peak memory (ru_maxrss) for N/10 and N names —
flat memory means the two are the same.

    python benchmarks/bench_resolve.py --native [--native-names 1000000]
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from bench_serve import fill, free_port
from doikit.client import AsyncClient, Cache
from doikit.handle import (
    PROTOCOL_UDP,
    UDP_PAYLOAD,
    GetSiteInfoRequest,
    HandleValue,
    HandleWireError,
    Interface,
    OpFlag,
    ResolutionResponse,
    ServerInfo,
    SiteInfo,
    SiteInfoResponse,
    data_from_wire,
    decode,
    encode,
    encode_datagrams,
    site_to_bytes,
    values_to_json,
)
from doikit.server import Row, new_token, open_store


def urllib_loop(base: str, names: list[str]) -> float:
    start = time.perf_counter()
    for name in names:
        with urllib.request.urlopen(f"{base}/api/handles/{name}") as reply:  # noqa: S310
            reply.read()
    return len(names) / (time.perf_counter() - start)


async def batch(client: AsyncClient, names: list[str], concurrency: int) -> float:
    start = time.perf_counter()
    done = 0
    async for item in client.resolve_many(names, concurrency=concurrency):
        if item.error is not None:
            raise item.error
        done += 1
    if done != len(names):
        raise RuntimeError(f"{done} of {len(names)} answered")
    return done / (time.perf_counter() - start)


async def clients(base: str, names: list[str], concurrency: int) -> dict[str, float]:
    out: dict[str, float] = {}
    async with AsyncClient(base, max_connections=concurrency) as client:
        out["resolve_many (aiohttp)"] = await batch(client, names, concurrency)
    transport = httpx.AsyncHTTPTransport(
        limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    )
    async with AsyncClient(base, transport=transport) as client:
        out["resolve_many (httpx transport)"] = await batch(client, names, concurrency)
    cache = Cache()
    async with AsyncClient(base, cache=cache) as client:
        await batch(client, names, concurrency)  # fill the cache
        out["resolve_many, cache hits"] = await batch(client, names, concurrency)
    return out


def site_info(port: int) -> SiteInfo:
    """The HS_SITE of the native server on *port*, asked over UDP (retried while it starts)."""
    deadline = time.monotonic() + 60
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.settimeout(0.5)
            sock.sendto(encode(GetSiteInfoRequest("/", request_id=1)), ("127.0.0.1", port))
            try:
                answer = decode(sock.recvfrom(65536)[0])
            except OSError:
                if time.monotonic() > deadline:
                    raise
                continue
        if not isinstance(answer, SiteInfoResponse):
            raise TypeError(f"site info: {answer}")
        return answer.site


def be_own_root(store: str, site: SiteInfo) -> None:
    """Write ``0.NA/10.5555`` with *site* as its HS_SITE: the server is then its own root."""

    async def put() -> None:
        opened = open_store(store)
        await opened.open()
        value = HandleValue(1, "HS_SITE", data_from_wire("HS_SITE", site_to_bytes(site)))
        row = Row("0.na/10.5555", "0.NA/10.5555", "0.NA", values_to_json((value,)))
        await opened.put_many([row])
        await opened.close()

    asyncio.run(put())


async def native_batch(
    root: str, names: list[str] | range, concurrency: int
) -> tuple[float, int, str]:
    """Names/s, how many failed, and the first failure (a loaded machine drops datagrams;
    the failures are counted, not hidden)."""
    start = time.perf_counter()
    done = failed = 0
    first = ""
    async with AsyncClient(root=root, timeout=60) as client:
        texts = (f"10.5555/bench-{i}" for i in names) if isinstance(names, range) else names
        async for item in client.resolve_many(texts, concurrency=concurrency):
            done += 1
            if item.error is not None:
                failed += 1
                first = first or f"{type(item.error).__name__}: {item.error}"
    return done / (time.perf_counter() - start), failed, first


# The peer's answer to a resolution of H: one URL value, https://example.org/H, as the codec
# writes it (envelope, header, body, an empty credential) with the request id, the lengths
# and H spliced in; tests/test_native_resolver.py holds it equal to the codec's.
_ANSWER_ENVELOPE = bytes.fromhex("020b 020b 00000000")
_ANSWER_HEADER = bytes.fromhex("00000001 00000001 80000000 ffff 00 00 00000000")
_ANSWER_VALUE = bytes.fromhex("00000001 00000001 00000000 00 00015180 0e 00000003 55524c")
_ANSWER_URL = b"https://example.org/"
_OP_RESOLUTION = bytes.fromhex("00000001")
_NO_CODE = bytes(4)


def peer_answer(request: bytes) -> bytes | None:
    """The answer to a one-datagram resolution *request* of a handle outside ``0.NA/``,
    spliced from a template (no decode, no encode), or ``None``: the codec answers."""
    if request[20:28] != _OP_RESOLUTION + _NO_CODE or len(request) < 48:
        return None
    n = int.from_bytes(request[44:48], "big")
    handle = request[48 : 48 + n]
    body = 2 * n + 57
    if len(handle) != n or handle[:5].upper() == b"0.NA/" or body + 28 > UDP_PAYLOAD:
        return None
    return b"".join(
        (
            _ANSWER_ENVELOPE,
            request[8:12],
            _NO_CODE,
            (body + 28).to_bytes(4, "big"),
            _ANSWER_HEADER,
            body.to_bytes(4, "big"),
            request[44 : 48 + n],
            _ANSWER_VALUE,
            (n + len(_ANSWER_URL)).to_bytes(4, "big"),
            _ANSWER_URL,
            handle,
            bytes(8),
        )
    )


def codec_answer(data: bytes, site: SiteInfo) -> list[bytes]:
    """The datagrams of the answer the codec builds: site information for GET_SITE_INFO,
    *site* as the HS_SITE of a ``0.NA/`` handle, a URL value for any other handle."""
    request = decode(data)
    flags = OpFlag.AUTHORITATIVE
    handle = getattr(request, "handle", "/")
    if isinstance(request, GetSiteInfoRequest):
        answer: SiteInfoResponse | ResolutionResponse = SiteInfoResponse(
            site=site, request_id=request.request_id, op_flags=flags
        )
    else:
        if handle.upper().startswith("0.NA/"):
            value = HandleValue(1, "HS_SITE", data_from_wire("HS_SITE", site_to_bytes(site)))
        else:
            value = HandleValue(1, "URL", _ANSWER_URL + handle.encode())
        answer = ResolutionResponse(handle, (value,), request_id=request.request_id, op_flags=flags)
    return encode_datagrams(answer)


def peer(port: int) -> None:
    """A UDP peer: its own root and the server of every name, answering each resolution with
    one URL value (:func:`peer_answer`; the rare rest with doikit's codec)."""
    site = SiteInfo(
        (
            ServerInfo(
                1, ipaddress.IPv4Address("127.0.0.1"), b"", (Interface(2, PROTOCOL_UDP, port),)
            ),
        ),
        primary=True,
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind(("127.0.0.1", port))
    receive, send = sock.recvfrom, sock.sendto
    while True:
        data, address = receive(65536)
        answer = peer_answer(data)
        if answer is not None:
            send(answer, address)
            continue
        try:
            packets = codec_answer(data, site)
        except HandleWireError:
            continue
        for packet in packets:
            send(packet, address)


def child(port: str, count: str, concurrency: str) -> None:
    """Resolve *count* names against the peer; print names/s and peak memory (MiB)."""
    root = f"127.0.0.1:{port}"
    rate, failed, first = asyncio.run(native_batch(root, range(int(count)), int(concurrency)))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{rate:.0f} {peak:.1f} {failed}")
    if first:
        print(first, file=sys.stderr)


def native_alone(count: int, concurrency: int) -> list[tuple[int, float, float, int]]:
    """Names/s and peak MiB of the native client's resolve_many for count/10 and count
    names."""
    port = free_port()
    here = str(Path(__file__))
    server = subprocess.Popen([sys.executable, here, "--peer", str(port)])
    out = []
    try:
        time.sleep(1.0)
        for n in (count // 10, count):
            done = subprocess.run(
                [sys.executable, here, "--child", str(port), str(n), str(concurrency)],
                capture_output=True,
                text=True,
                check=True,
            )
            rate, peak, failed = done.stdout.split()
            out.append((n, float(rate), float(peak), int(failed)))
            if done.stderr:
                print(f"  first failure of {n:,}: {done.stderr.strip()[:200]}")
    finally:
        server.terminate()
        server.wait(10)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--native", action="store_true", help="add the native column")
    parser.add_argument("--native-concurrency", type=int, default=4096)
    parser.add_argument("--native-names", type=int, default=0, help="the native client alone")
    parser.add_argument("--peer", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer is not None or args.child is not None:
        peer(args.peer) if args.peer is not None else child(*args.child)
        return

    with tempfile.TemporaryDirectory() as tmp:
        store = f"sqlite:///{Path(tmp) / 'bench.sqlite3'}"
        fill(store, args.records, new_token())
        port, handle_port = free_port(), free_port()
        doikit = str(Path(sys.executable).parent / "doikit")
        native = ["--handle-port", str(handle_port)] if args.native else []
        server = subprocess.Popen(
            [doikit, "serve", "--store", store, "--port", str(port), *native],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    urllib.request.urlopen(base + "/").read()  # noqa: S310
                    break
                except OSError:
                    time.sleep(0.1)
            names = [f"10.5555/bench-{i}" for i in range(args.records)]
            if args.native:
                be_own_root(store, site_info(handle_port))
            best: dict[str, float] = {}
            for _ in range(args.rounds):
                rates = {"urllib loop (baseline)": urllib_loop(base, names)}
                rates |= asyncio.run(clients(base, names, args.concurrency))
                if args.native:
                    root = f"127.0.0.1:{handle_port}"
                    rate, failed, first = asyncio.run(
                        native_batch(root, names, args.native_concurrency)
                    )
                    if failed:
                        raise RuntimeError(f"{failed} failed, the first: {first}")
                    rates["resolve_many native (UDP)"] = rate
                for key, rate in rates.items():
                    best[key] = max(best.get(key, 0.0), rate)
        finally:
            server.terminate()
            server.wait(10)

    baseline = best["urllib loop (baseline)"]
    print(f"{args.records:,} DOIs, concurrency {args.concurrency}, best of {args.rounds}")
    for key, rate in best.items():
        print(f"{key:32} {rate:>10,.0f} /s  {rate / baseline:>7.1f}x")
    if args.native_names:
        report_alone(args.native_names, args.native_concurrency)


def report_alone(count: int, concurrency: int) -> None:
    print(f"the native client alone against a codec-built UDP peer, {concurrency} in flight")
    for n, rate, peak, failed in native_alone(count, concurrency):
        print(f"{n:>10,} names {rate:>10,.0f} /s  peak {peak:>7.1f} MiB  {failed:,} failed")


if __name__ == "__main__":
    main()
