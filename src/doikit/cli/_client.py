"""The resolving commands: ``resolve``, ``which-ra`` and ``cite`` (client extra).

Declared here with click alone; the work is in :mod:`doikit.cli._resolve`, imported only
when a command runs.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from doikit._doi import DEFAULT_RESOLVER
from doikit.cli._input import DOI_TYPE, inputs, require_extra

if TYPE_CHECKING:
    from collections.abc import Callable

    from doikit import DOI


def _client_options(command: Callable[..., None]) -> Callable[..., None]:
    """The options every resolving command shares."""
    for option in reversed(
        [
            click.option(
                "--resolver",
                default=DEFAULT_RESOLVER.rstrip("/"),  # the client's DEFAULT_BASE_URL
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


@click.command()
@click.argument("texts", nargs=-1)
@_client_options
@click.option(
    "--type",
    "types",
    multiple=True,
    help="Only values of this type, ASCII case ignored; URL. also takes URL.mirror (repeatable).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Write the record as one JSON object per input."
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 65536),
    help="Requests in flight at once [default: 16; 4096 with --native, at most 128 of them"
    " over UDP to one server].",
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
@click.option(
    "--native",
    is_flag=True,
    help="Resolve over the native Handle protocol from the root down (UDP, TCP, HTTP), "
    "without a proxy; --timeout is then the time of one whole resolution.",
)
@click.option(
    "--root",
    metavar="HOST:PORT",
    help="With --native: a private root server instead of the Global Handle Registry.",
)
@click.option(
    "--certify",
    is_flag=True,
    help="With --native: ask for signed answers and refuse any that do not verify.",
)
def resolve(
    *,
    texts: tuple[str, ...],
    resolver: str,
    mailto: str | None,
    timeout: float,
    types: tuple[str, ...],
    concurrency: int | None,
    rate: float | None,
    cache_path: str | None,
    as_json: bool,
    native: bool,
    root: str | None,
    certify: bool,
) -> None:
    """Resolve DOI names: print the URL each resolves to, in input order.

    With --type, print the first value of that type instead; with --json, the record. Names
    come from the arguments or, with none (or -), one per line from stdin, streamed. A name
    that does not resolve is one line on stderr; the exit status is then 1.
    """
    require_extra("client", "httpx", "aiohttp")
    from doikit.cli._resolve import run_resolve  # noqa: PLC0415

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
            native=native or root is not None,
            root=root,
            certify=certify,
        )
    )


@click.command("which-ra")
@click.argument("texts", nargs=-1)
@_client_options
@click.option("--json", "as_json", is_flag=True, help="Write each answer as JSON.")
def which_ra(
    texts: tuple[str, ...], resolver: str, mailto: str | None, timeout: float, *, as_json: bool
) -> None:
    """Which Registration Agency each DOI name (or prefix) belongs to: name, tab, RA.

    Exit 1 when some name has no RA (invalid, or unknown to the resolver).
    """
    require_extra("client", "httpx", "aiohttp")
    from doikit.cli._resolve import run_which_ra  # noqa: PLC0415

    names = (item.text.strip() for item in inputs(texts) if item.error is None)
    sys.exit(
        run_which_ra(names, resolver=resolver, as_json=as_json, mailto=mailto, timeout=timeout)
    )


@click.command()
@click.argument("doi", type=DOI_TYPE)
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
    doi: DOI,
    resolver: str,
    mailto: str | None,
    timeout: float,
    form: str,
    style: str | None,
    locale: str | None,
) -> None:
    """Print the metadata of DOI (a citation, BibTeX, CSL-JSON…) by content negotiation."""
    require_extra("client", "httpx", "aiohttp")
    from doikit._errors import DOIError  # noqa: PLC0415
    from doikit.cli._resolve import run_cite  # noqa: PLC0415

    try:
        run_cite(
            str(doi),
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
