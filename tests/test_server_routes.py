"""The server's routes and reads, in process (issue 30, point 5): the JSON API that
/openapi.json describes is the API the app routes, and a name the store does not hold costs
one read of the store, answered as the full routes answer it."""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import TYPE_CHECKING, Any

import httpx
from starlette.applications import Starlette
from starlette.routing import Route

from doikit.server import create_app
from doikit.server.stores._sqlite import SQLiteStore
from test_resolve_many import lifespan

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from doikit.server import StoredRecord

# The routes /openapi.json does not describe, and why.
UNDESCRIBED = {
    "/api/{rest}": "HANDLE.NET's 404 (or 405) for any other path of the API",
    "/openapi.json": "the description itself",
    "/": "the home page",
    "/{doi}": "the proxy: redirects and pages",
}
_CONVERTOR = re.compile(r":\w+\}")
MISSING = "10.9999/NOT-HERE"


class CountingStore(SQLiteStore):
    """The SQLite store, every call its own, with a note of each point read (``get`` reads
    through ``get_now``)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, url=f"sqlite:///{path}")
        self.reads: list[str] = []

    def get_now(self, key: str) -> StoredRecord | None:
        self.reads.append(key)
        return super().get_now(key)


@contextlib.asynccontextmanager
async def served(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    """A client of *app* in process, with the app's lifespan run around it."""
    async with lifespan(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://doikit.test") as client:
            yield client


def _starlette(app: object) -> Starlette:
    """The Starlette app inside the layers ``create_app`` wraps around it."""
    while not isinstance(app, Starlette):
        app = app.inner  # type: ignore[attr-defined]
    return app


def test_the_description_names_every_route_of_the_api_with_its_methods(tmp_path: Path) -> None:
    app = create_app(CountingStore(tmp_path / "store.sqlite3"))

    async def main() -> dict[str, Any]:
        async with served(app) as client:
            spec: dict[str, Any] = (await client.get("/openapi.json")).json()
            # A 405 names what the endpoint takes, as the routes do.
            assert (await client.put("/api/handles")).headers["allow"] == "GET, HEAD"
            assert (await client.delete("/api/deposit")).headers["allow"] == "POST"
            return spec

    spec = asyncio.run(main())
    described = {path: {method.upper() for method in item} for path, item in spec["paths"].items()}
    routes = [route for route in _starlette(app).routes if isinstance(route, Route)]
    routed = {_CONVERTOR.sub("}", route.path): set(route.methods or ()) for route in routes}
    assert set(UNDESCRIBED) <= set(routed)
    assert described == {
        path: methods - {"HEAD"} for path, methods in routed.items() if path not in UNDESCRIBED
    }
    assert all("HEAD" in methods for methods in routed.values() if "GET" in methods)


def test_a_name_the_store_lacks_is_read_once_and_answered_as_the_full_routes_do(
    tmp_path: Path,
) -> None:
    store = CountingStore(tmp_path / "store.sqlite3")
    app = create_app(store, demo=True)
    key = MISSING.lower()

    async def main() -> None:
        async with served(app) as client:
            for route in ("/", "/api/handles/"):
                store.reads.clear()
                plain = await client.get(route + MISSING)
                assert plain.status_code == 404
                assert store.reads == [key], route
                # '?auth' (a no-op) sends the same request through the full route.
                full = await client.get(route + MISSING + "?auth")
                assert (plain.content, plain.headers) == (full.content, full.headers)
                # doikit serve's protocol writes the same reply itself, after one read.
                store.reads.clear()
                now = app.now((route + MISSING).encode())  # type: ignore[attr-defined]
                assert store.reads == [key]
                assert now == (404, plain.headers.raw, plain.content)
            store.reads.clear()
            assert (await client.get("/10.1000/182")).status_code == 302
            assert store.reads == ["10.1000/182"]  # (a hit, as before)

    asyncio.run(main())
