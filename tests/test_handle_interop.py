"""CNRI's own Handle client (HANDLE.NET 9.2.0's library, driven by HandleTool) against
`doikit serve --handle-port`, on SQLite and PostgreSQL.

CNRI's code is never part of this repository: build it outside it (handle-protocol.md §21)
and point ``HANDLE_PEER`` at the build, a directory holding a ``handletool`` command that
runs HandleTool with CNRI's library. Without it this module is skipped, saying why.

What doikit serves over the native protocol so far is checked here: site info over UDP and
TCP, resolution over UDP and TCP with type filters, a private value hidden from a
public-only answer, 301 for a prefix not homed, 100 for a name not held. Administration,
authentication, sessions and certified answers are not served yet (issue 28).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from conftest import free_port, start_server, stop_server

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


def handletool(*args: str) -> dict[str, Any]:
    assert _TOOL is not None
    done = subprocess.run(
        [str(_TOOL), *args], capture_output=True, text=True, timeout=60, check=False
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, (done.stdout, done.stderr)
    answer: dict[str, Any] = json.loads(lines[-1])
    return answer


@pytest.fixture(scope="module")
def native(module_store: str) -> Iterator[tuple[Server, str]]:
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
    try:
        yield server, str(port)
    finally:
        stop_server(server)


@pytest.mark.parametrize("transport", ["--udp", "--tcp"])
def test_site_info(native: tuple[Server, str], transport: str) -> None:
    _, port = native
    answer = handletool("siteinfo", "127.0.0.1", port, transport)
    assert answer["responseCode"] == 1, answer
    interfaces = answer["site"]["servers"][0]["interfaces"]
    assert {(i["protocol"], i["port"]) for i in interfaces} == {
        ("UDP", int(port)),
        ("TCP", int(port)),
    }


@pytest.mark.parametrize("transport", ["--udp", "--tcp"])
def test_resolve_with_a_type_filter_and_a_private_value_hidden(
    native: tuple[Server, str], transport: str
) -> None:
    _, port = native
    every = handletool("resolve", "127.0.0.1", port, NAME, transport)
    assert every["responseCode"] == 1, every
    assert [v["index"] for v in every["values"]] == [1, 2]  # 3 has no public read
    typed = handletool("resolve", "127.0.0.1", port, NAME.upper(), transport, "--type", "URL")
    assert typed["handle"] == NAME.upper()
    assert [v["data"]["value"] for v in typed["values"]] == ["https://example.org/interop"]


@pytest.mark.parametrize(("name", "code"), [("10.9999/X", 301), ("10.5555/absent", 100)])
def test_not_homed_and_not_found(native: tuple[Server, str], name: str, code: int) -> None:
    _, port = native
    for transport in ("--udp", "--tcp"):
        assert handletool("resolve", "127.0.0.1", port, name, transport)["responseCode"] == code
