"""`doikit serve --handle-port`: the native Handle protocol over real UDP and TCP sockets on
loopback, on both stores, spoken by doikit's own codec (tests/test_handle_interop.py speaks
to it with CNRI's client when one is built)."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import hmac
import json
import os
import socket
import struct
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import free_port, start_server, stop_server
from doikit.handle import (
    SECRET_PBKDF2_HMAC_SHA1,
    ChallengeAnswerRequest,
    ChallengeResponse,
    CreateHandleRequest,
    DeleteHandleRequest,
    ErrorResponse,
    GetSiteInfoRequest,
    HandleValue,
    HandleWireError,
    HomeNARequest,
    ListNAsRequest,
    ListNAsResponse,
    OpFlag,
    ResolutionRequest,
    ResolutionResponse,
    SecretKeyAnswer,
    SiteInfoResponse,
    TcpFramer,
    UdpReassembler,
    UnhomeNARequest,
    VerifyChallengeRequest,
    VerifyChallengeResponse,
    decode,
    encode,
    encode_datagrams,
    secret_answer_to_bytes,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from conftest import Server
    from doikit.handle import Message

VECTORS = Path(__file__).parent / "vectors" / "handle-native"
NAME = "10.5555/native-1"
SECRETS: dict[str, str] = {}
VALUES = [
    {"index": 1, "type": "URL", "data": "https://example.org/native"},
    {"index": 2, "type": "EMAIL", "data": "a@example.org"},
    {"index": 3, "type": "DESC", "data": "hidden", "permissions": "1100"},
]


@pytest.fixture(scope="module")
def native(module_store: str) -> Iterator[tuple[Server, int]]:
    import subprocess  # noqa: PLC0415

    from conftest import DOIKIT  # noqa: PLC0415

    made = subprocess.run(
        [
            DOIKIT,
            "admin",
            "create",
            "--store",
            module_store,
            "--prefix=10.5555",
            "300:10.5555/ADMIN",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    SECRETS[module_store] = made.stdout.splitlines()[-1]
    port = free_port()
    server = start_server(module_store, options=("--handle-port", str(port)))
    auth = {"Authorization": f"Bearer {server.token}"}
    r = httpx.put(f"{server.url}/api/handles/{NAME}", json={"values": VALUES}, headers=auth)
    assert r.status_code == 201
    try:
        yield server, port
    finally:
        stop_server(server)


def udp(port: int, request: Message, timeout: float = 3.0) -> Message:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(timeout)
        for packet in encode_datagrams(request):
            sock.sendto(packet, ("127.0.0.1", port))
        reassembler = UdpReassembler()
        while True:
            data, _ = sock.recvfrom(65536)
            unit = reassembler.feed(data, "server", time.monotonic())
            if unit is not None:
                return decode(unit)


def tcp(port: int, request: Message | bytes, timeout: float = 3.0) -> Message | None:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request if isinstance(request, bytes) else encode(request))
        framer = TcpFramer()
        while True:
            data = sock.recv(65536)
            if not data:
                return None
            framer.feed(data)
            message = framer.next_message()
            if message is not None:
                return message


PO = OpFlag.PUBLIC_ONLY


def test_site_info_over_udp_and_tcp(native: tuple[Server, int]) -> None:
    _, port = native
    for ask in (udp, tcp):
        answer = ask(port, GetSiteInfoRequest("/", request_id=41))
        assert isinstance(answer, SiteInfoResponse)
        assert answer.request_id == 41
        assert answer.op_flags & OpFlag.AUTHORITATIVE
        (server,) = answer.site.servers
        http_port = int(native[0].url.rsplit(":", 1)[1])
        wanted = {(0, port), (1, port), (2, http_port)}
        assert {(i.protocol, i.port) for i in server.interfaces} == wanted


def test_resolution_with_filters_and_public_only(native: tuple[Server, int]) -> None:
    _, port = native
    for ask in (udp, tcp):
        answer = ask(port, ResolutionRequest(NAME.upper(), request_id=7, op_flags=PO))
        assert isinstance(answer, ResolutionResponse)
        assert answer.handle == NAME.upper()  # echoed as asked
        assert [v.index for v in answer.values] == [1, 2]  # 3 has no public read
        typed = ask(port, ResolutionRequest(NAME, types=("URL",), op_flags=PO))
        assert isinstance(typed, ResolutionResponse)
        assert [(v.type, v.data) for v in typed.values] == [("URL", b"https://example.org/native")]
        indexed = ask(port, ResolutionRequest(NAME, indexes=(2,), op_flags=PO))
        assert isinstance(indexed, ResolutionResponse)
        assert [v.index for v in indexed.values] == [2]


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        (ResolutionRequest("10.9999/elsewhere", op_flags=PO), 301),
        (ResolutionRequest("10.5555/absent", op_flags=PO), 100),
        (ResolutionRequest(NAME, types=("NOPE",), op_flags=PO), 200),
        (ResolutionRequest(NAME), 402),  # a private value: a challenge
    ],
)
def test_errors_as_cnri_answers(native: tuple[Server, int], request_: Message, code: int) -> None:
    _, port = native
    for ask in (udp, tcp):
        answer = ask(port, request_)
        assert isinstance(answer, ChallengeResponse if code == 402 else ErrorResponse)
        assert answer.response_code == code


def test_hostile_bytes_crash_nothing(native: tuple[Server, int]) -> None:
    server, port = native
    # An envelope claiming 2 GB: the connection is closed, nothing is allocated.
    huge = struct.pack(">BBBBiiii", 2, 11, 2, 11, 0, 1, 0, 0x7FFFFFFF)
    assert tcp(port, huge + b"\x00" * 100) is None
    # Garbage, truncated and empty datagrams are not answered (nothing to amplify).
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(0.5)
        for junk in (b"", b"\xff" * 600, encode(GetSiteInfoRequest("/"))[:30], b"\x02" * 20):
            sock.sendto(junk, ("127.0.0.1", port))
        with pytest.raises(TimeoutError):
            sock.recvfrom(65536)
    # A stream that stops halfway is closed at the idle deadline; meanwhile others are answered.
    with socket.create_connection(("127.0.0.1", port)) as slow:
        slow.sendall(encode(GetSiteInfoRequest("/"))[:25])
        assert isinstance(udp(port, GetSiteInfoRequest("/")), SiteInfoResponse)
        assert isinstance(tcp(port, GetSiteInfoRequest("/")), SiteInfoResponse)
    assert server.process.poll() is None
    assert "Traceback" not in server.errors()


def test_the_rest_api_and_the_native_protocol_read_one_store(native: tuple[Server, int]) -> None:
    server, port = native
    auth = {"Authorization": f"Bearer {server.token}"}
    name = "10.5555/native-both"
    body = {"values": [{"index": 1, "type": "URL", "data": "https://a.example/"}]}
    assert httpx.put(f"{server.url}/api/handles/{name}", json=body, headers=auth).is_success
    answer = udp(port, ResolutionRequest(name, op_flags=PO))
    assert isinstance(answer, ResolutionResponse)
    assert answer.values[0].data == b"https://a.example/"
    assert httpx.delete(f"{server.url}/api/handles/{name}", headers=auth).is_success
    gone = udp(port, ResolutionRequest(name, op_flags=PO))
    assert isinstance(gone, ErrorResponse)
    assert gone.response_code == 100


def test_a_busy_handle_port_is_one_line_and_exit_2(tmp_path: object) -> None:
    import subprocess  # noqa: PLC0415

    from conftest import DOIKIT  # noqa: PLC0415

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        store = f"sqlite:///{tmp_path}/s.sqlite3"
        done = subprocess.run(
            [DOIKIT, "serve", "--store", store, "--port", "0", "--handle-port", str(port)],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().count("\n") == 0
    assert "--handle-port" in done.stderr


def _secret_answer(secret: str, challenge: ChallengeResponse) -> bytes:
    """A PBKDF2-HMAC-SHA1 answer, as CNRI 9's client makes it (handle-protocol.md §11.2)."""
    assert challenge.request_digest is not None
    salt = os.urandom(16)
    key = hashlib.pbkdf2_hmac("sha1", secret.encode(), salt, 10000, 20)
    mac = hmac.new(key, challenge.nonce + challenge.request_digest.digest, "sha1").digest()
    return secret_answer_to_bytes(SecretKeyAnswer(SECRET_PBKDF2_HMAC_SHA1, mac, salt, 10000, 160))


def test_values_without_public_read_after_a_challenge(native: tuple[Server, int]) -> None:
    server, port = native
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(encode(ResolutionRequest(NAME, request_id=9)))  # no public-only flag
        framer = TcpFramer()
        while (challenge := framer.next_message()) is None:
            framer.feed(sock.recv(65536))
    assert isinstance(challenge, ChallengeResponse)
    assert challenge.session_id != 0
    secret = SECRETS[server.store]
    for tried, code in ((secret + "x", 403), (secret, 1)):
        if code == 1:  # a challenge is answered once: ask again for a fresh one
            again = tcp(port, ResolutionRequest(NAME, request_id=10))
            assert isinstance(again, ChallengeResponse)
            challenge = again
        answer = ChallengeAnswerRequest(
            "HS_SECKEY",
            "10.5555/ADMIN",
            300,
            _secret_answer(tried, challenge),
            request_id=11,
            session_id=challenge.session_id,
        )
        done = tcp(port, answer, timeout=20)
        assert done is not None
        assert done.response_code == code
    assert isinstance(done, ResolutionResponse)
    assert [v.index for v in done.values] == [1, 2, 3]  # the private value too
    late = tcp(port, answer, timeout=20)  # the same answer again: no challenge waits for it
    assert isinstance(late, ErrorResponse)
    assert late.response_code == 405


def test_verify_challenge_for_an_identity_held_here(native: tuple[Server, int]) -> None:
    # The VERIFY_CHALLENGE CNRI's server B sent to server A (two_server_udp, V17): a
    # secret-key answer of the key "secret". The MAC covers nonce and digest, not the
    # handle, so it is asked here of an identity that holds that key.
    server, port = native
    auth = {"Authorization": f"Bearer {server.token}"}
    body = {"values": [{"index": 300, "type": "HS_SECKEY", "data": "secret"}]}
    name = "10.5555/verify-" + str(port)
    assert httpx.put(f"{server.url}/api/handles/{name}", json=body, headers=auth).is_success
    captured = next(
        decode(bytes.fromhex(line["hex"]))
        for line in map(json.loads, (VECTORS / "two_server_udp.jsonl").read_text().splitlines())
        if line["dir"] == "c2s" and line["hex"][40:48] == "000000c9"
    )
    assert isinstance(captured, VerifyChallengeRequest)
    for handle, valid in ((name, True), ("10.5555/ADMIN", False)):
        asked = dataclasses.replace(captured, identity_handle=handle)
        answer = udp(port, asked)
        assert isinstance(answer, VerifyChallengeResponse)
        assert answer.valid is valid
        assert answer.credential is not None  # asked with CT: signed by the server key


def _captured_requests() -> list[bytes]:
    out = []
    for name in ("udp.jsonl", "tcp.jsonl", "two_server_udp.jsonl"):
        for line in (VECTORS / name).read_text().splitlines():
            item = json.loads(line)
            if item["dir"] == "c2s":
                out.append(bytes.fromhex(item["hex"]))
    return out


CAPTURED = _captured_requests()


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    data=st.one_of(
        st.binary(max_size=700),
        st.tuples(st.sampled_from(CAPTURED), st.integers(0, 400), st.binary(max_size=8)).map(
            lambda t: t[0][: t[1]] + t[2] + t[0][t[1] + len(t[2]) :]
        ),
    )
)
def test_any_bytes_on_either_socket_leave_the_server_answering(
    native: tuple[Server, int], data: bytes
) -> None:
    server, port = native
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.sendto(data, ("127.0.0.1", port))
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(2)
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        with contextlib.suppress(OSError):
            reply = sock.recv(65536)
            if reply:  # whatever comes back is a message of the protocol
                framer = TcpFramer()
                framer.feed(reply)
                with contextlib.suppress(HandleWireError):
                    framer.next_unit()
    assert isinstance(udp(port, GetSiteInfoRequest("/")), SiteInfoResponse)
    assert server.process.poll() is None


def test_no_traceback_after_the_hostile_bytes(native: tuple[Server, int]) -> None:
    server, _ = native
    assert "Traceback" not in server.errors()


def _as_admin(server: Server, port: int, request: Message) -> Message:
    """*request* sent, challenged, and answered with the secret key of 300:10.5555/ADMIN."""
    challenge = tcp(port, request)
    assert isinstance(challenge, ChallengeResponse), challenge
    # (other tests answer wrongly for this identity: its answers may wait up to 8 s)
    answer = ChallengeAnswerRequest(
        "HS_SECKEY",
        "10.5555/ADMIN",
        300,
        _secret_answer(SECRETS[server.store], challenge),
        request_id=request.request_id + 1,
        session_id=challenge.session_id,
    )
    done = tcp(port, answer, timeout=20)
    assert done is not None
    return done


def test_home_and_unhome_a_derived_prefix(native: tuple[Server, int]) -> None:
    server, port = native
    prefix = f"10.5555.{port}"
    assert (
        _as_admin(server, port, HomeNARequest("0.NA/" + prefix, request_id=20)).response_code == 1
    )
    listed = _as_admin(server, port, ListNAsRequest("/", request_id=22))
    assert isinstance(listed, ListNAsResponse)
    assert "0.NA/" + prefix in listed.handles
    name = prefix + "/x"
    create = CreateHandleRequest(name, (HandleValue(1, "URL", b"https://e.org/"),), request_id=24)
    assert _as_admin(server, port, create).response_code == 1
    found = udp(port, ResolutionRequest(name, op_flags=PO))
    assert isinstance(found, ResolutionResponse)
    unhome = UnhomeNARequest("0.NA/" + prefix, request_id=26)
    refused = _as_admin(server, port, unhome)
    assert isinstance(refused, ErrorResponse)
    assert "remain" in refused.message
    assert _as_admin(server, port, DeleteHandleRequest(name, request_id=28)).response_code == 1
    assert _as_admin(server, port, unhome).response_code == 1
    gone = udp(port, ResolutionRequest(prefix + "/y", op_flags=PO))
    assert isinstance(gone, ErrorResponse)
    assert gone.response_code == 301  # not homed any more
    elsewhere = _as_admin(server, port, HomeNARequest("0.NA/10.7777.1", request_id=30))
    assert elsewhere.response_code == 400  # no admin of it at all


def test_a_sigkill_loses_no_acknowledged_change(tmp_path: Path) -> None:
    import subprocess  # noqa: PLC0415

    from conftest import DOIKIT  # noqa: PLC0415

    store = f"sqlite:///{tmp_path / 'kill.sqlite3'}"
    made = subprocess.run(
        [DOIKIT, "admin", "create", "--store", store, "--prefix=10.5555", "300:10.5555/ADMIN"],
        capture_output=True,
        text=True,
        check=True,
    )
    SECRETS[store] = made.stdout.splitlines()[-1]
    port = free_port()
    server = start_server(store, demo=False, options=("--handle-port", str(port)))
    names = [f"10.5555/kill-{i}" for i in range(20)]
    try:
        for i, name in enumerate(names):
            value = HandleValue(1, "URL", f"https://e.org/{i}".encode())
            create = CreateHandleRequest(name, (value,), request_id=100 + 2 * i)
            assert _as_admin(server, port, create).response_code == 1
        server.kill()  # right after the last acknowledgement
    finally:
        stop_server(server)
    again = start_server(store, demo=False, options=("--handle-port", str(port)))
    try:
        for i, name in enumerate(names):
            found = udp(port, ResolutionRequest(name, op_flags=PO))
            assert isinstance(found, ResolutionResponse), name
            assert found.values[0].data == f"https://e.org/{i}".encode()
    finally:
        stop_server(again)


def test_a_large_answer_goes_in_packets_of_512(native: tuple[Server, int]) -> None:
    server, port = native
    auth = {"Authorization": f"Bearer {server.token}"}
    long_url = "https://e.org/" + "x" * 900
    name = f"10.5555/large-{port}"
    body = {"values": [{"index": 1, "type": "URL", "data": long_url}]}
    assert httpx.put(f"{server.url}/api/handles/{name}", json=body, headers=auth).is_success
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(3)
        sock.sendto(encode(ResolutionRequest(name, op_flags=PO)), ("127.0.0.1", port))
        packets = [sock.recvfrom(65536)[0] for _ in range(2)]
    assert all(len(p) <= 512 for p in packets)
    answer = udp(port, ResolutionRequest(name, op_flags=PO))
    assert isinstance(answer, ResolutionResponse)
    assert answer.values[0].data == long_url.encode()


def test_one_client_asking_in_earnest_is_not_held_back(native: tuple[Server, int]) -> None:
    # The UDP budget was 64 KiB/s per address: one client got about 360 answers a second.
    _, port = native
    started = time.monotonic()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(3)
        for i in range(3000):
            sock.sendto(
                encode(ResolutionRequest(NAME, request_id=i, op_flags=PO)), ("127.0.0.1", port)
            )
            sock.recvfrom(65536)
    assert time.monotonic() - started < 15


def test_a_forged_source_gets_at_most_ten_times_what_was_sent() -> None:
    from doikit.server._native_endpoints import UDP_BURST, UdpBudget  # noqa: PLC0415

    budget = UdpBudget()
    sent = asked = 0
    now = 1000.0
    for _ in range(100_000):  # 50-byte questions, 5,000-byte answers, all at one instant
        asked += 50
        if budget.take("192.0.2.1", 5000, 50, now):
            sent += 5000
    assert sent <= 10 * asked + UDP_BURST
