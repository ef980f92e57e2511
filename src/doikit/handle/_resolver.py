"""The native resolver's core: how a handle is found from the root down, without I/O.

What the doi.org proxy does for every name (handle-protocol.md §16): find the service of the
handle's prefix by resolving ``0.NA/<PREFIX>`` at the root sites (types ``HS_SITE``,
``HS_SITE.6``, ``HS_SERV``, ``HS_NAMESPACE``, public only), follow ``HS_SERV`` to service
handles (at most :data:`MAX_SERVICE_DEPTH` deep), pick the server of a site by CNRI's hash,
ask it over UDP, then TCP, then HTTP, follow 302 referrals (to HS_SITE and HS_SERV) and 303
prefix referrals (to ``HS_SITE.PREFIX``, ``HS_NA_DELEGATE`` and ``HS_SERV.PREFIX``: a derived
prefix such as ``10.5555.1``, §16.4), and keep answers and sites for their TTLs.

:meth:`Resolver.resolution` is a generator: it yields each :class:`Exchange` to make (one
request, one server, one protocol) and is sent back what came of it — the decoded answer, or
a :class:`Failure` (silence, a refused connection). The drivers in :mod:`doikit.client._native`
move the bytes, sync or async, and keep the one total deadline; everything they could get
wrong twice is here::

    gen = resolver.resolution("10.5555/1")
    exchange = next(gen)                # StopIteration at once on a cached answer
    while True:
        exchange = gen.send(driver.exchange(exchange))   # ... until StopIteration(record)

Errors are those of the HTTP client: :class:`~doikit.DOINotFound` (rc 100, also for a prefix
the root does not know), :class:`~doikit.HandleServerError` (another code, a bad signature,
no service), :class:`~doikit.TransportError` (no server answered).
"""

from __future__ import annotations

import collections
import dataclasses
import math
import time
from typing import TYPE_CHECKING, Final, TypeAlias

from doikit._errors import DOINotFound, HandleServerError, TransportError
from doikit.handle._exchange import (
    DOWN_FOR,
    EXPIRATION,
    MAX_ANSWERS,
    MAX_REFERRALS,
    MAX_SERVICE_DEPTH,
    MAX_SERVICES,
    NEGATIVE_TTL,
    PROTOCOLS,
    ROOT_HANDLE,
    ROOT_REFRESH,
    ROOT_RETRY,
    SERVICE_TYPES,
    STREAM_TIMEOUT,
    UDP_WAITS,
    Exchange,
    Express,
    Failure,
    Reply,
    Resolution,
    Target,
    ascii_upper,
    prefix_handle,
)
from doikit.handle._fast_codec import read_answer
from doikit.handle._native_site import (
    PROTOCOL_UDP,
    ServerInfo,
    SiteInfo,
    site_from_bytes,
)
from doikit.handle._native_values import data_to_wire, service_handle
from doikit.handle._protocol import RC_HANDLE_NOT_FOUND, RC_VALUES_NOT_FOUND
from doikit.handle._resolver_cache import Cache
from doikit.handle._roots import SITE_TYPES, ordered, private_root, root_sites
from doikit.handle._signatures import signature_problem
from doikit.handle._values import HandleFormatError, HandleRecord, HandleValue
from doikit.handle._wire_codes import (
    RC_OUT_OF_DATE_SITE_INFO,
    RC_PREFIX_REFERRAL,
    RC_SERVICE_REFERRAL,
    OpFlag,
)
from doikit.handle._wire_messages import (
    ErrorResponse,
    GetSiteInfoRequest,
    ReferralResponse,
    ResolutionRequest,
    ResolutionResponse,
    SiteInfoResponse,
    VerifyChallengeRequest,
    VerifyChallengeResponse,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterable, Iterator

    from doikit.handle._wire_messages import Message

# What a 303 prefix referral points at (CNRI's DERIVED_PREFIX_SITE_AND_SERVICE_HANDLE_TYPES):
# the sites of a derived prefix's prefix handle, and service handles holding more of them.
_PREFIX_SITE_TYPES: Final = ("HS_SITE.PREFIX", "HS_NA_DELEGATE")
_PREFIX_REFERRAL_TYPES: Final = (*_PREFIX_SITE_TYPES, "HS_SERV.PREFIX")
# Codes after which another server of the service may do better: an internal error, too
# busy, a backup server, out-of-date site info, not responsible here (§8).
_TRY_ELSEWHERE: Final = frozenset({2, 3, 7, 300, 301})
_Answer: TypeAlias = "ResolutionResponse | ErrorResponse | VerifyChallengeResponse"


class _NoService(Exception):  # noqa: N818 - internal: a prefix the root does not know
    def __init__(self, handle: str, where: str) -> None:
        super().__init__(handle)
        self.handle = handle
        self.where = where


class Resolver:
    """The state of a native resolver: the root, the caches, the servers that went silent.

    :param root: ``"HOST:PORT"`` of a private root (asked for its site information first),
        or ``None`` for the root sites the Handle System publishes (:func:`root_sites`).
    :param certify: ask every server to sign its answers (CT) and verify each signature with
        the key its site lists; a missing or bad signature is an error.
    :param negative_ttl: seconds a "not found" is remembered.
    :param max_ttl: the most seconds an answer is kept, whatever its values' TTL (a handle
        server checking keys held elsewhere keeps them an hour, as CNRI's does).
    :param clock: the time source of the caches (seconds; monotonic).
    :param wall_clock: Unix time, for the expiration every request carries.
    :param root_info: the published root information to start from, in the form of
        :mod:`doikit.handle._root_info` (a value of the REST API's JSON a line); ``None``
        for the copy doikit ships.
    :param root_refresh: seconds the root sites are used before the root is asked for them
        again (CNRI's 23 hours; ``math.inf``: never).
    :raises ValueError: for *root_info* that is not root information or names no site, and a
        *root_refresh* that is not above 0.
    """

    def __init__(
        self,
        root: str | None = None,
        *,
        certify: bool = False,
        negative_ttl: float = NEGATIVE_TTL,
        max_ttl: float = math.inf,
        max_answers: int = MAX_ANSWERS,
        max_services: int = MAX_SERVICES,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        root_info: str | None = None,
        root_refresh: float = ROOT_REFRESH,
    ) -> None:
        if not root_refresh > 0:
            msg = f"root_refresh must be a number of seconds above 0, not {root_refresh!r}"
            raise ValueError(msg)
        if root_info is not None:
            root_sites(root_info)  # read now, so that what is not root information says so here
        self.root_address = root
        self.root_info = root_info
        self.root_refresh = root_refresh
        self.certify = certify
        self.negative_ttl = negative_ttl
        self.max_ttl = max_ttl
        self.clock = clock
        self.wall_clock = wall_clock
        self.cache = Cache(clock, max_answers, max_services)
        self._root_sites: tuple[SiteInfo, ...] | None = None
        self._root_due = math.inf  # when the root sites are asked for again
        self._root_asked = -math.inf  # when the root was last asked for them
        self._refreshing = False
        self._provisional = private_root(root) if root is not None else None
        self._down: collections.OrderedDict[tuple[str, int, int], float] = collections.OrderedDict()
        self._hosts: dict[object, str] = {}
        self._ways: dict[int, tuple[SiteInfo, Target | None, tuple[int, int]]] = {}
        self._flags = OpFlag.PUBLIC_ONLY | (OpFlag.CERTIFY if certify else 0)

    def _expiration(self) -> int:
        # CNRI's messages expire 12 hours after they are made (AbstractMessage; §4, §19).
        return int(self.wall_clock()) + EXPIRATION

    @property
    def root_in_use(self) -> tuple[SiteInfo, ...] | None:
        """The root sites in use (``None`` until a resolution first needs them)."""
        return self._root_sites

    @property
    def root_label(self) -> str:
        """The root as an error names it."""
        return f"root {self.root_address}" if self.root_address else "the Global Handle Registry"

    # --- the public generator --------------------------------------------------------------

    def resolution(
        self, handle: str, types: tuple[str, ...] = (), indexes: tuple[int, ...] = ()
    ) -> Resolution:
        """The resolution of *handle* (values of *types* or *indexes*; all when both are
        empty) as a generator of exchanges; its return value is the record.

        :raises doikit.DOINotFound: rc 100, or a prefix the root does not know.
        :raises doikit.HandleServerError: another error code, a bad signature, no service.
        :raises doikit.TransportError: no server answered.
        """
        key = (ascii_upper(handle), types, indexes)
        cached = self._answer(handle, key)
        if cached is not None:
            return cached
        try:
            sites = yield from self._service(handle, 0)
        except _NoService as exc:
            message = f"{handle} was not found: {exc.handle} is not registered at {exc.where}"
            if exc.handle == prefix_handle(handle):
                self.cache.keep_answer(key, self.negative_ttl, message)
            raise DOINotFound(handle, message) from None
        request = ResolutionRequest(
            handle, indexes, types, op_flags=self._flags, expiration=self._expiration()
        )
        reply, where = yield from self._query(sites, request, handle, 0)
        if isinstance(reply, ResolutionResponse):
            record = HandleRecord(reply.handle, reply.values)
            self.cache.keep_answer(key, min(_ttl(reply.values), self.max_ttl), record)
            return record
        if reply.response_code == RC_HANDLE_NOT_FOUND:
            message = f"{handle} was not found: {where} knows no such handle (rc 100)"
            self.cache.keep_answer(key, self.negative_ttl, message)
            raise DOINotFound(handle, message)
        if reply.response_code == RC_VALUES_NOT_FOUND:
            return HandleRecord(handle, ())
        raise _server_error(handle, reply, where)

    def _answer(self, handle: str, key: tuple[object, ...]) -> HandleRecord | None:
        cached = self.cache.answer(key)
        if isinstance(cached, HandleRecord):
            return cached
        if isinstance(cached, bytes):  # an express answer, kept as it came
            return read_answer(cached)
        if cached is not None:
            raise DOINotFound(handle, cached)
        return None

    def express(
        self, handle: str, types: tuple[str, ...] = (), indexes: tuple[int, ...] = ()
    ) -> HandleRecord | Express | None:
        """The start of :meth:`resolution` when it needs no generator: the record in the
        cache, or the UDP exchange it would make first when the sites of the handle's
        service are known (not when certifying); ``None`` otherwise. A driver gives the plain
        answer to :meth:`express_answer`, and anything else (an error, a referral, silence)
        to :meth:`resolution`, whose first exchange is then the same.

        :raises doikit.DOINotFound: for a "not found" in the cache.
        """
        key = (ascii_upper(handle), types, indexes)
        cached = self._answer(handle, key)
        if cached is not None:
            return cached
        wanted = prefix_handle(handle)
        sites = self._root_sites if wanted is None else self.cache.sites(wanted)
        if not sites or self.certify:
            return None
        site = sites[0]
        way = self._ways.get(id(site)) if len(site.servers) == 1 else None
        if way is None or way[0] is not site:
            way = self._way(site, handle)
        target = way[1]
        down = self._down
        if target is None or (
            down and down.get((target.host, target.port, PROTOCOL_UDP), 0) > self.clock()
        ):
            return None
        return Express(key, target, way[2], self._flags, self._expiration())

    def _way(self, site: SiteInfo, handle: str) -> tuple[SiteInfo, Target | None, tuple[int, int]]:
        """The UDP target of *handle* in *site* (none when its server has no UDP query
        interface) and the version to speak; kept for a site of one server, where the
        hash has nothing to pick."""
        server, host = self._servers_in_order(site, handle)[0]
        port = _port(server, PROTOCOL_UDP)
        target = None if port is None else Target(PROTOCOL_UDP, host, port, server, site)
        way = (site, target, _version(site))
        if len(site.servers) == 1:
            if len(self._ways) >= MAX_SERVICES:
                self._ways.clear()
            self._ways[id(site)] = way
        return way

    def express_answer(
        self, express: Express, record: HandleRecord, unit: bytes | None = None
    ) -> bool:
        """Take *record*, the values of a plain answer (``ResolutionResponse``) to
        *express*, as :meth:`resolution` would: the server is up, the record kept for its
        TTL. ``False`` when the answer is for another handle (give it to
        :meth:`resolution`). With *unit*, the message *record* was read from by
        :func:`read_answer`, the cache keeps those bytes and reads them again on a hit: an
        answer kept is then no object the cycle collector walks (a batch of a million names
        spent a fifth of its time there)."""
        if ascii_upper(record.handle) != express.key[0]:
            return False
        if self._down:
            self._mark_up(express.target)
        kept = record if unit is None else unit
        self.cache.keep_answer(express.key, min(_ttl(record.values), self.max_ttl), kept)
        return True

    def service(self, handle: str) -> Generator[Exchange, Reply, tuple[SiteInfo, ...]]:
        """The sites that answer for *handle* (as a generator of exchanges, as
        :meth:`resolution`)."""
        try:
            return (yield from self._service(handle, 0))
        except _NoService as exc:
            message = f"no service for {handle}: {exc.handle} is not registered at {exc.where}"
            raise DOINotFound(handle, message) from None

    def verification(
        self, request: VerifyChallengeRequest
    ) -> Generator[Exchange, Reply, VerifyChallengeResponse]:
        """*request* asked of the service that holds its identity handle, as CNRI's server
        asks it when a challenge is answered with a key held elsewhere (§11.3): the answer,
        signed (CT) by the server that gave it and verified with the key its site lists,
        whether or not this resolver certifies.

        :raises doikit.DOINotFound: no service for the identity's prefix.
        :raises doikit.HandleServerError: an error answer, a bad or missing signature.
        :raises doikit.TransportError: no server answered.
        """
        handle = request.identity_handle
        sites = yield from self.service(handle)
        asked = dataclasses.replace(
            request, op_flags=request.op_flags | OpFlag.CERTIFY, expiration=self._expiration()
        )
        reply, where = yield from self._query(sites, asked, handle, 0, certify=True)
        if isinstance(reply, VerifyChallengeResponse):
            return reply
        raise _server_error(handle, reply, where)

    # --- finding the service -----------------------------------------------------------------

    def root(self) -> Generator[Exchange, Reply, tuple[SiteInfo, ...]]:
        """The root sites; for a private root, asked for its site information once.

        :raises doikit.TransportError: when the private root does not answer.
        """
        return (yield from self._root())

    def _root(self) -> Generator[Exchange, Reply, tuple[SiteInfo, ...]]:
        if self._root_sites is not None:
            if self._refreshing or self.clock() < self._root_due:
                return self._root_sites
            return (yield from self._refresh_root(self._root_sites))
        if self._provisional is None:
            return self._found_root(root_sites(self.root_info))
        # A private root: its own site information gives its key and its other interfaces.
        self._root_asked = self.clock()
        site = yield from self._site_info((self._provisional,))
        return self._found_root((site,))

    def _found_root(self, sites: tuple[SiteInfo, ...]) -> tuple[SiteInfo, ...]:
        self._root_sites = sites
        self._root_due = self.clock() + self.root_refresh
        return sites

    def _site_info(self, sites: tuple[SiteInfo, ...]) -> Generator[Exchange, Reply, SiteInfo]:
        """The site information of the private root, asked of *sites* (GET_SITE_INFO).

        :raises doikit.TransportError: when it does not answer.
        """
        failures: list[str] = []
        asked = GetSiteInfoRequest("/", expiration=self._expiration())
        for exchange in self._exchanges(self._targets(sites, "/"), asked):
            reply = yield exchange
            if isinstance(reply, SiteInfoResponse) and reply.site.servers:
                return reply.site
            failures.append(f"{exchange.target}: {_said(reply)}")
        detail = "; ".join(failures) or "no interface to ask"
        raise TransportError(
            self.root_address or "", f"{self.root_label} does not answer: {detail}"
        )

    def _refresh_root(
        self, current: tuple[SiteInfo, ...]
    ) -> Generator[Exchange, Reply, tuple[SiteInfo, ...]]:
        """The root sites asked of the root again (:data:`ROOT_REFRESH` after they were
        found, or sooner when a root server said they are out of date): a private root's
        site information; the published root's ``HS_SITE`` and ``HS_SERV`` values of
        ``0.NA/0.NA``, asked signed and verified with the keys *current* lists (as CNRI's
        client asks them certified). What cannot be found, or not verified, leaves
        *current* in use, asked again after :data:`ROOT_RETRY`."""
        fresh: tuple[SiteInfo, ...] = ()
        self._refreshing = True
        self._root_asked = self.clock()
        try:
            if self._provisional is not None:
                fresh = ((yield from self._site_info(current)),)
            else:
                request = ResolutionRequest(
                    ROOT_HANDLE, (), (*SITE_TYPES, "HS_SERV"),
                    op_flags=self._flags | OpFlag.CERTIFY, expiration=self._expiration(),
                )  # fmt: skip
                reply, _ = yield from self._query(current, request, ROOT_HANDLE, 0, certify=True)
                if isinstance(reply, ResolutionResponse):
                    fresh, _ = yield from self._sites_from(reply.values, 0)
        except (TransportError, HandleServerError, DOINotFound):
            fresh = ()
        finally:
            self._refreshing = False
        if fresh:
            return self._found_root(fresh)
        self._root_due = self.clock() + min(ROOT_RETRY, self.root_refresh)
        return current

    def _outdated(self, reply: Message, target: Target) -> None:
        """A root server's answer that says the root sites are out of date (rc 300, or a
        site serial above the one known; CNRI's ``notifyRootInfoOutdated``): they are asked
        again at the next need, at most once in :data:`ROOT_RETRY`."""
        if self._refreshing:
            return
        if reply.response_code == RC_OUT_OF_DATE_SITE_INFO or (
            reply.site_info_serial > target.site.serial_number >= 0
        ):
            soon = max(self.clock(), self._root_asked + ROOT_RETRY)
            self._root_due = min(self._root_due, soon)

    def _service(self, handle: str, depth: int) -> Generator[Exchange, Reply, tuple[SiteInfo, ...]]:
        wanted = prefix_handle(handle)
        if wanted is None:
            return (yield from self._root())
        return (yield from self._sites_of(wanted, depth))

    def _sites_of(
        self, handle: str, depth: int
    ) -> Generator[Exchange, Reply, tuple[SiteInfo, ...]]:
        """The sites named by the HS_SITE and HS_SERV values of *handle* (a prefix or
        service handle), resolved where *handle* lives, and kept for their TTL."""
        if handle.upper() == ROOT_HANDLE:
            return (yield from self._root())
        cached = self.cache.sites(handle)
        if cached is not None:
            return cached
        reply, where = yield from self._service_values(handle, SERVICE_TYPES, depth, "HS_SERV")
        if not isinstance(reply, ResolutionResponse):
            # 301 from every server: none homes the prefix handle (doikit serve's answer
            # where CNRI's root, homing 0.NA/0.NA, answers 100).
            if reply.response_code in (RC_HANDLE_NOT_FOUND, RC_VALUES_NOT_FOUND, 301):
                raise _NoService(handle, where)
            raise _server_error(handle, reply, where)
        sites, ttl = yield from self._sites_from(reply.values, depth)
        if not sites:
            raise _NoService(handle, where)
        self.cache.keep_sites(handle, ttl, sites)
        return sites

    def _sites_from(
        self, values: Iterable[HandleValue], depth: int, *, prefix: bool = False
    ) -> Generator[Exchange, Reply, tuple[tuple[SiteInfo, ...], float]]:
        """The sites *values* name, and their least TTL; with *prefix*, those of a 303
        prefix referral (``HS_SITE.PREFIX``, ``HS_NA_DELEGATE``, ``HS_SERV.PREFIX``) instead
        of ``HS_SITE``, ``HS_SITE.6`` and ``HS_SERV`` (CNRI's ``populateServiceInfoSites``)."""
        site_types, service_type = (
            (_PREFIX_SITE_TYPES, "HS_SERV.PREFIX") if prefix else (SITE_TYPES, "HS_SERV")
        )
        sites: list[SiteInfo] = []
        ttl = float("inf")
        for value in values:
            kind = value.type.upper()
            if kind in site_types:
                try:
                    sites.append(site_from_bytes(data_to_wire(value.data)))
                except HandleFormatError:
                    continue  # a site this build cannot read; CNRI skips it too
                ttl = min(ttl, value.ttl_seconds())
            elif kind == service_type and isinstance(value.data, bytes):
                try:
                    served = service_handle(value.data)
                except HandleFormatError:
                    continue
                if prefix:
                    sites += yield from self._prefix_sites_of(served, depth + 1)
                else:
                    sites += yield from self._sites_of(served, depth + 1)
                ttl = min(ttl, value.ttl_seconds())
        unique = list(dict.fromkeys(sites))
        return ordered(unique), ttl

    def _prefix_sites_of(
        self, handle: str, depth: int
    ) -> Generator[Exchange, Reply, tuple[SiteInfo, ...]]:
        """The derived-prefix sites an ``HS_SERV.PREFIX`` service handle holds (none when it
        cannot be resolved); ``0.NA/0.NA`` stands for the root sites, as in ``HS_SERV``."""
        if handle.upper() == ROOT_HANDLE:
            return (yield from self._root())
        kinds = _PREFIX_REFERRAL_TYPES
        reply, _ = yield from self._service_values(handle, kinds, depth, "HS_SERV.PREFIX")
        if not isinstance(reply, ResolutionResponse):
            return ()
        sites, _ = yield from self._sites_from(reply.values, depth, prefix=True)
        return sites

    # --- asking a service ----------------------------------------------------------------

    def _service_values(
        self, handle: str, types: tuple[str, ...], depth: int, chain: str
    ) -> Generator[Exchange, Reply, tuple[_Answer, str]]:
        """The values of *types* of the service handle *handle*, asked of its own service
        (a *chain* of service handles is followed at most :data:`MAX_SERVICE_DEPTH` deep)."""
        if depth > MAX_SERVICE_DEPTH:
            msg = f"{chain} chain deeper than {MAX_SERVICE_DEPTH} at {handle}"
            raise HandleServerError(handle, msg)
        parents = yield from self._service(handle, depth + 1)
        request = ResolutionRequest(
            handle, (), types, op_flags=self._flags, expiration=self._expiration()
        )
        return (yield from self._query(parents, request, handle, depth))

    def _query(
        self,
        sites: tuple[SiteInfo, ...],
        request: ResolutionRequest | VerifyChallengeRequest,
        handle: str,
        depth: int,
        *,
        certify: bool = False,
    ) -> Generator[Exchange, Reply, tuple[_Answer, str]]:
        """The answer of the service of *sites* to *request*, referrals followed (and its
        signature verified when this resolver or *certify* says so)."""
        answers = (
            VerifyChallengeResponse
            if isinstance(request, VerifyChallengeRequest)
            else ResolutionResponse
        )
        for _ in range(MAX_REFERRALS + 1):
            failures: list[str] = []
            errors: list[tuple[ErrorResponse, str]] = []
            referral: tuple[ReferralResponse, str] | None = None
            answered: set[ServerInfo] = set()  # a server that answered is not asked again
            for exchange in self._exchanges(self._targets(sites, handle), request):
                if exchange.target.server in answered:
                    continue
                reply = yield exchange
                where = str(exchange.target)
                if isinstance(reply, Failure):
                    self._mark_down(exchange.target)
                    failures.append(f"{where}: {reply.reason}")
                    continue
                self._mark_up(exchange.target)
                answered.add(exchange.target.server)
                if sites is self._root_sites:
                    self._outdated(reply, exchange.target)
                if self.certify or certify:
                    self._verify(reply, exchange.target, handle)
                if isinstance(reply, ReferralResponse) and reply.response_code in (
                    RC_SERVICE_REFERRAL,
                    RC_PREFIX_REFERRAL,
                ):
                    referral = (reply, where)
                    break
                if isinstance(reply, ErrorResponse) and reply.response_code in _TRY_ELSEWHERE:
                    errors.append((reply, where))
                    continue
                if isinstance(reply, ResolutionResponse) and (
                    not isinstance(request, ResolutionRequest)
                    or ascii_upper(reply.handle) != ascii_upper(request.handle)
                ):
                    failures.append(f"{where}: answered for {reply.handle!r}")
                    continue
                if isinstance(reply, ErrorResponse | answers):
                    return reply, where
                failures.append(f"{where}: answered {type(reply).__name__}")
            if referral is None:
                if errors:
                    return errors[-1]
                detail = "; ".join(failures) or "no server with a query interface"
                raise TransportError(handle, f"no answer for {handle}: {detail}")
            given, where = referral
            sites = yield from self._referred(given, depth + 1)
            if not sites:
                msg = f"{where} referred {handle} to no site"
                raise HandleServerError(handle, msg, response_code=given.response_code)
            request = dataclasses.replace(request, recursion_count=request.recursion_count + 1)
        msg = f"{handle}: more than {MAX_REFERRALS} referrals"
        raise HandleServerError(handle, msg)

    def _referred(
        self, given: ReferralResponse, depth: int
    ) -> Generator[Exchange, Reply, tuple[SiteInfo, ...]]:
        """The sites a referral sends the request on to (CNRI's ``sendRequestToService``): a
        303's derived-prefix sites, or else (and for a 302) the HS_SITE and HS_SERV sites of
        its values; without values, those of the handle it names."""
        prefix = given.response_code == RC_PREFIX_REFERRAL
        sites: tuple[SiteInfo, ...] = ()
        if given.values and prefix:
            sites, _ = yield from self._sites_from(given.values, depth, prefix=True)
        if given.values and not sites:
            sites, _ = yield from self._sites_from(given.values, depth)
        elif not given.values and given.handle:
            if prefix:
                sites = yield from self._prefix_sites_of(given.handle, depth)
            else:
                sites = yield from self._sites_of(given.handle, depth)
        return sites

    def _targets(self, sites: tuple[SiteInfo, ...], handle: str) -> Iterator[Target]:
        """Every (protocol, site, server) to try, in order, made as they are needed: for each
        protocol, for each site, the server the hash picks, then its others; servers that
        went silent within :data:`DOWN_FOR` seconds after all the others."""
        orders = [(site, self._servers_in_order(site, handle)) for site in sites]
        now = self.clock()
        stale: list[Target] = []
        for protocol in PROTOCOLS:
            for site, servers in orders:
                for server, host in servers:
                    port = _port(server, protocol)
                    if port is None:
                        continue
                    target = Target(protocol, host, port, server, site)
                    until = self._down.get((host, port, protocol)) if self._down else None
                    if until is not None and until > now:
                        stale.append(target)
                    else:
                        yield target
        yield from stale

    def _servers_in_order(self, site: SiteInfo, handle: str) -> list[tuple[ServerInfo, str]]:
        picked = site.server_for(handle) if len(site.servers) > 1 else None
        servers = sorted(site.servers, key=lambda s: s is not picked) if picked else site.servers
        return [(server, self._host(server)) for server in servers]

    def _host(self, server: ServerInfo) -> str:
        host = self._hosts.get(server.address)
        if host is None:
            if len(self._hosts) >= MAX_SERVICES:
                self._hosts.clear()
            host = self._hosts[server.address] = str(server.address)
        return host

    def _exchanges(
        self,
        targets: Iterable[Target],
        request: ResolutionRequest | GetSiteInfoRequest | VerifyChallengeRequest,
    ) -> Iterator[Exchange]:
        for target in targets:
            waits = UDP_WAITS if target.protocol == PROTOCOL_UDP else (STREAM_TIMEOUT,)
            version = _version(target.site)
            if version != request.version:
                request = dataclasses.replace(request, version=version)
            yield Exchange(request, target, waits)

    def _mark_down(self, target: Target) -> None:
        self._down[(target.host, target.port, target.protocol)] = self.clock() + DOWN_FOR
        while len(self._down) > MAX_SERVICES:
            self._down.popitem(last=False)

    def _mark_up(self, target: Target) -> None:
        self._down.pop((target.host, target.port, target.protocol), None)

    def _verify(self, reply: Message, target: Target, handle: str) -> None:
        """Check the signature of *reply* with the key the site lists for its server (§13).

        :raises doikit.HandleServerError: unsigned, signed with another key, or no key to check.
        """
        where = f"{target} (server {target.server.server_id})"
        problem = signature_problem(reply, target.server.public_key)
        if problem is not None:
            msg = f"refusing the answer of {where} for {handle}: {problem}"
            raise HandleServerError(handle, msg, response_code=reply.response_code)


def _port(server: ServerInfo, protocol: int) -> int | None:
    for interface in server.interfaces:
        if interface.protocol == protocol and interface.query:
            return interface.port
    return None


def _version(site: SiteInfo) -> tuple[int, int]:
    """The protocol version to speak to *site*: its own, at most 2.11; 2.11 to a site older
    than 2.7 (what doikit signs and verifies; older peers still answer)."""
    version = min(site.protocol_version, (2, 11))
    return (2, 11) if version < (2, 7) else version


def _ttl(values: tuple[HandleValue, ...]) -> float:
    return float(min((v.ttl_seconds() for v in values), default=0))


def _said(reply: Reply) -> str:
    if isinstance(reply, Failure):
        return reply.reason
    if isinstance(reply, ErrorResponse):
        return f"rc {reply.response_code} {reply.message}".rstrip()
    return f"answered {type(reply).__name__}"


def _server_error(handle: str, reply: Message, where: str) -> HandleServerError:
    """The error of an answer that is no answer to the question (an error response)."""
    said = getattr(reply, "message", "")
    detail = f": {said}" if said else ""
    msg = f"resolving {handle} failed at {where} with responseCode {reply.response_code}{detail}"
    return HandleServerError(handle, msg, response_code=reply.response_code)


__all__ = ["Resolver"]
