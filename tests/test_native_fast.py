"""The native protocol's hot path (server/_native_fast.py) gives the bytes the full path
gives, but for the expiration time, and leaves everything else to it — on a real SQLite
store, in process."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doikit.handle import (
    GetSiteInfoRequest,
    OpFlag,
    ResolutionRequest,
    decode,
    encode,
)
from doikit.server import Row, open_store
from doikit.server._native import NativeService, site_for

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from doikit.handle import Message

RECORDS = {
    "10.5555/Plain": [
        {
            "index": 1,
            "type": "URL",
            "data": {"format": "string", "value": "https://e.org/p"},
            "ttl": 86400,
        }
    ],
    "10.5555/two-é": [
        {
            "index": 1,
            "type": "URL",
            "data": {"format": "string", "value": "https://e.org/é"},
            "ttl": 5,
        },
        {
            "index": 100,
            "type": "HS_ADMIN",
            "data": {
                "format": "admin",
                "value": {"handle": "0.NA/10.5555", "index": 200, "permissions": "011111110011"},
            },
            "ttl": 86400,
        },
    ],
    "10.5555/private": [
        {
            "index": 1,
            "type": "URL",
            "data": {"format": "string", "value": "https://e.org/x"},
            "ttl": 86400,
        },
        {
            "index": 2,
            "type": "EMAIL",
            "data": {"format": "string", "value": "a@b"},
            "permissions": "1100",
            "ttl": 86400,
        },
    ],
}


@pytest.fixture(scope="module")
def service(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[NativeService, asyncio.AbstractEventLoop]]:
    loop = asyncio.new_event_loop()
    path: Path = tmp_path_factory.mktemp("fast") / "s.sqlite3"
    store = open_store(f"sqlite:///{path}")
    loop.run_until_complete(store.open())
    rows = [Row(n.lower(), n, "10.5555", json.dumps(v)) for n, v in RECORDS.items()]
    loop.run_until_complete(store.put_many(rows))
    try:
        yield NativeService(store, site_for("127.0.0.1", 2641)), loop
    finally:
        loop.run_until_complete(store.close())
        loop.close()


def _full(service: tuple[NativeService, asyncio.AbstractEventLoop], unit: bytes) -> bytes:
    native, loop = service
    (reply,) = loop.run_until_complete(native.answer_bytes(unit))
    return reply


def _same_but_expiration(a: bytes, b: bytes) -> bool:
    return a[:36] == b[:36] and a[40:] == b[40:]


@pytest.mark.parametrize(
    "name", ["10.5555/Plain", "10.5555/PLAIN", "10.5555/two-é", "10.5555/TWO-é"]
)
@pytest.mark.parametrize(
    "flags", [OpFlag.PUBLIC_ONLY, OpFlag.PUBLIC_ONLY | OpFlag.RECURSIVE | OpFlag.CACHE_CERTIFY, 0]
)
def test_the_hot_path_answers_as_the_full_one(
    service: tuple[NativeService, asyncio.AbstractEventLoop], name: str, flags: int
) -> None:
    unit = encode(ResolutionRequest(name, request_id=77, op_flags=flags))
    fast = service[0].answer_now(unit)
    assert fast is not None
    assert _same_but_expiration(fast, _full(service, unit))


@pytest.mark.parametrize(
    "request_",
    [
        ResolutionRequest("10.5555/plain", types=("URL",), op_flags=OpFlag.PUBLIC_ONLY),
        ResolutionRequest("10.5555/plain", indexes=(1,), op_flags=OpFlag.PUBLIC_ONLY),
        ResolutionRequest("10.5555/plain", op_flags=OpFlag.PUBLIC_ONLY | OpFlag.CERTIFY),
        ResolutionRequest("10.5555/plain", op_flags=OpFlag.PUBLIC_ONLY | OpFlag.REQUEST_DIGEST),
        ResolutionRequest("10.5555/plain", op_flags=OpFlag.PUBLIC_ONLY, session_id=5),
        ResolutionRequest("10.5555/private", op_flags=OpFlag.PUBLIC_ONLY),
        ResolutionRequest("10.5555/absent", op_flags=OpFlag.PUBLIC_ONLY),
        ResolutionRequest("0.NA/10.5555", op_flags=OpFlag.PUBLIC_ONLY),
        GetSiteInfoRequest("/"),
    ],
)
def test_everything_else_goes_the_full_way(
    service: tuple[NativeService, asyncio.AbstractEventLoop], request_: Message
) -> None:
    assert service[0].answer_now(encode(request_)) is None


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.binary(max_size=120), cut=st.integers(0, 80))
def test_any_bytes_give_the_full_answer_or_none(
    service: tuple[NativeService, asyncio.AbstractEventLoop], data: bytes, cut: int
) -> None:
    base = encode(ResolutionRequest("10.5555/plain", request_id=3, op_flags=OpFlag.PUBLIC_ONLY))
    for unit in (data, base[:cut] + data[:8] + base[cut + 8 :]):
        fast = service[0].answer_now(unit)
        if fast is not None:  # then it is what the full path says
            assert decode(fast) is not None
            assert _same_but_expiration(fast, _full(service, unit))
