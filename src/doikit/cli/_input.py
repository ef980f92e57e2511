"""How every command reads its input, and how it reports a bad one.

Inputs come from the arguments or, with none (or ``-``), one per line from standard input,
streamed, so a file of any size runs in constant memory. Lines are read by
:func:`doikit._lines.decode_line` in every command alike: a BOM before the first line is
dropped, ``\\r\\n`` ends a line as ``\\n`` does, and a line that is not UTF-8 is refused
with its number and the byte (the first such line; the others are counted, and the count
said once at the end). Blank lines are skipped. A line longer than
:data:`doikit._lines.MAX_LINE` is refused, read past in constant memory. A line with a NUL
byte is binary data, not names: it is said once, with the count of the lines left unread.
On a terminal, reading stdin says so first (one line on stderr), rather than waiting
silently.
"""

from __future__ import annotations

import importlib.util
import shlex
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

import click

from doikit import DOI, InvalidDOI
from doikit._doi import FORMS
from doikit._errors import _short, needs_extra
from doikit._lines import LineTooLong, NotUTF8, bounded_lines, decode_line, without_ending

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator


class Input:
    """One input: where it came from, its text, or why it could not be read (*error*, and
    its *code*: ``utf8``, ``too-long`` or ``binary``; *quiet*: a problem counted, not
    reported by itself)."""

    __slots__ = ("code", "error", "label", "line", "quiet", "text")

    def __init__(
        self,
        line: int,
        label: str,
        text: str,
        error: str | None = None,
        *,
        code: str = "utf8",
        quiet: bool = False,
    ) -> None:
        self.line = line
        self.label = label
        self.text = text
        self.error = error
        self.code = code
        self.quiet = quiet


def to_option(forms: Iterable[str]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The ``--to FORM`` option of a command that writes the *forms* of
    :data:`doikit._doi.FORMS` it names: its choices and its help, from that table."""
    names = list(forms)
    return click.option(
        "--to",
        "form",
        type=click.Choice(names),
        default="bare",
        show_default=True,
        help="The form to write: " + ", ".join(f"{n} ({FORMS[n].doc})" for n in names) + ".",
    )


#: The longest line a deposit reads (a record of that size is far beyond any real one; a
#: longer line is refused with its number and read past without being held).
MAX_RECORD_LINE: Final = 16 << 20


def decoded(
    raw: IO[bytes], limit: int = MAX_RECORD_LINE
) -> Iterator[tuple[int, str | NotUTF8 | LineTooLong]]:
    """(line number, text with its ending) for each line of *raw*, or the line's refusal:
    :class:`NotUTF8`, or :class:`LineTooLong` for one over *limit* bytes (read past, never
    held: memory stays bounded whatever the input)."""
    for number, line in enumerate(bounded_lines(raw, limit), 1):
        if isinstance(line, LineTooLong):
            yield number, line
            continue
        try:
            yield number, decode_line(line, first=number == 1)
        except NotUTF8 as exc:
            yield number, exc


def stdin_lines(stream: IO[bytes] | None = None) -> Iterator[Input]:
    """The non-blank lines of standard input (or *stream*), without their endings."""
    source = sys.stdin.buffer if stream is None else stream
    not_utf8 = 0
    for number, raw in enumerate(bounded_lines(source), 1):
        label = f"line {number}"
        if isinstance(raw, LineTooLong):
            yield Input(number, label, "", str(raw), code="too-long")
        elif b"\0" in raw:
            yield Input(number, label, "", _binary(raw, _lines_left(source)), code="binary")
            break
        else:
            try:
                text = decode_line(raw, first=number == 1)
            except NotUTF8 as exc:
                not_utf8 += 1
                yield Input(number, label, "", str(exc), quiet=not_utf8 > 1)
                continue
            if text.strip():
                yield Input(number, label, without_ending(text))
    if not_utf8 > 1:
        click.echo(f"doikit: {not_utf8 - 1:,} more lines are not UTF-8 (reported once)", err=True)


#: Bytes of binary input read at most to count its lines (a stream may never end).
_COUNTED_AT_MOST: Final = 1 << 28


def _lines_left(source: IO[bytes]) -> tuple[int, bool]:
    """The lines left in *source*, counted in constant memory, and whether that is all of
    them (counting stops after _COUNTED_AT_MOST bytes)."""
    count = read = 0
    last = b"\n"
    for chunk in iter(lambda: source.read(1 << 16), b""):
        count += chunk.count(b"\n")
        last = chunk[-1:]
        read += len(chunk)
        if read >= _COUNTED_AT_MOST:
            return count, False
    return count + (last != b"\n"), True


def _binary(raw: bytes, left: tuple[int, bool]) -> str:
    """What a line with a NUL byte says: the input is binary; how much of it is unread."""
    count, whole = left
    if not whole:
        after = f"; it and the rest (more than {_COUNTED_AT_MOST >> 20} MiB) were not read"
    elif count:
        after = f"; it and the {count:,} lines after it were not read"
    else:
        after = "; not read"
    return f"binary data, not lines of text (a NUL byte at byte {raw.index(0) + 1}){after}"


def inputs(args: tuple[str, ...]) -> Iterator[Input]:
    """The arguments, or with none (or ``-`` alone) the lines of standard input."""
    if args and args != ("-",):
        for number, text in enumerate(args, 1):
            yield Input(number, f"argument {number}", text)
        return
    terminal_hint("one name per line", "names as arguments")
    yield from stdin_lines()


def terminal_hint(what: str, instead: str) -> None:
    """When stdin is a terminal, say on stderr that the command reads *what* from it, or
    could take *instead* (so that a command run without arguments does not seem to hang)."""
    if sys.stdin.isatty():
        ctx = click.get_current_context(silent=True)
        command = ctx.command_path if ctx is not None else "doikit"
        click.echo(
            f"doikit: reading {what} from the terminal; end with Ctrl-D, "
            f"or give {instead} (see '{command} --help')",
            err=True,
        )


def file_hint(item: Input) -> str:
    """For an argument that names an existing file, how to read the file's lines instead
    (``doikit check refs.txt`` checks the name 'refs.txt')."""
    if not item.label.startswith("argument") or not Path(item.text).is_file():
        return ""
    ctx = click.get_current_context(silent=True)
    command = ctx.command_path if ctx is not None else "doikit"
    return (
        f"; {item.text} is a file: to read names from it, run: {command} < {shlex.quote(item.text)}"
    )


def problem(item: Input, message: str) -> None:
    """Report a problem with *item*: one line on stderr (unless it is only counted)."""
    if not item.quiet:
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
                "doikit: " + needs_extra("this command", extra),
                err=True,
            )
            sys.exit(2)
