"""Properties of writes against a real `doikit serve` on both stores (Hypothesis).

* A per-value PUT or DELETE changes exactly the values it names: the record read back is
  the record before with those values added, replaced or removed, and nothing else.
* Fuzzing: any PUT body and any deposit line is answered with a reason or stored exactly,
  never with a 500; a bad deposit line never loses its neighbours.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doikit.handle import HandleFormatError, value_from_json, value_to_json

if TYPE_CHECKING:
    from collections.abc import Iterator

    from conftest import Server

SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)


@pytest.fixture(scope="module")
def http(served: Server) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {served.token}"}
    with httpx.Client(base_url=served.url, headers=headers, timeout=30) as client:
        yield client


def _value(index: int, kind: str, text: str) -> dict[str, Any]:
    data = f"https://e.org/{text.encode().hex()}" if kind.upper() == "URL" else text
    return {"index": index, "type": kind, "data": {"format": "string", "value": data}}


# Text a server writes back as format "string" (controls go as base64, as HANDLE.NET's).
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), max_size=20)
_VALUES = st.dictionaries(
    st.integers(1, 12),
    st.tuples(st.sampled_from(["URL", "EMAIL", "DESC", "X.Y", "url"]), _TEXT),
    min_size=1,
    max_size=6,
)


def _shown(values: list[dict[str, Any]]) -> dict[int, tuple[str, str]]:
    return {v["index"]: (v["type"], v["data"]["value"]) for v in values}


def _read(http: httpx.Client, name: str) -> dict[int, tuple[str, str]]:
    r = http.get(f"/api/handles/{name}")
    assert r.status_code == 200, r.text
    return _shown(r.json()["values"])


@SETTINGS
@given(record=_VALUES, change=_VALUES, overwrite=st.booleans())
def test_a_per_value_put_changes_exactly_those_values(
    http: httpx.Client,
    record: dict[int, tuple[str, str]],
    change: dict[int, tuple[str, str]],
    *,
    overwrite: bool,
) -> None:
    name = "10.5555/p-" + uuid.uuid4().hex
    before = [_value(i, *v) for i, v in record.items()]
    assert http.put(f"/api/handles/{name}", json=before).status_code == 201
    body = [_value(i, *v) for i, v in change.items()]
    query = "&".join(f"index={i}" for i in change) + ("" if overwrite else "&overwrite=false")
    r = http.put(f"/api/handles/{name}?{query}", json=body)
    clash = set(change) & set(record)
    if clash and not overwrite:
        assert (r.status_code, r.json()["responseCode"]) == (409, 201)
        assert _read(http, name) == _shown(before)
        return
    assert r.status_code == (200 if clash else 201), r.text
    assert _read(http, name) == {**_shown(before), **_shown(body)}


@SETTINGS
@given(record=_VALUES, data=st.data())
def test_a_per_value_delete_removes_exactly_those_values(
    http: httpx.Client, record: dict[int, tuple[str, str]], data: st.DataObject
) -> None:
    name = "10.5555/d-" + uuid.uuid4().hex
    before = [_value(i, *v) for i, v in record.items()]
    assert http.put(f"/api/handles/{name}", json=before).status_code == 201
    gone = data.draw(st.sets(st.integers(1, 14), min_size=1, max_size=4))
    r = http.delete(f"/api/handles/{name}", params=[("index", str(i)) for i in sorted(gone)])
    left = {i: v for i, v in _shown(before).items() if i not in gone}
    if gone - set(record):
        assert (r.status_code, r.json()["responseCode"]) == (400, 200)
        assert _read(http, name) == _shown(before)
    elif not left:
        assert (r.status_code, r.json()["responseCode"]) == (400, 202)
        assert _read(http, name) == _shown(before)
    else:
        assert r.status_code == 200, r.text
        assert _read(http, name) == left


# --- fuzzing -----------------------------------------------------------------------------------

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False)
    | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_NASTY = st.sampled_from(
    [
        b'"\\ud83d"',
        b"[" * 5000 + b"]" * 5000,
        b"9" * 5000,
        b"NaN",
        b"1e400",
        b'"\\u0000"',
        b"100000000000000000000",
    ]
)


def _value_like() -> st.SearchStrategy[bytes]:
    plain = st.fixed_dictionaries(
        {
            "index": st.one_of(st.integers(-5, 2**32), st.text(max_size=3)),
            "type": _JSON,
            "data": _JSON,
        },
        optional={"ttl": _JSON, "timestamp": _JSON, "permissions": _JSON},
    ).map(lambda v: json.dumps(v).encode())
    return st.one_of(plain, _NASTY, _JSON.map(lambda v: json.dumps(v).encode()))


@SETTINGS
@given(values=st.lists(_value_like(), max_size=3))
def test_any_put_body_is_refused_with_a_reason_or_stored_exactly(
    http: httpx.Client, served: Server, values: list[bytes]
) -> None:
    name = "10.5555/f-" + uuid.uuid4().hex
    body = b'{"values":[' + b",".join(values) + b"]}"
    r = http.put(f"/api/handles/{name}", content=body)
    assert r.status_code in {201, 400, 409}, r.text
    if r.status_code != 201:
        assert r.json()["message"]
        assert http.get(f"/api/handles/{name}").status_code == 404
        return
    sent = json.loads(body)["values"]
    try:
        expected = [value_to_json(value_from_json(v)) for v in sent]
    except HandleFormatError:  # pragma: no cover - the server refused what the codec refuses
        pytest.fail(f"the server stored what the codec refuses: {body!r}")
    stored = http.get(f"/api/handles/{name}").json()["values"]
    for v in stored:
        v.pop("timestamp", None)
    for v in expected:
        v.pop("timestamp", None)
    assert stored == expected
    assert "Traceback" not in served.errors()


@SETTINGS
@given(lines=st.lists(st.one_of(_value_like(), st.just(b"")), min_size=1, max_size=4))
def test_a_bad_deposit_line_never_loses_its_neighbours(
    http: httpx.Client, served: Server, lines: list[bytes]
) -> None:
    tag = uuid.uuid4().hex
    good = [
        json.dumps({"doi": f"10.5555/g-{tag}-{i}", "url": f"https://e.org/{i}"}).encode()
        for i in range(2)
    ]
    fuzzed = [
        b'{"doi":"10.5555/z-' + tag.encode() + str(i).encode() + b'","values":[' + line + b"]}"
        for i, line in enumerate(lines)
    ]
    body = b"\n".join([good[0], *fuzzed, good[1]])
    r = http.post("/api/deposit", content=body)
    assert r.status_code == 200, r.text
    reply = r.json()
    assert reply["accepted"] + len(reply["rejected"]) == len(fuzzed) + 2
    assert all(item["message"] for item in reply["rejected"])
    for i in range(2):
        assert http.get(f"/api/handles/10.5555/g-{tag}-{i}").status_code == 200
    assert "Traceback" not in served.errors()


# --- the deposit's quick reading of a plain line equals the JSON reading -------------------

_TEXTS = st.one_of(
    st.sampled_from(["10.5555/x", "10.5555/Ab-1", "10.5555/é", "10.9999/x", "10.5555/a b", "x"]),
    st.text(max_size=12),
)
_URLS = st.one_of(
    st.sampled_from(["https://example.org/a", "http://e.org/é", "ftp://e.org/", "https://e/\x7f"]),
    st.text(max_size=12).map(lambda t: "https://example.org/" + t),
)


def _answer(read: Any, line: bytes) -> tuple[str, Any]:
    from doikit.server._writes import _LineError  # noqa: PLC0415 - the module's own part

    try:
        return ("row", read(line, ("10.5555",), 0, "2026-01-01T00:00:00Z"))
    except _LineError as exc:
        return ("refused", (exc.message, exc.doi, exc.line))


@settings(max_examples=400)
@given(
    name=_TEXTS,
    url=_URLS,
    number=st.one_of(st.none(), st.integers(-2, 2_000_000_000)),
    compact=st.booleans(),
    raw=st.binary(max_size=4),
)
def test_a_plain_deposit_line_reads_as_its_json(
    name: str, url: str, number: int | None, compact: bool, raw: bytes
) -> None:
    """_deposit_row reads `doikit deposit`'s plain lines without a JSON decoder; whatever a
    line holds (escapes, controls, odd numbers, bytes that are not UTF-8), the answer is the
    JSON path's."""
    from doikit.server._writes import _deposit_row, _json_row  # noqa: PLC0415

    record: dict[str, Any] = {"doi": name, "url": url}
    if number is not None:
        record["line"] = number
    separators = (",", ":") if compact else (", ", ": ")
    line = json.dumps(record, ensure_ascii=False, separators=separators).encode(
        "utf-8", "surrogatepass"
    )
    for candidate in (line, line.replace(b"example", raw)):
        assert _answer(_deposit_row, candidate) == _answer(_json_row, candidate)


@settings(max_examples=400)
@given(
    name=st.one_of(_TEXTS, st.text()),
    url=st.one_of(_URLS, st.text()),
    number=st.one_of(st.integers(), st.booleans()),
    order=st.permutations(["doi", "url", "line"]),
)
def test_doikit_deposit_writes_a_csv_record_as_json_does(
    name: str, url: str, number: int, order: list[str]
) -> None:
    """`doikit deposit` writes a CSV record without the JSON encoder when nothing in it needs
    escaping; whatever the record holds, the bytes are json.dumps's."""
    from doikit._written import encoded  # noqa: PLC0415 - the module's own part

    values = {"doi": name, "url": url, "line": number}
    item: dict[str, object] = {key: values[key] for key in order}
    assert encoded(item) == json.dumps(item, ensure_ascii=False).encode("utf-8")
