"""Handle values and records, and their JSON codec (Handle.Net Technical Manual v9 §14.8).

The JSON shapes are those of the HANDLE.NET 9 REST API (``GsonUtility``), as recorded in the
reference (handle-api.md §1.4–1.5): a value is ::

    {"index":1,"type":"URL","data":{"format":"string","value":"https://…"},
     "ttl":86400,"timestamp":"2004-09-10T19:49:59Z"}

``permissions`` is written only when it is not ``"1110"``, ``timestamp`` only when it is not
0, ``references`` only when there are some. On input the codec also takes what the server
takes: ``data`` as a bare string, the ``hex`` format, format names in any case, ``ttl`` as an
absolute ISO-8601 time, and the looser HS_ADMIN permission spellings.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final, TypeAlias

from doikit._errors import DOIError

#: The TTL a value gets when none is given: one day, as doi.org's records carry.
DEFAULT_TTL: Final = 86400
#: The value permissions that are left out of the JSON: admin read and write, public read.
DEFAULT_PERMISSIONS: Final = "1110"

_PERMISSIONS_RE: Final = re.compile(r"[01]{4}", re.ASCII)
_ADMIN_PERMISSIONS_RE: Final = re.compile(r"[01]{12}", re.ASCII)
# Text that a HANDLE.NET server emits as format "string": valid UTF-8 without C0 controls
# other than tab, CR and LF, and without DEL (Util.looksLikeBinary).
_BINARY_CONTROLS: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

JSON: TypeAlias = Any
"""A value as :func:`json.loads` returns it."""

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
#: The range of a Handle protocol integer (index, TTL): a signed 32-bit int, as HANDLE.NET.
MAX_INT: Final = 2**31 - 1
# Timestamps as seconds: years 1 to 9999, what an ISO-8601 time can say.
_MIN_TIMESTAMP: Final = -62135596800
_MAX_TIMESTAMP: Final = 253402300799
# Numbers in a value longer than this are refused before Python converts them (a 4,300-digit
# integer is a ValueError in CPython, a long one costs quadratic time).
_MAX_DIGITS: Final = 24
_NUMERIC_STRING: Final = re.compile(r"-?[0-9]{1,19}", re.ASCII)
_LONG_DIGITS: Final = re.compile(r"[0-9]{25}", re.ASCII)
# Where a JSON text may hold a lone surrogate: only through a \uD800-\uDFFF escape.
_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")


class HandleFormatError(DOIError, ValueError):
    """A handle value or record in JSON that does not follow the format; ``.where`` says where.

    >>> try:
    ...     value_from_json({"index": "one", "type": "URL", "data": "x"}, where="values[0]")
    ... except HandleFormatError as exc:
    ...     print(exc)
    values[0].index: must be an integer, not 'one'
    """

    def __init__(self, where: str, detail: str) -> None:
        self.where = where
        self.detail = detail
        super().__init__(f"{where}: {detail}" if where else detail)

    def __reduce__(self) -> tuple[type[HandleFormatError], tuple[object, ...]]:
        return (type(self), (self.where, self.detail))


@dataclass(frozen=True, slots=True)
class Reference:
    """A reference to a value of another handle: ``{"handle":…, "index":…}``."""

    handle: str
    index: int


@dataclass(frozen=True, slots=True)
class AdminData:
    """The data of an HS_ADMIN value: who administers the handle, with which rights.

    ``permissions`` is the 12-bit string of the reference, most significant first: list
    handles, read value, add admin, remove admin, modify admin, add value, remove value,
    modify value, delete derived prefix, add derived prefix, delete handle, add handle.
    """

    handle: str
    index: int
    permissions: str = "011111111111"


@dataclass(frozen=True, slots=True)
class StructuredData:
    """Data in a format doikit keeps as given: ``site`` (HS_SITE) and ``key`` (HS_PUBKEY).

    ``json`` is the value as compact JSON text, so the data stays hashable and round-trips.
    """

    format: str
    json: str


#: What a value's data can be: bytes (formats string, base64, hex), an HS_ADMIN record, an
#: HS_VLIST list of references, or site/key data kept as JSON.
Data: TypeAlias = bytes | AdminData | tuple[Reference, ...] | StructuredData


@dataclass(frozen=True, slots=True)
class HandleValue:
    """One typed value of a handle record.

    >>> v = HandleValue(1, "URL", b"https://www.doi.org/index.html")
    >>> v.text
    'https://www.doi.org/index.html'
    >>> value_to_json(v)
    {'index': 1, 'type': 'URL', 'data': {'format': 'string', 'value': 'https://www.doi.org/index.html'}, 'ttl': 86400}
    """  # noqa: E501 - a doctest's output is one line

    index: int
    type: str
    data: Data
    ttl: int | datetime = DEFAULT_TTL
    timestamp: int = 0
    permissions: str = DEFAULT_PERMISSIONS
    references: tuple[Reference, ...] = field(default=())

    @property
    def text(self) -> str | None:
        """The data as text when it is bytes that decode as UTF-8, else ``None``."""
        if isinstance(self.data, bytes):
            try:
                return self.data.decode()
            except UnicodeDecodeError:
                return None
        return None

    @property
    def public_read(self) -> bool:
        """Whether anyone may read the value (the third permission bit)."""
        return self.permissions[2] == "1"

    def ttl_seconds(self, now: datetime | None = None) -> int:
        """The TTL in seconds; an absolute expiry counts from *now* and is never negative."""
        if isinstance(self.ttl, int):
            return self.ttl
        now = now or datetime.now(UTC)
        return max(0, int((self.ttl - now).total_seconds()))


@dataclass(frozen=True, slots=True)
class HandleRecord:
    """A handle (here: a DOI name) and its values, in index order as stored."""

    handle: str
    values: tuple[HandleValue, ...]

    def filter(self, types: tuple[str, ...] = (), indexes: tuple[int, ...] = ()) -> HandleRecord:
        """The record with only the values :func:`matches` keeps."""
        return HandleRecord(self.handle, filter_values(self.values, types, indexes))

    def first(self, type_: str) -> HandleValue | None:
        """The first value whose type is *type_* (ASCII case ignored), or ``None``."""
        for value in filter_values(self.values, (type_,)):
            return value
        return None


def type_matches(value_type: str, wanted: str) -> bool:
    """Whether a value of type *value_type* answers a ``type=`` query for *wanted*.

    Case is ASCII-insensitive; *wanted* ending in ``.`` also matches every subtype
    (``URL.`` matches ``URL`` and ``URL.mirror``), as HANDLE.NET's ``isParentTypeInArray``.

    >>> type_matches("url.mirror", "URL."), type_matches("URL.mirror", "URL")
    (True, False)
    """
    have = value_type.encode("utf-8", "surrogatepass").lower()
    want = wanted.encode("utf-8", "surrogatepass").lower()
    if want.endswith(b"."):
        return have == want[:-1] or have.startswith(want)
    return have == want


def filter_values(
    values: tuple[HandleValue, ...], types: tuple[str, ...] = (), indexes: tuple[int, ...] = ()
) -> tuple[HandleValue, ...]:
    """The values that match any of *types* **or** any of *indexes*; all when both are empty."""
    if not types and not indexes:
        return values
    return tuple(
        v for v in values if v.index in indexes or any(type_matches(v.type, t) for t in types)
    )


# --- encoding -------------------------------------------------------------------------------


def format_time(seconds: int) -> str:
    """An ISO-8601 UTC time without fractions, as the REST API writes timestamps.

    Years before 1000 keep four digits (the "zero time" some systems write is year 1).

    >>> format_time(1092167399), format_time(-62135596800)
    ('2004-08-10T19:49:59Z', '0001-01-01T00:00:00Z')
    """
    return _iso(_EPOCH + timedelta(seconds=seconds))


def _iso(moment: datetime) -> str:
    """*moment* in UTC as ``YYYY-MM-DDTHH:MM:SSZ`` (``strftime("%Y")`` drops the leading
    zeros of years before 1000 on some platforms; ``isoformat`` never does)."""
    utc = moment.astimezone(UTC).replace(microsecond=0, tzinfo=None)
    return utc.isoformat() + "Z"


def data_to_json(data: Data) -> dict[str, JSON]:
    """The ``data`` object of a value: the format is chosen as HANDLE.NET chooses it."""
    if isinstance(data, bytes):
        try:
            text = data.decode()
        except UnicodeDecodeError:
            text = None
        if text is not None and not _BINARY_CONTROLS.search(text):
            return {"format": "string", "value": text}
        return {"format": "base64", "value": base64.b64encode(data).decode("ascii")}
    if isinstance(data, AdminData):
        return {
            "format": "admin",
            "value": {"handle": data.handle, "index": data.index, "permissions": data.permissions},
        }
    if isinstance(data, StructuredData):
        return {"format": data.format, "value": json.loads(data.json)}
    return {"format": "vlist", "value": [{"handle": r.handle, "index": r.index} for r in data]}


def value_to_json(value: HandleValue) -> dict[str, JSON]:
    """A value as the REST API writes it, keys in the order HANDLE.NET writes them."""
    out: dict[str, JSON] = {"index": value.index, "type": value.type}
    out["data"] = data_to_json(value.data)
    if value.permissions != DEFAULT_PERMISSIONS:
        out["permissions"] = value.permissions
    ttl = value.ttl
    out["ttl"] = ttl if isinstance(ttl, int) else _iso(ttl)
    if value.timestamp:
        out["timestamp"] = format_time(value.timestamp)
    if value.references:
        out["references"] = [{"handle": r.handle, "index": r.index} for r in value.references]
    return out


def values_to_json(values: tuple[HandleValue, ...]) -> str:
    """The ``values`` array as compact JSON text (non-ASCII kept as UTF-8)."""
    return json.dumps([value_to_json(v) for v in values], ensure_ascii=False, separators=(",", ":"))


# --- decoding -------------------------------------------------------------------------------


def _int(obj: JSON, where: str, low: int = -MAX_INT - 1, high: int = MAX_INT) -> int:
    """An integer field: a JSON number, or a numeric string as HANDLE.NET's codec reads one
    (``"index":"200"``, what Handle clients send); within *low* to *high*."""
    if isinstance(obj, str) and _NUMERIC_STRING.fullmatch(obj):
        obj = int(obj)
    if isinstance(obj, bool) or not isinstance(obj, int):
        raise HandleFormatError(where, f"must be an integer, not {_short(obj)}")
    if not low <= obj <= high:
        raise HandleFormatError(where, f"must be {low} to {high}, not {obj}")
    return obj


def _short(obj: JSON) -> str:
    """A value for an error message, cut to a readable length."""
    text = repr(obj)
    return text if len(text) <= 60 else text[:57] + "..."


def _big_number(text: str) -> int:
    if len(text) > _MAX_DIGITS:
        raise HandleFormatError("", f"a number of {len(text)} digits is too long")
    return int(text)


def _no_constant(name: str) -> float:
    raise HandleFormatError("", f"{name} is not a JSON number")


def _finite(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise HandleFormatError("", f"{text} is too large for a JSON number")
    return number


# Made once: json.loads with hooks builds a decoder for every call.
_DECODER: Final = json.JSONDecoder(parse_float=_finite, parse_constant=_no_constant)
_CHECKING_DECODER: Final = json.JSONDecoder(
    parse_int=_big_number, parse_float=_finite, parse_constant=_no_constant
)


def _check_text(obj: JSON, where: str) -> None:
    """Refuse a string holding a lone surrogate (it has no UTF-8 form: no store can keep it)."""
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise HandleFormatError(
                where, f"U+{ord(obj[exc.start]):04X} at position {exc.start} is a lone surrogate"
            ) from None
    elif isinstance(obj, dict):
        for key, item in obj.items():
            _check_text(key, where)
            _check_text(item, f"{where}.{key}" if where else str(key))
    elif isinstance(obj, list):
        for i, item in enumerate(obj):
            _check_text(item, f"{where}[{i}]")


def loads(data: bytes | str) -> JSON:
    """JSON as a Handle server must read it from anyone: a BOM skipped, UTF-8 strictly, and
    nothing a store cannot keep or Python cannot hold — no NaN or Infinity, no number of more
    than 24 digits, no lone surrogate, no nesting deeper than the interpreter's stack.

    The one reader of untrusted JSON for the server (bodies, deposit lines) and the deposit
    client, so all of them refuse the same things with the same messages.

    >>> loads(b'\\xef\\xbb\\xbf{"index": "1"}')
    {'index': '1'}
    >>> loads('{"v": "\\ud83d"}')
    Traceback (most recent call last):
      ...
    doikit.handle._values.HandleFormatError: v: U+D83D at position 0 is a lone surrogate

    :raises HandleFormatError: saying what is wrong and, for syntax, where.
    """
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise HandleFormatError("", f"not UTF-8 at byte {exc.start}") from None
    else:
        text = data
    text = text.removeprefix("\ufeff")
    # Python's own int parsing unless a long run of digits is there (in a string or not):
    # a callback per number would double the cost of reading a deposit.
    decoder = _CHECKING_DECODER if _LONG_DIGITS.search(text) else _DECODER
    try:
        obj = decoder.decode(text)
    except json.JSONDecodeError as exc:
        raise HandleFormatError("", f"not JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise HandleFormatError("", "not JSON a server can read: nested too deep") from None
    # A lone surrogate comes in through an escape, or raw in a str read with surrogateescape.
    if _SURROGATE_ESCAPE.search(text) or (not isinstance(data, bytes) and not text.isascii()):
        _check_text(obj, "")
    return obj


def _str(obj: JSON, where: str) -> str:
    if not isinstance(obj, str):
        raise HandleFormatError(where, f"must be a string, not {obj!r}")
    return obj


def parse_time(text: str, where: str) -> datetime:
    """An ISO-8601 time; a time without a zone is UTC."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise HandleFormatError(where, f"must be an ISO-8601 time, not {text!r}") from None
    try:
        return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    except OverflowError:
        raise HandleFormatError(
            where, f"must be within the years 1 to 9999 in UTC: {text!r}"
        ) from None


def _admin_permissions(obj: JSON, where: str) -> str:
    # The server takes a 12-bit string, "*", a boolean, an int bitmask or 12 booleans.
    if obj == "*" or obj is True:
        return "1" * 12
    if obj is False:
        return "0" * 12
    if isinstance(obj, str) and _ADMIN_PERMISSIONS_RE.fullmatch(obj):
        return obj
    if isinstance(obj, int) and not isinstance(obj, bool) and 0 <= obj < 4096:
        return format(obj, "012b")
    if isinstance(obj, list) and len(obj) == 12 and all(isinstance(b, bool) for b in obj):
        return "".join("1" if b else "0" for b in obj)
    raise HandleFormatError(
        where, f"must be 12 binary digits, '*', a bitmask or 12 booleans, not {obj!r}"
    )


def _reference(obj: JSON, where: str) -> Reference:
    if not isinstance(obj, dict):
        raise HandleFormatError(where, f"must be an object with handle and index, not {obj!r}")
    return Reference(
        _str(obj.get("handle"), f"{where}.handle"), _int(obj.get("index"), f"{where}.index")
    )


def data_from_json(obj: JSON, where: str) -> Data:
    """The data of a value from its JSON: an object with format and value, or a bare string."""
    if isinstance(obj, str):
        return obj.encode("utf-8", "surrogatepass")
    if not isinstance(obj, dict):
        raise HandleFormatError(
            where, f"must be a string or an object with format and value, not {obj!r}"
        )
    fmt = _str(obj.get("format", "string"), f"{where}.format").lower()
    if "value" not in obj:
        raise HandleFormatError(where, "has no 'value'")
    value = obj["value"]
    here = f"{where}.value"
    if fmt == "string":
        return _str(value, here).encode("utf-8", "surrogatepass")
    if fmt == "base64":
        try:
            return base64.b64decode(_str(value, here), validate=True)
        except binascii.Error:
            raise HandleFormatError(here, "is not valid base64") from None
    if fmt == "hex":
        try:
            return bytes.fromhex(_str(value, here))
        except ValueError:
            raise HandleFormatError(here, "is not valid hex") from None
    if fmt == "admin":
        if not isinstance(value, dict):
            raise HandleFormatError(here, "must be an object with handle, index, permissions")
        return AdminData(
            _str(value.get("handle"), f"{here}.handle"),
            _int(value.get("index"), f"{here}.index"),
            _admin_permissions(value.get("permissions", "011111111111"), f"{here}.permissions"),
        )
    if fmt == "vlist":
        if not isinstance(value, list):
            raise HandleFormatError(here, "must be a list of references")
        return tuple(_reference(r, f"{here}[{i}]") for i, r in enumerate(value))
    if fmt in {"site", "key"}:
        if not isinstance(value, dict):
            raise HandleFormatError(here, f"must be an object for format {fmt!r}")
        return StructuredData(fmt, json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    raise HandleFormatError(f"{where}.format", f"unknown format {fmt!r}")


def value_from_json(obj: JSON, *, where: str = "value") -> HandleValue:
    """A :class:`HandleValue` from its JSON, as a HANDLE.NET server reads it.

    :raises HandleFormatError: saying which field is wrong and how.
    """
    if not isinstance(obj, dict):
        raise HandleFormatError(where, f"must be an object, not {obj!r}")
    index = _int(obj.get("index"), f"{where}.index", 0)
    type_ = _str(obj.get("type"), f"{where}.type")
    if "data" not in obj:
        raise HandleFormatError(where, "has no 'data'")
    data = data_from_json(obj["data"], f"{where}.data")
    ttl_obj = obj.get("ttl", DEFAULT_TTL)
    ttl: int | datetime
    if isinstance(ttl_obj, str) and not _NUMERIC_STRING.fullmatch(ttl_obj):
        ttl = parse_time(ttl_obj, f"{where}.ttl")
    else:
        ttl = _int(ttl_obj, f"{where}.ttl", 0)
    stamp = obj.get("timestamp", 0)
    timestamp = (
        int((parse_time(stamp, f"{where}.timestamp") - _EPOCH).total_seconds())
        if isinstance(stamp, str) and not _NUMERIC_STRING.fullmatch(stamp)
        else _int(stamp, f"{where}.timestamp", _MIN_TIMESTAMP, _MAX_TIMESTAMP)
    )
    permissions = obj.get("permissions", DEFAULT_PERMISSIONS)
    if permissions == "*":
        permissions = "1111"
    if not isinstance(permissions, str) or not _PERMISSIONS_RE.fullmatch(permissions):
        raise HandleFormatError(
            f"{where}.permissions", f"must be 4 binary digits, not {permissions!r}"
        )
    refs = obj.get("references", [])
    if not isinstance(refs, list):
        raise HandleFormatError(f"{where}.references", "must be a list")
    references = tuple(_reference(r, f"{where}.references[{i}]") for i, r in enumerate(refs))
    return HandleValue(index, type_, data, ttl, timestamp, permissions, references)


def values_from_json(obj: JSON, *, where: str = "values") -> tuple[HandleValue, ...]:
    """A list of values from JSON; indexes must be unique.

    :raises HandleFormatError: naming the first bad value.
    """
    if not isinstance(obj, list):
        raise HandleFormatError(where, f"must be a list of values, not {type(obj).__name__}")
    values = tuple(value_from_json(v, where=f"{where}[{i}]") for i, v in enumerate(obj))
    seen: set[int] = set()
    for i, v in enumerate(values):
        if v.index in seen:
            raise HandleFormatError(f"{where}[{i}].index", f"index {v.index} appears twice")
        seen.add(v.index)
    return values


def record_from_json(obj: JSON) -> HandleRecord:
    """A record from a REST API reply body (``responseCode`` 1 or 200).

    :raises HandleFormatError: when the body is not such a reply.
    """
    if not isinstance(obj, dict):
        raise HandleFormatError("", "the reply is not a JSON object")
    handle = _str(obj.get("handle"), "handle")
    return HandleRecord(handle, values_from_json(obj.get("values", [])))
