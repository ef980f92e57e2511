"""CNRI's own Handle client (HANDLE.NET 9.2.0's library, driven by HandleTool) against
`doikit serve --handle-port`, on SQLite and PostgreSQL: issue 28's interop list.

CNRI's code is never part of this repository: build it outside it (handle-protocol.md §21)
and point ``HANDLE_PEER`` at the build, a directory holding a ``handletool`` command that
runs HandleTool with CNRI's library. Without it this module is skipped, saying why.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from conftest import DOIKIT, free_port, start_server, stop_server

if TYPE_CHECKING:
    from collections.abc import Iterator

    from conftest import Server

_PEER = os.environ.get("HANDLE_PEER", "")
_TOOL = Path(_PEER) / "handletool" if _PEER else None

pytestmark = pytest.mark.skipif(
    _TOOL is None or not _TOOL.exists(),
    reason="HANDLE_PEER is not set to a build of CNRI's HANDLE.NET client with a handletool"
    " command (handle-protocol.md §21 says how to build one, outside the repository)",
)

NAME = "10.5555/interop-1"
URL_1 = '[{"index":1,"type":"URL","data":{"format":"string","value":"https://example.org/1"}}]'


def handletool(*args: str) -> dict[str, Any]:
    assert _TOOL is not None
    done = subprocess.run(
        [str(_TOOL), *args], capture_output=True, text=True, timeout=60, check=False
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, (done.stdout, done.stderr)
    answer: dict[str, Any] = json.loads(lines[-1])
    return answer


def doikit(*args: str) -> str:
    return subprocess.run(
        [DOIKIT, *args], capture_output=True, text=True, timeout=60, check=True
    ).stdout


class Peer:
    """doikit serve with the native protocol, and the identities HandleTool uses."""

    def __init__(self, server: Server, port: int, secret: str, keys: Path) -> None:
        self.server = server
        self.port = str(port)
        self.http = str(server.url.rsplit(":", 1)[1])
        self.secret = f"sec:300:10.5555/ADMIN:{secret}"
        self.dsa = f"pub:301:10.5555/ADMIN:{keys / 'dsa_priv.bin'}"
        self.rsa = f"pub:302:10.5555/ADMIN:{keys / 'rsa_priv.bin'}"
        self.other = ""

    def tool(self, command: str, *args: str, http: bool = False) -> dict[str, Any]:
        return handletool(command, "127.0.0.1", self.http if http else self.port, *args)


@pytest.fixture(scope="module")
def peer(module_store: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    keys = tmp_path_factory.mktemp("keys")
    for kind in ("dsa", "rsa"):
        made = handletool(
            "keygen", str(keys / f"{kind}_priv.bin"), str(keys / f"{kind}_pub.bin"), kind.upper()
        )
        assert "error" not in made, made
    store = ("--store", module_store, "--prefix", "10.5555")
    secret = doikit("admin", "create", *store, "300:10.5555/ADMIN").splitlines()[-1]
    doikit(
        "admin", "create", *store, "--public-key", str(keys / "dsa_pub.bin"), "301:10.5555/ADMIN"
    )
    doikit(
        "admin", "create", *store, "--public-key", str(keys / "rsa_pub.bin"), "302:10.5555/ADMIN"
    )
    other = doikit(
        "admin", "create", "--store", module_store, "--prefix", "10.6666", "300:10.6666/ADMIN"
    )
    port = free_port()
    server = start_server(module_store, options=("--handle-port", str(port)))
    auth = {"Authorization": f"Bearer {server.token}"}
    values = [
        {"index": 1, "type": "URL", "data": "https://example.org/interop"},
        {"index": 2, "type": "EMAIL", "data": "a@example.org"},
        {"index": 3, "type": "DESC", "data": "hidden", "permissions": "1100"},
    ]
    r = httpx.put(f"{server.url}/api/handles/{NAME}", json={"values": values}, headers=auth)
    assert r.status_code == 201
    running = Peer(server, port, secret, keys)
    running.other = f"sec:300:10.6666/ADMIN:{other.splitlines()[-1]}"
    try:
        yield running
    finally:
        stop_server(server)


@pytest.mark.parametrize("transport", ["--udp", "--tcp"])
def test_site_info(peer: Peer, transport: str) -> None:
    answer = peer.tool("siteinfo", transport)
    assert answer["responseCode"] == 1, answer
    (server,) = answer["site"]["servers"]
    ports = {(i["protocol"], i["port"]) for i in server["interfaces"]}
    assert {("UDP", int(peer.port)), ("TCP", int(peer.port)), ("HTTP", int(peer.http))} == ports
    assert server["publicKey"]["value"]["kty"] == "RSA"  # the server key, made on first start


@pytest.mark.parametrize("transport", ["--udp", "--tcp", "--http"])
def test_resolve_with_a_type_filter_and_a_private_value_hidden(peer: Peer, transport: str) -> None:
    http = transport == "--http"
    every = peer.tool("resolve", NAME, transport, http=http)
    assert every["responseCode"] == 1, every
    assert [v["index"] for v in every["values"]] == [1, 2]  # 3 has no public read
    typed = peer.tool("resolve", NAME.upper(), transport, "--type", "URL", http=http)
    assert typed["handle"] == NAME.upper()
    assert [v["data"]["value"] for v in typed["values"]] == ["https://example.org/interop"]


def test_a_certified_answer_is_verified(peer: Peer) -> None:
    answer = peer.tool("resolve", NAME, "--udp", "--cert")
    assert (answer["responseCode"], answer["signed"]) == (1, True), answer


@pytest.mark.parametrize(("name", "code"), [("10.9999/X", 301), ("10.5555/absent", 100)])
def test_not_homed_and_not_found(peer: Peer, name: str, code: int) -> None:
    for transport in ("--udp", "--tcp"):
        assert peer.tool("resolve", name, transport)["responseCode"] == code


def test_administration_as_hdl_tools_do_it(peer: Peer) -> None:
    name = "10.5555/interop-admin"
    # create with a secret key, in a session (CNRI's default), then again: 101
    created = peer.tool("create", name, URL_1, "--auth-id", peer.secret)
    assert created["responseCode"] == 1, created
    assert peer.tool("create", name, URL_1, "--auth-id", peer.secret)["responseCode"] == 101
    # add with a DSA key, in a session
    email = '[{"index":2,"type":"EMAIL","data":{"format":"string","value":"x@example.org"}}]'
    assert peer.tool("add", name, email, "--auth-id", peer.dsa)["responseCode"] == 1
    # modify with an RSA key, without a session; then over HTTP
    url_2 = URL_1.replace("/1", "/2")
    modified = peer.tool("modify", name, url_2, "--auth-id", peer.rsa, "--no-session")
    assert modified["responseCode"] == 1, modified
    url_3 = URL_1.replace("/1", "/3")
    over_http = peer.tool("modify", name, url_3, "--auth-id", peer.secret, "--http", http=True)
    assert over_http["responseCode"] == 1, over_http
    seen = peer.tool("resolve", name, "--tcp")
    assert [v["data"]["value"] for v in seen["values"]] == [
        "https://example.org/3",
        "x@example.org",
    ]
    # what the REST API reads at once
    rest = httpx.get(f"{peer.server.url}/api/handles/{name}").json()
    assert [v["data"]["value"] for v in rest["values"]] == [
        "https://example.org/3",
        "x@example.org",
    ]
    # a wrong secret: 403; a key that no HS_ADMIN names: refused
    wrong = peer.secret.rsplit(":", 1)[0] + ":wrong"
    assert peer.tool("delete", name, "--auth-id", wrong)["responseCode"] == 403
    assert peer.tool("delete", name, "--auth-id", peer.other)["responseCode"] == 400
    # list, remove, delete, then 100
    listed = peer.tool("list", "10.5555", "--auth-id", peer.secret)
    assert name in listed["handles"]
    assert peer.tool("remove", name, "2", "--auth-id", peer.secret)["responseCode"] == 1
    assert peer.tool("delete", name, "--auth-id", peer.secret)["responseCode"] == 1
    assert peer.tool("resolve", name, "--udp")["responseCode"] == 100
