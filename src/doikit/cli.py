"""The ``doikit`` command line: thin commands over the library.

Inputs come from the arguments or, with none, one per line from standard input, streamed,
so a file of any size runs in constant memory. Blank lines are skipped. Exit status: 0 when
every input was valid (for ``compare``: equivalent), 1 otherwise, 2 for a usage error.
A problem is one line on stderr, never a traceback.
"""

from __future__ import annotations

import bisect
import collections
import contextlib
import gzip
import io
import json
import os
import re
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

import click

from doikit import DOI, Found, FoundShort, InvalidDOI, __version__, find_all, find_short
from doikit._doi import BUILD
from doikit._errors import _short

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from click._termui_impl import ProgressBar

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
@click.version_option(
    __version__,
    prog_name="doikit",
    message=f"%(prog)s, version %(version)s ({BUILD})",
)
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


def _lines(path: str, bar: ProgressBar[int] | None = None) -> Iterator[str]:
    """The lines of a file ('-' for stdin), decompressed when it starts with gzip's magic
    bytes, decoded as UTF-8; undecodable bytes become lone surrogates, which end a DOI.
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
        for number, line in enumerate(raw):
            if bar is not None and number % 1024 == 0:
                position = opened.tell()
                bar.update(position - done)
                done = position
            yield line.decode("utf-8", "surrogateescape")
        if bar is not None:
            bar.update(opened.tell() - done)
    finally:
        if path != "-":
            opened.close()


#: Inputs at least this large (in all) get a progress bar when stderr is a terminal.
_PROGRESS_FROM: Final = 1 << 20


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
@click.option(
    "--short",
    is_flag=True,
    help="Also write shortDOIs (10/abc1), which are aliases and skipped by default.",
)
def extract(files: tuple[str, ...], form: str, *, unique: bool, as_json: bool, short: bool) -> None:
    """Find every DOI in FILES (text, HTML, .gz or PDF; '-' or none for stdin).

    In a PDF (with the pdf extra): the text and links of each page, then the metadata.

    On a terminal, inputs of 1 MiB or more show a progress bar on stderr.
    """
    seen: set[str] = set()
    paths = files or ("-",)
    total = sum(Path(p).stat().st_size for p in paths if p != "-") if sys.stderr.isatty() else 0
    bar = (
        click.progressbar(length=total, label="extracting", file=sys.stderr)
        if total >= _PROGRESS_FROM
        else None
    )
    try:
        for path in paths:
            _extract_one(path, form, bar, seen, unique=unique, as_json=as_json, short=short)
    finally:
        if bar is not None:
            bar.render_finish()


def _extract_one(
    path: str,
    form: str,
    bar: ProgressBar[int] | None,
    seen: set[str],
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
    lines = _LineIndex(_lines(path, bar))
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
    except (pdf.MissingExtraError, pdf.PDFError) as exc:
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


# --- the directory: serve, token, deposit (extra "server") ---------------------------


@contextlib.contextmanager
def _store_errors() -> Iterator[None]:
    """A store that cannot be opened: one line on stderr and exit 2, not a traceback."""
    from doikit.server.stores import StoreError  # noqa: PLC0415

    try:
        yield
    except StoreError as exc:
        click.echo(f"doikit: {exc}", err=True)
        sys.exit(2)


def _server_extra() -> None:
    try:
        import starlette  # noqa: F401, PLC0415
        import uvicorn  # noqa: F401, PLC0415
    except ImportError:
        raise click.UsageError(
            "this command needs the server extra: pip install 'doikit[server]'"
        ) from None


@cli.command()
@click.option(
    "--store",
    metavar="STORE",
    help="sqlite:///PATH or postgresql://… (default: a file in the user data directory)",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", default=8000, show_default=True, type=int, help="The port to listen on.")
@click.option(
    "--workers", default=1, show_default=True, type=click.IntRange(1), help="Worker processes."
)
@click.option("--demo", is_flag=True, help="Load the demo records (the seeds' example DOIs).")
@click.option(
    "--ra", "ra_name", default="doikit", show_default=True, help="The RA name Which RA answers."
)
@click.option(
    "--head-timeout",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    help="Seconds a request's line and headers may take to arrive.",
)
@click.option(
    "--request-timeout",
    type=click.FloatRange(min=0.1),
    default=120.0,
    show_default=True,
    help="Seconds a request's body may take to arrive, and the app to answer it.",
)
@click.option(
    "--max-connections",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Open connections per worker; 0: as many as the open-files limit allows.",
)
@click.option("--access-log", is_flag=True, help="Write a line per request on stdout.")
def serve(
    store: str | None,
    host: str,
    port: int,
    workers: int,
    *,
    demo: bool,
    ra_name: str,
    head_timeout: float,
    request_timeout: float,
    max_connections: int,
    access_log: bool,
) -> None:
    """Run the DOI directory and resolver (doi.org-compatible).

    It says on stdout when it is ready; stop it with Ctrl-C (or SIGTERM).
    """
    _server_extra()
    from doikit.server._limits import Limits  # noqa: PLC0415
    from doikit.server._run import run  # noqa: PLC0415

    limits = Limits(
        head_timeout=head_timeout,
        body_timeout=request_timeout,
        request_timeout=request_timeout,
        connections=max_connections,
    )
    with _store_errors():
        run(
            store=store,
            host=host,
            port=port,
            workers=workers,
            demo=demo,
            ra_name=ra_name,
            limits=limits,
            access_log=access_log,
        )


@cli.group()
def token() -> None:
    """Manage the bearer tokens that may write to a store."""


@token.command("create")
@click.option(
    "--store", metavar="STORE", help="sqlite:///PATH or postgresql://… (default: as serve)"
)
@click.option(
    "--prefix",
    "prefixes",
    multiple=True,
    required=True,
    help="A DOI prefix the token may write (repeatable).",
)
def token_create(store: str | None, prefixes: tuple[str, ...]) -> None:
    """Create a token for PREFIXes and print it (alone, on stdout); only its hash is kept."""
    _server_extra()
    from doikit._syntax import PREFIX_ONLY_RE  # noqa: PLC0415
    from doikit.server._run import create_token  # noqa: PLC0415

    for prefix in prefixes:
        if not PREFIX_ONLY_RE.fullmatch(prefix):
            raise click.BadParameter(
                f"{prefix!r} is not a DOI prefix like 10.5555", param_hint="--prefix"
            )
    with _store_errors():
        click.echo(create_token(store, prefixes))


@cli.group()
def admin() -> None:
    """Manage the Handle identities that may write with HTTP Basic (pyhandle, b2handle)."""


_IDENTITY = re.compile(r"([0-9]{1,10}):(.+)", re.ASCII | re.DOTALL)


@admin.command("create")
@click.argument("identity", metavar="INDEX:HANDLE")
@click.option(
    "--store", metavar="STORE", help="sqlite:///PATH or postgresql://… (default: as serve)"
)
@click.option("--prefix", required=True, help="The DOI prefix the identity administers.")
def admin_create(identity: str, store: str | None, prefix: str) -> None:
    """Create the Handle identity INDEX:HANDLE (as 300:10.5555/ADMIN) as an administrator of
    PREFIX, and print its secret key, alone on the last line; only a salted hash is kept.

    The identity's handle gets the key as an HS_SECKEY value at INDEX, readable by its
    admins only; the prefix's handle 0.NA/PREFIX gets the identity in its admin group
    (HS_VLIST 200), which is what Handle clients name in the HS_ADMIN of the names they
    create. Run again, it gives the identity a new key.
    """
    _server_extra()
    from doikit._syntax import PREFIX_ONLY_RE  # noqa: PLC0415
    from doikit.server._http import Refused  # noqa: PLC0415
    from doikit.server._run import create_admin  # noqa: PLC0415
    from doikit.server._writes import bare_name  # noqa: PLC0415

    if not PREFIX_ONLY_RE.fullmatch(prefix):
        raise click.BadParameter(
            f"{prefix!r} is not a DOI prefix like 10.5555", param_hint="--prefix"
        )
    match = _IDENTITY.fullmatch(identity)
    if match is None or not 0 < int(match.group(1)) < 2**31:
        raise click.BadParameter(
            f"{identity!r} is not INDEX:HANDLE with an index from 1 to 2147483647,"
            " as 300:10.5555/ADMIN",
            param_hint="INDEX:HANDLE",
        )
    try:
        handle = str(bare_name(match.group(2)))
    except Refused as exc:
        raise click.BadParameter(str(exc), param_hint="INDEX:HANDLE") from None
    try:
        with _store_errors():
            secret = create_admin(store, int(match.group(1)), handle, prefix)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{match.group(1)}:{handle} administers {prefix} (admin group 200:0.NA/{prefix})")
    click.echo("its secret key, shown this once:")
    click.echo(secret)


@cli.command("deposit")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--server", required=True, metavar="URL", help="The doikit serve to deposit to.")
@click.option(
    "--token",
    "token_",
    required=True,
    envvar="DOIKIT_TOKEN",
    help="A token for the prefixes (or $DOIKIT_TOKEN).",
)
@click.option(
    "--format",
    "form",
    type=click.Choice(["auto", "jsonl", "csv"]),
    default="auto",
    show_default=True,
    help="auto: by the extension, else by the first line.",
)
def deposit_command(file: str, server: str, token_: str, form: str) -> None:
    """Deposit FILE (JSON Lines or CSV doi,url) in transactional chunks.

    Exit 0 when every line went in, 1 when some were rejected (each reported with its line
    number), 2 on a usage or connection error.
    """
    from doikit.server._deposit import DepositError, deposit  # noqa: PLC0415

    stream = click.open_file(file, "r", encoding="utf-8", errors="surrogateescape")
    first = ""
    is_csv = form == "csv" or (form == "auto" and file.lower().endswith(".csv"))
    lines: Iterable[str] = stream
    if form == "auto" and not is_csv and not file.lower().endswith((".jsonl", ".ndjson", ".json")):
        first = stream.readline()
        is_csv = not first.lstrip().startswith("{")
        lines = _chain_first(first, stream)
    total = Path(file).stat().st_size if file != "-" and sys.stderr.isatty() else 0
    bar = click.progressbar(length=total, label="depositing", file=sys.stderr) if total else None
    if bar is not None:
        lines = _counted(lines, bar)
    try:
        report = deposit(lines, is_csv=is_csv, server=server, token=token_)
    except DepositError as exc:
        click.echo(f"doikit: {exc}", err=True)
        sys.exit(2)
    finally:
        if bar is not None:
            bar.render_finish()
        stream.close()
    for rejection in report.rejected:
        click.echo(f"doikit: line {rejection.line}: {rejection.reason}", err=True)
    click.echo(f"deposited {report.accepted}, rejected {len(report.rejected)}", err=True)
    sys.exit(1 if report.rejected else 0)


def _chain_first(first: str, rest: Iterable[str]) -> Iterator[str]:
    if first:
        yield first
    yield from rest


def _counted(lines: Iterable[str], bar: ProgressBar[int]) -> Iterator[str]:
    """The lines, moving the progress *bar* by their size (bytes, for UTF-8 text)."""
    for line in lines:
        bar.update(len(line) if line.isascii() else len(line.encode("utf-8", "replace")))
        yield line


# --- resolution: resolve, which-ra, cite (extra "client") ---------------------------------


def _client_extra() -> None:
    try:
        import aiohttp  # noqa: F401, PLC0415
        import httpx  # noqa: F401, PLC0415
    except ImportError:
        raise click.UsageError(
            "this command needs the client extra: pip install 'doikit[client]'"
        ) from None


def _client_options(command: Callable[..., None]) -> Callable[..., None]:
    """The options every resolving command shares."""
    for option in reversed(
        [
            click.option(
                "--resolver",
                default="https://doi.org",
                show_default=True,
                envvar="DOIKIT_RESOLVER",
                help="The proxy to ask: doi.org, hdl.handle.net or a doikit serve "
                "(or $DOIKIT_RESOLVER).",
            ),
            click.option(
                "--mailto", help="An address for the User-Agent, as polite bulk clients send."
            ),
            click.option(
                "--timeout", default=10.0, show_default=True, help="Seconds for each request."
            ),
        ]
    ):
        command = option(command)
    return command


@cli.command()
@click.argument("texts", nargs=-1)
@_client_options
@click.option("--type", "types", multiple=True, help="Only values of this type (repeatable).")
@click.option(
    "--json", "as_json", is_flag=True, help="Write the record as one JSON object per input."
)
@click.option(
    "--concurrency",
    default=16,
    show_default=True,
    type=click.IntRange(1, 1024),
    help="Requests in flight at once.",
)
@click.option(
    "--rate",
    type=click.FloatRange(min=0, min_open=True),
    help="At most this many requests per second.",
)
@click.option(
    "--cache",
    "cache_path",
    type=click.Path(dir_okay=False),
    help="A SQLite file that keeps answers for their TTL.",
)
def resolve(
    *,
    texts: tuple[str, ...],
    resolver: str,
    mailto: str | None,
    timeout: float,
    types: tuple[str, ...],
    concurrency: int,
    rate: float | None,
    cache_path: str | None,
    as_json: bool,
) -> None:
    """Resolve DOI names: print the URL each resolves to, in input order.

    With --type, print the first value of that type instead; with --json, the record. Names
    come from the arguments or, with none (or -), one per line from stdin, streamed. A name
    that does not resolve is one line on stderr; the exit status is then 1.
    """
    _client_extra()
    from doikit._cli_resolve import run_resolve  # noqa: PLC0415

    sys.exit(
        run_resolve(
            texts,
            resolver=resolver,
            types=types,
            as_json=as_json,
            concurrency=concurrency,
            mailto=mailto,
            rate=rate,
            cache_path=cache_path,
            timeout=timeout,
        )
    )


@cli.command("which-ra")
@click.argument("texts", nargs=-1)
@_client_options
@click.option("--json", "as_json", is_flag=True, help="Write each answer as JSON.")
def which_ra(
    texts: tuple[str, ...], resolver: str, mailto: str | None, timeout: float, *, as_json: bool
) -> None:
    """Which Registration Agency each DOI name (or prefix) belongs to: name, tab, RA.

    Exit 1 when some name has no RA (invalid, or unknown to the resolver).
    """
    _client_extra()
    from doikit._cli_resolve import run_which_ra  # noqa: PLC0415

    names = (item.text.strip() for item in _inputs(() if texts == ("-",) else texts))
    sys.exit(
        run_which_ra(names, resolver=resolver, as_json=as_json, mailto=mailto, timeout=timeout)
    )


@cli.command()
@click.argument("doi")
@_client_options
@click.option(
    "--format",
    "form",
    type=click.Choice(["csl-json", "bibtex", "ris", "citation", "rdf-xml", "turtle"]),
    default="bibtex",
    show_default=True,
    help="The metadata format, by content negotiation.",
)
@click.option("--style", help="A CSL style for --format citation, such as apa.")
@click.option("--locale", help="A CSL locale for --format citation, such as en-US.")
def cite(
    *,
    doi: str,
    resolver: str,
    mailto: str | None,
    timeout: float,
    form: str,
    style: str | None,
    locale: str | None,
) -> None:
    """Print the metadata of DOI (a citation, BibTeX, CSL-JSON…) by content negotiation."""
    _client_extra()
    from doikit._cli_resolve import run_cite  # noqa: PLC0415
    from doikit._errors import DOIError  # noqa: PLC0415

    try:
        run_cite(
            doi,
            resolver=resolver,
            form=form,
            style=style,
            locale=locale,
            mailto=mailto,
            timeout=timeout,
        )
    except (DOIError, ValueError) as exc:
        click.echo(f"doikit: {doi}: {exc}", err=True)
        sys.exit(1)


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
