"""`doikit serve` as a new user meets it: one line when ready, an access log on request, and a
bad store is one line and exit 2, never a traceback."""

from __future__ import annotations

import subprocess
import time
from typing import TYPE_CHECKING

import httpx
import pytest

from conftest import DOIKIT, free_port

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    ("store", "says"),
    [
        ("mysql://localhost/x", "unknown store"),
        ("sqlite:////nonexistent-doikit/dir/x.sqlite3", "does not exist"),
        ("postgresql://doikit@127.0.0.1:1/x", "cannot connect"),
    ],
)
def test_a_bad_store_is_one_line_and_exit_2(store: str, says: str) -> None:
    for argv in (
        ["serve", "--store", store, "--port", str(free_port())],
        ["token", "create", "--store", store, "--prefix", "10.5555"],
        ["admin", "create", "--store", store, "--prefix", "10.5555", "300:10.5555/ADMIN"],
    ):
        done = subprocess.run(
            [DOIKIT, *argv], capture_output=True, text=True, check=False, timeout=60
        )
        assert done.returncode == 2, (argv, done.stderr)
        assert done.stderr.count("\n") == 1, done.stderr
        assert says in done.stderr
        assert "Traceback" not in done.stderr


def test_a_missing_postgresql_database_is_one_line(pg_url: str) -> None:
    store = pg_url.rsplit("/", 1)[0] + "/no_such_database"
    done = subprocess.run(
        [DOIKIT, "serve", "--store", store, "--port", str(free_port())],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "no_such_database" in done.stderr


def test_ready_line_and_access_log(tmp_path: Path) -> None:
    port = free_port()
    store = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    process = subprocess.Popen(
        [DOIKIT, "serve", "--store", store, "--port", str(port), "--demo", "--access-log"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready = process.stdout.readline().strip()
        assert ready == f"doikit serve: listening on http://127.0.0.1:{port}, store {store}"
        deadline = time.monotonic() + 10
        while True:
            try:
                assert httpx.get(f"http://127.0.0.1:{port}/10.1000/182").status_code == 302
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        line = process.stdout.readline()
        assert " GET '/10.1000/182' 302 " in line
        assert line.startswith("127.0.0.1 ")
    finally:
        process.terminate()
        process.wait(10)
        assert process.stderr is not None
        errors = process.stderr.read()
        process.stdout.close()  # type: ignore[union-attr]
        process.stderr.close()
    assert "Traceback" not in errors


@pytest.mark.parametrize("identity", ["0:10.5555/ADMIN", "2147483648:10.5555/ADMIN", "ADMIN"])
def test_admin_create_refuses_a_bad_identity(tmp_path: Path, identity: str) -> None:
    store = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    done = subprocess.run(
        [DOIKIT, "admin", "create", "--store", store, "--prefix", "10.5555", identity],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2
    assert "INDEX:HANDLE" in done.stderr
    assert "Traceback" not in done.stderr
