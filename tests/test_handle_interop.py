"""CNRI's own Handle client (HANDLE.NET 9.2.0's library, driven by HandleTool) against
`doikit serve --handle-port`, on SQLite and PostgreSQL: issue 28's interop list. And the
other way round (issue 29, point 4): doikit's native resolver and `doikit serve
--upstream-root` against CNRI's servers, a root homing 10.5555 and a second server homing
10.6666 registered at it. And both together: `doikit serve --upstream-root` homing 10.6666,
administered by identities that a CNRI root holds, which CNRI's client uses and doikit checks
by asking the root (a VERIFY_CHALLENGE for a secret key, a certified resolution of a public
key).

CNRI's code is never part of this repository: build it outside it (handle-protocol.md §21)
and point ``HANDLE_PEER`` at the build, a directory holding a ``handletool`` command that
runs HandleTool with CNRI's library (and, for CNRI's servers, a ``start-server DIR PORT
HTTP_PORT PREFIX`` command that makes a server directory and runs the server in the
foreground, saying ``READY`` on stderr; ``--reuse`` runs it again on a directory it made).
Without it this module is skipped, saying why.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from conftest import DOIKIT, free_port, start_server, stop_server
from doikit.handle import AdminData, HandleValue

if TYPE_CHECKING:
    from collections.abc import Iterator

    from conftest import Server

_PEER = os.environ.get("HANDLE_PEER", "")
_TOOL = Path(_PEER) / "handletool" if _PEER else None

pytestmark = pytest.mark.skipif(
    _TOOL is None or not _TOOL.exists(),
    reason="HANDLE_PEER is not set to a build of CNRI's HANDLE.NET client with a handletool"
    " command (handle-protocol.md §21 says how to build one, outside the repository)",
)

NAME = "10.5555/interop-1"
URL_1 = '[{"index":1,"type":"URL","data":{"format":"string","value":"https://example.org/1"}}]'


def handletool(*args: str) -> dict[str, Any]:
    assert _TOOL is not None
    done = subprocess.run(
        [str(_TOOL), *args], capture_output=True, text=True, timeout=60, check=False
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, (done.stdout, done.stderr)
    answer: dict[str, Any] = json.loads(lines[-1])
    return answer


def doikit(*args: str) -> str:
    return subprocess.run(
        [DOIKIT, *args], capture_output=True, text=True, timeout=60, check=True
    ).stdout


class Peer:
    """doikit serve with the native protocol, and the identities HandleTool uses."""

    def __init__(self, server: Server, port: int, secret: str, keys: Path) -> None:
        self.server = server
        self.port = str(port)
        self.http = str(server.url.rsplit(":", 1)[1])
        self.secret = f"sec:300:10.5555/ADMIN:{secret}"
        self.dsa = f"pub:301:10.5555/ADMIN:{keys / 'dsa_priv.bin'}"
        self.rsa = f"pub:302:10.5555/ADMIN:{keys / 'rsa_priv.bin'}"
        self.other = ""

    def tool(self, command: str, *args: str, http: bool = False) -> dict[str, Any]:
        return handletool(command, "127.0.0.1", self.http if http else self.port, *args)


@pytest.fixture(scope="module")
def peer(module_store: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    keys = tmp_path_factory.mktemp("keys")
    for kind in ("dsa", "rsa"):
        made = handletool(
            "keygen", str(keys / f"{kind}_priv.bin"), str(keys / f"{kind}_pub.bin"), kind.upper()
        )
        assert "error" not in made, made
    store = ("--store", module_store, "--prefix", "10.5555")
    secret = doikit("admin", "create", *store, "300:10.5555/ADMIN").splitlines()[-1]
    doikit(
        "admin", "create", *store, "--public-key", str(keys / "dsa_pub.bin"), "301:10.5555/ADMIN"
    )
    doikit(
        "admin", "create", *store, "--public-key", str(keys / "rsa_pub.bin"), "302:10.5555/ADMIN"
    )
    other = doikit(
        "admin", "create", "--store", module_store, "--prefix", "10.6666", "300:10.6666/ADMIN"
    )
    port = free_port()
    server = start_server(module_store, options=("--handle-port", str(port)))
    auth = {"Authorization": f"Bearer {server.token}"}
    values = [
        {"index": 1, "type": "URL", "data": "https://example.org/interop"},
        {"index": 2, "type": "EMAIL", "data": "a@example.org"},
        {"index": 3, "type": "DESC", "data": "hidden", "permissions": "1100"},
    ]
    r = httpx.put(f"{server.url}/api/handles/{NAME}", json={"values": values}, headers=auth)
    assert r.status_code == 201
    running = Peer(server, port, secret, keys)
    running.other = f"sec:300:10.6666/ADMIN:{other.splitlines()[-1]}"
    try:
        yield running
    finally:
        stop_server(server)


@pytest.mark.parametrize("transport", ["--udp", "--tcp"])
def test_site_info(peer: Peer, transport: str) -> None:
    answer = peer.tool("siteinfo", transport)
    assert answer["responseCode"] == 1, answer
    (server,) = answer["site"]["servers"]
    ports = {(i["protocol"], i["port"]) for i in server["interfaces"]}
    assert {("UDP", int(peer.port)), ("TCP", int(peer.port)), ("HTTP", int(peer.http))} == ports
    assert server["publicKey"]["value"]["kty"] == "RSA"  # the server key, made on first start


@pytest.mark.parametrize("transport", ["--udp", "--tcp", "--http"])
def test_resolve_with_a_type_filter_and_a_private_value_hidden(peer: Peer, transport: str) -> None:
    http = transport == "--http"
    every = peer.tool("resolve", NAME, transport, http=http)
    assert every["responseCode"] == 1, every
    assert [v["index"] for v in every["values"]] == [1, 2]  # 3 has no public read
    typed = peer.tool("resolve", NAME.upper(), transport, "--type", "URL", http=http)
    assert typed["handle"] == NAME.upper()
    assert [v["data"]["value"] for v in typed["values"]] == ["https://example.org/interop"]


def test_a_certified_answer_is_verified(peer: Peer) -> None:
    answer = peer.tool("resolve", NAME, "--udp", "--cert")
    assert (answer["responseCode"], answer["signed"]) == (1, True), answer


@pytest.mark.parametrize(("name", "code"), [("10.9999/X", 301), ("10.5555/absent", 100)])
def test_not_homed_and_not_found(peer: Peer, name: str, code: int) -> None:
    for transport in ("--udp", "--tcp"):
        assert peer.tool("resolve", name, transport)["responseCode"] == code


def test_administration_as_hdl_tools_do_it(peer: Peer) -> None:
    name = "10.5555/interop-admin"
    # create with a secret key, in a session (CNRI's default), then again: 101
    created = peer.tool("create", name, URL_1, "--auth-id", peer.secret)
    assert created["responseCode"] == 1, created
    assert peer.tool("create", name, URL_1, "--auth-id", peer.secret)["responseCode"] == 101
    # add with a DSA key, in a session
    email = '[{"index":2,"type":"EMAIL","data":{"format":"string","value":"x@example.org"}}]'
    assert peer.tool("add", name, email, "--auth-id", peer.dsa)["responseCode"] == 1
    # modify with an RSA key, without a session; then over HTTP
    url_2 = URL_1.replace("/1", "/2")
    modified = peer.tool("modify", name, url_2, "--auth-id", peer.rsa, "--no-session")
    assert modified["responseCode"] == 1, modified
    url_3 = URL_1.replace("/1", "/3")
    over_http = peer.tool("modify", name, url_3, "--auth-id", peer.secret, "--http", http=True)
    assert over_http["responseCode"] == 1, over_http
    seen = peer.tool("resolve", name, "--tcp")
    assert [v["data"]["value"] for v in seen["values"]] == [
        "https://example.org/3",
        "x@example.org",
    ]
    # what the REST API reads at once
    rest = httpx.get(f"{peer.server.url}/api/handles/{name}").json()
    assert [v["data"]["value"] for v in rest["values"]] == [
        "https://example.org/3",
        "x@example.org",
    ]
    # a wrong secret: 403; a key that no HS_ADMIN names: refused
    wrong = peer.secret.rsplit(":", 1)[0] + ":wrong"
    assert peer.tool("delete", name, "--auth-id", wrong)["responseCode"] == 403
    assert peer.tool("delete", name, "--auth-id", peer.other)["responseCode"] == 400
    # list, remove, delete, then 100
    listed = peer.tool("list", "10.5555", "--auth-id", peer.secret)
    assert name in listed["handles"]
    assert peer.tool("remove", name, "2", "--auth-id", peer.secret)["responseCode"] == 1
    assert peer.tool("delete", name, "--auth-id", peer.secret)["responseCode"] == 1
    assert peer.tool("resolve", name, "--udp")["responseCode"] == 100


# --- doikit's resolver against CNRI's servers (issue 29, point 4) ------------------------------

_ADMIN = "sec:300:10.5555/ADMIN:secret"  # start-server's default identity for 10.5555


def _url_value(url: str) -> str:
    return json.dumps([{"index": 1, "type": "URL", "data": {"format": "string", "value": url}}])


def _start_cnri(
    where: Path,
    port: int,
    prefix: str,
    *options: str,
    admin: str | None = None,
    http: int | None = None,
) -> subprocess.Popen[bytes]:
    """CNRI's server homing *prefix* made in *where* by the build's start-server (UDP and
    TCP on *port*, HTTP on *http* or a free port; *admin*/ADMIN with the secret ``secret``:
    PREFIX/ADMIN unless given), once it says READY."""
    start = Path(_PEER) / "start-server"
    if not start.exists():
        pytest.skip(f"{start} is missing: HANDLE_PEER holds no start-server for CNRI's server")
    http = free_port() if http is None else http
    argv = [str(start), *options, str(where), str(port), str(http), prefix]
    argv += [admin, "secret"] if admin else []
    log = where.with_suffix(".log")
    with log.open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=out)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        said = log.read_text("utf-8", "replace")
        if "start-server: READY" in said:
            return process
        if process.poll() is not None:
            pytest.fail(f"start-server exited with {process.returncode}: {said}")
        time.sleep(0.1)
    process.kill()
    process.wait(10)
    pytest.fail(f"CNRI's server in {where} was not ready within 90 s")


def _stop_cnri(*running: subprocess.Popen[bytes]) -> None:
    """Stop CNRI's servers as SIGTERM does (it writes out the access log), or kill them."""
    for process in running:
        process.terminate()
    for process in running:
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@pytest.fixture(scope="module")
def cnri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Two CNRI servers on loopback; yields the root's HOST:PORT.

    The root homes 0.NA/0.NA and 10.5555 and holds 10.5555/x; the second homes 10.6666 (its
    HS_SITE registered at the root as 0.NA/10.6666) and holds 10.6666/y and 10.6666/big
    (about 18 KB: a UDP answer of many packets). 0.NA/10.7777 at the root is an HS_SERV to
    0.NA/10.6666, so 10.7777/z on the second server is found through a service handle; and
    0.NA/10.5555 carries an HS_SITE.PREFIX naming the second server, where the derived
    prefix 10.5555.1 lives, so the root answers 0.NA/10.5555.1 with a 303 prefix referral.
    """
    base = tmp_path_factory.mktemp("cnri")
    root_port, other_port = free_port(), free_port()
    running: list[subprocess.Popen[bytes]] = []
    try:
        running.append(_start_cnri(base / "root", root_port, "10.5555", "--root"))
        at_root = ("--root-at", f"127.0.0.1:{root_port}", "--root-admin", _ADMIN)
        running.append(
            _start_cnri(base / "other", other_port, "10.6666", *at_root, admin="10.5555/ADMIN")
        )
        root, other = ("127.0.0.1", str(root_port)), ("127.0.0.1", str(other_port))

        def ok(*args: str) -> None:
            answer = handletool(*args, "--auth-id", _ADMIN)
            assert answer.get("responseCode") == 1, (args, answer)

        ok("create", *root, "10.5555/x", _url_value("https://example.org/five"))
        values = json.loads(_url_value("https://example.org/six"))
        values.append({"index": 2, "type": "EMAIL", "data": {"format": "string", "value": "b@x"}})
        ok("create", *other, "10.6666/y", json.dumps(values))
        big = json.loads(_url_value("https://example.org/big"))
        big += [
            {"index": 10 + i, "type": "DESC", "data": {"format": "string", "value": "d" * 900}}
            for i in range(20)
        ]
        ok("create", *other, "10.6666/big", json.dumps(big))
        # a prefix served through a service handle (HS_SERV)
        serv = '[{"index":1,"type":"HS_SERV","data":{"format":"string","value":"0.NA/10.6666"}}]'
        ok("create", *root, "0.NA/10.7777", serv)
        ok("home", *other, "10.7777")
        ok("create", *other, "10.7777/z", _url_value("https://example.org/seven"))
        # a derived prefix, referred to with 303 (CNRI's server answers for 0.NA/10.5555.1
        # where 0.NA/0.NA/10.5555 is homed)
        site = handletool("siteinfo", *other, "--tcp")["site"]
        prefix_site = {
            "index": 2,
            "type": "HS_SITE.PREFIX",
            "data": {"format": "site", "value": site},
        }
        ok("add", *root, "0.NA/10.5555", json.dumps([prefix_site]))
        ok("home", *other, "0.NA/0.NA/10.5555")
        own = [{"index": 1, "type": "HS_SITE", "data": {"format": "site", "value": site}}]
        ok("create", *other, "0.NA/10.5555.1", json.dumps(own))
        ok("home", *other, "10.5555.1")
        ok("create", *other, "10.5555.1/w", _url_value("https://example.org/derived"))
        yield f"127.0.0.1:{root_port}"
    finally:
        _stop_cnri(*running)


def resolve_native(root: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DOIKIT, "resolve", "--native", "--root", root, "--timeout", "20", *args],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


@pytest.mark.parametrize("certify", [(), ("--certify",)], ids=["plain", "certified"])
def test_resolve_native_finds_names_on_both_servers(cnri: str, certify: tuple[str, ...]) -> None:
    done = resolve_native(cnri, *certify, "10.5555/x", "10.6666/Y")
    assert (done.returncode, done.stderr) == (0, ""), done
    assert done.stdout.splitlines() == ["https://example.org/five", "https://example.org/six"]


def test_resolve_native_json_and_a_type(cnri: str) -> None:
    done = resolve_native(cnri, "--json", "10.5555/x", "10.6666/y", "10.6666/big")
    assert done.returncode == 0, done
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(o["handle"], o["url"]) for o in lines] == [
        ("10.5555/x", "https://example.org/five"),
        ("10.6666/y", "https://example.org/six"),
        ("10.6666/big", "https://example.org/big"),
    ]
    assert [v["type"] for v in lines[1]["values"]] == ["URL", "EMAIL"]
    assert len(lines[2]["values"]) == 21  # a UDP answer of many packets, reassembled
    typed = resolve_native(cnri, "--type", "EMAIL", "10.6666/y")
    assert (typed.returncode, typed.stdout) == (0, "b@x\n"), typed


def test_resolve_native_through_a_service_handle_and_a_prefix_referral(cnri: str) -> None:
    done = resolve_native(cnri, "10.7777/z", "10.5555.1/w")
    assert (done.returncode, done.stderr) == (0, ""), done
    assert done.stdout.splitlines() == ["https://example.org/seven", "https://example.org/derived"]


def test_resolve_native_not_found_exits_1(cnri: str) -> None:
    done = resolve_native(cnri, "10.5555/x", "10.6666/absent", "10.8888/z", "10.5555.1/absent")
    assert done.returncode == 1, done
    assert done.stdout.splitlines() == ["https://example.org/five"]
    said = done.stderr.splitlines()
    assert len(said) == 3, said
    assert "10.6666/absent" in said[0]
    assert "knows no such handle (rc 100)" in said[0]
    assert "0.NA/10.8888 is not registered" in said[1]
    assert "10.5555.1/absent" in said[2]
    assert "DOINotFound" in done.stderr
    assert "HandleServerError" not in done.stderr


@pytest.fixture(scope="module")
def proxy(cnri: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`doikit serve --upstream-root` at the CNRI root, on an empty SQLite store."""
    store = f"sqlite:///{tmp_path_factory.mktemp('upstream') / 'empty.sqlite3'}"
    running = start_server(store, demo=False, token_prefixes=(), options=("--upstream-root", cnri))
    try:
        yield running
    finally:
        stop_server(running)


_FOUND = [
    ("10.5555/x", "https://example.org/five"),
    ("10.6666/y", "https://example.org/six"),
    ("10.7777/z", "https://example.org/seven"),
    ("10.5555.1/w", "https://example.org/derived"),
]


@pytest.mark.parametrize(("name", "url"), _FOUND, ids=[n for n, _ in _FOUND])
def test_serve_upstream_root_answers_over_rest_and_redirects(
    proxy: Server, name: str, url: str
) -> None:
    rest = httpx.get(f"{proxy.url}/api/handles/{name}", timeout=30)
    assert rest.status_code == 200, rest.text
    body = rest.json()
    assert (body["responseCode"], body["handle"]) == (1, name)
    assert body["values"][0]["data"]["value"] == url
    redirect = httpx.get(f"{proxy.url}/{name}", timeout=30)
    assert redirect.status_code == 302, redirect.text
    assert redirect.headers["location"] == url
    shown = httpx.get(f"{proxy.url}/{name}?noredirect", timeout=30)
    assert shown.status_code == 200
    assert url in shown.text


@pytest.mark.parametrize("name", ["10.6666/absent", "10.8888/z"])
def test_serve_upstream_root_not_found_is_404(proxy: Server, name: str) -> None:
    rest = httpx.get(f"{proxy.url}/api/handles/{name}", timeout=30)
    assert (rest.status_code, rest.json()) == (404, {"responseCode": 100, "handle": name})
    assert httpx.get(f"{proxy.url}/{name}", timeout=30).status_code == 404


def test_serve_upstream_root_which_ra(proxy: Server) -> None:
    asked = "10.5555/x,10.6666/y,10.6666/absent,10.6666,10.8888,not-a-doi"
    r = httpx.get(f"{proxy.url}/ra/{asked}", timeout=30)
    assert r.status_code == 200
    assert r.json() == [
        {"DOI": "10.5555/x", "status": "Unknown"},  # held upstream: which RA is not said
        {"DOI": "10.6666/y", "status": "Unknown"},
        {"DOI": "10.6666/absent", "status": "DOI does not exist"},
        {"DOI": "10.6666", "status": "Unknown"},  # 0.NA/10.6666 is registered at the root
        {"DOI": "10.8888", "status": "DOI does not exist"},
        {"DOI": "not-a-doi", "status": "Invalid DOI"},
    ]


# --- identities held at CNRI's root administer doikit (issue 28: remote identities) -------------


class Root:
    """CNRI's server as a private root (``start-server --root``) homing 10.5555 and holding
    10.5555/ADMIN: the secret ``secret`` at 300, a DSA key at 301 and an RSA key at 302,
    their private keys in ``keys/``. Stopped and started again in place, on the same ports."""

    def __init__(self, where: Path) -> None:
        self.where, self.port, self.http = where, free_port(), free_port()
        self.process = _start_cnri(where, self.port, "10.5555", "--root", http=self.http)

    def stop(self) -> None:
        _stop_cnri(self.process)

    def restart(self) -> None:
        self.process = _start_cnri(self.where, self.port, "10.5555", "--reuse", http=self.http)

    def asked(self) -> set[tuple[str, str, str]]:
        """(op code, response code, handle) of each request in the access log, which CNRI's
        server writes out once a minute and when stopped."""
        log = (self.where / "logs" / "access.log").read_text("utf-8")
        # 127.0.0.1 UDP:HDL(2.11) "2026-11-28 18:06:29.414Z" 201 1 24ms  10.5555/ADMIN
        fields = [line.split('"')[2].split() for line in log.splitlines()]
        return {(f[0], f[1], f[-1]) for f in fields}


class Remote:
    """`doikit serve --upstream-root` at a CNRI :class:`Root`, homing 10.6666 on SQLite; its
    0.NA/10.6666 names the root's three 10.5555/ADMIN identities in HS_ADMIN values, and the
    root holds 0.NA/10.6666 with doikit's HS_SITE."""

    def __init__(self, server: Server, port: int, root: Root) -> None:
        self.server, self.port, self.root = server, str(port), root
        keys = root.where / "keys"
        self.identities = {
            "secret": _ADMIN,
            "dsa": f"pub:301:10.5555/ADMIN:{keys / 'admin_dsa_priv.bin'}",
            "rsa": f"pub:302:10.5555/ADMIN:{keys / 'admin_rsa_priv.bin'}",
        }

    def tool(self, command: str, *args: str) -> dict[str, Any]:
        """HandleTool's *command* at doikit's native port."""
        return handletool(command, "127.0.0.1", self.port, *args)

    def errors_since(self, start: int) -> str:
        """What doikit wrote on stderr after its first *start* characters."""
        return self.server.errors()[start:]


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Remote]:
    """A CNRI :class:`Root`, then doikit's :class:`Remote` at it: 0.NA/10.6666 written into
    doikit's store before it starts, then registered at the root by the root's admin."""
    from test_native_remote_identity import _add  # noqa: PLC0415 - it needs cryptography

    here = tmp_path_factory.mktemp("remote-admins")
    root = Root(here / "root")
    try:
        store = f"sqlite:///{here / 'doikit.sqlite3'}"
        admins = tuple(
            HandleValue(100 + i, "HS_ADMIN", AdminData("10.5555/ADMIN", index, "111111111111"))
            for i, index in enumerate((300, 301, 302))
        )
        _add(store, "0.NA/10.6666", admins)
        port = free_port()
        upstream = ("--upstream-root", f"127.0.0.1:{root.port}")
        options = ("--handle-port", str(port), *upstream)
        server = start_server(store, demo=False, token_prefixes=(), options=options)
        try:
            http = server.url.rsplit(":", 1)[1]
            where = ("--host", "127.0.0.1", "--handle-port", str(port), "--port", http)
            site = doikit("admin", "site", "--store", store, *where)
            at_root = ("127.0.0.1", str(root.port), "0.NA/10.6666", f"[{site}]")
            registered = handletool("create", *at_root, "--auth-id", _ADMIN)
            assert registered["responseCode"] == 1, registered
            yield Remote(server, port, root)
        finally:
            stop_server(server)
    finally:
        root.stop()


_IDENTITIES = [
    (identity, options)
    for identity in ("secret", "dsa", "rsa")
    for options in ((), ("--no-session",))
]


@pytest.mark.parametrize(
    ("identity", "options"),
    _IDENTITIES,
    ids=[i + ("-no-session" if o else "") for i, o in _IDENTITIES],
)
def test_an_identity_held_at_cnri_creates_at_doikit(
    remote: Remote, identity: str, options: tuple[str, ...]
) -> None:
    # a secret: doikit sends the answer to the root in a VERIFY_CHALLENGE; a public key:
    # doikit resolves it certified from the root and checks the signature itself
    start = len(remote.server.errors())
    name = f"10.6666/by-{identity}{''.join(options)}"
    url = f"https://example.org/{identity}"
    auth = remote.identities[identity]
    created = remote.tool("create", name, _url_value(url), "--auth-id", auth, *options)
    assert created["responseCode"] == 1, (created, remote.errors_since(start))
    seen = remote.tool("resolve", name, "--udp")
    assert seen["responseCode"] == 1, seen
    assert [v["data"]["value"] for v in seen["values"]] == [url]
    assert remote.errors_since(start) == ""


def test_wrong_answers_for_identities_held_at_cnri_are_refused(remote: Remote) -> None:
    start = len(remote.server.errors())
    wrong_secret = _ADMIN.rsplit(":", 1)[0] + ":wrong"
    rsa_key_for_dsa = remote.identities["rsa"].replace("pub:302:", "pub:301:")
    for name, auth in (
        ("10.6666/wrong-secret", wrong_secret),
        ("10.6666/wrong-key", rsa_key_for_dsa),
    ):
        refused = remote.tool("create", name, URL_1, "--auth-id", auth)
        assert refused["responseCode"] == 403, refused
        assert remote.tool("resolve", name, "--udp")["responseCode"] == 100
    assert remote.errors_since(start) == ""  # CNRI's answer said no: nothing went wrong


def test_identities_held_at_cnri_administer_what_they_made(remote: Remote) -> None:
    name = "10.6666/administered"
    made = remote.tool("create", name, URL_1, "--auth-id", remote.identities["secret"])
    assert made["responseCode"] == 1, made
    email = '[{"index":2,"type":"EMAIL","data":{"format":"string","value":"x@example.org"}}]'
    added = remote.tool("add", name, email, "--auth-id", remote.identities["dsa"])
    assert added["responseCode"] == 1, added
    url_2 = _url_value("https://example.org/2")
    modified = remote.tool("modify", name, url_2, "--auth-id", remote.identities["rsa"])
    assert modified["responseCode"] == 1, modified
    seen = remote.tool("resolve", name, "--tcp")
    assert [v["data"]["value"] for v in seen["values"]] == [
        "https://example.org/2",
        "x@example.org",
    ]
    deleted = remote.tool("delete", name, "--auth-id", remote.identities["rsa"])
    assert deleted["responseCode"] == 1, deleted
    assert remote.tool("resolve", name, "--udp")["responseCode"] == 100


def test_cnri_saw_doikit_ask_and_without_it_a_secret_is_refused(remote: Remote) -> None:
    for identity in ("secret", "dsa"):
        name = f"10.6666/logged-{identity}"
        made = remote.tool("create", name, URL_1, "--auth-id", remote.identities[identity])
        assert made["responseCode"] == 1, made
    remote.root.stop()  # (and so writes out its access log)
    try:
        asked = remote.root.asked()
        assert ("201", "1", "10.5555/ADMIN") in asked  # VERIFY_CHALLENGE, answered
        assert ("1", "1", "10.5555/ADMIN") in asked  # the public key, resolved
        start = len(remote.server.errors())
        refused = remote.tool("create", "10.6666/unchecked", URL_1, "--auth-id", _ADMIN)
        assert refused["responseCode"] == 403, refused
        said = remote.errors_since(start)
        assert "the identity 300:10.5555/ADMIN could not be checked" in said, said
        assert remote.tool("resolve", "10.6666/unchecked", "--udp")["responseCode"] == 100
    finally:
        remote.root.restart()
