"""The hardening review's third round of attacks on `doikit serve`, as tests (issue 27).

Each test reproduces an attack that worked before its fix.
"""

from __future__ import annotations

import asyncio
import time

from doikit.server._auth import Throttle, failure_delay, hash_secret


def test_the_delay_has_a_ceiling_for_any_count_of_failures() -> None:
    # 0.25 * 2**n overflowed a float after about 1,030 failures: every later guess got a 500
    # at once instead of a delay.
    delays = [failure_delay(n) for n in range(5000)]
    assert delays == sorted(delays)
    assert delays[:5] == [0.0] * 5
    assert max(delays) == 8.0
    assert failure_delay(10**9) == 8.0


def test_the_throttle_holds_past_1100_failures() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def attack() -> list[bool]:
        throttle = Throttle(sleep=sleep)
        throttle._failures["10.5555/admin"] = (1100, time.monotonic())  # noqa: SLF001 - seeded
        keys = [b"the-key-in-clear"]
        return [await throttle.check("10.5555/admin", keys, b"guess", "192.0.2.1") for _ in range(3)]

    assert asyncio.run(attack()) == [False, False, False]
    assert slept == [8.0, 8.0, 8.0]  # the delay is served before each check, never skipped


def test_concurrent_guesses_do_not_hold_up_another_identity() -> None:
    # Each guess ran a scrypt on an unbounded thread pool before any delay: a few hundred at
    # once made every fresh login wait. Now one handle has two checks at a time at most.
    key = hash_secret("right").encode()

    async def attack() -> tuple[list[bool], float]:
        throttle = Throttle()
        guesses = [
            throttle.check("10.5555/admin", [key], f"guess{i}".encode(), f"198.51.100.{i % 250}")
            for i in range(300)
        ]
        started = time.monotonic()
        login = asyncio.ensure_future(throttle.check("10.5555/other", [key], b"right", "192.0.2.9"))
        answers = await asyncio.gather(*guesses)
        assert await login
        return answers, time.monotonic() - started

    answers, seconds = asyncio.run(attack())
    assert not any(answers)
    assert seconds < 3  # two guesses and the login: three scrypts, not three hundred


def test_the_answer_time_does_not_tell_which_names_hold_a_key() -> None:
    key = hash_secret("right").encode()

    async def timed(keys: list[bytes], name: str) -> float:
        throttle = Throttle()
        started = time.monotonic()
        assert not await throttle.check(name, keys, b"wrong", "192.0.2.1")
        return time.monotonic() - started

    holds = min(asyncio.run(timed([key], "10.5555/admin")) for _ in range(3))
    empty = min(asyncio.run(timed([], "10.5555/nobody")) for _ in range(3))
    assert 0.5 < empty / holds < 2  # both cost one scrypt (before: about 0 against 0.1 s)


def test_concurrent_checks_of_one_right_key_all_get_in() -> None:
    key = hash_secret("right").encode()

    async def burst() -> list[bool]:
        throttle = Throttle()
        return await asyncio.gather(
            *(throttle.check("10.5555/admin", [key], b"right", "127.0.0.1") for _ in range(50))
        )

    assert all(asyncio.run(burst()))
