"""doikit.client against a real `doikit serve`, and against small real servers that misbehave."""

from __future__ import annotations

import asyncio
import http.server
import json
import pickle
import socket
import urllib.parse
from typing import TYPE_CHECKING

import httpx
import pytest

import doikit
from conftest import free_port, serving
from doikit.client import AsyncClient, Client

if TYPE_CHECKING:
    from collections.abc import Iterator

    from conftest import Server


@pytest.fixture
def client(server: Server) -> Iterator[Client]:
    with Client(server.url, timeout=10) as resolver:
        yield resolver


@pytest.mark.parametrize(
    "text",
    [
        "10.1000/182",
        "doi:10.1000/182",
        "https://doi.org/10.1000/182",
        "urn:doi:10.1000:182",
        "10.1000/182".upper(),
    ],
)
def test_resolve_any_presentation(client: Client, text: str) -> None:
    record = client.resolve(text)
    assert [v.type for v in record.values] == ["URL", "HS_ADMIN"]
    assert record.values[0].text == "https://www.doi.org/the-identifier/resources/handbook"


def test_hash_query_space_and_non_ascii_survive(client: Client, server: Server) -> None:

    name = "10.5555/a#b?c d%é/./x"
    doi = doikit.DOI(name)
    body = {"values": [{"index": 1, "type": "URL", "data": "https://example.org/odd"}]}
    put = httpx.put(
        server.url + "/api/handles/" + doi.to_uri()[4:],
        json=body,
        headers={"Authorization": f"Bearer {server.token}"},
    )
    assert put.status_code in {200, 201}
    record = client.resolve(name)
    assert record.handle == name
    assert client.url(name) == "https://example.org/odd"


def test_filters_and_values_not_found(client: Client) -> None:
    assert [v.index for v in client.resolve("10.1000/1", types=["URL"]).values] == [1]
    assert [v.index for v in client.resolve("10.1000/1", indexes=[100]).values] == [100]
    assert client.resolve("10.1000/1", types=["NOSUCH"]).values == ()


def test_not_found_and_invalid(client: Client) -> None:
    with pytest.raises(doikit.DOINotFound) as caught:
        client.resolve("10.1000/nope")
    assert caught.value.doi == "10.1000/nope"
    assert isinstance(caught.value, doikit.ResolutionError)
    with Client(f"http://127.0.0.1:{free_port()}") as nowhere, pytest.raises(doikit.InvalidDOI):
        nowhere.resolve("10.10O0/x")  # refused before any request: no TransportError


def test_single_and_multiple_resolution(client: Client) -> None:
    assert client.url("10.1000/alias") == "https://www.doi.org/the-identifier/resources/handbook"
    assert client.url("10.1000/multiple") == "https://example.org/multiple/a"
    assert client.urls("10.1000/multiple") == [
        "https://example.org/multiple/a",
        "https://example.org/multiple/b",
        "https://example.org/metadata/10.1000%2Fmultiple",
        "https://example.org/multiple/legacy",
    ]
    with pytest.raises(doikit.DOINotFound, match="no URL"):
        client.url("10.1000/email-only")


def test_which_ra(client: Client) -> None:
    assert client.which_ra(["10.1000/182", "10.1000/nope", "x"]) == [
        {"DOI": "10.1000/182", "RA": "doikit"},
        {"DOI": "10.1000/nope", "status": "DOI does not exist"},
        {"DOI": "x", "status": "Invalid DOI"},
    ]
    many = [f"10.1000/{i:04}" for i in range(600)]
    answers = client.which_ra(many)
    assert [a["DOI"] for a in answers] == many


def test_async_client(server: Server) -> None:
    async def main() -> tuple[list[str], str]:
        async with AsyncClient(server.url) as resolver:
            assert await resolver.which_ra(["10.1000/182"]) == [
                {"DOI": "10.1000/182", "RA": "doikit"}
            ]
            records = await asyncio.gather(
                *(resolver.resolve(n) for n in ("10.1000/182", "doi:10.1000/1"))
            )
            return [r.handle for r in records], await resolver.url("10.1000/alias")

    handles, url = asyncio.run(main())
    assert handles == ["10.1000/182", "10.1000/1"]
    assert url == "https://www.doi.org/the-identifier/resources/handbook"


# --- servers that misbehave, on real sockets --------------------------------------------


class _Canned(http.server.BaseHTTPRequestHandler):
    status = 200
    content_type = "text/html"
    body = b"<html>maintenance</html>"

    def do_GET(self) -> None:
        self.send_response(self.status)
        self.send_header("Content-Type", self.content_type)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.mark.parametrize(
    ("status", "content_type", "body", "error"),
    [
        (200, "text/html", b"<html>maintenance</html>", doikit.MalformedResponse),
        (200, "application/json", b"{not json", doikit.MalformedResponse),
        (
            200,
            "application/json",
            b'{"responseCode":1,"handle":"x","values":"no"}',
            doikit.MalformedResponse,
        ),
        (500, "application/json", b'{"responseCode":2,"message":"boom"}', doikit.HandleServerError),
        (503, "text/html", b"busy", doikit.HandleServerError),
        (403, "text/html", b"blocked", doikit.HandleServerError),
    ],
)
def test_bad_answers_map_to_resolution_errors(
    status: int, content_type: str, body: bytes, error: type[doikit.ResolutionError]
) -> None:
    handler = type("H", (_Canned,), {"status": status, "content_type": content_type, "body": body})
    with serving(handler) as url:
        with Client(url, retries=0) as resolver, pytest.raises(error) as caught:
            resolver.resolve("10.1000/182")
        assert caught.value.doi == "10.1000/182"
        if isinstance(caught.value, doikit.HandleServerError):
            assert caught.value.status == status
            again = pickle.loads(pickle.dumps(caught.value))  # noqa: S301 - our own bytes
            assert (type(again), again.status, str(again)) == (
                type(caught.value),
                status,
                str(caught.value),
            )


def test_refused_connection_and_timeout_are_transport_errors() -> None:
    with (
        Client(f"http://127.0.0.1:{free_port()}", retries=0) as resolver,
        pytest.raises(doikit.TransportError),
    ):
        resolver.resolve("10.1000/182")
    with socket.socket() as silent:  # accepts, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        with (
            Client(f"http://127.0.0.1:{port}", timeout=0.3, retries=0) as resolver,
            pytest.raises(doikit.TransportError),
        ):
            resolver.resolve("10.1000/182")


# --- metadata by content negotiation, through doikit serve's 10320/loc -----------------------


class _Metadata(http.server.BaseHTTPRequestHandler):
    """An RA's metadata service: answers by the Accept header, as Crossref and DataCite do."""

    def do_GET(self) -> None:
        name = urllib.parse.unquote(self.path.removeprefix("/meta/"))
        accept = self.headers.get("Accept", "")
        kind = accept.split(";")[0].strip()
        if self.path == "/landing":
            status, kind, body = 200, "text/html", "<html>the landing page</html>"
        elif name != "10.5555/cited":
            status, kind, body = 404, "text/plain", "Resource not found."
        elif kind == "application/vnd.citationstyles.csl+json":
            status, body = 200, json.dumps({"DOI": name, "type": "article", "title": "Über"})
        elif kind == "application/x-bibtex":
            status, body = 200, "@article{cited, doi = {10.5555/cited}, title = {Über}}"
        elif kind == "application/x-research-info-systems":
            status, body = 200, "TY  - JOUR\nDO  - 10.5555/cited\nER  - \n"
        elif kind == "text/x-bibliography":
            status, body = 200, f"Citation ({accept.split(';', 1)[1].strip()})."
        else:
            status, kind, body = 406, "text/plain", "Not acceptable"
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture(scope="module")
def cited(server: Server) -> Iterator[str]:
    """10.5555/cited on the server, its 10320/loc pointing conneg at a metadata service."""
    with serving(_Metadata) as meta:
        locations = (
            '<locations><location id="1" href="https://example.org/landing" weight="1"/>'
            f'<location id="2" http_role="conneg" href_template="{meta}/meta/{{hdl}}" weight="0"/>'
            "</locations>"
        )
        body = {
            "values": [
                {"index": 1, "type": "URL", "data": "https://example.org/landing"},
                {"index": 2, "type": "10320/loc", "data": locations},
            ]
        }
        put = httpx.put(
            server.url + "/api/handles/10.5555/cited",
            json=body,
            headers={"Authorization": f"Bearer {server.token}"},
        )
        assert put.status_code in {200, 201}, put.text
        plain = {"values": [{"index": 1, "type": "URL", "data": f"{meta}/landing"}]}
        put = httpx.put(
            server.url + "/api/handles/10.5555/plain",
            json=plain,
            headers={"Authorization": f"Bearer {server.token}"},
        )
        assert put.status_code in {200, 201}, put.text
        yield "10.5555/cited"


def test_metadata_formats(client: Client, cited: str) -> None:
    assert client.metadata(cited) == {"DOI": cited, "type": "article", "title": "Über"}
    assert client.metadata("https://doi.org/" + cited, "bibtex").startswith("@article{cited,")
    assert "DO  - 10.5555/cited" in client.metadata(cited, "ris")
    citation = client.metadata(cited, "citation", style="apa", locale="en-US")
    assert citation == "Citation (style=apa; locale=en-US)."
    with pytest.raises(doikit.HandleServerError) as caught:
        client.metadata(cited, "turtle")  # the service has no Turtle: 406
    assert caught.value.status == 406


def test_metadata_errors(client: Client, server: Server, cited: str) -> None:
    with pytest.raises(doikit.DOINotFound):
        client.metadata("10.1000/nope")
    with pytest.raises(doikit.MalformedResponse, match="text/html"):
        client.metadata("10.5555/plain")  # no conneg location: the landing page
    with pytest.raises(ValueError, match="unknown metadata format"):
        client.metadata("10.1000/182", "yaml")  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="apply to the 'citation' format"):
        client.metadata("10.1000/182", "bibtex", style="apa")

    async def main() -> object:
        async with AsyncClient(server.url) as resolver:
            return await resolver.metadata(cited, "csl-json")

    assert asyncio.run(main()) == {"DOI": "10.5555/cited", "type": "article", "title": "Über"}


# --- shortDOIs: doi.org keeps them as handles under prefix 10 with an HS_ALIAS (§5) ----------


class _ShortDOIs(http.server.BaseHTTPRequestHandler):
    """doi.org's answers for shortDOI records, as handle-api.md §5 shows them."""

    def do_GET(self) -> None:
        path, _, query = self.path.partition("?")
        if path == "/api/handles/10/g8r7pm" and query == "type=HS_ALIAS":
            value = {"format": "string", "value": "10.1016/J.VIRUSRES.2019.197847"}
            values = [{"index": 1, "type": "HS_ALIAS", "data": value, "ttl": 86400}]
            status, body = 200, {"responseCode": 1, "handle": "10/g8r7pm", "values": values}
        elif path == "/api/handles/10/empty":
            status, body = 200, {"responseCode": 200, "handle": "10/empty", "values": []}
        else:
            status, body = 404, {"responseCode": 100, "handle": path[13:]}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json;charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_args: object) -> None:
        pass


def test_expand_short() -> None:
    with serving(_ShortDOIs) as url:
        with Client(url) as resolver:
            for text in ("10/g8r7pm", "g8r7pm", "https://doi.org/10/G8R7PM", "doi:10/g8r7pm"):
                assert resolver.expand_short(text) == doikit.DOI("10.1016/j.virusres.2019.197847")
            with pytest.raises(doikit.DOINotFound):
                resolver.expand_short("10/nope")
            with pytest.raises(doikit.DOINotFound, match="no HS_ALIAS"):
                resolver.expand_short("10/empty")
            with pytest.raises(doikit.InvalidDOI):
                resolver.expand_short("10.1000/182")

        async def main(base: str) -> doikit.DOI:
            async with AsyncClient(base) as resolver:
                return await resolver.expand_short("10/g8r7pm")

        assert str(asyncio.run(main(url))) == "10.1016/J.VIRUSRES.2019.197847"
