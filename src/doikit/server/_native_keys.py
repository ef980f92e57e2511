"""The keys of the native Handle protocol: the server's own key pair, the sealing key that
keeps secret keys readable by the server only, and the checks of challenge answers
(handle-protocol.md §11, §13). Uses ``cryptography`` (the ``server`` extra).

* **The server key** (RSA 2048) is made on first start and kept in ``doikit-server-key.pem``
  beside a SQLite store's file (in the user data directory for PostgreSQL), readable by its
  owner only; its public half is the key of this server's entry in ``HS_SITE``, and it signs
  certified answers (§13).
* **Secret keys.** A secret-key answer is a MAC keyed by the secret itself (§11.2), which a
  scrypt hash cannot give. So ``doikit admin create`` keeps, beside the scrypt hash that
  HTTP Basic is checked against, the secret sealed with AES-GCM under a 256-bit **sealing
  key** kept apart from the store (``doikit-seal.key`` in the same place, or the file
  ``$DOIKIT_SEAL_KEY_FILE``): the store alone reveals no secret. A key stored in clear, as a
  HANDLE.NET export holds it, is used as it is. An identity made before this change holds
  only the hash and must be made again (``doikit admin create`` prints a new secret).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import hmac
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from doikit.handle import (
    HandleWireError,
    RSAPublicKey,
    public_answer_from_bytes,
    public_key_from_bytes,
    public_key_to_bytes,
    secret_answer_from_bytes,
    signature_error,
)

if TYPE_CHECKING:
    from doikit.server._native import NativeConfig

SERVER_KEY_FILE: Final = "doikit-server-key.pem"
SEAL_KEY_FILE: Final = "doikit-seal.key"
_SEALED: Final = "$sealed$"
#: The most PBKDF2 iterations an answer may ask the server to compute (CNRI sends 10,000).
MAX_ITERATIONS: Final = 100_000


def keys_dir(store_url: str) -> Path:
    """Where the server's keys live: beside a SQLite store's file, else in the user data
    directory."""
    if store_url.startswith("sqlite:///"):
        return Path(store_url.removeprefix("sqlite:///")).expanduser().resolve().parent
    from platformdirs import user_data_path  # noqa: PLC0415 - only the server needs it

    return user_data_path("doikit", appauthor=False, ensure_exists=True)


def _private_file(path: Path, data: bytes) -> None:
    """Write *data* to a new file only its owner may read (never over an existing one)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


class ServerKey:
    """This server's RSA key pair, made on first use."""

    def __init__(self, path: Path) -> None:
        if not path.exists():
            made = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            pem = made.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
            with contextlib.suppress(FileExistsError):  # another process made it: use that
                _private_file(path, pem)
        loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
        if not isinstance(loaded, rsa.RSAPrivateKey):
            msg = f"{path} holds no RSA private key"
            raise TypeError(msg)
        self._key = loaded
        numbers = loaded.public_key().public_numbers()
        #: The public key as HS_SITE and HS_PUBKEY carry it.
        self.public_blob = public_key_to_bytes(RSAPublicKey(n=numbers.n, e=numbers.e))

    def sign(self, content: bytes) -> bytes:
        """SHA256withRSA (PKCS#1 v1.5) of *content*, as a certified answer carries it."""
        return self._key.sign(content, padding.PKCS1v15(), hashes.SHA256())


def seal_key(directory: Path) -> bytes:
    """The sealing key (32 bytes), made on first use."""
    named = os.environ.get("DOIKIT_SEAL_KEY_FILE")
    path = Path(named) if named else directory / SEAL_KEY_FILE
    if not path.exists():
        with contextlib.suppress(FileExistsError):
            _private_file(path, secrets.token_bytes(32))
    key = path.read_bytes()
    if len(key) != 32:
        msg = f"{path} is not a sealing key (32 bytes)"
        raise ValueError(msg)
    return key


def seal(stored: str, secret: str, key: bytes) -> str:
    """HS_SECKEY data holding *stored* (the scrypt hash) and *secret* sealed under *key*."""
    nonce = secrets.token_bytes(12)
    sealed = nonce + AESGCM(key).encrypt(nonce, secret.encode("utf-8"), b"HS_SECKEY")
    return stored + _SEALED + base64.b64encode(sealed).decode("ascii")


def unseal(data: bytes, key: bytes | None) -> bytes | None:
    """The secret key HS_SECKEY *data* holds: in clear (a HANDLE.NET export), or sealed by
    :func:`seal`; ``None`` when it holds only a hash, or the sealing key does not open it."""
    text = data.decode("utf-8", "replace")
    if not text.startswith("doikit-scrypt$"):
        return data
    _, found, sealed = text.partition(_SEALED)
    if not found or key is None:
        return None
    try:
        raw = base64.b64decode(sealed, validate=True)
        return AESGCM(key).decrypt(raw[:12], raw[12:], b"HS_SECKEY")
    except (binascii.Error, ValueError, InvalidTag):  # not sealed by this key: no secret
        return None


def secret_answer_ok(answer: bytes, secret: bytes, data: bytes) -> bool:
    """Whether *answer* (a secret-key ``signedResponse``) is the MAC of *data* (nonce ‖
    request digest) under *secret*, by any algorithm CNRI's server accepts (§11.2)."""
    try:
        parsed = secret_answer_from_bytes(answer)
    except HandleWireError:
        return False
    alg = parsed.alg
    if alg == 0x22:  # PBKDF2-HMAC-SHA1, CNRI 9's default
        if not 0 < parsed.iterations <= MAX_ITERATIONS or parsed.key_bits not in range(8, 4097, 8):
            return False
        derived = hashlib.pbkdf2_hmac(
            "sha1", secret, parsed.salt, parsed.iterations, parsed.key_bits // 8
        )
        want = hmac.new(derived, data, "sha1").digest()
    elif alg == 0x12:
        want = hmac.new(secret, data, "sha1").digest()
    elif alg == 0x13:
        want = hmac.new(secret, data, "sha256").digest()
    elif alg in (0x01, 0x02, 0x03):
        name = {0x01: "md5", 0x02: "sha1", 0x03: "sha256"}[alg]
        want = hashlib.new(name, secret + data + secret, usedforsecurity=False).digest()
    else:
        return False
    return hmac.compare_digest(want, parsed.mac)


def public_answer_ok(answer: bytes, key_blob: bytes, data: bytes) -> bool:
    """Whether *answer* (a public-key ``signedResponse``) is a signature of *data* by the
    key HS_PUBKEY *key_blob* holds (RSA PKCS#1 v1.5 or DSA, with SHA-256 or SHA-1)."""
    try:
        parsed = public_answer_from_bytes(answer)
        key = public_key_from_bytes(key_blob)
    except HandleWireError:
        return False
    return signature_error(key, parsed.signature, data, parsed.hash_alg) is None


def site_value(store: str | None, config: NativeConfig) -> str:
    """The ``HS_SITE`` value of *config*, with the server key kept with *store*, as one line
    of the Handle REST API's JSON (what ``doikit admin site`` prints)."""
    import json  # noqa: PLC0415

    from doikit.handle import HandleValue, StructuredData, site_to_json, value_to_json  # noqa: PLC0415
    from doikit.server.stores import default_store_url  # noqa: PLC0415

    key = ServerKey(keys_dir(store or default_store_url()) / SERVER_KEY_FILE)
    site = json.dumps(site_to_json(config.site(key.public_blob)), separators=(",", ":"))
    value = HandleValue(1, "HS_SITE", StructuredData("site", site))
    return json.dumps(value_to_json(value), ensure_ascii=False, separators=(",", ":"))
