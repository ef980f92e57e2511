"""Which PDF library doikit.pdf reads text with: speed and the DOIs found in its text.

    python benchmarks/pdf_libraries.py [--labels tests/corpus/pdf/labels.jsonl] [--rounds 3]
    python benchmarks/pdf_libraries.py --peers [--labels …]

--peers compares whole PDF paths instead, on the set of distinct DOIs of each PDF (its text,
links and metadata labels together): doikit.pdf.find_all, refextract's
extract_references_from_file (its references' DOIs; it runs pdftotext) and pdf2doi (one
identifier per file, by design; run offline: no web search or validation, nothing written
into the file). Install them with ``pip install refextract pdf2doi``.

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
import importlib
import importlib.util
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
    pypdf = importlib.import_module("pypdf")  # a candidate, not a dependency
    return "\n".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(data)).pages)


def pdfminer_text(data: bytes) -> str:
    """pdfminer.six's extract_text (its default layout analysis)."""
    high_level = importlib.import_module("pdfminer.high_level")  # a candidate
    return str(high_level.extract_text(io.BytesIO(data)))


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
    parser.add_argument("--peers", action="store_true", help="compare whole PDF paths")
    args = parser.parse_args()
    if args.peers:
        peers(args.labels)
        return
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


def _doikit_dois(path: Path) -> set[str]:
    from doikit import pdf  # noqa: PLC0415

    return {fold(str(found.doi)) for found in pdf.find_all(path)}


def _refextract_dois(path: Path) -> set[str]:
    refextract = importlib.import_module("refextract")  # a peer, not a dependency
    found: set[str] = set()
    for reference in refextract.extract_references_from_file(str(path)):
        for name in reference.get("doi", []):
            found.add(fold(name.removeprefix("doi:")))
    return found


def _pdf2doi_dois(path: Path) -> set[str]:
    pdf2doi = importlib.import_module("pdf2doi")  # a peer, not a dependency
    config = importlib.import_module("pdf2doi.config")
    for key in ("websearch", "webvalidation", "save_identifier_metadata", "verbose"):
        config.set(key, False)  # noqa: FBT003 - offline, and never write into the file
    result = pdf2doi.pdf2doi(str(path))
    if result and result.get("identifier_type") == "DOI":
        return {fold(str(result["identifier"]))}
    return set()


def peers(labels: Path) -> None:
    """Whole PDF paths on distinct DOIs per file."""
    with labels.open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    tools: dict[str, Callable[[Path], set[str]]] = {"doikit.pdf": _doikit_dois}
    for name, module, reader in (
        ("refextract", "refextract", _refextract_dois),
        ("pdf2doi", "pdf2doi", _pdf2doi_dois),
    ):
        if importlib.util.find_spec(module) is not None:
            tools[name] = reader
        else:
            print(f"{name} is not installed: not scored")
    print(f"{len(rows)} PDFs; distinct DOIs per file (text, links and metadata)")
    print(f"{'tool':14} {'seconds':>8} {'P':>6} {'R':>6} {'F1':>6}")
    for name, read in tools.items():
        right = found = gold = 0
        start = time.perf_counter()
        for row in rows:
            expected = {fold(n) for n in [*row["dois"], *row["link_dois"], *row["xmp_dois"]]}
            try:
                got = read(labels.parent / row["file"])
            except Exception:  # noqa: BLE001 - a tool that fails on a file finds nothing in it
                got = set()
            right += len(got & expected)
            found += len(got)
            gold += len(expected)
        elapsed = time.perf_counter() - start
        precision, recall = (right / found if found else 1.0), right / gold
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        print(f"{name:14} {elapsed:>8.1f} {precision:>6.3f} {recall:>6.3f} {f1:>6.3f}")


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
