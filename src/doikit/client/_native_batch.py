"""``resolve_many`` over the native protocol without a task per name: its loop (in
:meth:`doikit.client.AsyncClient.resolve_many`) reads the names lazily and starts each with
:meth:`AsyncNativeResolver.start`, whose express way answers from the loop's callbacks; only
what needs more (a prefix lookup, a retry over TCP) runs as a task. The items are those of
:class:`doikit.client._batch.Batch`: the same ``Resolved``, the client's cache read and
filled, in input order on request, at most *concurrency* names in progress and a bounded
window ahead of the oldest unyielded one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from doikit._errors import DOIError
from doikit.client._base import as_doi
from doikit.client._batch import Batch
from doikit.client._cache import cache_key
from doikit.client._client import Resolved
from doikit.client._native import Owner

if TYPE_CHECKING:
    from collections.abc import Sequence

    from doikit._doi import DOI
    from doikit.client._client import AsyncClient
    from doikit.handle import HandleRecord


class NativeBatch(Batch):
    """:class:`Batch` whose names are started with :meth:`AsyncNativeResolver.start`
    instead of a task each."""

    def __init__(
        self, client: AsyncClient, types: Sequence[str], indexes: Sequence[int], *, ordered: bool
    ) -> None:
        super().__init__(client, types, indexes, ordered=ordered)
        if client.native is None:
            msg = "the client has no native resolver"
            raise ValueError(msg)
        self.native = client.native
        self.types_t, self.indexes_t = tuple(types), tuple(indexes)
        self.owner = Owner()
        self._finished = self._done  # one bound method for every name

    def add(self, index: int, text: str | DOI) -> list[Resolved]:
        """Start resolving *text*, or return its item at once (invalid, or in the cache)."""
        try:
            name = as_doi(text)
        except DOIError as exc:
            return self._out(Resolved(index, str(text), None, exc))
        key = cache_key(name, self.types, self.indexes)
        hit = self.client._cached(key, auth=False)  # noqa: SLF001
        if hit is not None:
            return self._out(Resolved(index, str(text), hit, None))
        self.running += 1
        tag = (index, str(text), key)
        self.native.start(str(name), self.types_t, self.indexes_t, self._finished, self.owner, tag)
        return []

    def _done(self, tag: tuple[int, str, str], got: HandleRecord | Exception) -> None:
        self.running -= 1
        index, text, key = tag
        if isinstance(got, Exception):
            self.finished.append(Resolved(index, text, None, got))
        else:
            record = self.client._kept(key, got)  # noqa: SLF001
            self.finished.append(Resolved(index, text, record, None))
        self.wake.set()

    def full(self) -> bool:
        # Names on the full way (a task each: the first names of a prefix whose service is
        # not known yet, retries over TCP) count against the same cap.
        return len(self.owner.tasks) >= self.native.per_server or self.native.saturated()

    def cancel(self) -> None:
        self.owner.close()


__all__ = ["NativeBatch"]
