"""The SQLite store: the embedded default."""

from __future__ import annotations

import asyncio
import contextlib
import mmap
import operator
import os
import queue
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Final, TypeVar

from doikit.server.stores import (
    Entries,
    Found,
    Row,
    StoredRecord,
    StoreError,
    StoreUnavailable,
    entry_changes,
    index_changes,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterator
    from pathlib import Path

T = TypeVar("T")
_text: Final = operator.itemgetter(1)

SCHEMA = """
CREATE TABLE IF NOT EXISTS handles (
    key TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    vals TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS value_index (
    type TEXT NOT NULL,
    text TEXT NOT NULL,
    key TEXT NOT NULL,
    PRIMARY KEY (type, text, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tokens (
    digest TEXT PRIMARY KEY,
    prefixes TEXT NOT NULL,
    created TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);
"""


def _key_range(prefix: str) -> tuple[str, str]:
    """The primary-key range of a prefix's names: keys are the folded names, which start
    with the prefix and '/', and '0' is the character after '/'. No second index needed,
    so a deposit writes one B-tree, not two."""
    return prefix + "/", prefix + "0"


@contextlib.contextmanager
def _answering() -> Iterator[None]:
    """SQLite's operational errors (locked past the busy timeout, disk full, I/O errors) as
    :class:`StoreUnavailable`: the request may succeed later."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        raise StoreUnavailable(f"SQLite: {exc}") from exc


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    # FULL: each commit syncs the WAL, so an acknowledged write survives a crash or power cut.
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA busy_timeout=30000")
    # Reads of random names touch pages all over the file: map it (no read() per page) and
    # keep a larger page cache. Both are per connection and cost address space, not RAM.
    conn.execute("PRAGMA mmap_size=4294967296")
    conn.execute("PRAGMA cache_size=-65536")
    # When the WAL starts over, a file grown past 64 MiB (a large deposit) is cut back.
    conn.execute("PRAGMA journal_size_limit=67108864")
    return conn


def _apply(conn: sqlite3.Connection, gone: Entries, added: Entries) -> None:
    """Delete and add value index entries (added in the order of their text: page by page,
    not all over; sorting by the text alone is three times cheaper than by the tuple, and
    the order only saves work)."""
    conn.executemany("DELETE FROM value_index WHERE type = ? AND text = ? AND key = ?", gone)
    conn.executemany("INSERT OR IGNORE INTO value_index VALUES (?, ?, ?)", sorted(added, key=_text))


def _put(conn: sqlite3.Connection, rows: list[Row]) -> None:
    """Create or replace *rows* and their value index, inside the caller's transaction
    (the old values are read in it, so an earlier batch's rows count as old)."""
    old: dict[str, str] = {}
    keys = [row.key for row in rows]
    for start in range(0, len(keys), 500):
        part = keys[start : start + 500]
        marks = ",".join("?" * len(part))
        old.update(
            conn.execute(
                f"SELECT key, vals FROM handles WHERE key IN ({marks})",  # noqa: S608 - only ?s
                part,
            ).fetchall()
        )
    # In key order (a stable sort: a name given twice keeps its last row), so both B-trees
    # are written page by page rather than all over.
    in_order: list[Row] = sorted(rows, key=lambda row: row.key)
    conn.executemany("INSERT OR REPLACE INTO handles VALUES (?, ?, ?, ?)", in_order)
    _apply(conn, *index_changes(rows, old))


#: Handed to the writer thread when the batches fail: it rolls back (an empty batch is
#: never handed otherwise).
_ABANDON: Final[list[Row]] = []


async def _one(rows: list[Row]) -> AsyncIterator[list[Row]]:
    yield rows


def _index(conn: sqlite3.Connection, key: str, old: str | None, new: str | None) -> None:
    """Bring the value index from record values *old* to *new* (``None``: no record)."""
    _apply(conn, *entry_changes(key, old, new))


_GET = "SELECT name, vals FROM handles WHERE key = ?"

# The WAL-index header at the start of the -shm file, both copies (SQLite's file format,
# "The WAL-Index Format"): every commit, by any connection of any process, changes it.
_WAL_HEADER: Final = 96
#: How long the reader may keep one read transaction open, in seconds: while it is open,
#: the WAL cannot start over (see :class:`_Snapshot`).
SNAPSHOT_SECONDS: Final = 0.5
#: How long nothing must have been committed before the reader keeps a read transaction.
QUIET_SECONDS: Final = 0.25


class _Snapshot:
    """The reader connection, keeping its read transaction open between point reads while
    nothing is written.

    Beginning and ending a read transaction costs a point read as much again as the read
    itself (SQLite takes and drops a lock on the -shm file each time: two system calls), so
    in a quiet spell the reader keeps one open across reads. A read must still see every
    write committed before it, and a kept transaction must not hold the WAL back (while a
    reader uses it, the WAL cannot start over and grows). So before each statement the
    WAL-index header (mapped from the -shm file, no system call; any commit by any
    connection of any process changes it) is compared with the one the previous read saw:

    * changed: any kept transaction ends and this read runs as its own transaction, as
      every read did before;
    * unchanged for :data:`QUIET_SECONDS`: nothing was committed since, so a kept
      transaction still sees everything; one is begun if none is open, and it ends
      :data:`SNAPSHOT_SECONDS` later at the latest. Under a stream of writes reads keep
      nothing open, and the WAL starts over as it always did.

    The header is read before the statement takes its snapshot, so a commit in between only
    makes the next read count as changed. The -shm file is the one SQLite uses (the
    database's real path, as SQLite resolved it); its descriptor stays open until the store
    has closed every connection, because closing any descriptor of a file drops all of the
    process's POSIX locks on it, SQLite's included, and another process would then take the
    database for unused and rebuild the -shm file under the server. Without a -shm file to
    map, every statement is its own transaction.
    """

    def __init__(self, conn: sqlite3.Connection, shared: _Snapshot | None = None) -> None:
        self.conn = conn
        self._seen = b""
        self._changed = 0.0
        self._ending: asyncio.TimerHandle | None = None
        self._began = 0.0  # (without a loop: when the kept transaction began)
        self._timed = shared is None
        self._shm: mmap.mmap | None = None
        self._fd = -1
        if shared is not None:  # a reader of a thread of its own, on the store's mapping
            self._shm = shared._shm  # noqa: SLF001 - the same class's
            return
        file = next(
            (row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), ""
        )
        with contextlib.suppress(OSError, ValueError):
            if file:
                self._fd = os.open(f"{file}-shm", os.O_RDONLY)
                self._shm = mmap.mmap(self._fd, _WAL_HEADER, access=mmap.ACCESS_READ)

    def current(self) -> sqlite3.Connection:
        """The connection, ready for a read that sees every write committed so far."""
        shm = self._shm
        if shm is None:
            return self.conn
        header = shm[:_WAL_HEADER]
        if header != self._seen:
            self.end()
            self._seen = header
            self._changed = time.monotonic()
        elif not self.conn.in_transaction:
            if time.monotonic() - self._changed >= QUIET_SECONDS:
                if self._timed:
                    loop = asyncio.get_running_loop()  # (first: no transaction without its end)
                    self.conn.execute("BEGIN")
                    self._ending = loop.call_later(SNAPSHOT_SECONDS, self.end)
                else:
                    self.conn.execute("BEGIN")
                    self._began = time.monotonic()
        elif not self._timed and time.monotonic() - self._began >= SNAPSHOT_SECONDS:
            self.end()
        return self.conn

    def end(self) -> None:
        """End the read transaction, if one is open."""
        if self._ending is not None:
            self._ending.cancel()
            self._ending = None
        if self.conn.in_transaction:
            self.conn.execute("COMMIT")

    def close(self) -> None:
        """End the transaction and close the connection (not yet the -shm file)."""
        with contextlib.suppress(sqlite3.Error):
            self.end()
        self.conn.close()

    def release(self) -> None:
        """Unmap and close the -shm file: once every connection of the store is closed (a
        reader on the store's mapping leaves it to the store's)."""
        if not self._timed:
            self._shm = None
            return
        if self._shm is not None:
            self._shm.close()
            self._shm = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class SQLiteStore:
    """Records in one SQLite file; see :mod:`doikit.server.stores`."""

    def __init__(self, path: Path, *, url: str) -> None:
        self.path = path
        self.url = url
        self._reader: _Snapshot | None = None
        self._writer: sqlite3.Connection | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._scans: ThreadPoolExecutor | None = None
        self._scanner: sqlite3.Connection | None = None

    async def open(self) -> None:
        """Open the file (creating it and its tables, not its directory) with a reader and a
        writer connection.

        :raises StoreError: when the directory does not exist or the file cannot be opened.
        """
        if not self.path.parent.is_dir():
            raise StoreError(f"{self.url}: the directory {self.path.parent} does not exist")
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="doikit-sqlite")
        try:
            self._writer = await self._write(lambda: _connect(self.path))
            await self._write(lambda: self._w.executescript(SCHEMA))
            await self._write(self._migrate)
            self._reader = _Snapshot(_connect(self.path))
        except (StoreUnavailable, sqlite3.DatabaseError) as exc:
            await self.close()
            raise StoreError(f"{self.url}: cannot open the database: {exc}") from exc
        self._scans = ThreadPoolExecutor(max_workers=1, thread_name_prefix="doikit-scan")

    async def close(self) -> None:
        """Close the connections and the threads; last, the reader's -shm file."""
        reader, self._reader = self._reader, None
        try:
            if reader is not None:
                reader.close()
            if self._writer is not None:
                await self._write(self._w.close)
                self._writer = None
            if self._pool is not None:
                self._pool.shutdown()
                self._pool = None
            if self._scans is not None:
                scanner = self._scanner
                if scanner is not None:
                    self._scans.submit(scanner.close).result()
                self._scans.shutdown()
                self._scans = None
                self._scanner = None
        finally:
            if reader is not None:
                reader.release()

    def _migrate(self) -> None:
        """Version 1 added the value index: fill it for the records already there."""
        conn = self._w
        if conn.execute("PRAGMA user_version").fetchone()[0] >= 1:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            for key, vals in conn.execute("SELECT key, vals FROM handles").fetchall():
                _index(conn, key, None, vals)
            conn.execute("PRAGMA user_version = 1")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    @property
    def _r(self) -> sqlite3.Connection:
        """The reader, in a read transaction that sees every committed write (on the loop)."""
        if self._reader is None:
            raise RuntimeError("the store is not open")
        return self._reader.current()

    @property
    def _w(self) -> sqlite3.Connection:
        if self._writer is None:
            raise RuntimeError("the store is not open")
        return self._writer

    async def _write(self, work: Callable[[], T]) -> T:
        if self._pool is None:
            raise RuntimeError("the store is not open")
        with _answering():
            return await asyncio.get_running_loop().run_in_executor(self._pool, work)

    async def _scan(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run a read that may visit many rows (counts, pages, searches) on a thread with
        its own connection, so the event loop keeps answering meanwhile."""
        if self._scans is None:
            raise RuntimeError("the store is not open")

        def run() -> T:
            if self._scanner is None:
                self._scanner = _connect(self.path)
            return work(self._scanner)

        with _answering():
            return await asyncio.get_running_loop().run_in_executor(self._scans, run)

    async def get(self, key: str) -> StoredRecord | None:
        """A point lookup, run on the loop: it takes microseconds."""
        return self.get_now(key)

    def get_now(self, key: str) -> StoredRecord | None:
        """:meth:`get` without the coroutine, for the server's hot path (on the loop's
        thread: the reader belongs to it).

        :raises StoreUnavailable: when SQLite cannot answer.
        """
        try:  # (not _answering(): a context manager costs the hot path a few percent)
            row = self._r.execute(_GET, (key,)).fetchone()
        except sqlite3.OperationalError as exc:
            raise StoreUnavailable(f"SQLite: {exc}") from exc
        return None if row is None else StoredRecord(row[0], row[1])

    def point_reader(self) -> PointReader:
        """A reader of single records for a thread of its own (the native protocol's lanes,
        :mod:`doikit.server._native_lanes`), on a connection of its own; close it before
        the store."""
        if self._reader is None:
            raise RuntimeError("the store is not open")
        return PointReader(_Snapshot(_connect(self.path), shared=self._reader))

    async def swap(self, key: str, expected: str | None, row: Row | None) -> bool:
        """Compare and set one record in its own transaction."""

        def work() -> bool:
            conn = self._w
            conn.execute("BEGIN IMMEDIATE")
            try:
                found = conn.execute("SELECT vals FROM handles WHERE key = ?", (key,)).fetchone()
                if (None if found is None else found[0]) != expected:
                    conn.execute("ROLLBACK")
                    return False
                if row is None:
                    conn.execute("DELETE FROM handles WHERE key = ?", (key,))
                else:
                    conn.execute("INSERT OR REPLACE INTO handles VALUES (?, ?, ?, ?)", row)
                _index(conn, key, expected, None if row is None else row.values_json)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            return True

        return await self._write(work)

    async def put_many(self, rows: list[Row]) -> None:
        """Create or replace *rows* in one transaction."""
        await self.put_batches(_one(rows))

    async def put_batches(self, batches: AsyncIterator[list[Row]]) -> None:
        """Create or replace the rows of each batch in one transaction: the writer thread
        writes a batch while the event loop awaits the next (a deposit parses it in another
        thread), and commits after the last; if *batches* raises, nothing is committed."""
        handed: queue.SimpleQueue[list[Row] | None] = queue.SimpleQueue()

        def work() -> None:
            conn = self._w
            conn.execute("BEGIN IMMEDIATE")
            try:
                while (rows := handed.get()) is not None:
                    if rows is _ABANDON:
                        conn.execute("ROLLBACK")
                        return
                    _put(conn, rows)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

        written = asyncio.ensure_future(self._write(work))
        try:
            async for rows in batches:
                if written.done():
                    break  # the writer failed: its error is raised below
                if rows:
                    handed.put(rows)
        except BaseException:
            handed.put(_ABANDON)
            await written
            raise
        handed.put(None)
        await written

    async def list_names(self, prefix: str, offset: int, limit: int) -> tuple[int, list[str]]:
        """A page of names under *prefix*, in key order (a range of the primary key)."""
        low, high = _key_range(prefix)

        def work(conn: sqlite3.Connection) -> tuple[int, list[str]]:
            total = conn.execute(
                "SELECT count(*) FROM handles WHERE key >= ? AND key < ?", (low, high)
            ).fetchone()[0]
            rows = conn.execute(
                "SELECT name FROM handles WHERE key >= ? AND key < ? ORDER BY key LIMIT ? OFFSET ?",
                (low, high, limit, offset),
            ).fetchall()
            return int(total), [r[0] for r in rows]

        return await self._scan(work)

    async def has_prefix(self, prefix: str) -> bool:
        """Whether a record has *prefix*."""
        with _answering():
            row = self._r.execute(
                "SELECT 1 FROM handles WHERE key >= ? AND key < ? LIMIT 1", _key_range(prefix)
            ).fetchone()
        return row is not None

    async def find(
        self, type_: str, low: str, high: str, after: tuple[str, str], limit: int
    ) -> list[Found]:
        """Value index entries in a range, with their records (a range of the index)."""

        def work(conn: sqlite3.Connection) -> list[Found]:
            rows = conn.execute(
                "SELECT i.text, i.key, h.name, h.vals FROM value_index i"
                " JOIN handles h ON h.key = i.key"
                " WHERE i.type = ? AND i.text >= ? AND i.text < ? AND (i.text, i.key) > (?, ?)"
                " ORDER BY i.text, i.key LIMIT ?",
                (type_, low, high, *after, limit),
            ).fetchall()
            return [Found(*r) for r in rows]

        return await self._scan(work)

    async def add_token(self, digest: str, prefixes: tuple[str, ...]) -> None:
        """Store a token digest."""
        await self._write(
            lambda: self._w.execute(
                "INSERT INTO tokens (digest, prefixes) VALUES (?, ?)", (digest, " ".join(prefixes))
            )
        )

    async def token_prefixes(self, digest: str) -> tuple[str, ...] | None:
        """The prefixes of a token digest."""
        with _answering():
            row = self._r.execute(
                "SELECT prefixes FROM tokens WHERE digest = ?", (digest,)
            ).fetchone()
        return None if row is None else tuple(row[0].split())


class PointReader:
    """Single records read on one thread, no event loop: :meth:`get` as the store's
    ``get_now``, with the same kept read transaction (:class:`_Snapshot`), which the thread
    ends with :meth:`rest` before it waits for work, and which ends by itself on the first
    read after :data:`SNAPSHOT_SECONDS`."""

    def __init__(self, snapshot: _Snapshot) -> None:
        self._snapshot = snapshot

    def get(self, key: str) -> StoredRecord | None:
        """The record stored under *key*, or ``None``.

        :raises StoreUnavailable: when SQLite cannot answer.
        """
        try:
            row = self._snapshot.current().execute(_GET, (key,)).fetchone()
        except sqlite3.OperationalError as exc:
            raise StoreUnavailable(f"SQLite: {exc}") from exc
        return None if row is None else StoredRecord(row[0], row[1])

    def rest(self) -> None:
        """End the kept read transaction (nothing to read for now)."""
        with contextlib.suppress(sqlite3.Error):
            self._snapshot.end()

    def close(self) -> None:
        """Close the connection."""
        self._snapshot.close()
        self._snapshot.release()
