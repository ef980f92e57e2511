"""The index of the extractor's heuristics (doikit._extract._rules) against what it indexes:
the rules the code names, the code each row says holds it, the vectors, corpus snippets and
tests it names as evidence, and the tables of docs/extraction.md made from it. Also that the
package answers for every part of it that others import by name, as the one module did."""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import pytest

from doikit import _extract
from doikit._extract._rule import PATHS, Rule
from doikit._extract._rules import RULES, with_tables

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "doikit" / "_extract"
C_SOURCES = ROOT / "src" / "doikit" / "_c" / "python"
VECTOR_FILES = ("extract_prose.json", "extract_wild.json")
# How the code names a rule where it holds it: '(rule: name)', in a comment or a docstring.
MARKER = re.compile(r"\(rule:\s+([a-z0-9-]+)")
NAMES = [rule.name for rule in RULES]


def _vector_ids() -> set[str]:
    ids: set[str] = set()
    for name in VECTOR_FILES:
        cases = json.loads((ROOT / "tests" / "vectors" / name).read_text(encoding="utf-8"))
        ids.update(case["id"] for case in cases["cases"])
    return ids


def _marked() -> dict[str, set[str]]:
    """Each rule named in the package's code (the index's own modules aside): where."""
    marked: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.glob("*.py")):
        if not path.name.startswith("_rule"):
            for name in MARKER.findall(path.read_text(encoding="utf-8")):
                marked.setdefault(name, set()).add(path.name)
    return marked


def test_every_rule_has_one_row_with_evidence_and_a_path() -> None:
    assert len(set(NAMES)) == len(NAMES)
    for rule in RULES:
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", rule.name), rule.name
        assert rule.says, rule.why
        assert rule.vectors or rule.tests, rule.name
        assert rule.paths, rule.name
        assert set(rule.paths) <= set(PATHS), rule.name


def test_every_rule_the_code_names_is_in_the_index_and_every_row_is_named() -> None:
    marked = _marked()
    assert sorted(set(marked) - set(NAMES)) == []
    assert sorted(set(NAMES) - set(marked)) == []


@pytest.mark.parametrize("rule", RULES, ids=NAMES)
def test_the_code_a_row_names_exists(rule: Rule) -> None:
    for path, names in rule.paths.items():
        assert names, (rule.name, path)
        for name in names:
            source, in_c, function = name.partition(".c:")
            if in_c:  # a function of the C accelerator's extractor (scan.c, rules.c, quick.c…)
                c_file = C_SOURCES / f"{source}.c"
                if not C_SOURCES.exists():  # (an installed package has no C sources)
                    continue
                assert re.search(rf"\b{function}\(", c_file.read_text(encoding="utf-8")), name
                continue
            module, _, attribute = name.partition(".")
            assert hasattr(importlib.import_module(f"doikit._extract.{module}"), attribute), name


def test_the_evidence_a_row_names_exists() -> None:
    vectors = _vector_ids()
    corpus = {
        json.loads(line)["id"]
        for line in (ROOT / "tests" / "corpus" / "wild.jsonl").read_text("utf-8").splitlines()
    }
    for rule in RULES:
        assert set(rule.vectors) <= vectors, rule.name
        assert set(rule.corpus) <= corpus, rule.name
        for test in rule.tests:
            module, _, function = test.partition("::")
            tree = ast.parse((ROOT / "tests" / module).read_text(encoding="utf-8"))
            defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
            assert function in defined, test


def test_every_extraction_vector_is_some_rules_evidence() -> None:
    assert sorted(_vector_ids() - {vector for rule in RULES for vector in rule.vectors}) == []


def test_the_docs_tables_are_made_from_the_index() -> None:
    page = (ROOT / "docs" / "extraction.md").read_text(encoding="utf-8")
    assert page.count("<!-- rules table: ") == 3
    # (if this fails: python -m doikit._extract._rules docs/extraction.md)
    assert with_tables(page) == page


# What the code, tests and benchmarks take from doikit._extract by name: imported from it, or
# read as a private attribute of it (also under an alias: 'from doikit import _extract as x').
IMPORTED = re.compile(r"from doikit\._extract import (?:\(([^)]*)\)|([\w, ]+))")
ALIAS = re.compile(r"from doikit import _extract as (\w+)")


def test_the_package_answers_for_every_part_imported_from_it_by_name() -> None:
    used: set[str] = set()
    sources = [*ROOT.glob("tests/*.py"), *ROOT.glob("benchmarks/*.py"), *ROOT.glob("src/**/*.py")]
    for path in sources:
        text = path.read_text(encoding="utf-8")
        for inside, line in IMPORTED.findall(text):
            used.update(name.split(" as ")[0].strip() for name in (inside or line).split(","))
        for alias in {"_extract", *ALIAS.findall(text)}:
            used.update(re.findall(rf"\b{alias}\.(_\w+)", text))
    assert {"_scan_python", "_JOINS_AFTER", "Found"} <= used
    assert sorted(name for name in used if not hasattr(_extract, name)) == []
