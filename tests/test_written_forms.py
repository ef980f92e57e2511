"""doikit._doi.FORMS is the one table of written forms: the CLI's choices, outputs and help
read it, so a form added there is offered and written everywhere."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from doikit import DOI, find_all
from doikit._doi import DEFAULT_RESOLVER, FORMS
from doikit.cli import cli

SAMPLES = [
    "10.1000/182",
    "10.1000/ABC",
    "10.1000/a#b c",
    "10.123/456ABC/zyz",
    "10.26321/Á.GUTIÉRREZ",
    "10.1002/(SICI)1097-0142(19960401)77:7<1356::AID-CNCR20>3.0.CO;2-#",
]
DOCS = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def _choices(command: str) -> list[str]:
    option = next(p for p in cli.commands[command].params if p.name == "form")
    assert isinstance(option.type, click.Choice)
    return list(option.type.choices)


def test_the_commands_offer_the_forms_of_the_table() -> None:
    assert _choices("convert") == list(FORMS)
    assert _choices("extract") == [name for name, form in FORMS.items() if form.short]


@pytest.mark.parametrize("command", ["convert", "extract"])
def test_the_help_says_what_each_form_is(command: str) -> None:
    shown = " ".join(CliRunner().invoke(cli, [command, "--help"]).output.split())
    for name in _choices(command):
        assert f"{name} ({FORMS[name].doc})" in shown


@pytest.mark.parametrize("text", SAMPLES)
@pytest.mark.parametrize("name", list(FORMS))
def test_convert_writes_what_the_table_writes(name: str, text: str) -> None:
    done = CliRunner().invoke(cli, ["convert", "--to", name, "--json", text])
    assert done.exit_code == 0, done.output
    doi = DOI(text)
    assert json.loads(done.output)[name] == FORMS[name].write(doi, DEFAULT_RESOLVER, "recommended")


def test_convert_url_takes_the_resolver_and_encoding() -> None:
    args = ["--to", "url", "--resolver", "http://localhost:8000", "--encoding", "mandatory"]
    done = CliRunner().invoke(cli, ["convert", *args, "10.1000/a+b"])
    written = FORMS["url"].write(DOI("10.1000/a+b"), "http://localhost:8000", "mandatory")
    assert done.output == written + "\n" == "http://localhost:8000/10.1000/a+b\n"


@pytest.mark.parametrize("name", [name for name, form in FORMS.items() if form.short])
def test_extract_writes_what_the_table_writes(name: str) -> None:
    text = "".join(f"{DOI(sample).to_uri()}\n" for sample in SAMPLES) + "and doi:10/abc\n"
    done = CliRunner().invoke(cli, ["extract", "--short", "--to", name], input=text)
    form = FORMS[name]
    written = [form.write(found.doi, DEFAULT_RESOLVER, "recommended") for found in find_all(text)]
    assert len(written) == len(SAMPLES)
    assert done.output.splitlines() == [*written, (form.head or "") + "10/abc"]


@pytest.mark.parametrize("text", SAMPLES)
def test_inspect_shows_every_presentation_of_the_table(text: str) -> None:
    done = CliRunner().invoke(cli, ["inspect", "--json", text])
    record = json.loads(done.output)
    doi = DOI(text)
    for name, form in FORMS.items():
        if form.head is not None:
            assert record[name] == form.write(doi, DEFAULT_RESOLVER, "recommended")
    assert record["key"] == doi.key


@pytest.mark.parametrize("text", SAMPLES)
@pytest.mark.parametrize("name", list(FORMS))
def test_every_form_reads_back_as_the_same_doi(name: str, text: str) -> None:
    doi = DOI(text)
    written = FORMS[name].write(doi, DEFAULT_RESOLVER, "recommended")
    if name == "key":
        assert written == doi.key
        return
    assert DOI(written) == doi
    assert written.startswith(FORMS[name].head or "")


def test_the_docs_name_every_form() -> None:
    page = DOCS.read_text(encoding="utf-8")
    for name in FORMS:
        assert f"`{name}`" in page, name
