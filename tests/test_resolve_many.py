"""Batch resolution and politeness: `AsyncClient.resolve_many`, retries, pacing, the cache.

Against a real `doikit serve` (over a socket, and in-process through httpx's ASGI transport)
and small real servers that misbehave on purpose: slow, busy (429/503 with Retry-After),
malformed, or killed in the middle of a batch.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import threading
import time
from typing import TYPE_CHECKING, Any, ClassVar

import httpx
import pytest

import doikit
from conftest import free_port, serving, start_server, stop_server
from doikit.client import AsyncClient, Cache, Client, Resolved
from doikit.handle import HandleRecord, HandleValue

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator
    from pathlib import Path

    from conftest import Server


def deposit(server: Server, names: list[str]) -> None:
    lines = "".join(
        json.dumps({"doi": n, "url": f"https://example.org/{n[8:]}"}) + "\n" for n in names
    )
    reply = httpx.post(
        server.url + "/api/deposit",
        content=lines.encode(),
        headers={"Authorization": f"Bearer {server.token}"},
        timeout=60,
    )
    assert reply.status_code == 200, reply.text
    assert reply.json()["accepted"] == len(names)


async def collect(client: AsyncClient, names: list[str], **kwargs: Any) -> list[Resolved]:
    return [item async for item in client.resolve_many(names, **kwargs)]


# --- against doikit serve ------------------------------------------------------------------


def test_resolve_many_mixed_batch(server: Server) -> None:
    names = [f"10.5555/many-{i}" for i in range(300)]
    deposit(server, names)
    batch = [*names[:100], "10.5555/missing", "not a doi", *names[100:], "doi:10.1000/alias"]

    async def main() -> tuple[list[Resolved], list[Resolved]]:
        async with AsyncClient(server.url) as client:
            loose = await collect(client, batch, concurrency=16)
            ordered = await collect(client, batch, concurrency=16, ordered=True)
            return loose, ordered

    loose, ordered = asyncio.run(main())
    assert sorted(item.index for item in loose) == list(range(len(batch)))
    assert [item.index for item in ordered] == list(range(len(batch)))
    assert [item.doi for item in ordered] == batch
    by_doi = {item.doi: item for item in loose}
    assert isinstance(by_doi["10.5555/missing"].error, doikit.DOINotFound)
    invalid = by_doi["not a doi"]
    assert isinstance(invalid.error, doikit.InvalidDOI)
    assert (invalid.ok, invalid.result) == (False, None)
    record = by_doi["10.5555/many-7"].result
    assert record is not None
    assert record.first("URL") is not None
    assert record.first("URL").text == "https://example.org/many-7"  # type: ignore[union-attr]
    assert by_doi["doi:10.1000/alias"].result is not None  # the alias record itself
    assert sum(item.ok for item in loose) == len(batch) - 2


def test_resolve_many_reads_input_lazily_and_stops_early(server: Server) -> None:
    taken: list[int] = []

    def endless() -> Iterator[str]:
        i = 0
        while True:
            taken.append(i)
            yield "10.1000/182"
            i += 1

    async def main() -> list[Resolved]:
        async with AsyncClient(server.url) as client:
            out = []
            async for item in client.resolve_many(endless(), concurrency=4):
                out.append(item)
                if len(out) == 20:
                    break
            return out

    out = asyncio.run(main())
    assert len(out) == 20
    assert all(item.ok for item in out)
    assert len(taken) < 20 + 4 + 2  # never more than `concurrency` ahead of the consumer


def test_resolve_many_async_input(server: Server) -> None:
    async def names() -> AsyncIterator[str]:
        for text in ("10.1000/182", "10.1000/1", "10.1000/nope"):
            yield text
            await asyncio.sleep(0)

    async def main() -> list[Resolved]:
        async with AsyncClient(server.url) as client:
            return [item async for item in client.resolve_many(names(), ordered=True)]

    out = asyncio.run(main())
    assert [item.ok for item in out] == [True, True, False]


@contextlib.asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """Run an ASGI app's lifespan (httpx's ASGI transport does not)."""
    inbox: asyncio.Queue[dict[str, str]] = asyncio.Queue()
    outbox: asyncio.Queue[dict[str, str]] = asyncio.Queue()
    scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
    task = asyncio.create_task(app(scope, inbox.get, outbox.put))
    await inbox.put({"type": "lifespan.startup"})
    assert (await outbox.get())["type"] == "lifespan.startup.complete"
    try:
        yield
    finally:
        await inbox.put({"type": "lifespan.shutdown"})
        assert (await outbox.get())["type"] == "lifespan.shutdown.complete"
        await task


def test_in_process_through_asgi_transport(tmp_path: Path) -> None:
    from doikit.server import create_app  # noqa: PLC0415

    app = create_app(f"sqlite:///{tmp_path / 'store.sqlite3'}", demo=True)
    names = ["10.1000/182", "10.1000/1", "10.1000/alias", "10.1000/nope", "10.1000/multiple"]

    async def main() -> tuple[list[Resolved], str, list[dict[str, str]]]:
        async with lifespan(app):
            transport = httpx.ASGITransport(app=app)
            async with AsyncClient("http://doikit.test", transport=transport) as client:
                out = await collect(client, names, ordered=True)
                url = await client.url("10.1000/alias")
                ras = await client.which_ra(["10.1000/182"])
                return out, url, ras

    out, url, ras = asyncio.run(main())
    assert [item.ok for item in out] == [True, True, True, False, True]
    assert url == "https://www.doi.org/the-identifier/resources/handbook"
    assert ras == [{"DOI": "10.1000/182", "RA": "doikit"}]


def test_server_killed_mid_batch(tmp_path: Path) -> None:
    running = start_server(f"sqlite:///{tmp_path / 'store.sqlite3'}", demo=False)
    names = [f"10.5555/k-{i}" for i in range(3000)]
    try:
        deposit(running, names)

        async def main() -> list[Resolved]:
            out = []
            async with AsyncClient(running.url, retries=2, backoff=0.05, max_backoff=1) as client:
                async for item in client.resolve_many(names, concurrency=16):
                    out.append(item)
                    if len(out) == 300:
                        running.kill()
            return out

        started = time.monotonic()
        out = asyncio.run(main())
        elapsed = time.monotonic() - started
    finally:
        stop_server(running)
    assert sorted(item.index for item in out) == list(range(3000))
    assert all(item.ok for item in out[:300])
    failed = [item for item in out if not item.ok]
    assert len(failed) > 2000
    assert all(isinstance(item.error, doikit.TransportError) for item in failed)
    assert all(item.error.doi == item.doi for item in failed)  # type: ignore[union-attr]
    assert elapsed < 120, "the circuit should fail a dead host's requests fast"


# --- servers that misbehave, on real sockets ---------------------------------------------


def _record(name: str) -> bytes:
    values = [{"index": 1, "type": "URL", "data": {"format": "string", "value": "https://x.org"}}]
    return json.dumps({"responseCode": 1, "handle": name, "values": values}).encode()


class _Moody(http.server.BaseHTTPRequestHandler):
    """Answers by the name asked for: ``slow-`` sleeps, ``bad-`` sends broken JSON,
    ``busy-`` answers 429 (Retry-After: 1) the first time, ``down-`` 503 twice."""

    protocol_version = "HTTP/1.1"
    seen: ClassVar[dict[str, int]] = {}
    times: ClassVar[list[float]] = []
    lock = threading.Lock()

    def do_GET(self) -> None:
        name = self.path.split("?")[0].removeprefix("/api/handles/")
        with self.lock:
            self.seen[name] = self.seen.get(name, 0) + 1
            count = self.seen[name]
            self.times.append(time.monotonic())
        status, body, headers = 200, _record(name), {}
        if "slow-" in name:
            time.sleep(1.5)
        elif "bad-" in name:
            body = b'{"responseCode":1,"handle":'
        elif "busy-" in name and count == 1:
            status, body, headers = 429, b"slow down", {"Retry-After": "1"}
        elif "later-" in name:
            status, body, headers = 429, b"slow down", {"Retry-After": "3600"}
        elif "down-" in name and count <= 2:
            status, body = 503, b"<html>busy</html>"
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def moody() -> Iterator[str]:
    _Moody.seen.clear()
    _Moody.times.clear()
    with serving(_Moody) as url:
        yield url


def test_faults_map_to_errors_and_the_batch_finishes(moody: str) -> None:
    names = [
        "10.5555/ok-1",
        "10.5555/slow-1",
        "10.5555/bad-1",
        "10.5555/busy-1",
        "10.5555/down-1",
        "10.5555/later-1",
        "10.5555/ok-2",
    ]

    async def main() -> list[Resolved]:
        async with AsyncClient(moody, timeout=0.5, retries=2, backoff=0.05, max_backoff=5) as c:
            return await collect(c, names, ordered=True)

    out = {item.doi: item for item in asyncio.run(main())}
    assert out["10.5555/ok-1"].ok
    assert out["10.5555/ok-2"].ok
    assert isinstance(out["10.5555/slow-1"].error, doikit.TransportError)
    assert "3 attempts" in str(out["10.5555/slow-1"].error)
    assert isinstance(out["10.5555/bad-1"].error, doikit.MalformedResponse)
    assert out["10.5555/busy-1"].ok  # retried after the Retry-After
    assert out["10.5555/down-1"].ok  # two 503s, then an answer
    later = out["10.5555/later-1"].error
    assert isinstance(later, doikit.HandleServerError)
    assert later.status == 429  # a Retry-After beyond max_backoff is given up at once
    assert _Moody.seen["10.5555/later-1"] == 1
    assert _Moody.seen["10.5555/bad-1"] == 1  # malformed answers are not retried
    assert _Moody.seen["10.5555/down-1"] == 3


def test_retry_after_pauses_the_whole_host(moody: str) -> None:
    names = ["10.5555/busy-2"] + [f"10.5555/ok-{i}" for i in range(40)]

    async def main() -> None:
        async with AsyncClient(moody, retries=2, backoff=0.01, max_backoff=5) as client:
            first = await client.resolve(names[0])  # 429, waits >= 1 s, then 200
            assert first.handle == names[0]
            assert all(item.ok for item in await collect(client, names[1:], concurrency=8))

    started = time.monotonic()
    asyncio.run(main())
    assert time.monotonic() - started >= 1.0
    retried = _Moody.times[1] - _Moody.times[0]
    assert retried >= 1.0  # the retry waited out the Retry-After


def test_retry_after_holds_concurrent_requests(moody: str) -> None:
    async def main() -> None:
        async with AsyncClient(moody, retries=2, backoff=0.01, max_backoff=5) as client:

            async def later() -> None:
                await asyncio.sleep(0.3)  # the 429 has arrived by now
                await client.resolve("10.5555/other")

            await asyncio.gather(client.resolve("10.5555/busy-3"), later())

    asyncio.run(main())
    sent = dict(zip(["429", "next", "retry"], _Moody.times, strict=False))
    assert len(_Moody.times) == 3
    assert sent["next"] - sent["429"] >= 1.0  # the other request waited out the pause too


def test_rate_limit_spaces_requests(moody: str) -> None:
    async def main() -> None:
        async with AsyncClient(moody, rate_limit=40) as client:
            out = await collect(client, [f"10.5555/ok-{i}" for i in range(21)], concurrency=8)
            assert all(item.ok for item in out)

    asyncio.run(main())
    assert _Moody.times[-1] - _Moody.times[0] >= 20 / 40 - 0.05  # 21 requests, 40 per second


def test_sync_client_retries_too(moody: str) -> None:
    with Client(moody, retries=2, backoff=0.01, max_backoff=5) as client:
        assert client.resolve("10.5555/down-2").handle == "10.5555/down-2"
        with pytest.raises(doikit.TransportError, match="1 attempt"):
            Client(moody, timeout=0.3, retries=0).resolve("10.5555/slow-2")
    assert _Moody.seen["10.5555/down-2"] == 3


def test_circuit_opens_on_a_dead_host() -> None:
    dead = f"http://127.0.0.1:{free_port()}"

    async def main() -> list[Resolved]:
        async with AsyncClient(dead, retries=1, backoff=0.01, max_backoff=30) as client:
            return await collect(client, [f"10.5555/x-{i}" for i in range(200)], concurrency=4)

    started = time.monotonic()
    out = asyncio.run(main())
    assert time.monotonic() - started < 30  # not 200 × retries; the circuit answers
    assert all(isinstance(item.error, doikit.TransportError) for item in out)
    assert any("not sent" in str(item.error) for item in out)


# --- the cache --------------------------------------------------------------------------


def test_cache_answers_without_the_server(tmp_path: Path) -> None:
    running = start_server(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    path = tmp_path / "cache" / "resolutions.sqlite3"
    names = ["10.1000/182", "10.1000/1", "10.1000/multiple"]
    try:
        with Cache(path) as cache, Client(running.url, cache=cache) as client:
            warm = [client.resolve(n) for n in names]
            assert len(cache) == 3
    finally:
        stop_server(running)

    async def offline(cache: Cache) -> list[Resolved]:
        async with AsyncClient(running.url, cache=cache, retries=0) as client:
            return await collect(client, [*names, "10.1000/not-cached"], ordered=True)

    with Cache(path) as cache:  # a new process would see the same file
        out = asyncio.run(offline(cache))
    assert [item.result for item in out[:3]] == warm
    assert isinstance(out[3].error, doikit.TransportError)


def test_cache_honours_ttl() -> None:
    now = [1000.0]
    cache = Cache(clock=lambda: now[0])
    short = HandleValue(1, "URL", b"https://a.org", ttl=60)
    long = HandleValue(2, "URL", b"https://b.org", ttl=86400)
    record = HandleRecord("10.1000/ttl", (long, short))
    cache.put("k", record)
    assert cache.get("k") == record
    now[0] += 59
    assert cache.get("k") == record
    now[0] += 2
    assert cache.get("k") is None  # the shortest TTL among the values counts
    cache.put("zero", HandleRecord("10.1000/z", (HandleValue(1, "URL", b"x", ttl=0),)))
    cache.put("empty", HandleRecord("10.1000/e", ()))
    assert cache.get("zero") is None
    assert cache.get("empty") is None


def test_cache_keys_filters_and_bounds() -> None:
    cache = Cache(maxsize=2)
    for key in ("a", "b", "c"):
        cache.put(key, HandleRecord(key, (HandleValue(1, "URL", b"x"),)))
    assert len(cache) == 2
    assert cache.get("a") is None  # the oldest went first
    assert cache.get("c") is not None
