"""The ``doikit`` command, run through its installed entry point."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import on_a_terminal
from doikit._doi import PURE_PYTHON_WANTED

EXE = shutil.which("doikit", path=str(Path(sys.executable).parent))


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    assert EXE, "the doikit entry point is not installed next to this Python"
    done = subprocess.run([EXE, *args], input=stdin, capture_output=True, check=False, timeout=60)
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def test_check_arguments_all_valid() -> None:
    done = run("check", "10.1000/182", "https://doi.org/10.1000%2F183")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_check_stdin_reports_line_code_and_position() -> None:
    lines = b"10.1000/182\n\n10.10O0/1\nurn:doi:10.123:456\n\xff\xfe\n"
    done = run("check", stdin=lines)
    assert done.returncode == 1
    problems = done.stderr.splitlines()
    assert problems[0].startswith("doikit: line 3: registrant at position 5: ")
    assert problems[1] == "doikit: line 5: byte 1 is not UTF-8"
    assert len(problems) == 2
    assert "Traceback" not in done.stderr


def test_check_json_lines() -> None:
    done = run("check", "--json", stdin=b"doi:10.1000/ABC\n10/abc\n")
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert records[0] == {
        "line": 1,
        "input": "doi:10.1000/ABC",
        "valid": True,
        "doi": "10.1000/ABC",
    }
    assert records[1]["valid"] is False
    assert (records[1]["code"], records[1]["position"], records[1]["line"]) == ("short-doi", 0, 2)
    assert done.returncode == 1


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        ("bare", "10.1000/a#b"),
        ("url", "https://doi.org/10.1000/a%23b"),
        ("uri", "doi:10.1000/a%23b"),
        ("urn", "urn:doi:10.1000:a%23b"),
        ("key", "10.1000/a#b"),
    ],
)
def test_convert(form: str, expected: str) -> None:
    done = run("convert", "--to", form, "https://doi.org/10.1000/a%23b")
    assert (done.returncode, done.stdout) == (0, expected + "\n")


def test_convert_url_options_and_errors_keep_going() -> None:
    done = run(
        "convert",
        "--to",
        "url",
        "--resolver",
        "http://localhost:8000",
        "--encoding",
        "mandatory",
        stdin=b"10.1000/a+b\nnope\n10.1000/c d\n",
    )
    assert done.stdout == "http://localhost:8000/10.1000/a+b\nhttp://localhost:8000/10.1000/c%20d\n"
    assert done.returncode == 1
    assert done.stderr.startswith("doikit: line 2: not-a-doi at position 0: ")


def test_convert_json() -> None:
    done = run("convert", "--to", "uri", "--json", "10.1000/é")
    assert json.loads(done.stdout) == {
        "line": 1,
        "input": "10.1000/é",
        "valid": True,
        "doi": "10.1000/é",
        "uri": "doi:10.1000/%C3%A9",
    }


def test_compare() -> None:
    assert run("compare", "doi:10.1000/ABC", "https://doi.org/10.1000/abc").returncode == 0
    different = run("compare", "10.1000/É", "10.1000/é")
    assert (different.returncode, different.stdout) == (1, "different\n")
    invalid = run("compare", "10.1000/x", "nope")
    assert invalid.returncode == 2
    # One line, as every problem: which argument, what, where.
    assert invalid.stderr.startswith(
        "doikit: Invalid value for 'SECOND': not-a-doi at position 0: "
    )
    assert invalid.stderr.count("\n") == 1
    as_json = json.loads(run("compare", "--json", "10.1/A", "10.1/a").stdout)
    assert as_json == {
        "equivalent": True,
        "first": "10.1/A",
        "second": "10.1/a",
        "key": ["10.1/a", "10.1/a"],
    }


def test_inspect_text_and_json() -> None:
    done = run("inspect", "10.1000/p\u0430y")
    assert done.returncode == 0
    assert "prefix:     10.1000\n" in done.stdout
    assert "url:        https://doi.org/10.1000/p%D0%B0y\n" in done.stdout
    assert "warning:    confusable at 9: " in done.stdout
    record = json.loads(run("inspect", "--json", "10.1000/182").stdout)
    assert record["urn"] == "urn:doi:10.1000:182"
    assert record["warnings"] == []


def test_usage_error_is_exit_2_without_traceback() -> None:
    done = run("convert", "--to", "pdf", "10.1000/1")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr


def test_streams_a_large_input() -> None:
    # 200k lines through a pipe: output arrives line by line, in order, and nothing is lost.
    data = b"".join(b"10.1000/%d\n" % n for n in range(200_000))
    done = run("convert", "--to", "key", stdin=data)
    assert done.returncode == 0
    assert done.stdout.count("\n") == 200_000
    assert done.stdout.endswith("10.1000/199999\n")


def test_python_dash_m() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "doikit", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.startswith("doikit, version ")
    assert ("(pure Python)" if PURE_PYTHON_WANTED else "(C accelerator)") in done.stdout
    pure = subprocess.run(
        [sys.executable, "-m", "doikit", "--version"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "DOIKIT_PURE_PYTHON": "1"},
    )
    assert "(pure Python)" in pure.stdout


def test_extract_files_gzip_stdin_unique_and_json(tmp_path: Path) -> None:
    text = 'See doi:10.1000/182. <a href="https://doi.org/10.1000/ABC">x</a>\nagain 10.1000/abc\n'
    plain = tmp_path / "refs.txt"
    plain.write_text(text, encoding="utf-8")
    packed = tmp_path / "refs.txt.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    assert run("extract", str(plain)).stdout == "10.1000/182\n10.1000/ABC\n10.1000/abc\n"
    assert run("extract", "--unique", str(packed)).stdout == "10.1000/182\n10.1000/ABC\n"
    assert run("extract", "--to", "url", stdin=text.encode()).stdout.splitlines()[0] == (
        "https://doi.org/10.1000/182"
    )
    records = [
        json.loads(line) for line in run("extract", "--json", str(plain)).stdout.splitlines()
    ]
    assert records[2] == {
        "file": str(plain),
        "line": 2,
        "column": 7,
        "span": [71, 82],
        "text": "10.1000/abc",
        "doi": "10.1000/abc",
        "bare": "10.1000/abc",
    }
    assert text[records[2]["span"][0] : records[2]["span"][1]] == "10.1000/abc"


def test_extract_short_writes_shortdois_in_order_only_when_asked() -> None:
    text = b"A 10.1000/182, then doi:10/AbC1 and\nhttps://doi.org/b8xx35; 10/abc1 again.\n"
    assert run("extract", stdin=text).stdout == "10.1000/182\n"
    assert run("extract", "--short", stdin=text).stdout == (
        "10.1000/182\n10/abc1\n10/b8xx35\n10/abc1\n"
    )
    assert run("extract", "--short", "--unique", "--to", "url", stdin=text).stdout == (
        "https://doi.org/10.1000/182\nhttps://doi.org/10/abc1\nhttps://doi.org/10/b8xx35\n"
    )
    records = [
        json.loads(line)
        for line in run("extract", "--short", "--json", stdin=text).stdout.splitlines()
    ]
    assert records[2] == {
        "file": "-",
        "line": 2,
        "column": 17,
        "span": [52, 58],
        "text": "b8xx35",
        "shortdoi": "10/b8xx35",
        "bare": "10/b8xx35",
    }


def test_extract_undecodable_bytes_end_a_doi_and_missing_file_is_usage_error() -> None:
    done = run("extract", stdin=b"x 10.1000/ab\xff\xfecd y\n")
    # Reported with its line and byte, as every command reports it; the line is still read.
    assert (done.returncode, done.stdout) == (1, "10.1000/ab\n")
    assert done.stderr == "doikit: line 1: byte 13 is not UTF-8\n"
    missing = run("extract", "/nonexistent/file.txt")
    assert missing.returncode == 2
    assert "Traceback" not in missing.stderr


def test_extract_rejoins_a_doi_broken_across_lines() -> None:
    done = run(
        "extract", "--json", stdin=b"Springer 10.1007/978-3-642-\n21311-3_5 here\nand 10.1000/x\n"
    )
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["doi"], r["line"], r["column"]) for r in records] == [
        ("10.1007/978-3-642-21311-3_5", 1, 10),
        ("10.1000/x", 3, 5),
    ]
    assert records[0]["text"] == "10.1007/978-3-642-\n21311-3_5"


def test_extract_progress_bar_on_a_terminal_for_large_inputs(tmp_path: Path) -> None:
    large = tmp_path / "large.txt.gz"
    text = "".join(
        f"Ref {i}. doi:10.5555/p-{i}. Some prose to fill the line.\n" for i in range(60_000)
    )
    large.write_bytes(gzip.compress(text.encode(), compresslevel=0))  # about 3 MB on disk
    small = tmp_path / "small.txt"
    small.write_text("doi:10.1000/182\n", encoding="utf-8")
    status, out, shown = on_a_terminal([str(EXE), "extract", str(large), str(small)])
    assert status == 0
    assert len(out.splitlines()) == 60_001
    assert b"extracting" in shown
    assert b"100%" in shown
    status, out, shown = on_a_terminal([str(EXE), "extract", str(small)])
    assert (status, out, shown) == (0, b"10.1000/182\n", b"")  # small: no bar
    # A large file and a piped stdin together: the bar follows the file (a pipe cannot
    # tell its position: asking used to end the command with a traceback).
    status, out, shown = on_a_terminal(
        [str(EXE), "extract", str(large), "-"], stdin=b"doi:10.1000/183\n"
    )
    assert status == 0
    assert out.splitlines()[-1] == b"10.1000/183"
    assert len(out.splitlines()) == 60_001
    assert b"Traceback" not in shown


@pytest.mark.parametrize("command", ["check", "convert", "inspect"])
def test_every_name_command_reads_lines_alike(command: str) -> None:
    """One reader: a BOM before line 1 is dropped, CRLF ends a line, and a line that is not
    UTF-8 is refused with its number and byte, in every command the same way."""
    done = run(command, stdin=b"\xef\xbb\xbf10.1000/182\r\n10.1000/\xe9\r\n")
    assert done.returncode == 1
    assert done.stderr == "doikit: line 2: byte 9 is not UTF-8\n"
