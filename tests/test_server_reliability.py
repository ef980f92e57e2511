"""Durability and concurrency of `doikit serve`, on both stores, through real processes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import free_port, start_server, stop_server


def _put(http: httpx.Client, token: str, name: str) -> int:
    body = {"values": [{"index": 1, "type": "URL", "data": f"https://example.org/{name}"}]}
    return http.put(
        f"/api/handles/{name}", json=body, headers={"Authorization": f"Bearer {token}"}
    ).status_code


def test_sigkill_loses_no_acknowledged_write(store_url: str) -> None:
    server = start_server(store_url, demo=False)
    acknowledged: list[str] = []
    stop = threading.Event()

    def writer(n: int) -> None:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            i = 0
            while not stop.is_set():
                name = f"10.5555/kill-{n}-{i}"
                try:
                    status = _put(http, server.token, name)
                except httpx.HTTPError:
                    return  # the server died under this request: it was never acknowledged
                if status == 201:
                    acknowledged.append(name)
                i += 1

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    while len(acknowledged) < 300 and time.monotonic() < deadline:
        time.sleep(0.01)
    server.kill()  # SIGKILL, mid-stream: no shutdown, no flush
    stop.set()
    for thread in threads:
        thread.join()
    server.log.close()
    assert len(acknowledged) >= 300

    again = start_server(store_url, demo=False)
    try:
        with httpx.Client(base_url=again.url, timeout=10) as http:
            lost = [n for n in acknowledged if http.get(f"/api/handles/{n}").status_code != 200]
        assert lost == []
    finally:
        stop_server(again)


def test_32_concurrent_writers(store_url: str) -> None:
    server = start_server(store_url, demo=False)
    try:

        def writer(n: int) -> list[int]:
            with httpx.Client(base_url=server.url, timeout=30) as http:
                return [_put(http, server.token, f"10.5555/c{n}-{i}") for i in range(15)]

        with ThreadPoolExecutor(32) as pool:
            statuses = [s for batch in pool.map(writer, range(32)) for s in batch]
        assert statuses == [201] * (32 * 15)
        auth = {"Authorization": f"Bearer {server.token}"}
        listing = httpx.get(
            server.url + "/api/handles", params={"prefix": "10.5555", "pageSize": "0"}, headers=auth
        ).json()
        assert listing["totalCount"] == 32 * 15
        assert "Traceback" not in server.errors()
    finally:
        stop_server(server)


def test_a_lost_database_is_503_with_retry_after_and_a_page(pg_url: str) -> None:
    import asyncio  # noqa: PLC0415

    import asyncpg  # noqa: PLC0415

    async def sql(statement: str) -> None:
        conn = await asyncpg.connect(pg_url)
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    asyncio.run(sql("DROP DATABASE IF EXISTS doomed"))
    asyncio.run(sql("CREATE DATABASE doomed"))
    server = start_server(pg_url.rsplit("/", 1)[0] + "/doomed")
    try:
        assert httpx.get(server.url + "/api/handles/10.1000/182").status_code == 200
        # A real failure: the database disappears under the running server.
        asyncio.run(sql("DROP DATABASE doomed WITH (FORCE)"))
        api = httpx.get(server.url + "/api/handles/10.1000/182")
        assert (api.status_code, api.json()["responseCode"]) == (503, 3)
        assert api.headers["retry-after"] == "5"
        page = httpx.get(server.url + "/10.1000/182")
        assert page.status_code == 503
        assert page.headers["content-type"].startswith("text/html")
        assert "Traceback" not in server.errors()
    finally:
        stop_server(server)


def test_postgresql_stopping_is_503_one_log_line_and_recovery() -> None:
    """A private cluster, stopped and started under a running server."""
    if not shutil.which("initdb") or not shutil.which("pg_ctl"):
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) are not on the PATH")
    tmp_path = Path(tempfile.mkdtemp(prefix="doikit-pg-"))  # reachable by the cluster's user
    data = tmp_path / "pg"
    if os.geteuid() == 0:
        shutil.chown(tmp_path, "nobody")
    port = free_port()
    as_user = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []
    subprocess.run(
        [*as_user, "initdb", "-D", str(data), "-U", "doikit", "-A", "trust", "--no-sync"],
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {tmp_path} -c listen_addresses=127.0.0.1"

    def pg_ctl(*args: str) -> None:
        subprocess.run(
            [*as_user, "pg_ctl", "-D", str(data), "-o", options, "-w", *args],
            check=True,
            capture_output=True,
        )

    pg_ctl("-l", str(tmp_path / "log"), "start")
    server = start_server(f"postgresql://doikit@127.0.0.1:{port}/postgres")
    try:
        assert httpx.get(server.url + "/api/handles/10.1000/182").status_code == 200
        pg_ctl("-m", "fast", "stop")
        for _ in range(20):
            r = httpx.get(server.url + "/api/handles/10.1000/182", timeout=10)
            assert (r.status_code, r.headers.get("retry-after")) == (503, "5")
            assert r.json()["responseCode"] == 3
        assert httpx.get(server.url + "/10.1000/182").status_code == 503
        pg_ctl("-l", str(tmp_path / "log"), "start")
        assert httpx.get(server.url + "/api/handles/10.1000/182").status_code == 200
        # (the recovery's line is written once the answer has gone out: wait for it)
        deadline = time.monotonic() + 10
        while "answers again" not in server.errors() and time.monotonic() < deadline:
            time.sleep(0.05)
        log = server.errors()
        assert log.count("cannot answer") == 1, log
        assert log.count("answers again") == 1, log
        assert "Traceback" not in log
    finally:
        stop_server(server)
        with contextlib.suppress(subprocess.CalledProcessError):
            pg_ctl("-m", "immediate", "stop")
        shutil.rmtree(tmp_path, ignore_errors=True)


async def _slow_app(scope: dict[str, Any], _receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    await asyncio.sleep(2)
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"4")]}
    )
    await send({"type": "http.response.body", "body": b"slow"})


def test_a_request_pipelined_behind_a_protocol_reply_outlives_the_keep_alive_timer() -> None:
    # GuardedProtocol writes a hot read's reply itself, and uvicorn then arms its keep-alive
    # timer; a request that came in the same read goes the usual way and must be answered,
    # not cut when that timer fires (here after 1 s, while the app takes 2 s).
    import uvicorn  # noqa: PLC0415 - the server extra

    from doikit.server._uvicorn import GuardedProtocol  # noqa: PLC0415

    port = free_port()
    config = uvicorn.Config(
        _slow_app,
        host="127.0.0.1",
        port=port,
        http=GuardedProtocol,
        lifespan="off",
        log_level="warning",
        timeout_keep_alive=1,
    )
    server = uvicorn.Server(config)
    saved = GuardedProtocol.answer
    GuardedProtocol.answer = staticmethod(
        lambda target: (200, [(b"content-length", b"4")], b"fast") if target == b"/10.1/x" else None
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(
                b"GET /10.1/x HTTP/1.1\r\nHost: x\r\n\r\nGET /slow HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            got = b""
            while got.count(b"HTTP/1.1 200") < 2 or not got.endswith(b"slow"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                got += chunk
        assert got.count(b"HTTP/1.1 200") == 2, got
        assert got.endswith(b"slow"), got
    finally:
        GuardedProtocol.answer = saved
        server.should_exit = True
        thread.join(timeout=10)
