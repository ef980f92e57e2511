"""The limits a server on the open internet needs, enforced where uvicorn does not.

uvicorn (with httptools) has a keep-alive timeout and a concurrency cap that answers 503,
but nothing bounds how long a request's head may take to arrive or how large it may grow,
and every connection holds a file descriptor until its client leaves. So ``doikit serve``
runs uvicorn with :class:`GuardedProtocol`, which adds, per connection:

* a **head deadline** (:attr:`Limits.head_timeout`): the request line and headers must
  arrive within it, counted from the connection or the end of the previous response;
* a **head size** (:attr:`Limits.head_bytes`): a longer head is answered 431 and closed;
* a **request deadline** (:attr:`Limits.request_timeout`): from the end of the head, the
  body must arrive and the app answer within it, else the connection is closed (a body
  left unread by an early answer gets :attr:`Limits.body_timeout`);
* a **body rate** (:attr:`Limits.body_rate`): after :attr:`Limits.body_grace` seconds, a
  body must have arrived at this many bytes a second on average since the head, else the
  connection is closed: a declared body trickled a byte at a time holds nothing for long;
* a **connection cap** (:attr:`Limits.connections`, per worker): at the cap, a new
  connection takes the place of the oldest one that has not sent a complete head, or else
  of the oldest one sending a body below the body rate, so half-open and trickling
  connections can delay nobody; if every connection is busy with a request, the new one is
  closed at once.

At start the process raises its soft file-descriptor limit to the hard one, and the cap
defaults to what that limit leaves room for. (Under another ASGI server, ``create_app``'s
``request_timeout`` bounds the app's time instead, answering 503.)

This module holds the limits (standard library only, for ``create_app``);
:mod:`._uvicorn` enforces them in the server.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
from dataclasses import asdict, dataclass
from typing import Final

_ENV: Final = "DOIKIT_LIMITS"
# File descriptors a worker keeps for itself: the listening socket, the store, logs.
_SPARE_FDS: Final = 64


@dataclass(frozen=True)
class Limits:
    """What one request and one connection may take; seconds and bytes."""

    head_timeout: float = 10.0
    head_bytes: int = 64 * 1024
    body_timeout: float = 120.0
    request_timeout: float = 120.0
    body_rate: int = 1024
    body_grace: float = 5.0
    connections: int = 0  # 0: as many as the file-descriptor limit leaves room for

    def resolved(self) -> Limits:
        """These limits with the connection cap decided (after raising the fd limit)."""
        if self.connections:
            return self
        soft = raise_fd_limit()
        return Limits(**{**asdict(self), "connections": max(16, min(soft - _SPARE_FDS, 10_000))})

    def to_env(self) -> None:
        """Hand the limits to worker processes (uvicorn starts them with this environment)."""
        os.environ[_ENV] = json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> Limits:
        """The limits ``doikit serve`` set, or the defaults."""
        text = os.environ.get(_ENV)
        return cls(**json.loads(text)) if text else cls()


def raise_fd_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit; the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
    if target > soft:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    return soft
