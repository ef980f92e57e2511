"""``extract``: every DOI in files of text, HTML, gzip or PDF (PDF with the pdf extra)."""

from __future__ import annotations

import bisect
import collections
import gzip
import io
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

import click

from doikit import DOI, Found, FoundShort, find_all, find_short
from doikit._lines import BOM, NotUTF8, decode_line

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from click._termui_impl import ProgressBar


def _lines(path: str, bad: list[int], bar: ProgressBar[int] | None = None) -> Iterator[str]:
    """The lines of a file ('-' for stdin), decompressed when it starts with gzip's magic
    bytes, read as every command reads (:mod:`doikit._lines`). A line that is not UTF-8 is
    reported on stderr (its number goes to *bad*) and still scanned: its undecodable bytes
    become lone surrogates, which end a DOI, so the DOIs elsewhere in it are found.
    A progress *bar* moves by the bytes of the file read (compressed bytes for .gz); stdin
    does not move it (a pipe cannot tell its position, and its size is not counted)."""
    if path == "-":
        bar = None
    opened = sys.stdin.buffer if path == "-" else Path(path).open("rb")  # noqa: SIM115
    try:
        raw: Iterable[bytes] = opened
        if isinstance(opened, io.BufferedReader) and opened.peek(2)[:2] == b"\x1f\x8b":
            raw = gzip.open(opened)  # noqa: SIM115 - the underlying file is closed below
        done = 0
        for number, line in enumerate(raw, 1):
            if bar is not None and number % 1024 == 0:
                position = opened.tell()
                bar.update(position - done)
                done = position
            try:
                yield decode_line(line, first=number == 1)
            except NotUTF8 as exc:
                where = "" if path == "-" else f"{path}, "
                click.echo(f"doikit: {where}line {number}: {exc}", err=True)
                bad.append(number)
                kept = line.removeprefix(BOM) if number == 1 else line
                yield kept.decode("utf-8", "surrogateescape")
        if bar is not None:
            bar.update(opened.tell() - done)
    finally:
        if path != "-":
            opened.close()


#: Inputs at least this large (in all) get a progress bar when stderr is a terminal.
_PROGRESS_FROM: Final = 1 << 20


@click.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option(
    "--to",
    "form",
    type=click.Choice(["bare", "url", "uri"]),
    default="bare",
    show_default=True,
    help="The presentation to write.",
)
@click.option("--unique", is_flag=True, help="Write each DOI once (by ASCII-folded key).")
@click.option(
    "--json", "as_json", is_flag=True, help="Write JSON Lines with file, line, column and span."
)
@click.option(
    "--short",
    is_flag=True,
    help="Also write shortDOIs (10/abc1), which are aliases and skipped by default.",
)
def extract(files: tuple[str, ...], form: str, *, unique: bool, as_json: bool, short: bool) -> None:
    """Find every DOI in FILES (text, HTML, .gz or PDF; '-' or none for stdin).

    Exit 1 when a line is not UTF-8 (reported on stderr; the rest of it is still read).

    In a PDF (with the pdf extra): the text and links of each page, then the metadata.

    On a terminal, inputs of 1 MiB or more show a progress bar on stderr.
    """
    seen: set[str] = set()
    bad: list[int] = []
    paths = files or ("-",)
    total = sum(Path(p).stat().st_size for p in paths if p != "-") if sys.stderr.isatty() else 0
    bar = (
        click.progressbar(length=total, label="extracting", file=sys.stderr)
        if total >= _PROGRESS_FROM
        else None
    )
    try:
        for path in paths:
            _extract_one(path, form, bar, seen, bad, unique=unique, as_json=as_json, short=short)
    finally:
        if bar is not None:
            bar.render_finish()
    sys.exit(1 if bad else 0)


def _extract_one(
    path: str,
    form: str,
    bar: ProgressBar[int] | None,
    seen: set[str],
    bad: list[int],
    *,
    unique: bool,
    as_json: bool,
    short: bool,
) -> None:
    """Write the DOIs (and with *short* the shortDOIs) found in one input, in order."""
    if _is_pdf(path):
        _extract_pdf(path, form, seen, unique=unique, as_json=as_json)
        return
    shorts: collections.deque[FoundShort] = collections.deque()
    lines = _LineIndex(_lines(path, bad, bar))
    write = _Writer(path, lines, form, seen, unique=unique, as_json=as_json)
    for found in find_all(_noting_shorts(lines, shorts) if short else lines):
        while shorts and shorts[0].start < found.start:
            write.short(shorts.popleft())
        write.doi(found)
    while shorts:
        write.short(shorts.popleft())


def _is_pdf(path: str) -> bool:
    """Whether the input starts as a PDF does (stdin is peeked at, not consumed)."""
    from doikit.pdf import is_pdf  # noqa: PLC0415 - only extract needs it

    if path == "-":
        stdin = sys.stdin.buffer
        return isinstance(stdin, io.BufferedReader) and is_pdf(stdin.peek(1024)[:1024])
    with Path(path).open("rb") as opened:
        return is_pdf(opened.read(1024))


def _extract_pdf(path: str, form: str, seen: set[str], *, unique: bool, as_json: bool) -> None:
    """Write the DOIs of a PDF: its pages' text and links, then its metadata."""
    from doikit import pdf  # noqa: PLC0415 - only for PDF input

    data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    try:
        found = list(pdf.find_all(data))
    except pdf.MissingExtraError as exc:  # as every missing extra: one line, exit 2
        click.echo(f"doikit: {path}: {exc}", err=True)
        sys.exit(2)
    except pdf.PDFError as exc:
        raise click.ClickException(f"{path}: {exc}") from None
    for one in found:
        doi = one.doi
        if not _first_time(seen if unique else None, doi.key):
            continue
        out = _DOI_FORMS[form](doi)
        if as_json:
            record = {"file": path, "page": one.page, "where": one.where, "text": one.text}
            click.echo(json.dumps({**record, "doi": str(doi), form: out}, ensure_ascii=False))
        else:
            click.echo(out)


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


_DOI_FORMS: Final[dict[str, Callable[[DOI], str]]] = {
    "bare": str,
    "url": DOI.to_url,
    "uri": DOI.to_uri,
}


class _Writer:
    """Writes what `extract` finds in one input: once each with --unique, in the chosen
    presentation, as a line or a JSON Lines record."""

    def __init__(
        self,
        path: str,
        lines: _LineIndex,
        form: str,
        seen: set[str],
        *,
        unique: bool,
        as_json: bool,
    ) -> None:
        self._path = path
        self._lines = lines
        self._form = form
        self._seen = seen if unique else None
        self._as_json = as_json

    def doi(self, found: Found) -> None:
        doi = found.doi
        if _first_time(self._seen, doi.key):
            self._write(_DOI_FORMS[self._form](doi), "doi", str(doi), found)

    def short(self, found: FoundShort) -> None:
        handle = found.handle
        if _first_time(self._seen, handle):
            out = {"bare": "", "url": "https://doi.org/", "uri": "doi:"}[self._form] + handle
            self._write(out, "shortdoi", handle, found)

    def _write(self, out: str, field: str, name: str, found: Found | FoundShort) -> None:
        if not self._as_json:
            click.echo(out)
            return
        number, column = self._lines.locate(found.start)
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
    """The lines of a text as stream chunks, remembering where recent lines start so that
    a stream offset can be turned into a line and column. Only lines within reach of the
    scanner's carry-over are kept, so memory stays bounded."""

    _REACH = 4 << 20  # more than find_all's largest carry-over plus its look-back

    def __init__(self, lines: Iterable[str]) -> None:
        self._lines = lines
        self._starts: collections.deque[tuple[int, int]] = collections.deque()

    def __iter__(self) -> Iterator[str]:
        offset = 0
        for number, line in enumerate(self._lines, 1):
            self._starts.append((offset, number))
            while self._starts[0][0] < offset - self._REACH:
                self._starts.popleft()
            yield line
            offset += len(line)

    def locate(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column of a stream *offset*."""
        starts = self._starts
        index = bisect.bisect_right(starts, (offset, sys.maxsize)) - 1
        start, number = starts[max(index, 0)]
        return number, offset - start + 1
