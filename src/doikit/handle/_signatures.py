"""Checking a signature by an ``HS_PUBKEY`` or a server key (RSA PKCS#1 v1.5 or DSA, over
SHA-256 or SHA-1), in one place: a signed answer (``HS_SIGNED``, §13) checked by a
resolver, and a public-key answer to a challenge (§11.1) checked by a handle server. Needs
``cryptography``, imported when a signature is checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from doikit.handle._native_site import DSAPublicKey, RSAPublicKey, public_key_from_bytes
from doikit.handle._values import HandleFormatError
from doikit.handle._wire import signed_content

if TYPE_CHECKING:
    from doikit.handle._native_site import PublicKey
    from doikit.handle._wire_messages import Message

# The hash names CNRI writes (``SHA-256`` in HANDLE.NET 9), to the two it signs with.
_HASHES: Final = {"SHA-256": "SHA256", "SHA256": "SHA256", "SHA-1": "SHA1", "SHA1": "SHA1"}


def signature_error(key: PublicKey, signature: bytes, content: bytes, hash_alg: str) -> str | None:
    """Why *signature* is not *key*'s signature of *content* with the hash *hash_alg*, or
    ``None`` when it is."""
    name = _HASHES.get(hash_alg.upper())
    if name is None:
        return f"unknown signature hash {hash_alg!r}"
    try:
        from cryptography.exceptions import InvalidSignature  # noqa: PLC0415
        from cryptography.hazmat.primitives import hashes  # noqa: PLC0415
        from cryptography.hazmat.primitives.asymmetric import dsa, padding, rsa  # noqa: PLC0415
    except ImportError:  # pragma: no cover - installed with the client and server extras
        return "checking signatures needs the cryptography package"
    algorithm = hashes.SHA256() if name == "SHA256" else hashes.SHA1()  # noqa: S303 - as signed
    try:
        if isinstance(key, RSAPublicKey):
            rsa.RSAPublicNumbers(key.e, key.n).public_key().verify(
                signature, content, padding.PKCS1v15(), algorithm
            )
        elif isinstance(key, DSAPublicKey):
            params = dsa.DSAParameterNumbers(key.p, key.q, key.g)
            dsa.DSAPublicNumbers(key.y, params).public_key().verify(signature, content, algorithm)
        else:
            return "the key cannot sign (a DH key)"
    except InvalidSignature:
        return "the signature does not verify with the key"
    except ValueError as exc:
        return f"the key is unusable: {exc}"
    return None


def signature_problem(reply: Message, key_blob: bytes) -> str | None:
    """What is wrong with the ``HS_SIGNED`` credential of *reply* checked against the key
    blob *key_blob* (over :func:`~doikit.handle.signed_content`), or ``None`` when the
    signature verifies."""
    cred = reply.credential
    if cred is None or cred.type != "HS_SIGNED":
        return "the answer is not signed (asked to certify)"
    if not key_blob:
        return "its site lists no public key to check the signature with"
    try:
        key = public_key_from_bytes(key_blob)
        content = signed_content(reply, cred.counter)
    except HandleFormatError as exc:
        return f"cannot check the signature: {exc}"
    problem = signature_error(key, cred.signature, content, cred.digest_alg)
    if problem == "the signature does not verify with the key":
        return "the signature does not verify with the key its site lists"
    return problem
