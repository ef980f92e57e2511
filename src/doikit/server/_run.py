"""Running the server (uvicorn) and creating tokens, for the CLI."""

from __future__ import annotations

import asyncio
import os

import uvicorn

from doikit.server._app import create_app
from doikit.server._auth import hash_token, new_token
from doikit.server.stores import default_store_url, open_store


def app_from_env() -> object:
    """The app for uvicorn's worker processes, configured through the environment."""
    return create_app(
        os.environ["DOIKIT_STORE"],
        ra_name=os.environ.get("DOIKIT_RA", "doikit"),
        demo=os.environ.get("DOIKIT_DEMO") == "1",
    )


def run(*, store: str | None, host: str, port: int, workers: int, demo: bool, ra_name: str) -> None:
    """Serve until interrupted: uvicorn with uvloop and httptools when installed."""
    os.environ["DOIKIT_STORE"] = store or default_store_url()
    os.environ["DOIKIT_RA"] = ra_name
    os.environ["DOIKIT_DEMO"] = "1" if demo else "0"
    uvicorn.run(
        "doikit.server._run:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
        access_log=False,
        server_header=False,
    )


def create_token(store: str | None, prefixes: tuple[str, ...]) -> str:
    """Create a token for *prefixes* in *store*; return it (only its digest is stored)."""
    token = new_token()

    async def work() -> None:
        the_store = open_store(store)
        await the_store.open()
        try:
            await the_store.add_token(hash_token(token), prefixes)
        finally:
            await the_store.close()

    asyncio.run(work())
    return token
