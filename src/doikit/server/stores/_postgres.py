"""The PostgreSQL store, for scale: asyncpg with a connection pool."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Final

import asyncpg

from doikit.server.stores import (
    Entries,
    Found,
    Row,
    StoredRecord,
    StoreError,
    StoreUnavailable,
    entry_changes,
    index_changes,
    index_entries,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from asyncpg.pool import PoolConnectionProxy

    Connection = asyncpg.Connection[asyncpg.Record] | PoolConnectionProxy[asyncpg.Record]

# COLLATE "C": keys compare byte by byte, so listing order matches SQLite's, the index
# serves equality without locale rules, and a prefix's names are one range of the key.
SCHEMA = """
CREATE TABLE IF NOT EXISTS handles (
    key TEXT COLLATE "C" PRIMARY KEY,
    name TEXT NOT NULL,
    prefix TEXT COLLATE "C" NOT NULL,
    vals TEXT NOT NULL
);
DROP INDEX IF EXISTS handles_prefix;
CREATE TABLE IF NOT EXISTS value_index (
    type TEXT COLLATE "C" NOT NULL,
    text TEXT COLLATE "C" NOT NULL,
    key TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (type, text, key)
);
CREATE TABLE IF NOT EXISTS doikit_meta (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
    digest TEXT PRIMARY KEY,
    prefixes TEXT NOT NULL,
    created TIMESTAMPTZ NOT NULL DEFAULT now()
);
"""

UPSERT = (
    "INSERT INTO handles VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO UPDATE"
    " SET name = excluded.name, prefix = excluded.prefix, vals = excluded.vals"
)

#: No statement runs longer than this on the server, and no call waits longer for a reply
#: (seconds): a stuck database gives a 503, not a request that never ends.
STATEMENT_TIMEOUT: Final = 10.0
CONNECT_TIMEOUT: Final = 5.0

# What says the database cannot answer now (rather than that the request is wrong): lost or
# refused connections (SQLSTATE class 08), shutdown and cancelled statements (57), lack of
# resources (53), a database that is gone (3D000), the driver's own connection errors.
_UNAVAILABLE: Final = (
    OSError,
    TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.InsufficientResourcesError,
    asyncpg.exceptions.InvalidCatalogNameError,
    asyncpg.InterfaceError,
)


@contextlib.contextmanager
def _answering() -> Iterator[None]:
    """Turn the database's unavailability into :class:`StoreUnavailable`."""
    try:
        yield
    except _UNAVAILABLE as exc:
        raise StoreUnavailable(f"PostgreSQL: {type(exc).__name__}: {exc}") from exc


def _range(prefix: str) -> tuple[str, str]:
    # The keys of a prefix's names: the folded names start with the prefix and '/', and
    # '0' is the character after '/'.
    return prefix + "/", prefix + "0"


async def _put(conn: Connection, rows: list[Row]) -> None:
    """Create or replace *rows* and their value index inside the caller's transaction (the
    old values are read in it, so an earlier batch's rows count as old)."""
    keys = [row.key for row in rows]
    old: dict[str, str] = dict(
        await conn.fetch(  # type: ignore[arg-type] # Records are pairs
            "SELECT key, vals FROM handles WHERE key = ANY($1::text[]) FOR UPDATE", keys
        )
    )
    await conn.executemany(UPSERT, rows)
    await _apply(conn, *index_changes(rows, old))


async def _apply(conn: Connection, gone: Entries, added: Entries) -> None:
    """Delete and add value index entries."""
    if gone:
        await conn.executemany(
            "DELETE FROM value_index WHERE type = $1 AND text = $2 AND key = $3", gone
        )
    if added:
        await conn.executemany(
            "INSERT INTO value_index VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", sorted(added)
        )


async def _index(conn: Connection, key: str, old: str | None, new: str | None) -> None:
    """Bring the value index from record values *old* to *new* (``None``: no record)."""
    await _apply(conn, *entry_changes(key, old, new))


async def _migrate(conn: Connection) -> None:
    """Version 1 added the value index: fill it for the records already there."""
    version = await conn.fetchval("SELECT max(version) FROM doikit_meta")
    if version is not None and version >= 1:
        return
    async with conn.transaction():
        entries = {
            (kind, text, key)
            for key, vals in await conn.fetch("SELECT key, vals FROM handles")
            for kind, text in index_entries(vals)
        }
        await _apply(conn, set(), entries)
        await conn.execute("INSERT INTO doikit_meta VALUES (1)")


class PostgresStore:
    """Records in PostgreSQL; see :mod:`doikit.server.stores`."""

    # No floor of open connections (min_size 0): connections open as requests need them and
    # stay while in use, so when PostgreSQL is down nothing reconnects in the background
    # (asyncpg logs a traceback per attempt) and the server logs one line per incident.
    def __init__(self, url: str, *, min_size: int = 0, max_size: int = 16) -> None:
        self.url = url
        self._min = min_size
        self._max = max_size
        self._pool: asyncpg.Pool | None = None
        #: Whether the server is a streaming standby (read only), once open.
        self.standby = False

    async def open(self) -> None:
        """Connect the pool and create the tables."""
        try:
            self._pool = await asyncpg.create_pool(
                self.url,
                min_size=self._min,
                max_size=self._max,
                timeout=CONNECT_TIMEOUT,
                command_timeout=STATEMENT_TIMEOUT,
                server_settings={"statement_timeout": str(int(STATEMENT_TIMEOUT * 1000))},
            )
            async with self.pool.acquire() as conn:
                # A streaming standby is read only: its tables come from the primary.
                self.standby = bool(await conn.fetchval("SELECT pg_is_in_recovery()"))
                if not self.standby:
                    await conn.execute("SELECT pg_advisory_lock(4242)")
                    try:
                        await conn.execute(SCHEMA)
                        await _migrate(conn)
                    finally:
                        await conn.execute("SELECT pg_advisory_unlock(4242)")
        except (*_UNAVAILABLE, asyncpg.PostgresError) as exc:
            await self.close()
            raise StoreError(f"cannot connect to {self.url}: {exc}") from exc

    async def close(self) -> None:
        """Close the pool."""
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    @property
    def pool(self) -> asyncpg.Pool:
        """The open pool."""
        if self._pool is None:
            raise RuntimeError("the store is not open")
        return self._pool

    async def get(self, key: str) -> StoredRecord | None:
        """A point lookup. A key PostgreSQL text cannot hold (NUL) names no record."""
        if "\x00" in key:
            return None
        with _answering():
            row = await self.pool.fetchrow("SELECT name, vals FROM handles WHERE key = $1", key)
        return None if row is None else StoredRecord(row[0], row[1])

    async def swap(self, key: str, expected: str | None, row: Row | None) -> bool:
        """Compare and set one record, with its value index, in one transaction."""
        with _answering():
            async with self.pool.acquire() as conn, conn.transaction():
                if expected is None:
                    if row is None:
                        found = await conn.fetchval("SELECT 1 FROM handles WHERE key = $1", key)
                        return found is None
                    done = await conn.fetchval(
                        "INSERT INTO handles VALUES ($1, $2, $3, $4)"
                        " ON CONFLICT DO NOTHING RETURNING 1",
                        *row,
                    )
                elif row is None:
                    done = await conn.fetchval(
                        "DELETE FROM handles WHERE key = $1 AND vals = $2 RETURNING 1",
                        key,
                        expected,
                    )
                else:
                    done = await conn.fetchval(
                        "UPDATE handles SET name = $3, prefix = $4, vals = $5"
                        " WHERE key = $1 AND vals = $2 RETURNING 1",
                        key,
                        expected,
                        row.name,
                        row.prefix,
                        row.values_json,
                    )
                if done is None:
                    return False
                await _index(conn, key, expected, None if row is None else row.values_json)
                return True

    async def put_many(self, rows: list[Row]) -> None:
        """Create or replace *rows* in one transaction, with their value index."""
        with _answering():
            async with self.pool.acquire() as conn, conn.transaction():
                await _put(conn, rows)

    async def put_batches(self, batches: AsyncIterator[list[Row]]) -> None:
        """Create or replace the rows of each batch in one transaction, each batch sent
        while the next is being made; if *batches* raises, nothing is committed."""
        with _answering():
            async with self.pool.acquire() as conn, conn.transaction():
                async for rows in batches:
                    if rows:
                        await _put(conn, rows)

    async def list_names(self, prefix: str, offset: int, limit: int) -> tuple[int, list[str]]:
        """A page of names under *prefix*, in key order (a range of the primary key)."""
        low, high = _range(prefix)
        with _answering():
            async with self.pool.acquire() as conn:
                total = await conn.fetchval(
                    "SELECT count(*) FROM handles WHERE key >= $1 AND key < $2", low, high
                )
                rows = await conn.fetch(
                    "SELECT name FROM handles WHERE key >= $1 AND key < $2"
                    " ORDER BY key LIMIT $3 OFFSET $4",
                    low,
                    high,
                    limit,
                    offset,
                )
        return int(total), [r[0] for r in rows]

    async def has_prefix(self, prefix: str) -> bool:
        """Whether a record has *prefix*."""
        with _answering():
            found = await self.pool.fetchval(
                "SELECT 1 FROM handles WHERE key >= $1 AND key < $2 LIMIT 1", *_range(prefix)
            )
        return found is not None

    async def find(
        self, type_: str, low: str, high: str, after: tuple[str, str], limit: int
    ) -> list[Found]:
        """Value index entries in a range, with their records (a range of the index)."""
        if "\x00" in low + high + after[0] + after[1] + type_:
            return []
        with _answering():
            rows = await self.pool.fetch(
                "SELECT i.text, i.key, h.name, h.vals FROM value_index i"
                " JOIN handles h ON h.key = i.key"
                " WHERE i.type = $1 AND i.text >= $2 AND i.text < $3"
                " AND (i.text, i.key) > ($4, $5)"
                " ORDER BY i.text, i.key LIMIT $6",
                type_,
                low,
                high,
                *after,
                limit,
            )
        return [Found(*r) for r in rows]

    async def add_token(self, digest: str, prefixes: tuple[str, ...]) -> None:
        """Store a token digest."""
        with _answering():
            await self.pool.execute(
                "INSERT INTO tokens (digest, prefixes) VALUES ($1, $2)", digest, " ".join(prefixes)
            )

    async def token_prefixes(self, digest: str) -> tuple[str, ...] | None:
        """The prefixes of a token digest."""
        with _answering():
            found = await self.pool.fetchval(
                "SELECT prefixes FROM tokens WHERE digest = $1", digest
            )
        return None if found is None else tuple(str(found).split())
