"""Extraction quality on the labeled corpus (tests/corpus/extract_corpus.jsonl).

The targets of issue 3 are held here as a regression test; benchmarks/extract_quality.py
prints the full table, peers included.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

import doikit

CORPUS = Path(__file__).parent / "corpus" / "extract_corpus.jsonl"


def test_corpus_is_large_and_covers_every_style() -> None:
    rows = [json.loads(line) for line in CORPUS.read_text("utf-8").splitlines()]
    assert len(rows) >= 300
    assert {row["style"] for row in rows} >= {
        "apa",
        "vancouver",
        "chicago",
        "ieee",
        "crossref-unstructured",
        "bibtex",
        "ris",
        "html",
        "markdown",
        "prose",
        "pdf-line-break",
        "negative",
    }


def test_precision_and_recall_meet_the_targets() -> None:
    true_positives = predicted = gold = 0
    wrong = []
    for line in CORPUS.read_text("utf-8").splitlines():
        row = json.loads(line)
        expected = collections.Counter(doikit.DOI(name).key for name in row["dois"])
        got = collections.Counter(found.doi.key for found in doikit.find_all(row["text"]))
        true_positives += sum((expected & got).values())
        predicted += sum(got.values())
        gold += sum(expected.values())
        if expected != got:
            wrong.append(row["id"])
    assert true_positives / predicted >= 0.99, wrong
    assert true_positives / gold >= 0.98, wrong
