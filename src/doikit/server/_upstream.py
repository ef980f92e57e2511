"""``doikit serve --upstream``: a proxy for every DOI. A name the store does not hold is
resolved through the Handle System by the native resolver (:mod:`doikit.client._native`),
from the published root or a private one, as doi.org resolves it; the resolver caches each
answer for its TTL (and a not-found for a short time).

When the upstream cannot answer (a dead or silent server, a timeout), the last good answer
for the name is served for at most :data:`STALE_FOR` seconds after it was fetched, with a
``Warning: 110`` header saying it is stale (and one log line per name and incident); after
that, or without one, the answer is 504. Names in the store are answered from the store,
as without ``--upstream``.

Which RA of a name held upstream (:meth:`Upstream.ra_name`) is read from records, through
the same resolver: the prefix handle ``0.NA/<PREFIX>``'s ``HS_NAMESPACE`` names the RA's
service handle in its ``<DOI.RA>`` element (Crossref's prefixes carry
``<HS_NAMESPACE><DOI.RA>0.SERV/10.crossref</DOI.RA>…``, as Crossref's support pages show),
and that handle's ``10320/ra_name`` value is the RA's name (``"Crossref"`` on
``10.SERV/CROSSREF`` in recorded answers). That doi.org's Which RA follows this chain is
inferred from those records (which are of two different handles: no source shows it end to
end); no published source describes its mechanism.
"""

from __future__ import annotations

import logging
import time

# Values come from the network: expat refuses entity-expansion attacks and ElementTree
# resolves no external entity.
import xml.etree.ElementTree as ET
from collections import OrderedDict
from typing import TYPE_CHECKING, Final

from doikit._errors import DOINotFound, ResolutionError, TransportError
from doikit._syntax import fold
from doikit.handle import RC_ERROR, filter_values
from doikit.server._http import Refused

if TYPE_CHECKING:
    from doikit.handle import HandleRecord, HandleValue

log = logging.getLogger("doikit.server")

#: How long after it was fetched a last good answer may be served when the upstream fails.
STALE_FOR: Final = 24 * 3600.0
#: How many last good answers are kept (least recently fetched dropped first).
MAX_KEPT: Final = 100_000
#: The header a stale answer carries (RFC 7234's warning 110).
STALE_WARNING: Final = '110 doikit "Response is Stale"'
#: The element of a prefix's ``HS_NAMESPACE`` that names its RA's service handle.
RA_ELEMENT: Final = "DOI.RA"
#: The value type of an RA's service handle that holds the RA's name.
RA_NAME_TYPE: Final = "10320/ra_name"


class Upstream:
    """Names resolved through the Handle System, with stale answers when it fails."""

    def __init__(self, root: str | None, *, timeout: float = 10.0) -> None:
        from doikit.client import AsyncNativeResolver  # noqa: PLC0415

        self.resolver = AsyncNativeResolver(root, timeout=timeout)
        self._last: OrderedDict[str, tuple[HandleRecord, float]] = OrderedDict()
        self._failing: set[str] = set()

    async def close(self) -> None:
        """Close the resolver's sockets."""
        await self.resolver.aclose()

    async def record(self, name: str) -> tuple[HandleRecord | None, bool]:
        """The public record of *name* (``None``: not found anywhere) and whether it is a
        stale one.

        :raises Refused: 504 rc 2 when the upstream cannot answer and no good answer of the
            last :data:`STALE_FOR` seconds is kept; 502 rc 2 when it answers with an error.
        """
        try:
            return await self._read(name)
        except ResolutionError as exc:
            # An error answer (not a silence): said as it is, never covered by a stale one.
            raise Refused(RC_ERROR, f"the Handle System answered for {name}: {exc}", 502) from None

    async def ra_name(self, prefix: str) -> str | None:
        """The name of the registration agency of *prefix* as its records say: the
        ``10320/ra_name`` value of the service handle that the ``<DOI.RA>`` of the prefix
        handle's ``HS_NAMESPACE`` names (:func:`ra_service`); ``None`` when a link of that
        chain is missing or broken (a record not found, an error answer, no such value).

        :raises Refused: 504 rc 2 when the upstream cannot answer, as :meth:`record`.
        """
        prefix_record = await self._linked(f"0.NA/{prefix}")
        service = None if prefix_record is None else ra_service(prefix_record)
        service_record = None if service is None else await self._linked(service)
        if service_record is None:
            return None
        value = service_record.first(RA_NAME_TYPE)
        name = None if value is None or value.text is None else value.text.strip()
        return name or None

    async def _linked(self, name: str) -> HandleRecord | None:
        """The record of a link in a chain of records; ``None`` for an error answer too."""
        try:
            return (await self._read(name))[0]
        except ResolutionError:
            return None

    async def _read(self, name: str) -> tuple[HandleRecord | None, bool]:
        """:meth:`record`, with an error answer raised as it came.

        :raises ResolutionError: the upstream's error answer.
        """
        key = fold(name)
        try:
            found = await self.resolver.resolve(name)
        except DOINotFound:
            self._last.pop(key, None)
            return None, False
        except TransportError as exc:
            kept = self._last.get(key)
            if kept is not None and time.monotonic() - kept[1] <= STALE_FOR:
                if key not in self._failing:
                    self._failing.add(key)
                    log.warning(
                        "upstream unreachable for %s: serving the answer of %.0f s ago (%s)",
                        name,
                        time.monotonic() - kept[1],
                        exc,
                    )
                return kept[0], True
            raise Refused(
                RC_ERROR, f"the Handle System could not be reached for {name}: {exc}", 504
            ) from None
        self._failing.discard(key)
        self._last.pop(key, None)
        self._last[key] = (found, time.monotonic())
        if len(self._last) > MAX_KEPT:
            self._last.popitem(last=False)
        return found, False


def ra_service(prefix_record: HandleRecord) -> str | None:
    """The RA service handle a prefix handle's namespace names, or ``None``.

    The namespace is the ``HS_NAMESPACE`` value of lowest index that is XML, whatever its
    root element, and the handle the text of the root's first ``<DOI.RA>`` child (HANDLE.NET's
    ``Util.getNamespaceFromValues`` and ``XTag.getSubTag``: tag names match exactly).

    >>> from doikit.handle import HandleRecord, HandleValue
    >>> ns = b"<HS_NAMESPACE><DOI.RA>0.SERV/10.crossref</DOI.RA><locs>x</locs></HS_NAMESPACE>"
    >>> ra_service(HandleRecord("0.NA/10.1021", (HandleValue(2, "HS_NAMESPACE", ns),)))
    '0.SERV/10.crossref'
    >>> ra_service(HandleRecord("0.NA/10.1021", (HandleValue(2, "HS_NAMESPACE", b"<ns/>"),)))
    """
    for value in sorted(filter_values(prefix_record.values, ("HS_NAMESPACE",)), key=_index):
        text = value.text
        if not text:
            continue
        try:
            root = ET.fromstring(text)  # noqa: S314 - expat; see the import
        except ET.ParseError:
            continue
        for child in root:
            if child.tag == RA_ELEMENT:
                return (child.text or "").strip() or None
        return None
    return None


def _index(value: HandleValue) -> int:
    return value.index
