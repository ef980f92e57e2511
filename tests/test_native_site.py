"""Beyond one machine: a site of two `doikit serve` processes over one PostgreSQL primary,
and a mirror served from a streaming standby of it (real clusters the test starts, real
UDP and TCP on loopback)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from conftest import _as_postgres_user, free_port, start_server, stop_server
from doikit.handle import (
    AddValueRequest,
    ErrorResponse,
    GetSiteInfoRequest,
    HandleValue,
    OpFlag,
    ResolutionRequest,
    ResolutionResponse,
    SiteInfoResponse,
)
from test_native_server import tcp, udp

if TYPE_CHECKING:
    from collections.abc import Iterator

    from conftest import Server


def _pg(argv: list[str]) -> None:
    subprocess.run(_as_postgres_user(argv), check=True, capture_output=True)


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[str, str]]:
    """A primary and a streaming standby of it: their URLs."""
    if not shutil.which("initdb") or not shutil.which("pg_basebackup"):
        pytest.skip("PostgreSQL server binaries (initdb, pg_basebackup) are not on the PATH")
    root = Path(tempfile.mkdtemp(prefix="doikit-site-"))
    if os.geteuid() == 0:
        shutil.chown(root, "nobody")
    primary, standby = root / "primary", root / "standby"
    ports = free_port(), free_port()
    _pg(["initdb", "-D", str(primary), "-U", "doikit", "-A", "trust", "--no-sync"])
    options = f"-p {ports[0]} -k {root} -c listen_addresses=127.0.0.1 -c wal_level=replica"
    _pg(["pg_ctl", "-D", str(primary), "-o", options, "-l", str(root / "p.log"), "-w", "start"])
    running = [primary]
    try:
        source = ("-h", "127.0.0.1", "-p", str(ports[0]), "-U", "doikit")
        _pg(["pg_basebackup", *source, "-D", str(standby), "-R", "-X", "stream"])
        options = f"-p {ports[1]} -k {root} -c listen_addresses=127.0.0.1 -c hot_standby=on"
        _pg(["pg_ctl", "-D", str(standby), "-o", options, "-l", str(root / "s.log"), "-w", "start"])
        running.append(standby)
        yield tuple(f"postgresql://doikit@127.0.0.1:{p}/postgres" for p in ports)  # type: ignore[misc]
    finally:
        for data in running:
            subprocess.run(
                _as_postgres_user(["pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop"]),
                check=False,
                capture_output=True,
            )
        shutil.rmtree(root, ignore_errors=True)


class Site:
    def __init__(self, servers: list[tuple[Server, int]], mirror: tuple[Server, int]) -> None:
        self.servers = servers
        self.mirror = mirror


@pytest.fixture(scope="module")
def site(clusters: tuple[str, str]) -> Iterator[Site]:
    primary, standby = clusters
    native = [free_port(), free_port()]
    listed = [f"--site-server={i + 1}=127.0.0.1:{port}" for i, port in enumerate(native)]
    started: list[Server] = []
    try:
        for i, port in enumerate(native):
            options = ("--handle-port", str(port), "--server-id", str(i + 1), *listed)
            started.append(start_server(primary, options=options))
        mirror_port = free_port()
        options = ("--handle-port", str(mirror_port), "--mirror")
        mirror = start_server(standby, demo=False, token_prefixes=(), options=options)
        started.append(mirror)
        yield Site(list(zip(started[:2], native, strict=True)), (mirror, mirror_port))
    finally:
        for server in started:
            stop_server(server)


PO = OpFlag.PUBLIC_ONLY


def test_one_site_lists_both_servers_and_either_answers(site: Site) -> None:
    sites = []
    for _, port in site.servers:
        answer = udp(port, GetSiteInfoRequest("/"))
        assert isinstance(answer, SiteInfoResponse)
        sites.append(answer.site)
    assert sites[0] == sites[1]
    assert [s.server_id for s in sites[0].servers] == [1, 2]
    assert sites[0].primary
    (server, _), _ = site.servers
    name = "10.5555/site-1"
    body = {"values": [{"index": 1, "type": "URL", "data": "https://site.example/1"}]}
    auth = {"Authorization": f"Bearer {server.token}"}
    assert httpx.put(f"{server.url}/api/handles/{name}", json=body, headers=auth).is_success
    # The server CNRI's clients would pick by the hash, and the other one too (one store).
    chosen = sites[0].server_for(name)
    assert chosen is not None
    ports = {s.server_id: port for s, (_, port) in zip(sites[0].servers, site.servers, strict=True)}
    for port in (ports[chosen.server_id], *ports.values()):
        found = tcp(port, ResolutionRequest(name, op_flags=PO))
        assert isinstance(found, ResolutionResponse)
        assert found.values[0].data == b"https://site.example/1"


def test_the_mirror_answers_reads_from_the_standby_and_refuses_changes(site: Site) -> None:
    (server, _), _ = site.servers
    mirror, port = site.mirror
    name = "10.5555/site-mirrored"
    body = {"values": [{"index": 1, "type": "URL", "data": "https://site.example/m"}]}
    auth = {"Authorization": f"Bearer {server.token}"}
    assert httpx.put(f"{server.url}/api/handles/{name}", json=body, headers=auth).is_success
    deadline = time.monotonic() + 10
    answer: object = None
    while True:  # streaming replication: a moment
        answer = udp(port, ResolutionRequest(name, op_flags=PO))
        if isinstance(answer, ResolutionResponse) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert isinstance(answer, ResolutionResponse)
    info = udp(port, GetSiteInfoRequest("/"))
    assert isinstance(info, SiteInfoResponse)
    assert not info.site.primary
    assert all(not i.admin or i.protocol == 0 for s in info.site.servers for i in s.interfaces)
    change = AddValueRequest(name, (HandleValue(2, "EMAIL", b"a@example.org"),))
    refused = tcp(port, change)
    assert isinstance(refused, ErrorResponse)
    assert refused.response_code == 7  # SERVER_BACKUP: a mirror
    assert mirror.process.poll() is None
