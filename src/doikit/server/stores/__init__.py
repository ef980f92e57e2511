"""Where ``doikit serve`` keeps records and tokens: one :class:`Store` protocol, two stores.

* ``sqlite:///PATH`` (the default, a file in the user's data directory): WAL journal,
  ``synchronous=FULL`` so a write is acknowledged only once it is on disk; reads run on the
  event loop (a primary-key lookup takes microseconds), writes on one writer thread.
* ``postgresql://…``: asyncpg with a connection pool; a commit is durable under
  PostgreSQL's default ``synchronous_commit``.

Records are stored by their comparison key (``DOI.key``, ASCII case folded) with the name as
registered and the ``values`` array as the REST API's JSON text, so a read answers without
decoding and re-encoding it. Tokens are stored as SHA-256 digests only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple, Protocol

from doikit.handle import HandleFormatError, HandleValue, one_url, values_from_json

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


class StoredRecord(NamedTuple):
    """A record as stored: the name as registered and the values as JSON text."""

    name: str
    values_json: str

    def values(self) -> tuple[HandleValue, ...]:
        """The record's values.

        :raises DamagedRecordError: when this build cannot read them.
        """
        return stored_values(self.name, self.values_json)


def stored_values(name: str, values_json: str) -> tuple[HandleValue, ...]:
    """The values of the record *name* as stored (every read of a stored record comes here).

    :raises DamagedRecordError: when this build cannot read them: an older build stored values
        that today's checks refuse (an integer out of range, say).
    """
    try:
        return values_from_json(json.loads(values_json))
    except (HandleFormatError, ValueError, RecursionError) as exc:
        raise DamagedRecordError(name, str(exc)) from None


class Row(NamedTuple):
    """A record to write: comparison key, name, prefix and the values as JSON text."""

    key: str
    name: str
    prefix: str
    values_json: str


class StoreError(Exception):
    """A store could not be opened or used (bad URL, unreachable server)."""


class DamagedRecordError(StoreError):
    """A stored record this build cannot read; the server answers 500 naming it, and a
    ``PUT`` of the whole record (as its prefix's administrator) replaces it."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"the stored record {name} cannot be read: {problem}")
        self.name = name


class StoreUnavailable(StoreError):  # noqa: N818 - a state, as asyncio's TimeoutError
    """The store cannot answer now (server down, connection lost, locked, too slow); the
    request may succeed later. The server answers 503 with ``Retry-After``."""


#: The longest name a store keeps, in UTF-8 bytes. Both stores enforce it: PostgreSQL's
#: B-tree index takes at most about 2.7 KB per key, and a name is a key.
MAX_NAME_BYTES: Final = 2048


class Store(Protocol):
    """The operations the server needs. Every method is safe to call concurrently."""

    url: str

    async def open(self) -> None:
        """Connect and create the tables if they do not exist."""

    async def close(self) -> None:
        """Release connections; the store can be opened again."""

    async def get(self, key: str) -> StoredRecord | None:
        """The record whose comparison key is *key*."""

    async def swap(self, key: str, expected: str | None, row: Row | None) -> bool:
        """Compare and set, durably: make the record under *key* *row* (delete it when
        ``None``) only if its values JSON is still *expected* (``None``: only if there is
        no record). Whether it did. Every read-modify-write of one record goes through
        here, so two writers never lose each other's changes."""

    async def put_many(self, rows: list[Row]) -> None:
        """Create or replace many records in one durable transaction."""

    async def put_batches(self, batches: AsyncIterator[list[Row]]) -> None:
        """Create or replace the rows of every batch, in order, in one durable transaction
        that writes each batch while the next is being made (nothing is committed if
        *batches* raises)."""

    async def list_names(self, prefix: str, offset: int, limit: int) -> tuple[int, list[str]]:
        """How many records the prefix has, and a page of their names in key order."""

    async def has_prefix(self, prefix: str) -> bool:
        """Whether any record has this prefix."""

    async def find(
        self, type_: str, low: str, high: str, after: tuple[str, str], limit: int
    ) -> list[Found]:
        """Up to *limit* value index entries of *type_* (ASCII lower case) whose text is at
        least *low* and below *high*, after the entry ``(text, key)`` *after*, in that
        order, with their records. The index keeps the first :data:`INDEXED_CHARS` of each
        text: callers check the whole value in the record."""

    async def add_token(self, digest: str, prefixes: tuple[str, ...]) -> None:
        """Store a token's digest with the prefixes it may write."""

    async def token_prefixes(self, digest: str) -> tuple[str, ...] | None:
        """The prefixes a token digest may write, or ``None`` for an unknown token."""


#: How much of a value's text the value index keeps; a search verifies the whole value.
INDEXED_CHARS: Final = 256
# Types never indexed for reverse lookup: administrative values, whatever their permissions.
_UNINDEXED: Final = frozenset({b"hs_admin", b"hs_vlist", b"hs_seckey", b"hs_pubkey", b"hs_site"})


def _plain_url(values_json: str) -> str | None:
    """The one entry's text of a deposit's common record (one public URL value without
    escapes), read without decoding the JSON; ``None`` for any other record."""
    plain = one_url(values_json)
    return None if plain is None else plain[:INDEXED_CHARS]


def index_entries(values_json: str) -> set[tuple[str, str]]:
    """The value index's entries for a record: ``(type, text)`` of each publicly readable
    value whose data is a string, the type in ASCII lower case and the text cut to
    :data:`INDEXED_CHARS`. Both stores index exactly these, so reverse lookups agree.

    >>> sorted(index_entries('[{"index":1,"type":"URL","data":{"format":"string","value":"https://a/"}}]'))
    [('url', 'https://a/')]
    """
    plain = _plain_url(values_json)
    if plain is not None:
        return {("url", plain)}
    out: set[tuple[str, str]] = set()
    values = json.loads(values_json)
    for value in values if isinstance(values, list) else ():
        if not isinstance(value, dict):
            continue
        data = value.get("data")
        if not isinstance(data, dict) or data.get("format") != "string":
            continue
        permissions = value.get("permissions", "1110")
        kind = str(value.get("type", "")).encode("utf-8", "surrogatepass").lower()
        if permissions[2:3] != "1" or kind in _UNINDEXED:
            continue
        text = str(data.get("value", ""))[:INDEXED_CHARS]
        name = kind.decode("utf-8", "surrogatepass")
        if "\x00" not in text and "\x00" not in name:  # PostgreSQL text holds no NUL
            out.add((name, text))
    return out


Entries = set[tuple[str, str, str]]


def entry_changes(key: str, old: str | None, new: str | None) -> tuple[Entries, Entries]:
    """The value index entries ``(type, text, key)`` to delete and to add when the record
    under *key* goes from values *old* to *new* (``None``: no record)."""
    before = index_entries(old) if old is not None else set()
    after = index_entries(new) if new is not None else set()
    return {(k, t, key) for k, t in before - after}, {(k, t, key) for k, t in after - before}


def index_changes(rows: list[Row], old: dict[str, str]) -> tuple[Entries, Entries]:
    """:func:`entry_changes` for *rows* written in order over records whose values were
    *old* (key -> values JSON; absent: no record). A name given twice ends indexed as its
    last row says."""
    gone: Entries = set()
    new: Entries = set()
    current = dict(old)
    for row in rows:
        key = row.key
        before = current.get(key)
        current[key] = row.values_json
        if before is None:  # a new name (a deposit's common row): nothing to take away
            plain = _plain_url(row.values_json)
            if plain is not None:  # (no set per row: this loop runs for every deposited line)
                new.add(("url", plain, key))
            else:
                new.update([(kind, text, key) for kind, text in index_entries(row.values_json)])
            continue
        dropped, added = entry_changes(key, before, row.values_json)
        gone |= dropped
        new -= dropped  # in place: a new set per row made a 10,000-row batch quadratic
        new |= added
    return gone - new, new


class Found(NamedTuple):
    """A value index entry with its record, as :meth:`Store.find` yields them."""

    text: str
    key: str
    name: str
    values_json: str


def default_store_url() -> str:
    """``sqlite:///`` a file in the user's data directory (created if needed)."""
    from platformdirs import user_data_path  # noqa: PLC0415 - only the server needs it

    directory = user_data_path("doikit", appauthor=False)
    directory.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{directory / 'doikit.sqlite3'}"


def open_store(url: str | None = None) -> Store:
    """The store for *url* (``sqlite:///PATH`` or ``postgresql://…``), not yet opened.

    :raises StoreError: for any other URL.
    """
    url = url or default_store_url()
    if url.startswith("sqlite:///"):
        from doikit.server.stores._sqlite import SQLiteStore  # noqa: PLC0415

        path = url.removeprefix("sqlite:///")
        if not path:
            raise StoreError("sqlite:/// needs a file path, as in sqlite:///doikit.sqlite3")
        return SQLiteStore(Path(path), url=url)
    if url.startswith(("postgresql://", "postgres://")):
        from doikit.server.stores._postgres import PostgresStore  # noqa: PLC0415

        return PostgresStore(url)
    raise StoreError(f"unknown store {url!r}: use sqlite:///PATH or postgresql://USER@HOST/DB")
