"""Every input has bounded memory and time (issue 27): the attacks, run against the real
``doikit`` command under a memory limit (RLIMIT_AS, in the child before it starts) and a
timeout, and against doikit.pdf.

Each attack failed before: a 1 MB .gz or PDF that inflates to 1 GiB took 2.2 GB; a 32 KB
PDF of repeated ``10.`` ran for minutes in 2.5 GB; a PDF whose page tree loops ended in a
pypdfium2 traceback; 500 MB on stdin without a line break was held whole; a binary file
gave one line of stderr per line of input.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import resource
import select
import shutil
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from doikit import pdf

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS as Linux has it")

EXE = shutil.which("doikit", path=str(Path(sys.executable).parent))
GIB = 1 << 30
MIB = 1 << 20


def _baseline() -> int:
    """The address space of the doikit command once it has started (its imports done)."""
    code = "import doikit.cli, doikit.pdf; print(open('/proc/self/status').read())"
    status = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    peak = next(line for line in status.splitlines() if line.startswith("VmPeak:"))
    return int(peak.split()[1]) * 1024


BASELINE = _baseline() if sys.platform == "linux" else 0


def _limited(above: int) -> Callable[[], None]:
    limit = BASELINE + above

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return limit_memory


class Run:
    """One run of the command: its status, stdout, stderr (as text) and seconds taken."""

    def __init__(self, done: subprocess.CompletedProcess[bytes], seconds: float) -> None:
        self.status = done.returncode
        self.out = done.stdout.decode("utf-8", "replace")
        self.err = done.stderr.decode("utf-8", "replace")
        self.seconds = seconds


def run(
    *args: str,
    stdin: bytes | Path | Iterator[bytes] = b"",
    memory: int = GIB,
    timeout: float = 60,
) -> Run:
    """The command under *memory* bytes of address space above its baseline; *stdin* is
    bytes, a file, or chunks written from a thread (so the test holds none of it)."""
    assert EXE, "the doikit entry point is not installed next to this Python"
    started = time.monotonic()
    feed: Iterator[bytes] | None = None
    if isinstance(stdin, Path):
        with stdin.open("rb") as file:
            done = subprocess.run(
                [EXE, *args],
                stdin=file,
                capture_output=True,
                timeout=timeout,
                preexec_fn=_limited(memory),
                check=False,
            )
        return Run(done, time.monotonic() - started)
    if not isinstance(stdin, bytes):
        feed, stdin = stdin, b""
    with subprocess.Popen(
        [EXE, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_limited(memory),  # noqa: PLW1509 - the writer thread starts after
    ) as process:
        if feed is None:
            out, err = process.communicate(stdin, timeout=timeout)
        else:
            writer = threading.Thread(target=_write_all, args=(process, feed), daemon=True)
            writer.start()
            out, err = _read_both(process, timeout)
            writer.join(timeout)
        status = process.wait(timeout)
    done = subprocess.CompletedProcess(process.args, status, out, err)
    return Run(done, time.monotonic() - started)


def _write_all(process: subprocess.Popen[bytes], chunks: Iterator[bytes]) -> None:
    assert process.stdin is not None
    try:
        for chunk in chunks:
            process.stdin.write(chunk)
        process.stdin.close()
    except BrokenPipeError:
        pass


def _read_both(process: subprocess.Popen[bytes], timeout: float) -> tuple[bytes, bytes]:
    assert process.stdout is not None
    assert process.stderr is not None
    streams = {process.stdout.fileno(): b"", process.stderr.fileno(): b""}
    deadline = time.monotonic() + timeout
    while streams:
        ready, _, _ = select.select(list(streams), [], [], max(0, deadline - time.monotonic()))
        if not ready:
            process.kill()
            pytest.fail(f"no end within {timeout} s")
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if chunk:
                streams[fd] += chunk
            else:
                kept = streams.pop(fd)
                if fd == process.stdout.fileno():
                    out = kept
                else:
                    err = kept
    return out, err


def one_line(err: str) -> str:
    """The only line of stderr (a problem is one line, never a traceback)."""
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


# --- inputs that inflate ---------------------------------------------------------------------


def _zeros_deflated(size: int) -> bytes:
    """A zlib stream (a PDF's FlateDecode) of *size* zero bytes: about size / 1,030."""
    compressor = zlib.compressobj(9)
    block = bytes(16 * MIB)
    parts = [compressor.compress(block) for _ in range(size // len(block))]
    return b"".join([*parts, compressor.flush()])


def raw_pdf(objects: list[bytes], *, info: int | None = None) -> bytes:
    """A PDF of these objects (numbered from 1; the first is the catalog), with its xref
    (test_pdf builds on these too); *info* is the number of the Info dictionary."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    info_entry = b"" if info is None else b" /Info %d 0 R" % info
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        info_entry,
        xref,
    )
    return bytes(out)


def stream_object(data: bytes, *, flate: bool = True) -> bytes:
    compressed = b" /Filter /FlateDecode" if flate else b""
    return b"<< /Length %d%s >>\nstream\n%s\nendstream" % (len(data), compressed, data)


FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def pdf_of_pages(contents: list[bytes], *, kids: bytes | None = None) -> bytes:
    """A PDF with one page per content stream (already encoded, FlateDecode), in Helvetica;
    *kids* replaces the page tree's /Kids (a loop), its /Count the references in it."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"", FONT]
    refs = []
    for content in contents:
        objects.append(stream_object(content))
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % len(objects)
        )
        refs.append(b"%d 0 R" % len(objects))
    listed = kids if kids is not None else b" ".join(refs)
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (listed, listed.count(b" R"))
    return raw_pdf(objects)


def text_content(line: bytes) -> bytes:
    """A content stream that shows one line of text, FlateDecode."""
    return zlib.compress(b"BT /F1 12 Tf 72 700 Td (%s) Tj ET" % line)


@pytest.fixture(scope="module")
def bomb() -> bytes:
    """1 GiB of zeros as a FlateDecode stream (about 1 MB)."""
    return _zeros_deflated(GIB)


def test_a_gz_that_inflates_to_1_gib_stops_at_its_limit(tmp_path: Path) -> None:
    """1 MB of gzip that inflates to 1 GiB (of zeros, one line) took 2.2 GB."""
    member = gzip.compress(bytes(16 * MIB), compresslevel=9)
    path = tmp_path / "bomb.gz"
    path.write_bytes(gzip.compress(b"doi:10.1000/before\n") + member * 64)
    assert path.stat().st_size < 2 * MIB
    done = run("extract", str(path), memory=GIB // 2)
    assert done.status == 1
    assert done.out == "10.1000/before\n"  # what was read before the limit is written
    message = one_line(done.err)
    assert message.startswith(f"doikit: {path}: inflates to more than 100 times its size")
    assert message.endswith("--gzip-ratio raises it")
    assert done.seconds < 30
    # raised, the limit lets it read on, in bounded memory
    done = run("extract", "--gzip-ratio", "0", str(path), memory=GIB // 2, timeout=120)
    assert (done.status, done.out, done.err) == (0, "10.1000/before\n", "")


def test_a_pdf_that_inflates_to_1_gib_stops_at_its_limit(tmp_path: Path, bomb: bytes) -> None:
    """A 1 MB PDF whose second page's content inflates to 1 GiB of zeros took 2.2 GB."""
    path = tmp_path / "bomb.pdf"
    path.write_bytes(pdf_of_pages([text_content(b"doi:10.1000/page-one"), bomb]))
    assert path.stat().st_size < 2 * MIB
    done = run("extract", str(path))
    assert done.status == 1
    assert done.out == "10.1000/page-one\n"
    assert one_line(done.err) == (
        f"doikit: {path}: page 2: reading the PDF needs more than 1,024 MiB of memory "
        "(the memory limit); --pdf-memory raises it"
    )
    assert done.seconds < 30
    # from stdin alike, and with a smaller limit
    done = run("extract", "--pdf-memory", "256", stdin=path)
    assert done.status == 1
    assert done.out == "10.1000/page-one\n"
    assert "page 2: reading the PDF needs more than 256 MiB of memory" in one_line(done.err)


def test_a_small_pdf_of_repeated_10_is_bounded(tmp_path: Path) -> None:
    """32 KB of PDF that shows 30 million characters of '10.10.10.…' ran for minutes in 2.5
    GB (PDFium alone: 30 s and 6 GB): it stops at the memory limit, in seconds."""
    run_of_tens = b"(" + b"10." * 10_000 + b") Tj\n"
    content = zlib.compress(b"BT /F1 1 Tf 0 0 Td\n" + run_of_tens * 1000 + b"ET", 9)
    path = tmp_path / "tens.pdf"
    path.write_bytes(pdf_of_pages([text_content(b"doi:10.1000/first"), content]))
    assert path.stat().st_size < 40_000
    done = run("extract", str(path))
    assert done.status == 1
    assert done.out == "10.1000/first\n"
    assert "page 2: reading the PDF needs more than 1,024 MiB" in one_line(done.err)
    assert done.seconds < 30


def test_a_pdf_that_takes_too_long_stops_at_its_time_limit(tmp_path: Path) -> None:
    """Many pages of '10.' take PDFium seconds each: the time limit ends the reading."""
    run_of_tens = zlib.compress(b"BT /F1 1 Tf 0 0 Td (" + b"10." * 8000 + b") Tj ET")
    path = tmp_path / "slow.pdf"
    path.write_bytes(pdf_of_pages([text_content(b"doi:10.1000/first"), *[run_of_tens] * 400]))
    done = run("extract", "--pdf-timeout", "0.5", str(path))
    assert done.status == 1
    assert done.out == "10.1000/first\n"
    message = one_line(done.err)
    assert "reading the PDF takes more than 0.5 s (the time limit); --pdf-timeout raises it" in (
        message
    )
    assert done.seconds < 10
    with pytest.raises(pdf.PDFLimitError) as raised:
        list(pdf.find_all(path, timeout=0.5))
    assert (raised.value.limit, raised.value.value) == ("time", 0.5)


def test_the_time_limit_does_not_count_the_callers_time(tmp_path: Path) -> None:
    path = tmp_path / "two.pdf"
    path.write_bytes(
        pdf_of_pages([text_content(b"doi:10.1000/one"), text_content(b"doi:10.1000/two")])
    )
    found: list[str] = []
    for one in pdf.find_all(path, timeout=1):
        time.sleep(1.2)  # the caller's work with each DOI
        found.append(str(one.doi))
    assert found == ["10.1000/one", "10.1000/two"]


def test_a_looping_page_tree_is_an_error_after_the_pages_read(tmp_path: Path) -> None:
    """A page tree whose /Kids holds itself ended in a pypdfium2 traceback."""
    path = tmp_path / "loop.pdf"
    path.write_bytes(pdf_of_pages([text_content(b"doi:10.1000/readable")], kids=b"5 0 R 2 0 R"))
    done = run("extract", str(path))
    assert done.status == 1
    assert done.out == "10.1000/readable\n"
    assert one_line(done.err) == (
        f"doikit: {path}: page 2 cannot be read (PDFium: Failed to load page); "
        "its page tree may loop or be broken"
    )
    found: list[str] = []
    with pytest.raises(pdf.PDFError, match="page 2 cannot be read"):
        found.extend(str(one.doi) for one in pdf.find_all(path))
    assert found == ["10.1000/readable"]
    # a tree of nothing but itself that claims 5,000 pages: after 16 that fail, no more
    path.write_bytes(
        raw_pdf(
            [
                b"<< /Type /Catalog /Pages 2 0 R >>",
                b"<< /Type /Pages /Kids [2 0 R] /Count 5000 >>",
            ]
        )
    )
    done = run("extract", str(path), timeout=20)
    assert done.status == 1
    assert "pages 1-16 cannot be read" in one_line(done.err)


def test_pdf_limits_in_this_process_or_none(tmp_path: Path) -> None:
    """memory=None, timeout=None reads in this process (trusted files); a limit that is not
    a positive number is refused."""
    path = tmp_path / "one.pdf"
    path.write_bytes(pdf_of_pages([text_content(b"doi:10.1000/here")]))
    assert [str(one.doi) for one in pdf.find_all(path, memory=None, timeout=None)] == [
        "10.1000/here"
    ]
    with path.open("rb") as file:
        assert pdf.page_texts(file) == ["doi:10.1000/here"]
    with pytest.raises(ValueError, match="memory must be a positive number of bytes, not 0"):
        pdf.page_texts(path, memory=0)


# --- lines of text ---------------------------------------------------------------------------


def _long_line(size: int, head: bytes = b"", tail: bytes = b"") -> Iterator[bytes]:
    yield head
    chunk = b"a" * MIB
    for _ in range(size // MIB):
        yield chunk
    yield tail


def test_500_mb_on_stdin_without_a_line_break_is_not_held() -> None:
    """check held the whole line (1 GB): it now reads past it in constant memory, says so
    in one line, and checks the lines after it."""
    done = run(
        "check",
        stdin=_long_line(500 * MIB, tail=b"\n10.1000/182\nnot a doi\n"),
        memory=128 * MIB,
    )
    assert done.status == 1
    problems = done.err.splitlines()
    assert problems[0] == (
        "doikit: line 1: 524,288,001 bytes, longer than 65,536, the limit for one line: not read"
    )
    assert problems[1].startswith("doikit: line 3: not-a-doi")
    assert len(problems) == 2
    assert done.seconds < 30


def test_500_mb_line_to_extract_is_read_in_bounded_memory() -> None:
    done = run(
        "extract",
        "--json",
        stdin=_long_line(500 * MIB, head=b"see doi:10.1000/head ", tail=b" 10.1000/tail\nx\n"),
        memory=128 * MIB,
    )
    assert (done.status, done.err) == (0, "")
    records = [json.loads(line) for line in done.out.splitlines()]
    assert [(r["doi"], r["line"], r["column"]) for r in records] == [
        ("10.1000/head", 1, 9),
        ("10.1000/tail", 1, 500 * MIB + 23),
    ]
    assert done.seconds < 30


def test_a_binary_file_is_said_once_with_a_count(tmp_path: Path) -> None:
    """5 MB of binary data gave one line of stderr per line of input (19,333)."""
    data = random.Random(27).randbytes(5 * MIB)
    lines = data.count(b"\n") + 1
    path = tmp_path / "data.bin"
    path.write_bytes(data)
    checked = run("check", stdin=path)
    assert checked.status == 1
    first_nul = data.split(b"\n")[0].index(0) + 1
    assert one_line(checked.err) == (
        f"doikit: line 1: binary data, not lines of text (a NUL byte at byte {first_nul}); "
        f"it and the {lines - 1:,} lines after it were not read"
    )
    extracted = run("extract", str(path))
    assert extracted.status == 1
    first, count = extracted.err.splitlines()
    assert first.startswith(f"doikit: {path}, line 1: byte ")
    assert count.startswith(f"doikit: {path}: ")
    assert count.endswith(" more lines are not UTF-8 (reported once; the rest of each was read)")
    # without NUL bytes (text in another encoding): the first line, then the count
    latin1 = "10.1000/caf\xe9\n".encode("latin-1") * 1000
    done = run("check", stdin=latin1)
    assert done.err.splitlines() == [
        "doikit: line 1: byte 12 is not UTF-8",
        "doikit: 999 more lines are not UTF-8 (reported once)",
    ]
    records = [json.loads(line) for line in run("check", "--json", stdin=latin1).out.splitlines()]
    assert len(records) == 1000  # --json still has a record for each
    assert {r["code"] for r in records} == {"utf8"}


def test_an_endless_binary_stream_is_said_once() -> None:
    """Zeros without a line break (cat /dev/zero): one line, after reading no more than a
    bounded part of them, in bounded memory."""
    zeros = bytes(MIB)
    done = run("check", stdin=iter([zeros] * 400), memory=128 * MIB)
    assert done.status == 1
    assert one_line(done.err) == (
        "doikit: line 1: binary data, not lines of text (a NUL byte at byte 1); "
        "it and the rest (more than 256 MiB) were not read"
    )


def test_check_of_a_file_name_says_how_to_read_the_file(tmp_path: Path) -> None:
    path = tmp_path / "my refs.txt"
    path.write_text("10.1000/182\n", encoding="utf-8")
    done = run("check", str(path))
    assert done.status == 1
    assert one_line(done.err).endswith(
        f"; {path} is a file: to read names from it, run: doikit check < '{path}'"
    )
    done = run("check", "no-such-file.txt")
    assert "is a file" not in one_line(done.err)


@pytest.mark.parametrize(
    ("command", "what", "instead"),
    [
        ("check", "one name per line", "names as arguments"),
        ("extract", "text to search for DOIs", "files as arguments"),
    ],
)
def test_reading_a_terminal_says_so(command: str, what: str, instead: str) -> None:
    """check and extract waited silently on a terminal with no input."""
    import pty  # noqa: PLC0415 - POSIX only

    assert EXE
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [EXE, command], stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as process:
        os.close(follower)
        try:
            assert process.stderr is not None
            ready, _, _ = select.select([process.stderr], [], [], 20)
            assert ready, "nothing said within 20 s"
            said = process.stderr.readline().decode()
            assert said == (
                f"doikit: reading {what} from the terminal; end with Ctrl-D, "
                f"or give {instead} (see 'doikit {command} --help')\n"
            )
            os.write(leader, b"\x04")  # Ctrl-D: the end of the input
            assert process.wait(20) == 0
        finally:
            if process.poll() is None:
                process.kill()
            os.close(leader)


def test_a_deposit_line_longer_than_a_request_is_read_past_not_held(tmp_path: Path) -> None:
    """`doikit deposit` read each line whole: one of 200 MB took its size in memory. Now a
    line over 16 MiB is refused with its number, and read past."""
    path = tmp_path / "records.jsonl"
    with path.open("wb") as out:
        out.write(b"\n")
        out.write(b'{"doi":"10.5555/b","url":"https://e.org/' + b"x" * (200 * MIB) + b'"}\n')
    done = run(
        "deposit", str(path), "--server", "http://127.0.0.1:9", "--token", "t", memory=160 * MIB
    )
    assert "MemoryError" not in done.err, done.err[-2000:]
    assert "line 2" in done.err, done.err[-2000:]
    assert "longer than" in done.err
