"""`doikit serve --handle-port --handle-processes N`: several processes answering on the same
sockets (server/_native_lanes.py), over real UDP and TCP sockets on loopback. What one
process starts (a challenge) another may finish, as CNRI's client opens a connection per
request; the others follow the first when it ends; one that dies leaves the rest answering."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from conftest import DOIKIT, free_port, start_server, stop_server
from doikit.handle import (
    ChallengeAnswerRequest,
    ChallengeResponse,
    OpFlag,
    ResolutionRequest,
    ResolutionResponse,
    decode,
    encode,
)
from test_native_server import _secret_answer, tcp

if TYPE_CHECKING:
    from collections.abc import Iterator

    from conftest import Server

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the lanes' processes are POSIX's")

NAME = "10.5555/lanes-1"
VALUES = [
    {"index": 1, "type": "URL", "data": "https://example.org/lanes"},
    {"index": 3, "type": "DESC", "data": "hidden", "permissions": "1100"},
]


def _children(pid: int) -> list[int]:
    """The processes whose parent is *pid* (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, int, str]]:
    store = f"sqlite:///{tmp_path_factory.mktemp('lanes') / 'lanes.sqlite3'}"
    made = subprocess.run(
        [DOIKIT, "admin", "create", "--store", store, "--prefix=10.5555", "300:10.5555/ADMIN"],
        capture_output=True,
        text=True,
        check=True,
    )
    port = free_port()
    server = start_server(
        store, demo=False, options=("--handle-port", str(port), "--handle-processes", "3")
    )
    auth = {"Authorization": f"Bearer {server.token}"}
    r = httpx.put(f"{server.url}/api/handles/{NAME}", json={"values": VALUES}, headers=auth)
    assert r.status_code == 201
    try:
        yield server, port, made.stdout.splitlines()[-1]
    finally:
        stop_server(server)


def test_three_processes_answer_on_one_port(three: tuple[Server, int, str]) -> None:
    server, port, _ = three
    assert len(_children(server.process.pid)) == 2
    request = encode(ResolutionRequest(NAME, op_flags=OpFlag.PUBLIC_ONLY))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(3)
        for i in range(300):  # (a datagram's id is its own; the lanes answer each)
            sock.sendto(request[:8] + i.to_bytes(4, "big") + request[12:], ("127.0.0.1", port))
            answer = decode(sock.recvfrom(65536)[0])
            assert isinstance(answer, ResolutionResponse)
            assert answer.request_id == i
            assert [v.index for v in answer.values] == [1]  # the private value hidden
    for _ in range(100):  # a connection each, as CNRI's client resolves over TCP
        assert isinstance(tcp(port, request), ResolutionResponse)


def test_a_challenge_answered_at_any_process(three: tuple[Server, int, str]) -> None:
    # Each challenge and its answer go over connections of their own: with three processes
    # taking connections as they come, 30 rounds all landing at the first one would be a
    # chance of 1 in 3**60; the relay carries the rest to the one table of challenges.
    _, port, secret = three
    for i in range(30):
        challenge = tcp(port, ResolutionRequest(NAME, request_id=100 + i))
        assert isinstance(challenge, ChallengeResponse), challenge
        answer = ChallengeAnswerRequest(
            "HS_SECKEY",
            "10.5555/ADMIN",
            300,
            _secret_answer(secret, challenge),
            request_id=200 + i,
            session_id=challenge.session_id,
        )
        done = tcp(port, answer, timeout=20)
        assert isinstance(done, ResolutionResponse), done
        assert [v.index for v in done.values] == [1, 3]


def test_the_others_answer_when_one_dies(three: tuple[Server, int, str]) -> None:
    server, port, _ = three
    victim = _children(server.process.pid)[0]
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while _alive(victim) and time.monotonic() < deadline:  # (a request it held dies with it)
        time.sleep(0.01)
    request = encode(ResolutionRequest(NAME, op_flags=OpFlag.PUBLIC_ONLY))
    for _ in range(50):
        assert isinstance(tcp(port, request), ResolutionResponse)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(3)
        for _ in range(50):
            sock.sendto(request, ("127.0.0.1", port))
            assert isinstance(decode(sock.recvfrom(65536)[0]), ResolutionResponse)
    assert "Traceback" not in server.errors()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_the_others_end_with_the_first(tmp_path: Path, sig: signal.Signals) -> None:
    store = f"sqlite:///{tmp_path / 'end.sqlite3'}"
    port = free_port()
    server = start_server(
        store, demo=False, options=("--handle-port", str(port), "--handle-processes", "2")
    )
    try:
        children = _children(server.process.pid)
        assert len(children) == 1
        os.kill(server.process.pid, sig)
        server.process.wait(10)
        deadline = time.monotonic() + 10
        while _alive(children[0]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(children[0])
        assert "Traceback" not in server.errors()
    finally:
        stop_server(server)


def test_more_than_one_process_needs_sqlite(pg_url: str) -> None:
    argv = [DOIKIT, "serve", "--store", pg_url, "--port", "0", "--handle-port", "0"]
    done = subprocess.run(
        [*argv, "--handle-processes", "2"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--handle-processes above 1 needs a SQLite store" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_point_reader_rests_and_sees_every_write(tmp_path: Path) -> None:
    import asyncio  # noqa: PLC0415

    from doikit.server.stores import Row, open_store  # noqa: PLC0415
    from doikit.server.stores._sqlite import QUIET_SECONDS, SNAPSHOT_SECONDS  # noqa: PLC0415

    async def work() -> None:
        store = open_store(f"sqlite:///{tmp_path / 'reader.sqlite3'}")
        await store.open()
        reader = store.point_reader()  # type: ignore[attr-defined]
        try:
            row = Row("10.5555/a", "10.5555/A", "10.5555", "[]")
            assert await store.swap("10.5555/a", None, row)
            assert reader.get("10.5555/a").name == "10.5555/A"
            await asyncio.sleep(QUIET_SECONDS + 0.05)
            reader.get("10.5555/a")
            reader.get("10.5555/a")
            snapshot = reader._snapshot  # (what the reader keeps)
            assert snapshot.conn.in_transaction  # a quiet spell: one kept
            changed = Row("10.5555/a", "10.5555/B", "10.5555", "[]")
            assert await store.swap("10.5555/a", "[]", changed)
            assert reader.get("10.5555/a").name == "10.5555/B"  # seen at once
            await asyncio.sleep(QUIET_SECONDS + 0.05)
            reader.get("10.5555/a")
            assert snapshot.conn.in_transaction
            reader.rest()
            assert not snapshot.conn.in_transaction
            reader.get("10.5555/a")
            await asyncio.sleep(SNAPSHOT_SECONDS + 0.05)
            reader.get("10.5555/a")  # the kept one ends by itself: this read is its own
            assert not snapshot.conn.in_transaction
        finally:
            reader.close()
            await store.close()

    asyncio.run(work())


def test_a_relay_frame_claiming_gigabytes_is_refused_unread(
    three: tuple[Server, int, str],
) -> None:
    import json  # noqa: PLC0415
    import struct  # noqa: PLC0415

    server, port, _ = three
    # (another process is started with the configuration in its environment)
    other = next(pid for pid in _children(server.process.pid) if _alive(pid))
    environ = (Path("/proc") / str(other) / "environ").read_bytes().split(b"\0")
    config = next(e for e in environ if e.startswith(b"DOIKIT_NATIVE="))
    relay = json.loads(config.partition(b"=")[2])["relay"]
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(relay)
        sock.sendall(struct.pack(">II", 1, 2**31) + b"x" * 1000)
        assert sock.recv(16) == b""  # closed at once, nothing read for it
    request = encode(ResolutionRequest(NAME, op_flags=OpFlag.PUBLIC_ONLY))
    assert isinstance(tcp(port, request), ResolutionResponse)
    assert "Traceback" not in server.errors()
