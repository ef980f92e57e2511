"""HS_SITE and HS_PUBKEY in the native layout and in the REST API's JSON, and the server hash.

A site record (handle-protocol.md §10.5) lists a site's servers, each with its address, its
public key and its interfaces; it is the data of ``HS_SITE`` values and the body of a
GET_SITE_INFO answer. A key blob (§10.4) is ``S type`` + ``int2 flags`` + big integers as
Java's ``BigInteger.toByteArray()`` writes them (minimal two's complement: a leading zero
byte when the top bit is set); a reader takes any width, as ``new BigInteger(1, bytes)``. CNRI's
RSA blobs end in 4 zero bytes more (an int4 its writer counts and never fills), as
:func:`public_key_to_bytes` writes them too.

>>> site = site_from_bytes(site_to_bytes(SiteInfo(servers=(), serial_number=3)))
>>> site.serial_number, site.protocol_version
(3, (2, 11))
>>> handle_hash("10.1000/182", HASH_BY_ALL), server_index("10.1000/182", HASH_BY_ALL, 4)
(852241299, 3)
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import ipaddress
import json
from dataclasses import dataclass
from typing import Final, TypeAlias

from doikit.handle._values import (
    JSON,
    HandleFormatError,
    StructuredData,
    _int,
    _str,
    data_from_json,
)
from doikit.handle._wire_primitives import (
    HandleWireError,
    Reader,
    encode_text,
    put_block,
    put_i16,
    put_i32,
    put_text,
    put_u8,
    read_all,
)

# --- public keys (§10.4) --------------------------------------------------------------------

_RSA: Final = b"RSA_PUB_KEY"
_DSA: Final = b"DSA_PUB_KEY"
_DH: Final = b"DH_PUB_KEY"
# CNRI sizes an RSA blob for one int4 more than it writes: its RSA blobs end in 4 zero bytes
# (observed in V2; Util.getBytesFromPublicKey counts INT_SIZE * 4 for three length fields).
_RSA_PAD: Final = bytes(4)


@dataclass(frozen=True, slots=True)
class RSAPublicKey:
    """An RSA public key: modulus *n*, public exponent *e* (blob order: e, n)."""

    n: int
    e: int


@dataclass(frozen=True, slots=True)
class DSAPublicKey:
    """A DSA public key (blob order: q, p, g, y)."""

    p: int
    q: int
    g: int
    y: int


@dataclass(frozen=True, slots=True)
class DHPublicKey:
    """A Diffie-Hellman public value with its group (blob order: y, p, g); sessions only."""

    p: int
    g: int
    y: int


#: A public key as a key blob holds it.
PublicKey: TypeAlias = RSAPublicKey | DSAPublicKey | DHPublicKey


def _put_bigint(out: bytearray, value: int, field: str) -> None:
    if value < 0:
        raise HandleWireError(f"{value} is negative", field=field)
    # BigInteger.toByteArray(): the shortest two's complement form, sign bit included.
    put_block(out, value.to_bytes(value.bit_length() // 8 + 1, "big"), field)


def _read_bigint(r: Reader, field: str) -> int:
    return int.from_bytes(r.block(field), "big")


def read_public_key(r: Reader, field: str = "key") -> PublicKey:
    """A key blob from *r* (the reserved int2 flags are read and ignored, as CNRI does; an RSA
    blob may end in CNRI's 4 zero bytes)."""
    at = r.pos
    kind = r.block(f"{field}.type")
    r.u16(f"{field}.flags")
    if kind == _RSA:
        e = _read_bigint(r, f"{field}.e")
        key = RSAPublicKey(n=_read_bigint(r, f"{field}.n"), e=e)
        if r.left >= 4 and r.data[r.pos : r.pos + 4] == _RSA_PAD:
            r.pos += 4
        return key
    if kind == _DSA:
        q = _read_bigint(r, f"{field}.q")
        p = _read_bigint(r, f"{field}.p")
        g = _read_bigint(r, f"{field}.g")
        return DSAPublicKey(p=p, q=q, g=g, y=_read_bigint(r, f"{field}.y"))
    if kind == _DH:
        y = _read_bigint(r, f"{field}.y")
        p = _read_bigint(r, f"{field}.p")
        return DHPublicKey(p=p, g=_read_bigint(r, f"{field}.g"), y=y)
    raise r.fail(f"{field}.type", f"unknown key type {kind[:40]!r}", at)


def public_key_from_bytes(data: bytes) -> PublicKey:
    """A key blob (the data of an HS_PUBKEY value, a server's key in HS_SITE, a DH key).

    :raises HandleWireError: for an unknown key type, a short blob or bytes after it.
    """
    return read_all(data, read_public_key, "key")


def public_key_to_bytes(key: PublicKey) -> bytes:
    """The key blob of *key*, as CNRI's ``Util.getBytesFromPublicKey`` writes it."""
    out = bytearray()
    if isinstance(key, RSAPublicKey):
        put_block(out, _RSA, "key.type")
        out += b"\x00\x00"
        _put_bigint(out, key.e, "key.e")
        _put_bigint(out, key.n, "key.n")
        out += _RSA_PAD
    elif isinstance(key, DSAPublicKey):
        put_block(out, _DSA, "key.type")
        out += b"\x00\x00"
        for name in ("q", "p", "g", "y"):
            _put_bigint(out, getattr(key, name), f"key.{name}")
    else:
        put_block(out, _DH, "key.type")
        out += b"\x00\x00"
        for name in ("y", "p", "g"):
            _put_bigint(out, getattr(key, name), f"key.{name}")
    return bytes(out)


def _b64url(value: int) -> str:
    raw = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _from_b64(obj: JSON, where: str) -> int:
    text = _str(obj, where)
    # CNRI's reader takes both alphabets, padded or not.
    text = text.replace("+", "-").replace("/", "_").rstrip("=")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise HandleFormatError(where, f"is not base64url: {text[:40]!r}") from None
    return int.from_bytes(raw, "big")


def key_to_json(key: RSAPublicKey | DSAPublicKey) -> dict[str, JSON]:
    """The REST API's ``key`` format: base64url without padding, as ``GsonUtility`` writes.

    >>> key_to_json(RSAPublicKey(n=0xC5, e=65537))
    {'kty': 'RSA', 'n': 'xQ', 'e': 'AQAB'}
    """
    if isinstance(key, RSAPublicKey):
        return {"kty": "RSA", "n": _b64url(key.n), "e": _b64url(key.e)}
    return {
        "kty": "DSA",
        "y": _b64url(key.y),
        "p": _b64url(key.p),
        "q": _b64url(key.q),
        "g": _b64url(key.g),
    }


def key_from_json(obj: JSON, where: str = "key") -> RSAPublicKey | DSAPublicKey:
    """A key from the REST API's ``key`` format (``kty`` in any case).

    :raises HandleFormatError: naming the field that is missing or wrong.
    """
    if not isinstance(obj, dict):
        raise HandleFormatError(where, f"must be an object with kty, not {obj!r}")
    kty = _str(obj.get("kty"), f"{where}.kty").upper()
    if kty == "RSA":
        return RSAPublicKey(
            n=_from_b64(obj.get("n"), f"{where}.n"), e=_from_b64(obj.get("e"), f"{where}.e")
        )
    if kty == "DSA":
        p, q, g, y = (_from_b64(obj.get(k), f"{where}.{k}") for k in ("p", "q", "g", "y"))
        return DSAPublicKey(p=p, q=q, g=g, y=y)
    raise HandleFormatError(f"{where}.kty", f"must be RSA or DSA, not {kty!r}")


# --- site records (§10.5) -------------------------------------------------------------------

#: Interface types (a bit mask): admin requests, queries (resolution), or both.
INTERFACE_ADMIN: Final = 1
INTERFACE_QUERY: Final = 2
#: Interface protocols.
PROTOCOL_UDP: Final = 0
PROTOCOL_TCP: Final = 1
PROTOCOL_HTTP: Final = 2
PROTOCOL_HTTPS: Final = 3
_PROTOCOL_NAMES: Final = {
    PROTOCOL_UDP: "UDP",
    PROTOCOL_TCP: "TCP",
    PROTOCOL_HTTP: "HTTP",
    3: "HTTPS",
}
_PROTOCOL_NUMBERS: Final = {name: number for number, name in _PROTOCOL_NAMES.items()}
#: Hash options: which part of a handle picks the server of a multi-server site.
HASH_BY_PREFIX: Final = 0
HASH_BY_SUFFIX: Final = 1
HASH_BY_ALL: Final = 2
_PRIMARY: Final = 0x80
_MULTI_PRIMARY: Final = 0x40

Address: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True, slots=True)
class Interface:
    """How a server can be reached: ``type`` (a mask of :data:`INTERFACE_ADMIN` and
    :data:`INTERFACE_QUERY`; 0 = out of service), ``protocol`` (``PROTOCOL_*``) and port."""

    type: int
    protocol: int
    port: int

    @property
    def admin(self) -> bool:
        """Whether the interface takes administrative requests."""
        return bool(self.type & INTERFACE_ADMIN)

    @property
    def query(self) -> bool:
        """Whether the interface takes resolution requests."""
        return bool(self.type & INTERFACE_QUERY)


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """One server of a site. ``public_key`` is its key blob (read it with
    :func:`public_key_from_bytes`); an IPv4 address travels as 12 zero bytes + 4."""

    server_id: int
    address: Address
    public_key: bytes
    interfaces: tuple[Interface, ...]


@dataclass(frozen=True, slots=True)
class SiteInfo:
    """A site record: its servers, serial number, protocol version, flags and hash option."""

    servers: tuple[ServerInfo, ...]
    serial_number: int = 1
    protocol_version: tuple[int, int] = (2, 11)
    primary: bool = False
    multi_primary: bool = False
    hash_option: int = HASH_BY_ALL
    hash_filter: str = ""
    attributes: tuple[tuple[str, str], ...] = ()
    data_format_version: int = 1

    def server_for(self, handle: str) -> ServerInfo | None:
        """The server CNRI's clients send requests about *handle* to (§16.3), or ``None``
        where they can pick none (no servers; the ``abs(INT_MIN)`` case of
        :func:`server_index`).

        :raises HandleWireError: for a hash option other than 0, 1 and 2.
        """
        if not self.servers:
            return None
        index = server_index(handle, self.hash_option, len(self.servers))
        return self.servers[index] if index >= 0 else None


def _read_address(r: Reader, field: str) -> Address:
    raw = r.raw(16, field)
    if raw[:12] == bytes(12):
        return ipaddress.IPv4Address(raw[12:])
    return ipaddress.IPv6Address(raw)


def _address_bytes(address: Address, field: str) -> bytes:
    if isinstance(address, ipaddress.IPv4Address):
        return bytes(12) + address.packed
    if address.packed[:12] == bytes(12):
        # A reader takes 12 zero bytes for IPv4 (ServerInfo.isIPv4): say so instead.
        raise HandleWireError(f"IPv6 address {address} would read back as IPv4", field=field)
    return address.packed


def read_site(r: Reader, field: str = "site") -> SiteInfo:
    """A site record from *r*, strictly: the PrimaryMask has only its two known bits."""
    data_format_version = r.i16(f"{field}.version")
    protocol_version = (r.u8(f"{field}.protocol_major"), r.u8(f"{field}.protocol_minor"))
    serial_number = r.i16(f"{field}.serial")
    at = r.pos
    mask = r.u8(f"{field}.primary_mask")
    if mask & ~(_PRIMARY | _MULTI_PRIMARY):
        raise r.fail(f"{field}.primary_mask", f"unknown bits in 0x{mask:02x}", at)
    hash_option = r.u8(f"{field}.hash_option")
    hash_filter = r.text(f"{field}.hash_filter")
    attributes = tuple(
        (r.text(f"{field}.attributes[{i}].name"), r.text(f"{field}.attributes[{i}].value"))
        for i in range(r.count(f"{field}.attributes", 8))
    )
    servers = []
    for i in range(r.count(f"{field}.servers", 28)):
        here = f"{field}.servers[{i}]"
        server_id = r.i32(f"{here}.id")
        address = _read_address(r, f"{here}.address")
        public_key = r.block(f"{here}.public_key")
        interfaces = tuple(
            Interface(
                r.u8(f"{here}.interfaces[{j}].type"),
                r.u8(f"{here}.interfaces[{j}].protocol"),
                r.i32(f"{here}.interfaces[{j}].port"),
            )
            for j in range(r.count(f"{here}.interfaces", 6))
        )
        servers.append(ServerInfo(server_id, address, public_key, interfaces))
    return SiteInfo(
        servers=tuple(servers),
        serial_number=serial_number,
        protocol_version=protocol_version,
        primary=bool(mask & _PRIMARY),
        multi_primary=bool(mask & _MULTI_PRIMARY),
        hash_option=hash_option,
        hash_filter=hash_filter,
        attributes=attributes,
        data_format_version=data_format_version,
    )


def put_site(out: bytearray, site: SiteInfo, field: str = "site") -> None:
    """Append the site record of *site*."""
    put_i16(out, site.data_format_version, f"{field}.data_format_version")
    put_u8(out, site.protocol_version[0], f"{field}.protocol_version")
    put_u8(out, site.protocol_version[1], f"{field}.protocol_version")
    put_i16(out, site.serial_number, f"{field}.serial_number")
    out.append((_PRIMARY if site.primary else 0) | (_MULTI_PRIMARY if site.multi_primary else 0))
    put_u8(out, site.hash_option, f"{field}.hash_option")
    put_text(out, site.hash_filter, f"{field}.hash_filter")
    put_i32(out, len(site.attributes), f"{field}.attributes")
    for i, (name, value) in enumerate(site.attributes):
        put_text(out, name, f"{field}.attributes[{i}]")
        put_text(out, value, f"{field}.attributes[{i}]")
    put_i32(out, len(site.servers), f"{field}.servers")
    for i, server in enumerate(site.servers):
        here = f"{field}.servers[{i}]"
        put_i32(out, server.server_id, f"{here}.server_id")
        out += _address_bytes(server.address, f"{here}.address")
        put_block(out, server.public_key, f"{here}.public_key")
        put_i32(out, len(server.interfaces), f"{here}.interfaces")
        for j, interface in enumerate(server.interfaces):
            put_u8(out, interface.type, f"{here}.interfaces[{j}].type")
            put_u8(out, interface.protocol, f"{here}.interfaces[{j}].protocol")
            put_i32(out, interface.port, f"{here}.interfaces[{j}].port")


def site_from_bytes(data: bytes) -> SiteInfo:
    """A site record; bytes after it are an error, as in CNRI's decoder.

    :raises HandleWireError: saying what is wrong at which byte.
    """
    return read_all(data, read_site, "site record")


def site_to_bytes(site: SiteInfo) -> bytes:
    """The site record of *site*."""
    out = bytearray()
    put_site(out, site)
    return bytes(out)


# --- the REST API's "site" format -----------------------------------------------------------


def _server_key_json(raw: bytes) -> dict[str, JSON]:
    try:
        key = public_key_from_bytes(raw)
    except HandleWireError:
        key = None
    if isinstance(key, RSAPublicKey | DSAPublicKey) and public_key_to_bytes(key) == raw:
        return {"format": "key", "value": key_to_json(key)}
    return {"format": "base64", "value": base64.b64encode(raw).decode("ascii")}


def site_to_json(site: SiteInfo) -> dict[str, JSON]:
    """The REST API's ``site`` object, keys in ``GsonUtility``'s order."""
    out: dict[str, JSON] = {
        "version": site.data_format_version,
        "protocolVersion": f"{site.protocol_version[0]}.{site.protocol_version[1]}",
        "serialNumber": site.serial_number,
        "primarySite": site.primary,
        "multiPrimary": site.multi_primary,
    }
    if site.hash_option != HASH_BY_ALL:
        out["hashOption"] = site.hash_option
    if site.hash_filter:
        out["hashFilter"] = site.hash_filter
    out["attributes"] = [{"name": name, "value": value} for name, value in site.attributes]
    out["servers"] = [
        {
            "serverId": server.server_id,
            "address": str(server.address),
            "publicKey": _server_key_json(server.public_key),
            "interfaces": [
                {
                    "query": interface.query,
                    "admin": interface.admin,
                    "protocol": _PROTOCOL_NAMES.get(interface.protocol, interface.protocol),
                    "port": interface.port,
                }
                for interface in server.interfaces
            ],
        }
        for server in site.servers
    ]
    return out


def _bool(obj: JSON, where: str) -> bool:
    if not isinstance(obj, bool):
        raise HandleFormatError(where, f"must be true or false, not {obj!r}")
    return obj


def _list(obj: JSON, where: str) -> list[JSON]:
    if not isinstance(obj, list):
        raise HandleFormatError(where, f"must be a list, not {type(obj).__name__}")
    return obj


def _attributes_from_json(obj: JSON, where: str) -> tuple[tuple[str, str], ...]:
    if isinstance(obj, dict):  # also read: {"name": "value"} and {"name": ["v1", "v2"]}
        pairs: list[tuple[str, str]] = []
        for name, value in obj.items():
            for i, item in enumerate(value if isinstance(value, list) else [value]):
                pairs.append((name, _str(item, f"{where}.{name}[{i}]")))
        return tuple(pairs)
    pairs = []
    for i, attribute in enumerate(_list(obj, where)):
        item = _dict(attribute, f"{where}[{i}]")
        name = _str(item.get("name"), f"{where}[{i}].name")
        pairs.append((name, _str(item.get("value"), f"{where}[{i}].value")))
    return tuple(pairs)


def _dict(obj: JSON, where: str) -> dict[str, JSON]:
    if not isinstance(obj, dict):
        raise HandleFormatError(where, f"must be an object, not {type(obj).__name__}")
    return obj


def _interface_from_json(obj: JSON, where: str) -> Interface:
    item = _dict(obj, where)
    kind = (INTERFACE_QUERY if _bool(item.get("query"), f"{where}.query") else 0) | (
        INTERFACE_ADMIN if _bool(item.get("admin"), f"{where}.admin") else 0
    )
    protocol = item.get("protocol")
    if isinstance(protocol, str) and protocol in _PROTOCOL_NUMBERS:
        number = _PROTOCOL_NUMBERS[protocol]
    else:
        number = _int(protocol, f"{where}.protocol", -128, 255) & 0xFF
    return Interface(kind, number, _int(item.get("port"), f"{where}.port"))


def _server_from_json(obj: JSON, where: str) -> ServerInfo:
    item = _dict(obj, where)
    text = _str(item.get("address"), f"{where}.address")
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        raise HandleFormatError(f"{where}.address", f"is not an IP address: {text!r}") from None
    key = data_from_json(item.get("publicKey", ""), f"{where}.publicKey")
    if isinstance(key, StructuredData) and key.format == "key":
        value = json.loads(key.json)  # compact JSON text the codec wrote itself
        raw = public_key_to_bytes(key_from_json(value, f"{where}.publicKey.value"))
    elif isinstance(key, bytes):
        raw = key
    else:
        raise HandleFormatError(f"{where}.publicKey", "must be a key or binary data")
    interfaces = item.get("interfaces", item.get("interfaceList", []))
    return ServerInfo(
        _int(item.get("serverId"), f"{where}.serverId"),
        address,
        raw,
        tuple(
            _interface_from_json(x, f"{where}.interfaces[{i}]")
            for i, x in enumerate(_list(interfaces, f"{where}.interfaces"))
        ),
    )


def _protocol_version(obj: JSON, where: str) -> tuple[int, int]:
    major, dot, minor = _str(obj, where).partition(".")
    if not (dot and major.isdigit() and minor.isdigit() and len(major + minor) <= 6):
        raise HandleFormatError(where, f"must be MAJOR.MINOR, not {obj!r}")
    return int(major), int(minor)


def site_from_json(obj: JSON, where: str = "site") -> SiteInfo:
    """A site record from the REST API's ``site`` object, read as ``GsonUtility`` reads it:
    every key but the servers' ``serverId``, ``address`` and interfaces' fields optional.

    :raises HandleFormatError: naming the field that is wrong.
    """
    item = _dict(obj, where)
    servers = item.get("servers", item.get("serverList", []))
    return SiteInfo(
        servers=tuple(
            _server_from_json(s, f"{where}.servers[{i}]")
            for i, s in enumerate(_list(servers, f"{where}.servers"))
        ),
        serial_number=_int(item.get("serialNumber", 0), f"{where}.serialNumber", -32768, 32767),
        protocol_version=_protocol_version(
            item.get("protocolVersion", "2.11"), f"{where}.protocolVersion"
        ),
        primary=_bool(item.get("primarySite", False), f"{where}.primarySite"),
        multi_primary=_bool(item.get("multiPrimary", False), f"{where}.multiPrimary"),
        hash_option=_int(item.get("hashOption", HASH_BY_ALL), f"{where}.hashOption", -128, 255)
        & 0xFF,
        hash_filter=_str(item.get("hashFilter", ""), f"{where}.hashFilter"),
        attributes=_attributes_from_json(item.get("attributes", []), f"{where}.attributes"),
        data_format_version=_int(item.get("version", 1), f"{where}.version", -32768, 32767),
    )


# --- choosing a server (§16.3) --------------------------------------------------------------


def handle_hash(handle: str, hash_option: int) -> int:
    """The hash CNRI's ``SiteInfo.getHandleHash`` computes for *handle*: MD5 of the part
    *hash_option* names (0 prefix, 1 suffix, 2 all; a handle without ``/`` has prefix
    ``0.NA`` and is its own suffix), ASCII upper-cased, last four digest bytes as a signed
    int, then Java's ``Math.abs`` — which leaves -2**31 negative.

    >>> handle_hash("0.NA/10.1000", HASH_BY_SUFFIX) == handle_hash("10.1000/x", HASH_BY_PREFIX)
    True

    :raises HandleWireError: for another hash option.
    """
    raw = encode_text(handle, "handle")
    slash = raw.find(b"/")
    if hash_option == HASH_BY_PREFIX:
        part = raw[:slash] if slash >= 0 else b"0.NA"
    elif hash_option == HASH_BY_SUFFIX:
        part = raw[slash + 1 :] if slash >= 0 else raw
    elif hash_option == HASH_BY_ALL:
        part = raw
    else:
        raise HandleWireError(f"unknown hash option {hash_option}", field="hash_option")
    # bytes.upper() folds a-z only, as CNRI's Util.upperCase on UTF-8 bytes.
    digest = hashlib.md5(part.upper(), usedforsecurity=False).digest()
    return java_abs(int.from_bytes(digest[-4:], "big", signed=True))


def java_abs(value: int) -> int:
    """Java's ``Math.abs`` of an ``int``: ``abs``, except that -2**31 stays -2**31.

    >>> java_abs(-5), java_abs(-2**31)
    (5, -2147483648)
    """
    return value if value == -(2**31) else abs(value)


def server_index(handle: str, hash_option: int, server_count: int) -> int:
    """The index of the server of a site of *server_count* servers that handles *handle*:
    :func:`handle_hash` modulo the count, with Java's ``%`` (the sign of the dividend). It
    is negative only for the one hash -2**31 with a count that is not a power of two —
    where CNRI's client fails for want of a server.

    :raises HandleWireError: for an unknown hash option or a count below 1.
    """
    if server_count < 1:
        raise HandleWireError(
            f"a site of {server_count} servers has none to pick", field="server_count"
        )
    return java_remainder(handle_hash(handle, hash_option), server_count)


def java_remainder(value: int, divisor: int) -> int:
    """Java's ``value % divisor`` for positive *divisor*: the sign follows *value*.

    >>> java_remainder(-2**31, 3), java_remainder(-2**31, 4), java_remainder(7, 3)
    (-2, 0, 1)
    """
    rest = abs(value) % divisor
    return -rest if value < 0 else rest
