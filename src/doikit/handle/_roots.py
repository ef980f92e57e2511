"""Where the native resolver starts: the Global Handle Registry's root sites as the Handle
System publishes them (shipped in :mod:`doikit.handle._root_info`), or a private root
named ``HOST:PORT`` (a closed network, a test)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from doikit.handle._native_site import (
    INTERFACE_QUERY,
    PROTOCOL_TCP,
    PROTOCOL_UDP,
    Interface,
    ServerInfo,
    SiteInfo,
    site_from_bytes,
)
from doikit.handle._native_values import data_to_wire
from doikit.handle._values import value_from_json

if TYPE_CHECKING:
    from collections.abc import Iterable

#: The types of a handle's values that are sites (IPv4 and IPv6 records alike).
SITE_TYPES: Final = ("HS_SITE", "HS_SITE.6")


def root_sites(values: str | None = None) -> tuple[SiteInfo, ...]:
    """The root sites of the Global Handle Registry, from the shipped root information
    (:mod:`doikit.handle._root_info`), or from *values* in its form (one value of the REST
    API's JSON a line, with its ``handle``): the sites of ``0.NA/0.NA`` and of its service
    handles, each once, primary sites first.

    :raises ValueError: for *values* that are not root information, or name no site.
    """
    if values is None:
        from doikit.handle._root_info import ROOT_VALUES  # noqa: PLC0415 - data, read when used

        values = ROOT_VALUES
    seen: dict[bytes, SiteInfo] = {}
    for number, line in enumerate(values.splitlines(), 1):
        try:
            obj = json.loads(line)
            if obj["type"] in SITE_TYPES:
                raw = data_to_wire(value_from_json(obj).data)
                seen.setdefault(raw, site_from_bytes(raw))
        except (ValueError, KeyError, TypeError) as exc:  # HandleFormatError is a ValueError
            msg = f"root information, line {number}: not a handle value with a site ({exc})"
            raise ValueError(msg) from None
    if not seen:
        msg = "root information names no site (no HS_SITE value)"
        raise ValueError(msg)
    return ordered(seen.values())


def ordered(sites: Iterable[SiteInfo]) -> tuple[SiteInfo, ...]:
    """*sites*, primary sites first."""
    listed = list(sites)
    return tuple(s for s in listed if s.primary) + tuple(s for s in listed if not s.primary)


def private_root(text: str) -> SiteInfo:
    """A provisional one-server site for ``HOST:PORT`` (an IPv6 host in brackets): UDP and
    TCP on that port, no key. The resolver asks it for its site information first.

    >>> private_root("127.0.0.1:2641").servers[0].interfaces[0].port
    2641

    :raises ValueError: for text that is not HOST:PORT with an IP address.
    """
    import ipaddress  # noqa: PLC0415

    host, colon, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not colon or not port.isdigit() or not 0 < int(port) < 65536:
        msg = f"root {text!r} is not HOST:PORT (a port from 1 to 65535)"
        raise ValueError(msg)
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        msg = f"root {text!r}: {host!r} is not an IP address"
        raise ValueError(msg) from None
    interfaces = tuple(
        Interface(INTERFACE_QUERY, p, int(port)) for p in (PROTOCOL_UDP, PROTOCOL_TCP)
    )
    return SiteInfo((ServerInfo(1, address, b"", interfaces),), serial_number=-1)
