"""The codes and small layouts of the native Handle protocol: op codes, response codes, flags,
request digests, the credential section, and the signed answers to a challenge.

The names are CNRI's (``hdllib/AbstractMessage.java``, ``Common.java``); the layouts are those of
handle-protocol.md §4, §5, §7, §8 and §11.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from doikit.handle._protocol import (
    RC_AUTHENTICATION_NEEDED,
    RC_ERROR,
    RC_HANDLE_ALREADY_EXISTS,
    RC_HANDLE_NOT_FOUND,
    RC_INSUFFICIENT_PERMISSIONS,
    RC_INVALID_HANDLE,
    RC_INVALID_VALUE,
    RC_PROTOCOL_ERROR,
    RC_SUCCESS,
    RC_VALUES_NOT_FOUND,
)
from doikit.handle._wire_primitives import (
    HandleWireError,
    Reader,
    encode_text,
    put_block,
    put_i32,
    put_text,
    put_u8,
    put_u16,
)

# --- op codes (§7) --------------------------------------------------------------------------

OC_RESOLUTION: Final = 1
OC_GET_SITE_INFO: Final = 2
OC_CREATE_HANDLE: Final = 100
OC_DELETE_HANDLE: Final = 101
OC_ADD_VALUE: Final = 102
OC_REMOVE_VALUE: Final = 103
OC_MODIFY_VALUE: Final = 104
OC_LIST_HANDLES: Final = 105
OC_RESPONSE_TO_CHALLENGE: Final = 200
OC_VERIFY_CHALLENGE: Final = 201
OC_HOME_NA: Final = 300
OC_UNHOME_NA: Final = 301
OC_LIST_HOMED_NAS: Final = 302
OC_SESSION_SETUP: Final = 400
OC_SESSION_TERMINATE: Final = 401
OC_SESSION_EXCHANGEKEY: Final = 402

# --- response codes (§8); the ten the REST API shares are defined in _protocol --------------

RC_SERVER_TOO_BUSY: Final = 3
RC_OPERATION_NOT_SUPPORTED: Final = 5
RC_RECURSION_COUNT_TOO_HIGH: Final = 6
RC_SERVER_BACKUP: Final = 7
RC_VALUE_ALREADY_EXISTS: Final = 201
RC_OUT_OF_DATE_SITE_INFO: Final = 300
RC_SERVER_NOT_RESP: Final = 301
RC_SERVICE_REFERRAL: Final = 302
RC_PREFIX_REFERRAL: Final = 303
RC_INVALID_ADMIN: Final = 400
RC_AUTHENTICATION_FAILED: Final = 403
RC_INVALID_CREDENTIAL: Final = 404
RC_AUTHEN_TIMEOUT: Final = 405
RC_AUTHEN_ERROR: Final = 406
RC_SESSION_TIMEOUT: Final = 500
RC_SESSION_FAILED: Final = 501
RC_INVALID_SESSION_KEY: Final = 502
RC_NEED_RSAKEY_FOR_SESSIONEXCHANGE: Final = 503
RC_INVALID_SESSIONSETUP_REQUEST: Final = 504
RC_SESSION_MESSAGE_REJECTED: Final = 505

#: Every response code CNRI's decoder knows, with its CNRI name; no other may be sent.
RESPONSE_CODES: Final[dict[int, str]] = {
    RC_SUCCESS: "SUCCESS",
    RC_ERROR: "ERROR",
    RC_SERVER_TOO_BUSY: "SERVER_TOO_BUSY",
    RC_PROTOCOL_ERROR: "PROTOCOL_ERROR",
    RC_OPERATION_NOT_SUPPORTED: "OPERATION_NOT_SUPPORTED",
    RC_RECURSION_COUNT_TOO_HIGH: "RECURSION_COUNT_TOO_HIGH",
    RC_SERVER_BACKUP: "SERVER_BACKUP",
    RC_HANDLE_NOT_FOUND: "HANDLE_NOT_FOUND",
    RC_HANDLE_ALREADY_EXISTS: "HANDLE_ALREADY_EXISTS",
    RC_INVALID_HANDLE: "INVALID_HANDLE",
    RC_VALUES_NOT_FOUND: "VALUES_NOT_FOUND",
    RC_VALUE_ALREADY_EXISTS: "VALUE_ALREADY_EXISTS",
    RC_INVALID_VALUE: "INVALID_VALUE",
    RC_OUT_OF_DATE_SITE_INFO: "OUT_OF_DATE_SITE_INFO",
    RC_SERVER_NOT_RESP: "SERVER_NOT_RESP",
    RC_SERVICE_REFERRAL: "SERVICE_REFERRAL",
    RC_PREFIX_REFERRAL: "PREFIX_REFERRAL",
    RC_INVALID_ADMIN: "INVALID_ADMIN",
    RC_INSUFFICIENT_PERMISSIONS: "INSUFFICIENT_PERMISSIONS",
    RC_AUTHENTICATION_NEEDED: "AUTHENTICATION_NEEDED",
    RC_AUTHENTICATION_FAILED: "AUTHENTICATION_FAILED",
    RC_INVALID_CREDENTIAL: "INVALID_CREDENTIAL",
    RC_AUTHEN_TIMEOUT: "AUTHEN_TIMEOUT",
    RC_AUTHEN_ERROR: "AUTHEN_ERROR",
    RC_SESSION_TIMEOUT: "SESSION_TIMEOUT",
    RC_SESSION_FAILED: "SESSION_FAILED",
    RC_INVALID_SESSION_KEY: "INVALID_SESSION_KEY",
    RC_NEED_RSAKEY_FOR_SESSIONEXCHANGE: "NEED_RSAKEY_FOR_SESSIONEXCHANGE",
    RC_INVALID_SESSIONSETUP_REQUEST: "INVALID_SESSIONSETUP_REQUEST",
    RC_SESSION_MESSAGE_REJECTED: "SESSION_MESSAGE_REJECTED",
}
#: The codes whose body is an error message (all but success, 402 and the referrals).
ERROR_CODES: Final = frozenset(RESPONSE_CODES) - {
    RC_SUCCESS,
    RC_AUTHENTICATION_NEEDED,
    RC_SERVICE_REFERRAL,
    RC_PREFIX_REFERRAL,
}


class OpFlag(enum.IntFlag):
    """The header's OpFlag bits (§4); unknown bits are kept."""

    AUTHORITATIVE = 0x80000000
    CERTIFY = 0x40000000
    ENCRYPT = 0x20000000
    RECURSIVE = 0x10000000
    CACHE_CERTIFY = 0x08000000
    CONTINUOUS = 0x04000000
    KEEP_ALIVE = 0x02000000
    PUBLIC_ONLY = 0x01000000
    REQUEST_DIGEST = 0x00800000
    OVERWRITE = 0x00400000
    MINT_SUFFIX = 0x00200000
    DO_NOT_REFER = 0x00100000


class EnvelopeFlag(enum.IntFlag):
    """The envelope's flag bits (the top three bits of its third byte)."""

    COMPRESSED = 0x80
    ENCRYPTED = 0x40
    TRUNCATED = 0x20


#: Request-digest algorithms (§5): 0 is the old form, a length-prefixed MD5 digest.
DIGEST_MD5_OLD: Final = 0
DIGEST_MD5: Final = 1
DIGEST_SHA1: Final = 2
DIGEST_SHA256: Final = 3
_DIGEST_SIZES: Final = {DIGEST_MD5: 16, DIGEST_SHA1: 20, DIGEST_SHA256: 32}

#: Session key-exchange modes (SESSION_SETUP, §7, §12).
KEY_EXCHANGE_CIPHER_CLIENT: Final = 1
KEY_EXCHANGE_CIPHER_SERVER: Final = 2
KEY_EXCHANGE_CIPHER_HDL: Final = 3
KEY_EXCHANGE_DH: Final = 4


@dataclass(frozen=True, slots=True)
class RequestDigest:
    """A digest of a request's header and body: ``alg`` (``DIGEST_*``) and the digest."""

    alg: int
    digest: bytes


def read_digest(r: Reader, field: str) -> RequestDigest:
    """``int1 alg`` + a digest of that algorithm's size; alg 0 is ``S digest`` (its first
    byte is the length's, so CNRI reads it that way)."""
    at = r.pos
    alg = r.u8(f"{field}.alg")
    if alg == DIGEST_MD5_OLD:
        r.pos = at
        return RequestDigest(alg, r.block(field))
    size = _DIGEST_SIZES.get(alg)
    if size is None:
        raise r.fail(f"{field}.alg", f"unknown digest algorithm {alg}", at)
    return RequestDigest(alg, r.raw(size, field))


def put_digest(out: bytearray, value: RequestDigest, field: str) -> None:
    """Append a request digest."""
    if value.alg == DIGEST_MD5_OLD:
        put_block(out, value.digest, field)
        return
    size = _DIGEST_SIZES.get(value.alg)
    if size is None or len(value.digest) != size:
        detail = f"algorithm {value.alg} with a digest of {len(value.digest)} bytes"
        raise HandleWireError(f"{detail}; the sizes are {_DIGEST_SIZES}", field=field)
    out.append(value.alg)
    out += value.digest


@dataclass(frozen=True, slots=True)
class Credential:
    """A message's credential section (§5, §13): a signature (``HS_SIGNED``) or a session
    MAC (``HS_MAC``), with its algorithm name (``SHA-256``, ``HMAC-SHA256``, …). ``counter``
    is the signer-index field, which CNRI uses for the session counter."""

    type: str
    digest_alg: str
    signature: bytes
    counter: int = 0
    signer_handle: str = ""
    version: int = 0
    reserved: int = 0
    options: int = 0


def read_credential(r: Reader) -> Credential:
    """The credential bytes (without their int4 length) from *r*."""
    version = r.u8("credential.version")
    reserved = r.u8("credential.reserved")
    options = r.u16("credential.options")
    signer_handle = r.text("credential.signer_handle")
    counter = r.i32("credential.counter")
    type_ = r.text("credential.type")
    at = r.pos
    size = r.length("credential.signed_info")
    digest_alg = r.text("credential.digest_alg")
    signature = r.block("credential.signature")
    if size != 8 + len(digest_alg.encode()) + len(signature):
        raise r.fail("credential.signed_info", f"length {size} is not that of its fields", at)
    return Credential(
        type_, digest_alg, signature, counter, signer_handle, version, reserved, options
    )


def put_credential(out: bytearray, cred: Credential) -> None:
    """Append the credential bytes (without their int4 length)."""
    put_u8(out, cred.version, "credential.version")
    put_u8(out, cred.reserved, "credential.reserved")
    put_u16(out, cred.options, "credential.options")
    put_text(out, cred.signer_handle, "credential.signer_handle")
    put_i32(out, cred.counter, "credential.counter")
    put_text(out, cred.type, "credential.type")
    alg = encode_text(cred.digest_alg, "credential.digest_alg")
    put_i32(out, 8 + len(alg) + len(cred.signature), "credential.signed_info")
    put_block(out, alg, "credential.digest_alg")
    put_block(out, cred.signature, "credential.signature")


# --- answers to a challenge (§11.2, §11.3) --------------------------------------------------

#: Secret-key answer algorithms (the first byte of an HS_SECKEY answer).
SECRET_MD5: Final = 0x01
SECRET_SHA1: Final = 0x02
SECRET_SHA256: Final = 0x03
SECRET_HMAC_SHA1: Final = 0x12
SECRET_HMAC_SHA256: Final = 0x13
SECRET_PBKDF2_HMAC_SHA1: Final = 0x22


@dataclass(frozen=True, slots=True)
class SecretKeyAnswer:
    """The ``signed_response`` of an ``HS_SECKEY`` answer from protocol 2.1 on: ``int1 alg``
    + the MAC of ``nonce ‖ request digest``; for PBKDF2 (``0x22``, CNRI 9's default) the
    salt, iteration count and key length in bits come first (``S``, ``int4``, ``int4``)."""

    alg: int
    mac: bytes
    salt: bytes = b""
    iterations: int = 0
    key_bits: int = 0


def _read_secret_answer(r: Reader) -> SecretKeyAnswer:
    alg = r.u8("answer.alg")
    if alg != SECRET_PBKDF2_HMAC_SHA1:
        return SecretKeyAnswer(alg, r.raw(r.left, "answer.mac"))
    salt = r.block("answer.salt")
    iterations = r.i32("answer.iterations")
    key_bits = r.i32("answer.key_bits")
    return SecretKeyAnswer(alg, r.block("answer.mac"), salt, iterations, key_bits)


def secret_answer_from_bytes(data: bytes) -> SecretKeyAnswer:
    """Read a secret-key answer.

    :raises HandleWireError: when it is empty, or a PBKDF2 answer does not fit its layout.
    """
    r = Reader(data)
    answer = _read_secret_answer(r)
    r.done("secret-key answer")
    return answer


def secret_answer_to_bytes(answer: SecretKeyAnswer) -> bytes:
    """The bytes of a secret-key answer."""
    out = bytearray()
    put_u8(out, answer.alg, "answer.alg")
    if answer.alg == SECRET_PBKDF2_HMAC_SHA1:
        put_block(out, answer.salt, "answer.salt")
        put_i32(out, answer.iterations, "answer.iterations")
        put_i32(out, answer.key_bits, "answer.key_bits")
        put_block(out, answer.mac, "answer.mac")
    else:
        out += answer.mac
    return bytes(out)


@dataclass(frozen=True, slots=True)
class PublicKeyAnswer:
    """The ``signed_response`` of an ``HS_PUBKEY`` answer: the hash's name (CNRI 9 sends
    ``SHA-256``) and the signature of ``nonce ‖ request digest`` (PKCS#1 v1.5 for RSA, DER
    ``SEQUENCE{r, s}`` for DSA)."""

    hash_alg: str
    signature: bytes


def public_answer_from_bytes(data: bytes) -> PublicKeyAnswer:
    """Read a public-key answer: ``S hash name`` + ``S signature``.

    :raises HandleWireError: when *data* is not exactly that.
    """
    r = Reader(data)
    answer = PublicKeyAnswer(r.text("answer.hash_alg"), r.block("answer.signature"))
    r.done("public-key answer")
    return answer


def public_answer_to_bytes(answer: PublicKeyAnswer) -> bytes:
    """The bytes of a public-key answer."""
    out = bytearray()
    put_text(out, answer.hash_alg, "answer.hash_alg")
    put_block(out, answer.signature, "answer.signature")
    return bytes(out)
