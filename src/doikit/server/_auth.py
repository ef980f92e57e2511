"""Who is asking, and may they: bearer tokens, and Handle identities as HANDLE.NET has them.

Two kinds of caller write to ``doikit serve``:

* a **bearer token** (``Authorization: Bearer doikit_…``, made by ``doikit token create``)
  may write every name under the prefixes it was made for;
* a **Handle identity** (``Authorization: Basic`` of ``quote("300:10.5555/ADMIN")`` and a
  secret key, as pyhandle, b2handle and HANDLE.NET's own tools send it) is a handle of the
  directory holding an ``HS_SECKEY`` value. What it may do follows the Handle model
  (handle-api.md §1.4): a record's ``HS_ADMIN`` values name who may change it, directly or
  through an ``HS_VLIST`` group such as a prefix's admin group ``200:0.NA/10.5555``, with
  the 12 permission bits; creating a name needs ``add_handle`` in the admin values of the
  prefix's handle ``0.NA/<prefix>``. ``doikit admin create`` makes such an identity.

Secret keys are stored as a salted scrypt hash (never the key), compared in constant time;
a key stored in clear, as a HANDLE.NET export has it, is compared in constant time too.
Repeated failures for one handle are answered ever more slowly (:class:`Throttle`).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import os
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from doikit._syntax import PercentError, fold, percent_decode
from doikit.handle import (
    RC_AUTHENTICATION_NEEDED,
    RC_INSUFFICIENT_PERMISSIONS,
    AdminData,
    HandleValue,
    Reference,
    type_matches,
)
from doikit.server._http import Refused

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable

    from starlette.requests import Request

    from doikit.server.stores import Store

# The 12 HS_ADMIN permissions by bit number (AdminRecord); the JSON string writes bit 11
# first, so bit b is the character at position 11 - b.
PERMISSION_BITS: Final = {
    "add_handle": 0,
    "delete_handle": 1,
    "add_derived_prefix": 2,
    "delete_derived_prefix": 3,
    "modify_value": 4,
    "remove_value": 5,
    "add_value": 6,
    "modify_admin": 7,
    "remove_admin": 8,
    "add_admin": 9,
    "read_value": 10,
    "list_handles": 11,
}
#: What ``doikit admin create`` gives a prefix's admin group on the names it creates, and
#: what pyhandle and b2handle write by default: all but list handles and derived prefixes.
CLIENT_DEFAULT_PERMISSIONS: Final = "011111110011"
#: Every permission, as a prefix handle gives its own admin group.
ALL_PERMISSIONS: Final = "111111111111"

_CHALLENGE: Final = {"WWW-Authenticate": 'Basic realm="handle", Bearer realm="doikit"'}
# scrypt at n=2**15, r=8, p=1: 32 MiB and about 0.1 s per check, once per key and process.
_SCRYPT: Final = {"n": 2**15, "r": 8, "p": 1, "maxmem": 64 << 20, "dklen": 32}
_SCHEME: Final = "doikit-scrypt"
# Attempts for one handle after this many failures within FAILURE_WINDOW seconds are
# answered late: 0.5 s, doubling with each further failure, up to _MAX_DELAY.
_FREE_FAILURES: Final = 5
FAILURE_WINDOW: Final = 300.0
_MAX_DELAY: Final = 8.0
# Checks of one handle, and from one client address, that may run at once; more are refused
# at once (nothing is checked, so nothing is learnt), and so are checks beyond _MAX_QUEUED
# waiting for one of the _WORKERS scrypt threads.
_PER_NAME: Final = 2
_PER_ADDRESS: Final = 4
_WORKERS: Final = max(1, min(4, os.cpu_count() or 1))
_MAX_QUEUED: Final = 64
# Handles (and addresses) whose failures are remembered, least recently failed forgotten first.
_MAX_TRACKED: Final = 100_000
_MAX_GROUP_LOOKUPS: Final = 32
_MAX_KEYS: Final = 4


def has_permission(permissions: str, name: str) -> bool:
    """Whether a 12-character HS_ADMIN permission string grants *name*.

    >>> has_permission("011111110011", "add_handle"), has_permission("011111110011", "list_handles")
    (True, False)
    """
    return permissions[11 - PERMISSION_BITS[name]] == "1"


def hash_token(token: str) -> str:
    """The digest under which a token is stored (SHA-256: tokens are 256 random bits)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    """A new bearer token: 256 bits from :mod:`secrets`, URL-safe."""
    return "doikit_" + secrets.token_urlsafe(32)


def new_secret() -> str:
    """A new secret key: 256 bits, in characters no client escapes (b2handle percent-quotes
    the password it sends, pyhandle does not; for these characters both send the same)."""
    return secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    """The HS_SECKEY data doikit stores for *secret*: a salted scrypt hash, never the key."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(secret.encode("utf-8"), salt=salt, **_SCRYPT)
    encode = base64.b64encode
    return f"{_SCHEME}${encode(salt).decode()}${encode(digest).decode()}"


class _Sealing:
    """The sealing key of this process, when it has one (:mod:`._native_keys`)."""

    key: bytes | None = None


SEALING: Final = _Sealing()


def stored_secret(secret: str) -> str:
    """The HS_SECKEY data a directory keeps for *secret*: its salted scrypt hash, and, when
    this process has a sealing key, the secret sealed under it, which the native protocol's
    secret-key answers need (:mod:`._native_keys`); never the secret in clear."""
    stored = hash_secret(secret)
    if SEALING.key is None:
        return stored
    from doikit.server._native_keys import seal  # noqa: PLC0415 - the native side only

    return seal(stored, secret, SEALING.key)


def is_hashed_secret(data: bytes) -> bool:
    """Whether HS_SECKEY data is a hash :func:`hash_secret` made (else a key in clear)."""
    return data.startswith(_SCHEME.encode() + b"$")


def _check_secret(stored: bytes, given: bytes) -> bool:
    """Whether *given* is the key that *stored* (HS_SECKEY data) holds, in constant time."""
    text = stored.decode("utf-8", "replace")
    if not text.startswith(_SCHEME + "$"):
        return hmac.compare_digest(stored, given)  # a key kept in clear, as HANDLE.NET may
    try:
        _, salt, digest = text.split("$")[:3]
        want = base64.b64decode(digest, validate=True)
        got = hashlib.scrypt(given, salt=base64.b64decode(salt, validate=True), **_SCRYPT)
    except (ValueError, binascii.Error):
        return False
    return hmac.compare_digest(want, got)


def failure_delay(failures: int) -> float:
    """Seconds to wait before checking a key for a handle that has failed *failures* times
    within the window: none for the first few, then doubling up to a ceiling (any count).

    >>> [failure_delay(n) for n in (0, 4, 5, 6, 7, 2000)]
    [0.0, 0.0, 0.5, 1.0, 2.0, 8.0]
    """
    beyond = failures + 1 - _FREE_FAILURES
    if beyond <= 0:
        return 0.0
    return min(0.25 * 2.0 ** min(beyond, 16), _MAX_DELAY)


class Failures:
    """Failed attempts per name within :data:`FAILURE_WINDOW` seconds of the last one, for
    :func:`failure_delay`; at most :data:`_MAX_TRACKED` names, the least recently failed
    forgotten first. HTTP Basic (:class:`Throttle`) and the native protocol's challenge
    answers count with it."""

    def __init__(self) -> None:
        self._failed: OrderedDict[str, tuple[int, float]] = OrderedDict()

    def count(self, name: str) -> int:
        """The failures of *name* that still count."""
        failures, last = self._failed.get(name, (0, 0.0))
        return 0 if time.monotonic() - last > FAILURE_WINDOW else failures

    def failed(self, name: str) -> None:
        """One more failure of *name*."""
        failures = self.count(name)
        self._failed.pop(name, None)
        self._failed[name] = (failures + 1, time.monotonic())
        if len(self._failed) > _MAX_TRACKED:
            self._failed.popitem(last=False)

    def forget(self, name: str) -> None:
        """*name* proved itself: its failures no longer count."""
        self._failed.pop(name, None)


class Throttle:
    """Checks secret keys for Handle identities and answers guesses ever later.

    * Failures are counted per **handle**, whatever index is named (``0:``, ``300:`` and
      ``301:`` of one handle share a bucket), for handles with and without keys alike.
    * The delay is served **before** the scrypt, so guesses cost the guesser time first; at
      most :data:`_PER_NAME` checks of one handle and :data:`_PER_ADDRESS` from one client
      run at once, and the scrypts of all share :data:`_WORKERS` threads with at most
      :data:`_MAX_QUEUED` waiting; beyond these a check is refused at once, unchecked.
    * A handle without a key costs the same scrypt (against a key nobody holds) as one with,
      so the answer's time does not tell which names hold a key.
    * A key that has been right before answers from memory, at once, whoever failed since.
    """

    def __init__(self, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self._sleep = sleep
        self._verified: OrderedDict[tuple[bytes, bytes], None] = OrderedDict()
        self.failures = Failures()
        self._running: dict[str, int] = {}
        self._pending: dict[tuple[str, bytes], asyncio.Future[bool]] = {}
        self._workers = asyncio.Semaphore(_WORKERS)
        self._queued = 0
        self._decoy = hash_secret(new_secret()).encode()

    async def check(self, name: str, keys: list[bytes], secret: bytes, address: str) -> bool:
        """Whether *secret* is one of *keys* (HS_SECKEY data) of the handle *name*, asked
        from *address*. Concurrent checks of the same name and secret share one answer."""
        given = hashlib.sha256(secret).digest()
        for key in keys:
            if (key, given) in self._verified:
                self._verified.move_to_end((key, given))
                return True
        pending = self._pending.get((name, given))
        if pending is not None:
            return await asyncio.shield(pending)
        slots = ("name " + name, "address " + address)
        if self._running.get(slots[0], 0) >= _PER_NAME or (
            self._running.get(slots[1], 0) >= _PER_ADDRESS
        ):
            return False
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._pending[name, given] = answer
        for slot in slots:
            self._running[slot] = self._running.get(slot, 0) + 1
        right = False
        try:
            right = await self._check(name, keys, secret, given)
        finally:
            answer.set_result(right)
            del self._pending[name, given]
            for slot in slots:
                self._running[slot] -= 1
                if not self._running[slot]:
                    del self._running[slot]
        return right

    async def _check(self, name: str, keys: list[bytes], secret: bytes, given: bytes) -> bool:
        await self._sleep(failure_delay(self.failures.count(name)))
        right = await self._compare(keys, secret)
        if right is None:
            return False
        if right:
            self._verified[right, given] = None
            if len(self._verified) > 256:
                self._verified.popitem(last=False)
            return True
        self.failures.failed(name)
        return False

    async def _compare(self, keys: list[bytes], secret: bytes) -> bytes | None:
        """The key among *keys* that *secret* is (``b""`` for none), comparing every hashed
        key (the decoy when there is none); ``None`` when too many checks wait already."""
        if self._queued >= _MAX_QUEUED:
            return None
        self._queued += 1
        try:
            async with self._workers:
                hashed = [k for k in keys if is_hashed_secret(k)] or [self._decoy]
                found = b""
                for key in hashed:
                    if await asyncio.to_thread(_check_secret, key, secret) and key != self._decoy:
                        found = found or key
                for key in keys:
                    if not is_hashed_secret(key) and _check_secret(key, secret):
                        found = found or key
                return found
        finally:
            self._queued -= 1


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is asking: a bearer token's prefixes, or a Handle identity ``(index, handle)``."""

    prefixes: tuple[str, ...] = ()
    identity: tuple[int, str] | None = None

    def __str__(self) -> str:
        if self.identity is not None:
            return f"{self.identity[0]}:{self.identity[1]}"
        return "the token"


def parse_basic(header: str) -> tuple[int, str, bytes] | None:
    """``(index, handle, secret)`` from an ``Authorization: Basic`` value as HANDLE.NET reads
    it: the user name percent-decoded (``+`` stays ``+``), split at its first ``:`` into an
    index and a handle when what stands before it is digits (else index 0), the password
    taken as its bytes; ``None`` when it is no such value.

    >>> parse_basic("Basic " + base64.b64encode(b"300%3A10.5555/ADMIN:s3cret").decode())
    (300, '10.5555/ADMIN', b's3cret')
    """
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        raw = base64.b64decode(encoded.strip(), validate=True)
        user, colon, password = raw.partition(b":")
        name = percent_decode(user.decode("utf-8"))
    except (binascii.Error, UnicodeDecodeError, PercentError):
        return None
    if not colon or not name:
        return None
    head, sep, rest = name.partition(":")
    if sep and head.isascii() and head.isdigit() and len(head) <= 10 and rest:
        return int(head), rest, password
    return 0, name, password


class Authority:
    """Identifies callers and checks what they may do, reading identities, admin values and
    groups from *store*."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._throttle = Throttle()

    # --- who -------------------------------------------------------------------------------

    async def caller(self, request: Request) -> Caller:
        """The caller a request authenticates as.

        :raises Refused: 401 rc 402 without valid credentials.
        """
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            prefixes = await self.store.token_prefixes(hash_token(token.strip()))
            if prefixes is None:
                raise self._unauthenticated("the token is not known here")
            return Caller(prefixes=prefixes)
        basic = parse_basic(header)
        if basic is None:
            raise self._unauthenticated(
                "send Authorization: Bearer TOKEN, or Basic with a Handle identity"
                " (index:handle, percent-encoded) and its secret key"
            )
        index, handle, secret = basic
        keys = await self._keys(index, handle)
        address = request.client.host if request.client else ""
        if await self._throttle.check(fold(handle), keys, secret, address):
            return Caller(identity=(index, handle))
        raise self._unauthenticated(f"the identity {index}:{handle} or its secret key is wrong")

    @staticmethod
    def _unauthenticated(message: str) -> Refused:
        return Refused(RC_AUTHENTICATION_NEEDED, message, headers=_CHALLENGE)

    async def _keys(self, index: int, handle: str) -> list[bytes]:
        """The secret keys (HS_SECKEY data) of the identity ``index:handle``; index 0: the
        first few (each check costs a scrypt: a record of many keys must not make one
        request cost minutes)."""
        stored = await self.store.get(fold(handle))
        if stored is None:
            return []
        return [
            v.data
            for v in stored.values()
            if type_matches(v.type, "HS_SECKEY")
            and isinstance(v.data, bytes)
            and index in (0, v.index)
        ][:_MAX_KEYS]

    # --- may they --------------------------------------------------------------------------

    async def may_create(self, caller: Caller, prefix: str) -> None:
        """Refuse (403 rc 401) unless *caller* may create names under *prefix*."""
        if not await self._prefix_grants(caller, prefix, {"add_handle"}):
            raise Refused(
                RC_INSUFFICIENT_PERMISSIONS, f"{caller} may not create names under {prefix}"
            )

    async def may_change(
        self,
        caller: Caller,
        prefix: str,
        before: tuple[HandleValue, ...],
        after: tuple[HandleValue, ...] | None,
        *,
        whole: bool = False,
    ) -> None:
        """Refuse (403 rc 401) unless *caller* may turn the values *before* into *after*
        (``None``: delete the handle): the record's own HS_ADMIN values, or the prefix
        handle's, must grant what the change needs. A whole-record replacement is also
        allowed to an admin with ``add_admin``, or with ``delete_handle`` and the prefix's
        ``add_handle``, as HANDLE.NET allows it."""
        if caller.identity is None:
            if prefix in caller.prefixes:
                return
            raise Refused(RC_INSUFFICIENT_PERMISSIONS, f"the token may not write prefix {prefix}")
        needed = {"delete_handle"} if after is None else changes_need(before, after)
        if not needed:
            return  # nothing changes (a record PUT again as it is): HANDLE.NET answers 200
        if await self._granted(caller, before, needed):
            return
        if await self._prefix_grants(caller, prefix, needed):
            # The prefix's administrators administer every name under it, as HANDLE.NET's
            # server administrators do (server_admin_full_access) where the prefix is homed.
            return
        if whole and after is not None:
            if await self._granted(caller, before, {"add_admin"}):
                return
            if await self._granted(caller, before, {"delete_handle"}) and (
                await self._prefix_grants(caller, prefix, {"add_handle"})
            ):
                return
        wanted = ", ".join(sorted(needed))
        raise Refused(RC_INSUFFICIENT_PERMISSIONS, f"{caller} lacks {wanted} on this name")

    async def may_list(self, caller: Caller, prefix: str) -> None:
        """Refuse (403 rc 401) unless *caller* may list the names under *prefix*: a token
        for it, or an identity with ``list_handles`` on the prefix's handle."""
        if not await self._prefix_grants(caller, prefix, {"list_handles"}):
            raise Refused(RC_INSUFFICIENT_PERMISSIONS, f"{caller} may not list prefix {prefix}")

    async def may_read_all(
        self, caller: Caller, prefix: str, values: tuple[HandleValue, ...]
    ) -> None:
        """Refuse (403 rc 401) unless *caller* may read values without public read."""
        if caller.identity is None:
            if prefix in caller.prefixes:
                return
        elif await self._granted(caller, values, {"read_value"}) or (
            await self._prefix_grants(caller, prefix, {"read_value"})
        ):
            return  # (the prefix's administrators administer every name under it)
        raise Refused(RC_INSUFFICIENT_PERMISSIONS, f"{caller} may not read this name's values")

    async def administers(self, caller: Caller, handle: str) -> bool:
        """Whether any HS_ADMIN value of *handle*, or of its prefix's handle, names *caller*
        (whatever it grants): HANDLE.NET answers 400 to an identity that is no admin at all,
        401 to one that lacks a permission."""
        if caller.identity is None:
            return True
        prefix = handle.partition("/")[0]
        for name in (handle, "0.NA/" + prefix):
            stored = await self.store.get(fold(name))
            if stored is not None and await self._granted(caller, stored.values(), set()):
                return True
        return False

    async def may_home(self, caller: Caller, prefix: str, *, home: bool) -> None:
        """Refuse (403 rc 401) unless *caller* may home (or unhome) the derived prefix
        *prefix* (``10.5555.1``): ``add_derived_prefix`` (``delete_derived_prefix``) on its
        parent's prefix handle, as HANDLE.NET checks a derived prefix's creation."""
        parent, dot, _ = prefix.rpartition(".")
        needed = {"add_derived_prefix" if home else "delete_derived_prefix"}
        if not dot or "." not in parent or not await self._prefix_grants(caller, parent, needed):
            wanted = next(iter(needed))
            raise Refused(
                RC_INSUFFICIENT_PERMISSIONS,
                f"{caller} lacks {wanted} on a parent prefix of {prefix}",
            )

    async def _prefix_grants(self, caller: Caller, prefix: str, needed: set[str]) -> bool:
        if caller.identity is None:
            return prefix in caller.prefixes
        stored = await self.store.get(fold("0.NA/" + prefix))
        if stored is None:
            return False
        return await self._granted(caller, stored.values(), needed)

    async def _granted(
        self, caller: Caller, values: Iterable[HandleValue], needed: set[str]
    ) -> bool:
        """Whether one HS_ADMIN value among *values* grants every permission in *needed*
        and names the caller, directly or through groups (HANDLE.NET checks each admin
        value on its own)."""
        for value in values:
            admin = value.data
            if not type_matches(value.type, "HS_ADMIN") or not isinstance(admin, AdminData):
                continue
            if all(has_permission(admin.permissions, p) for p in needed) and (
                await self._names(caller, Reference(admin.handle, admin.index))
            ):
                return True
        return False

    async def _names(self, caller: Caller, start: Reference) -> bool:
        """Whether the reference *start* is the caller, or a group (HS_VLIST) holding it,
        breadth first through nested groups."""
        assert caller.identity is not None  # noqa: S101 - only identities reach here
        index, handle = caller.identity
        me = fold(handle)

        def is_me(ref: Reference) -> bool:
            return fold(ref.handle) == me and ref.index in (0, index)

        if is_me(start):
            return True
        queue, seen = [start], {(fold(start.handle), start.index)}
        while queue and len(seen) <= _MAX_GROUP_LOOKUPS:
            group = queue.pop(0)
            if group.index == 0:
                continue
            stored = await self.store.get(fold(group.handle))
            if stored is None:
                continue
            for value in stored.values():
                if value.index != group.index or not type_matches(value.type, "HS_VLIST"):
                    continue
                members = value.data if isinstance(value.data, tuple) else ()
                for member in members:
                    if is_me(member):
                        return True
                    key = (fold(member.handle), member.index)
                    if key not in seen:
                        seen.add(key)
                        queue.append(member)
        return False


def _is_admin(value: HandleValue) -> bool:
    return type_matches(value.type, "HS_ADMIN")


def _same(a: HandleValue, b: HandleValue) -> bool:
    """Equal but for the timestamp, which every write sets."""
    return (a.index, a.type, a.data, a.ttl, a.permissions, a.references) == (
        b.index,
        b.type,
        b.data,
        b.ttl,
        b.permissions,
        b.references,
    )


def changes_need(before: tuple[HandleValue, ...], after: tuple[HandleValue, ...]) -> set[str]:
    """The HS_ADMIN permissions that turning *before* into *after* needs, value by value, as
    HANDLE.NET counts them: adding, removing or modifying an ordinary value or an admin
    value; a value with public write needs none to be modified.

    >>> old = (HandleValue(1, "URL", b"https://a.example/"),)
    >>> sorted(changes_need(old, (HandleValue(1, "URL", b"https://b.example/"),)))
    ['modify_value']
    """
    was = {v.index: v for v in before}
    now = {v.index: v for v in after}
    needed: set[str] = set()
    for index in was.keys() | now.keys():
        old, new = was.get(index), now.get(index)
        if old is not None and new is not None and _same(old, new):
            continue
        if old is None:
            needed.add("add_admin" if new is not None and _is_admin(new) else "add_value")
        elif new is None:
            needed.add("remove_admin" if _is_admin(old) else "remove_value")
        elif _is_admin(old) and _is_admin(new):
            needed.add("modify_admin")
        elif _is_admin(old):
            needed |= {"remove_admin", "modify_value"}
        elif _is_admin(new):
            needed |= {"modify_value", "add_admin"}
        elif old.permissions[3] != "1" or old.type != new.type:
            needed.add("modify_value")  # public write lets anyone change data, not a type
    return needed


def _now() -> int:
    return int(time.time())


def with_secret(
    values: tuple[HandleValue, ...], index: int, stored_key: str, prefix: str
) -> tuple[HandleValue, ...]:
    """An identity's values with the (hashed) secret key at *index*, readable by its admins
    only (permissions ``1100``); a new identity also gets an HS_ADMIN naming the prefix's
    admin group, as a handle made by a Handle client has.

    :raises ValueError: when *index* holds a value of another type.
    """
    return with_key(
        values, index, "HS_SECKEY", stored_key.encode(), permissions="1100", prefix=prefix
    )


def with_key(
    values: tuple[HandleValue, ...],
    index: int,
    kind: str,
    data: bytes,
    *,
    permissions: str,
    prefix: str,
) -> tuple[HandleValue, ...]:
    """An identity's values with a key value (*kind* ``HS_SECKEY`` or ``HS_PUBKEY``) at
    *index*; a new identity also gets an HS_ADMIN naming the prefix's admin group.

    :raises ValueError: when *index* holds a value of another type.
    """
    clash = [v for v in values if v.index == index and not type_matches(v.type, kind)]
    if clash:
        raise ValueError(f"index {index} holds a {clash[0].type} value, not {kind}")
    key = HandleValue(index, kind, data, timestamp=_now(), permissions=permissions)
    out = [v for v in values if v.index != index] + [key]
    if not any(type_matches(v.type, "HS_ADMIN") for v in out):
        group = AdminData("0.NA/" + prefix, 200, CLIENT_DEFAULT_PERMISSIONS)
        admin_index = next(i for i in range(100, 2**31) if i not in {v.index for v in out})
        out.append(HandleValue(admin_index, "HS_ADMIN", group, timestamp=_now()))
    return tuple(sorted(out, key=lambda v: v.index))


def with_member(
    values: tuple[HandleValue, ...], index: int, handle: str, prefix_handle: str
) -> tuple[HandleValue, ...]:
    """The values of *prefix_handle* (``0.NA/10.5555``) with ``index:handle`` in its admin
    group (HS_VLIST 200), and, when it is new, an HS_ADMIN at 100 giving that group every
    permission.

    :raises ValueError: when index 200 holds a value of another type.
    """
    out = list(values)
    if not any(type_matches(v.type, "HS_ADMIN") for v in out):
        out.append(
            HandleValue(
                100, "HS_ADMIN", AdminData(prefix_handle, 200, ALL_PERMISSIONS), timestamp=_now()
            )
        )
    member = Reference(handle, index)
    group = next((v for v in out if v.index == 200), None)
    if group is None:
        out.append(HandleValue(200, "HS_VLIST", (member,), timestamp=_now()))
    elif isinstance(group.data, tuple) and type_matches(group.type, "HS_VLIST"):
        if member not in group.data:
            data = (*group.data, member)
            out = [v for v in out if v.index != 200]
            out.append(HandleValue(200, "HS_VLIST", data, group.ttl, _now(), group.permissions))
    else:
        raise ValueError(f"index 200 of the prefix handle holds a {group.type} value")
    return tuple(sorted(out, key=lambda v: v.index))
