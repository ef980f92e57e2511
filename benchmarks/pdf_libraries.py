"""Which PDF library doikit.pdf reads text with: speed and the DOIs found in its text.

    python benchmarks/pdf_libraries.py [--labels tests/corpus/pdf/labels.jsonl] [--rounds 3]

For each labeled PDF (a JSON line per file: ``file``, relative to the labels file, and
``dois``, every DOI of the page text in reading order, labeled by reading the pages), each
library extracts the text of every page; doikit.find_all then reads that text. Printed per
library: total extraction time (best of the rounds, all files, the libraries interleaved in
each round), pages per second, and precision and recall of the DOIs against the labels
(per occurrence, ASCII case folded), so that a library whose text breaks DOIs (lost line
breaks, glued words, broken ligatures) shows it. Libraries: pypdfium2 (PDFium), pypdf,
pdfminer.six, and poppler's pdftotext as a reference when it is installed.
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import doikit
from doikit._syntax import fold

if TYPE_CHECKING:
    from collections.abc import Callable

LABELS = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "pdf" / "labels.jsonl"


def pdfium_text(data: bytes) -> str:
    """doikit.pdf's own reading (PDFium, its joined hyphens put back)."""
    from doikit import pdf  # noqa: PLC0415

    return "\n".join(pdf.page_texts(data))


def pypdf_text(data: bytes) -> str:
    """The text of pypdf's extract_text, page by page."""
    import pypdf  # noqa: PLC0415

    return "\n".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(data)).pages)


def pdfminer_text(data: bytes) -> str:
    """pdfminer.six's extract_text (its default layout analysis)."""
    from pdfminer.high_level import extract_text  # noqa: PLC0415

    return str(extract_text(io.BytesIO(data)))


def pdftotext_text(data: bytes) -> str:
    """The text of poppler's pdftotext (a command, not a Python library: the reference)."""
    done = subprocess.run(
        ["pdftotext", "-", "-"],
        input=data,
        capture_output=True,
        check=True,
    )
    return done.stdout.decode("utf-8", "replace")


def main() -> None:
    """Print the comparison table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with args.labels.open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    files = [(args.labels.parent / row["file"]).read_bytes() for row in rows]
    libraries: dict[str, Callable[[bytes], str]] = {
        "pypdfium2": pdfium_text,
        "pypdf": pypdf_text,
        "pdfminer.six": pdfminer_text,
    }
    if shutil.which("pdftotext"):
        libraries["pdftotext (poppler)"] = pdftotext_text
    pages = sum(row.get("pages", 0) for row in rows)
    best: dict[str, float] = {}
    texts: dict[str, list[str]] = {}
    for _ in range(args.rounds):
        for name, read in libraries.items():
            start = time.perf_counter()
            texts[name] = [read(data) for data in files]
            elapsed = time.perf_counter() - start
            best[name] = min(best.get(name, elapsed), elapsed)
    print(f"{len(rows)} PDFs, {pages} pages, {sum(len(r['dois']) for r in rows)} labeled DOIs")
    print(f"{'library':22} {'seconds':>8} {'pages/s':>8} {'P':>6} {'R':>6}")
    for name in libraries:
        precision, recall = _score(rows, texts[name])
        rate = pages / best[name] if best[name] else 0.0
        print(f"{name:22} {best[name]:>8.2f} {rate:>8.0f} {precision:>6.3f} {recall:>6.3f}")


def _score(rows: list[dict[str, Any]], texts: list[str]) -> tuple[float, float]:
    right = found = gold = 0
    for row, text in zip(rows, texts, strict=True):
        got = collections.Counter(fold(str(f.doi)) for f in doikit.find_all(text))
        expected = collections.Counter(fold(name) for name in row["dois"])
        right += sum((got & expected).values())
        found += sum(got.values())
        gold += sum(expected.values())
    return (right / found if found else 1.0), (right / gold if gold else 1.0)


if __name__ == "__main__":
    main()
