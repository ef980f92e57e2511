"""The real Handle REST clients from PyPI (pyhandle, b2handle) against a real `doikit serve`.

They authenticate with HTTP Basic as a Handle identity made by `doikit admin create`, and are
used through their public APIs only. After each operation the whole record is read back
over the REST API and compared: the operation changed what it names and nothing else.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from conftest import DOIKIT, start_server, stop_server

pyhandle_client = pytest.importorskip("pyhandle.client.resthandleclient")
pyhandle_errors = pytest.importorskip("pyhandle.handleexceptions")

if TYPE_CHECKING:
    from collections.abc import Iterator

    from conftest import Server

IDENTITY = "300:10.5555/ADMIN"


@pytest.fixture(scope="module")
def served(module_store: str) -> Iterator[tuple[Server, str]]:
    """`doikit serve` on each store, with the identity 300:10.5555/ADMIN and its secret."""
    made = subprocess.run(
        [DOIKIT, "admin", "create", "--store", module_store, "--prefix", "10.5555", IDENTITY],
        check=True,
        capture_output=True,
        text=True,
    )
    secret = made.stdout.splitlines()[-1]
    running = start_server(module_store, demo=False)
    try:
        yield running, secret
    finally:
        stop_server(running)


@pytest.fixture
def pyhandle(served: tuple[Server, str]) -> Any:
    server, secret = served
    return pyhandle_client.RESTHandleClient.instantiate_with_username_and_password(
        server.url, IDENTITY, secret, HTTPS_verify=False
    )


@pytest.fixture
def b2handle(served: tuple[Server, str]) -> Any:
    handleclient = pytest.importorskip("b2handle.handleclient")
    server, secret = served
    return handleclient.EUDATHandleClient.instantiate_with_username_and_password(
        server.url, IDENTITY, secret, HTTPS_verify=False
    )


def record(served: tuple[Server, str], name: str) -> dict[int, tuple[str, Any]]:
    """The record as the public reads it: index -> (type, data value)."""
    r = httpx.get(f"{served[0].url}/api/handles/{name}")
    if r.status_code == 404:
        return {}
    assert r.status_code == 200, r.text
    return {v["index"]: (v["type"], v["data"]["value"]) for v in r.json()["values"]}


def new_name() -> str:
    return "10.5555/c-" + uuid.uuid4().hex[:10]


DEFAULT_ADMIN = (
    "HS_ADMIN",
    {"handle": "0.NA/10.5555", "index": 200, "permissions": "011111110011"},
)


# --- pyhandle ----------------------------------------------------------------------------------


def test_pyhandle_register_with_the_default_hs_admin(
    pyhandle: Any, served: tuple[Server, str]
) -> None:
    name = new_name()
    assert pyhandle.register_handle(name, "https://a.example/", checksum="c1", FOO="bar") == name
    assert record(served, name) == {
        1: ("URL", "https://a.example/"),
        2: ("FOO", "bar"),
        3: ("CHECKSUM", "c1"),
        100: DEFAULT_ADMIN,
    }


def test_pyhandle_register_refuses_an_existing_name(
    pyhandle: Any, served: tuple[Server, str]
) -> None:
    name = new_name()
    pyhandle.register_handle(name, "https://a.example/")
    before = record(served, name)
    with pytest.raises(pyhandle_errors.HandleAlreadyExistsException):
        pyhandle.register_handle(name, "https://other.example/")
    assert record(served, name) == before
    pyhandle.register_handle(name, "https://b.example/", overwrite=True)
    assert record(served, name)[1] == ("URL", "https://b.example/")


def test_pyhandle_generate_and_register(pyhandle: Any, served: tuple[Server, str]) -> None:
    name = pyhandle.generate_and_register_handle("10.5555", "https://g.example/")
    assert name.startswith("10.5555/")
    assert record(served, name)[1] == ("URL", "https://g.example/")


def test_pyhandle_modify_changes_only_what_it_names(
    pyhandle: Any, served: tuple[Server, str]
) -> None:
    name = new_name()
    pyhandle.register_handle(name, "https://a.example/", checksum="c1", FOO="bar")
    before = record(served, name)
    pyhandle.modify_handle_value(name, URL="https://b.example/", NEW="x")
    after = record(served, name)
    assert after[1] == ("URL", "https://b.example/")
    added = [i for i in after if i not in before]
    assert [after[i] for i in added] == [("NEW", "x")]
    assert {i: v for i, v in after.items() if i != 1 and i not in added} == {
        i: v for i, v in before.items() if i != 1
    }


def test_pyhandle_add_and_delete_one_value(pyhandle: Any, served: tuple[Server, str]) -> None:
    name = new_name()
    pyhandle.register_handle(name, "https://a.example/", FOO="bar")
    before = record(served, name)
    pyhandle.add_handle_value(name, EXTRA="y")
    added = record(served, name)
    assert {i: v for i, v in added.items() if v != ("EXTRA", "y")} == before
    assert ("EXTRA", "y") in added.values()
    pyhandle.delete_handle_value(name, "EXTRA")
    assert record(served, name) == before
    pyhandle.delete_handle_value(name, "FOO")
    assert record(served, name) == {i: v for i, v in before.items() if v != ("FOO", "bar")}


def test_pyhandle_delete_handle(pyhandle: Any, served: tuple[Server, str]) -> None:
    name = new_name()
    pyhandle.register_handle(name, "https://a.example/")
    pyhandle.delete_handle(name)
    assert record(served, name) == {}
    assert pyhandle.retrieve_handle_record(name) is None


def test_pyhandle_search_handle(pyhandle: Any) -> None:
    marker = uuid.uuid4().hex
    names = sorted(new_name() for _ in range(3))
    for i, name in enumerate(names):
        pyhandle.register_handle(name, f"https://search.example/{marker}/{i}")
    assert pyhandle.search_handle(URL=f"https://search.example/{marker}/1") == [names[1]]
    found = pyhandle.search_handle(URL=f"https://search.example/{marker}/*", prefix="10.5555")
    assert sorted(found) == names


def test_a_wrong_secret_is_refused_and_changes_nothing(served: tuple[Server, str]) -> None:
    server, _ = served
    client = pyhandle_client.RESTHandleClient.instantiate_with_username_and_password(
        server.url, IDENTITY, "not-the-secret", HTTPS_verify=False
    )
    name = new_name()
    with pytest.raises(pyhandle_errors.HandleAuthenticationError):
        client.register_handle(name, "https://a.example/")
    assert record(served, name) == {}


@pytest.mark.xfail(
    reason="pyhandle puts the name in the URL without escaping it, so '#' starts a fragment "
    "and the server is sent 10.5555/x (pyhandle's make_handle_URL); the server does not bend",
    strict=True,
)
def test_pyhandle_a_name_with_a_hash(pyhandle: Any, served: tuple[Server, str]) -> None:
    name = new_name() + "#1"
    pyhandle.register_handle(name, "https://a.example/")
    assert record(served, name.replace("#", "%23"))[1] == ("URL", "https://a.example/")


# --- b2handle ----------------------------------------------------------------------------------


def test_b2handle_register_with_locations_and_edit_them(
    b2handle: Any, served: tuple[Server, str]
) -> None:
    name = new_name()
    b2handle.register_handle(
        name, "https://a.example/", checksum="c1", additional_URLs=["https://l1.example/"]
    )
    before = record(served, name)
    assert before[1] == ("URL", "https://a.example/")
    assert before[100] == DEFAULT_ADMIN
    locations = [i for i, v in before.items() if v[0] == "10320/LOC"]
    assert len(locations) == 1
    assert 'href="https://l1.example/"' in before[locations[0]][1]
    b2handle.add_additional_URL(name, "https://l2.example/", "https://l3.example/")
    b2handle.exchange_additional_URL(name, "https://l2.example/", "https://l2b.example/")
    b2handle.remove_additional_URL(name, "https://l3.example/")
    after = record(served, name)
    loc = after[locations[0]][1]
    assert 'href="https://l1.example/"' in loc
    assert 'href="https://l2b.example/"' in loc
    assert "l3.example" not in loc
    assert "l2.example/" not in loc
    assert {i: v for i, v in after.items() if i != locations[0]} == {
        i: v for i, v in before.items() if i != locations[0]
    }


def test_b2handle_modify_delete_value_and_handle(b2handle: Any, served: tuple[Server, str]) -> None:
    name = new_name()
    b2handle.register_handle(name, "https://a.example/", checksum="c1")
    before = record(served, name)
    b2handle.modify_handle_value(name, URL="https://b.example/", NEW="x")
    changed = record(served, name)
    assert changed[1] == ("URL", "https://b.example/")
    assert ("NEW", "x") in changed.values()
    b2handle.delete_handle_value(name, ["NEW"])
    assert record(served, name) == {**before, 1: ("URL", "https://b.example/")}
    b2handle.delete_handle(name)
    assert record(served, name) == {}


def test_b2handle_search(b2handle: Any) -> None:
    marker = uuid.uuid4().hex
    name = new_name()
    b2handle.register_handle(name, f"https://b2.example/{marker}")
    assert b2handle.search_handle(f"https://b2.example/{marker}") == [name]


def test_repeated_wrong_secrets_are_answered_ever_later(served: tuple[Server, str]) -> None:
    server, secret = served
    wrong = httpx.BasicAuth("300%3A10.5555%2FADMIN", "wrong")
    other_index = httpx.BasicAuth("301%3A10.5555%2FADMIN", "wrong")
    unknown = httpx.BasicAuth("300%3A10.5555%2FNOBODY", "wrong")
    right = httpx.BasicAuth("300%3A10.5555%2FADMIN", secret)
    url = f"{server.url}/api/handles/10.5555/slow"
    assert httpx.delete(url, auth=right).status_code == 404  # known right from now on
    times = []
    for auth in [wrong] * 7 + [other_index]:
        started = time.monotonic()
        assert httpx.delete(url, auth=auth).status_code == 401
        times.append(time.monotonic() - started)
    # The 8th failure waits 2 s (0.25 s doubled from the 6th) whatever index it names; the
    # first does not wait. The margins leave room for a loaded machine (a first answer took
    # 0.47 s under load).
    assert times[-1] > 1.9
    assert times[-1] - times[0] > 1.4
    started = time.monotonic()
    assert httpx.delete(url, auth=unknown).status_code == 401  # another name: its own count
    assert time.monotonic() - started < 1.5  # (counted with the 8 above it would wait 4 s)
    started = time.monotonic()
    assert httpx.delete(url, auth=right).status_code == 404  # a key known right: never slowed
    assert time.monotonic() - started < 1
