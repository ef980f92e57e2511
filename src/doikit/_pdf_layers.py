"""What :mod:`doikit.pdf` reads of a PDF beyond pypdfium2's plain calls: a page's text with
the fonts looked at near each ``10.`` (TeX's symbol font read as its symbols, a change of font
at a line break kept as a blank line), the URIs of its links, and the XMP packets in the
file's bytes. Nothing here knows of DOIs but where one may begin. The reader that calls it
(``doikit.pdf._records``) runs in doikit.pdf's child process, under its limits (or in the
caller's process, without them).
"""

from __future__ import annotations

import ctypes
import re
import zlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Iterator

# PDFium marks where it joined a line that ended in a hyphen (U+FFFE from get_text_range,
# U+0002 from get_text_bounded): the hyphen and the line break, as they were on the page.
_JOINED_HYPHEN: Final = re.compile("[\ufffe\x02]")


def read_page(pdfium: Any, document: Any, index: int) -> tuple[str, list[str]]:  # noqa: ANN401
    """The text of a page (lines ended by ``\\n``, a hyphen PDFium joined put back as
    ``-`` + ``\\n``) and the URIs of its links."""
    page = document[index]
    try:
        textpage = page.get_textpage()
        try:
            text: str = textpage.get_text_range()
            text = _near_dois(pdfium.raw, textpage, text)
        finally:
            textpage.close()
        uris = _link_uris(pdfium.raw, document, page)
    finally:
        page.close()
    return _JOINED_HYPHEN.sub("-\n", text.replace("\r\n", "\n")), uris


# TeX's math symbol fonts (cmsy, OMS encoding) draw symbols at the places of ASCII letters;
# without a ToUnicode map PDFium gives the letters. The ones a name may run into: the
# angle brackets of a metavariable (⟨year⟩), braces and bars.
_OMS: Final = {"f": "{", "g": "}", "h": "\u27e8", "i": "\u27e9", "j": "|", "n": "\\"}
_NEAR_A_DOI: Final = 256  # characters after a '10.' that a DOI may run into


def _near_dois(raw: Any, textpage: Any, text: str) -> str:  # noqa: ANN401
    """*text* (PDFium's, lines ended by CRLF), read with the PDF's fonts where a DOI may run.

    Up to _NEAR_A_DOI characters after each '10.' (so that a page without DOIs costs
    nothing more):

    - a letter that a CMSY font draws as a symbol is the symbol;
    - a line break where the font or its size changes is a blank line: what follows is
      another kind of text (a heading, a listing, the next note's number), which the
      DOI does not run into, whatever its first word.
    """
    chars = list(text)
    checked = 0
    start = text.find("10.")
    page = textpage.raw
    name = ctypes.create_string_buffer(64)

    def font(at: int) -> tuple[bytes, float] | None:
        index = raw.FPDFText_GetCharIndexFromTextIndex(page, at)
        if index < 0:
            return None
        raw.FPDFText_GetFontInfo(page, index, name, len(name), None)
        # a subset's tag ('ABCDEF+') may differ between subsets of one font
        return name.value.rpartition(b"+")[2], round(raw.FPDFText_GetFontSize(page, index), 1)

    while start >= 0:
        for at in range(max(start, checked), min(len(text), start + _NEAR_A_DOI)):
            char = text[at]
            if char == "\r" and text.startswith("\r\n", at) and 0 < at < len(text) - 2:
                before, after = font(at - 1), font(at + 2)
                if before is not None and after is not None and before != after:
                    chars[at] = "\n"  # CRLF becomes two line ends: a blank line
            elif char in _OMS:
                index = raw.FPDFText_GetCharIndexFromTextIndex(page, at)
                if index >= 0 and raw.FPDFText_HasUnicodeMapError(page, index):
                    raw.FPDFText_GetFontInfo(page, index, name, len(name), None)
                    if b"CMSY" in name.value.upper():
                        chars[at] = _OMS[char]
        checked = max(checked, start + _NEAR_A_DOI)
        start = text.find("10.", start + 3)
    return "".join(chars)


def _link_uris(raw: Any, document: Any, page: Any) -> list[str]:  # noqa: ANN401
    """The URIs of the page's link annotations."""
    uris: list[str] = []
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
    return uris


# XMP (ISO 16684-1, 7.3): a packet is an x:xmpmeta element (x:xapmeta in the first
# writers); in a PDF it is the stream of a /Type /Metadata dictionary, often written
# uncompressed so that it can be found in the bytes, or compressed (FlateDecode).
_XMP_START: Final = re.compile(rb"<x:x(?:mp|ap)meta\b")
_XMP_ENDS: Final = (b"</x:xmpmeta>", b"</x:xapmeta>")
_XMP_MAX: Final = 1 << 24  # bytes of XMP read in all (16 MiB; real packets hold kilobytes)
_METADATA: Final = re.compile(rb"/Type\s*/Metadata\b")
_DICTIONARY_REACH: Final = 4096  # bytes around '/Type /Metadata' read for its dictionary


def xmp_packets(data: bytes) -> list[str]:
    """The XMP packets of the file, as written or inflated from compressed streams: in time
    linear in the file's size, and at most _XMP_MAX bytes of them."""
    packets: list[str] = []
    budget = _XMP_MAX
    for text in (data, *_inflated_metadata(data)):
        for packet in _packets_in(text):
            if len(packet) > budget:
                return packets
            budget -= len(packet)
            packets.append(packet.decode("utf-8", "replace"))
    return packets


def _packets_in(data: bytes) -> Iterator[bytes]:
    """The x:xmpmeta elements of *data*, each read once (a start with no end ends the
    search: no later start has one either)."""
    position = 0
    while (start := _XMP_START.search(data, position)) is not None:
        ends = [e for e in (data.find(tag, start.end()) for tag in _XMP_ENDS) if e >= 0]
        if not ends:
            return
        end = min(ends)
        yield data[start.start() : data.index(b">", end) + 1]
        position = end


def _inflated_metadata(data: bytes) -> Iterator[bytes]:
    """The inflated data of the compressed metadata streams, at most _XMP_MAX bytes in
    all; each stream's dictionary is read near its '/Type /Metadata', in any key order."""
    budget = _XMP_MAX
    position = 0
    while budget > 0 and (found := _METADATA.search(data, position)) is not None:
        opened = data.rfind(b"<<", max(0, found.start() - _DICTIONARY_REACH), found.start())
        stream = data.find(b"stream", found.end(), found.end() + _DICTIONARY_REACH)
        position = found.end()
        if opened < 0 or stream < 0 or b"/FlateDecode" not in data[opened:stream]:
            continue
        begin = stream + len(b"stream")
        begin += 2 if data.startswith(b"\r\n", begin) else 1
        end = data.find(b"endstream", begin)
        if end < 0:
            return
        position = end
        inflater = zlib.decompressobj()
        try:
            inflated = inflater.decompress(data[begin:end], budget)
        except zlib.error:
            continue
        budget -= len(inflated)
        yield inflated
