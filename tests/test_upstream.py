"""`doikit serve --upstream-root`: a proxy for every DOI, through a private Handle System of
real doikit servers on loopback: a root homing `0.NA/10.6666` with the `HS_SITE` of a
prefix server, the prefix server, and the proxy in front (issue 29, point 3)."""

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
