"""`doikit resolve`, `doikit which-ra` and `doikit cite` through the installed entry point,
against a real `doikit serve` (never doi.org)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from typing import TYPE_CHECKING

import httpx

from conftest import DOIKIT, free_port, on_a_terminal

if TYPE_CHECKING:
    from pathlib import Path

    from conftest import Server

HANDBOOK = "https://www.doi.org/the-identifier/resources/handbook"


def run(server: Server, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DOIKIT_RESOLVER": server.url}
    return subprocess.run(
        [DOIKIT, *args], input=stdin, capture_output=True, text=True, check=False, env=env
    )


def test_resolve_arguments(server: Server) -> None:
    done = run(server, "resolve", "10.1000/182", "doi:10.1000/alias", "https://doi.org/10.1000/1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [HANDBOOK, HANDBOOK, "https://www.doi.org/index.html"]
    assert done.stderr == ""


def test_resolve_stdin_in_order_with_failures(server: Server) -> None:
    names = ["10.1000/182", "10.1000/nope", "", "not a doi", "10.1000/multiple", "10.1000/1"]
    done = run(server, "resolve", "--concurrency", "3", stdin="\n".join(names) + "\n")
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        HANDBOOK,
        "https://example.org/multiple/a",
        "https://www.doi.org/index.html",
    ]
    errors = done.stderr.splitlines()
    assert len(errors) == 2
    assert errors[0].startswith("doikit: line 2: 10.1000/nope: DOINotFound: ")
    assert errors[1].startswith("doikit: line 4: not a doi: not-a-doi: ")
    assert "Traceback" not in done.stderr


def test_resolve_json_and_type(server: Server) -> None:
    done = run(server, "resolve", "--json", "10.1000/182", "10.1000/nope")
    assert done.returncode == 1
    first, second = (json.loads(line) for line in done.stdout.splitlines())
    assert first["line"] == 1
    assert first["url"] == HANDBOOK
    assert [v["type"] for v in first["values"]] == ["URL", "HS_ADMIN"]
    assert second["error"] == "DOINotFound"
    done = run(server, "resolve", "--type", "EMAIL", "10.1000/email-only")
    assert done.returncode == 0, done.stderr
    assert "@" in done.stdout


def test_resolve_cache_file_survives(server: Server, tmp_path: Path) -> None:
    cache = tmp_path / "answers.sqlite3"
    assert run(server, "resolve", "--cache", str(cache), "10.1000/182").returncode == 0
    offline = subprocess.run(
        [
            DOIKIT,
            "resolve",
            "--cache",
            str(cache),
            "--resolver",
            f"http://127.0.0.1:{free_port()}",
            "10.1000/182",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert offline.returncode == 0, offline.stderr
    assert offline.stdout.strip() == HANDBOOK


def test_resolve_unreachable_resolver_is_one_line_each() -> None:
    done = subprocess.run(
        [
            DOIKIT,
            "resolve",
            "--resolver",
            f"http://127.0.0.1:{free_port()}",
            "--timeout",
            "1",
            "10.1000/182",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert "TransportError" in done.stderr
    assert "Traceback" not in done.stderr


def test_resolve_progress_on_a_terminal(server: Server) -> None:
    status, out, shown = on_a_terminal(
        [DOIKIT, "resolve", "--resolver", server.url, "-"], stdin=b"10.1000/182\n" * 50
    )
    assert status == 0
    assert len(out.splitlines()) == 50
    assert b"resolved 50 (0 failed)" in shown


def test_which_ra(server: Server) -> None:
    done = run(server, "which-ra", "10.1000/182", "10.1000", "10.1000/nope")
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "10.1000/182\tdoikit",
        "10.1000\tdoikit",
        "10.1000/nope\tDOI does not exist",
    ]
    done = run(server, "which-ra", "--json", stdin="10.1000/182\n")
    assert done.returncode == 0
    assert json.loads(done.stdout) == {"DOI": "10.1000/182", "RA": "doikit"}


def test_cite(server: Server) -> None:
    # No metadata service behind the demo records' conneg location on the loopback: the
    # demo's conneg target is example.org, which the suite must not reach. So this checks
    # the error path: a name the resolver does not know, and a bad format.
    done = run(server, "cite", "10.1000/nope")
    assert done.returncode == 1
    assert done.stderr.startswith("doikit: 10.1000/nope: ")
    assert "DOI name is not known" in done.stderr
    done = run(server, "cite", "10.1000/182", "--format", "yaml")
    assert done.returncode == 2
    assert "Invalid value for '--format'" in done.stderr


def test_cite_through_content_negotiation(server: Server) -> None:
    import http.server  # noqa: PLC0415
    import threading  # noqa: PLC0415

    class Meta(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"@misc{x, doi = {10.5555/cite}}"
            self.send_response(200)
            self.send_header("Content-Type", "application/x-bibtex")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Meta)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        meta = f"http://127.0.0.1:{httpd.server_address[1]}"
        template = f'href_template="{meta}/{{hdl}}"'
        loc = f'<locations><location http_role="conneg" {template}/></locations>'
        put = httpx.put(
            server.url + "/api/handles/10.5555/cite",
            json={"values": [{"index": 1, "type": "10320/loc", "data": loc}]},
            headers={"Authorization": f"Bearer {server.token}"},
        )
        assert put.status_code in {200, 201}, put.text
        done = run(server, "cite", "doi:10.5555/cite")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "@misc{x, doi = {10.5555/cite}}\n"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_resolve_reads_lines_as_check_does_and_types_ignore_case(server: Server) -> None:
    """A line that is not UTF-8 is refused as `check` refuses it (it resolved a name holding
    U+FFFD before); `--type url` finds what `--type URL` finds (an empty line before)."""
    done = subprocess.run(
        [DOIKIT, "resolve", "--resolver", server.url],
        input=b"\xef\xbb\xbf10.1000/182\n10.1000/18\xff2\n",
        capture_output=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout.decode() == HANDBOOK + "\n"
    assert done.stderr.decode() == "doikit: line 2: byte 11 is not UTF-8\n"
    for wanted in ("url", "URL", "Url"):
        typed = run(server, "resolve", "--type", wanted, "10.1000/182")
        assert (typed.returncode, typed.stdout) == (0, HANDBOOK + "\n"), wanted


def test_resolve_names_the_resolver_it_waits_for() -> None:
    """A resolver that accepts connections and never answers: within seconds, one line says
    which resolver doikit is waiting for (44 seconds of silence before)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        with subprocess.Popen(
            [DOIKIT, "resolve", "--resolver", url, "--timeout", "30", "10.1000/182"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        ) as process:
            assert process.stderr is not None
            line = process.stderr.readline().decode()
            process.kill()
    assert line.startswith(f"doikit: waiting for {url} (no answer for ")
