"""The messages of the native Handle protocol: one class per body layout.

Every message class is a frozen dataclass; the fields common to all (ids, flags, versions,
the request digest of a response, the credential) are keyword-only and come from
:class:`_Common`. A request class has a fixed ``op_code``; a response class either has a
fixed ``op_code`` and ``response_code`` (``ResolutionResponse`` is op 1, rc 1) or carries
them (``ErrorResponse(op_code, response_code, message)``), as CNRI's decoder chooses the
body by response code first, then by op code (handle-protocol.md §7; ``Encoder.java``).
Each class writes and reads its own body; :mod:`doikit.handle._wire` does the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Final, TypeAlias

from doikit.handle._native_site import SiteInfo, put_site, read_site
from doikit.handle._native_values import put_value, read_value
from doikit.handle._protocol import RC_AUTHENTICATION_NEEDED, RC_SUCCESS
from doikit.handle._values import HandleValue, Reference
from doikit.handle._wire_codes import (
    KEY_EXCHANGE_CIPHER_CLIENT,
    KEY_EXCHANGE_CIPHER_HDL,
    KEY_EXCHANGE_CIPHER_SERVER,
    KEY_EXCHANGE_DH,
    OC_ADD_VALUE,
    OC_CREATE_HANDLE,
    OC_DELETE_HANDLE,
    OC_GET_SITE_INFO,
    OC_HOME_NA,
    OC_LIST_HANDLES,
    OC_LIST_HOMED_NAS,
    OC_MODIFY_VALUE,
    OC_REMOVE_VALUE,
    OC_RESOLUTION,
    OC_RESPONSE_TO_CHALLENGE,
    OC_SESSION_EXCHANGEKEY,
    OC_SESSION_SETUP,
    OC_SESSION_TERMINATE,
    OC_UNHOME_NA,
    OC_VERIFY_CHALLENGE,
    Credential,
    RequestDigest,
    put_digest,
    read_digest,
)
from doikit.handle._wire_primitives import (
    MAX_HANDLE_LENGTH,
    MAX_HANDLE_VALUES,
    HandleWireError,
    Reader,
    put_block,
    put_i32,
    put_ints,
    put_text,
    put_texts,
    put_u16,
)

# --- messages -------------------------------------------------------------------------------

Body: TypeAlias = dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Common:
    """What every message has besides its body: envelope and header fields, the request
    digest (responses with ``OpFlag.REQUEST_DIGEST`` only) and the credential."""

    request_id: int = 0
    session_id: int = 0
    op_flags: int = 0
    site_info_serial: int = -1
    recursion_count: int = 0
    expiration: int = 0
    version: tuple[int, int] = (2, 11)
    suggested_version: tuple[int, int] = (2, 11)
    envelope_flags: int = 0
    request_digest: RequestDigest | None = None
    credential: Credential | None = None

    def put_body(self, out: bytearray) -> None:
        """Append the body (after any request digest)."""
        raise NotImplementedError


def _read_values(r: Reader, limit: int | None = None) -> tuple[HandleValue, ...]:
    n = r.count("values", 26) if limit is None else r.count("values", 26, limit)
    return tuple(read_value(r, f"values[{i}]") for i in range(n))


def _put_values(out: bytearray, values: tuple[HandleValue, ...]) -> None:
    put_i32(out, len(values), "values")
    for i, value in enumerate(values):
        put_value(out, value, f"values[{i}]")


# Requests -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _HandleRequest(_Common):
    handle: str
    response_code: ClassVar[int] = 0

    def put_body(self, out: bytearray) -> None:
        put_text(out, self.handle, "handle")

    @staticmethod
    def read_body(r: Reader) -> Body:
        return {"handle": r.text("handle")}


@dataclass(frozen=True, slots=True)
class GetSiteInfoRequest(_HandleRequest):
    """GET_SITE_INFO (2): CNRI's clients ask with the handle ``/``."""

    handle: str = "/"
    op_code: ClassVar[int] = OC_GET_SITE_INFO


@dataclass(frozen=True, slots=True)
class DeleteHandleRequest(_HandleRequest):
    """DELETE_HANDLE (101)."""

    op_code: ClassVar[int] = OC_DELETE_HANDLE


@dataclass(frozen=True, slots=True)
class ListHandlesRequest(_HandleRequest):
    """LIST_HANDLES (105) of a prefix, named by its prefix handle (``0.NA/10.5555``)."""

    op_code: ClassVar[int] = OC_LIST_HANDLES


@dataclass(frozen=True, slots=True)
class HomeNARequest(_HandleRequest):
    """HOME_NA (300): make this server home a prefix (``0.NA/10.5555``)."""

    op_code: ClassVar[int] = OC_HOME_NA


@dataclass(frozen=True, slots=True)
class UnhomeNARequest(_HandleRequest):
    """UNHOME_NA (301)."""

    op_code: ClassVar[int] = OC_UNHOME_NA


@dataclass(frozen=True, slots=True)
class ListNAsRequest(_HandleRequest):
    """LIST_HOMED_NAS (302): the prefixes a server homes; CNRI's clients send ``/``."""

    handle: str = "/"
    op_code: ClassVar[int] = OC_LIST_HOMED_NAS


@dataclass(frozen=True, slots=True)
class SessionTerminateRequest(_HandleRequest):
    """SESSION_TERMINATE (401)."""

    handle: str = ""
    op_code: ClassVar[int] = OC_SESSION_TERMINATE


@dataclass(frozen=True, slots=True)
class ResolutionRequest(_Common):
    """RESOLUTION (1): the values of *handle* with any of *indexes* or *types* (all when
    both are empty; a type ending in ``.`` also asks for its subtypes)."""

    handle: str
    indexes: tuple[int, ...] = ()
    types: tuple[str, ...] = ()
    op_code: ClassVar[int] = OC_RESOLUTION
    response_code: ClassVar[int] = 0

    def put_body(self, out: bytearray) -> None:
        put_text(out, self.handle, "handle")
        put_ints(out, self.indexes, "indexes")
        put_texts(out, self.types, "types")

    @staticmethod
    def read_body(r: Reader) -> Body:
        return {"handle": r.text("handle"), "indexes": r.ints("indexes"), "types": r.texts("types")}


@dataclass(frozen=True, slots=True)
class _ValuesRequest(_Common):
    handle: str
    values: tuple[HandleValue, ...]
    response_code: ClassVar[int] = 0

    def put_body(self, out: bytearray) -> None:
        put_text(out, self.handle, "handle")
        _put_values(out, self.values)

    @staticmethod
    def read_body(r: Reader) -> Body:
        return {"handle": r.text("handle"), "values": _read_values(r)}


@dataclass(frozen=True, slots=True)
class CreateHandleRequest(_ValuesRequest):
    """CREATE_HANDLE (100) with its first values (``OpFlag.MINT_SUFFIX``: the server
    mints the suffix; ``OpFlag.OVERWRITE``: replace an existing handle)."""

    op_code: ClassVar[int] = OC_CREATE_HANDLE


@dataclass(frozen=True, slots=True)
class AddValueRequest(_ValuesRequest):
    """ADD_VALUE (102)."""

    op_code: ClassVar[int] = OC_ADD_VALUE


@dataclass(frozen=True, slots=True)
class ModifyValueRequest(_ValuesRequest):
    """MODIFY_VALUE (104): the values replace those with the same indexes."""

    op_code: ClassVar[int] = OC_MODIFY_VALUE


@dataclass(frozen=True, slots=True)
class RemoveValueRequest(_Common):
    """REMOVE_VALUE (103) of the values at *indexes*."""

    handle: str
    indexes: tuple[int, ...]
    op_code: ClassVar[int] = OC_REMOVE_VALUE
    response_code: ClassVar[int] = 0

    def put_body(self, out: bytearray) -> None:
        put_text(out, self.handle, "handle")
        put_ints(out, self.indexes, "indexes")

    @staticmethod
    def read_body(r: Reader) -> Body:
        return {"handle": r.text("handle"), "indexes": r.ints("indexes")}


@dataclass(frozen=True, slots=True)
class ChallengeAnswerRequest(_Common):
    """RESPONSE_TO_CHALLENGE (200): the answer to a 402, signed or MAC'd by the identity
    ``identity_index:identity_handle``; ``auth_type`` is ``HS_SECKEY`` or ``HS_PUBKEY``.
    It carries the challenge's session id (§11.1)."""

    auth_type: str
    identity_handle: str
    identity_index: int
    signed_response: bytes
    op_code: ClassVar[int] = OC_RESPONSE_TO_CHALLENGE
    response_code: ClassVar[int] = 0

    def put_body(self, out: bytearray) -> None:
        put_text(out, self.auth_type, "auth_type")
        put_text(out, self.identity_handle, "identity_handle")
        put_i32(out, self.identity_index, "identity_index")
        put_block(out, self.signed_response, "signed_response")

    @staticmethod
    def read_body(r: Reader) -> Body:
        return {
            "auth_type": r.text("auth_type"),
            "identity_handle": r.text("identity_handle"),
            "identity_index": r.i32("identity_index"),
            "signed_response": r.block("signed_response"),
        }


@dataclass(frozen=True, slots=True)
class VerifyChallengeRequest(_Common):
    """VERIFY_CHALLENGE (201): one server asks the identity's own server whether a
    secret-key answer is right. CNRI writes the digest in the old form (alg 0)."""

    identity_handle: str
    identity_index: int
    nonce: bytes
    challenge_digest: RequestDigest
    signed_response: bytes
    op_code: ClassVar[int] = OC_VERIFY_CHALLENGE
    response_code: ClassVar[int] = 0

    def put_body(self, out: bytearray) -> None:
        put_text(out, self.identity_handle, "identity_handle")
        put_i32(out, self.identity_index, "identity_index")
        put_block(out, self.nonce, "nonce")
        put_digest(out, self.challenge_digest, "challenge_digest")
        put_block(out, self.signed_response, "signed_response")

    @staticmethod
    def read_body(r: Reader) -> Body:
        return {
            "identity_handle": r.text("identity_handle"),
            "identity_index": r.i32("identity_index"),
            "nonce": r.block("nonce"),
            "challenge_digest": read_digest(r, "challenge_digest"),
            "signed_response": r.block("signed_response"),
        }


_SPARE: Final = b"\x00\x00"


def _read_spare(r: Reader) -> None:
    # CNRI writes the mode as an int2 but counts 4 bytes: the body ends in 2 spare zero bytes.
    if r.raw(2, "spare") != _SPARE:
        raise r.fail("spare", "the 2 spare bytes after a session body are not zero", r.pos - 2)


@dataclass(frozen=True, slots=True)
class SessionSetupRequest(_Common):
    """SESSION_SETUP (400). ``exchange`` is the client's key blob for modes 1 and 4
    (``DH_PUB_KEY`` for 4, Diffie-Hellman), the key's handle and index for mode 3, and
    ``None`` for mode 2."""

    key_exchange_mode: int
    timeout: int
    identity_handle: str
    identity_index: int
    exchange: bytes | Reference | None = None
    op_code: ClassVar[int] = OC_SESSION_SETUP
    response_code: ClassVar[int] = 0

    def put_body(self, out: bytearray) -> None:
        mode, exchange = self.key_exchange_mode, self.exchange
        wanted = {1: bytes, 4: bytes, 3: Reference, 2: type(None)}.get(mode)
        if wanted is None or not isinstance(exchange, wanted):
            detail = f"mode {mode} with {type(exchange).__name__}"
            raise HandleWireError(
                f"{detail}: 1, 4 take bytes, 3 a Reference, 2 None", field="exchange"
            )
        put_u16(out, mode, "key_exchange_mode")
        put_i32(out, self.timeout, "timeout")
        put_text(out, self.identity_handle, "identity_handle")
        put_i32(out, self.identity_index, "identity_index")
        if isinstance(exchange, bytes):
            put_block(out, exchange, "exchange")
        elif isinstance(exchange, Reference):
            put_text(out, exchange.handle, "exchange.handle")
            put_i32(out, exchange.index, "exchange.index")
        out += _SPARE

    @staticmethod
    def read_body(r: Reader) -> Body:
        at = r.pos
        mode = r.u16("key_exchange_mode")
        body: Body = {
            "key_exchange_mode": mode,
            "timeout": r.i32("timeout"),
            "identity_handle": r.text("identity_handle"),
            "identity_index": r.i32("identity_index"),
        }
        if mode in (KEY_EXCHANGE_CIPHER_CLIENT, KEY_EXCHANGE_DH):
            body["exchange"] = r.block("exchange")
        elif mode == KEY_EXCHANGE_CIPHER_HDL:
            body["exchange"] = Reference(r.text("exchange.handle"), r.i32("exchange.index"))
        elif mode != KEY_EXCHANGE_CIPHER_SERVER:
            raise r.fail("key_exchange_mode", f"unknown key exchange mode {mode}", at)
        _read_spare(r)
        return body


@dataclass(frozen=True, slots=True)
class SessionExchangeKeyRequest(_Common):
    """SESSION_EXCHANGEKEY (402): an encrypted session key (``None``: an empty body)."""

    encrypted_key: bytes | None
    op_code: ClassVar[int] = OC_SESSION_EXCHANGEKEY
    response_code: ClassVar[int] = 0

    def put_body(self, out: bytearray) -> None:
        if self.encrypted_key is not None:
            put_block(out, self.encrypted_key, "encrypted_key")

    @staticmethod
    def read_body(r: Reader) -> Body:
        return {"encrypted_key": r.block("encrypted_key") if r.left else None}


# Responses ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResolutionResponse(_Common):
    """The values of a handle (op 1, rc 1); ``handle`` echoes the request's string."""

    handle: str
    values: tuple[HandleValue, ...]
    op_code: ClassVar[int] = OC_RESOLUTION
    response_code: ClassVar[int] = RC_SUCCESS

    def put_body(self, out: bytearray) -> None:
        put_text(out, self.handle, "handle")
        _put_values(out, self.values)

    @staticmethod
    def read_body(r: Reader) -> Body:
        handle = r.text("handle", MAX_HANDLE_LENGTH)
        return {"handle": handle, "values": _read_values(r, MAX_HANDLE_VALUES)}


@dataclass(frozen=True, slots=True)
class SiteInfoResponse(_Common):
    """The answer to GET_SITE_INFO (op 2, rc 1): the server's site record, to the body's end."""

    site: SiteInfo
    op_code: ClassVar[int] = OC_GET_SITE_INFO
    response_code: ClassVar[int] = RC_SUCCESS

    def put_body(self, out: bytearray) -> None:
        put_site(out, self.site)

    @staticmethod
    def read_body(r: Reader) -> Body:
        return {"site": read_site(r)}


@dataclass(frozen=True, slots=True)
class CreateHandleResponse(_Common):
    """CREATE_HANDLE done (op 100, rc 1), with the created (or minted) handle if given."""

    handle: str | None = None
    op_code: ClassVar[int] = OC_CREATE_HANDLE
    response_code: ClassVar[int] = RC_SUCCESS

    def put_body(self, out: bytearray) -> None:
        if self.handle is not None:
            put_text(out, self.handle, "handle")

    @staticmethod
    def read_body(r: Reader) -> Body:
        return {"handle": r.text("handle", MAX_HANDLE_LENGTH) if r.left else None}


@dataclass(frozen=True, slots=True)
class _HandlesResponse(_Common):
    handles: tuple[str, ...]
    response_code: ClassVar[int] = RC_SUCCESS

    def put_body(self, out: bytearray) -> None:
        put_texts(out, self.handles, "handles")

    @staticmethod
    def read_body(r: Reader) -> Body:
        return {"handles": r.texts("handles")}


@dataclass(frozen=True, slots=True)
class ListHandlesResponse(_HandlesResponse):
    """Handles of a prefix (op 105, rc 1); all but the last message of a listing carry
    ``OpFlag.CONTINUOUS``."""

    op_code: ClassVar[int] = OC_LIST_HANDLES


@dataclass(frozen=True, slots=True)
class ListNAsResponse(_HandlesResponse):
    """Prefix handles a server homes (op 302, rc 1), streamed like :class:`ListHandlesResponse`."""

    op_code: ClassVar[int] = OC_LIST_HOMED_NAS


@dataclass(frozen=True, slots=True)
class VerifyChallengeResponse(_Common):
    """The answer to VERIFY_CHALLENGE (op 201, rc 1): whether the answer was right."""

    valid: bool
    op_code: ClassVar[int] = OC_VERIFY_CHALLENGE
    response_code: ClassVar[int] = RC_SUCCESS

    def put_body(self, out: bytearray) -> None:
        out.append(1 if self.valid else 0)

    @staticmethod
    def read_body(r: Reader) -> Body:
        at = r.pos
        flag = r.u8("valid")
        if flag > 1:
            raise r.fail("valid", f"must be 0 or 1, not {flag}", at)
        return {"valid": flag == 1}


@dataclass(frozen=True, slots=True)
class SessionSetupResponse(_Common):
    """SESSION_SETUP done (op 400, rc 1): for Diffie-Hellman, ``data`` is ``int4`` session
    key algorithm (3 = AES) + the server's ``DH_PUB_KEY`` blob; the answer opens the session
    with a fresh session id."""

    key_exchange_mode: int
    data: bytes
    op_code: ClassVar[int] = OC_SESSION_SETUP
    response_code: ClassVar[int] = RC_SUCCESS

    def put_body(self, out: bytearray) -> None:
        put_u16(out, self.key_exchange_mode, "key_exchange_mode")
        put_block(out, self.data, "data")
        out += _SPARE

    @staticmethod
    def read_body(r: Reader) -> Body:
        body = {"key_exchange_mode": r.u16("key_exchange_mode"), "data": r.block("data")}
        _read_spare(r)
        return body


#: The operations whose success has no body but the request digest.
SUCCESS_WITHOUT_BODY: Final = frozenset(
    {
        OC_DELETE_HANDLE,
        OC_ADD_VALUE,
        OC_REMOVE_VALUE,
        OC_MODIFY_VALUE,
        OC_HOME_NA,
        OC_UNHOME_NA,
        OC_SESSION_TERMINATE,
        OC_SESSION_EXCHANGEKEY,
    }
)


@dataclass(frozen=True, slots=True)
class SuccessResponse(_Common):
    """Success without a body (rc 1) of delete, add, remove, modify, home, unhome,
    session terminate and session exchange-key."""

    op_code: int
    response_code: ClassVar[int] = RC_SUCCESS

    def put_body(self, out: bytearray) -> None:  # noqa: ARG002 - the layout writes nothing
        if self.op_code not in SUCCESS_WITHOUT_BODY:
            raise HandleWireError(
                f"op {self.op_code} has a success body of its own", field="op_code"
            )

    @staticmethod
    def read_body(r: Reader) -> Body:  # noqa: ARG004 - the layout reads nothing
        return {}


@dataclass(frozen=True, slots=True)
class ChallengeResponse(_Common):
    """The challenge (rc 402) to a request of ``op_code``: a nonce; the request's digest is
    the ``request_digest`` (RD is set), and ``session_id`` names the pending challenge."""

    op_code: int
    nonce: bytes
    response_code: ClassVar[int] = RC_AUTHENTICATION_NEEDED

    def put_body(self, out: bytearray) -> None:
        put_block(out, self.nonce, "nonce")

    @staticmethod
    def read_body(r: Reader) -> Body:
        return {"nonce": r.block("nonce")}


@dataclass(frozen=True, slots=True)
class ReferralResponse(_Common):
    """A referral (rc 302 service, 303 prefix): ``handle`` names the service or prefix
    handle (may be empty); ``values`` are HS_SITE/HS_SERV values, or ``None`` when absent."""

    op_code: int
    response_code: int
    handle: str
    values: tuple[HandleValue, ...] | None = None

    def put_body(self, out: bytearray) -> None:
        put_text(out, self.handle, "handle")
        if self.values is not None:
            _put_values(out, self.values)

    @staticmethod
    def read_body(r: Reader) -> Body:
        handle = r.text("handle", MAX_HANDLE_LENGTH)
        return {"handle": handle, "values": _read_values(r, MAX_HANDLE_VALUES) if r.left else None}


@dataclass(frozen=True, slots=True)
class ErrorResponse(_Common):
    """Any other response code, with a message (CNRI's is often empty). ``indexes`` is the
    DO-IRP "error indices" list after the message, ``None`` when absent (CNRI's case). Before
    protocol 2.5, 303 was SERVER_BACKUP and has this layout (CNRI reads it as 7)."""

    op_code: int
    response_code: int
    message: str = ""
    indexes: tuple[int, ...] | None = None

    def put_body(self, out: bytearray) -> None:
        put_text(out, self.message, "message")
        if self.indexes is not None:
            put_ints(out, self.indexes, "indexes")

    @staticmethod
    def read_body(r: Reader) -> Body:
        message = r.text("message")
        return {"message": message, "indexes": r.ints("indexes") if r.left else None}


#: Any message of the protocol.
Message: TypeAlias = (
    ResolutionRequest
    | GetSiteInfoRequest
    | CreateHandleRequest
    | DeleteHandleRequest
    | AddValueRequest
    | RemoveValueRequest
    | ModifyValueRequest
    | ListHandlesRequest
    | ChallengeAnswerRequest
    | VerifyChallengeRequest
    | HomeNARequest
    | UnhomeNARequest
    | ListNAsRequest
    | SessionSetupRequest
    | SessionTerminateRequest
    | SessionExchangeKeyRequest
    | ResolutionResponse
    | SiteInfoResponse
    | CreateHandleResponse
    | ListHandlesResponse
    | ListNAsResponse
    | VerifyChallengeResponse
    | SessionSetupResponse
    | SuccessResponse
    | ChallengeResponse
    | ReferralResponse
    | ErrorResponse
)

#: The request classes by op code.
REQUESTS: Final[dict[int, type[Message]]] = {
    cls.op_code: cls
    for cls in (
        ResolutionRequest,
        GetSiteInfoRequest,
        CreateHandleRequest,
        DeleteHandleRequest,
        AddValueRequest,
        RemoveValueRequest,
        ModifyValueRequest,
        ListHandlesRequest,
        ChallengeAnswerRequest,
        VerifyChallengeRequest,
        HomeNARequest,
        UnhomeNARequest,
        ListNAsRequest,
        SessionSetupRequest,
        SessionTerminateRequest,
        SessionExchangeKeyRequest,
    )
}
#: The rc 1 classes with a body of their own, by op code.
SUCCESSES: Final[dict[int, type[Message]]] = {
    cls.op_code: cls
    for cls in (
        ResolutionResponse,
        SiteInfoResponse,
        CreateHandleResponse,
        ListHandlesResponse,
        ListNAsResponse,
        VerifyChallengeResponse,
        SessionSetupResponse,
    )
}
