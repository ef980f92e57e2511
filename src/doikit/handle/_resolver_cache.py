"""The native resolver's caches: answers and service sites until their TTLs end, each
bounded (:class:`~doikit.handle.Resolver` decides what is kept, and for how long)."""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from doikit.handle._native_site import SiteInfo
    from doikit.handle._values import HandleRecord


class Cache:
    """Answers and service sites until their TTLs end (and "not found" for the resolver's
    negative TTL); at most *answers* and *services* entries, the oldest dropped first. An
    answer is a record, the bytes of the message it is read from again on a hit, or the
    "not found" message."""

    def __init__(self, clock: Callable[[], float], answers: int, services: int) -> None:
        self.clock = clock
        self.answers: collections.OrderedDict[object, tuple[float, HandleRecord | bytes | str]] = (
            collections.OrderedDict()
        )
        self.services: collections.OrderedDict[str, tuple[float, tuple[SiteInfo, ...]]] = (
            collections.OrderedDict()
        )
        self.max_answers = answers
        self.max_services = services

    def answer(self, key: object) -> HandleRecord | bytes | str | None:
        hit = self.answers.get(key)
        if hit is None:
            return None
        if hit[0] <= self.clock():
            del self.answers[key]
            return None
        return hit[1]

    def keep_answer(self, key: object, ttl: float, answer: HandleRecord | bytes | str) -> None:
        if ttl <= 0 or self.max_answers <= 0:
            return
        answers = self.answers
        if key in answers:
            answers.move_to_end(key)
        answers[key] = (self.clock() + ttl, answer)
        while len(answers) > self.max_answers:
            answers.popitem(last=False)

    def sites(self, handle: str) -> tuple[SiteInfo, ...] | None:
        hit = self.services.get(handle)
        if hit is None:
            return None
        if hit[0] <= self.clock():
            del self.services[handle]
            return None
        return hit[1]

    def keep_sites(self, handle: str, ttl: float, sites: tuple[SiteInfo, ...]) -> None:
        if ttl <= 0 or self.max_services <= 0:
            return
        self.services[handle] = (self.clock() + ttl, sites)
        self.services.move_to_end(handle)
        while len(self.services) > self.max_services:
            self.services.popitem(last=False)
