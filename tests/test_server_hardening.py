"""`doikit serve` against an attacker's and a careless user's input, on both stores.

Each test here reproduces a finding of the hardening review: it failed before the fix.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from conftest import Server, start_server, stop_server

if TYPE_CHECKING:
    from collections.abc import Iterator

    from conftest import Server as ServerType


def _new_database(pg_url: str) -> str:
    import asyncpg  # noqa: PLC0415

    name = "h" + uuid.uuid4().hex[:12]

    async def create() -> None:
        conn = await asyncpg.connect(pg_url)
        try:
            await conn.execute(f"CREATE DATABASE {name}")
        finally:
            await conn.close()

    asyncio.run(create())
    return pg_url.rsplit("/", 1)[0] + "/" + name


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerType]:
    """`doikit serve --demo` on each store in turn, for the module."""
    if request.param == "sqlite":
        store = f"sqlite:///{tmp_path_factory.mktemp('hard') / 'doikit.sqlite3'}"
    else:
        store = _new_database(str(request.getfixturevalue("pg_url")))
    running = start_server(store)
    try:
        yield running
    finally:
        stop_server(running)


@pytest.fixture
def http(served: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served.url, follow_redirects=False, timeout=30) as client:
        yield client


def _auth(served: Server) -> dict[str, str]:
    return {"Authorization": f"Bearer {served.token}"}


def _put(http: httpx.Client, served: Server, name: str, body: Any) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return http.put("/api/handles/" + name, content=content, headers=_auth(served))


# --- disclosure ------------------------------------------------------------------------------

PRIVATE = [
    {
        "index": 1,
        "type": "URL",
        "data": {"format": "string", "value": "https://private.example/secret"},
        "permissions": "1100",
    },
    {"index": 2, "type": "EMAIL", "data": "hidden@example.org", "permissions": "1100"},
    {"index": 3, "type": "DESC", "data": "public words"},
]


@pytest.fixture
def private_record(http: httpx.Client, served: Server) -> str:
    name = "10.5555/private-" + uuid.uuid4().hex[:8]
    assert _put(http, served, name, {"values": PRIVATE}).status_code == 201
    return name


@pytest.mark.parametrize(
    "query", ["", "?action=api", "?noredirect", "?action=showvalues", "?type=URL", "?index=1"]
)
def test_private_values_never_reach_the_public(
    http: httpx.Client, private_record: str, query: str
) -> None:
    r = http.get(f"/{private_record}{query}")
    assert "private.example" not in r.text
    assert "hidden@example.org" not in r.text
    assert "private.example" not in r.headers.get("location", "")
    assert r.status_code != 500


def test_private_values_stay_hidden_behind_an_alias(
    http: httpx.Client, served: Server, private_record: str
) -> None:
    alias = private_record + "-alias"
    body = {"values": [{"index": 1, "type": "HS_ALIAS", "data": private_record}]}
    assert _put(http, served, alias, body).status_code == 201
    r = http.get(f"/{alias}", follow_redirects=True)
    assert "private.example" not in r.text
    assert all("private.example" not in str(h.headers) for h in r.history)


def test_the_public_part_is_still_shown(http: httpx.Client, private_record: str) -> None:
    r = http.get(f"/{private_record}?action=api")
    assert [v["index"] for v in r.json()["values"]] == [3]
