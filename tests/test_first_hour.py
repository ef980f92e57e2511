"""The first hour of a new user (issue 27): the traps a fresh clone and the README met, each
tried as the user met it — real processes, a real busy socket, the scripts as shipped."""

from __future__ import annotations

import asyncio
import http.server
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from conftest import DOIKIT, free_port, serving
from doikit import TransportError
from doikit.client import AsyncClient, Client
from doikit.client._policy import Attempts, HostGate, RetryPolicy
from doikit.server._demo import DEMO, demo_rows, load_demo
from doikit.server.stores import Row, open_store

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parent.parent


def _without(module: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """``doikit ARGV`` in a Python where *module* cannot be imported, as where its extra
    was not installed."""
    launch = f"import sys; sys.modules[{module!r}] = None; from doikit.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", launch, *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


# --- doikit serve: the ready line once it listens, a busy port in one line ---------------


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback port another program listens on."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield int(other.getsockname()[1])


@pytest.mark.parametrize("workers", ["1", "2"])
def test_serve_on_a_busy_port_is_one_line_and_exit_2(
    tmp_path: Path, busy_port: int, workers: str
) -> None:
    store = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    done = subprocess.run(
        [DOIKIT, "serve", "--store", store, "--port", str(busy_port), "--workers", workers],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""  # no "listening on" for a server that is not
    assert done.stderr == (
        f"doikit: 127.0.0.1:{busy_port} is in use: another program listens there"
        " (choose another --port)\n"
    )


def test_serve_says_it_listens_once_it_does(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    process = subprocess.Popen(
        [DOIKIT, "serve", "--store", store, "--port", "0", "--demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready = process.stdout.readline()
        match = re.fullmatch(
            rf"doikit serve: listening on http://127\.0\.0\.1:(\d+), store {re.escape(store)}\n",
            ready,
        )
        assert match, ready  # the port bound, not the 0 asked for
        port = int(match.group(1))
        assert port != 0
        # At once, no retry: the socket listens before the line is written.
        answer = httpx.get(f"http://127.0.0.1:{port}/10.1000/182", timeout=30)
        assert answer.status_code == 302
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=10)
    assert "Traceback" not in errors


# --- a PostgreSQL store without the postgres extra ------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "--port", "0"],
        ["token", "create", "--prefix", "10.5555"],
        ["admin", "create", "--prefix", "10.5555", "300:10.5555/ADMIN"],
    ],
    ids=["serve", "token", "admin"],
)
def test_a_postgresql_store_without_its_extra_is_one_line_and_exit_2(argv: list[str]) -> None:
    done = _without("asyncpg", *argv, "--store", "postgresql://doikit@127.0.0.1:1/x")
    assert done.returncode == 2
    assert done.stderr == (
        "doikit: this command needs the postgres extra: pip install '.[postgres]' in doikit's"
        " clone (or 'WHEEL[postgres]')\n"
    )


# --- installing: doikit is on no package index ---------------------------------------------

_INSTALL = re.compile(r"pip install ([^\n`]*)")


@pytest.mark.parametrize(
    "page", [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name
)
def test_every_install_line_installs_from_a_checkout_or_a_wheel(page: Path) -> None:
    for match in _INSTALL.finditer(page.read_text(encoding="utf-8")):
        line = match.group(1)
        if "doikit" not in line and "." not in line:
            continue  # another project's packages (the benchmarks' peers)
        assert not re.match(r"""['"]?doikit\b""", line), f"{page.name}: pip install {line}"


# --- scripts/docs.sh sets up what it needs ---------------------------------------------------

# A stand-in for python3 and the .venv's python: it answers the checks of scripts/_venv.sh,
# says the docs build's modules are importable only once a pip install ran, and logs the
# rest (no network, no Sphinx run).
_FAKE_PYTHON = """#!/bin/bash
echo "$*" >> "$FAKE_LOG"
case "$1 $2" in
  "-c import sys; sys.exit"*) exit 0 ;;
  "-c import sys; print"*) echo "3.11.9 /fake" ;;
  "-c import"*) [ -e "$FAKE_STATE/installed" ] ;;
  "-m venv") mkdir -p "$3/bin" && cp "$0" "$3/bin/python" ;;
  "-m pip") touch "$FAKE_STATE/installed" ;;
esac
"""


def _docs_sh(clone: Path, state: Path) -> list[str]:
    log = state / "log"
    log.unlink(missing_ok=True)
    done = subprocess.run(
        ["/bin/bash", "scripts/docs.sh", "out"],
        cwd=clone,
        capture_output=True,
        text=True,
        check=False,
        env={
            **os.environ,
            "PYTHON": str(state / "python3"),
            "FAKE_LOG": str(log),
            "FAKE_STATE": str(state),
        },
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return log.read_text().splitlines()


def test_docs_sh_after_run_sh_alone_installs_what_the_build_needs(tmp_path: Path) -> None:
    clone, state = tmp_path / "clone", tmp_path / "state"
    (clone / "scripts").mkdir(parents=True)
    state.mkdir()
    for script in ("docs.sh", "_venv.sh"):
        shutil.copy(ROOT / "scripts" / script, clone / "scripts" / script)
    fake = state / "python3"
    fake.write_text(_FAKE_PYTHON)
    fake.chmod(0o755)
    # As run.sh leaves it: a .venv made by this Python, with the project but not Sphinx.
    (clone / ".venv" / "bin").mkdir(parents=True)
    shutil.copy(fake, clone / ".venv" / "bin" / "python")

    calls = _docs_sh(clone, state)
    installs = [i for i, call in enumerate(calls) if call.startswith("-m pip install")]
    builds = [i for i, call in enumerate(calls) if call.startswith("-m sphinx")]
    assert len(installs) == 1, calls
    assert "-e .[all,docs,spark]" in calls[installs[0]]
    assert builds, calls
    assert installs[0] < builds[0]
    # Run again, with all in place, it installs nothing.
    calls = _docs_sh(clone, state)
    assert not [call for call in calls if call.startswith("-m pip")], calls
    assert [call for call in calls if call.startswith("-m sphinx")]


# --- --demo: the demo records are added where missing, never overwritten -------------------


def test_demo_records_are_added_only_where_missing(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = open_store(f"sqlite:///{tmp_path / 'db.sqlite3'}")
        await store.open()
        try:
            assert await load_demo(store) == len(DEMO)
            first = demo_rows()[0]
            stored = await store.get(first.key)
            assert stored is not None
            changed = stored.values_json.replace("https://", "https://changed.")
            row = Row(first.key, first.name, first.prefix, changed)
            assert await store.swap(first.key, stored.values_json, row)
            assert await store.swap(demo_rows()[1].key, demo_rows()[1].values_json, None)

            assert await load_demo(store) == 1  # the deleted one, back
            kept = await store.get(first.key)
            assert kept is not None
            assert kept.values_json == changed  # the change, kept
        finally:
            await store.close()

    asyncio.run(scenario())


def test_serve_help_says_what_demo_does() -> None:
    done = subprocess.run(
        [DOIKIT, "serve", "--help"], capture_output=True, text=True, check=True, timeout=60
    )
    assert "are left as they are" in " ".join(done.stdout.split())


# --- cite: a failure after the resolver's redirect names where it happened ---------------


@pytest.fixture
def redirecting() -> Iterator[tuple[str, str]]:
    """A resolver that redirects every request to a loopback port where nothing listens
    (as a local resolver redirects to a landing page on the internet, out of reach); its
    URL and the dead host."""
    dead = f"127.0.0.1:{free_port()}"

    class Redirect(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", f"http://{dead}/landing")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    with serving(Redirect) as url:
        yield url, dead


def test_cite_names_the_host_that_failed_after_the_redirect(
    redirecting: tuple[str, str],
) -> None:
    url, dead = redirecting
    resolver = url.removeprefix("http://")
    started = time.monotonic()
    done = subprocess.run(
        [DOIKIT, "cite", "--resolver", url, "10.1000/182"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert time.monotonic() - started < 30
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(
        f"doikit: 10.1000/182: getting the metadata of 10.1000/182: the request to {dead},"
        f" where {resolver} redirected it, failed: ConnectError: "
    ), done.stderr
    assert "resolving" not in done.stderr


def test_both_clients_name_the_host_that_failed_after_the_redirect(
    redirecting: tuple[str, str],
) -> None:
    url, dead = redirecting
    where = f"the request to {dead}, where {url.removeprefix('http://')} redirected it, failed"
    with Client(url, retries=0) as client, pytest.raises(TransportError) as sync_error:
        client.metadata("10.1000/182", "bibtex")
    assert str(sync_error.value).startswith(f"getting the metadata of 10.1000/182: {where}: ")

    async def ask() -> None:
        async with AsyncClient(url, retries=0) as client:
            await client.metadata("10.1000/182", "bibtex")

    with pytest.raises(TransportError) as async_error:
        asyncio.run(ask())
    assert str(async_error.value).startswith(f"getting the metadata of 10.1000/182: {where}: ")


def test_a_failure_after_a_redirect_does_not_count_against_the_resolver() -> None:
    gate = HostGate()
    attempts = Attempts(RetryPolicy(retries=100), gate, "10.1000/182", "resolver.example")
    for _ in range(20):
        attempts.failed(time.monotonic(), "refused", at="ra.example")
    assert gate.failures == 0
    assert not gate.is_open(time.monotonic())


# --- the docs say what the code does -----------------------------------------------------


def test_docs_cli_gives_the_exit_status_of_a_pdf_without_the_pdf_extra() -> None:
    done = _without("pypdfium2", "extract", str(ROOT / "tests/corpus/pdf/uri-example.pdf"))
    assert done.stderr.count("\n") == 1
    assert "pdf extra" in done.stderr
    page = " ".join((ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split())
    said = re.search(r"needs the `pdf` extra: .*? Without the extra .*? exits (\d)", page)
    assert said is not None
    assert int(said.group(1)) == done.returncode == 2
