"""How every command reads its input, and how it reports a bad one.

Inputs come from the arguments or, with none (or ``-``), one per line from standard input,
streamed, so a file of any size runs in constant memory. Lines are read by
:func:`doikit._lines.decode_line` in every command alike: a BOM before the first line is
dropped, ``\\r\\n`` ends a line as ``\\n`` does, and a line that is not UTF-8 is refused
with its number and the byte. Blank lines are skipped.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import IO, TYPE_CHECKING, Final

import click

from doikit import DOI, InvalidDOI
from doikit._errors import _short
from doikit._lines import NotUTF8, decode_line, without_ending

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator


class Input:
    """One input: where it came from, its text, or why it could not be read."""

    __slots__ = ("error", "label", "line", "text")

    def __init__(self, line: int, label: str, text: str, error: str | None = None) -> None:
        self.line = line
        self.label = label
        self.text = text
        self.error = error


def decoded(raw: Iterable[bytes]) -> Iterator[tuple[int, str | NotUTF8]]:
    """(line number, text with its ending) for each line of *raw*, or the line's
    :class:`NotUTF8` refusal."""
    for number, line in enumerate(raw, 1):
        try:
            yield number, decode_line(line, first=number == 1)
        except NotUTF8 as exc:
            yield number, exc


def stdin_lines(stream: IO[bytes] | None = None) -> Iterator[Input]:
    """The non-blank lines of standard input (or *stream*), without their endings."""
    for number, text in decoded(sys.stdin.buffer if stream is None else stream):
        if isinstance(text, NotUTF8):
            yield Input(number, f"line {number}", "", str(text))
        elif text.strip():
            yield Input(number, f"line {number}", without_ending(text))


def inputs(args: tuple[str, ...]) -> Iterator[Input]:
    """The arguments, or with none (or ``-`` alone) the lines of standard input."""
    if args and args != ("-",):
        for number, text in enumerate(args, 1):
            yield Input(number, f"argument {number}", text)
        return
    yield from stdin_lines()


def problem(item: Input, message: str) -> None:
    """Report a problem with *item*: one line on stderr."""
    click.echo(f"doikit: {item.label}: {message}", err=True)


def invalid_message(exc: InvalidDOI) -> str:
    """What an :class:`InvalidDOI` says on the command line: code, position, detail, input."""
    where = "" if exc.position is None else f" at position {exc.position}"
    return f"{exc.code}{where}: {exc.detail} (in {_short(exc.text)})"


if TYPE_CHECKING:
    _ParamType = click.ParamType[DOI, str]
else:  # (generic since click 8.2; subscripted only for the type checker)
    _ParamType = click.ParamType


class DOIType(_ParamType):
    """A DOI name in any presentation, as an argument or option: read by :class:`DOI`, a
    usage error (exit 2) saying what is wrong and where when it is not one."""

    name = "doi"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> DOI:
        """*value* as a :class:`DOI`."""
        if isinstance(value, DOI):
            return value
        try:
            return DOI(str(value))
        except InvalidDOI as exc:
            self.fail(invalid_message(exc), param, ctx)


DOI_TYPE: Final = DOIType()


def require_extra(extra: str, *modules: str) -> None:
    """Exit 2 with one line saying which extra to install when one of *modules* is missing
    (a command of an optional layer, run where only the core is installed)."""
    for module in modules:
        if importlib.util.find_spec(module) is None:
            click.echo(
                f"doikit: this command needs the {extra} extra: pip install 'doikit[{extra}]'",
                err=True,
            )
            sys.exit(2)
