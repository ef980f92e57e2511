"""``doikit deposit``: stream a file of records to a ``doikit serve`` in transactional chunks.

Input is JSON Lines (``{"doi":…,"url":…}`` or ``{"doi":…,"values":[…]}``) or CSV
(``doi,url``; a header row ``doi,url`` in any case, or ``doi;url`` or tab-separated as
Excel writes them, sets the delimiter). Each DOI follows the DOI Foundation's rule for batch input:
characters raw or percent-encoded, and ``%`` always starts an escape, so a lone ``%`` is an
error. Standard library only (``http.client``), so depositing needs no extra.
"""

from __future__ import annotations

import csv
import http.client
import itertools
import json
import queue
import re
import ssl
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from doikit._lines import LineTooLong, NotUTF8
from doikit._syntax import PercentError, percent_decode
from doikit._written import bare_doi, encoded
from doikit.handle import HandleFormatError, loads

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

#: Records per request, and bytes per request: a chunk ends at whichever comes first (a
#: record can be large). Each request is one transaction on the server.
CHUNK: Final = 10_000
CHUNK_BYTES: Final = 8 << 20
#: The largest request body the server takes (``doikit serve``'s deposit limit).
MAX_REQUEST: Final = 64 << 20
# Stands in for a line that is not UTF-8; a NUL cannot start a real line of either format.
_NOT_UTF8: Final = "\x00not-utf8:"


class DepositError(Exception):
    """The whole deposit cannot go on: the server is unreachable or refuses the token."""


@dataclass
class Rejection:
    """A line that was not deposited, and why."""

    line: int
    reason: str


@dataclass
class Report:
    """What a deposit did."""

    accepted: int = 0
    rejected: list[Rejection] = field(default_factory=list)


def _name(text: object) -> str:
    """The DOI name of one batch field (seed 003), or raise ValueError saying why not."""
    if not isinstance(text, str):
        raise ValueError("'doi' must be a string")  # noqa: TRY004 - one error type per line
    try:
        name = percent_decode(text.strip())
    except PercentError as exc:
        raise ValueError(f"DOI {text!r} at position {exc.index}: {exc.detail}") from None
    bare_doi(name)  # (ValueError: not a name, or not bare)
    return name


def _utf8(lines: Iterable[str | NotUTF8 | LineTooLong]) -> Iterator[str]:
    """The lines as :mod:`doikit._lines` reads them: a BOM before the first dropped; one that
    is not UTF-8 (a :class:`NotUTF8`, or text read as surrogateescape) becomes a marker line
    that the parsers refuse with its number and byte."""
    for number, line in enumerate(lines):
        if isinstance(line, NotUTF8 | LineTooLong):  # refused with its number and reason
            yield f"{_NOT_UTF8}{line}\n"
            continue
        if number == 0:
            line = line.removeprefix("\ufeff")  # noqa: PLW2901 - the same line, its BOM off
        if not line.isascii():
            try:
                line.encode("utf-8")
            except UnicodeEncodeError as exc:
                byte = len(line[: exc.start].encode("utf-8", "surrogateescape")) + 1
                yield f"{_NOT_UTF8}{NotUTF8(byte)}\n"
                continue
        yield line


# A header row names the delimiter: Excel writes ';' where ',' is the decimal mark, and tabs
# for "text"; without a header, fields are separated by ','.
_HEADER: Final = re.compile(r'\s*"?doi"?\s*([,;\t]).*', re.IGNORECASE | re.DOTALL)


def _csv_rows(lines: Iterator[str]) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of each CSV row after the header, if there is one."""
    first = next(lines, None)
    if first is None:
        return
    header = None if first.startswith(_NOT_UTF8) else _HEADER.fullmatch(first)
    reader = csv.reader(
        itertools.chain(() if header else (first,), lines),
        delimiter=header.group(1) if header else ",",
    )
    offset = 1 if header else 0
    for row in reader:
        yield reader.line_num + offset, row


def parse_lines(
    lines: Iterable[str | NotUTF8 | LineTooLong], *, is_csv: bool
) -> Iterator[tuple[int, dict[str, object] | str]]:
    """(line number, record to send) or (line number, reason it is refused), in order."""
    lines = _utf8(lines)
    if is_csv:
        for number, row in _csv_rows(lines):
            if not row or not "".join(row).strip():
                continue
            if row[0].startswith(_NOT_UTF8):
                yield number, row[0][len(_NOT_UTF8) :].strip()
                continue
            if len(row) != 2:
                yield number, f"expected 2 fields (doi,url), found {len(row)}"
                continue
            try:
                yield number, {"doi": _name(row[0]), "url": row[1].strip(), "line": number}
            except ValueError as exc:
                yield number, str(exc)
        return
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if line.startswith(_NOT_UTF8):
            yield number, line[len(_NOT_UTF8) :].strip()
            continue
        try:
            obj = loads(line)  # the server's reader: what it refuses is refused here
        except HandleFormatError as exc:
            yield number, exc.detail if exc.detail.startswith("not ") else str(exc)
            continue
        if not isinstance(obj, dict):
            yield number, "each line must be a JSON object"
            continue
        try:
            obj["doi"] = _name(obj.get("doi"))
        except ValueError as exc:
            yield number, str(exc)
            continue
        obj["line"] = number
        yield number, obj


class _Connection:
    def __init__(self, server: str, token: str, timeout: float) -> None:
        parts = urlsplit(server)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise DepositError(f"--server must be an http(s) URL, not {server!r}")
        self.base = parts.path.rstrip("/")
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/x-ndjson",
        }
        if parts.scheme == "https":
            self.conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                parts.hostname, parts.port, timeout=timeout, context=ssl.create_default_context()
            )
        else:
            self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)

    def send(self, body: bytes) -> dict[str, object]:
        try:
            self.conn.request("POST", self.base + "/api/deposit", body, self.headers)
            response = self.conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise DepositError(f"cannot reach the server: {exc}") from None
        try:
            reply = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            raise DepositError(f"the server answered {response.status} without JSON") from None
        if response.status != 200 or not isinstance(reply, dict):
            message = reply.get("message", "") if isinstance(reply, dict) else ""
            raise DepositError(f"the server refused the deposit ({response.status}): {message}")
        return reply

    def close(self) -> None:
        self.conn.close()


def _bodies(
    items: Iterable[tuple[int, dict[str, object] | str]],
    report: Report,
    chunk: int,
    chunk_bytes: int,
    on_line: Callable[[int], None] | None,
) -> Iterator[bytes]:
    """Request bodies of at most *chunk* records and *chunk_bytes* bytes (or one record, if
    larger); refused lines go to *report*, records no request can carry too."""
    batch: list[bytes] = []
    size = 0
    for number, item in items:
        if on_line is not None:
            on_line(number)
        if isinstance(item, str):
            report.rejected.append(Rejection(number, item))
            continue
        record = encoded(item)
        if len(record) >= MAX_REQUEST:
            reason = f"the record is {len(record)} bytes; a request takes at most {MAX_REQUEST}"
            report.rejected.append(Rejection(number, reason))
            continue
        if batch and (len(batch) >= chunk or size + len(record) > chunk_bytes):
            yield b"\n".join(batch)
            batch, size = [], 0
        batch.append(record)
        size += len(record) + 1
    if batch:
        yield b"\n".join(batch)


def deposit(
    lines: Iterable[str | NotUTF8 | LineTooLong],
    *,
    is_csv: bool,
    server: str,
    token: str,
    timeout: float = 120.0,
    chunk: int = CHUNK,
    chunk_bytes: int = CHUNK_BYTES,
    on_line: Callable[[int], None] | None = None,
) -> Report:
    """Deposit every good line; report the others. Chunks already sent stay committed.

    :raises DepositError: when the server cannot be reached or refuses the token.
    """
    report = Report()
    connection = _Connection(server, token, timeout)
    # A sender thread posts chunk N while this thread reads and encodes chunk N+1: the
    # server's work and ours overlap (socket I/O releases the GIL).
    chunks: queue.Queue[bytes | None] = queue.Queue(maxsize=2)
    failure: list[DepositError] = []

    def sender() -> None:
        while (body := chunks.get()) is not None:
            if failure:
                continue  # drain: the deposit already failed
            try:
                reply = connection.send(body)
            except DepositError as exc:
                failure.append(exc)
                continue
            accepted = reply.get("accepted", 0)
            report.accepted += accepted if isinstance(accepted, int) else 0
            rejected = reply.get("rejected", [])
            for item in rejected if isinstance(rejected, list) else []:
                line = item.get("line", 0) if isinstance(item, dict) else 0
                message = item.get("message", "rejected") if isinstance(item, dict) else "rejected"
                report.rejected.append(Rejection(int(line), str(message)))

    thread = threading.Thread(target=sender, name="doikit-deposit", daemon=True)
    thread.start()
    try:
        for body in _bodies(parse_lines(lines, is_csv=is_csv), report, chunk, chunk_bytes, on_line):
            if failure:
                break
            chunks.put(body)
    finally:
        chunks.put(None)
        thread.join()
        connection.close()
    if failure:
        raise failure[0]
    report.rejected.sort(key=lambda r: r.line)
    return report
