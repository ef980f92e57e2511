"""Administration over the native Handle protocol: the challenge and its answer
(handle-protocol.md §11.1-11.3), then the change made exactly as the REST API's write side
makes it (:class:`~._writes.Writes`: the same checks of ``HS_ADMIN`` and ``HS_VLIST``, the
same compare-and-set, so what one interface writes the other reads at once).

A request that changes or lists is answered 402 with a nonce and a fresh session id that
names the pending challenge; the client answers with RESPONSE_TO_CHALLENGE (200) on that
session id, signed with an ``HS_PUBKEY`` (RSA or DSA) or MAC'd with an ``HS_SECKEY`` of the
identity; the original request is then carried out and answered. An identity held by
another server (its handle neither in the store nor under a prefix homed here) is checked
as CNRI's server checks it (§11.3), when ``doikit serve`` is told how to reach the Handle
System (``--upstream``, ``--upstream-root``; :class:`RemoteIdentities`): a public key is
resolved from its server, the answer signed, and checked here; a secret-key answer is sent
to the identity's server in a VERIFY_CHALLENGE, whose signed answer says whether it is
right. Without it, such identities are refused (403), as before. Pending challenges are
bounded (:data:`MAX_PENDING`) and expire after :data:`CHALLENGE_TTL` seconds; failed
answers are slowed like HTTP Basic guesses (:class:`~._auth.Throttle`'s delay, per handle).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from doikit._errors import ResolutionError, TransportError
from doikit._syntax import PREFIX_ONLY_RE, fold
from doikit.handle import (
    DIGEST_MD5_OLD,
    RC_AUTHENTICATION_FAILED,
    RC_ERROR,
    RC_HANDLE_ALREADY_EXISTS,
    RC_HANDLE_NOT_FOUND,
    RC_INVALID_HANDLE,
    RC_INVALID_VALUE,
    RC_OPERATION_NOT_SUPPORTED,
    RC_VALUES_NOT_FOUND,
    AddValueRequest,
    AdminData,
    ChallengeAnswerRequest,
    CreateHandleRequest,
    CreateHandleResponse,
    DeleteHandleRequest,
    HandleFormatError,
    HandleValue,
    HomeNARequest,
    ListHandlesRequest,
    ListHandlesResponse,
    ListNAsRequest,
    ListNAsResponse,
    ModifyValueRequest,
    OpFlag,
    RemoveValueRequest,
    RequestDigest,
    SuccessResponse,
    UnhomeNARequest,
    VerifyChallengeRequest,
    data_to_wire,
    request_digest,
    type_matches,
    values_to_json,
)
from doikit.server._auth import ALL_PERMISSIONS, Caller, Failures, failure_delay
from doikit.server._http import Refused
from doikit.server._native_keys import public_answer_ok, secret_answer_ok, unseal
from doikit.server._writes import bare_name
from doikit.server.stores import Row

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from doikit.handle import Message
    from doikit.server._auth import Authority
    from doikit.server._writes import Writes
    from doikit.server.stores import Store, StoredRecord

#: The requests that change the store (a mirror refuses them).
CHANGES: Final = (
    HandleFormatError,
    HomeNARequest,
    UnhomeNARequest,
    CreateHandleRequest,
    DeleteHandleRequest,
    AddValueRequest,
    ModifyValueRequest,
    RemoveValueRequest,
)
#: The requests that need an identity: the changes and the listings.
ADMIN_REQUESTS: Final = (*CHANGES, ListHandlesRequest, ListNAsRequest)
log = logging.getLogger("doikit.server")

#: Seconds an answer to a challenge may take, and how many challenges may wait at once.
CHALLENGE_TTL: Final = 60.0
MAX_PENDING: Final = 10_000
#: Names listed per message of a listing (all but the last carry CONTINUOUS).
LIST_PAGE: Final = 1000
#: The most names a listing sends.
MAX_LISTED: Final = 1_000_000


@dataclass(frozen=True, slots=True)
class Pending:
    """A challenge sent and not yet answered."""

    request: Message
    nonce: bytes
    digest: bytes
    sent: float


class Challenges:
    """The challenges sent, by session id."""

    def __init__(self) -> None:
        self._pending: dict[int, Pending] = {}
        self._next = secrets.randbelow(1 << 30) + 1

    def next_id(self) -> int:
        """A session id no challenge or session holds now (ids count up from a random
        start, and wrap)."""
        self._next = self._next % 0x7FFFFFFF + 1
        return self._next

    def new(self, request: Message, session_id: int | None = None) -> tuple[int, Pending]:
        """A challenge for *request*: its session id (*session_id*, in a session; else a new
        one) and what the answer must sign."""
        now = time.monotonic()
        while self._pending:
            oldest = next(iter(self._pending))
            if (
                len(self._pending) < MAX_PENDING
                and now - self._pending[oldest].sent < CHALLENGE_TTL
            ):
                break
            del self._pending[oldest]
        if session_id is None:
            session_id = self.next_id()
        digest = request_digest(request)
        pending = Pending(request, secrets.token_bytes(16), digest.digest, now)
        self._pending[session_id] = pending
        return session_id, pending

    def take(self, session_id: int) -> Pending | None:
        """The challenge of *session_id*, once; ``None`` when there is none or it is late."""
        pending = self._pending.pop(session_id, None)
        if pending is None or time.monotonic() - pending.sent > CHALLENGE_TTL:
            return None
        return pending


async def homes(store: Store, prefix: str) -> bool:
    """Whether the server of *store* homes *prefix*: its prefix handle ``0.NA/<prefix>`` is
    in the store (``doikit admin create --prefix`` makes it), or names under it are."""
    if await store.get(fold("0.NA/" + prefix)) is not None:
        return True
    return await store.has_prefix(fold(prefix))


class NativeAdmin:
    """Checks challenge answers and carries out the changes they authorize."""

    def __init__(
        self,
        store: Store,
        writes: Writes,
        authority: Authority,
        seal: bytes | None,
        remote: RemoteIdentities | None = None,
    ) -> None:
        self.store = store
        self.writes = writes
        self.authority = authority
        self.seal = seal
        self.remote = remote
        self._failures = Failures()  # wrong answers per handle, counted as HTTP Basic's

    async def identify(
        self, answer: ChallengeAnswerRequest, pending: Pending
    ) -> Caller | tuple[int, str]:
        """The caller *answer* proves to be, or the response code and message refusing it."""
        handle, index = answer.identity_handle, answer.identity_index

        async def check() -> str | None:
            stored = await self.store.get(fold(handle))
            if (
                stored is None
                and self.remote is not None
                and not await homes(self.store, handle.partition("/")[0])
            ):  # an identity held elsewhere: its own server says
                return await self.remote.check(answer, pending)
            data = pending.nonce + pending.digest
            return self._key_answers(stored, index, answer.auth_type, answer.signed_response, data)

        why_not = await self._judged(handle, check)
        if why_not is not None:
            return RC_AUTHENTICATION_FAILED, why_not or "the answer to the challenge is not right"
        return Caller(identity=(index, handle))

    async def proves(
        self, handle: str, index: int, auth_type: str, signed: bytes, data: bytes
    ) -> bool:
        """Whether *signed* is the answer to *data* (nonce ‖ request digest) of the key
        ``index:handle`` held here (``HS_PUBKEY`` or ``HS_SECKEY`` by *auth_type*)."""

        async def check() -> str | None:
            stored = await self.store.get(fold(handle))
            return self._key_answers(stored, index, auth_type, signed, data)

        return await self._judged(handle, check) is None

    async def _judged(self, handle: str, check: Callable[[], Awaitable[str | None]]) -> str | None:
        """*check*'s verdict on an answer for *handle* (``None``: right), failures for one
        handle answered ever later, as HTTP Basic guesses are."""
        await asyncio.sleep(failure_delay(self._failures.count(fold(handle))))
        why_not = await check()
        if why_not is None:
            self._failures.forget(fold(handle))
        else:
            self._failures.failed(fold(handle))
        return why_not

    def _key_answers(
        self, stored: StoredRecord | None, index: int, auth_type: str, signed: bytes, data: bytes
    ) -> str | None:
        """``None`` when *signed* answers *data* with the key at *index* of *stored*, else
        ``""`` (wrong)."""
        wanted = "HS_PUBKEY" if auth_type == "HS_PUBKEY" else "HS_SECKEY"
        for value in stored.values() if stored is not None and auth_type == wanted else ():
            if value.index != index or not isinstance(value.data, bytes):
                continue
            if not type_matches(value.type, wanted):
                continue
            if wanted == "HS_PUBKEY":
                right = public_answer_ok(signed, value.data, data)
            else:
                secret = unseal(value.data, self.seal)
                right = secret is not None and secret_answer_ok(signed, secret, data)
            if right:
                return None
        return ""

    async def carry_out(self, request: Message, caller: Caller) -> list[Message]:
        """The responses (without the envelope's fields) to an authenticated *request*.

        :raises Refused: with the Handle response code, as the REST API refuses.
        """
        overwrite = bool(request.op_flags & OpFlag.OVERWRITE)
        if isinstance(request, CreateHandleRequest):
            doi = bare_name(request.handle)
            await self.writes.put_record(
                caller, doi, request.values, overwrite=overwrite, params=[]
            )
            return [CreateHandleResponse(handle=request.handle)]
        if isinstance(request, AddValueRequest):
            doi = bare_name(request.handle)
            await self.writes.put_values(
                caller, doi, request.values, overwrite=overwrite, params=[]
            )
            return [SuccessResponse(request.op_code)]
        if isinstance(request, ModifyValueRequest):
            doi = bare_name(request.handle)
            stored = await self.store.get(doi.key)
            have = {v.index for v in stored.values()} if stored is not None else set()
            missing = sorted({v.index for v in request.values} - have)
            if stored is not None and missing:
                raise Refused(RC_VALUES_NOT_FOUND, f"no value at index {missing[0]}")
            await self.writes.put_values(caller, doi, request.values, overwrite=True, params=[])
            return [SuccessResponse(request.op_code)]
        if isinstance(request, RemoveValueRequest):
            doi = bare_name(request.handle)
            await self.writes.delete_as(caller, doi, list(request.indexes), [])
            return [SuccessResponse(request.op_code)]
        if isinstance(request, DeleteHandleRequest):
            await self.writes.delete_as(caller, bare_name(request.handle), [], [])
            return [SuccessResponse(request.op_code)]
        if isinstance(request, ListHandlesRequest):
            prefix = request.handle.partition("/")[2] if "/" in request.handle else request.handle
            await self.authority.may_list(caller, prefix)
            return await self._listing(prefix, ListHandlesResponse)
        if isinstance(request, HomeNARequest | UnhomeNARequest):
            await self._home(request, caller)
            return [SuccessResponse(request.op_code)]
        if isinstance(request, ListNAsRequest):
            return await self._listing("0.NA", ListNAsResponse)
        raise Refused(
            RC_OPERATION_NOT_SUPPORTED,
            f"operation {request.op_code} is not served over the native protocol",
        )

    async def _home(self, request: HomeNARequest | UnhomeNARequest, caller: Caller) -> None:
        """Home a derived prefix (its handle ``0.NA/<prefix>`` made, administered by the
        parent's admin group) or unhome it (the handle deleted, once no name is under it)."""
        handle = request.handle
        head, slash, prefix = handle.partition("/")
        if not slash or head.upper() != "0.NA" or not PREFIX_ONLY_RE.fullmatch(prefix):
            raise Refused(RC_INVALID_HANDLE, f"{handle!r} is no prefix handle as 0.NA/10.5555.1")
        home = isinstance(request, HomeNARequest)
        await self.authority.may_home(caller, prefix, home=home)
        key = fold("0.NA/" + prefix)
        stored = await self.store.get(key)
        if home:
            if stored is not None:
                return
            parent = prefix.rpartition(".")[0]
            admin = AdminData("0.NA/" + parent, 200, ALL_PERMISSIONS)
            value = HandleValue(100, "HS_ADMIN", admin, timestamp=int(time.time()))
            row = Row(key, "0.NA/" + prefix, "0.NA", values_to_json((value,)))
            if not await self.store.swap(key, None, row):
                raise Refused(RC_HANDLE_ALREADY_EXISTS, f"0.NA/{prefix} was made meanwhile")
            return
        if stored is None:
            raise Refused(RC_HANDLE_NOT_FOUND, f"{prefix} is not homed here")
        if await self.store.has_prefix(fold(prefix)):
            raise Refused(RC_INVALID_VALUE, f"names under {prefix} remain: delete them first")
        if not await self.store.swap(key, stored.values_json, None):
            raise Refused(RC_ERROR, f"0.NA/{prefix} changed meanwhile: try again")

    async def _listing(
        self, prefix: str, kind: type[ListHandlesResponse | ListNAsResponse]
    ) -> list[Message]:
        out: list[Message] = []
        offset = 0
        while offset < MAX_LISTED:
            _, names = await self.store.list_names(fold(prefix), offset, LIST_PAGE)
            out.append(kind(handles=tuple(names)))
            offset += len(names)
            if len(names) < LIST_PAGE:
                break
        return out


#: Seconds an identity's key, or its server's answer, read from elsewhere is kept (CNRI's
#: server keeps them an hour, whatever their TTL).
KEYS_KEPT: Final = 3600.0


class RemoteIdentities:
    """Identities held by other servers, checked through the Handle System from *root*
    (``None``: the published root; ``"HOST:PORT"``: a private one), as CNRI's server
    checks them (§11.3). Every answer used is signed by the server that gave it and
    verified with the key its site lists; anything that cannot be had (no service, no
    answer, a bad signature) refuses the identity, and says why in the log."""

    def __init__(self, root: str | None, *, timeout: float = 10.0) -> None:
        from doikit.client import AsyncNativeResolver  # noqa: PLC0415

        self.resolver = AsyncNativeResolver(root, timeout=timeout, certify=True)
        self.resolver.core.max_ttl = KEYS_KEPT

    async def close(self) -> None:
        """Close the resolver's sockets."""
        await self.resolver.aclose()

    async def check(self, answer: ChallengeAnswerRequest, pending: Pending) -> str | None:
        """``None`` when *answer* is right for *pending*, by the identity's own server; else
        ``""`` when it is wrong, or why it could not be checked."""
        try:
            right = await self._proves(answer, pending)
        except (ResolutionError, TransportError, HandleFormatError) as exc:
            where = f"{answer.identity_index}:{answer.identity_handle}"
            log.warning("the identity %s could not be checked: %s", where, exc)
            return f"the identity {where} could not be checked at its server: {exc}"
        return None if right else ""

    async def _proves(self, answer: ChallengeAnswerRequest, pending: Pending) -> bool:
        handle, index = answer.identity_handle, answer.identity_index
        if answer.auth_type == "HS_PUBKEY":
            record = await self.resolver.resolve(handle, indexes=(index,))
            return any(
                value.index == index
                and type_matches(value.type, "HS_PUBKEY")
                and public_answer_ok(
                    answer.signed_response,
                    data_to_wire(value.data),
                    pending.nonce + pending.digest,
                )
                for value in record.values
            )
        verify = VerifyChallengeRequest(
            handle,
            index,
            pending.nonce,
            RequestDigest(DIGEST_MD5_OLD, pending.digest),
            answer.signed_response,
        )
        return (await self.resolver.verify_challenge(verify)).valid
