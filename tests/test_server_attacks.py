"""The hardening review's third round of attacks on `doikit serve`, as tests (issue 27).

Each test reproduces an attack that worked before its fix.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import socket
import subprocess
import threading
import time
import uuid
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx
import pytest

from conftest import DOIKIT, start_server, stop_server
from doikit.server import Row, open_store
from doikit.server._auth import Throttle, failure_delay, hash_secret

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from conftest import Server


def test_the_delay_has_a_ceiling_for_any_count_of_failures() -> None:
    # 0.25 * 2**n overflowed a float after about 1,030 failures: every later guess got a 500
    # at once instead of a delay.
    delays = [failure_delay(n) for n in range(5000)]
    assert delays == sorted(delays)
    assert delays[:5] == [0.0] * 5
    assert max(delays) == 8.0
    assert failure_delay(10**9) == 8.0


def test_the_throttle_holds_past_1100_failures() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def attack() -> list[bool]:
        throttle = Throttle(sleep=sleep)
        for _ in range(1100):  # the failures so far
            throttle.failures.failed("10.5555/admin")
        keys = [b"the-key-in-clear"]
        return [
            await throttle.check("10.5555/admin", keys, b"guess", "192.0.2.1") for _ in range(3)
        ]

    assert asyncio.run(attack()) == [False, False, False]
    assert slept == [8.0, 8.0, 8.0]  # the delay is served before each check, never skipped


def test_concurrent_guesses_do_not_hold_up_another_identity() -> None:
    # Each guess ran a scrypt on an unbounded thread pool before any delay: a few hundred at
    # once made every fresh login wait. Now one handle has two checks at a time at most.
    key = hash_secret("right").encode()

    async def attack() -> tuple[list[bool], float]:
        throttle = Throttle()
        guesses = [
            throttle.check("10.5555/admin", [key], f"guess{i}".encode(), f"198.51.100.{i % 250}")
            for i in range(300)
        ]
        started = time.monotonic()
        login = asyncio.ensure_future(throttle.check("10.5555/other", [key], b"right", "192.0.2.9"))
        answers = await asyncio.gather(*guesses)
        assert await login
        return answers, time.monotonic() - started

    answers, seconds = asyncio.run(attack())
    assert not any(answers)
    assert seconds < 3  # two guesses and the login: three scrypts, not three hundred


def test_the_answer_time_does_not_tell_which_names_hold_a_key() -> None:
    key = hash_secret("right").encode()

    async def timed(keys: list[bytes], name: str) -> float:
        throttle = Throttle()
        started = time.monotonic()
        assert not await throttle.check(name, keys, b"wrong", "192.0.2.1")
        return time.monotonic() - started

    holds = min(asyncio.run(timed([key], "10.5555/admin")) for _ in range(3))
    empty = min(asyncio.run(timed([], "10.5555/nobody")) for _ in range(3))
    assert 0.5 < empty / holds < 2  # both cost one scrypt (before: about 0 against 0.1 s)


def test_concurrent_checks_of_one_right_key_all_get_in() -> None:
    key = hash_secret("right").encode()

    async def burst() -> list[bool]:
        throttle = Throttle()
        return await asyncio.gather(
            *(throttle.check("10.5555/admin", [key], b"right", "127.0.0.1") for _ in range(50))
        )

    assert all(asyncio.run(burst()))


# --- slow bodies -----------------------------------------------------------------------------


def test_a_thousand_trickling_bodies_hold_nobody_up(tmp_path: Path) -> None:
    # 1,000 connections that sent a whole head and then trickled a declared body were never
    # evicted: under `ulimit -n 1024` they held the server at its cap and every new client
    # was reset for as long as they trickled.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < 1200:
        pytest.skip(f"this test needs 1,200 open files; the hard limit here is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    server = start_server(f"sqlite:///{tmp_path / 'db.sqlite3'}", open_files=1024)
    parts = urlsplit(server.url)
    address = (parts.hostname or "", parts.port or 0)
    head = (
        b"PUT /api/handles/10.5555/trickle HTTP/1.1\r\nHost: x\r\n"
        b"Authorization: Bearer " + server.token.encode() + b"\r\n"
        b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
    )
    trickling: list[socket.socket] = []
    try:
        for _ in range(1000):
            sock = socket.create_connection(address)
            sock.sendall(head)
            trickling.append(sock)
        for _ in range(8):  # trickle a byte a second each, and ask meanwhile
            for sock in trickling:
                with contextlib.suppress(OSError):
                    sock.send(b" ")
            started = time.monotonic()
            r = httpx.get(server.url + "/api/handles/10.1000/1", timeout=2)
            assert r.status_code == 200
            assert time.monotonic() - started < 1
            time.sleep(1)
        # Past the grace, the sweep has closed every one of them.
        closed = 0
        for sock in trickling:
            sock.settimeout(0)
            try:
                closed += sock.recv(1) == b""
            except BlockingIOError:
                pass
            except ConnectionError:
                closed += 1
        assert closed > 900
        assert server.process.poll() is None
        errors = server.errors()
        assert "Traceback" not in errors, errors[-3000:]
    finally:
        for sock in trickling:
            sock.close()
        stop_server(server)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


# --- broad searches --------------------------------------------------------------------------


def test_a_leading_wildcard_over_200000_records_is_stopped_and_blocks_no_one(
    tmp_path: Path,
) -> None:
    # `GET /hrls/handles?URL=*…` decoded every stored value on the event loop: 30-45 s per
    # request over 200,000 records, and other readers slowed down meanwhile.
    store = f"sqlite:///{tmp_path / 'db.sqlite3'}"

    async def fill() -> None:
        opened = open_store(store)
        await opened.open()
        try:
            for start in range(0, 200_000, 10_000):
                rows = []
                for n in range(start, start + 10_000):
                    name = f"10.5555/many-{n}"
                    data = {"format": "string", "value": f"https://e.org/{n}"}
                    values = [{"index": 1, "type": "URL", "data": data}]
                    rows.append(Row(name, name, "10.5555", json.dumps(values)))
                await opened.put_many(rows)
        finally:
            await opened.close()

    asyncio.run(fill())
    server = start_server(store)
    auth = {"Authorization": f"Bearer {server.token}"}
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            answers: list[httpx.Response] = []

            def broad() -> None:
                answers.append(http.get("/hrls/handles", params={"URL": "*nowhere"}, headers=auth))

            searches = [threading.Thread(target=broad) for _ in range(4)]
            started = time.monotonic()
            for thread in searches:
                thread.start()
            time.sleep(0.2)
            for _ in range(5):  # readers meanwhile
                asked = time.monotonic()
                assert http.get("/api/handles/10.5555/many-7").status_code == 200
                assert time.monotonic() - asked < 1
            for thread in searches:
                thread.join(60)
            assert time.monotonic() - started < 30
            assert [r.status_code for r in answers] == [400] * 4
            assert "literal start" in answers[0].json()["message"]
            narrow = http.get("/hrls/handles", params={"URL": "https://e.org/1234*"}, headers=auth)
            assert len(narrow.json()) == 111  # 1234, 12340-12349, 123400-123499
    finally:
        stop_server(server)


# --- writers of one name ----------------------------------------------------------------------


def test_fifty_concurrent_value_writes_to_one_name_all_get_in(store_url: str) -> None:
    # 18% of them answered 503 on PostgreSQL (2 of 500 on SQLite): nothing was lost, but a
    # writer that waits its turn should get in.
    server = start_server(store_url)
    auth = {"Authorization": f"Bearer {server.token}"}
    name = "10.5555/contended"
    try:
        first = {"values": [{"index": 1, "type": "URL", "data": "https://e.org/"}]}
        path = "/api/handles/" + name
        assert httpx.put(server.url + path, json=first, headers=auth).status_code == 201

        async def burst() -> list[int]:
            limits = httpx.Limits(max_connections=50)
            async with httpx.AsyncClient(base_url=server.url, timeout=60, limits=limits) as http:

                async def write(n: int) -> int:
                    body = {"values": [{"index": n, "type": "DESC", "data": f"writer {n}"}]}
                    r = await http.put(f"{path}?index={n}", json=body, headers=auth)
                    return r.status_code

                codes: list[int] = []
                for start in range(1000, 1500, 50):
                    codes += await asyncio.gather(*(write(n) for n in range(start, start + 50)))
                return codes

        codes = asyncio.run(burst())
        assert sorted(set(codes)) == [201], {c: codes.count(c) for c in set(codes)}
        stored = httpx.get(server.url + path).json()["values"]
        assert {v["index"] for v in stored} == {1, *range(1000, 1500)}
    finally:
        stop_server(server)


# --- as HANDLE.NET answers -------------------------------------------------------------------


@pytest.fixture(scope="module")
def api(served: Server) -> Iterator[tuple[httpx.Client, dict[str, str]]]:
    with httpx.Client(base_url=served.url, timeout=30, follow_redirects=False) as http:
        yield http, {"Authorization": f"Bearer {served.token}"}


@pytest.mark.parametrize(
    "url",
    ["www.url.foo", "javascript:alert(1)", "https://a/\r\nX: y", "https://a/ b", "/relative"],
)
def test_a_url_value_holds_any_string_and_the_proxy_redirects_only_to_http(
    api: tuple[httpx.Client, dict[str, str]], url: str
) -> None:
    # b2handle's own tests write www.url.foo, which HANDLE.NET stores; doikit refused it.
    http, auth = api
    name = "10.5555/any-url-" + uuid.uuid4().hex[:8]
    body = {"values": [{"index": 1, "type": "URL", "data": url}]}
    assert http.put("/api/handles/" + name, json=body, headers=auth).status_code == 201
    assert http.get("/api/handles/" + name).json()["values"][0]["data"]["value"] == url
    for path in ("/" + name, "/" + name + "?type=URL"):  # the fast path and the full route
        shown = http.get(path)
        assert shown.status_code == 200, path
        assert "location" not in shown.headers
        assert "not an http(s) address" in shown.text


def test_public_only_false_on_an_all_public_record_needs_no_credentials(
    api: tuple[httpx.Client, dict[str, str]],
) -> None:
    http, _ = api
    r = http.get("/api/handles/10.1000/182?publicOnly=false")
    assert r.status_code == 200, r.text
    assert r.json()["values"]


@pytest.mark.parametrize("index", ["+5", " 5", "5_0", "\u0665", "\uff15", "1e3", "0x5", "-1"])
def test_an_index_is_ascii_digits_only(
    api: tuple[httpx.Client, dict[str, str]], index: str
) -> None:
    http, auth = api
    for r in (
        http.get("/api/handles/10.1000/182", params={"index": index}),
        http.delete("/api/handles/10.1000/182", params={"index": index}, headers=auth),
    ):
        assert r.status_code == 400, (index, r.text)
        assert "ASCII digits" in r.json()["message"]


def test_a_record_put_again_unchanged_by_an_identity_that_is_not_its_admin_is_200(
    tmp_path: Path,
) -> None:
    # It answered 403 "lacks  on this name" (an empty permission name); HANDLE.NET: 200.
    store = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    secrets = {}
    for prefix in ("10.5555", "10.6666"):
        made = subprocess.run(
            [
                DOIKIT,
                "admin",
                "create",
                "--store",
                store,
                "--prefix",
                prefix,
                f"300:{prefix}/ADMIN",
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        secrets[prefix] = made.stdout.splitlines()[-1]
    server = start_server(store, demo=False)
    try:
        owner = httpx.BasicAuth("300%3A10.5555%2FADMIN", secrets["10.5555"])
        other = httpx.BasicAuth("300%3A10.6666%2FADMIN", secrets["10.6666"])
        url = server.url + "/api/handles/10.5555/same"
        body = {"values": [{"index": 1, "type": "URL", "data": "https://e.org/"}]}
        assert httpx.put(url, json=body, auth=owner).status_code == 201
        values = httpx.get(url).json()["values"]
        again = httpx.put(url, json={"values": values}, auth=other)
        assert again.status_code == 200, again.text
        changed = {"values": [{"index": 1, "type": "URL", "data": "https://e.org/changed"}]}
        refused = httpx.put(url, json=changed, auth=other)
        assert refused.status_code == 403
        assert "lacks modify_value" in refused.json()["message"]
    finally:
        stop_server(server)
