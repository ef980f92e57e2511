"""DOIs in PDF files (doikit.pdf and `doikit extract file.pdf`), on PDFs written here by a
real PDF library (fpdf2) and read by the real PDFium."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

from doikit import pdf
from doikit._syntax import fold

fpdf = pytest.importorskip("fpdf")

XMP = """<x:xmpmeta xmlns:x="adobe:ns:meta/">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about="" xmlns:prism="http://prismstandard.org/namespaces/basic/2.0/"
      xmlns:dc="http://purl.org/dc/elements/1.1/">
   <prism:doi>10.5555/xmp-prism</prism:doi>
   <dc:identifier>doi:10.5555/xmp-dc</dc:identifier>
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>"""


def _paper(path: Path, *, compress: bool = True) -> Path:
    """A one-page paper: DOIs in lines broken as a typesetter breaks them, a link, and
    metadata in the Info dictionary and XMP."""
    document = fpdf.FPDF()
    document.set_compression(compress)
    document.add_page()
    document.set_font("Helvetica", size=10)
    lines = [
        "1. Smith J. Cell 2004;116:281. doi:10.1016/j.cell.2004.",
        "01.001 (a break after one of the suffix's dots).",
        "2. Lee K. Lancet 2020;395:497. https://doi.org/10.1016/S0140-",
        "6736(20)30183-5 (the DOI's own hyphen at the break).",
        "3. See https://doi.org/10.1000/182 and the linked reference below.",
    ]
    for line in lines:
        document.cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
    document.cell(0, 6, "4. The linked reference", new_x="LMARGIN", new_y="NEXT")
    document.link(10, 40, 60, 6, "https://doi.org/10.5555/linked")
    document.set_subject("doi:10.5555/info-subject")
    document.set_xmp_metadata(XMP)
    document.output(str(path))
    return path


def test_text_links_and_metadata(tmp_path: Path) -> None:
    found = list(pdf.find_all(_paper(tmp_path / "paper.pdf")))
    assert [(str(f.doi), f.page, f.where) for f in found] == [
        ("10.1016/j.cell.2004.01.001", 1, "text"),
        ("10.1016/S0140-6736(20)30183-5", 1, "text"),
        ("10.1000/182", 1, "text"),
        ("10.5555/linked", 1, "link"),
        ("10.5555/info-subject", None, "metadata"),
        ("10.5555/xmp-prism", None, "metadata"),
        ("10.5555/xmp-dc", None, "metadata"),
    ]


def test_metadata_in_an_uncompressed_file_and_from_bytes(tmp_path: Path) -> None:
    data = _paper(tmp_path / "plain.pdf", compress=False).read_bytes()
    assert [str(f.doi) for f in pdf.find_all(data) if f.where == "metadata"] == [
        "10.5555/info-subject",
        "10.5555/xmp-prism",
        "10.5555/xmp-dc",
    ]


def test_a_hyphen_at_a_break_is_kept_on_the_page(tmp_path: Path) -> None:
    """PDFium joins a line that ends in a hyphen to the next; the text doikit reads has the
    hyphen and the break back, so the extractor's line-break rule decides."""
    (text,) = pdf.page_texts(_paper(tmp_path / "paper.pdf"))
    assert "10.1016/S0140-\n6736(20)30183-5" in text


def test_not_a_pdf_is_a_clear_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7\n this is not a PDF body")
    with pytest.raises(pdf.PDFError, match="not a PDF that can be read"):
        list(pdf.find_all(broken))


def _doikit(
    *args: str, stdin: bytes = b"", block_pdfium: bool = False
) -> subprocess.CompletedProcess[bytes]:
    prelude = "import sys; sys.modules['pypdfium2'] = None; " if block_pdfium else ""
    code = prelude + "from doikit.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_extract_reads_a_pdf_file_and_stdin(tmp_path: Path) -> None:
    paper = _paper(tmp_path / "paper.pdf")
    done = _doikit("extract", "--unique", str(paper))
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().split() == [
        "10.1016/j.cell.2004.01.001",
        "10.1016/S0140-6736(20)30183-5",
        "10.1000/182",
        "10.5555/linked",
        "10.5555/info-subject",
        "10.5555/xmp-prism",
        "10.5555/xmp-dc",
    ]
    piped = _doikit("extract", "--json", "-", stdin=paper.read_bytes())
    records = [json.loads(line) for line in piped.stdout.decode().splitlines()]
    assert records[3] == {
        "file": "-",
        "page": 1,
        "where": "link",
        "text": "10.5555/linked",
        "doi": "10.5555/linked",
        "bare": "10.5555/linked",
    }


def test_extract_without_the_extra_says_what_to_install(tmp_path: Path) -> None:
    """A compressed PDF used to give nothing and exit 0: now one line and a failure."""
    done = _doikit("extract", str(_paper(tmp_path / "paper.pdf")), block_pdfium=True)
    assert done.returncode == 2  # as every command whose extra is missing
    assert done.stdout == b""
    message = done.stderr.decode().strip()
    assert message.count("\n") == 0
    assert "pip install '.[pdf]'" in message


# --- real PDFs that packages on the registries ship ---------------------------------------

REAL = Path(__file__).parent / "corpus" / "pdf"


def _real() -> list[dict[str, Any]]:
    with (REAL / "labels.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


@pytest.mark.parametrize("row", _real(), ids=lambda row: row["file"])
def test_real_pdfs_give_their_labeled_dois(row: dict[str, Any]) -> None:
    """Each PDF (from Debian's TeX Live and R packages; source and licence in labels.jsonl)
    was labeled by reading its pages, its link annotations and its metadata."""
    found = list(pdf.find_all(REAL / row["file"]))
    for where, labels in (
        ("text", row["dois"]),
        ("link", row["link_dois"]),
        ("metadata", row["xmp_dois"]),
    ):
        got = sorted(fold(str(f.doi)) for f in found if f.where == where)
        assert got == sorted(fold(name) for name in labels), where


# --- metadata in the places real writers put it (issue 27) --------------------------------

PACKET = """<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF
 xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about=""
 xmlns:prism="http://prismstandard.org/namespaces/basic/2.0/"><prism:doi>{doi}</prism:doi>
</rdf:Description></rdf:RDF></x:xmpmeta>
<?xpacket end="w"?>"""


def _with_metadata(*metadata: bytes, info: bytes | None = None) -> bytes:
    """A one-page PDF without DOIs in its text, whose catalog names the first of the
    *metadata* stream objects, and with an Info dictionary when *info* is given."""
    # (the raw PDF writer of the limits' tests)
    from test_input_limits import FONT, raw_pdf, stream_object, text_content  # noqa: PLC0415

    objects = [
        b"<< /Type /Catalog /Pages 2 0 R /Metadata 6 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        FONT,
        (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>"
        ),
        stream_object(text_content(b"no DOI here")),
        *metadata,
    ]
    if info is not None:
        objects.append(info)
    return raw_pdf(objects, info=len(objects) if info is not None else None)


def _metadata_stream(doi: str, *, keys: bytes, packet: str = PACKET) -> bytes:
    data = packet.format(doi=doi).encode()
    if b"/FlateDecode" in keys:
        data = zlib.compress(data)
    return b"<< %s /Length %d >>\nstream\n%s\nendstream" % (keys, len(data), data)


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        pytest.param(
            [
                _metadata_stream(
                    "10.5555/filter-first", keys=b"/Filter /FlateDecode /Type /Metadata"
                )
            ],
            ["10.5555/filter-first"],
            id="compressed, /Filter before /Type",
        ),
        pytest.param(
            [
                _metadata_stream("10.5555/document", keys=b"/Type /Metadata /Filter /FlateDecode"),
                _metadata_stream("10.5555/figure", keys=b"/Type /Metadata /Subtype /XML"),
            ],
            ["10.5555/figure", "10.5555/document"],
            id="compressed beside a figure's packet written plain",
        ),
        pytest.param(
            [
                _metadata_stream(
                    "10.5555/xap",
                    keys=b"/Type /Metadata",
                    packet=PACKET.replace("xmpmeta", "xapmeta"),
                )
            ],
            ["10.5555/xap"],
            id="x:xapmeta, the first writers' element",
        ),
    ],
)
def test_a_doi_only_in_xmp_is_found(metadata: list[bytes], expected: list[str]) -> None:
    """Three packets the reader missed: a compressed stream whose dictionary names its
    filter before its type, the document's compressed packet when an image's packet is
    written plain, and the x:xapmeta element."""
    found = list(pdf.find_all(_with_metadata(*metadata)))
    assert [(str(f.doi), f.page, f.where) for f in found] == [
        (doi, None, "metadata") for doi in expected
    ]


def test_a_doi_in_the_info_dictionarys_doi_key_is_found() -> None:
    """Publishers add a /doi key to the Info dictionary (Elsevier's PDFs have one)."""
    data = _with_metadata(b"<< >>", info=b"<< /Title (A paper) /doi (10.5555/info-key) >>")
    assert [(str(f.doi), f.where) for f in pdf.find_all(data)] == [("10.5555/info-key", "metadata")]


def test_xmp_is_read_in_linear_time() -> None:
    """Starts of packets that never end, and metadata streams that never end, cost one
    pass over the file (the patterns before rescanned the rest of it from each)."""
    noise = (
        b"<x:xmpmeta " * 200_000 + b"<< /Type /Metadata /Filter /FlateDecode >> stream\n" * 20_000
    )
    started = time.monotonic()
    assert pdf._xmp_packets(noise) == []
    assert time.monotonic() - started < 2


_BIB_DOI = re.compile(r"\bdoi\s*=\s*[{\"]([^{}\"]+)[}\"]", re.IGNORECASE)


@pytest.mark.parametrize("row", [r for r in _real() if "bib" in r], ids=lambda row: row["file"])
def test_real_pdfs_labels_are_their_bib_files_dois(row: dict[str, Any]) -> None:
    """The .bib a PDF was typeset from (beside it, from the same package) holds each DOI
    labeled in its text: the labels, read on the pages, are the bibliography's own."""
    with gzip.open(REAL / row["bib"], "rt", encoding="latin-1") as bib:
        fields = {fold(m.group(1).strip()) for m in _BIB_DOI.finditer(bib.read())}
    assert {fold(name) for name in row["dois"]} <= fields
