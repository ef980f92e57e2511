"""The directory's commands: ``serve``, ``token``, ``admin`` (server extra) and ``deposit``
(the core alone: its client is the standard library's ``http.client``)."""

from __future__ import annotations

import contextlib
import itertools
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from doikit._deposit import DepositError, deposit
from doikit.cli._input import decoded, require_extra

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from click._termui_impl import ProgressBar

    from doikit._lines import LineTooLong, NotUTF8
    from doikit.server.commands import SiteServer


#: The module each store imports only when it is used, and the extra that installs it.
_STORE_DRIVERS = {"asyncpg": "postgres"}


@contextlib.contextmanager
def _store_errors() -> Iterator[None]:
    """A store that cannot be opened, its driver's extra missing, or an address that cannot
    be listened on: one line on stderr and exit 2, not a traceback."""
    from doikit.server.commands import ListenError  # noqa: PLC0415
    from doikit.server.stores import StoreError  # noqa: PLC0415

    try:
        yield
    except (StoreError, ListenError) as exc:
        click.echo(f"doikit: {exc}", err=True)
        sys.exit(2)
    except ModuleNotFoundError as exc:
        extra = _STORE_DRIVERS.get(exc.name or "")
        if extra is not None and exc.name is not None:
            require_extra(extra, exc.name)  # says which extra to install, and exits 2
        raise


def _site_options(command: Callable[..., None]) -> Callable[..., None]:
    """The options that describe this server's Handle site (serve and admin site)."""
    command = click.option(
        "--mirror",
        is_flag=True,
        help="Publish the site as a mirror (queries only) and refuse changes, as on a"
        " PostgreSQL standby.",
    )(command)
    command = click.option(
        "--server-id",
        type=click.IntRange(1, 2**31 - 1),
        default=1,
        show_default=True,
        help="This server's id in its site.",
    )(command)
    return click.option(
        "--site-server",
        multiple=True,
        metavar="ID=HOST:PORT[:HTTPPORT]",
        help="A server of this server's site (repeat for each, this one included); default:"
        " this server alone.",
    )(command)


def _site_servers(given: tuple[str, ...]) -> list[SiteServer]:
    from doikit.server.commands import SiteServer  # noqa: PLC0415

    try:
        return [SiteServer.parse(text) for text in given]
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--site-server") from None


@click.command()
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
@click.option(
    "--demo",
    is_flag=True,
    help="Add the demo records (the seeds' example DOIs) that the store lacks; records "
    "already there, changed or not, are left as they are.",
)
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
@click.option(
    "--handle-port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Also serve the native Handle protocol on this port, UDP and TCP (2641 is its own).",
)
@click.option(
    "--handle-processes",
    type=click.IntRange(1, 64),
    default=None,
    help="Processes answering the Handle protocol on a SQLite store (default: one per CPU,"
    " at most 8); on PostgreSQL one.",
)
@_site_options
@click.option(
    "--upstream",
    is_flag=True,
    help="Answer names the store does not hold through the Handle System, from its published"
    " root, as doi.org does (cached by TTL; a stale answer for up to a day when it fails).",
)
@click.option(
    "--upstream-root",
    metavar="HOST:PORT",
    help="As --upstream, from this root server instead (a private Handle System).",
)
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
    handle_port: int | None,
    handle_processes: int | None,
    site_server: tuple[str, ...],
    server_id: int,
    mirror: bool,
    upstream: bool,
    upstream_root: str | None,
) -> None:
    """Run the DOI directory and resolver (doi.org-compatible).

    It says on stdout when it is ready; stop it with Ctrl-C (or SIGTERM).
    """
    require_extra("server", "starlette", "uvicorn")
    from doikit.handle import private_root  # noqa: PLC0415
    from doikit.server.commands import Limits, run  # noqa: PLC0415

    if upstream_root is not None:
        try:
            private_root(upstream_root)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--upstream-root") from None

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
            handle_port=handle_port,
            handle_processes=handle_processes,
            site_servers=_site_servers(site_server),
            server_id=server_id,
            mirror=mirror,
            upstream=upstream_root or ("" if upstream else None),
        )


@click.group()
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
    require_extra("server", "starlette", "uvicorn")
    from doikit._syntax import PREFIX_ONLY_RE  # noqa: PLC0415
    from doikit.server.commands import create_token  # noqa: PLC0415

    for prefix in prefixes:
        if not PREFIX_ONLY_RE.fullmatch(prefix):
            raise click.BadParameter(
                f"{prefix!r} is not a DOI prefix like 10.5555", param_hint="--prefix"
            )
    with _store_errors():
        click.echo(create_token(store, prefixes))


@click.group()
def admin() -> None:
    """Manage the Handle identities that may write with HTTP Basic (pyhandle, b2handle)."""


_IDENTITY = re.compile(r"([0-9]{1,10}):(.+)", re.ASCII | re.DOTALL)


@admin.command("create")
@click.argument("identity", metavar="INDEX:HANDLE")
@click.option(
    "--store", metavar="STORE", help="sqlite:///PATH or postgresql://… (default: as serve)"
)
@click.option("--prefix", required=True, help="The DOI prefix the identity administers.")
@click.option(
    "--public-key",
    type=click.Path(exists=True, dir_okay=False),
    help="Make the identity this public key (an RSA or DSA key file as HANDLE.NET's tools"
    " write it), an HS_PUBKEY value, instead of a new secret key.",
)
def admin_create(identity: str, store: str | None, prefix: str, public_key: str | None) -> None:
    """Create the Handle identity INDEX:HANDLE (as 300:10.5555/ADMIN) as an administrator of
    PREFIX, and print its secret key, alone on the last line; only a salted hash is kept.

    The identity's handle gets the key as an HS_SECKEY value at INDEX, readable by its
    admins only; the prefix's handle 0.NA/PREFIX gets the identity in its admin group
    (HS_VLIST 200), which is what Handle clients name in the HS_ADMIN of the names they
    create. Run again, it gives the identity a new key.
    """
    require_extra("server", "starlette", "uvicorn")
    from doikit._syntax import PREFIX_ONLY_RE  # noqa: PLC0415
    from doikit.server.commands import create_admin, handle_name  # noqa: PLC0415

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
        handle = handle_name(match.group(2))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="INDEX:HANDLE") from None
    try:
        with _store_errors():
            blob = None if public_key is None else Path(public_key).read_bytes()
            secret = create_admin(store, int(match.group(1)), handle, prefix, blob)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{match.group(1)}:{handle} administers {prefix} (admin group 200:0.NA/{prefix})")
    if public_key is None:
        click.echo("its secret key, shown this once:")
        click.echo(secret)


@click.command("deposit")
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
    is_csv = form == "csv" or (form == "auto" and file.lower().endswith(".csv"))
    stream = click.open_file(file, "rb")
    lines: Iterator[str | NotUTF8 | LineTooLong] = (text for _, text in decoded(stream))
    if form == "auto" and not is_csv and not file.lower().endswith((".jsonl", ".ndjson", ".json")):
        first = next(lines, "")
        is_csv = isinstance(first, str) and not first.lstrip().startswith("{")
        lines = itertools.chain([first] if first else [], lines)
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


def _counted(
    lines: Iterable[str | NotUTF8 | LineTooLong], bar: ProgressBar[int]
) -> Iterator[str | NotUTF8 | LineTooLong]:
    """The lines, moving the progress *bar* by their size (bytes, for UTF-8 text)."""
    for line in lines:
        if isinstance(line, str):
            bar.update(len(line) if line.isascii() else len(line.encode("utf-8")))
        yield line


@admin.command("site")
@click.option(
    "--store", metavar="STORE", help="sqlite:///PATH or postgresql://… (default: as serve)"
)
@click.option("--host", default="127.0.0.1", show_default=True, help="This server's address.")
@click.option("--handle-port", type=click.IntRange(1, 65535), default=2641, show_default=True)
@click.option(
    "--port", "http_port", type=click.IntRange(1, 65535), default=None, help="Its HTTP port."
)
@_site_options
def admin_site(  # noqa: PLR0917 - one per option
    store: str | None,
    host: str,
    handle_port: int,
    http_port: int | None,
    site_server: tuple[str, ...],
    server_id: int,
    mirror: bool,
) -> None:
    """Print the HS_SITE value to register at your prefix's handle 0.NA/PREFIX, in the
    Handle REST API's JSON, with the server key kept with STORE (made now if there is none).
    Give the options doikit serve is given."""
    require_extra("server", "starlette", "uvicorn")
    from doikit.server.commands import NativeConfig, site_value  # noqa: PLC0415

    servers = tuple(_site_servers(site_server))
    config = NativeConfig(host, handle_port, http_port, None, servers, server_id, mirror)
    with _store_errors():
        click.echo(site_value(store, config))
