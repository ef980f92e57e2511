"""`doikit deposit` through the installed entry point, against a real `doikit serve`."""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING

import httpx

from conftest import DOIKIT, free_port, on_a_terminal

if TYPE_CHECKING:
    from pathlib import Path

    from conftest import Server


def deposit(
    path: Path, server: Server, *extra: str, token: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            DOIKIT,
            "deposit",
            str(path),
            "--server",
            server.url,
            "--token",
            token or server.token,
            *extra,
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def test_jsonl_with_rejected_lines(tmp_path: Path, server: Server) -> None:
    lines = [
        json.dumps({"doi": "10.5555/dep-1", "url": "https://example.org/1"}),
        json.dumps(
            {"doi": "10.5555/dep%202", "url": "https://example.org/2"}
        ),  # seed 003: %20 is a space
        "{not json",
        json.dumps({"doi": "10.5555/dep-100%", "url": "https://example.org/3"}),  # a lone %
        "",
        json.dumps(
            {"doi": "10.6666/other", "url": "https://example.org/4"}
        ),  # token's prefix is 10.5555
        json.dumps({"doi": "10.5555/dep-js", "url": "javascript:alert(1)"}),
        json.dumps(
            {"doi": "10.5555/dep-v", "values": [{"index": 1, "type": "EMAIL", "data": "a@b"}]}
        ),
    ]
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = deposit(path, server)
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("doikit: line")]
    assert [e.split(":")[1].strip() for e in errors] == ["line 3", "line 4", "line 6", "line 7"]
    assert "%" in errors[1]
    assert "10.6666" in errors[2]
    assert "deposited 3, rejected 4" in done.stderr
    for name in ("10.5555/dep-1", "10.5555/dep 2", "10.5555/dep-v"):
        assert httpx.get(f"{server.url}/api/handles/{name.replace(' ', '%20')}").status_code == 200
    assert httpx.get(f"{server.url}/api/handles/10.5555/dep-js").status_code == 404


def test_csv_all_good_exits_0(tmp_path: Path, server: Server) -> None:
    path = tmp_path / "records.csv"
    rows = "".join(f"10.5555/csv-{i},https://example.org/csv/{i}\n" for i in range(2500))
    path.write_text("doi,url\n" + rows, encoding="utf-8")
    done = deposit(path, server)
    assert done.returncode == 0, done.stderr
    assert "deposited 2500, rejected 0" in done.stderr
    assert (
        httpx.get(f"{server.url}/10.5555/CSV-2499").headers["location"]
        == "https://example.org/csv/2499"
    )


def test_sniffs_the_format_and_reports_bad_utf8(tmp_path: Path, server: Server) -> None:
    path = tmp_path / "records.txt"
    path.write_bytes(b"10.5555/sniff,https://example.org/s\n10.5555/\xff,https://example.org/x\n")
    done = deposit(path, server)
    assert done.returncode == 1
    assert "doikit: line 2: byte 9 is not UTF-8" in done.stderr
    assert httpx.get(f"{server.url}/api/handles/10.5555/sniff").status_code == 200


def test_bad_token_and_no_server_exit_2(tmp_path: Path, server: Server) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(
        json.dumps({"doi": "10.5555/t", "url": "https://a.example/"}) + "\n", encoding="utf-8"
    )
    refused = deposit(path, server, token="wrong")  # noqa: S106 - a wrong token on purpose
    assert refused.returncode == 2
    assert refused.stderr.startswith("doikit: the server refused the deposit (401)")
    server_gone = subprocess.run(
        [
            DOIKIT,
            "deposit",
            str(path),
            "--server",
            f"http://127.0.0.1:{free_port()}",
            "--token",
            "x",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert server_gone.returncode == 2
    assert server_gone.stderr.startswith("doikit: cannot reach the server")
    assert "Traceback" not in refused.stderr + server_gone.stderr


def test_token_create_prints_only_the_token(server: Server) -> None:
    done = subprocess.run(
        [DOIKIT, "token", "create", "--store", server.store, "--prefix", "10.7777"],
        capture_output=True,
        text=True,
        check=True,
    )
    token = done.stdout.strip()
    assert done.stdout == token + "\n"
    assert token.startswith("doikit_")
    bad = subprocess.run(
        [DOIKIT, "token", "create", "--store", server.store, "--prefix", "10.x"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2
    assert "not a DOI prefix" in bad.stderr


def test_progress_bar_on_a_terminal(tmp_path: Path, server: Server) -> None:
    path = tmp_path / "bar.csv"
    path.write_text(
        "".join(f"10.5555/bar-{i},https://example.org/{i}\n" for i in range(50)), encoding="utf-8"
    )
    status, _, shown = on_a_terminal(
        [DOIKIT, "deposit", str(path), "--server", server.url, "--token", server.token]
    )
    assert status == 0
    assert b"depositing" in shown
    assert b"100%" in shown
    assert b"deposited 50, rejected 0" in shown


def test_excel_csv_with_bom_header_in_capitals_and_semicolons(
    tmp_path: Path, server: Server
) -> None:
    """What Excel saves as "CSV UTF-8" in a locale whose decimal mark is ',': a BOM, a
    'DOI;URL' header, ';' between fields, CRLF. Every record goes in (the header was
    refused as a bad DOI, and a BOM broke line 1)."""
    path = tmp_path / "export.csv"
    rows = "".join(f"10.5555/xl-{i};https://example.org/xl/{i}\r\n" for i in range(3))
    path.write_bytes(b"\xef\xbb\xbf" + ("DOI;URL\r\n" + rows).encode())
    done = deposit(path, server)
    assert (done.returncode, done.stderr) == (0, "deposited 3, rejected 0\n")
    assert httpx.get(f"{server.url}/10.5555/xl-2").headers["location"] == "https://example.org/xl/2"


def test_a_bom_does_not_break_the_first_json_line(tmp_path: Path, server: Server) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"doi": "10.5555/bom", "url": "https://example.org/bom"}\n')
    done = deposit(path, server)
    assert (done.returncode, done.stderr) == (0, "deposited 1, rejected 0\n")
