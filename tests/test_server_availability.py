"""A `doikit serve` that slow and hostile clients cannot take down (real sockets, real limits).

The server runs with the common `ulimit -n 1024`; against it: 2,000 half-open requests, a
client streaming an endless header, and slow clients sending a header line now and then.
A normal client must still be answered within a second, every time.
"""

from __future__ import annotations

import contextlib
import resource
import socket
import threading
import time
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx
import pytest

from conftest import start_server, stop_server

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from conftest import Server


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[Server]:
    running = start_server(f"sqlite:///{tmp_path / 'db.sqlite3'}", open_files=1024)
    try:
        yield running
    finally:
        stop_server(running)


def _address(server: Server) -> tuple[str, int]:
    parts = urlsplit(server.url)
    assert parts.hostname is not None
    assert parts.port is not None
    return parts.hostname, parts.port


def _answered_within_a_second(server: Server) -> None:
    started = time.monotonic()
    r = httpx.get(server.url + "/api/handles/10.1000/1", timeout=1)
    assert r.status_code == 200
    assert time.monotonic() - started < 1


def test_half_open_connections_a_huge_header_and_slow_clients(limited: Server) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < 2200:
        pytest.skip(f"this test needs 2,200 open files; the hard limit here is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    address = _address(limited)
    stop = threading.Event()
    half_open: list[socket.socket] = []

    def endless_header() -> None:
        with contextlib.suppress(OSError), socket.create_connection(address) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: ")
            chunk = b"a" * (1 << 20)
            for _ in range(128):
                if stop.is_set():
                    return
                sock.sendall(chunk)

    def slow_client() -> None:
        with contextlib.suppress(OSError), socket.create_connection(address) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            while not stop.wait(0.5):
                sock.sendall(b"X-Slow: 1\r\n")

    threads = [threading.Thread(target=endless_header)] + [
        threading.Thread(target=slow_client) for _ in range(20)
    ]
    try:
        for thread in threads:
            thread.start()
        for _ in range(2000):
            sock = socket.create_connection(address)
            sock.sendall(b"GET /10.1000/1 HTTP/1.1\r\nHost: x\r\nX-Half: ")
            half_open.append(sock)
        for _ in range(5):
            _answered_within_a_second(limited)
        assert limited.process.poll() is None
    finally:
        stop.set()
        for sock in half_open:
            sock.close()
        for thread in threads:
            thread.join(10)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    _answered_within_a_second(limited)
    assert "Traceback" not in limited.errors()


def test_a_head_that_never_ends_is_cut_at_its_deadline(tmp_path: Path) -> None:
    server = start_server(f"sqlite:///{tmp_path / 'db.sqlite3'}", options=("--head-timeout", "1"))
    try:
        with socket.create_connection(_address(server), timeout=10) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            started = time.monotonic()
            while time.monotonic() - started < 5:
                try:
                    sock.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    break
                time.sleep(0.2)
            took = time.monotonic() - started
        assert took < 3  # closed after about one second
    finally:
        stop_server(server)


def test_a_head_over_64_kib_is_431(limited: Server) -> None:
    r = httpx.get(limited.url + "/api/handles/10.1000/1", headers={"X-Big": "a" * 70_000})
    assert r.status_code == 431
    _answered_within_a_second(limited)


def test_a_body_that_never_ends_is_cut_at_the_request_deadline(tmp_path: Path) -> None:
    server = start_server(
        f"sqlite:///{tmp_path / 'db.sqlite3'}", options=("--request-timeout", "1")
    )
    try:
        with socket.create_connection(_address(server), timeout=10) as sock:
            sock.sendall(
                b"PUT /api/handles/10.5555/x HTTP/1.1\r\nHost: x\r\n"
                b"Authorization: Bearer " + server.token.encode() + b"\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n[{"
            )
            started = time.monotonic()
            data = sock.recv(65536)  # b"" when the server closes the connection
            took = time.monotonic() - started
        assert took < 3
        assert not data or data.startswith(b"HTTP/1.1 ")
        _answered_within_a_second(server)
    finally:
        stop_server(server)
