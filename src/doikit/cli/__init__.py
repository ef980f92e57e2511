"""The ``doikit`` command line: thin commands over the library.

Inputs come from the arguments or, with none, one per line from standard input, streamed,
so a file of any size runs in constant memory; every command reads them the same way
(:mod:`doikit.cli._input`). Exit status: 0 when every input was valid (for ``compare``:
equivalent), 1 otherwise, 2 for a usage error. A problem is one line on stderr, never a
traceback; a command whose extra is not installed says which one to install.

The commands by job: names (:mod:`~doikit.cli._names`, the core alone), extraction
(:mod:`~doikit.cli._extract`), the directory (:mod:`~doikit.cli._directory`) and resolution
(:mod:`~doikit.cli._client`).
"""

from __future__ import annotations

import os
import sys

import click

from doikit import __version__
from doikit._doi import BUILD
from doikit.cli._client import cite, resolve, which_ra
from doikit.cli._directory import admin, deposit_command, serve, token
from doikit.cli._extract import extract
from doikit.cli._names import check, compare, convert, inspect


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    __version__,
    prog_name="doikit",
    message=f"%(prog)s, version %(version)s ({BUILD})",
)
def cli() -> None:
    """doikit: DOI names: check, convert, compare, inspect, extract, resolve and serve them."""


for _command in (
    check,
    convert,
    compare,
    inspect,
    extract,
    serve,
    token,
    admin,
    deposit_command,
    resolve,
    which_ra,
    cite,
):
    cli.add_command(_command)


def _say(exc: click.ClickException) -> str:
    """A click error as one line: what and where, and for a usage error where to read more.

    (click's own form is three or four lines, usage first; doikit reports every problem
    in one line on stderr.)
    """
    text = exc.format_message()
    if isinstance(exc, click.UsageError) and exc.ctx is not None:
        text += f" (see '{exc.ctx.command_path} --help')"
    return f"doikit: {text}"


def main() -> None:
    """Entry point: run the CLI; an error is one line on stderr; a closed pipe or Ctrl-C
    ends quietly."""
    try:
        cli.main(prog_name="doikit", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        click.echo(_say(exc), err=True)
        sys.exit(exc.exit_code)
    except click.Abort:
        sys.exit(130)
    except BrokenPipeError:
        # Reading end closed (doikit … | head): stop without a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)


__all__ = ["cli", "main"]
