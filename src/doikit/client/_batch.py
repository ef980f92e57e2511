"""The state of one :meth:`AsyncClient.resolve_many <doikit.client.AsyncClient.resolve_many>`
over HTTP (:class:`Batch`: a task per name); :class:`~doikit.client._native_batch.NativeBatch`
builds on it for the native protocol. The method's loop, in :mod:`doikit.client._client`,
reads the names and yields the items.
"""

from __future__ import annotations

import asyncio
import collections
from typing import TYPE_CHECKING

from doikit._errors import DOIError
from doikit.client._base import as_doi
from doikit.client._cache import cache_key
from doikit.client._client import Resolved

if TYPE_CHECKING:
    from collections.abc import Sequence

    from doikit._doi import DOI
    from doikit.client._client import AsyncClient


class Batch:
    """The state of one ``resolve_many``: requests in flight, items done, order kept."""

    def __init__(
        self, client: AsyncClient, types: Sequence[str], indexes: Sequence[int], *, ordered: bool
    ) -> None:
        self.client = client
        self.types = types
        self.indexes = indexes
        self.ordered = ordered
        self.finished: collections.deque[Resolved] = collections.deque()
        self.wake = asyncio.Event()
        self.tasks: set[asyncio.Task[None]] = set()
        self.held: dict[int, Resolved] = {}
        self.next_out = 0
        self.running = 0  # requests started whose item is not in `finished` yet

    def add(self, index: int, text: str | DOI) -> list[Resolved]:
        """Start resolving *text*, or return its item at once (invalid, or in the cache)."""
        try:
            name = as_doi(text)
        except DOIError as exc:
            return self._out(Resolved(index, str(text), None, exc))
        hit = self.client._cached(cache_key(name, self.types, self.indexes), auth=False)  # noqa: SLF001
        if hit is not None:
            return self._out(Resolved(index, str(text), hit, None))
        self.running += 1
        task = asyncio.create_task(self._work(index, text, name))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return []

    async def _work(self, index: int, text: str | DOI, name: DOI) -> None:
        try:
            record = await self.client.resolve(name, types=self.types, indexes=self.indexes)
            item = Resolved(index, str(text), record, None)
        except Exception as exc:  # noqa: BLE001 - one failure must not stop the batch
            item = Resolved(index, str(text), None, exc)
        self.running -= 1
        self.finished.append(item)
        self.wake.set()

    async def next_done(self) -> list[Resolved]:
        """The items ready to yield, waiting for a request to finish if none is."""
        if not self.finished:
            self.wake.clear()
            await self.wake.wait()
        return self.take()

    def take(self) -> list[Resolved]:
        """The items ready to yield now (in order: those whose turn has come)."""
        finished = self.finished
        if not self.ordered:
            out = list(finished)
            finished.clear()
            return out
        out = []
        while finished:
            out += self._out(finished.popleft())
        return out

    def _out(self, item: Resolved) -> list[Resolved]:
        if not self.ordered:
            return [item]
        self.held[item.index] = item
        out = []
        while self.next_out in self.held:
            out.append(self.held.pop(self.next_out))
            self.next_out += 1
        return out

    def full(self) -> bool:
        """Whether the batch should start no more names until one ends (beyond
        *concurrency*, which the caller counts)."""
        return False

    def cancel(self) -> None:
        for task in self.tasks:
            task.cancel()
