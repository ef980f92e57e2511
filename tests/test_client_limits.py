"""doikit.client against small real servers that misbehave: bounded time, bounded memory, and
always a ResolutionError (never a RecursionError or an endless wait)."""

from __future__ import annotations

import asyncio
import gzip
import http.server
import json
import resource
import threading
import time
from typing import TYPE_CHECKING, ClassVar

import pytest

from conftest import serving
from doikit import MalformedResponse, ResolutionError, TransportError
from doikit.client import AsyncClient, Client

if TYPE_CHECKING:
    from collections.abc import Iterator

# 2 MB of gzip that inflates to 2 GB of zeros.
_BOMB = gzip.compress(b"\0" * (1 << 27), compresslevel=9) * 16


class _Quiet(http.server.BaseHTTPRequestHandler):
    """A handler that logs nothing and answers with :meth:`reply`."""

    def log_message(self, *_: object) -> None:
        pass

    def reply(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Bomb(_Quiet):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(_BOMB)))
        self.end_headers()
        self.wfile.write(_BOMB)


class _Trickle(_Quiet):
    """A byte every 0.3 s: of the head (``/head``) or of the body."""

    def do_GET(self) -> None:
        body = b'{"responseCode":1,"handle":"10.1000/1","values":[]}' * 20
        head = (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n"
        )
        slow, fast = (
            (head, b"") if self.path.startswith("/api/handles/10.1000/head") else (b"", head)
        )
        try:
            self.wfile.write(fast)
            for i in range(len(slow)):
                self.wfile.write(slow[i : i + 1])
                self.wfile.flush()
                time.sleep(0.3)
            for i in range(len(body)):
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
                time.sleep(0.3)
        except OSError:
            pass


class _Nested(_Quiet):
    def do_GET(self) -> None:
        body = (
            b'{"responseCode":1,"handle":"10.1000/1","values":'
            + b"[" * 100_000
            + b"]" * 100_000
            + b"}"
        )
        self.reply(200, body)


class _Loop(_Quiet):
    requests: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Loop.requests.append(self.path)
        self.send_response(302)
        self.send_header("Location", self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_a_compressed_bomb_is_refused_in_bounded_memory() -> None:
    before = _peak_mb()
    with serving(_Bomb) as url:
        with Client(url, retries=0) as client, pytest.raises(ResolutionError, match="over"):
            client.resolve("10.1000/1")

        async def run() -> None:
            async with AsyncClient(url, retries=0) as client:
                with pytest.raises(ResolutionError, match="over"):
                    await client.resolve("10.1000/1")

        asyncio.run(run())
    assert _peak_mb() - before < 400


@pytest.mark.parametrize("name", ["10.1000/head", "10.1000/body"])
def test_a_trickling_server_is_given_up_on_at_the_deadline(name: str) -> None:
    with serving(_Trickle) as url:
        started = time.monotonic()
        with Client(url, timeout=2, retries=0) as client, pytest.raises(TransportError):
            client.resolve(name)
        assert time.monotonic() - started < 4

        async def run() -> None:
            async with AsyncClient(url, timeout=2, retries=0) as client:
                with pytest.raises(TransportError):
                    await client.resolve(name)

        started = time.monotonic()
        asyncio.run(run())
        assert time.monotonic() - started < 4


def test_deeply_nested_json_is_a_malformed_response() -> None:
    with serving(_Nested) as url:
        with Client(url, retries=0) as client, pytest.raises(MalformedResponse):
            client.resolve("10.1000/1")

        async def run() -> None:
            async with AsyncClient(url, retries=0) as client:
                with pytest.raises(MalformedResponse):
                    await client.resolve("10.1000/1")

        asyncio.run(run())


def test_a_redirect_loop_is_one_error_not_retries() -> None:
    with serving(_Loop) as url:
        _Loop.requests.clear()
        with Client(url, retries=3) as client, pytest.raises(TransportError, match="redirects"):
            client.metadata("10.1000/1")
        assert len(_Loop.requests) == 11  # the first request and 10 redirects, once

        async def run() -> None:
            async with AsyncClient(url, retries=3) as client:
                with pytest.raises(TransportError, match="redirects"):
                    await client.metadata("10.1000/1")

        _Loop.requests.clear()
        asyncio.run(run())
        assert 10 <= len(_Loop.requests) <= 11  # aiohttp counts the first request in


class _OneSlow(_Quiet):
    release = threading.Event()

    def do_GET(self) -> None:
        if self.path.endswith("/slow"):
            _OneSlow.release.wait(20)
        name = self.path.removeprefix("/api/handles/").partition("?")[0]
        body = json.dumps({"responseCode": 1, "handle": name, "values": []}).encode()
        self.reply(200, body)


@pytest.fixture
def one_slow() -> Iterator[str]:
    _OneSlow.release.clear()
    with serving(_OneSlow) as url:
        yield url
    _OneSlow.release.set()


def test_ordered_resolution_reads_a_bounded_window_ahead(one_slow: str) -> None:
    read = 0

    def names() -> Iterator[str]:
        nonlocal read
        yield "10.1000/slow"
        for i in range(10_000):
            read += 1
            yield f"10.1000/{i}"

    async def run() -> int:
        async with AsyncClient(one_slow, timeout=30) as client:
            seen = 0
            async for _item in client.resolve_many(names(), concurrency=8, ordered=True):
                if seen == 0:
                    ahead = read
                seen += 1
                if seen > 10:
                    break
            return ahead

    async def release_later() -> None:
        await asyncio.sleep(2)
        _OneSlow.release.set()

    async def both() -> int:
        releaser = asyncio.create_task(release_later())
        ahead = await run()
        await releaser
        return ahead

    assert asyncio.run(both()) <= 4 * 8


class _HeavyRedirect(_Quiet):
    """A redirect whose body is 400 MB, then the metadata."""

    def do_GET(self) -> None:
        if not self.path.startswith("/final"):
            self.send_response(302)
            self.send_header("Location", "/final")
            self.send_header("Content-Length", str(400 << 20))
            self.end_headers()
            chunk = b"x" * (1 << 20)
            try:
                for _ in range(400):
                    self.wfile.write(chunk)
            except OSError:
                pass
            return
        body = b'{"title":"t"}'
        self.reply(200, body, "application/vnd.citationstyles.csl+json")


def test_a_redirect_body_is_never_read() -> None:
    before = _peak_mb()
    with serving(_HeavyRedirect) as url:
        with Client(url, retries=0, timeout=20) as client:
            assert client.metadata("10.1000/1") == {"title": "t"}

        async def run() -> None:
            async with AsyncClient(url, retries=0, timeout=20) as client:
                assert await client.metadata("10.1000/1") == {"title": "t"}

        asyncio.run(run())
    assert _peak_mb() - before < 200


class _Proxy(_Quiet):
    """A forward proxy that answers every request for any host with one record."""

    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Proxy.seen.append(self.path)
        body = b'{"responseCode":1,"handle":"10.1000/1","values":[]}'
        self.reply(200, body)


def test_the_sync_client_honours_the_environments_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    with serving(_Proxy) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        _Proxy.seen.clear()
        with Client("http://resolver.invalid", retries=0, timeout=5) as client:
            assert client.resolve("10.1000/1").handle == "10.1000/1"
        assert _Proxy.seen == ["http://resolver.invalid/api/handles/10.1000/1"]
