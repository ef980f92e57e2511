"""``extract``: every DOI in files of text, HTML, gzip or PDF (PDF with the pdf extra)."""

from __future__ import annotations

import bisect
import collections
import gzip
import io
import json
import sys
import zlib
from pathlib import Path
from typing import IO, TYPE_CHECKING, Final, NamedTuple

import click

from doikit import DOI, Found, FoundShort, find_all, find_short
from doikit._doi import DEFAULT_RESOLVER, FORMS
from doikit._lines import Readable, TextBlocks
from doikit.cli._input import terminal_hint, to_option
from doikit.pdf import MEMORY, TIMEOUT, is_pdf

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from click._termui_impl import ProgressBar

    from doikit.pdf import PDFFound


class _Counted:
    """A binary file whose reads are counted (the compressed bytes a .gz has given)."""

    def __init__(self, file: IO[bytes]) -> None:
        self.file = file
        self.count = 0

    def read(self, size: int = -1, /) -> bytes:
        data = self.file.read(size)
        self.count += len(data)
        return data

    def seek(self, offset: int, /) -> int:  # (gzip seeks only to rewind, which extract never does)
        return self.file.seek(offset)


def _text(
    path: str, problems: list[str], bar: ProgressBar[int] | None, ratio: int
) -> Iterator[str]:
    """The text of a file ('-' for stdin) in blocks of lines (:class:`TextBlocks`),
    decompressed when it starts with gzip's magic bytes. A line that is not UTF-8 is still
    scanned (its undecodable bytes end a DOI, so the DOIs elsewhere in it are found); the
    first is reported on stderr, and the count of all once the file is read. A .gz stops
    when it inflates to more than *ratio* times the bytes it was read from (past its first
    _INFLATE_FREELY bytes). Each problem reported is added to *problems*. A progress *bar*
    moves by the bytes of the file read (compressed bytes for .gz); stdin does not move it
    (a pipe cannot tell its position, and its size is not counted)."""
    if path == "-":
        bar = None
    opened = sys.stdin.buffer if path == "-" else Path(path).open("rb")  # noqa: SIM115
    where = "" if path == "-" else f"{path}, "
    counted: _Counted | None = None
    try:
        raw: Readable = opened
        if isinstance(opened, io.BufferedReader) and opened.peek(2)[:2] == b"\x1f\x8b":
            counted = _Counted(opened)
            raw = gzip.GzipFile(fileobj=counted, mode="rb")
        blocks = TextBlocks(raw)
        done = 0
        said = False
        for text in _read_or_say(path, blocks, problems):
            yield text
            if blocks.first_bad is not None and not said:
                number, exc = blocks.first_bad
                _problem(problems, f"{where}line {number}: {exc}")
                said = True
            if bar is not None:
                position = opened.tell()
                bar.update(position - done)
                done = position
            if (
                counted is not None
                and ratio
                and blocks.read > _INFLATE_FREELY + ratio * counted.count
            ):
                _problem(
                    problems,
                    f"{path}: inflates to more than {ratio} times its size ({_size(blocks.read)}"
                    f" from {_size(counted.count)}), the gzip limit: read no further; "
                    "--gzip-ratio raises it",
                )
                break
        if blocks.bad_lines > 1:
            _problem(
                problems,
                f"{path}: {blocks.bad_lines - 1:,} more lines are not UTF-8 (reported once; "
                "the rest of each was read)",
            )
    finally:
        if path != "-":
            opened.close()


def _read_or_say(path: str, blocks: Iterable[str], problems: list[str]) -> Iterator[str]:
    """The blocks; a gzip stream that is cut or corrupt ends them with one line on stderr."""
    try:
        yield from blocks
    except (OSError, EOFError, zlib.error) as exc:
        _problem(problems, f"{path}: not a gzip file that can be read to the end: {exc}")


def _problem(problems: list[str], message: str) -> None:
    click.echo(f"doikit: {message}", err=True)
    problems.append(message)


def _size(count: int) -> str:
    """A size in bytes, as the limits' messages give it."""
    return f"{count / (1 << 20):,.1f} MiB" if count >= 1 << 20 else f"{count / 1024:,.1f} KiB"


#: A .gz inflates freely to this many bytes; past them, to at most --gzip-ratio times its
#: compressed bytes (deflate's own limit is 1,032: a 1 MB file of zeros gives 1 GiB).
_INFLATE_FREELY: Final = 64 << 20
#: The default of --gzip-ratio: real text compresses 3 to 20 times, logs up to about 100.
GZIP_RATIO: Final = 100


#: Inputs at least this large (in all) get a progress bar when stderr is a terminal.
_PROGRESS_FROM: Final = 1 << 20


@click.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@to_option(name for name, form in FORMS.items() if form.short)  # shortDOIs are written too
@click.option("--unique", is_flag=True, help="Write each DOI once (by ASCII-folded key).")
@click.option(
    "--json", "as_json", is_flag=True, help="Write JSON Lines with file, line, column and span."
)
@click.option(
    "--short",
    is_flag=True,
    help="Also write shortDOIs (10/abc1), which are aliases and skipped by default.",
)
@click.option(
    "--gzip-ratio",
    type=click.IntRange(min=0),
    default=GZIP_RATIO,
    show_default=True,
    help="A .gz may inflate to this many times its size, past its first 64 MiB (0: no limit).",
)
@click.option(
    "--pdf-memory",
    type=click.IntRange(min=0),
    default=MEMORY >> 20,
    show_default=True,
    help="MiB of memory the reader of a PDF may use (0: no limit).",
)
@click.option(
    "--pdf-timeout",
    type=click.FloatRange(min=0),
    default=TIMEOUT,
    show_default=True,
    help="Seconds a PDF may take to read (0: no limit).",
)
def extract(
    files: tuple[str, ...],
    form: str,
    *,
    unique: bool,
    as_json: bool,
    short: bool,
    gzip_ratio: int,
    pdf_memory: int,
    pdf_timeout: float,
) -> None:
    """Find every DOI in FILES (text, HTML, .gz or PDF; '-' or none for stdin).

    Exit 1 when a line is not UTF-8 (reported on stderr; the rest of it is still read), when
    a PDF cannot be read, or when an input reaches a limit (the DOIs before it are written).

    In a PDF (with the pdf extra): the text and links of each page, then the metadata.

    On a terminal, inputs of 1 MiB or more show a progress bar on stderr.
    """
    seen: set[str] = set()
    problems: list[str] = []
    paths = files or ("-",)
    total = sum(Path(p).stat().st_size for p in paths if p != "-") if sys.stderr.isatty() else 0
    bar = (
        click.progressbar(length=total, label="extracting", file=sys.stderr)
        if total >= _PROGRESS_FROM
        else None
    )
    limits = _Limits(gzip_ratio, pdf_memory << 20, pdf_timeout)
    try:
        for path in paths:
            write = _Writer(path, form, seen, unique=unique, as_json=as_json)
            _extract_one(path, write, bar, problems, limits, short=short)
    finally:
        if bar is not None:
            bar.render_finish()
    sys.exit(1 if problems else 0)


class _Limits(NamedTuple):
    """The limits of one run (0: none): --gzip-ratio, --pdf-memory (in bytes), --pdf-timeout."""

    gzip_ratio: int
    pdf_memory: int
    pdf_timeout: float


def _extract_one(
    path: str,
    write: _Writer,
    bar: ProgressBar[int] | None,
    problems: list[str],
    limits: _Limits,
    *,
    short: bool,
) -> None:
    """Write the DOIs (and with *short* the shortDOIs) found in one input, in order."""
    if path == "-":
        terminal_hint("text to search for DOIs", "files as arguments")
    head = _head(path)
    if head == b"":
        return  # empty (on a terminal, Ctrl-D: reading again would wait for another)
    if head is not None and is_pdf(head):
        _extract_pdf(path, write, problems, limits)
        return
    shorts: collections.deque[FoundShort] = collections.deque()
    lines = write.lines = _LineIndex(_text(path, problems, bar, limits.gzip_ratio))
    for found in find_all(_noting_shorts(lines, shorts) if short else lines):
        while shorts and shorts[0].start < found.start:
            write.short(shorts.popleft())
        write.doi(found)
    while shorts:
        write.short(shorts.popleft())


def _head(path: str) -> bytes | None:
    """The first KiB of the input, to tell a PDF (stdin is peeked at, not consumed; None
    when it cannot be)."""
    if path == "-":
        stdin = sys.stdin.buffer
        return stdin.peek(1024)[:1024] if isinstance(stdin, io.BufferedReader) else None
    with Path(path).open("rb") as opened:
        return opened.read(1024)


def _extract_pdf(path: str, write: _Writer, problems: list[str], limits: _Limits) -> None:
    """Write the DOIs of a PDF as they are found: its pages' text and links, then its
    metadata; a PDF that cannot be read, or that reaches a limit, is reported."""
    from doikit import pdf  # noqa: PLC0415 - only for PDF input

    try:
        for one in pdf.find_all(
            sys.stdin.buffer if path == "-" else path,
            memory=limits.pdf_memory or None,
            timeout=limits.pdf_timeout or None,
        ):
            write.pdf(one)
    except pdf.MissingExtraError as exc:  # as every missing extra: one line, exit 2
        click.echo(f"doikit: {path}: {exc}", err=True)
        sys.exit(2)
    except pdf.PDFLimitError as exc:
        option = "--pdf-memory" if exc.limit == "memory" else "--pdf-timeout"
        _problem(problems, f"{path}: {exc}; {option} raises it")
    except pdf.PDFError as exc:
        _problem(problems, f"{path}: {exc}")


def _first_time(seen: set[str] | None, key: str) -> bool:
    """Whether *key* is to be written: always without --unique (*seen* None), else only the
    first time (then it is added to *seen*)."""
    if seen is None:
        return True
    if key in seen:
        return False
    seen.add(key)
    return True


def _noting_shorts(lines: Iterable[str], shorts: collections.deque[FoundShort]) -> Iterator[str]:
    """The lines, unchanged; the shortDOIs of each (one never spans lines) go to *shorts*."""
    offset = 0
    for line in lines:
        for one in find_short(line):
            shorts.append(one._replace(start=offset + one.start, end=offset + one.end))
        yield line
        offset += len(line)


class _Writer:
    """Writes what `extract` finds in one input: once each with --unique, in the chosen
    presentation, as a line or a JSON Lines record."""

    def __init__(
        self, path: str, form: str, seen: set[str], *, unique: bool, as_json: bool
    ) -> None:
        self._path = path
        self.lines: _LineIndex | None = None  # a text's lines, for --json
        self._form = form
        row = FORMS[form]
        self._in_form: Callable[[DOI], str] = lambda doi: row.write(
            doi, DEFAULT_RESOLVER, "recommended"
        )
        self._short_head = row.head or ""
        self._seen = seen if unique else None
        self._as_json = as_json

    def doi(self, found: Found) -> None:
        doi = found.doi
        if _first_time(self._seen, doi.key):
            self._write(self._in_form(doi), "doi", str(doi), found)

    def short(self, found: FoundShort) -> None:
        handle = found.handle
        if _first_time(self._seen, handle):
            self._write(self._short_head + handle, "shortdoi", handle, found)

    def pdf(self, found: PDFFound) -> None:
        doi = found.doi
        if not _first_time(self._seen, doi.key):
            return
        out = self._in_form(doi)
        if self._as_json:
            record = {"file": self._path, "page": found.page, "where": found.where}
            record |= {"text": found.text, "doi": str(doi), self._form: out}
            click.echo(json.dumps(record, ensure_ascii=False))
        else:
            click.echo(out)

    def _write(self, out: str, field: str, name: str, found: Found | FoundShort) -> None:
        if not self._as_json or self.lines is None:
            click.echo(out)
            return
        number, column = self.lines.locate(found.start)
        record = {
            "file": self._path,
            "line": number,
            "column": column,
            "span": [found.start, found.end],
            "text": found.text,
            field: name,
            self._form: out,
        }
        click.echo(json.dumps(record, ensure_ascii=False))


class _LineIndex:
    """The blocks of a text as stream chunks, remembering where recent blocks start and the
    line each starts in, so that a stream offset can be turned into a line and column.
    Only blocks within reach of the scanner's carry-over are kept, so memory stays bounded."""

    _REACH = 4 << 20  # more than find_all's largest carry-over plus its look-back

    def __init__(self, blocks: Iterable[str]) -> None:
        self._blocks = blocks
        # (stream offset, number of the line it starts in, offset where that line starts, text)
        self._kept: collections.deque[tuple[int, int, int, str]] = collections.deque()
        # the last offset located: (its block's offset, its place in it, its line, line start)
        self._last = (-1, 0, 0, 0)

    def __iter__(self) -> Iterator[str]:
        offset = line_start = 0
        number = 1
        for text in self._blocks:
            self._kept.append((offset, number, line_start, text))
            while self._kept[0][0] + len(self._kept[0][3]) < offset - self._REACH:
                self._kept.popleft()
            yield text
            breaks = text.count("\n")
            if breaks:
                number += breaks
                line_start = offset + text.rfind("\n") + 1
            offset += len(text)

    def locate(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column of a stream *offset* (offsets asked in order are
        counted on from the last, so a block of many DOIs is read once)."""
        index = bisect.bisect_right(self._kept, offset, key=lambda kept: kept[0]) - 1
        start, number, line_start, text = self._kept[max(index, 0)]
        inside = offset - start
        counted = 0
        if self._last[0] == start and self._last[1] <= inside:
            _, counted, number, line_start = self._last
        breaks = text.count("\n", counted, inside)
        if breaks:
            number += breaks
            line_start = start + text.rfind("\n", counted, inside) + 1
        self._last = (start, inside, number, line_start)
        return number, offset - line_start + 1
