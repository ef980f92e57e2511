"""`doikit serve --upstream-root`: a proxy for every DOI, through a private Handle System of
real doikit servers on loopback: a root homing `0.NA/10.6666` (and the prefixes of the Which
RA tests) with the `HS_SITE` of a prefix server, the prefix server, and the proxy in front
(issue 29, point 3)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from typing import TYPE_CHECKING

import httpx
import pytest

from conftest import DOIKIT, free_port, start_server, stop_server
from doikit.server import Row, open_store

if TYPE_CHECKING:
    from collections.abc import Iterator

    from conftest import Server


def _put_raw(store: str, name: str, values: list[dict[str, object]]) -> None:
    async def put() -> None:
        opened = open_store(store)
        await opened.open()
        try:
            prefix = name.partition("/")[0]
            await opened.put_many([Row(name.lower(), name, prefix, json.dumps(values))])
        finally:
            await opened.close()

    asyncio.run(put())


def _string(index: int, type_: str, text: str) -> dict[str, object]:
    return {"index": index, "type": type_, "data": {"format": "string", "value": text}}


def _namespace(ra_service: str) -> dict[str, object]:
    return _string(2, "HS_NAMESPACE", f"<HS_NAMESPACE><DOI.RA>{ra_service}</DOI.RA></HS_NAMESPACE>")


# Which RA: prefix -> the prefix handle's values after its HS_SITE; each prefix holds <prefix>/x
# on the prefix server. 10.SERV/TESTRA (on the prefix server) names its RA; 10.SERV/NONAME
# does not; 10.SERV/NOBODY is held nowhere.
_RA_PREFIXES: dict[str, list[dict[str, object]]] = {
    "10.5555": [_namespace("10.SERV/TESTRA")],
    "10.4441": [_namespace("10.SERV/NONAME")],
    "10.4442": [_namespace("10.SERV/NOBODY")],
    "10.4443": [_string(2, "HS_NAMESPACE", "<HS_NAMESPACE><DOI.RA>10.SERV/TESTRA</DOI.RA>")],
    "10.4444": [_string(2, "HS_NAMESPACE", "<HS_NAMESPACE><locs>10.SERV/x</locs></HS_NAMESPACE>")],
    "10.SERV": [],
}
_RA_SERVICES: dict[str, list[dict[str, object]]] = {
    "10.SERV/TESTRA": [_string(1, "10320/ra_name", "TestRA"), _string(2, "DESC", "an RA")],
    "10.SERV/NONAME": [_string(1, "DESC", "an RA without 10320/ra_name")],
}


class World:
    def __init__(self, prefix_server: Server, proxy: Server) -> None:
        self.prefix_server = prefix_server
        self.proxy = proxy


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root_dir = tmp_path_factory.mktemp("upstream")
    prefix_store = f"sqlite:///{root_dir / 'prefix.sqlite3'}"
    root_store = f"sqlite:///{root_dir / 'root.sqlite3'}"
    proxy_store = f"sqlite:///{root_dir / 'proxy.sqlite3'}"
    prefix_port, root_port = free_port(), free_port()
    site = subprocess.run(
        [DOIKIT, "admin", "site", "--store", prefix_store, "--handle-port", str(prefix_port)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    _put_raw(root_store, "0.NA/10.6666", [json.loads(site)])
    for prefix, values in _RA_PREFIXES.items():
        _put_raw(root_store, f"0.NA/{prefix}", [json.loads(site), *values])
        _put_raw(prefix_store, f"{prefix}/x", [_string(1, "URL", f"https://{prefix}.example/x")])
    for name, values in _RA_SERVICES.items():
        _put_raw(prefix_store, name, values)
    started: list[Server] = []
    try:
        prefix_server = start_server(
            prefix_store, token_prefixes=("10.6666",), options=("--handle-port", str(prefix_port))
        )
        started.append(prefix_server)
        auth = {"Authorization": f"Bearer {prefix_server.token}"}
        for name, url, ttl in (
            ("10.6666/far", "https://far.example/a", 1),
            ("10.6666/kept", "https://far.example/k", 1),
        ):
            body = {"values": [{"index": 1, "type": "URL", "data": url, "ttl": ttl}]}
            r = httpx.put(f"{prefix_server.url}/api/handles/{name}", json=body, headers=auth)
            assert r.status_code == 201
        started.append(
            start_server(
                root_store, demo=False, token_prefixes=(), options=("--handle-port", str(root_port))
            )
        )
        proxy = start_server(proxy_store, options=("--upstream-root", f"127.0.0.1:{root_port}"))
        started.append(proxy)
        yield World(prefix_server, proxy)
    finally:
        for server in started:
            stop_server(server)


def test_a_name_held_elsewhere_is_answered_through_the_handle_system(world: World) -> None:
    proxy = world.proxy.url
    api = httpx.get(f"{proxy}/api/handles/10.6666/FAR", timeout=20)
    assert api.status_code == 200, api.text
    assert api.json()["values"][0]["data"]["value"] == "https://far.example/a"
    redirect = httpx.get(f"{proxy}/10.6666/far", timeout=20)
    assert (redirect.status_code, redirect.headers["location"]) == (302, "https://far.example/a")
    typed = httpx.get(f"{proxy}/api/handles/10.6666/far?type=EMAIL", timeout=20)
    assert typed.json()["values"] == []
    # Its own names are answered from its store, as before.
    assert httpx.get(f"{proxy}/api/handles/10.1000/182").status_code == 200


def test_a_name_nobody_holds_is_404(world: World) -> None:
    assert httpx.get(f"{world.proxy.url}/api/handles/10.6666/nobody", timeout=20).status_code == 404
    assert httpx.get(f"{world.proxy.url}/10.6666/nobody", timeout=20).status_code == 404
    # A prefix the root does not know.
    assert httpx.get(f"{world.proxy.url}/api/handles/10.7777/x", timeout=20).status_code in (
        404,
        502,
    )


def _which_ra(world: World, path: str) -> list[dict[str, str]]:
    answer = httpx.get(f"{world.proxy.url}{path}", timeout=20)
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("path", "echo"),
    [("/ra/10.5555/x", "10.5555/x"), ("/doiRA/10.5555", "10.5555"), ("/ra/10.5555/X", "10.5555/X")],
)
def test_which_ra_upstream_is_the_ra_the_prefix_namespace_names(
    world: World, path: str, echo: str
) -> None:
    # 0.NA/10.5555's HS_NAMESPACE <DOI.RA> names 10.SERV/TESTRA, whose 10320/ra_name is TestRA.
    assert _which_ra(world, path) == [{"DOI": echo, "RA": "TestRA"}]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("10.6666/far", "no HS_NAMESPACE"),
        ("10.6666", "no HS_NAMESPACE (a bare prefix)"),
        ("10.4441/x", "the service handle has no 10320/ra_name"),
        ("10.4442/x", "the service handle is held nowhere"),
        ("10.4443/x", "HS_NAMESPACE is not XML"),
        ("10.4444/x", "HS_NAMESPACE has no <DOI.RA>"),
    ],
)
def test_which_ra_upstream_without_the_chain_is_unknown(world: World, name: str, why: str) -> None:
    assert _which_ra(world, f"/ra/{name}") == [{"DOI": name, "status": "Unknown"}], why


def test_which_ra_upstream_in_one_request_held_nowhere_and_held_here(world: World) -> None:
    # 10.5555/nobody: its prefix names TestRA, but the name is held nowhere; 10.1000/182 is
    # the proxy's own (demo) name, answered with its --ra name as without an upstream.
    got = _which_ra(world, "/ra/10.5555/nobody,10.5555/x,10.4441/x,10.1000/182,10.6666/nobody")
    assert got == [
        {"DOI": "10.5555/nobody", "status": "DOI does not exist"},
        {"DOI": "10.5555/x", "RA": "TestRA"},
        {"DOI": "10.4441/x", "status": "Unknown"},
        {"DOI": "10.1000/182", "RA": "doikit"},
        {"DOI": "10.6666/nobody", "status": "DOI does not exist"},
    ]


def test_a_stale_answer_while_the_upstream_is_down_and_says_so(world: World) -> None:
    proxy = world.proxy.url
    fresh = httpx.get(f"{proxy}/api/handles/10.6666/kept", timeout=20)
    assert fresh.status_code == 200
    assert "warning" not in fresh.headers
    world.prefix_server.kill()
    time.sleep(1.5)  # the value's TTL (1 s) is over: the proxy must ask again
    stale = httpx.get(f"{proxy}/api/handles/10.6666/kept", timeout=40)
    assert stale.status_code == 200, stale.text
    assert stale.headers["warning"].startswith("110")
    assert stale.json()["values"][0]["data"]["value"] == "https://far.example/k"
    never = httpx.get(f"{proxy}/api/handles/10.6666/never-fetched", timeout=40)
    assert never.status_code == 504
    assert "could not be reached" in never.json()["message"]
    assert "Traceback" not in world.proxy.errors()


@pytest.mark.parametrize("root", ["garbage", "127.0.0.1", "127.0.0.1:0", "host.example:2641"])
def test_an_upstream_root_that_is_not_host_port_is_one_line_and_exit_2(
    tmp_path_factory: pytest.TempPathFactory, root: str
) -> None:
    store = f"sqlite:///{tmp_path_factory.mktemp('bad-root') / 's.sqlite3'}"
    done = subprocess.run(
        [DOIKIT, "serve", "--store", store, "--port", "0", "--upstream-root", root],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1
    assert "--upstream-root" in done.stderr
