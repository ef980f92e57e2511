"""Generate ``src/doikit/_isbn_ranges.py`` from the International ISBN Agency's range file.

Usage: ``python scripts/update_isbn_ranges.py scripts/data/RangeMessage.xml [--check]``

The agency publishes its ranges as RangeMessage.xml (https://www.isbn-international.org/
export_rangemessage.xml, free to download). To take newer ranges, save that file over
``scripts/data/RangeMessage.xml`` and run this script: it writes the module, naming the
file's serial number and date. With ``--check`` it writes nothing and exits 1 when the
module is not what the file makes (a test runs the same comparison).

What the module holds is what python-stdnum's ``update/isbn.py`` makes of the same file
(``stdnum/isbn.dat``): for each EAN.UCC prefix (``978``) and each registration group
(``978-3``, keyed ``9783``), the ranges of the element that follows, each range written
``low-high`` with its bounds cut to the element's length (the agency's rule "Range
3000000-3499999, Length 3" is ``300-349``), the ranges of length 0 (not yet assigned) left out.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

ROOT = Path(__file__).resolve().parent.parent
MODULE = ROOT / "src" / "doikit" / "_isbn_ranges.py"
DOWNLOAD = "https://www.isbn-international.org/export_rangemessage.xml"
_WIDTH = 100  # the project's line length (pyproject.toml, [tool.ruff])


def _text(element: ET.Element, path: str) -> str:
    found = element.find(path)
    if found is None or found.text is None:
        msg = f"the range file has no {path} in <{element.tag}>"
        raise ValueError(msg)
    return found.text.strip()


def _ranges(rules: ET.Element) -> str:
    """The assigned ranges of one prefix's or group's *rules*, as ``low-high,…``."""
    ranges = []
    for rule in rules.findall("./Rules/Rule"):
        length = int(_text(rule, "./Length"))
        low, high = _text(rule, "./Range").split("-")
        if not length:
            continue  # not yet assigned
        # the cut form holds the range only where the bounds end in zeros and nines
        if not (
            length <= 7
            and len(low) == len(high) == 7
            and low[length:] == "0" * (7 - length)
            and high[length:] == "9" * (7 - length)
        ):
            msg = f"the rule {low}-{high}, length {length}, of {_text(rules, './Prefix')}"
            raise ValueError(f"{msg} is not 7-digit bounds cut at the length")
        ranges.append(f"{low[:length]}-{high[:length]}")
    return ",".join(ranges)


def _entry(key: str, ranges: str, comment: str) -> list[str]:
    """One row of the table: a comment line, then ``"key": "…",`` wrapped after commas."""
    head = f'    "{key}": '
    strings: list[str] = []
    for part in ranges.split(","):
        room = _WIDTH - len(head if len(strings) == 1 else "    ") - 3  # quotes and a comma
        if strings and len(strings[-1]) + 1 + len(part) <= room:
            strings[-1] += f",{part}"
        else:
            strings.append(part)
    lines = [f"    # {comment}"]
    for i, string in enumerate(strings):
        last = i == len(strings) - 1
        indent = head if i == 0 else "    "
        lines.append(f'{indent}"{string}",' if last else f'{indent}"{string},"')
    return lines


def module_text(source: Path) -> str:
    """The text of ``_isbn_ranges.py`` made from the range file at *source*."""
    document = ET.parse(source).getroot()  # noqa: S314 - the agency's file, committed here
    serial = _text(document, "./MessageSerialNumber")
    date = _text(document, "./MessageDate")
    shown = source.resolve()
    shown_path = shown.relative_to(ROOT) if shown.is_relative_to(ROOT) else source
    rows: list[str] = []
    for prefix in document.findall("./EAN.UCCPrefixes/EAN.UCC"):
        key = _text(prefix, "./Prefix")
        rows += _entry(key, _ranges(prefix), f"{key}: {_text(prefix, './Agency')}")
    for group in document.findall("./RegistrationGroups/Group"):
        name = _text(group, "./Prefix")  # '978-3'
        ranges = _ranges(group)
        if ranges:
            rows += _entry(name.replace("-", ""), ranges, f"{name}: {_text(group, './Agency')}")
    return "\n".join(
        [
            '"""The ISBN ranges of the International ISBN Agency, for :mod:`doikit._hyphens`.',
            "",
            "Generated: do not edit. Made by",
            f"``python scripts/update_isbn_ranges.py {shown_path.as_posix()}``",
            "from the agency's range file, RangeMessage.xml",
            f"({DOWNLOAD}),",
            f"serial {serial}, dated {date}.",
            "",
            "For each EAN.UCC prefix (``978``) and each registration group (``978-3``, keyed",
            "``9783``): the ranges of the element that follows, ``low-high``, the length of a",
            "bound being the length of the element; numbers in no range are not yet assigned.",
            '"""',
            "",
            "from typing import Final",
            "",
            f'SERIAL: Final = "{serial}"',
            f'DATE: Final = "{date}"',
            "",
            "RANGES: Final = {",
            *rows,
            "}",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    """Write the module (or, with --check, compare it); the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="the agency's RangeMessage.xml")
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 if stale")
    arguments = parser.parse_args(argv)
    text = module_text(arguments.source)
    if arguments.check:
        if MODULE.read_text(encoding="utf-8") != text:
            print(f"{MODULE.relative_to(ROOT)} is not what {arguments.source} makes")
            return 1
        return 0
    MODULE.write_text(text, encoding="utf-8")
    print(f"wrote {MODULE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
