"""An identity held by another server (issue 28: "verify-challenge for identities held on
another server"): server B homes 10.6666, whose prefix handle names the administrators
300:10.5555/ADMIN (a secret key) and 301:10.5555/ADMIN (an RSA key); both are held by
server A, which is also the root B reaches with ``--upstream-root``. A client answers B's
challenge; B asks A — a VERIFY_CHALLENGE for the secret key, a certified resolution of the
public key — and carries out the change only when A's signed answer says the answer is
right. Real `doikit serve` processes on loopback, nothing mocked."""

from __future__ import annotations

import asyncio
import subprocess
from typing import TYPE_CHECKING

import pytest

from conftest import DOIKIT, free_port, start_server, stop_server
from doikit.handle import (
    AdminData,
    ChallengeAnswerRequest,
    ChallengeResponse,
    CreateHandleRequest,
    ErrorResponse,
    GetSiteInfoRequest,
    HandleValue,
    OpFlag,
    PublicKeyAnswer,
    ResolutionRequest,
    ResolutionResponse,
    RSAPublicKey,
    SiteInfoResponse,
    data_from_wire,
    public_answer_to_bytes,
    public_key_to_bytes,
    site_to_bytes,
    values_to_json,
)
from doikit.handle._resolver import Resolver
from doikit.server import Row, open_store
from test_native_resolver import _one_server, _site_of, _site_value
from test_native_server import _secret_answer, tcp, udp

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

    from conftest import Server

rsa = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.rsa")
padding = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.padding")
hashes = pytest.importorskip("cryptography.hazmat.primitives.hashes")

ADMIN = "10.5555/ADMIN"


def _add(store: str, name: str, values: tuple[HandleValue, ...]) -> None:
    """Add *values* to the record *name* in *store* (made when missing)."""

    async def put() -> None:
        opened = open_store(store)
        await opened.open()
        try:
            stored = await opened.get(name.lower())
            before = stored.values() if stored is not None else ()
            row = Row(
                name.lower(), name, name.partition("/")[0], values_to_json((*before, *values))
            )
            await opened.put_many([row])
        finally:
            await opened.close()

    asyncio.run(put())


class Two:
    def __init__(self, a: Server, a_port: int, b: Server, b_port: int, secret: str) -> None:
        self.a, self.a_port, self.b, self.b_port, self.secret = a, a_port, b, b_port, secret


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Two, RSAPrivateKey]]:
    here: Path = tmp_path_factory.mktemp("remote-identity")
    (here / "a").mkdir()
    (here / "b").mkdir()
    store_a = f"sqlite:///{here / 'a' / 'store.sqlite3'}"
    store_b = f"sqlite:///{here / 'b' / 'store.sqlite3'}"
    made = subprocess.run(
        [DOIKIT, "admin", "create", "--store", store_a, "--prefix=10.5555", f"300:{ADMIN}"],
        capture_output=True,
        text=True,
        check=True,
    )
    secret = made.stdout.splitlines()[-1]
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    numbers = key.public_key().public_numbers()
    blob = here / "admin.pub"
    blob.write_bytes(public_key_to_bytes(RSAPublicKey(numbers.n, numbers.e)))
    argv = [DOIKIT, "admin", "create", "--store", store_a, "--prefix=10.5555"]
    subprocess.run([*argv, "--public-key", str(blob), f"301:{ADMIN}"], check=True)
    admins = tuple(
        HandleValue(100 + i, "HS_ADMIN", AdminData(ADMIN, index, "111111111111"))
        for i, index in enumerate((300, 301))
    )
    _add(store_b, "0.NA/10.6666", admins)
    a_port, b_port = free_port(), free_port()
    servers: list[Server] = []
    try:
        servers.append(start_server(store_a, demo=False, options=("--handle-port", str(a_port))))
        options = ("--handle-port", str(b_port), "--upstream-root", f"127.0.0.1:{a_port}")
        servers.append(start_server(store_b, demo=False, options=options))
        for name, port in (("0.NA/10.5555", a_port), ("0.NA/10.6666", b_port)):
            site = data_from_wire("HS_SITE", site_to_bytes(_site_of(port)))
            _add(store_a, name, (HandleValue(1, "HS_SITE", site),))  # A is the root too
        yield Two(servers[0], a_port, servers[1], b_port, secret), key
    finally:
        for server in servers:
            stop_server(server)


def _create(
    two: Two, name: str, answer: Callable[[ChallengeResponse], bytes], auth_type: str, index: int
) -> int:
    """The response code of creating *name* at B, its challenge answered with *answer*
    (a function of the challenge) as ``index:10.5555/ADMIN``."""
    value = HandleValue(1, "URL", b"https://example.org/remote")
    challenge = tcp(two.b_port, CreateHandleRequest(name, (value,), request_id=7))
    assert isinstance(challenge, ChallengeResponse), challenge
    signed = answer(challenge)
    reply = ChallengeAnswerRequest(
        auth_type, ADMIN, index, signed, request_id=8, session_id=challenge.session_id
    )
    done = tcp(two.b_port, reply, timeout=30)
    assert done is not None
    return done.response_code


def _signed(key: RSAPrivateKey) -> Callable[[ChallengeResponse], bytes]:
    def sign(challenge: ChallengeResponse) -> bytes:
        assert challenge.request_digest is not None
        data = challenge.nonce + challenge.request_digest.digest
        signature = key.sign(data, padding.PKCS1v15(), hashes.SHA256())
        return public_answer_to_bytes(PublicKeyAnswer("SHA-256", signature))

    return sign


def _exists(two: Two, name: str) -> bool:
    found = udp(two.b_port, ResolutionRequest(name, op_flags=OpFlag.PUBLIC_ONLY))
    return isinstance(found, ResolutionResponse)


def test_a_secret_key_held_elsewhere_is_verified_by_its_server(
    two: tuple[Two, RSAPrivateKey],
) -> None:
    net, _ = two
    right = lambda c: _secret_answer(net.secret, c)  # noqa: E731 - one line
    assert _create(net, "10.6666/by-secret", right, "HS_SECKEY", 300) == 1
    assert _exists(net, "10.6666/by-secret")
    assert "could not be checked" not in net.b.errors()


def test_a_public_key_held_elsewhere_is_resolved_certified(
    two: tuple[Two, RSAPrivateKey],
) -> None:
    net, key = two
    assert _create(net, "10.6666/by-key", _signed(key), "HS_PUBKEY", 301) == 1
    assert _exists(net, "10.6666/by-key")


def test_wrong_answers_held_elsewhere_are_refused(two: tuple[Two, RSAPrivateKey]) -> None:
    net, _ = two
    wrong = lambda c: _secret_answer(net.secret + "x", c)  # noqa: E731 - one line
    assert _create(net, "10.6666/wrong-secret", wrong, "HS_SECKEY", 300) == 403
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    assert _create(net, "10.6666/wrong-key", _signed(other), "HS_PUBKEY", 301) == 403
    assert not _exists(net, "10.6666/wrong-secret")
    assert not _exists(net, "10.6666/wrong-key")
    assert "Traceback" not in net.b.errors()


def test_answers_are_kept_no_longer_than_max_ttl() -> None:
    # The sans-IO core driven by hand: a private root's site, the prefix's site, the answer
    # (TTL a day); a resolver of keys held elsewhere keeps it an hour, as CNRI's server does.
    now = [1000.0]
    core = Resolver("127.0.0.1:9", max_ttl=3600, clock=lambda: now[0])
    site = _one_server(9, 9)
    steps = core.resolution("10.5555/ADMIN", indexes=(301,))
    exchange = next(steps)
    assert isinstance(exchange.request, GetSiteInfoRequest)
    exchange = steps.send(SiteInfoResponse(site=site))
    assert exchange.request.handle == "0.NA/10.5555"  # type: ignore[union-attr]
    exchange = steps.send(ResolutionResponse("0.NA/10.5555", (_site_value(site),)))
    key = HandleValue(301, "HS_PUBKEY", b"key", ttl=86400)
    with pytest.raises(StopIteration) as done:
        steps.send(ResolutionResponse("10.5555/ADMIN", (key,)))
    assert done.value.value.values == (key,)
    (until, _), *_ = core.cache.answers.values()
    assert until == now[0] + 3600
    now[0] += 3601
    assert core.express("10.5555/ADMIN", indexes=(301,)) is not None  # asked again, not kept


def test_an_identity_whose_server_is_gone_is_refused_saying_so(
    two: tuple[Two, RSAPrivateKey],
) -> None:
    net, _ = two  # (the last test of the module: server A stops here)
    stop_server(net.a)
    value = HandleValue(1, "URL", b"https://example.org/remote")
    challenge = tcp(net.b_port, CreateHandleRequest("10.6666/gone", (value,), request_id=7))
    assert isinstance(challenge, ChallengeResponse)
    signed = _secret_answer(net.secret, challenge)
    reply = ChallengeAnswerRequest(
        "HS_SECKEY", ADMIN, 300, signed, request_id=8, session_id=challenge.session_id
    )
    done = tcp(net.b_port, reply, timeout=60)
    assert isinstance(done, ErrorResponse)
    assert done.response_code == 403
    assert "could not be checked at its server" in done.message
