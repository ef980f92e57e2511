"""The Store contract, run against a real SQLite file and a real PostgreSQL server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from doikit import DOI
from doikit.handle import DEFAULT_PERMISSIONS, HandleValue, all_public, values_to_json
from doikit.server import Row, Store, StoreError, open_store
from doikit.server.stores import index_changes, index_entries
from doikit.server.stores._sqlite import QUIET_SECONDS, SNAPSHOT_SECONDS
from test_handle import values as handle_values

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable
    from pathlib import Path


def run(url: str, body: Callable[[Store], Awaitable[None]]) -> None:
    async def main() -> None:
        store = open_store(url)
        await store.open()
        try:
            await body(store)
        finally:
            await store.close()

    asyncio.run(main())


def row(name: str, values: str = "[]") -> Row:
    doi = DOI(name)
    return Row(doi.key, str(doi), doi.prefix, values)


def test_swap_creates_replaces_and_deletes_only_what_it_expects(store_url: str) -> None:
    async def body(store: Store) -> None:
        assert await store.get("10.5555/x") is None
        assert await store.swap("10.5555/x", None, row("10.5555/X", "[1]"))
        got = await store.get("10.5555/x")
        assert got is not None
        assert got.name == "10.5555/X"
        assert got.values_json == "[1]"
        # Expecting no record, or other values, changes nothing.
        assert not await store.swap("10.5555/x", None, row("10.5555/x", "[2]"))
        assert not await store.swap("10.5555/x", "[9]", row("10.5555/x", "[2]"))
        assert not await store.swap("10.5555/x", "[9]", None)
        assert (await store.get("10.5555/x")) == got
        assert await store.swap("10.5555/x", "[1]", row("10.5555/x", "[2]"))
        replaced = await store.get("10.5555/x")
        assert replaced is not None
        assert (replaced.name, replaced.values_json) == ("10.5555/x", "[2]")
        assert await store.swap("10.5555/x", "[2]", None)
        assert not await store.swap("10.5555/x", "[2]", None)
        assert await store.get("10.5555/x") is None
        assert await store.swap("10.5555/x", None, None)  # nothing there, as expected

    run(store_url, body)


def test_swap_loses_no_concurrent_change(store_url: str) -> None:
    # 16 writers each append their mark to one record by read-modify-swap: all 16 stay.
    async def body(store: Store) -> None:
        assert await store.swap("10.5555/c", None, row("10.5555/c", "[]"))

        async def writer(n: int) -> None:
            while True:
                got = await store.get("10.5555/c")
                assert got is not None
                marks = [*json.loads(got.values_json), n]
                if await store.swap(
                    "10.5555/c", got.values_json, row("10.5555/c", json.dumps(marks))
                ):
                    return

        await asyncio.gather(*(writer(n) for n in range(16)))
        final = await store.get("10.5555/c")
        assert final is not None
        assert sorted(json.loads(final.values_json)) == list(range(16))

    run(store_url, body)


def test_unicode_names_and_ascii_only_folding(store_url: str) -> None:
    async def body(store: Store) -> None:
        await store.put_many([row("10.5555/É"), row("10.5555/é"), row("10.5555/\u212a")])
        assert (await store.get(DOI("10.5555/É").key)) is not None
        assert (await store.get(DOI("10.5555/é").key)) is not None
        assert (await store.get("10.5555/k")) is None  # KELVIN SIGN is not k
        total, names = await store.list_names("10.5555", 0, 10)
        assert total == 3
        assert sorted(names) == sorted(["10.5555/É", "10.5555/é", "10.5555/\u212a"])

    run(store_url, body)


def test_list_pages_in_key_order(store_url: str) -> None:
    async def body(store: Store) -> None:
        await store.put_many([row(f"10.5555/{i:03}") for i in range(25)] + [row("10.6666/a")])
        total, first = await store.list_names("10.5555", 0, 10)
        _, last = await store.list_names("10.5555", 20, 10)
        assert total == 25
        assert first == [f"10.5555/{i:03}" for i in range(10)]
        assert last == [f"10.5555/{i:03}" for i in range(20, 25)]
        assert await store.has_prefix("10.6666")
        assert not await store.has_prefix("10.7777")

    run(store_url, body)


def test_put_many_replaces_and_is_one_transaction(store_url: str) -> None:
    async def body(store: Store) -> None:
        await store.put_many([row("10.5555/a", "[1]")])
        await store.put_many([row("10.5555/a", "[2]"), row("10.5555/b", "[3]")])
        a = await store.get("10.5555/a")
        assert a is not None
        assert a.values_json == "[2]"

    run(store_url, body)


def test_put_batches_is_one_transaction_in_order(store_url: str) -> None:
    """Batches are written while the next is made, in one transaction: a later batch's row
    replaces an earlier one's (and its index entries), and if the batches fail after some
    were written, none of them is committed."""

    async def body(store: Store) -> None:
        async def good() -> AsyncIterator[list[Row]]:
            yield [row("10.5555/a", _urls("https://a/1")), row("10.5555/b", _urls("https://b/1"))]
            await asyncio.sleep(0)
            yield []
            yield [row("10.5555/a", _urls("https://a/2"))]

        await store.put_batches(good())
        a = await store.get("10.5555/a")
        assert a is not None
        assert a.values_json == _urls("https://a/2")
        assert [
            f.key for f in await store.find("url", "https://a/", "https://a0", ("", ""), 10)
        ] == ["10.5555/a"]
        assert [
            f.text for f in await store.find("url", "https://a/", "https://a0", ("", ""), 10)
        ] == ["https://a/2"]

        async def failing() -> AsyncIterator[list[Row]]:
            yield [row("10.5555/c", "[1]")]
            await asyncio.sleep(0.05)  # the writer has written the first batch by now
            raise RuntimeError("the second batch cannot be made")

        with pytest.raises(RuntimeError, match="second batch"):
            await store.put_batches(failing())
        assert await store.get("10.5555/c") is None
        b = await store.get("10.5555/b")
        assert b is not None  # the store still works after the rollback
        await store.put_many([row("10.5555/d", "[1]")])
        assert await store.get("10.5555/d") is not None

    run(store_url, body)


def test_tokens(store_url: str) -> None:
    async def body(store: Store) -> None:
        assert await store.token_prefixes("d1") is None
        await store.add_token("d1", ("10.5555", "10.6666"))
        assert await store.token_prefixes("d1") == ("10.5555", "10.6666")

    run(store_url, body)


def test_concurrent_writers(store_url: str) -> None:
    async def body(store: Store) -> None:
        async def writer(n: int) -> None:
            for i in range(10):
                name = f"10.5555/w{n}-{i}"
                assert await store.swap(DOI(name).key, None, row(name))

        await asyncio.gather(*(writer(n) for n in range(32)))
        total, _ = await store.list_names("10.5555", 0, 0)
        assert total == 320

    run(store_url, body)


def test_data_survives_reopening(store_url: str) -> None:
    async def write(store: Store) -> None:
        assert await store.swap("10.5555/kept", None, row("10.5555/kept", "[7]"))

    async def read(store: Store) -> None:
        kept = await store.get("10.5555/kept")
        assert kept is not None
        assert kept.values_json == "[7]"

    run(store_url, write)
    run(store_url, read)


@pytest.mark.parametrize("url", ["mysql://x", "sqlite:///", "/just/a/path"])
def test_unknown_store_urls_are_refused(url: str) -> None:
    with pytest.raises(StoreError):
        open_store(url)


def test_unreachable_postgres_is_a_store_error() -> None:
    async def main() -> None:
        store = open_store("postgresql://nobody@127.0.0.1:1/none")
        await store.open()

    with pytest.raises(StoreError, match="cannot connect"):
        asyncio.run(main())


def _urls(*urls: str) -> str:
    return json.dumps(
        [
            {"index": i, "type": "URL", "data": {"format": "string", "value": u}}
            for i, u in enumerate(urls, 1)
        ]
    )


def test_the_value_index_follows_every_write(store_url: str) -> None:
    async def found(store: Store, text: str) -> list[str]:
        entries = await store.find("url", text, text + "\x01", ("", ""), 100)
        return sorted(e.name for e in entries)

    async def body(store: Store) -> None:
        await store.put_many([row("10.5555/a", _urls("https://a/1")), row("10.5555/b", "[]")])
        assert await found(store, "https://a/1") == ["10.5555/a"]
        # Replaced in a batch, twice in one batch: indexed as the last row says.
        await store.put_many(
            [
                row("10.5555/a", _urls("https://a/2")),
                row("10.5555/b", _urls("https://a/1")),
                row("10.5555/b", _urls("https://a/3", "https://a/1")),
            ]
        )
        assert await found(store, "https://a/1") == ["10.5555/b"]
        assert await found(store, "https://a/2") == ["10.5555/a"]
        assert await found(store, "https://a/3") == ["10.5555/b"]
        old = await store.get("10.5555/b")
        assert old is not None
        assert await store.swap(
            "10.5555/b", old.values_json, row("10.5555/b", _urls("https://a/4"))
        )
        assert await found(store, "https://a/1") == []
        assert await found(store, "https://a/4") == ["10.5555/b"]
        now = await store.get("10.5555/b")
        assert now is not None
        assert await store.swap("10.5555/b", now.values_json, None)
        assert await found(store, "https://a/4") == []
        private = json.dumps(
            [
                {
                    "index": 1,
                    "type": "URL",
                    "data": {"format": "string", "value": "https://p/"},
                    "permissions": "1100",
                }
            ]
        )
        await store.put_many([row("10.5555/p", private)])
        assert await found(store, "https://p/") == []

    run(store_url, body)


def _plain(url: str) -> str:
    """A record as a deposit's plain line writes it (the value index's shortcut)."""
    return (
        '[{"index":1,"type":"URL","data":{"format":"string","value":"'
        + url
        + '"},"ttl":86400,"timestamp":"2026-11-23T00:00:00Z"}]'
    )


_KEYS = st.sampled_from(["10.5555/a", "10.5555/b", "10.5555/c"])
_TEXTS = st.sampled_from(["https://a/1", "https://a/2", "https://a/3"])
_RECORDS = st.one_of(
    _TEXTS.map(_plain),
    st.lists(_TEXTS, max_size=3).map(lambda urls: _urls(*urls)),
)


@given(
    old=st.dictionaries(_KEYS, _RECORDS),
    writes=st.lists(st.tuples(_KEYS, _RECORDS), max_size=6),
)
def test_a_batch_s_index_changes_bring_the_index_to_its_last_rows(
    old: dict[str, str], writes: list[tuple[str, str]]
) -> None:
    """For any records before and any batch (names repeated, plain deposit records mixed
    with others), the entries taken away and added turn the index of the records before
    into the index of the records after: the batch shortcut agrees with the general rule."""

    def index(records: dict[str, str]) -> set[tuple[str, str, str]]:
        return {(t, x, k) for k, v in records.items() for t, x in index_entries(v)}

    gone, added = index_changes([Row(k, k, "10.5555", v) for k, v in writes], old)
    after = dict(old)
    after.update(writes)
    assert not gone & added  # (gone may name entries the batch itself added and dropped)
    assert (index(old) - gone) | added == index(after)


_UPDATE_ALL = (
    "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None);"
    " c.execute(\"UPDATE handles SET vals = '[-1]'\")"
)


def _sqlite_write(path: Path, name: str, values: str) -> None:
    """Write one record as another connection (another worker process would) does."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute(
            "INSERT OR REPLACE INTO handles VALUES (?, ?, ?, ?)",
            tuple(row(name, values)),
        )


def test_the_sqlite_reader_sees_each_commit_of_another_connection_at_once(
    tmp_path: Path,
) -> None:
    # The reader keeps its read transaction open between reads (a snapshot); every read must
    # still see what any other connection committed before it.
    path = tmp_path / "s.sqlite3"

    async def body(store: Store) -> None:
        assert await store.get("10.5555/a") is None
        for n in range(200):
            _sqlite_write(path, "10.5555/a", f"[{n}]")
            got = await store.get("10.5555/a")
            assert got is not None
            assert got.values_json == f"[{n}]"
            assert await store.has_prefix("10.5555")
        # And from another process.
        await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", _UPDATE_ALL, str(path)],
            check=True,
        )
        got = await store.get("10.5555/a")
        assert got is not None
        assert got.values_json == "[-1]"

    run(f"sqlite:///{path}", body)


def test_the_sqlite_reader_lets_checkpoints_through_once_idle(tmp_path: Path) -> None:
    # A kept read transaction holds back checkpoints; it ends SNAPSHOT_SECONDS after it began.
    path = tmp_path / "s.sqlite3"

    def truncate() -> int:
        with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
            busy: int = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            return busy

    async def body(store: Store) -> None:
        _sqlite_write(path, "10.5555/a", "[1]")
        assert await store.get("10.5555/a") is not None
        await asyncio.sleep(QUIET_SECONDS)
        assert await store.get("10.5555/a") is not None  # nothing written since: kept open
        _sqlite_write(path, "10.5555/b", "[2]")
        assert truncate() == 1  # the reader's snapshot is still open: the WAL must stay
        await asyncio.sleep(SNAPSHOT_SECONDS + 0.2)
        assert truncate() == 0
        got = await store.get("10.5555/b")
        assert got is not None
        assert got.values_json == "[2]"

    run(f"sqlite:///{path}", body)


@given(st.lists(handle_values, max_size=4))
def test_a_record_served_as_stored_has_only_public_values(values: list[HandleValue]) -> None:
    # The hot reads serve a record's JSON as stored when all_public says so: it must never
    # say so of a record with a value the public may not read. (It may be cautious.)
    text = values_to_json(tuple(values))
    if all_public(text):
        assert all(value.public_read for value in values)
    if all(value.permissions == DEFAULT_PERMISSIONS for value in values):
        assert all_public(text)  # and it is not cautious for what it was made for


def test_the_sqlite_wal_starts_over_while_reads_and_writes_alternate(tmp_path: Path) -> None:
    # Reads between writes keep no transaction open, so checkpoints finish and the WAL file
    # starts over instead of growing with every write.
    path = tmp_path / "s.sqlite3"
    wal = tmp_path / "s.sqlite3-wal"

    async def body(store: Store) -> None:
        with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
            conn.execute("PRAGMA wal_autocheckpoint=100")
            for n in range(3000):
                conn.execute(
                    "INSERT OR REPLACE INTO handles VALUES (?, ?, ?, ?)",
                    tuple(row(f"10.5555/w{n % 50}", f"[{n}]")),
                )
                for _ in range(3):  # several reads between two writes, as many clients make
                    got = await store.get(f"10.5555/w{n % 50}")
                    assert got is not None
                    assert got.values_json == f"[{n}]"
        # 3000 commits of a page or two each; the WAL started over at every checkpoint.
        assert wal.stat().st_size < 400 * 4096

    run(f"sqlite:///{path}", body)


_TRY_LOCK = (
    "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR)\n"
    "try:\n"
    "    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 128)\n"
    "except OSError:\n"
    "    print('held')\n"
    "else:\n"
    "    print('free')\n"
)


def test_the_sqlite_store_keeps_sqlite_s_lock_on_its_shm_file(tmp_path: Path) -> None:
    # SQLite marks a database in use with a shared lock on byte 128 of its -shm file. Closing
    # any descriptor of that file drops the process's locks; if the store's own -shm mapping
    # did, another process would take the database for unused and rebuild the -shm file
    # under the server (a SIGBUS when the server reads it).
    path = tmp_path / "s.sqlite3"

    async def body(store: Store) -> None:
        _sqlite_write(path, "10.5555/a", "[1]")
        for _ in range(3):
            assert await store.get("10.5555/a") is not None
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", _TRY_LOCK, f"{path}-shm"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert done.stdout.strip() == "held"

    run(f"sqlite:///{path}", body)


def test_the_sqlite_reader_watches_the_file_sqlite_uses_behind_a_symlink(tmp_path: Path) -> None:
    # A store named by a symbolic link: SQLite uses the real file's -shm; a stale one beside
    # the link must not be what the reader watches.
    (tmp_path / "real").mkdir()
    (tmp_path / "links").mkdir()
    real = tmp_path / "real" / "s.sqlite3"
    link = tmp_path / "links" / "s.sqlite3"
    link.symlink_to(real)
    (tmp_path / "links" / "s.sqlite3-shm").write_bytes(bytes(32768))

    async def body(store: Store) -> None:
        _sqlite_write(real, "10.5555/a", "[1]")
        assert await store.get("10.5555/a") is not None
        await asyncio.sleep(QUIET_SECONDS)
        assert await store.get("10.5555/a") is not None
        _sqlite_write(real, "10.5555/b", "[2]")
        assert await store.get("10.5555/b") is not None

    run(f"sqlite:///{link}", body)
