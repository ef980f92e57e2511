"""The root sites asked again (issue 29): a resolver that starts from published root
information (here a line of it naming a doikit server on loopback, as the shipped copy names
the Global Handle Registry's) asks the root for ``0.NA/0.NA`` once they are old, takes the
sites it answers only when the answer is signed by a key the current sites list, and keeps
the current sites when the root gives nothing it can use."""

from __future__ import annotations

import dataclasses
import json
import time
from contextlib import closing
from typing import TYPE_CHECKING

import pytest

from conftest import free_port, start_server, stop_server
from doikit import DOINotFound, HandleServerError
from doikit.client._native import NativeResolver
from doikit.handle import (
    ROOT_REFRESH,
    ErrorResponse,
    HandleValue,
    Resolver,
    SiteInfo,
    decode,
    encode,
    value_to_json,
)
from test_native_resolver import Peer, _one_server, _record, _site_of, _site_value, _url, _write

if TYPE_CHECKING:
    import socket
    from collections.abc import Iterator
    from pathlib import Path

    from conftest import Server

WAIT = 0.6  # the root_refresh of these resolvers, in seconds


@dataclasses.dataclass
class Roots:
    old: SiteInfo  # the root the resolvers start from
    new: SiteInfo  # the root old's 0.NA/0.NA names
    old_store: str


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Roots]:
    here: Path = tmp_path_factory.mktemp("root-refresh")
    stores = {}
    servers: list[Server] = []
    ports = {name: free_port() for name in ("old", "new")}
    try:
        for name in ("old", "new"):
            (here / name).mkdir()
            stores[name] = f"sqlite:///{here / name / 'store.sqlite3'}"
            _write(stores[name], {})
            options = ("--handle-port", str(ports[name]))
            servers.append(start_server(stores[name], demo=False, options=options))
        old, new = _site_of(ports["old"]), _site_of(ports["new"])
        _write(
            stores["old"],
            {
                "0.NA/0.NA": (_site_value(new),),
                "0.NA/10.5555": (_site_value(old),),
                "10.5555/1": (_record("10.5555/1"),),
                "10.5555/2": (_record("10.5555/2"),),
            },
        )
        _write(
            stores["new"],
            {
                "0.NA/0.NA": (_site_value(new),),
                "0.NA/10.6666": (_site_value(new),),
                **{f"10.6666/{i}": (_record(f"10.6666/{i}"),) for i in range(4)},
            },
        )
        yield Roots(old, new, stores["old"])
    finally:
        for server in servers:
            stop_server(server)


def _root_info(*sites: SiteInfo) -> str:
    """Root information naming *sites*, in the form doikit ships it."""
    lines = []
    for index, site in enumerate(sites, 1):
        value = value_to_json(_site_value(site, index))
        lines.append(json.dumps({"handle": "0.NA/0.NA", **value}))
    return "\n".join(lines)


def test_old_root_sites_are_asked_again(roots: Roots) -> None:
    with closing(
        NativeResolver(root_info=_root_info(roots.old), root_refresh=WAIT, timeout=5)
    ) as r:
        assert r.resolve("10.5555/1").first("URL").text == _url("10.5555/1")  # type: ignore[union-attr]
        with pytest.raises(DOINotFound):  # the old root knows no 10.6666
            r.resolve("10.6666/0")
        time.sleep(WAIT + 0.1)
        # Old enough: the root's 0.NA/0.NA, signed by the old root's key, names the new one.
        assert r.resolve("10.6666/1").first("URL").text == _url("10.6666/1")  # type: ignore[union-attr]
        assert r.core.root_in_use == (roots.new,)


def test_a_refresh_that_does_not_verify_is_not_taken(roots: Roots) -> None:
    # The root information lists another key for the old root's server: its signed answer
    # to the refresh does not verify, and the sites it names are not taken.
    server = dataclasses.replace(roots.old.servers[0], public_key=roots.new.servers[0].public_key)
    lying = dataclasses.replace(roots.old, servers=(server,))
    with closing(NativeResolver(root_info=_root_info(lying), root_refresh=WAIT, timeout=5)) as r:
        assert r.resolve("10.5555/1").first("URL") is not None
        time.sleep(WAIT + 0.1)
        with pytest.raises(DOINotFound):  # still asked of the old root
            r.resolve("10.6666/2")
        assert r.core.root_in_use == (lying,)


def test_a_root_with_nothing_to_say_keeps_the_sites(tmp_path: Path) -> None:
    # A root whose store holds no 0.NA/0.NA: the refresh finds nothing, the sites in use stay,
    # and resolution goes on.
    store = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    _write(store, {"0.NA/10.5555": (HandleValue(1, "DESC", b"none"),)})
    port = free_port()
    server = start_server(store, demo=False, options=("--handle-port", str(port)))
    try:
        site = _site_of(port)
        records = {"10.5555/3": (_record("10.5555/3"),), "10.5555/4": (_record("10.5555/4"),)}
        _write(store, {"0.NA/10.5555": (_site_value(site),), **records})
        with closing(NativeResolver(root_info=_root_info(site), root_refresh=WAIT, timeout=5)) as r:
            assert r.resolve("10.5555/3").first("URL") is not None
            time.sleep(WAIT + 0.1)
            with pytest.raises(DOINotFound):  # a prefix asked at the root: the refresh first
                r.resolve("10.7777/1")
            assert r.resolve("10.5555/4").first("URL") is not None
            assert r.core.root_in_use == (site,)
    finally:
        stop_server(server)


def test_the_shipped_root_is_refreshed_after_23_hours() -> None:
    assert ROOT_REFRESH == 23 * 3600
    assert Resolver().root_refresh == ROOT_REFRESH


def test_a_root_that_says_its_information_is_out_of_date_is_asked_for_it() -> None:
    # A root server answering rc 300 (OUT_OF_DATE_SITE_INFO, what CNRI's retired global
    # servers answer): the next need of the root asks it for 0.NA/0.NA, at once.
    asked: list[str] = []

    def retired(data: bytes, sock: socket.socket, addr: tuple[str, int]) -> None:
        request = decode(data)
        asked.append(getattr(request, "handle", "/"))
        error = ErrorResponse(request.op_code, 300, "out of date", request_id=request.request_id)
        sock.sendto(encode(error), addr)

    peer = Peer(retired)
    try:
        site = _one_server(peer.port, None)
        with closing(NativeResolver(root_info=_root_info(site), timeout=3)) as r:
            with pytest.raises(HandleServerError, match="responseCode 300"):
                r.resolve("10.5555/1")
            assert "0.NA/0.NA" not in asked
            with pytest.raises(HandleServerError):
                r.resolve("10.5555/2")
            assert asked.count("0.NA/0.NA") == 1
            with pytest.raises(HandleServerError):  # asked again after ROOT_RETRY, not now
                r.resolve("10.5555/3")
            assert asked.count("0.NA/0.NA") == 1
    finally:
        peer.close()


@pytest.mark.parametrize(
    ("root_info", "says"),
    [
        ("not json", "line 1: not a handle value"),
        ('{"handle": "0.NA/0.NA"}', "line 1: not a handle value"),
        ('{"type": "HS_SITE", "data": {"format": "site", "value": {}}}', "line 1"),
        ('{"handle": "0.NA/0.NA", "index": 1, "type": "DESC", "data": "x"}', "names no site"),
        ("", "names no site"),
    ],
)
def test_root_information_that_is_not_is_refused_at_once(root_info: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        Resolver(root_info=root_info)
    with pytest.raises(ValueError, match=says):
        NativeResolver(root_info=root_info)


@pytest.mark.parametrize("refresh", [0, -1, float("nan")])
def test_a_root_refresh_that_is_no_time_is_refused(refresh: float) -> None:
    with pytest.raises(ValueError, match="root_refresh must be"):
        Resolver(root_refresh=refresh)
