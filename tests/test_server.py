"""`doikit serve` over a real socket: the REST API, the proxy, Which RA, writes (handle-api.md)."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from doikit._present import url_path

if TYPE_CHECKING:
    import httpx

    from conftest import Server

JSON = "application/json;charset=UTF-8"


def put(
    client: httpx.Client, server: Server, name: str, values: Any, **params: str
) -> httpx.Response:
    return client.put(
        "/api/handles/" + url_path(name),
        params=params,
        content=json.dumps({"values": values}),
        headers={"Authorization": f"Bearer {server.token}"},
    )


def url_value(url: str, index: int = 1) -> dict[str, Any]:
    return {"index": index, "type": "URL", "data": {"format": "string", "value": url}}


def raw_get(server: Server, target: bytes) -> tuple[int, dict[str, str], bytes]:
    """A GET with the request target sent byte for byte (no client normalization)."""
    parts = urlsplit(server.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        key, _, value = line.partition(":")
        headers[key.strip().lower()] = value.strip()
    return int(lines[0].split()[1]), headers, body


# --- the REST API --------------------------------------------------------------------------


def test_resolve_envelope(client: httpx.Client) -> None:
    r = client.get("/api/handles/10.1000/1")
    assert r.status_code == 200
    assert r.headers["content-type"] == JSON
    assert r.headers["access-control-allow-origin"] == "*"
    body = r.json()
    assert list(body) == ["responseCode", "handle", "values"]
    assert body["responseCode"] == 1
    assert body["handle"] == "10.1000/1"
    assert [v["type"] for v in body["values"]] == ["URL", "HS_ADMIN"]
    assert body["values"][1]["data"]["format"] == "admin"


@pytest.mark.parametrize(
    ("path", "echo"),
    [
        ("/api/handles/10.1000/1", "10.1000/1"),
        ("/api/handles/10.1000%2F1", "10.1000/1"),
        ("/api/handles/10.1000/ABC".replace("ABC", "1"), "10.1000/1"),
        ("/api/handles/10.5594/smpte.st2067-21.2020", "10.5594/smpte.st2067-21.2020"),
        (
            "/api/handles/10.26321/%C3%81.GUTI%C3%89RREZ.ZARZA.02.2018.03",
            "10.26321/Á.GUTIÉRREZ.ZARZA.02.2018.03",
        ),
    ],
)
def test_handle_echoed_as_requested_and_found_by_ascii_folding(
    client: httpx.Client, path: str, echo: str
) -> None:
    r = client.get(path)
    assert r.status_code == 200
    assert r.json()["handle"] == echo


def test_non_ascii_case_is_not_folded(client: httpx.Client) -> None:
    r = client.get("/api/handles/10.26321/%C3%A1.GUTI%C3%89RREZ.ZARZA.02.2018.03")
    assert r.status_code == 404


@pytest.mark.parametrize(
    ("query", "indexes"),
    [
        ("type=URL", [1]),
        ("type=url", [1]),
        ("type=HS_ADMIN", [100]),
        ("index=100", [100]),
        ("type=URL&index=100", [1, 100]),
        ("type=URL.", [1]),
    ],
)
def test_type_and_index_filters(client: httpx.Client, query: str, indexes: list[int]) -> None:
    body = client.get(f"/api/handles/10.1000/1?{query}").json()
    assert [v["index"] for v in body["values"]] == indexes


def test_no_matching_values_is_rc_200(client: httpx.Client) -> None:
    r = client.get("/api/handles/10.1000/1?type=NOSUCH")
    assert r.status_code == 200
    assert r.text == '{"responseCode":200,"values":[],"handle":"10.1000/1"}'


@pytest.mark.parametrize(
    ("path", "status", "body"),
    [
        ("/api/handles/10.1000/nope", 404, {"responseCode": 100, "handle": "10.1000/nope"}),
        ("/api/handles/10.99999/x", 404, {"responseCode": 100, "handle": "10.99999/x"}),
        ("/api/handles/", 400, {"responseCode": 102, "message": "Empty handle invalid"}),
    ],
)
def test_not_found_and_empty(client: httpx.Client, path: str, status: int, body: object) -> None:
    r = client.get(path)
    assert (r.status_code, r.json()) == (status, body)


def test_bad_index_is_400_rc_4(client: httpx.Client) -> None:
    r = client.get("/api/handles/10.1000/1?index=one")
    assert r.status_code == 400
    assert r.json()["responseCode"] == 4
    assert "one" in r.json()["message"]


@pytest.mark.parametrize(
    "target", [b"/api/handles/10.1000/%zz", b"/api/handles/10.1000/%C3", b"/api/handles/10.1000/%"]
)
def test_bad_escapes_and_utf8_are_400(server: Server, target: bytes) -> None:
    status, headers, body = raw_get(server, target)
    assert status == 400
    assert json.loads(body)["responseCode"] == 102
    assert headers["content-type"] == JSON


def test_pretty_and_jsonp(client: httpx.Client) -> None:
    pretty = client.get("/api/handles/10.1000/1?pretty")
    assert "\n" in pretty.text
    assert pretty.json() == client.get("/api/handles/10.1000/1").json()
    jsonp = client.get(
        "/api/handles/10.1000/1", params={"type": "URL", "callback": "x);alert(1)//"}
    )
    assert jsonp.headers["content-type"].startswith("application/javascript")
    assert jsonp.text.startswith('x__alert_1___({"responseCode":1')
    assert jsonp.text.endswith(");")


def test_writes_answer_json_even_with_a_callback(client: httpx.Client) -> None:
    # JSONP is for reads: a write (and its refusal) keeps the JSON its description promises.
    for reply in (
        client.put("/api/handles/10.5555/cb?callback=f", json={"values": []}),
        client.delete("/api/handles/10.5555/cb?callback=f"),
        client.post("/api/deposit?callback=f", content=b"{}"),
    ):
        assert reply.headers["content-type"] == JSON
        assert reply.json()["responseCode"] != 1


def test_auth_and_cert_are_accepted(client: httpx.Client) -> None:
    assert client.get("/api/handles/10.1000/1?auth=true&cert=true").status_code == 200


def test_post_reads_like_get(client: httpx.Client) -> None:
    assert (
        client.post("/api/handles/10.1000/1").json() == client.get("/api/handles/10.1000/1").json()
    )


def test_unknown_api_endpoint(client: httpx.Client) -> None:
    r = client.get("/api/nothing")
    assert r.status_code == 404
    assert r.json() == {"responseCode": 4, "message": "Unknown HTTP API endpoint GET /api/nothing"}


def test_public_only(client: httpx.Client, server: Server) -> None:
    values = [
        url_value("https://example.org/p"),
        {"index": 300, "type": "HS_SECKEY", "data": "secret", "permissions": "1100"},
    ]
    assert put(client, server, "10.5555/private", values).status_code in {200, 201}
    public = client.get("/api/handles/10.5555/private").json()
    assert [v["index"] for v in public["values"]] == [1]
    assert client.get("/api/handles/10.5555/private?publicOnly=false").status_code == 401
    everything = client.get(
        "/api/handles/10.5555/private?publicOnly=false",
        headers={"Authorization": f"Bearer {server.token}"},
    ).json()
    assert [v["index"] for v in everything["values"]] == [1, 300]
    assert everything["values"][1]["permissions"] == "1100"


# --- the proxy ------------------------------------------------------------------------------

HANDBOOK = "https://www.doi.org/the-identifier/resources/handbook"


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("/10.1000/182", HANDBOOK),
        ("/10.1000/182".upper(), HANDBOOK),
        ("/doi:10.1000/182", HANDBOOK),
        ("/DOI:10.1000/182", HANDBOOK),
        ("/hdl:10.1000/182", HANDBOOK),
        ("/info:doi/10.1000/182", HANDBOOK),
        ("/10.1000%2F182", HANDBOOK),
        ("/10.1000/456%23789", "https://example.org/seed-000/hash"),
        ("/urn:doi:10.123:456ABC%2Fzyz", "https://example.org/seed-000/urn"),
        (
            "/10.26321/%C3%81.GUTI%C3%89RREZ.ZARZA.02.2018.03",
            "https://example.org/seed-004/unicode",
        ),
        (
            "/10.1002/(SICI)1097-4571(199806)49:8%3C693::AID-ASI4%3E3.0.CO;2-O",
            "https://example.org/z3984/sici",
        ),
    ],
)
def test_proxy_redirects_every_presentation(client: httpx.Client, path: str, location: str) -> None:
    r = client.get(path)
    assert r.status_code == 302, r.text
    assert r.headers["location"] == location
    assert "expires" in r.headers
    assert r.text == (
        "<html><head><title>Handle Redirect</title></head>\n"
        f'<body><a href="{location}">{location}</a></body></html>'
    )


def test_head_redirects_without_a_body(client: httpx.Client) -> None:
    r = client.head("/10.1000/182")
    assert r.status_code == 302
    assert r.headers["location"] == HANDBOOK
    assert r.content == b""


def test_expires_follows_the_ttl(client: httpx.Client, server: Server) -> None:
    from email.utils import parsedate_to_datetime  # noqa: PLC0415

    values = [{"index": 1, "type": "URL", "data": "https://example.org/t", "ttl": 60}]
    put(client, server, "10.5555/ttl", values)
    r = client.get("/10.5555/ttl")
    date = parsedate_to_datetime(r.headers["date"])
    expires = parsedate_to_datetime(r.headers["expires"])
    assert 55 <= (expires - date).total_seconds() <= 65


def test_urlappend_and_hash_tail(client: httpx.Client, server: Server) -> None:
    r = client.get("/10.1000/182", params={"urlappend": "?page=2"})
    assert r.headers["location"] == HANDBOOK + "?page=2"
    # A raw '#' is kept as urlappend when the HTTP parser passes it on (h11 does; httptools
    # drops the fragment before the app sees it): either way the name resolves.
    status, headers, _ = raw_get(server, b"/10.1000/182#section")
    assert status == 302
    assert headers["location"] in {HANDBOOK, HANDBOOK + "#section"}


@pytest.mark.parametrize(
    "target",
    [
        b"/10.1000/182?urlappend=%0D%0ASet-Cookie:%20x=1",
        b"/10.1000/182?urlappend=%0ASet-Cookie:x",
        b"/10.1000/182?urlappend=%20a%09b",
    ],
)
def test_header_injection_cannot_reach_a_header(server: Server, target: bytes) -> None:
    status, headers, _ = raw_get(server, target)
    assert status == 302
    assert "set-cookie" not in headers
    assert not any(c in headers["location"] for c in " \t\r\n")


def test_noredirect_shows_the_record(client: httpx.Client) -> None:
    r = client.get("/10.1000/182?noredirect")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    assert HANDBOOK in r.text
    assert "HS_ADMIN" in r.text


def test_type_selects_the_value(client: httpx.Client) -> None:
    r = client.get("/10.1000/182?type=HS_ADMIN")
    assert r.status_code == 200  # no URL among the selected values: the values page
    assert "HS_ADMIN" in r.text


def test_alias_is_a_301_keeping_the_query(client: httpx.Client) -> None:
    r = client.get("/10.1000/alias?noredirect")
    assert r.status_code == 301
    assert r.headers["location"] == "/10.1000/182?noredirect"
    assert client.get("/10.1000/alias?ignore_aliases").status_code == 200


def test_alias_loop_is_detected(client: httpx.Client, server: Server) -> None:
    put(
        client,
        server,
        "10.5555/loop-a",
        [{"index": 1, "type": "HS_ALIAS", "data": "10.5555/loop-b"}],
    )
    put(
        client,
        server,
        "10.5555/loop-b",
        [{"index": 1, "type": "HS_ALIAS", "data": "10.5555/loop-a"}],
    )
    assert client.get("/10.5555/loop-a").status_code == 508


def test_multiple_resolution(client: httpx.Client) -> None:
    assert client.get("/10.1000/multiple").headers["location"] == "https://example.org/multiple/a"
    us = client.get("/10.1000/multiple?locatt=country:us")
    assert us.headers["location"] == "https://example.org/multiple/b"
    conneg = client.get(
        "/10.1000/multiple", headers={"Accept": "application/vnd.citationstyles.csl+json"}
    )
    assert conneg.headers["location"] == "https://example.org/metadata/10.1000%2Fmultiple"
    assert conneg.headers["vary"] == "Accept"
    browser = client.get("/10.1000/multiple", headers={"Accept": "text/html,*/*;q=0.8"})
    assert browser.headers["location"] == "https://example.org/multiple/a"


def test_unknown_doi_is_the_404_page(client: httpx.Client) -> None:
    r = client.get("/10.1000/nope")
    assert r.status_code == 404
    assert r.headers["content-type"].startswith("text/html")
    assert "DOI Not Found" in r.text
    slash = client.get("/10.1000/182/")
    assert slash.status_code == 404
    assert 'href="/10.1000/182"' in slash.text


def test_a_doi_holding_html_is_escaped_everywhere(client: httpx.Client) -> None:
    name = "10.1000/<script>alert(1)</script>"
    page = client.get("/10.1000/%3Cscript%3Ealert(1)%3C%2Fscript%3E?noredirect")
    assert page.status_code == 200
    assert "<script>" not in page.text
    assert "&lt;script&gt;" in page.text
    missing = client.get("/10.1000/%3Cimg%20src=x%20onerror=alert(1)%3E%22")
    assert missing.status_code == 404
    assert "<img" not in missing.text
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    assert (
        client.get(
            "/api/handles/" + name.replace("/", "%2F").replace("<", "%3C").replace(">", "%3E")
        ).status_code
        == 200
    )


@pytest.mark.parametrize(
    "target",
    [
        b"/10.1000/./182",
        b"/10.1000/../182",
        b"/../../etc/passwd",
        b"/%2e%2e/%2e%2e/etc/passwd",
        b"/.",
    ],
)
def test_dot_segments_never_500(server: Server, target: bytes) -> None:
    status, _, body = raw_get(server, target)
    assert status in {200, 302, 404}
    assert b"root:" not in body


@pytest.mark.parametrize("target", [b"/10.1000/%zz", b"/10.1000/%FF%FE", b"/%"])
def test_proxy_bad_escapes_are_400(server: Server, target: bytes) -> None:
    status, headers, _ = raw_get(server, target)
    assert status == 400
    assert headers["content-type"].startswith("text/html")


def test_home_form(client: httpx.Client) -> None:
    home = client.get("/")
    assert home.status_code == 200
    assert '<form action="/" method="get"' in home.text
    go = client.get("/?hdl=doi:10.1000/456%23789")
    assert (go.status_code, go.headers["location"]) == (302, "/10.1000/456%23789")
    bad = client.get("/?hdl=10.10O0/x")
    assert bad.status_code == 400
    assert "registrant" in bad.text or "not a valid DOI" in bad.text


# --- Which RA ------------------------------------------------------------------------------


def test_which_ra(client: httpx.Client) -> None:
    for route in ("/ra/", "/doiRA/"):
        r = client.get(route + "10.1000/182,10.1000/nope,not-a-doi,10.1000,10.99999")
        assert r.status_code == 200
        assert r.headers["content-type"] == JSON
        assert r.json() == [
            {"DOI": "10.1000/182", "RA": "doikit"},
            {"DOI": "10.1000/nope", "status": "DOI does not exist"},
            {"DOI": "not-a-doi", "status": "Invalid DOI"},
            {"DOI": "10.1000", "RA": "doikit"},
            {"DOI": "10.99999", "status": "DOI does not exist"},
        ]


def test_which_ra_comma_inside_a_name(client: httpx.Client, server: Server) -> None:
    put(client, server, "10.5555/a,b", [url_value("https://example.org/comma")])
    r = client.get("/ra/10.5555/a%2Cb,10.5555/a")
    assert r.json() == [
        {"DOI": "10.5555/a,b", "RA": "doikit"},
        {"DOI": "10.5555/a", "status": "DOI does not exist"},
    ]


# --- writes -------------------------------------------------------------------------------


def test_create_replace_conflict_delete(client: httpx.Client, server: Server) -> None:
    created = put(client, server, "10.5555/Write", [url_value("https://example.org/1")])
    assert (created.status_code, created.json()) == (
        201,
        {"responseCode": 1, "handle": "10.5555/Write"},
    )
    replaced = put(client, server, "10.5555/write", [url_value("https://example.org/2")])
    assert replaced.status_code == 200
    conflict = put(
        client, server, "10.5555/write", [url_value("https://example.org/3")], overwrite="false"
    )
    assert (conflict.status_code, conflict.json()["responseCode"]) == (409, 101)
    assert client.get("/10.5555/WRITE").headers["location"] == "https://example.org/2"
    auth = {"Authorization": f"Bearer {server.token}"}
    assert client.delete("/api/handles/10.5555/write", headers=auth).status_code == 200
    assert client.delete("/api/handles/10.5555/write", headers=auth).status_code == 404
    assert client.get("/api/handles/10.5555/write").status_code == 404


def test_values_get_a_timestamp(client: httpx.Client, server: Server) -> None:
    put(client, server, "10.5555/stamped", [url_value("https://example.org/s")])
    value = client.get("/api/handles/10.5555/stamped").json()["values"][0]
    assert value["timestamp"].endswith("Z")


@pytest.mark.parametrize(
    ("headers", "status", "rc"),
    [
        ({}, 401, 402),
        ({"Authorization": "Bearer wrong"}, 401, 402),
        ({"Authorization": "Basic abc"}, 401, 402),
    ],
)
def test_writes_need_a_token(
    client: httpx.Client, headers: dict[str, str], status: int, rc: int
) -> None:
    r = client.put(
        "/api/handles/10.5555/t", json={"values": [url_value("https://a/")]}, headers=headers
    )
    assert (r.status_code, r.json()["responseCode"]) == (status, rc)
    assert r.headers["www-authenticate"] == 'Basic realm="handle", Bearer realm="doikit"'
    assert client.get("/api/handles/10.5555/t").status_code == 404


def test_a_token_for_another_prefix_is_403(client: httpx.Client, server: Server) -> None:
    r = put(client, server, "10.6666/x", [url_value("https://a/")])
    assert (r.status_code, r.json()["responseCode"]) == (403, 401)
    auth = {"Authorization": f"Bearer {server.token}"}
    assert client.delete("/api/handles/10.1000/182", headers=auth).status_code == 403
    assert client.get("/api/handles/10.1000/182").status_code == 200


@pytest.mark.parametrize(
    ("body", "status", "rc", "fragment"),
    [
        (b"{not json", 400, 4, "not JSON"),
        (b"\xff\xfe", 400, 4, "not JSON"),
        (b'{"values": []}', 400, 202, "at least one value"),
        (b'{"values": [{"index": 1, "type": "HS_ALIAS", "data": "nope"}]}', 400, 202, "alias"),
        (b'{"values": [{"index": 1, "type": "10320/loc", "data": "<locations"}]}', 400, 202, "XML"),
        (
            (
                b'{"values": [{"index": 1, "type": "X", "data": "a"},'
                b' {"index": 1, "type": "Y", "data": "b"}]}'
            ),
            409,
            201,
            "twice",
        ),
        (b'{"values": [{"index": 0, "type": "X", "data": "a"}]}', 400, 202, "index"),
        (b'{"values": [{"index": "one", "type": "X", "data": "a"}]}', 400, 202, "integer"),
    ],
)
def test_refused_writes_change_nothing(
    client: httpx.Client, server: Server, body: bytes, *, status: int, rc: int, fragment: str
) -> None:
    put(client, server, "10.5555/kept", [url_value("https://example.org/kept")])
    before = client.get("/api/handles/10.5555/kept").json()
    r = client.put(
        "/api/handles/10.5555/kept",
        content=body,
        headers={"Authorization": f"Bearer {server.token}"},
    )
    assert (r.status_code, r.json()["responseCode"]) == (status, rc), r.text
    assert fragment in r.json()["message"]
    assert client.get("/api/handles/10.5555/kept").json() == before


def test_oversized_body_is_413(client: httpx.Client, server: Server) -> None:
    big = (
        b'{"values": [{"index": 1, "type": "URL", "data": "https://a/' + b"x" * (2 << 20) + b'"}]}'
    )
    r = client.put(
        "/api/handles/10.5555/big", content=big, headers={"Authorization": f"Bearer {server.token}"}
    )
    assert r.status_code == 413
    assert client.get("/api/handles/10.5555/big").status_code == 404


@pytest.mark.parametrize("name", ["10.5555/", "10.5555/a\u200bb", "doi:10.5555/x"])
def test_invalid_names_are_refused(client: httpx.Client, server: Server, name: str) -> None:
    r = put(client, server, name, [url_value("https://a/")])
    assert (r.status_code, r.json()["responseCode"]) == (400, 102)


def test_listing(client: httpx.Client, server: Server) -> None:
    for i in range(3):
        put(client, server, f"10.5555/list-{i}", [url_value("https://a/")])
    auth = {"Authorization": f"Bearer {server.token}"}
    count = client.get(
        "/api/handles", params={"prefix": "10.5555", "pageSize": "0"}, headers=auth
    ).json()
    assert count["handles"] == []
    assert count["totalCount"] >= 3
    page = client.get(
        "/api/handles", params={"prefix": "10.5555", "pageSize": "1000"}, headers=auth
    ).json()
    assert {"10.5555/list-0", "10.5555/list-1", "10.5555/list-2"} <= set(page["handles"])
    assert client.get("/api/handles", params={"prefix": "10.5555"}).status_code == 401
    assert client.get("/api/handles", params={"prefix": "10.1000"}, headers=auth).status_code == 403
    assert client.get("/api/handles", headers=auth).status_code == 400


def test_openapi_is_published(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.")
    assert "/api/handles/{handle}" in spec["paths"]


def test_no_request_above_caused_a_server_error(server: Server) -> None:
    # Runs last in this module: every bad input above got its status, none a traceback.
    assert "Traceback" not in server.errors()
    assert "unexpected error" not in server.errors()


@pytest.mark.parametrize(
    "name",
    [
        "10.1000/182",
        "10.1000/1",
        "10.5594/SMPTE.ST2067-21.2020",
        "10.1000/email-only",
        "10.1000/alias",
        "10.1000/multiple",
    ],
)
@pytest.mark.parametrize("route", ["/", "/api/handles/"])
def test_fast_path_answers_as_the_full_routes(client: httpx.Client, name: str, route: str) -> None:
    # A plain path is answered by the fast layer; '?auth' (a no-op) sends the same request
    # through the full Starlette route. The answers must be the same, byte for byte.
    fast = client.get(route + name)
    full = client.get(route + name + "?auth")
    # (An alias's 301 keeps the query, so '?auth' is taken out of the full route's answer.)
    assert fast.status_code == full.status_code
    assert fast.content == full.content.replace(b"?auth", b"")
    for header in ("location", "content-type", "access-control-allow-origin", "vary"):
        expected = full.headers.get(header)
        assert fast.headers.get(header) == (expected and expected.replace("?auth", "")), header
    assert ("expires" in fast.headers) == ("expires" in full.headers)


@pytest.mark.parametrize(
    ("url", "valid"),
    [
        ("https://example.org/a?b=c#d", True),
        ("HTTP://EXAMPLE.ORG:8080", True),
        ("https://bücher.example/x", True),
        ("https://[::1]/x", True),
        ("https://user@example.org/x", True),
        ("javascript:alert(1)", False),
        ("https:///nohost", False),
        ("https://a.example/x y", False),
        ("https://a.example/\u200bx", False),
        ("ftp://a.example/", False),
        ("//a.example/", False),
    ],
)
def test_url_values_that_writes_accept(url: str, *, valid: bool) -> None:
    from doikit.server._http import valid_http_url  # noqa: PLC0415

    assert (valid_http_url(url) is None) == valid


@pytest.mark.parametrize(
    "values",
    [
        [{"index": 1, "type": "url", "data": 'https://example.org/a"b\\c?x=<y>&z=é'}],
        [
            {"index": 2, "type": "EMAIL", "data": "a@b"},
            {"index": 1, "type": "URL", "data": "https://e.org/", "permissions": "1111", "ttl": 5},
        ],
        [{"index": 1, "type": "URL", "data": "https://e.org/abs", "ttl": "2030-01-01T00:00:00Z"}],
        [{"index": 1, "type": "URL.mirror", "data": "https://e.org/sub"}],
        [{"index": 1, "type": "URL", "data": "https://bücher.example/x y".replace(" ", "")}],
    ],
)
def test_fast_path_parity_on_tricky_records(
    client: httpx.Client, server: Server, values: list[object]
) -> None:
    assert put(client, server, "10.5555/tricky", values).status_code in {200, 201}
    fast = client.get("/10.5555/tricky")
    full = client.get("/10.5555/tricky?auth")
    assert (fast.status_code, fast.headers.get("location"), fast.content) == (
        full.status_code,
        full.headers.get("location"),
        full.content,
    )


# --- hot reads written by the protocol (doikit.server._uvicorn) ---------------------------


def exchange(server: Server, data: bytes, methods: list[str]) -> tuple[list[Any], bool]:
    """Send *data* (requests, perhaps pipelined) on one connection; the responses, parsed
    in order (*methods* says which were HEAD: no body), and whether the server closed the
    connection after the last one."""
    parts = urlsplit(server.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(data)
        sock.settimeout(2)
        got = b""
        closed = False
        try:
            while chunk := sock.recv(65536):
                got += chunk
            closed = True
        except TimeoutError:
            pass
    responses = []
    for method in methods:
        head, _, got = got.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = [
            (name.strip(), value.strip())
            for name, _, value in (line.partition(":") for line in lines[1:])
        ]
        length = 0 if method == "HEAD" else int(dict(headers).get("content-length", "0"))
        responses.append((lines[0], headers, got[:length]))
        got = got[length:]
    assert got == b"", got
    return responses, closed


def request(method: str, target: str, *extra: str, version: str = "1.1") -> bytes:
    return "\r\n".join([f"{method} {target} HTTP/{version}", "Host: x", *extra, "", ""]).encode()


def test_hot_reads_pipelined_with_others_are_answered_in_order(server: Server) -> None:
    data = b"".join(
        [
            request("GET", "/10.1000/182"),
            request("GET", "/api/handles/10.1000/1?auth"),  # the full route, in between
            request("GET", "/api/handles/10.1000/182"),
            request("HEAD", "/api/handles/10.1000/182"),
            request("GET", "/10.1000/182", "Connection: close"),
        ]
    )
    responses, closed = exchange(server, data, ["GET", "GET", "GET", "HEAD", "GET"])
    assert [status for status, _, _ in responses] == [
        "HTTP/1.1 302 Found",
        "HTTP/1.1 200 OK",
        "HTTP/1.1 200 OK",
        "HTTP/1.1 200 OK",
        "HTTP/1.1 302 Found",
    ]
    assert json.loads(responses[1][2])["handle"] == "10.1000/1"
    assert json.loads(responses[2][2])["handle"] == "10.1000/182"
    for _, headers, _ in responses:
        names = [name.lower() for name, _ in headers]
        assert names.count("date") == 1
        assert "server" not in names
    head_headers = dict(responses[3][1])
    assert head_headers["content-length"] == str(len(responses[2][2]))
    assert ("connection", "close") in responses[4][1]
    assert ("connection", "close") not in responses[0][1]
    assert closed


def test_a_hot_read_over_http_1_0_closes_the_connection(server: Server) -> None:
    responses, closed = exchange(
        server, request("GET", "/api/handles/10.1000/182", version="1.0"), ["GET"]
    )
    assert responses[0][0] == "HTTP/1.1 200 OK"
    assert ("connection", "close") in responses[0][1]
    assert closed


def test_a_hot_read_keeps_the_connection_for_the_next_request(server: Server) -> None:
    # A GET with a body (dropped, as after any early answer), then more on the connection.
    data = (
        request("GET", "/10.1000/182", "Content-Length: 5")
        + b"hello"
        + request("GET", "/api/handles/10.1000/182")
    )
    responses, closed = exchange(server, data, ["GET", "GET"])
    assert [status for status, _, _ in responses] == ["HTTP/1.1 302 Found", "HTTP/1.1 200 OK"]
    assert not closed  # kept alive: the client may go on


def _rss(server: Server) -> int:
    """The server process's resident memory, in bytes (Linux)."""
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    return int(re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE).group(1)) * 1024  # type: ignore[union-attr]


@pytest.mark.parametrize("name", ["10.5555/big", "10.1000/182", "10.1000/182?auth"])
def test_a_client_that_sends_without_reading_holds_bounded_memory(
    client: httpx.Client, server: Server, name: str
) -> None:
    # Pipelined reads, none of the answers read: the server must stop reading (and
    # answering) instead of queueing answers (a large record on the hot path) or requests
    # (the usual path: uvicorn resumes reading after each answer) without bound.
    values = [
        {"index": i, "type": "DESC", "data": {"format": "string", "value": "x" * 8000}}
        for i in range(1, 11)
    ]
    assert put(client, server, "10.5555/big", values).status_code in {200, 201}
    before = _rss(server)
    parts = urlsplit(server.url)
    request = f"GET /api/handles/{name} HTTP/1.1\r\nHost: x\r\n\r\n".encode() * 1000
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # answers back up at once
        sock.connect((parts.hostname, parts.port))
        sock.setblocking(False)  # noqa: FBT003 - the socket's own flag
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            with contextlib.suppress(BlockingIOError):
                sock.send(request)
            time.sleep(0.001)
        grown = _rss(server) - before
    assert grown < 150 * 2**20, f"the server grew by {grown / 2**20:.0f} MiB"
    assert client.get(f"/api/handles/{name}").status_code == 200
