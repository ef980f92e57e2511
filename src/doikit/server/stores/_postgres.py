"""The PostgreSQL store, for scale: asyncpg with a connection pool."""

from __future__ import annotations

import asyncpg

from doikit.server.stores import PutResult, Row, StoredRecord, StoreError

# COLLATE "C": keys compare byte by byte, so listing order matches SQLite's and the index
# serves equality without locale rules.
SCHEMA = """
CREATE TABLE IF NOT EXISTS handles (
    key TEXT COLLATE "C" PRIMARY KEY,
    name TEXT NOT NULL,
    prefix TEXT COLLATE "C" NOT NULL,
    vals TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS handles_prefix ON handles (prefix, key);
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


class PostgresStore:
    """Records in PostgreSQL; see :mod:`doikit.server.stores`."""

    def __init__(self, url: str, *, min_size: int = 2, max_size: int = 16) -> None:
        self.url = url
        self._min = min_size
        self._max = max_size
        self._pool: asyncpg.Pool | None = None

    async def open(self) -> None:
        """Connect the pool and create the tables."""
        try:
            self._pool = await asyncpg.create_pool(self.url, min_size=self._min, max_size=self._max)
        except (OSError, asyncpg.PostgresError) as exc:
            raise StoreError(f"cannot connect to {self.url}: {exc}") from exc
        async with self.pool.acquire() as conn:
            await conn.execute("SELECT pg_advisory_lock(4242)")
            try:
                await conn.execute(SCHEMA)
            finally:
                await conn.execute("SELECT pg_advisory_unlock(4242)")

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
        """A point lookup."""
        row = await self.pool.fetchrow("SELECT name, vals FROM handles WHERE key = $1", key)
        return None if row is None else StoredRecord(row[0], row[1])

    async def put(self, row: Row, *, overwrite: bool) -> PutResult:
        """Create or replace one record."""
        if not overwrite:
            done = await self.pool.fetchval(
                "INSERT INTO handles VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING 1",
                *row,
            )
            return PutResult.EXISTS if done is None else PutResult.CREATED
        inserted = await self.pool.fetchval(UPSERT + " RETURNING (xmax = 0)", *row)
        return PutResult.CREATED if inserted else PutResult.REPLACED

    async def put_many(self, rows: list[Row]) -> None:
        """Create or replace *rows* in one transaction."""
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.executemany(UPSERT, rows)

    async def delete(self, key: str) -> bool:
        """Delete one record."""
        status = await self.pool.execute("DELETE FROM handles WHERE key = $1", key)
        return bool(status != "DELETE 0")

    async def list_names(self, prefix: str, offset: int, limit: int) -> tuple[int, list[str]]:
        """A page of names under *prefix*, in key order."""
        async with self.pool.acquire() as conn:
            total = await conn.fetchval("SELECT count(*) FROM handles WHERE prefix = $1", prefix)
            rows = await conn.fetch(
                "SELECT name FROM handles WHERE prefix = $1 ORDER BY key LIMIT $2 OFFSET $3",
                prefix,
                limit,
                offset,
            )
        return int(total), [r[0] for r in rows]

    async def has_prefix(self, prefix: str) -> bool:
        """Whether a record has *prefix*."""
        found = await self.pool.fetchval("SELECT 1 FROM handles WHERE prefix = $1 LIMIT 1", prefix)
        return found is not None

    async def add_token(self, digest: str, prefixes: tuple[str, ...]) -> None:
        """Store a token digest."""
        await self.pool.execute(
            "INSERT INTO tokens (digest, prefixes) VALUES ($1, $2)", digest, " ".join(prefixes)
        )

    async def token_prefixes(self, digest: str) -> tuple[str, ...] | None:
        """The prefixes of a token digest."""
        found = await self.pool.fetchval("SELECT prefixes FROM tokens WHERE digest = $1", digest)
        return None if found is None else tuple(str(found).split())
