"""Precision and recall of DOI extraction on the labeled corpora, for doikit and its peers.

    python benchmarks/extract_quality.py [--misses] [--written]
    python benchmarks/extract_quality.py --wild [--part heldout|tuning|all] [--misses]

--wild scores the corpus of real third-party text (tests/corpus/wild.jsonl: snippets
collected from packages and stored public pages, labeled by reading), one row per kind of
source and overall, F1 for each extractor. Its split into a tuning part and a held-out part
is by source (the ``group`` of a snippet: its repository, package or site), fixed by a hash
(:func:`part_of`); rules are fitted to the tuning part only, and --misses lists misses of
the tuning part only unless --part heldout is given.

Corpus: tests/corpus/extract_corpus.jsonl (made by make_extract_corpus.py) and
tests/corpus/extract_written.jsonl (written by hand: layouts seen in real documents, each row
naming the one it follows; with --written, only these are scored). A prediction is
right when it equals a label under ASCII case folding (how DOIs compare; the peers that
lower-case are not penalized for it), counted per occurrence. Peers are scored when they
import: Crossref's recommended pattern (always), python-doi's find_doi_in_text (first
match only, by design), refextract's identify_and_tag_DOI. Install the optional peers with
``pip install python-doi refextract``. Targets for doikit (issue 3): precision >= 0.99,
recall >= 0.98.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import importlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import doikit

# The DOI equivalence (ASCII-only folding) on plain strings: peers may return non-DOIs.
from doikit._syntax import fold

if TYPE_CHECKING:
    from collections.abc import Callable

CORPUS: Final = Path(__file__).resolve().parent.parent / "tests" / "corpus"
FILES: Final = ("extract_corpus.jsonl", "extract_written.jsonl")
WILD: Final = CORPUS / "wild.jsonl"
# Crossref's recommended pattern ("DOIs and matching regular expressions", 2015), as published.
CROSSREF: Final = re.compile(r"10.\d{4,9}/[-._;()/:A-Z0-9]+", re.IGNORECASE)


def load(*, written_only: bool = False) -> list[dict[str, Any]]:
    """The corpus rows (only the hand-written ones with *written_only*)."""
    rows: list[dict[str, Any]] = []
    for name in FILES[1:] if written_only else FILES:
        with (CORPUS / name).open(encoding="utf-8") as lines:
            rows.extend(json.loads(line) for line in lines)
    return rows


def part_of(group: str) -> str:
    """The part a snippet of *group* belongs to: a hash of the group, fixed once, so that
    a source is wholly in one part and no choice of ours places it.

    >>> part_of("en.wikipedia.org"), part_of("pypi:habanero")
    ('heldout', 'tuning')
    """
    digest = hashlib.sha256(("doikit-wild:" + group).encode()).digest()
    return "heldout" if digest[0] % 2 else "tuning"


def load_wild(part: str = "heldout") -> list[dict[str, Any]]:
    """The rows of the wild corpus in *part* ("tuning", "heldout" or "all")."""
    with WILD.open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    return [row for row in rows if part in ("all", part_of(row["group"]))]


def doikit_extract(text: str) -> list[str]:
    """The answer of doikit.find_all."""
    return [str(found.doi) for found in doikit.find_all(text)]


def crossref_extract(text: str) -> list[str]:
    """Crossref's recommended pattern, scanning."""
    return [match.group() for match in CROSSREF.finditer(text)]


def _peers() -> dict[str, Callable[[str], list[str]]]:
    peers: dict[str, Callable[[str], list[str]]] = {"crossref pattern": crossref_extract}
    try:
        python_doi = importlib.import_module("doi")

        def first(text: str) -> list[str]:
            found = python_doi.find_doi_in_text(text)
            return [found] if found else []

        peers["python-doi"] = first
    except ImportError:
        print("python-doi is not installed: not scored")
    try:
        tag = importlib.import_module("refextract.references.tag")
        peers["refextract"] = lambda text: list(tag.identify_and_tag_DOI(text)[1])
    except ImportError:
        print("refextract is not installed: not scored")
    return peers


def score(
    rows: list[dict[str, Any]], extract: Callable[[str], list[str]]
) -> tuple[float, float, list[tuple[str, list[str], list[str]]]]:
    """Precision, recall, and the rows where *extract* differs from the label."""
    true_positives = predicted = gold = 0
    misses = []
    for row in rows:
        try:
            answer = extract(row["text"])
        except Exception:  # noqa: BLE001 - a peer that crashes scores nothing on the row
            answer = []
        expected = collections.Counter(fold(name) for name in row["dois"])
        got = collections.Counter(fold(name) for name in answer)
        true_positives += sum((expected & got).values())
        predicted += sum(got.values())
        gold += sum(expected.values())
        if expected != got:
            misses.append((row["id"], row["dois"], answer))
    precision = true_positives / predicted if predicted else 1.0
    recall = true_positives / gold if gold else 1.0
    return precision, recall, misses


def wild_table(part: str, *, misses: bool) -> None:
    """Per kind of source: doikit's precision and recall, and every extractor's F1."""
    rows = load_wild(part)
    candidates = {"doikit": doikit_extract, **_peers()}
    kinds = sorted({row["kind"] for row in rows})
    gold = sum(len(row["dois"]) for row in rows)
    groups = len({row["group"] for row in rows})
    print(f"wild corpus, {part} part: {len(rows)} snippets, {gold} DOIs, {groups} sources")
    names = list(candidates)
    print(
        f"{'kind':12} {'rows':>5} {'DOIs':>5} {'P':>6} {'R':>6}", *(f"{n[:16]:>16}" for n in names)
    )
    for kind in [*kinds, "all"]:
        subset = [row for row in rows if kind in ("all", row["kind"])]
        cells = []
        for name in names:
            precision, recall, _ = score(subset, candidates[name])
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
            cells.append(f"{f1:>16.3f}")
            if name == "doikit":
                shown = f"{precision:>6.3f} {recall:>6.3f}"
        dois = sum(len(row["dois"]) for row in subset)
        print(f"{kind:12} {len(subset):>5} {dois:>5} {shown}", *cells)
    print("(P, R: doikit's precision and recall; the other columns are F1)")
    if misses:
        for row_id, expected, got in score(rows, doikit_extract)[2]:
            print(f"  {row_id}: expected {expected}, got {got}")


def main() -> None:
    """Print the table (and, with --misses, doikit's misses)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--misses", action="store_true", help="list doikit's wrong rows")
    parser.add_argument(
        "--written", action="store_true", help="score only the hand-written real-layout rows"
    )
    parser.add_argument("--wild", action="store_true", help="score the wild corpus by kind")
    parser.add_argument("--part", choices=["heldout", "tuning", "all"], default="heldout")
    args = parser.parse_args()
    if args.wild:
        wild_table(args.part, misses=args.misses)
        return
    rows = load(written_only=args.written)
    candidates = {"doikit": doikit_extract, **_peers()}
    gold = sum(len(row["dois"]) for row in rows)
    print(f"{len(rows)} snippets, {gold} DOIs")
    print(f"{'extractor':18} {'precision':>9} {'recall':>7} {'F1':>6} {'rows right':>11}")
    for name, extract in candidates.items():
        precision, recall, misses = score(rows, extract)
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        right = len(rows) - len(misses)
        print(f"{name:18} {precision:>9.3f} {recall:>7.3f} {f1:>6.3f} {right:>6}/{len(rows)}")
        if args.misses and name == "doikit":
            for row_id, expected, got in misses:
                print(f"  {row_id}: expected {expected}, got {got}")


if __name__ == "__main__":
    main()
