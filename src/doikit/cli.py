"""The ``doikit`` command line: thin commands over the library.

Inputs come from the arguments or, with none, one per line from standard input, streamed,
so a file of any size runs in constant memory. Blank lines are skipped. Exit status: 0 when
every input was valid (for ``compare``: equivalent), 1 otherwise, 2 for a usage error.
A problem is one line on stderr, never a traceback.
"""

from __future__ import annotations

import bisect
import collections
import gzip
import io
import json
import os
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

import click

from doikit import DOI, InvalidDOI, __version__, find_all
from doikit._errors import _short

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

_FORMS: Final = ("bare", "url", "uri", "urn", "key")


class _Input:
    """One input: where it came from, its text, or why it could not be read."""

    __slots__ = ("error", "label", "line", "text")

    def __init__(self, line: int, label: str, text: str, error: str | None = None) -> None:
        self.line = line
        self.label = label
        self.text = text
        self.error = error


def _inputs(args: tuple[str, ...]) -> Iterator[_Input]:
    if args:
        for number, text in enumerate(args, 1):
            yield _Input(number, f"argument {number}", text)
        return
    stream: IO[bytes] = sys.stdin.buffer
    for number, raw in enumerate(stream, 1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield _Input(number, f"line {number}", "", f"byte {exc.start} is not UTF-8")
            continue
        text = text.rstrip("\r\n")
        if text.strip():
            yield _Input(number, f"line {number}", text)


def _problem(item: _Input, message: str) -> None:
    click.echo(f"doikit: {item.label}: {message}", err=True)


def _invalid(item: _Input, exc: InvalidDOI) -> None:
    where = "" if exc.position is None else f" at position {exc.position}"
    _problem(item, f"{exc.code}{where}: {exc.detail} (in {_short(exc.text)})")


def _record(item: _Input, **fields: object) -> str:
    return json.dumps({"line": item.line, "input": item.text, **fields}, ensure_ascii=False)


def _each(args: tuple[str, ...], *, as_json: bool, handle: Callable[[DOI], dict[str, Any]]) -> int:
    """Run *handle* on every input; print its result; return the exit status."""
    status = 0
    for item in _inputs(args):
        if item.error is not None:
            _problem(item, item.error)
            if as_json:
                click.echo(_record(item, valid=False, code="utf8", message=item.error))
            status = 1
            continue
        try:
            doi = DOI(item.text)
        except InvalidDOI as exc:
            _invalid(item, exc)
            if as_json:
                click.echo(
                    _record(
                        item, valid=False, code=exc.code, position=exc.position, message=str(exc)
                    )
                )
            status = 1
            continue
        result = handle(doi)
        if as_json:
            click.echo(_record(item, valid=True, **result))
        elif "text" in result:
            click.echo(result["text"])
    return status


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="doikit")
def cli() -> None:
    """doikit: DOI names: check, convert, compare and inspect them."""


@cli.command()
@click.argument("texts", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Write one JSON object per input.")
def check(texts: tuple[str, ...], *, as_json: bool) -> None:
    """Check that each input is a DOI name (exit 1 if any is not)."""
    sys.exit(_each(texts, as_json=as_json, handle=lambda d: {"doi": str(d)}))


@cli.command()
@click.argument("texts", nargs=-1)
@click.option(
    "--to",
    "form",
    type=click.Choice(_FORMS),
    default="bare",
    show_default=True,
    help="The presentation to write.",
)
@click.option(
    "--resolver", default="https://doi.org/", show_default=True, help="Resolver for --to url."
)
@click.option(
    "--encoding",
    type=click.Choice(["recommended", "mandatory"]),
    default="recommended",
    show_default=True,
    help="Handbook URL encoding table for --to url.",
)
@click.option("--json", "as_json", is_flag=True, help="Write one JSON object per input.")
def convert(
    texts: tuple[str, ...], form: str, resolver: str, encoding: str, *, as_json: bool
) -> None:
    """Write each input in another presentation."""

    def handle(doi: DOI) -> dict[str, Any]:
        if form == "url":
            out = doi.to_url(
                resolver, encoding="mandatory" if encoding == "mandatory" else "recommended"
            )
        else:
            out = {"bare": str(doi), "uri": doi.to_uri(), "urn": doi.to_urn(), "key": doi.key}[form]
        return {"doi": str(doi), form: out} if as_json else {"text": out}

    sys.exit(_each(texts, as_json=as_json, handle=handle))


@cli.command()
@click.argument("first")
@click.argument("second")
@click.option("--json", "as_json", is_flag=True, help="Write the answer as JSON.")
def compare(first: str, second: str, *, as_json: bool) -> None:
    """Exit 0 when FIRST and SECOND name the same DOI, 1 when not."""
    dois = []
    for number, text in enumerate((first, second), 1):
        try:
            dois.append(DOI(text))
        except InvalidDOI as exc:
            _invalid(_Input(number, f"argument {number}", text), exc)
            sys.exit(2)
    same = dois[0] == dois[1]
    if as_json:
        click.echo(
            json.dumps(
                {
                    "equivalent": same,
                    "first": str(dois[0]),
                    "second": str(dois[1]),
                    "key": [d.key for d in dois],
                },
                ensure_ascii=False,
            )
        )
    else:
        click.echo("equivalent" if same else "different")
    sys.exit(0 if same else 1)


def _fields(doi: DOI) -> dict[str, Any]:
    return {
        "doi": str(doi),
        "prefix": doi.prefix,
        "registrant": doi.registrant,
        "suffix": doi.suffix,
        "key": doi.key,
        "url": doi.to_url(),
        "uri": doi.to_uri(),
        "urn": doi.to_urn(),
        "warnings": [
            {"code": w.code, "position": w.position, "message": w.message} for w in doi.warnings()
        ],
    }


@cli.command()
@click.argument("texts", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Write one JSON object per input.")
def inspect(texts: tuple[str, ...], *, as_json: bool) -> None:
    """Show every field and presentation-safety warning of each input."""

    def handle(doi: DOI) -> dict[str, Any]:
        fields = _fields(doi)
        if as_json:
            return fields
        lines = [f"{key + ':':<12}{value}" for key, value in fields.items() if key != "warnings"]
        warnings = fields["warnings"] or [None]
        for warning in warnings:
            text = (
                "none"
                if warning is None
                else (f"{warning['code']} at {warning['position']}: {warning['message']}")
            )
            lines.append(f"{'warning:':<12}{text}")
        return {"text": "\n".join(lines) + "\n"}

    sys.exit(_each(texts, as_json=as_json, handle=handle))


def _lines(path: str) -> Iterator[str]:
    """The lines of a file ('-' for stdin), decompressed when it starts with gzip's magic
    bytes, decoded as UTF-8; undecodable bytes become lone surrogates, which end a DOI."""
    opened = sys.stdin.buffer if path == "-" else Path(path).open("rb")  # noqa: SIM115
    try:
        raw: Iterable[bytes] = opened
        if isinstance(opened, io.BufferedReader) and opened.peek(2)[:2] == b"\x1f\x8b":
            raw = gzip.open(opened)  # noqa: SIM115 - the underlying file is closed below
        for line in raw:
            yield line.decode("utf-8", "surrogateescape")
    finally:
        if path != "-":
            opened.close()


@cli.command()
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
def extract(files: tuple[str, ...], form: str, *, unique: bool, as_json: bool) -> None:
    """Find every DOI in FILES (text, HTML or .gz; '-' or none for stdin)."""
    seen: set[str] = set()
    for path in files or ("-",):
        lines = _LineIndex(_lines(path))
        for found in find_all(lines):
            doi = found.doi
            if unique:
                if doi.key in seen:
                    continue
                seen.add(doi.key)
            out = {"bare": str(doi), "url": doi.to_url(), "uri": doi.to_uri()}[form]
            if as_json:
                number, column = lines.locate(found.start)
                click.echo(
                    json.dumps(
                        {
                            "file": path,
                            "line": number,
                            "column": column,
                            "span": [found.start, found.end],
                            "text": found.text,
                            "doi": str(doi),
                            form: out,
                        },
                        ensure_ascii=False,
                    )
                )
            else:
                click.echo(out)


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


def main() -> None:
    """Entry point: run the CLI; a closed pipe or Ctrl-C ends quietly."""
    try:
        cli(standalone_mode=True)
    except BrokenPipeError:
        # Reading end closed (doikit … | head): stop without a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
