"""A row of the index of the extractor's heuristics (_rules), and the paths that hold them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Mapping

# The paths a candidate can take (the package's docstring): the candidate pattern, run by the
# regex engine in C; the quick path; the general walk, the authority; the C accelerator's
# loop (src/doikit/_c/python/scan.c), which trims a candidate the pattern has decided, its
# quick path (quick.c), which decides a candidate of the common shape or leaves it, and its
# walk (walk.c), which reads what the quick path leaves in a whole text, or leaves it.
PATHS: Final = ("pattern", "quick", "walk", "C scan")


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One heuristic of the extractor: what it *says* and *why*, an *example* and what is
    *found* in it (Markdown, as a table's cell writes it), its evidence, and the code that
    holds it on each path."""

    name: str
    says: str
    why: str
    example: str
    found: str
    # ids of the cases of tests/vectors/extract_prose.json and extract_wild.json
    vectors: tuple[str, ...] = ()
    # ids of the snippets of tests/corpus/wild.jsonl
    corpus: tuple[str, ...] = ()
    # tests, each as its module of tests/, '::' and its function's name
    tests: tuple[str, ...] = ()
    # path (of PATHS) -> the code that holds the rule there: "<module of doikit._extract>.<name>",
    # or "<file>.c:<function>" for the C scan (scan.c, rules.c, quick.c, walk.c, make.c)
    paths: Mapping[str, tuple[str, ...]]
