"""``doikit serve --upstream``: a proxy for every DOI. A name the store does not hold is
resolved through the Handle System by the native resolver (:mod:`doikit.client._native`),
from the published root or a private one, as doi.org resolves it; the resolver caches each
answer for its TTL (and a not-found for a short time).

When the upstream cannot answer (a dead or silent server, a timeout), the last good answer
for the name is served for at most :data:`STALE_FOR` seconds after it was fetched, with a
``Warning: 110`` header saying it is stale (and one log line per name and incident); after
that, or without one, the answer is 504. Names in the store are answered from the store,
as without ``--upstream``.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Final

from doikit._errors import DOINotFound, ResolutionError, TransportError
from doikit._syntax import fold
from doikit.handle import RC_ERROR
from doikit.server._http import Refused

if TYPE_CHECKING:
    from doikit.handle import HandleRecord

log = logging.getLogger("doikit.server")

#: How long after it was fetched a last good answer may be served when the upstream fails.
STALE_FOR: Final = 24 * 3600.0
#: How many last good answers are kept (least recently fetched dropped first).
MAX_KEPT: Final = 100_000
#: The header a stale answer carries (RFC 7234's warning 110).
STALE_WARNING: Final = '110 doikit "Response is Stale"'


class Upstream:
    """Names resolved through the Handle System, with stale answers when it fails."""

    def __init__(self, root: str | None, *, timeout: float = 10.0) -> None:
        from doikit.client._native import AsyncNativeResolver  # noqa: PLC0415

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
            last :data:`STALE_FOR` seconds is kept.
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
        except ResolutionError as exc:
            # An error answer (not a silence): said as it is, never covered by a stale one.
            raise Refused(RC_ERROR, f"the Handle System answered for {name}: {exc}", 502) from None
        self._failing.discard(key)
        self._last.pop(key, None)
        self._last[key] = (found, time.monotonic())
        if len(self._last) > MAX_KEPT:
            self._last.popitem(last=False)
        return found, False
