"""The index of the extractor's heuristics: one row per named rule, as packaging's and h11's
named rule tables do. Each row says what the rule is and why, shows it on an example, names
its evidence (the test vectors of tests/vectors/ and the snippets of the wild corpus,
tests/corpus/wild.jsonl, it was fitted to, and the tests that hold it) and the code that
holds it on each path a candidate can take (_rule.PATHS).

- ``pattern``: the candidate pattern (_pattern), run by the regex engine in C: it decides the
  common DOI whole, or leaves what the rule is about to the quick path or the walk;
- ``quick``: the quick path (_quick), for a candidate of the common shape;
- ``walk``: the general walk (_walk, _run, _make, _url), the authority;
- ``C scan``: the accelerator's loop (src/doikit/_c/python/scan.c), which trims a decided
  candidate itself, decides one of the common shape by the quick path in C (quick.c: it
  reads the rule, asks the Python code named, or leaves the candidate), reads the rest of
  a whole text's candidates by the walk in C (walk.c, alike), and hands what they leave to
  _decide or _walked.

The code names each rule where it holds it, as ``(rule: name)`` in a comment or docstring;
tests/test_extract_rules.py checks that every rule so named is a row here, that every row
is named in the code, and that the code, vectors, snippets and tests a row names exist.
docs/extraction.md's rule tables are made from these rows
(``python -m doikit._extract._rules docs/extraction.md`` writes them; the test checks them).
Texts are Markdown, as a table's cell writes them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

from doikit._extract._rule import PATHS, Rule
from doikit._extract._rules_prose import PROSE
from doikit._extract._rules_wild import WILD

if TYPE_CHECKING:
    from collections.abc import Iterable

# (the seeds' prose first, as docs/extraction.md shows them)
RULES: Final[tuple[Rule, ...]] = PROSE + WILD
RULE_BY_NAME: Final = {rule.name: rule for rule in RULES}


def _cell(items: Iterable[str]) -> str:
    return ", ".join(f"`{item}`" for item in items)


def rules_table(rules: Iterable[Rule]) -> str:
    """The Markdown table of *rules*: what each says, why, and an example."""
    lines = ["| rule | why | example | found |", "|---|---|---|---|"]
    lines += [
        f"| {rule.says} (`{rule.name}`) | {rule.why} | {rule.example} | {rule.found} |"
        for rule in rules
    ]
    return "\n".join(lines) + "\n"


def index_table() -> str:
    """The Markdown table of every rule's evidence and the code that holds it on each path."""
    lines = [
        "| rule | vectors | wild corpus | tests | " + " | ".join(PATHS) + " |",
        "|---" * (4 + len(PATHS)) + "|",
    ]
    for rule in RULES:
        tests = (test.split("::")[-1] for test in rule.tests)
        paths = " | ".join(_cell(rule.paths.get(path, ())) for path in PATHS)
        evidence = f"{_cell(rule.vectors)} | {_cell(rule.corpus)} | {_cell(tests)}"
        lines.append(f"| `{rule.name}` | {evidence} | {paths} |")
    return "\n".join(lines) + "\n"


TABLES: Final = {
    "prose": lambda: rules_table(PROSE),
    "wild": lambda: rules_table(WILD),
    "index": index_table,
}
# Where a page holds a generated table: between these lines.
_REGION: Final = re.compile(
    r"(<!-- rules table: (\w+) \(generated\b[^\n]*-->\n)(.*?)(<!-- end of the rules table -->)",
    re.DOTALL,
)


def with_tables(page: str) -> str:
    """*page* with each generated region holding its table as the rows make it now."""
    return _REGION.sub(lambda m: m[1] + TABLES[m[2]]() + m[4], page)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        path = Path(name)
        path.write_text(with_tables(path.read_text(encoding="utf-8")), encoding="utf-8")
