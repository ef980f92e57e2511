"""``check``, ``convert``, ``compare`` and ``inspect``: DOI names, with the core alone."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from doikit import DOI, InvalidDOI
from doikit._doi import DEFAULT_RESOLVER, FORMS
from doikit.cli._input import (
    DOI_TYPE,
    Input,
    file_hint,
    inputs,
    invalid_message,
    problem,
    to_option,
)

if TYPE_CHECKING:
    from collections.abc import Callable


def _record(item: Input, **fields: object) -> str:
    return json.dumps({"line": item.line, "input": item.text, **fields}, ensure_ascii=False)


def _each(args: tuple[str, ...], *, as_json: bool, handle: Callable[[DOI], dict[str, Any]]) -> int:
    """Run *handle* on every input; print its result; return the exit status."""
    status = 0
    for item in inputs(args):
        if item.error is not None:
            problem(item, item.error)
            if as_json:
                click.echo(_record(item, valid=False, code=item.code, message=item.error))
            status = 1
            continue
        try:
            doi = DOI(item.text)
        except InvalidDOI as exc:
            problem(item, invalid_message(exc) + file_hint(item))
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


@click.command()
@click.argument("texts", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Write one JSON object per input.")
def check(texts: tuple[str, ...], *, as_json: bool) -> None:
    """Check that each input is a DOI name (exit 1 if any is not)."""
    sys.exit(_each(texts, as_json=as_json, handle=lambda d: {"doi": str(d)}))


@click.command()
@click.argument("texts", nargs=-1)
@to_option(FORMS)
@click.option(
    "--resolver", default=DEFAULT_RESOLVER, show_default=True, help="Resolver for --to url."
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
    write = FORMS[form].write

    def handle(doi: DOI) -> dict[str, Any]:
        out = write(doi, resolver, "mandatory" if encoding == "mandatory" else "recommended")
        return {"doi": str(doi), form: out} if as_json else {"text": out}

    sys.exit(_each(texts, as_json=as_json, handle=handle))


@click.command()
@click.argument("first", type=DOI_TYPE)
@click.argument("second", type=DOI_TYPE)
@click.option("--json", "as_json", is_flag=True, help="Write the answer as JSON.")
def compare(first: DOI, second: DOI, *, as_json: bool) -> None:
    """Exit 0 when FIRST and SECOND name the same DOI, 1 when not (2 when one is not a DOI)."""
    dois = [first, second]
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
        **{
            name: form.write(doi, DEFAULT_RESOLVER, "recommended")
            for name, form in FORMS.items()
            if form.head is not None  # every presentation
        },
        "warnings": [
            {"code": w.code, "position": w.position, "message": w.message} for w in doi.warnings()
        ],
    }


@click.command()
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
