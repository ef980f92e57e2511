"""DOIs in PDF files: the text of every page, the links, and the document's metadata.

Reading a PDF needs the ``pdf`` extra (``pip install 'doikit[pdf]'``), which brings
pypdfium2 (Google's PDFium, the PDF engine of Chromium): of the maintained libraries it
reads the text of real papers fastest and best (BENCHMARKS.md, "PDF libraries").

- **Text**: each page's text, read by PDFium. PDFium joins a line that ends in a hyphen to
  the next and marks the place; doikit puts back ``-`` and the line break, and the
  extractor's rule for line breaks decides (:func:`doikit.find_all`): a DOI's own hyphen at
  a break stays, a word of the suffix hyphenated at a break is joined without it.
- **Links**: the URI of every link annotation (``https://doi.org/10.…`` behind a reference).
- **Metadata**: the document information dictionary (Title, Subject, Keywords…) and the XMP
  packet (``prism:doi``, ``dc:identifier``), read from the file's bytes (XMP packets are
  written to be found that way; a compressed metadata stream is inflated).

>>> from doikit.pdf import PDFFound
>>> PDFFound._fields
('doi', 'page', 'where', 'text')
"""

from __future__ import annotations

import contextlib
import ctypes
import re
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple

from doikit._extract import find_all as _find_all

if TYPE_CHECKING:
    import os
    from collections.abc import Iterator

    from doikit._doi import DOI

__all__ = ["MissingExtraError", "PDFError", "PDFFound", "find_all", "is_pdf", "page_texts"]

INSTALL: Final = "reading PDF files needs the pdf extra: pip install 'doikit[pdf]'"
# PDFium marks where it joined a line that ended in a hyphen (U+FFFE from get_text_range,
# U+0002 from get_text_bounded): the hyphen and the line break, as they were on the page.
_JOINED_HYPHEN: Final = re.compile("[\ufffe\x02]")
_XMP: Final = re.compile(rb"<x:xmpmeta\b.*?</x:xmpmeta>", re.DOTALL)
# A metadata stream's dictionary and data (for packets written compressed).
_METADATA_STREAM: Final = re.compile(
    rb"<<(?:(?!>>)[^\x00])*?/Type\s*/Metadata(?:(?!>>)[^\x00])*?/FlateDecode"
    rb"(?:(?!>>)[^\x00])*>>\s*stream\r?\n(.*?)endstream",
    re.DOTALL,
)
_INFLATED_MAX: Final = 1 << 24  # 16 MiB of XMP is far more than any real document has
_INFO_KEYS: Final = ("Title", "Subject", "Keywords", "Author", "Creator")


class PDFFound(NamedTuple):
    """A DOI found in a PDF: the ``doi``; the ``page`` (from 1; ``None`` for metadata);
    ``where``: ``"text"``, ``"link"`` or ``"metadata"``; and the ``text`` as written."""

    doi: DOI
    page: int | None
    where: Literal["text", "link", "metadata"]
    text: str


class MissingExtraError(ImportError):
    """The ``pdf`` extra is not installed; the message says how to install it."""


class PDFError(ValueError):
    """The input is not a PDF that can be read (the message says why)."""


def is_pdf(head: bytes) -> bool:
    """Whether a file that starts with *head* is a PDF (its header may follow up to 1 KiB
    of other bytes, as readers allow).

    >>> is_pdf(b"%PDF-1.7\\n"), is_pdf(b"plain text")
    (True, False)
    """
    return b"%PDF-" in head[:1024]


def _pdfium() -> Any:  # noqa: ANN401 - pypdfium2 is typed loosely
    try:
        import pypdfium2  # type: ignore[import-untyped]  # noqa: PLC0415 - an optional extra
    except ImportError:
        raise MissingExtraError(INSTALL) from None
    return pypdfium2


def _data(source: str | os.PathLike[str] | bytes) -> bytes:
    if isinstance(source, bytes):
        return source
    return Path(source).read_bytes()


def page_texts(source: str | os.PathLike[str] | bytes) -> list[str]:
    """The text of each page of the PDF *source* (a path or the file's bytes), with line
    breaks as ``\\n`` and hyphenated line ends as they were on the page (``-`` + ``\\n``).

    :raises MissingExtraError: without the ``pdf`` extra.
    :raises PDFError: when the input is not a PDF that can be read.
    """
    pdfium = _pdfium()
    with _opened(pdfium, _data(source)) as document:
        return [_page_text(document, index) for index in range(len(document))]


def find_all(source: str | os.PathLike[str] | bytes) -> Iterator[PDFFound]:
    """Every DOI in the PDF *source* (a path or the file's bytes): page by page, the text's
    DOIs and then its links' DOIs; then the metadata's.

    :raises MissingExtraError: without the ``pdf`` extra.
    :raises PDFError: when the input is not a PDF that can be read.
    """
    pdfium = _pdfium()
    data = _data(source)
    with _opened(pdfium, data) as document:
        for index in range(len(document)):
            for found in _find_all(_page_text(document, index)):
                yield PDFFound(found.doi, index + 1, "text", found.text)
            for uri in _link_uris(pdfium, document, index):
                for found in _find_all(uri):
                    yield PDFFound(found.doi, index + 1, "link", found.text)
        info = document.get_metadata_dict()
        for key in _INFO_KEYS:
            for found in _find_all(info.get(key) or ""):
                yield PDFFound(found.doi, None, "metadata", found.text)
    for packet in _xmp_packets(data):
        for found in _find_all(packet):
            yield PDFFound(found.doi, None, "metadata", found.text)


@contextlib.contextmanager
def _opened(pdfium: Any, data: bytes) -> Iterator[Any]:  # noqa: ANN401
    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise PDFError(f"not a PDF that can be read: {exc}") from None
    try:
        yield document
    finally:
        document.close()


def _page_text(document: Any, index: int) -> str:  # noqa: ANN401
    page = document[index]
    try:
        textpage = page.get_textpage()
        try:
            text: str = textpage.get_text_range()
        finally:
            textpage.close()
    finally:
        page.close()
    return _JOINED_HYPHEN.sub("-\n", text.replace("\r\n", "\n"))


def _link_uris(pdfium: Any, document: Any, index: int) -> list[str]:  # noqa: ANN401
    """The URIs of the page's link annotations."""
    raw = pdfium.raw
    page = document[index]
    uris: list[str] = []
    try:
        position = ctypes.c_int(0)
        link = raw.FPDF_LINK()
        while raw.FPDFLink_Enumerate(page.raw, ctypes.byref(position), ctypes.byref(link)):
            action = raw.FPDFLink_GetAction(link)
            if not action or raw.FPDFAction_GetType(action) != raw.PDFACTION_URI:
                continue
            size = raw.FPDFAction_GetURIPath(document.raw, action, None, 0)
            if size <= 1:
                continue
            buffer = ctypes.create_string_buffer(size)
            raw.FPDFAction_GetURIPath(document.raw, action, buffer, size)
            # A URI action holds 7-bit ASCII (PDF 32000-1, 12.6.4.7); anything else is kept
            # readable rather than refused.
            uris.append(buffer.value.decode("ascii", "replace"))
    finally:
        page.close()
    return uris


def _xmp_packets(data: bytes) -> list[str]:
    """The XMP packets of the file: as written, or inflated from a compressed stream."""
    packets = [m.group().decode("utf-8", "replace") for m in _XMP.finditer(data)]
    if packets:
        return packets
    for stream in _METADATA_STREAM.finditer(data):
        inflater = zlib.decompressobj()
        try:
            inflated = inflater.decompress(stream.group(1), _INFLATED_MAX)
        except zlib.error:
            continue
        packets.extend(m.group().decode("utf-8", "replace") for m in _XMP.finditer(inflated))
    return packets
