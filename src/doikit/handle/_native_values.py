"""Handle values in the native layout, and the one mapping between them and :class:`HandleValue`.

A value on the wire (handle-protocol.md §9)::

    int4 index | int4 timestamp | int1 ttlType | int4 ttl | int1 permissions
    | S type | S data | int4 count + count × (S handle, int4 index)

``ttlType`` 0 is a TTL in seconds (``HandleValue.ttl`` an ``int``), 1 an absolute expiry in
Unix seconds (a ``datetime``); the permission byte holds admin read ``0x08``, admin write
``0x04``, public read ``0x02`` and public write ``0x01`` (``HandleValue.permissions``, the
REST API's four-character string, in that order).

The data is kept as bytes, except for the types whose data the REST API shows structured —
found as HANDLE.NET's ``GsonUtility.serializeData`` finds them, by type (``HS_ADMIN``,
``HS_VLIST``, ``HS_SITE``, ``HS_SITE.PREFIX``, ``HS_NA_DELEGATE``, ``HS_PUBKEY`` and their
``.subtypes``, ASCII case ignored): their data becomes :class:`AdminData`, a tuple of
:class:`Reference`, or :class:`StructuredData` (``site``/``key``) — **only** when writing
that back gives the very same bytes. Anything else (a legacy 4-byte HS_ADMIN permission
field, a DH key, a non-minimal big integer) stays bytes, so no value ever changes on its way
through doikit:

>>> v = HandleValue(100, "HS_ADMIN", AdminData("0.NA/10.1000", 200), timestamp=1)
>>> raw = value_to_wire(v)
>>> raw.hex()
'000000640000000100000151800e0000000848535f41444d494e0000001607ff0000000c302e4e412f31302e31303030000000c800000000'
>>> value_from_wire(raw) == v
True
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from typing import Final

from doikit.handle._native_site import (
    DSAPublicKey,
    RSAPublicKey,
    key_from_json,
    key_to_json,
    public_key_from_bytes,
    public_key_to_bytes,
    site_from_bytes,
    site_from_json,
    site_to_bytes,
    site_to_json,
)
from doikit.handle._values import (
    AdminData,
    Data,
    HandleFormatError,
    HandleValue,
    Reference,
    StructuredData,
    data_from_json,
    type_matches,
)
from doikit.handle._wire_primitives import (
    HandleWireError,
    Reader,
    put_i16,
    put_i32,
    put_text,
    read_all,
)

#: ``ttlType``: the TTL is a number of seconds, or the Unix time the value expires.
TTL_RELATIVE: Final = 0
TTL_ABSOLUTE: Final = 1

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_SECOND: Final = timedelta(seconds=1)
_ADMIN_MASK: Final = 0x0FFF
# The types whose data the REST API shows structured, in GsonUtility's order of tests.
_STRUCTURED: Final = (
    ("HS_ADMIN", "admin"),
    ("HS_VLIST", "vlist"),
    ("HS_SITE", "site"),
    ("HS_SITE.PREFIX", "site"),
    ("HS_NA_DELEGATE", "site"),
    ("HS_PUBKEY", "key"),
)


# --- HS_ADMIN and HS_VLIST (§10.1, §10.2) ---------------------------------------------------


def _read_admin(r: Reader) -> AdminData:
    at = r.pos
    mask = r.u16("admin.permissions")
    if mask & ~_ADMIN_MASK:
        raise r.fail("admin.permissions", f"bits beyond the twelve of CNRI: 0x{mask:04x}", at)
    handle = r.text("admin.handle")
    return AdminData(handle, r.i32("admin.index"), format(mask, "012b"))


def admin_from_bytes(data: bytes) -> AdminData:
    """The data of an HS_ADMIN value: ``int2 permissions`` + ``S handle`` + ``int4 index``.

    :raises HandleWireError: when *data* is not exactly that (CNRI's legacy form with two
        more bytes, and permission bits beyond the twelve, included).
    """
    return read_all(data, _read_admin, "HS_ADMIN data")


def admin_to_bytes(admin: AdminData) -> bytes:
    """The data of an HS_ADMIN value for *admin*.

    >>> admin_to_bytes(AdminData("10.5555/ADMIN", 200, "111111111111")).hex()
    '0fff0000000d31302e353535352f41444d494e000000c8'
    """
    perms = admin.permissions
    if len(perms) != 12 or perms.strip("01"):
        raise HandleWireError(f"must be 12 binary digits, not {perms!r}", field="admin.permissions")
    out = bytearray()
    put_i16(out, int(perms, 2), "admin.permissions")
    put_text(out, admin.handle, "admin.handle")
    put_i32(out, admin.index, "admin.index")
    return bytes(out)


def _read_references(r: Reader, field: str = "references") -> tuple[Reference, ...]:
    return tuple(
        Reference(r.text(f"{field}[{i}].handle"), r.i32(f"{field}[{i}].index"))
        for i in range(r.count(field, 8))
    )


def _put_references(out: bytearray, refs: tuple[Reference, ...], field: str) -> None:
    put_i32(out, len(refs), field)
    for i, ref in enumerate(refs):
        put_text(out, ref.handle, f"{field}[{i}].handle")
        put_i32(out, ref.index, f"{field}[{i}].index")


def vlist_from_bytes(data: bytes) -> tuple[Reference, ...]:
    """The data of an HS_VLIST value: ``int4 count`` + count × (``S handle``, ``int4 index``).

    :raises HandleWireError: when *data* is not exactly that.
    """
    return read_all(data, _read_references, "HS_VLIST data")


def vlist_to_bytes(refs: tuple[Reference, ...]) -> bytes:
    """The data of an HS_VLIST value listing *refs*."""
    out = bytearray()
    _put_references(out, refs, "vlist")
    return bytes(out)


# --- HS_SECKEY, HS_SERV (§10.3, §10.6) ------------------------------------------------------


def hashed_secret(secret: bytes) -> bytes:
    """CNRI's "hashed" HS_SECKEY data: the lower-case hex of SHA-1(*secret*).

    A client then answers challenges with that hex text as the key. (Plain HS_SECKEY data is
    the secret itself.)

    >>> hashed_secret(b"secret")
    b'e5e9fa1ba31ecd1ae84f75caaa474f3a663f05f4'
    """
    return hashlib.sha1(secret, usedforsecurity=False).hexdigest().encode("ascii")


def service_handle(data: bytes) -> str:
    """The handle an HS_SERV (or HS_ALIAS) value names: its data as UTF-8.

    :raises HandleWireError: when the data is not UTF-8.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HandleWireError("is not UTF-8", offset=exc.start, field="HS_SERV data") from None


# --- the mapping: HandleValue <-> bytes ------------------------------------------------------


def _structured_kind(type_: str) -> str | None:
    for base, kind in _STRUCTURED:
        if type_matches(type_, base + "."):  # the type or a .subtype (HandleValue.hasType)
            return kind
    return None


def _structured(kind: str, raw: bytes) -> Data:
    if kind == "admin":
        return admin_from_bytes(raw)
    if kind == "vlist":
        return vlist_from_bytes(raw)
    if kind == "site":
        obj = {"format": "site", "value": site_to_json(site_from_bytes(raw))}
        return data_from_json(obj, "data")
    key = public_key_from_bytes(raw)
    if not isinstance(key, RSAPublicKey | DSAPublicKey):
        raise HandleWireError("the REST API has no format for a DH key", field="data")
    return data_from_json({"format": "key", "value": key_to_json(key)}, "data")


def data_from_wire(type_: str, raw: bytes) -> Data:
    """The data of a value of type *type_* from its bytes, as :class:`HandleValue` holds it:
    structured for the types the REST API shows structured, when that is lossless; else the
    bytes themselves.

    >>> data_from_wire("HS_VLIST", bytes.fromhex("000000010000000130000000c8"))
    (Reference(handle='0', index=200),)
    >>> data_from_wire("URL", b"https://example.org/")
    b'https://example.org/'
    """
    kind = _structured_kind(type_)
    if kind is None:
        return raw
    try:
        data = _structured(kind, raw)
        same = data_to_wire(data) == raw
    except HandleFormatError:  # HandleWireError included
        return raw
    return data if same else raw


def data_to_wire(data: Data) -> bytes:
    """The bytes of a value's data.

    :raises HandleFormatError: for site or key JSON that does not give a site record or a
        key (:class:`HandleWireError` for a field a record cannot hold).
    """
    if isinstance(data, bytes):
        return data
    if isinstance(data, AdminData):
        return admin_to_bytes(data)
    if isinstance(data, StructuredData):
        obj = json.loads(data.json)  # compact JSON text the JSON codec wrote itself
        if data.format == "site":
            return site_to_bytes(site_from_json(obj, "data.value"))
        if data.format == "key":
            return public_key_to_bytes(key_from_json(obj, "data.value"))
        raise HandleWireError(f"no native layout for format {data.format!r}", field="data")
    return vlist_to_bytes(data)


def read_value(r: Reader, field: str = "value") -> HandleValue:
    """One value from *r* (§9)."""
    index = r.i32(f"{field}.index")
    timestamp = r.i32(f"{field}.timestamp")
    at = r.pos
    ttl_type = r.u8(f"{field}.ttl_type")
    if ttl_type not in (TTL_RELATIVE, TTL_ABSOLUTE):
        raise r.fail(
            f"{field}.ttl_type", f"must be 0 (relative) or 1 (absolute), not {ttl_type}", at
        )
    seconds = r.i32(f"{field}.ttl")
    at = r.pos
    perms = r.u8(f"{field}.permissions")
    if perms > 0x0F:
        raise r.fail(f"{field}.permissions", f"unknown bits in 0x{perms:02x}", at)
    type_ = r.text(f"{field}.type")
    raw = r.block(f"{field}.data")
    references = _read_references(r, f"{field}.references")
    ttl: int | datetime = seconds if ttl_type == TTL_RELATIVE else _EPOCH + seconds * _SECOND
    return HandleValue(
        index,
        type_,
        data_from_wire(type_, raw),
        ttl,
        timestamp,
        format(perms, "04b"),
        references,
    )


def put_value(out: bytearray, value: HandleValue, field: str = "value") -> None:
    """Append *value* in the native layout."""
    put_i32(out, value.index, f"{field}.index")
    put_i32(out, value.timestamp, f"{field}.timestamp")
    ttl = value.ttl
    if isinstance(ttl, datetime):
        moment = ttl if ttl.tzinfo else ttl.replace(tzinfo=UTC)
        out.append(TTL_ABSOLUTE)
        put_i32(out, (moment - _EPOCH) // _SECOND, f"{field}.ttl")
    else:
        out.append(TTL_RELATIVE)
        put_i32(out, ttl, f"{field}.ttl")
    perms = value.permissions
    if len(perms) != 4 or perms.strip("01"):
        raise HandleWireError(
            f"must be 4 binary digits, not {perms!r}", field=f"{field}.permissions"
        )
    out.append(int(perms, 2))
    put_text(out, value.type, f"{field}.type")
    data = data_to_wire(value.data)
    put_i32(out, len(data), f"{field}.data")
    out += data
    _put_references(out, value.references, f"{field}.references")


def value_from_wire(data: bytes) -> HandleValue:
    """A :class:`HandleValue` from the native layout of one value (the whole of *data*).

    :raises HandleWireError: saying what is wrong at which byte.
    """
    return read_all(data, read_value, "value")


def value_to_wire(value: HandleValue) -> bytes:
    """The native layout of *value*; :func:`value_from_wire` gives it back.

    :raises HandleFormatError: for a field the layout cannot hold (an index beyond a signed
        32-bit int, a lone surrogate, site JSON without servers' addresses, …), naming it.
    """
    out = bytearray()
    put_value(out, value)
    return bytes(out)
