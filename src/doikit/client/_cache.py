"""A resolution cache that honours each record's TTL, in memory and optionally in SQLite."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Self

from doikit.handle import HandleFormatError, HandleRecord, values_from_json, values_to_json

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Sequence
    from types import TracebackType

    from doikit._doi import DOI

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    key TEXT PRIMARY KEY,
    handle TEXT NOT NULL,
    vals TEXT NOT NULL,
    expires REAL NOT NULL
) WITHOUT ROWID
"""

#: Writes to the SQLite file are committed at least this often (seconds), and on close.
COMMIT_EVERY = 1.0


def cache_key(doi: DOI, types: Sequence[str] = (), indexes: Sequence[int] = ()) -> str:
    """The key of a resolution: the DOI's comparison key and the filters asked for."""
    if not types and not indexes:
        return doi.key
    return f"{doi.key}\x00{','.join(types)}\x00{','.join(map(str, indexes))}"


class Cache:
    """Resolved records, each kept until the shortest TTL among its values runs out.

    Records with no values or a TTL of 0 are not kept; nor are errors. In memory the cache
    holds at most *maxsize* records, dropping the oldest first. With *path*, records are also
    written to a SQLite file, so a later process (or a restarted one) starts warm; the file
    holds records until they expire. Give the cache to a client (``Client(cache=…)``); close
    it (or use it as a context manager) to commit the last writes.

    >>> from doikit import DOI
    >>> from doikit.handle import HandleRecord, HandleValue
    >>> cache = Cache()
    >>> doi = DOI("10.1000/182")
    >>> cache.put(cache_key(doi), HandleRecord("10.1000/182", (HandleValue(1, "URL", b"x"),)))
    >>> cache.get(cache_key(DOI("10.1000/182"))).handle
    '10.1000/182'
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        maxsize: int = 100_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.maxsize = maxsize
        self._clock = clock
        self._memory: dict[str, tuple[float, HandleRecord]] = {}
        self._db: sqlite3.Connection | None = None
        self._last_commit = 0.0
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
            self._db.commit()

    def __len__(self) -> int:
        return len(self._memory)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def get(self, key: str) -> HandleRecord | None:
        """The record under *key* if it has not expired."""
        hit = self._memory.get(key)
        now = self._clock()
        if hit is not None:
            if hit[0] > now:
                return hit[1]
            del self._memory[key]
        if self._db is None:
            return None
        row = self._db.execute(
            "SELECT handle, vals, expires FROM records WHERE key = ? AND expires > ?", (key, now)
        ).fetchone()
        if row is None:
            return None
        try:
            record = HandleRecord(row[0], values_from_json(json.loads(row[1])))
        except (ValueError, HandleFormatError):
            return None
        self._remember(key, row[2], record)
        return record

    def put(self, key: str, record: HandleRecord) -> None:
        """Keep *record* under *key* for the shortest TTL of its values."""
        if not record.values:
            return
        ttl = min(value.ttl_seconds() for value in record.values)
        if ttl <= 0:
            return
        now = self._clock()
        expires = now + ttl
        self._remember(key, expires, record)
        if self._db is not None:
            self._db.execute(
                "INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?)",
                (key, record.handle, values_to_json(record.values), expires),
            )
            if now - self._last_commit >= COMMIT_EVERY:
                self.commit()

    def _remember(self, key: str, expires: float, record: HandleRecord) -> None:
        memory = self._memory
        if key not in memory and len(memory) >= self.maxsize:
            del memory[next(iter(memory))]
        memory[key] = (expires, record)

    def commit(self) -> None:
        """Write pending records to the SQLite file."""
        if self._db is not None:
            self._db.commit()
            self._last_commit = self._clock()

    def clear(self) -> None:
        """Forget every record, in memory and in the file."""
        self._memory.clear()
        if self._db is not None:
            self._db.execute("DELETE FROM records")
            self._db.commit()

    def close(self) -> None:
        """Drop expired records from the SQLite file, commit and close it; the memory part
        stays usable."""
        if self._db is not None:
            self._db.execute("DELETE FROM records WHERE expires <= ?", (self._clock(),))
            self.commit()
            self._db.close()
            self._db = None
