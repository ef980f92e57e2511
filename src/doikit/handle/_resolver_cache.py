"""The native resolver's caches: answers and service sites until their TTLs end, each
bounded (:class:`~doikit.handle.Resolver` decides what is kept, and for how long)."""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

    from doikit.handle._native_site import SiteInfo
    from doikit.handle._values import HandleRecord

K = TypeVar("K")
V = TypeVar("V")


class Timed(collections.OrderedDict[K, tuple[float, V]], Generic[K, V]):
    """Values until their TTLs end, each with the time it ends; at most *most* of them, the
    oldest kept dropped first."""

    def __init__(self, clock: Callable[[], float], most: int) -> None:
        super().__init__()
        self.clock = clock
        self.most = most

    def live(self, key: K) -> V | None:
        """The value of *key*, or ``None`` when there is none or its TTL has ended."""
        hit = self.get(key)
        if hit is None:
            return None
        if hit[0] <= self.clock():
            del self[key]
            return None
        return hit[1]

    def keep(self, key: K, ttl: float, value: V) -> None:
        """Keep *value* for *ttl* seconds (not at all for none), as the newest."""
        if ttl <= 0 or self.most <= 0:
            return
        if key in self:
            self.move_to_end(key)
        self[key] = (self.clock() + ttl, value)
        while len(self) > self.most:
            self.popitem(last=False)


class Cache:
    """Answers and service sites until their TTLs end (and "not found" for the resolver's
    negative TTL); at most *answers* and *services* entries, the oldest dropped first. An
    answer is a record, the bytes of the message it is read from again on a hit, or the
    "not found" message."""

    def __init__(self, clock: Callable[[], float], answers: int, services: int) -> None:
        self.answers: Timed[object, HandleRecord | bytes | str] = Timed(clock, answers)
        self.services: Timed[str, tuple[SiteInfo, ...]] = Timed(clock, services)

    def answer(self, key: object) -> HandleRecord | bytes | str | None:
        return self.answers.live(key)

    def keep_answer(self, key: object, ttl: float, answer: HandleRecord | bytes | str) -> None:
        self.answers.keep(key, ttl, answer)

    def sites(self, handle: str) -> tuple[SiteInfo, ...] | None:
        return self.services.live(handle)

    def keep_sites(self, handle: str, ttl: float, sites: tuple[SiteInfo, ...]) -> None:
        self.services.keep(handle, ttl, sites)
