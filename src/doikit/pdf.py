"""DOIs in PDF files: the text of every page, the links, and the document's metadata.

Reading a PDF needs the ``pdf`` extra (``pip install '.[pdf]'`` in doikit's clone), which brings
pypdfium2 (Google's PDFium, the PDF engine of Chromium): of the maintained libraries it
reads the text of real papers fastest and best (BENCHMARKS.md, "PDF libraries").

- **Text**: each page's text, read by PDFium. PDFium joins a line that ends in a hyphen to
  the next and marks the place; doikit puts back ``-`` and the line break, and the
  extractor's rule for line breaks decides (:func:`doikit.find_all`): a DOI's own hyphen at
  a break stays, a word of the suffix hyphenated at a break is joined without it. What the
  text alone leaves in doubt at a line break, the PDF decides: where a link of the page
  names the DOI, the link shows where it ends (a URL broken between digits, a SICI broken
  after its ``>``, the next reference's year after a DOI's final dot); where the font
  changes at the break, the DOI ends (a heading, a listing, a smaller number follows).
  Letters that TeX's math symbol font (CMSY, without a Unicode map) draws as symbols are
  read as the symbols (``h`` as ``⟨``, ``i`` as ``⟩``), and a DOI that runs into a
  metavariable (``10.1007/s00037-⟨year⟩``, a template in a class's manual) is no DOI.
- **Links**: the URI of every link annotation (``https://doi.org/10.…`` behind a reference).
- **Metadata**: the document information dictionary (Title, Subject, Keywords…, and the
  ``doi`` key some publishers add) and every XMP packet (``prism:doi``, ``dc:identifier``),
  read from the file's bytes (XMP packets are written to be found that way; a compressed
  metadata stream is inflated).

**Limits.** PDFium runs in a child process, so that no PDF can take more than *memory*
bytes of address space (default :data:`MEMORY`, 1 GiB) or more than *timeout* seconds
(default :data:`TIMEOUT`, 60 s) counted while doikit reads and scans (not while the caller
handles what it yields), and a PDFium crash is an error, not the end of the caller. A
limit reached raises :class:`PDFLimitError` after every DOI found before it was yielded.
With ``memory=None, timeout=None`` the PDF is read in this process, with no limit (for
trusted files; it saves starting a process, about 0.1 s). The memory limit is enforced
where the system has ``resource.RLIMIT_AS`` (Linux, the BSDs).

>>> from doikit.pdf import PDFFound
>>> PDFFound._fields
('doi', 'page', 'where', 'text')
"""

from __future__ import annotations

import bisect
import contextlib
import json
import math
import os
import re
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, Literal, NamedTuple, Self

from doikit._errors import needs_extra
from doikit._extract import Found
from doikit._extract import find_all as _find_all
from doikit._pdf_layers import read_page, xmp_packets

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from doikit._doi import DOI

__all__ = [
    "MEMORY",
    "TIMEOUT",
    "MissingExtraError",
    "PDFError",
    "PDFFound",
    "PDFLimitError",
    "find_all",
    "is_pdf",
    "page_texts",
]

INSTALL: Final = needs_extra("reading PDF files", "pdf")
#: The address space a PDF's reader may use, in bytes (1 GiB): a 1 MB PDF can inflate a
#: stream of zeros to 1 GiB, and 30 MB of text costs PDFium about 6 GB.
MEMORY: Final = 1 << 30
#: The seconds a PDF may take to read and scan (a 1,000-page book takes PDFium about 3 s).
TIMEOUT: Final = 60.0

_INFO_KEYS: Final = ("Title", "Subject", "Keywords", "Author", "Creator", "doi", "DOI")
_PIECE: Final = 1 << 16  # characters of page text per record from the reader
# After this many pages in a row that PDFium cannot load, the page tree is taken to be
# broken (a loop, or a /Count far above its pages) and the rest is not tried.
_BROKEN_PAGES: Final = 16
_xmp_packets = xmp_packets  # the name tests/test_pdf.py reads it by


class PDFFound(NamedTuple):
    """A DOI found in a PDF: the ``doi``; the ``page`` (from 1; ``None`` for metadata);
    ``where``: ``"text"``, ``"link"`` or ``"metadata"``; and the ``text`` as written."""

    doi: DOI
    page: int | None
    where: Literal["text", "link", "metadata"]
    text: str


class MissingExtraError(ImportError):
    """The ``pdf`` extra is not installed; the message says how to install it."""


class PDFError(ValueError):
    """The input is not a PDF that can be read (the message says why)."""


class PDFLimitError(PDFError):
    """Reading the PDF reached a limit: ``limit`` is ``"memory"`` or ``"time"``, ``value``
    the limit (bytes or seconds), ``page`` the page being read (``None`` before the first or
    after the last)."""

    def __init__(self, limit: Literal["memory", "time"], value: float, page: int | None) -> None:
        what = (
            f"needs more than {value / (1 << 20):,.0f} MiB of memory"
            if limit == "memory"
            else f"takes more than {value:g} s"
        )
        where = "" if page is None else f"page {page}: "
        super().__init__(f"{where}reading the PDF {what} (the {limit} limit)")
        self.limit = limit
        self.value = value
        self.page = page


def is_pdf(head: bytes) -> bool:
    """Whether a file that starts with *head* is a PDF (its header may follow up to 1 KiB
    of other bytes, as readers allow).

    >>> is_pdf(b"%PDF-1.7\\n"), is_pdf(b"plain text")
    (True, False)
    """
    return b"%PDF-" in head[:1024]


def page_texts(
    source: str | os.PathLike[str] | bytes | IO[bytes],
    *,
    memory: int | None = MEMORY,
    timeout: float | None = TIMEOUT,
) -> list[str]:
    """The text of each page of the PDF *source* (a path, the file's bytes or a binary
    file), with line breaks as ``\\n`` and hyphenated line ends as they were on the page
    (``-`` + ``\\n``).

    :raises MissingExtraError: without the ``pdf`` extra.
    :raises PDFError: when the input is not a PDF that can be read, or a page of it is not.
    :raises PDFLimitError: when reading it reaches *memory* or *timeout* (module docstring).
    """
    texts: list[str] = []
    with _Reading(source, memory, timeout) as reading:
        for kind, page, text in reading.records():
            if kind == "page":
                texts.append("")
            elif kind == "text":
                texts[page - 1] += text
        reading.finish()
    return texts


def find_all(
    source: str | os.PathLike[str] | bytes | IO[bytes],
    *,
    memory: int | None = MEMORY,
    timeout: float | None = TIMEOUT,
) -> Iterator[PDFFound]:
    """Every DOI in the PDF *source* (a path, the file's bytes or a binary file): page by
    page, the text's DOIs and then its links' DOIs; then the metadata's.

    :raises MissingExtraError: without the ``pdf`` extra.
    :raises PDFError: when the input is not a PDF that can be read, or when pages of it
        cannot be (after the DOIs of the others).
    :raises PDFLimitError: when reading it reaches *memory* or *timeout* (module
        docstring), after the DOIs found before.
    """
    with _Reading(source, memory, timeout) as reading:
        for found in reading.found():
            # the caller's time with a DOI is not the reader's
            reading.clock.stop()
            yield found
            reading.clock.start()


# --- the parent's side: a reading, in a child process or in this one ---------------------


class _Clock:
    """Seconds spent while running (started, stopped around each yield to the caller)."""

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.spent = 0.0
        self.since: float | None = time.monotonic()

    def start(self) -> None:
        self.since = time.monotonic()

    def stop(self) -> None:
        if self.since is not None:
            self.spent += time.monotonic() - self.since
            self.since = None

    def left(self) -> float | None:
        """Seconds left, or None without a limit."""
        if self.limit is None:
            return None
        running = 0.0 if self.since is None else time.monotonic() - self.since
        return max(0.0, self.limit - self.spent - running)


# Records from the reader: (kind, page, text). "page": a page begins; "text": a piece of
# its text; "link": a link's URI; "meta": a metadata value or XMP packet; "fail": the
# page cannot be loaded (text: PDFium's words); "error": the file cannot be read at all.
_Record = tuple[str, int, str]

_CHILD: Final = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); from doikit.pdf import _child; _child()"
)
_OUT_OF_MEMORY: Final = 3  # the child's exit status for a MemoryError in Python


class _Reading:
    """One PDF being read: its records, from a child process when a limit is set."""

    def __init__(
        self,
        source: str | os.PathLike[str] | bytes | IO[bytes],
        memory: int | None,
        timeout: float | None,
    ) -> None:
        if memory is not None and memory <= 0:
            raise ValueError(f"memory must be a positive number of bytes, not {memory}")
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout}")
        _require_extra()
        self.source = source
        self.memory = memory
        self.clock = _Clock(timeout)
        self.page: int | None = None  # the page being read
        self.failed: list[tuple[int, str]] = []
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
            self.process.wait()
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()

    def records(self) -> Iterator[_Record]:
        """The reader's records, the page being read kept in ``page``; a file that cannot
        be read raises :class:`PDFError`, a limit :class:`PDFLimitError`."""
        if self.memory is None and self.clock.limit is None:
            raw: Iterable[_Record] = _records(_data(self.source))
        else:
            raw = self._from_child()
        for record in raw:
            kind, page, text = record
            if kind == "error":
                raise PDFError(text)
            if kind == "page":
                self.page = page
            elif kind == "fail":
                self.failed.append((page, text))
            yield record
        self.page = None

    def found(self) -> Iterator[PDFFound]:
        """The DOIs of the records, in their order; then the pages that failed."""
        page, uris, pieces = 0, [], []
        for kind, number, text in self.records():
            if kind == "text":
                pieces.append(text)
                continue
            if kind == "link":
                uris.append(text)
                continue
            if pieces or uris:  # the page has been read
                yield from _page_dois(page, "".join(pieces), uris, self.check_time)
                uris, pieces = [], []
            if kind == "page":
                page = number
            elif kind == "meta":
                for one in _find_all(text):
                    yield PDFFound(one.doi, None, "metadata", one.text)
        if pieces or uris:
            yield from _page_dois(page, "".join(pieces), uris, self.check_time)
        self.finish()

    def check_time(self) -> None:
        """Raise :class:`PDFLimitError` when the time is up."""
        if self.clock.left() == 0.0:
            self._over("time")

    def finish(self) -> None:
        """Raise for the pages that could not be read, once all else is read."""
        if self.failed:
            pages = _page_ranges(page for page, _ in self.failed)
            first = self.failed[0][1]
            raise PDFError(
                f"{pages} cannot be read (PDFium: {first}); its page tree may loop or be broken"
            )

    def _from_child(self) -> Iterator[_Record]:
        if isinstance(self.source, (str, os.PathLike)):
            with Path(self.source).open("rb") as file:  # the child reads the file itself
                process = self.process = _start(self.memory, self.clock.limit, file)
        else:
            process = self.process = _start(self.memory, self.clock.limit, subprocess.PIPE)
            self._send(process)
        assert process.stdout is not None  # noqa: S101 - stdout=PIPE
        selector = selectors.DefaultSelector()
        selector.register(process.stdout, selectors.EVENT_READ)
        buffer = bytearray()
        with selector:
            while True:
                end = buffer.find(b"\n")
                if end >= 0:
                    line = bytes(buffer[:end])
                    del buffer[: end + 1]
                    kind, page, text = json.loads(line)
                    yield kind, page, text
                    self.check_time()
                    continue
                if not selector.select(self.clock.left()):
                    self._over("time")
                chunk = os.read(process.stdout.fileno(), 1 << 16)
                if not chunk:
                    break
                buffer += chunk
        self._ended(process)

    def _send(self, process: subprocess.Popen[bytes]) -> None:
        """Give the child the PDF's bytes or a file's, in pieces."""
        assert process.stdin is not None  # noqa: S101 - stdin=PIPE
        source = self.source
        try:
            if isinstance(source, bytes):
                process.stdin.write(source)
            elif not isinstance(source, (str, os.PathLike)):
                for chunk in iter(lambda: source.read(1 << 20), b""):
                    process.stdin.write(chunk)
                    self.check_time()
            process.stdin.close()
        except BrokenPipeError:
            pass  # the child has ended (its status says why)

    def _ended(self, process: subprocess.Popen[bytes]) -> None:
        """Raise when the child did not end well: a limit, or a crash."""
        peak = 0
        if hasattr(os, "wait4"):
            _, status, usage = os.wait4(process.pid, 0)
            process.returncode = os.waitstatus_to_exitcode(status)
            peak = usage.ru_maxrss * 1024  # kilobytes on Linux
        else:
            process.wait()
        code = process.returncode
        if code == 0:
            return
        if code == _OUT_OF_MEMORY or (
            code in {-signal.SIGABRT, -signal.SIGKILL}
            and self.memory is not None
            and peak > self.memory // 4
        ):
            # PDFium aborts when an allocation fails, having used much of the limit (and
            # the system's OOM killer sends SIGKILL)
            self._over("memory")
        if code == -getattr(signal, "SIGXCPU", 0):
            self._over("time")
        where = "" if self.page is None else f"page {self.page}: "
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"status {code}"
        raise PDFError(f"{where}the PDF reader (PDFium) crashed ({how})")

    def _over(self, limit: Literal["memory", "time"]) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
            self.process.wait()
        value = self.memory if limit == "memory" else self.clock.limit
        assert value is not None  # noqa: S101 - a limit reached is a limit set
        raise PDFLimitError(limit, value, self.page)


def _require_extra() -> None:
    import importlib.util  # noqa: PLC0415 - only here

    if importlib.util.find_spec("pypdfium2") is None:
        raise MissingExtraError(INSTALL)


def _start(
    memory: int | None, timeout: float | None, stdin: IO[bytes] | int
) -> subprocess.Popen[bytes]:
    """The child that reads one PDF from *stdin* (``_child``), under the limits."""
    if not sys.executable:
        raise PDFError("cannot start the PDF reader: sys.executable is not known")
    package = str(Path(__file__).resolve().parent.parent)
    argv = [sys.executable, "-c", _CHILD, package, str(memory or 0), str(timeout or 0)]
    return subprocess.Popen(  # noqa: S603 - this interpreter, this module
        argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )


# A metavariable's bracket: documentation writes '⟨year⟩' where a value goes; no DOI holds one.
_METAVARIABLE: Final = "\u27e8"


def _page_dois(
    page: int, text: str, uris: list[str], check: Callable[[], None]
) -> Iterator[PDFFound]:
    """The DOIs of one page: of its text, then of its links' *uris*; *check* runs before
    each piece of the text is scanned (the scan's time counts as the reader's).

    A DOI of the text that runs into a metavariable is a template's
    (``10.1007/s00037-⟨year⟩-⟨doisuffix⟩``, a class's manual), no DOI. Where a link of the
    page names the DOI, the link says where it ends (:class:`_Links`)."""
    found = [one for uri in uris for one in _find_all(uri)]
    links = _Links(one.doi for one in found)
    covered = 0  # the end of the last DOI given: one found inside it is part of it
    for one in _find_all(_pieces(text, check)):
        if one.start < covered or _METAVARIABLE in one.text:
            continue
        doi, covered = links.ending(text, one)
        yield PDFFound(doi, page, "text", text[one.start : covered])
    for one in found:
        yield PDFFound(one.doi, page, "link", one.text)


def _pieces(text: str, check: Callable[[], None]) -> Iterator[str]:
    for start in range(0, len(text), _PIECE):
        check()
        yield text[start : start + _PIECE]


class _Links:
    """The DOIs of a page's links, by key, to ask in time linear in a name's length."""

    def __init__(self, dois: Iterable[DOI]) -> None:
        self._by_key = {doi.key: doi for doi in dois}
        self._keys = sorted(self._by_key)
        self._lengths = sorted({len(key) for key in self._keys}, reverse=True)

    def ending(self, text: str, one: Found) -> tuple[DOI, int]:
        """The DOI *one* of the page's *text* and where it ends, as the links show it.

        Where the text leaves that in doubt:

        - the DOI stops at a line break (or a blank a text layer put in it), and a link
          names it longer, the rest written across the break (``10.1145/118`` +
          ``8913.1188915``, a URL broken between digits; a SICI broken after its ``>``;
          ``10.1016/j.jet.2003.07.`` + ``001``, which reads as a list's number): the link's;
        - the DOI ran on across a line break, and a link names it shorter, ending before
          the break (``10.1007/s00355-003-0260-8.`` + ``(2004)``, the next reference): the
          link's.
        """
        key = one.doi.key
        if not self._keys or key in self._by_key:
            return one.doi, one.end
        at = bisect.bisect_right(self._keys, key)
        while at < len(self._keys) and self._keys[at].startswith(key):
            doi = self._by_key[self._keys[at]]
            end = _spelled(text, one.end, str(doi)[len(key) :])
            if end >= 0 and _BLANK(text, one.end, end):  # written across a break
                return doi, end
            at += 1
        if "\n" in one.text:
            for length in self._lengths:
                shorter = self._by_key.get(key[:length]) if length < len(key) else None
                if shorter is not None:
                    end = _spelled(text, one.start, str(shorter))
                    if end >= 0 and "\n" in text[end : one.end]:
                        return shorter, end
        return one.doi, one.end


_MOST_BLANKS: Final = 4  # blanks and line breaks in a row that _spelled passes over
_BLANK: Final = re.compile(r"\s").search


def _spelled(text: str, at: int, name: str) -> int:
    """Where *name* ends, written in *text* from *at* (ASCII case aside, with up to
    _MOST_BLANKS blanks or line breaks between any two characters); -1 when it is not."""
    for char in name:
        gap = 0
        while at < len(text) and text[at].isspace() and gap < _MOST_BLANKS:
            at += 1
            gap += 1
        if at == len(text) or (
            text[at] != char and not (char.isascii() and text[at].lower() == char.lower())
        ):
            return -1
        at += 1
    return at


def _page_ranges(pages: Iterable[int]) -> str:
    """'page 3', 'pages 2-5', 'pages 2, 4-6'."""
    runs: list[list[int]] = []
    for page in pages:
        if runs and runs[-1][1] == page - 1:
            runs[-1][1] = page
        else:
            runs.append([page, page])
    text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)
    return f"page {text}" if len(runs) == 1 and runs[0][0] == runs[0][1] else f"pages {text}"


def _data(source: str | os.PathLike[str] | bytes | IO[bytes]) -> bytes:
    if isinstance(source, bytes):
        return source
    if isinstance(source, (str, os.PathLike)):
        return Path(source).read_bytes()
    return source.read()


# --- the reader's side: PDFium, in the child process (or in this one) ---------------------
# (a page's text and links, and the XMP packets, are read in doikit._pdf_layers)


def _child() -> None:
    """The child process: read a PDF from stdin, write its records as JSON lines."""
    memory, seconds = int(sys.argv[1]), float(sys.argv[2])
    out = sys.stdout.buffer
    try:
        _pdfium()  # imported first: the limits are for the PDF, not for starting Python
        _limit_self(memory, seconds)
        for record in _records(sys.stdin.buffer.read()):
            out.write(json.dumps(record).encode("ascii"))
            out.write(b"\n")
            out.flush()
    except MemoryError:
        os._exit(_OUT_OF_MEMORY)
    except PDFError as exc:
        out.write(json.dumps(["error", 0, str(exc)]).encode() + b"\n")
    except BrokenPipeError:
        os._exit(1)  # the caller stopped reading


def _limit_self(memory: int, seconds: float) -> None:
    """Hold this process to *memory* bytes of address space and *seconds* of CPU (0: no
    limit), where the system allows; and write no core file when PDFium aborts."""
    try:
        import resource  # noqa: PLC0415 - POSIX only
    except ImportError:
        return
    limits = [(resource.RLIMIT_CORE, 0)]
    if memory:
        limits.append((resource.RLIMIT_AS, memory))
    if seconds:
        # a backstop: the parent stops the child at the time limit; this ends a child whose
        # parent has gone
        limits.append((resource.RLIMIT_CPU, math.ceil(seconds) + 1))
    for kind, value in limits:
        with contextlib.suppress(ValueError, OSError):
            hard = resource.getrlimit(kind)[1]
            soft = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(kind, (soft, hard))


def _pdfium() -> Any:  # noqa: ANN401 - pypdfium2 is typed loosely
    try:
        import pypdfium2  # type: ignore[import-untyped]  # noqa: PLC0415 - an optional extra
    except ImportError:
        raise MissingExtraError(INSTALL) from None
    return pypdfium2


def _records(data: bytes) -> Iterator[_Record]:
    """The records of the PDF *data*: each page's start, text and links; the metadata."""
    pdfium = _pdfium()
    with _opened(pdfium, data) as document:
        broken = 0
        for index in range(len(document)):
            yield "page", index + 1, ""
            try:
                text, uris = read_page(pdfium, document, index)
            except pdfium.PdfiumError as exc:
                yield "fail", index + 1, str(exc).rstrip(".")
                broken += 1
                if broken == _BROKEN_PAGES:
                    break
                continue
            broken = 0
            for uri in uris:  # first: the page's DOIs are read with its links in hand
                yield "link", index + 1, uri
            for start in range(0, len(text), _PIECE):
                yield "text", index + 1, text[start : start + _PIECE]
        for key in _INFO_KEYS:
            value = document.get_metadata_value(key)
            if value:
                yield "meta", 0, value
    for packet in xmp_packets(data):
        yield "meta", 0, packet


@contextlib.contextmanager
def _opened(pdfium: Any, data: bytes) -> Iterator[Any]:  # noqa: ANN401
    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise PDFError(f"not a PDF that can be read: {exc}") from None
    try:
        yield document
    finally:
        document.close()
