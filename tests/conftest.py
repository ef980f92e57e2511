"""Real parts for the server tests: a throwaway PostgreSQL cluster and `doikit serve` processes.

Nothing here mocks doikit: the stores are real SQLite files and a real PostgreSQL server, and
the server is the installed `doikit serve` on a real loopback socket.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

import httpx
import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

DOIKIT = str(Path(sys.executable).with_name("doikit"))


@contextlib.contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """A threaded HTTP server on a loopback port answering with *handler*; yields its URL."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_postgres_user(argv: list[str]) -> list[str]:
    # initdb and pg_ctl refuse to run as root: run them as an unprivileged user.
    if os.geteuid() == 0:
        return ["runuser", "-u", "nobody", "--", *argv]
    return argv


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a free loopback port, for the whole session."""
    if not shutil.which("initdb") or not shutil.which("pg_ctl"):
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) are not on the PATH")
    root = Path(tempfile.mkdtemp(prefix="doikit-pg-"))
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, "nobody")
    port = free_port()
    subprocess.run(
        _as_postgres_user(["initdb", "-D", str(data), "-U", "doikit", "-A", "trust", "--no-sync"]),
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=on"
    subprocess.run(
        _as_postgres_user(
            ["pg_ctl", "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start"]
        ),
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql://doikit@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            _as_postgres_user(["pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop"]),
            check=False,
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def fresh_pg_url(pg_url: str) -> str:
    """The cluster with empty tables."""
    import asyncio  # noqa: PLC0415

    import asyncpg  # noqa: PLC0415

    async def wipe() -> None:
        conn = await asyncpg.connect(pg_url)
        try:
            await conn.execute("DROP TABLE IF EXISTS handles, tokens")
        finally:
            await conn.close()

    asyncio.run(wipe())
    return pg_url


def new_database(pg_url: str) -> str:
    """A new, empty database in the session's cluster; its URL."""
    import asyncio  # noqa: PLC0415
    import uuid  # noqa: PLC0415

    import asyncpg  # noqa: PLC0415

    name = "d" + uuid.uuid4().hex[:12]

    async def create() -> None:
        conn = await asyncpg.connect(pg_url)
        try:
            await conn.execute(f"CREATE DATABASE {name}")
        finally:
            await conn.close()

    asyncio.run(create())
    return pg_url.rsplit("/", 1)[0] + "/" + name


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def module_store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Each store in turn, fresh, for a module's tests: a SQLite file, a PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('store') / 'doikit.sqlite3'}"
    return new_database(str(request.getfixturevalue("pg_url")))


@pytest.fixture(scope="module")
def served(module_store: str) -> Iterator[Server]:
    """`doikit serve --demo` on each store in turn, for a module's tests."""
    running = start_server(module_store)
    try:
        yield running
    finally:
        stop_server(running)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each store in turn: a fresh SQLite file, then the PostgreSQL cluster emptied."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.sqlite3'}"
    return str(request.getfixturevalue("fresh_pg_url"))


@dataclass
class Server:
    """A running `doikit serve`: its base URL, a token for 10.5555, the process."""

    url: str
    token: str
    store: str
    process: subprocess.Popen[bytes]
    log: IO[bytes]

    def errors(self) -> str:
        """What the server wrote on stderr so far."""
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)


def start_server(
    store: str,
    *,
    demo: bool = True,
    token_prefixes: tuple[str, ...] = ("10.5555",),
    open_files: int | None = None,
    options: tuple[str, ...] = (),
) -> Server:
    """Create a token in *store*, start `doikit serve` on it, wait until it answers.

    *open_files* sets the server's limit of open files (soft and hard), as ``ulimit -n``.
    """
    prefixes = [a for p in token_prefixes for a in ("--prefix", p)]
    token = (
        ""
        if not token_prefixes
        else subprocess.run(  # (none: a read-only store)
            [DOIKIT, "token", "create", "--store", store, *prefixes],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    port = free_port()
    argv = [DOIKIT, "serve", "--store", store, "--port", str(port), *options]
    argv += ["--demo"] if demo else []
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop_server

    def limit() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log, preexec_fn=limit)  # noqa: PLW1509 - only setrlimit
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            err = log.read().decode("utf-8", "replace")
            pytest.fail(f"doikit serve exited with {process.returncode}: {err}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url + "/", timeout=1).status_code == 200:
                return Server(url, token, store, process, log)
        time.sleep(0.05)
    process.kill()
    pytest.fail("doikit serve did not answer within 30 s")


def stop_server(server: Server) -> None:
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
    server.log.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`doikit serve --demo` on a fresh SQLite file, for a module's tests."""
    store = f"sqlite:///{tmp_path_factory.mktemp('serve') / 'doikit.sqlite3'}"
    running = start_server(store)
    try:
        yield running
    finally:
        stop_server(running)


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, follow_redirects=False, timeout=30) as http:
        yield http


def on_a_terminal(argv: list[str], stdin: bytes | None = None) -> tuple[int, bytes, bytes]:
    """Run *argv* with stderr on a pseudo-terminal: the exit status, stdout, and what the
    terminal showed."""
    import pty  # noqa: PLC0415 - POSIX only, and only these tests need it

    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            argv, input=stdin, stdout=subprocess.PIPE, stderr=follower, check=False
        )
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
    return done.returncode, done.stdout, shown
