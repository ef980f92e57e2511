"""`doikit serve` against an attacker's and a careless user's input, on both stores.

Each test here reproduces a finding of the hardening review: it failed before the fix.
"""

from __future__ import annotations

import json
import socket
import time
import uuid
from typing import TYPE_CHECKING, Any

import httpx
import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from conftest import Server


@pytest.fixture
def http(served: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served.url, follow_redirects=False, timeout=30) as client:
        yield client


def _auth(served: Server) -> dict[str, str]:
    return {"Authorization": f"Bearer {served.token}"}


def _put(http: httpx.Client, served: Server, name: str, body: Any) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return http.put("/api/handles/" + name, content=content, headers=_auth(served))


# --- disclosure ------------------------------------------------------------------------------

PRIVATE = [
    {
        "index": 1,
        "type": "URL",
        "data": {"format": "string", "value": "https://private.example/secret"},
        "permissions": "1100",
    },
    {"index": 2, "type": "EMAIL", "data": "hidden@example.org", "permissions": "1100"},
    {"index": 3, "type": "DESC", "data": "public words"},
]


@pytest.fixture
def private_record(http: httpx.Client, served: Server) -> str:
    name = "10.5555/private-" + uuid.uuid4().hex[:8]
    assert _put(http, served, name, {"values": PRIVATE}).status_code == 201
    return name


@pytest.mark.parametrize(
    "query", ["", "?action=api", "?noredirect", "?action=showvalues", "?type=URL", "?index=1"]
)
def test_private_values_never_reach_the_public(
    http: httpx.Client, private_record: str, query: str
) -> None:
    r = http.get(f"/{private_record}{query}")
    assert "private.example" not in r.text
    assert "hidden@example.org" not in r.text
    assert "private.example" not in r.headers.get("location", "")
    assert r.status_code != 500


def test_private_values_stay_hidden_behind_an_alias(
    http: httpx.Client, served: Server, private_record: str
) -> None:
    alias = private_record + "-alias"
    body = {"values": [{"index": 1, "type": "HS_ALIAS", "data": private_record}]}
    assert _put(http, served, alias, body).status_code == 201
    r = http.get(f"/{alias}", follow_redirects=True)
    assert "private.example" not in r.text
    assert all("private.example" not in str(h.headers) for h in r.history)


def test_the_public_part_is_still_shown(http: httpx.Client, private_record: str) -> None:
    r = http.get(f"/{private_record}?action=api")
    assert [v["index"] for v in r.json()["values"]] == [3]


# --- a bad record never sinks good ones --------------------------------------------------------

BAD_LINES = {
    "surrogate": b'{"doi":"10.5555/bad-s","url":"https://e.org/\\ud83d"}',
    "deep": b'{"doi":"10.5555/bad-d","values":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "big int": b'{"doi":"10.5555/bad-i","values":[{"index":'
    + b"9" * 5000
    + b',"type":"X","data":"a"}]}',
    "timestamp": (
        b'{"doi":"10.5555/bad-t","values":[{"index":1,"type":"X","data":"a",'
        b'"timestamp":100000000000000000000}]}'
    ),
    "NaN": (
        b'{"doi":"10.5555/bad-n","values":[{"index":1,"type":"X",'
        b'"data":{"format":"site","value":{"v":NaN}}}]}'
    ),
    "long name": json.dumps({"doi": "10.5555/" + "x" * 3000, "url": "https://e.org/"}).encode(),
    "not UTF-8": b'{"doi":"10.5555/bad-u","url":"https://e.org/\xff"}',
    "NUL type": b'{"doi":"10.5555/bad-z","values":[{"index":1,"type":"A\\u0000","data":"a"}]}',
}


@pytest.mark.parametrize("kind", list(BAD_LINES))
def test_a_bad_deposit_line_is_reported_and_its_neighbours_go_in(
    http: httpx.Client, served: Server, kind: str
) -> None:
    tag = uuid.uuid4().hex[:8]
    good = [
        json.dumps({"doi": f"10.5555/good-{tag}-{i}", "url": f"https://e.org/{i}"}).encode()
        for i in range(3)
    ]
    body = b"\xef\xbb\xbf" + b"\n".join([good[0], good[1], BAD_LINES[kind], good[2]])
    r = http.post("/api/deposit", content=body, headers=_auth(served))
    if kind == "NUL type":
        # A NUL in a type is legal JSON and a legal Handle value: stored, not indexed.
        assert (r.status_code, r.json()["accepted"]) == (200, 4), r.text
    else:
        assert r.status_code == 200, r.text
        assert r.json()["accepted"] == 3
        [rejected] = r.json()["rejected"]
        assert rejected["line"] == 3
        assert rejected["message"]
    for i in range(3):
        assert http.get(f"/api/handles/10.5555/good-{tag}-{i}").status_code == 200
    assert "Traceback" not in served.errors()


@pytest.mark.parametrize("kind", [k for k in BAD_LINES if k != "NUL type"])
def test_a_bad_put_body_is_400_and_changes_nothing(
    http: httpx.Client, served: Server, kind: str
) -> None:
    name = "10.5555/put-" + uuid.uuid4().hex[:8]
    assert (
        _put(
            http, served, name, {"values": [{"index": 1, "type": "URL", "data": "https://e.org/"}]}
        ).status_code
        == 201
    )
    before = http.get(f"/api/handles/{name}").json()
    line = json.loads(BAD_LINES[kind]) if kind == "long name" else None
    body = (
        BAD_LINES[kind].replace(b'"doi":', b'"ignored":')
        if line is None
        else json.dumps(
            {"values": [{"index": 1, "type": "URL", "data": "https://e.org/x"}]}
        ).encode()
    )
    target = name if line is None else line["doi"]
    r = _put(http, served, target, body)
    assert r.status_code == 400, r.text
    assert r.json()["message"]
    assert http.get(f"/api/handles/{name}").json() == before
    assert "Traceback" not in served.errors()


# --- no 500 from input -------------------------------------------------------------------------


def test_a_year_one_timestamp_and_an_offset_ttl_read_back_everywhere(
    http: httpx.Client, served: Server
) -> None:
    name = "10.5555/zero-" + uuid.uuid4().hex[:8]
    values = [
        {
            "index": 1,
            "type": "URL",
            "data": "https://e.org/",
            "ttl": "2030-01-01T05:00:00+05:00",
        },
        {"index": 2, "type": "DESC", "data": "d", "ttl": "0001-01-01T00:00:00Z"},
    ]
    assert _put(http, served, name, {"values": values}).status_code == 201
    stored = http.get(f"/api/handles/{name}").json()["values"]
    assert [v["ttl"] for v in stored] == ["2030-01-01T00:00:00Z", "0001-01-01T00:00:00Z"]
    for query in ("?noredirect", "?action=api", "?type=DESC", "?action=showvalues", ""):
        assert http.get(f"/{name}{query}").status_code < 500
    from doikit.handle import record_from_json  # noqa: PLC0415

    ttl = record_from_json(http.get(f"/api/handles/{name}").json()).values[1].ttl
    assert not isinstance(ttl, int)
    assert ttl.year == 1


@pytest.mark.parametrize(
    "path",
    [
        "/api/handles/10.1000/a%00b",
        "/10.1000/a%00b",
        "/ra/10.1000/a%00b",
        "/api/handles?prefix=10.5555&page=100000000000000000",
        "/api/handles?prefix=10.5555&page=1&pageSize=1&page=x",
    ],
)
def test_odd_requests_are_answered_without_500(
    http: httpx.Client, served: Server, path: str
) -> None:
    r = http.get(path, headers=_auth(served))
    assert r.status_code < 500, r.text
    assert "Traceback" not in served.errors()


def test_a_listing_far_past_the_end_is_empty(http: httpx.Client, served: Server) -> None:
    r = http.get(
        "/api/handles", params={"prefix": "10.5555", "page": 10**17}, headers=_auth(served)
    )
    assert r.status_code == 200
    assert r.json()["handles"] == []
    assert r.json()["totalCount"] >= 0


def test_routes_read_names_from_the_raw_path_only_as_written(http: httpx.Client) -> None:
    # %2F in the route's own words decodes to the same route, but is not the route.
    r = http.get("/api%2Fhandles/10.1000/1")
    assert r.status_code == 404
    assert r.json()["responseCode"] == 4
    assert http.get("/ra%2F10.1000/1").status_code == 400


def test_unsupported_parameters_are_refused_never_ignored(
    http: httpx.Client, served: Server
) -> None:
    name = "10.5555/param-" + uuid.uuid4().hex[:8]
    assert (
        _put(
            http, served, name, [{"index": 1, "type": "URL", "data": "https://e.org/"}]
        ).status_code
        == 201
    )
    for method, query in [("DELETE", "?idx=1"), ("PUT", "?indexes=1"), ("GET", "?typ=URL")]:
        r = http.request(
            method,
            f"/api/handles/{name}{query}",
            content=b'[{"index":1,"type":"URL","data":"https://e.org/2"}]',
            headers=_auth(served),
        )
        assert (r.status_code, r.json()["responseCode"]) == (400, 4), (method, r.text)
    assert http.get(f"/api/handles/{name}").json()["values"][0]["data"]["value"] == "https://e.org/"


# --- redirects ---------------------------------------------------------------------------------


def test_the_not_found_hint_never_links_to_another_host(http: httpx.Client) -> None:
    r = http.get("/%2Fevil.example/")
    assert r.status_code == 404
    assert 'href="//' not in r.text
    assert 'href="/%2Fevil.example"' in r.text


def test_urlappend_cannot_change_the_host(http: httpx.Client, served: Server) -> None:
    name = "10.5555/append-" + uuid.uuid4().hex[:8]
    assert (
        _put(http, served, name, [{"index": 1, "type": "URL", "data": "https://e.org"}]).status_code
        == 201
    )
    r = http.get(f"/{name}?urlappend=@evil.example")
    assert r.status_code == 400
    assert "evil" not in r.headers.get("location", "")
    ok = http.get(f"/{name}?urlappend=/path%3Fq%3D1")
    assert (ok.status_code, ok.headers["location"]) == (302, "https://e.org/path?q=1")


def test_a_10320_loc_value_is_bounded(http: httpx.Client, served: Server) -> None:
    hrefs = "".join(f'<location href="https://e.org/{i:06}"/>' for i in range(1000))
    body = [{"index": 1, "type": "10320/loc", "data": f"<locations>{hrefs}</locations>"}]
    r = _put(http, served, "10.5555/loc-" + uuid.uuid4().hex[:8], body)
    assert r.status_code == 400
    assert "at most" in r.json()["message"]


def test_sessions_are_not_offered_and_say_what_to_do(http: httpx.Client) -> None:
    r = http.post("/api/sessions", content=b"")
    assert (r.status_code, r.json()["responseCode"]) == (404, 4)
    assert "HTTP Basic" in r.json()["message"]


# --- found by review: each failed before its fix -----------------------------------------------


def test_reverse_lookup_patterns_cannot_stall_the_server(
    http: httpx.Client, served: Server
) -> None:
    name = "10.5555/star-" + uuid.uuid4().hex[:8]
    url = "https://e.org/" + "a" * 60
    assert _put(http, served, name, [{"index": 1, "type": "URL", "data": url}]).status_code == 201
    started = time.monotonic()
    r = http.get("/hrls/handles", params={"URL": "h" + "*" * 8 + "Z"}, headers=_auth(served))
    assert r.status_code == 200
    assert time.monotonic() - started < 2
    assert (
        http.get("/hrls/handles", params={"URL": "*" * 9}, headers=_auth(served)).status_code == 400
    )
    found = http.get("/hrls/handles", params={"URL": "https://e.org/*a*a"}, headers=_auth(served))
    assert name in found.json()


def test_a_deposit_of_too_many_lines_is_refused_whole(http: httpx.Client, served: Server) -> None:
    r = http.post("/api/deposit", content=b"1\n" * 100_001, headers=_auth(served))
    assert (r.status_code, r.json()["responseCode"]) == (400, 4)


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("PUT", "/api/handles/10.5555/%FF", b"[]", 400),
        ("DELETE", "/api/handles/10.5555/%FF", b"", 400),
    ],
)
def test_bad_escapes_in_write_paths_are_400(
    http: httpx.Client, served: Server, *, method: str, path: str, body: bytes, status: int
) -> None:
    r = http.request(method, path, content=body, headers=_auth(served))
    assert (r.status_code, r.json()["responseCode"]) == (status, 102)


def test_a_huge_identity_index_is_401(http: httpx.Client) -> None:
    auth = httpx.BasicAuth("1" * 5000 + "%3A10.5555%2FADMIN", "x")
    assert http.delete("/api/handles/10.5555/x", auth=auth).status_code == 401


@pytest.mark.parametrize(
    "value",
    [
        {
            "index": 1,
            "type": "URL",
            "data": "https://a.example/",
            "ttl": "0001-01-01T00:00:00+01:00",
        },
        {
            "index": 1,
            "type": "URL",
            "data": "https://a.example/",
            "ttl": "9999-12-31T23:59:59-14:00",
        },
        {
            "index": 1,
            "type": "10320/loc",
            "data": "<!DOCTYPE l [<!ENTITY a 'aaaa'>]><locations>"
            "<location href='https://a.example/&a;'/></locations>",
        },
    ],
)
def test_values_no_store_can_keep_or_serve_cheaply_are_400(
    http: httpx.Client, served: Server, value: dict[str, Any]
) -> None:
    r = _put(http, served, "10.5555/v-" + uuid.uuid4().hex[:8], [value])
    assert (r.status_code, r.json()["responseCode"]) == (400, 202)


def test_a_secret_key_written_through_the_api_is_hashed_and_private(
    http: httpx.Client, served: Server
) -> None:
    name = "10.5555/key-" + uuid.uuid4().hex[:8]
    values = [
        {"index": 1, "type": "URL", "data": "https://e.org/"},
        {"index": 2, "type": "HS_SECKEY", "data": "open-sesame", "permissions": "1111"},
    ]
    assert _put(http, served, name, values).status_code == 201
    assert "open-sesame" not in http.get(f"/api/handles/{name}?type=HS_SECKEY").text
    full = http.get(f"/api/handles/{name}?publicOnly=false", headers=_auth(served)).json()
    [key] = [v for v in full["values"] if v["type"] == "HS_SECKEY"]
    assert key["permissions"] == "1100"
    assert key["data"]["value"].startswith("doikit-scrypt$")
    auth = httpx.BasicAuth(f"2%3A{name}", "open-sesame")
    assert http.delete("/api/handles/10.5555/none", auth=auth).status_code in {403, 404}


def test_an_early_refusal_of_a_large_body_is_one_response(served: Server) -> None:
    from urllib.parse import urlsplit  # noqa: PLC0415

    parts = urlsplit(served.url)
    body = b"[" + b" " * 200_000 + b"]"
    head = (
        b"PUT /api/handles/10.5555/x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n"
    )
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head + body)
        sock.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data.count(b"HTTP/1.1 ") == 1, data[:500]
    assert data.startswith(b"HTTP/1.1 401")


def test_a_record_an_older_build_stored_out_of_range_is_named_and_can_be_replaced(
    http: httpx.Client, served: Server
) -> None:
    """Before this build checked integer ranges, a value index of 2**40 was stored as given;
    every read that decodes the record was a bare 500 (plain reads serve it as stored). Now
    the answer names the record, and the prefix's administrator can replace it whole or
    delete it."""
    import asyncio  # noqa: PLC0415

    from doikit.server import Row, open_store  # noqa: PLC0415

    name = "10.5555/old-" + uuid.uuid4().hex[:8]
    damaged = '[{"index":1099511627776,"type":"URL","data":{"format":"string","value":"https://a.example/"},"ttl":86400}]'

    async def store_old_record() -> None:
        store = open_store(served.store)
        await store.open()
        try:
            await store.put_many([Row(name.lower(), name, "10.5555", damaged)])
        finally:
            await store.close()

    asyncio.run(store_old_record())
    reply = http.get("/api/handles/" + name + "?type=URL")
    assert reply.status_code == 500
    assert name in reply.json()["message"]
    assert "index" in reply.json()["message"]
    assert http.get("/" + name + "?noredirect").status_code == 500
    assert "Traceback" not in served.errors()
    assert (
        http.delete("/api/handles/" + name + "?index=1", headers=_auth(served)).status_code == 500
    )
    fixed = {"values": [{"index": 1, "type": "URL", "data": "https://b.example/"}]}
    assert _put(http, served, name, fixed).status_code == 200
    assert http.get("/" + name).headers["location"] == "https://b.example/"
    assert http.delete("/api/handles/" + name, headers=_auth(served)).status_code == 200
    assert http.get("/api/handles/" + name).status_code == 404
