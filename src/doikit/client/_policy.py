"""Politeness without I/O: when to retry, how long to wait, and how fast to ask one host.

A bulk client that is not paced gets blocked (doi.org answered bare programmatic clients with
403 and 429 from 2024; handle-api.md §2.7). The rules here are shared by both clients:

* a request is retried after a transport failure (refused, reset, timed out) or an answer
  that says "later": 429, 502, 503, 504; nothing else is retried;
* the wait before retry *n* (from 0) is drawn uniformly from ``[0, backoff * 2**n]`` ("full
  jitter"), capped at ``max_backoff``, and never shorter than the answer's ``Retry-After``;
* a ``Retry-After`` pauses the whole host, not just the request that read it;
* each host gets at most ``rate_limit`` requests per second, spaced evenly;
* after :data:`CIRCUIT_THRESHOLD` transport failures in a row, the host is taken as down: for
  ``max_backoff`` seconds requests fail at once instead of each waiting out its retries, so a
  batch against a dead server ends in seconds, every item with its error.
"""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass
from typing import Final

from doikit._errors import TransportError

#: Statuses that mean "try again later".
RETRY_STATUSES: Final = frozenset({429, 502, 503, 504})

#: Transport failures in a row after which a host is taken as down for a while.
CIRCUIT_THRESHOLD: Final = 8


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry.

    :param retries: further attempts after the first (0: never retry).
    :param backoff: the base of the exponential backoff, in seconds.
    :param max_backoff: the longest wait between attempts, and the longest ``Retry-After``
        honoured: an answer asking for more is given up on at once.
    """

    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 30.0

    def __post_init__(self) -> None:
        if self.retries < 0 or self.backoff < 0 or self.max_backoff < 0:
            msg = "retries, backoff and max_backoff must not be negative"
            raise ValueError(msg)

    def delay(self, attempt: int, retry_after: float | None = None) -> float | None:
        """Seconds to wait before retry *attempt* (0 for the first retry), or None to give up.

        >>> RetryPolicy(retries=1, backoff=0).delay(0)
        0.0
        >>> RetryPolicy(retries=1).delay(1) is None
        True
        >>> RetryPolicy(max_backoff=10).delay(0, retry_after=60) is None
        True
        """
        if attempt >= self.retries:
            return None
        if retry_after is not None and retry_after > self.max_backoff:
            return None
        ceiling = min(self.max_backoff, self.backoff * 2**attempt)
        wait = random.uniform(0, ceiling)  # noqa: S311 - jitter, not a secret
        return max(wait, retry_after or 0.0)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delta-seconds or an HTTP-date), or None.

    >>> parse_retry_after("7")
    7.0
    >>> parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0)
    10.0
    >>> parse_retry_after("soon") is None
    True
    """
    if not value:
        return None
    value = value.strip()
    if value.isdigit() and value.isascii():  # isdigit() alone admits '¹' and '٣'
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass(slots=True)
class HostGate:
    """One host's pacing: the rate limit, a pause asked for by ``Retry-After``, and the
    circuit that opens when the host stops answering. Times are ``time.monotonic()``."""

    rate_limit: float | None = None
    max_backoff: float = 30.0
    next_slot: float = 0.0
    paused_until: float = 0.0
    failures: int = 0
    open_until: float = 0.0

    def wait(self, now: float) -> float:
        """Reserve the next slot: the seconds to wait before sending (0 to send now)."""
        start = max(now, self.paused_until)
        if self.rate_limit:
            start = max(start, self.next_slot)
            self.next_slot = start + 1.0 / self.rate_limit
        return start - now

    def is_open(self, now: float) -> bool:
        """Whether the host is taken as down: requests fail without being sent."""
        return now < self.open_until

    def pause(self, now: float, seconds: float) -> None:
        """Hold every request to this host for *seconds* (a ``Retry-After``)."""
        self.paused_until = max(self.paused_until, now + seconds)

    def succeeded(self) -> None:
        """The host answered (any status): it is up."""
        self.failures = 0

    def failed(self, now: float) -> None:
        """A transport failure; enough in a row open the circuit for ``max_backoff``."""
        self.failures += 1
        if self.failures >= CIRCUIT_THRESHOLD:
            self.open_until = now + self.max_backoff


class Attempts:
    """The retry loop of one request, without I/O.

    Both clients drive it the same way::

    attempts = Attempts(policy, gate, label)
    while True:
        sleep(attempts.before(monotonic()))
        try:
            reply = send()
        except TransportFailure as exc:
            sleep(attempts.failed(monotonic(), str(exc)))
            continue
        delay = attempts.answered(monotonic(), reply.status, reply.retry_after)
        if delay is None:
            return reply
        sleep(delay)
    """

    __slots__ = ("attempt", "doing", "gate", "host", "label", "policy")

    def __init__(
        self, policy: RetryPolicy, gate: HostGate, label: str, host: str, doing: str = "resolving"
    ) -> None:
        self.policy = policy
        self.gate = gate
        self.label = label
        self.host = host
        self.doing = doing  # what the request is for, as its errors say it
        self.attempt = 0

    def before(self, now: float) -> float:
        """Seconds to wait before sending.

        :raises TransportError: when the host is taken as down (the circuit is open).
        """
        if self.gate.is_open(now):
            raise TransportError(
                self.label,
                f"{self.doing} {self.label}: {self.host} did not answer the last "
                f"{self.gate.failures} requests; not sent",
            )
        return self.gate.wait(now)

    def failed(self, now: float, reason: str, *, at: str | None = None) -> float:
        """Seconds to wait before retrying after a transport failure.

        *at* is the host a redirect sent the request to, when the failure was there: the
        host asked first did answer (with the redirect), so it is not counted as failing,
        and the error names the host that failed.

        :raises TransportError: when no retry is left.
        """
        if at is None:
            self.gate.failed(now)
        else:
            self.gate.succeeded()
        delay = self.policy.delay(self.attempt)
        if delay is None:
            tries = self.attempt + 1
            raise TransportError(
                self.label,
                f"{self.doing} {self.label}: {self.where(reason, at)}"
                f" ({tries} attempt{'s' * (tries > 1)})",
            )
        self.attempt += 1
        return delay

    def where(self, reason: str, at: str | None) -> str:
        """*reason*, naming the host that failed when a redirect took the request there.

        >>> attempts = Attempts(RetryPolicy(), HostGate(), "10.1000/1", "doi.org")
        >>> attempts.where("refused", "ra.example")
        'the request to ra.example, where doi.org redirected it, failed: refused'
        """
        if at is None:
            return reason
        return f"the request to {at}, where {self.host} redirected it, failed: {reason}"

    def answered(self, now: float, status: int, retry_after: str | None) -> float | None:
        """Seconds to wait before retrying an answer that says "later", or None to keep it."""
        self.gate.succeeded()
        if status not in RETRY_STATUSES:
            return None
        seconds = parse_retry_after(retry_after)
        if seconds is not None:
            self.gate.pause(now, min(seconds, self.policy.max_backoff))
        delay = self.policy.delay(self.attempt, seconds)
        if delay is not None:
            self.attempt += 1
        return delay
