"""The native resolver's vocabulary, without I/O: its timings and limits (CNRI's where it
has them), how a handle's prefix handle is named, and what :class:`~doikit.handle.Resolver`
and its drivers pass between them — an :class:`Exchange` to make, a :class:`Failure` when it
came to nothing, the :class:`Express` way of a resolution whose service is known."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, NamedTuple, TypeAlias

from doikit.handle._native_site import PROTOCOL_HTTP, PROTOCOL_TCP, PROTOCOL_UDP
from doikit.handle._wire_messages import ResolutionRequest, VerifyChallengeRequest

if TYPE_CHECKING:
    from collections.abc import Generator

    from doikit.handle._native_site import ServerInfo, SiteInfo
    from doikit.handle._values import HandleRecord
    from doikit.handle._wire_messages import GetSiteInfoRequest, Message

#: CNRI's UDP retry scheme (``HandleResolver.udpRetryScheme``): send, wait 0.5 s, send again,
#: wait 1 s, again, wait 1.5 s; then the next protocol (§14).
UDP_WAITS: Final = (0.5, 1.0, 1.5)
#: Seconds one TCP or HTTP exchange may take (within the total deadline).
STREAM_TIMEOUT: Final = 5.0
#: The protocols tried, in CNRI's order of preference (§16.3).
PROTOCOLS: Final = (PROTOCOL_UDP, PROTOCOL_TCP, PROTOCOL_HTTP)
#: How deep ``HS_SERV`` chains are followed (``BootstrapHandles.MAX_DEPTH``).
MAX_SERVICE_DEPTH: Final = 20
#: How many referrals one request follows (CNRI's RecursionCount limit is 40).
MAX_REFERRALS: Final = 40
#: The types asked of a prefix handle (``SITE_INFO_AND_SERVICE_HANDLE_AND_NAMESPACE_TYPES``).
SERVICE_TYPES: Final = ("HS_SITE", "HS_SITE.6", "HS_SERV", "HS_NAMESPACE")
#: Seconds a "not found" (rc 100) is remembered. CNRI's client remembers none; a short time
#: spares a server the same question from a batch, and a new name is seen within it.
NEGATIVE_TTL: Final = 30.0
#: Seconds a server that did not answer is tried after the others.
DOWN_FOR: Final = 60.0
#: Seconds a request stays good, as CNRI's client writes it in the header (now + 12 h).
EXPIRATION: Final = 43200
#: The most answers and service records the cache keeps (the oldest go first).
MAX_ANSWERS: Final = 20_000
MAX_SERVICES: Final = 10_000
#: The root handle: its HS_SITE and HS_SERV values are the root sites.
ROOT_HANDLE: Final = "0.NA/0.NA"
#: How long root information is used before the root is asked for it again: CNRI's client
#: refreshes its bootstrap handles when they are 23 hours old.
ROOT_REFRESH: Final = 23 * 3600.0
#: After a refresh that found nothing (or a root that said its information is out of date
#: just after one), the wait before the next.
ROOT_RETRY: Final = 300.0
_PROTOCOL_NAMES: Final = {PROTOCOL_UDP: "udp", PROTOCOL_TCP: "tcp", PROTOCOL_HTTP: "http"}


def ascii_upper(text: str) -> str:
    """*text* with ``a``-``z`` upper-cased and nothing else (CNRI's ``Util.upperCase``).

    >>> ascii_upper("10.abc/ß")
    '10.ABC/ß'
    """
    if text.isascii():  # str.upper maps only a-z in ASCII
        return text.upper()
    return text.encode("utf-8", "surrogatepass").upper().decode("utf-8", "surrogatepass")


def prefix_handle(handle: str) -> str | None:
    """The prefix handle whose service answers for *handle* (§16.2), ``None`` when the root
    does: handles of the ``0.`` namespaces and handles without ``/``.

    >>> prefix_handle("10.1000/abc"), prefix_handle("0.NA/10.1000"), prefix_handle("10.1000")
    ('0.NA/10.1000', None, None)
    """
    prefix, slash, _ = handle.partition("/")
    if not slash or prefix.startswith("0.") or prefix == "0":
        return None
    return "0.NA/" + ascii_upper(prefix)


@dataclass(frozen=True, slots=True)
class Target:
    """Where one exchange goes: a server of a site, over one protocol, at host and port."""

    protocol: int
    host: str
    port: int
    server: ServerInfo
    site: SiteInfo

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{_PROTOCOL_NAMES.get(self.protocol, self.protocol)}://{host}:{self.port}"


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request to send to :attr:`target`: over UDP, sent again after each of
    :attr:`waits` but the last (CNRI's retry scheme); over TCP and HTTP, one wait. The driver
    sets the request id, and answers with the decoded reply or a :class:`Failure`."""

    request: ResolutionRequest | GetSiteInfoRequest | VerifyChallengeRequest
    target: Target
    waits: tuple[float, ...]

    @property
    def key(self) -> tuple[object, ...]:
        """What makes two exchanges the same question (a driver may ask it once)."""
        r = self.request
        handle = r.identity_handle if isinstance(r, VerifyChallengeRequest) else r.handle
        types = r.types if isinstance(r, ResolutionRequest) else ()
        indexes = r.indexes if isinstance(r, ResolutionRequest) else ()
        return (self.target.protocol, self.target.host, self.target.port, r.op_code, handle,
                types, indexes, r.op_flags)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Failure:
    """An exchange that gave no answer: *reason* says how (silent, refused, …)."""

    reason: str


class Express(NamedTuple):
    """The one UDP exchange a resolution starts with, when it needs no generator to find it
    (:meth:`Resolver.express`): the request is ``ResolutionRequest(handle, indexes, types,
    op_flags=op_flags, expiration=expiration, version=version)``; :attr:`key` is the
    answer's key in the cache (the upper-cased handle first)."""

    key: tuple[str, tuple[str, ...], tuple[int, ...]]
    target: Target
    version: tuple[int, int]
    op_flags: int
    expiration: int


#: What a driver sends back into :meth:`Resolver.resolution`.
Reply: TypeAlias = "Message | Failure"
#: The generator of one resolution.
Resolution: TypeAlias = "Generator[Exchange, Reply, HandleRecord]"


__all__ = [
    "DOWN_FOR",
    "EXPIRATION",
    "MAX_ANSWERS",
    "MAX_REFERRALS",
    "MAX_SERVICES",
    "MAX_SERVICE_DEPTH",
    "NEGATIVE_TTL",
    "PROTOCOLS",
    "ROOT_HANDLE",
    "ROOT_REFRESH",
    "ROOT_RETRY",
    "SERVICE_TYPES",
    "STREAM_TIMEOUT",
    "UDP_WAITS",
    "Exchange",
    "Express",
    "Failure",
    "Reply",
    "Resolution",
    "Target",
    "ascii_upper",
    "prefix_handle",
]
