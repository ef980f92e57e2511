"""Multiple resolution with ``10320/loc`` values (DOI Handbook §3.8.4.3; HANDLE.NET ``Location``).

A ``10320/loc`` value is XML::

    <locations chooseby="locatt,country,weighted" http_sc="302">
      <location id="1" href="https://a.example/" weight="1" />
      <location id="2" href_template="https://data.example/{hdl}" weight="0" http_role="conneg" />
    </locations>

The proxy narrows the locations step by step (``locatt``: keep those whose attributes match
the request's ``locatt=key:value`` pairs; ``weighted``: a weighted random choice among those
with weight above 0). A step that keeps nothing leaves the set as it was; weight 0 means
"only when chosen explicitly or as the last resort".
"""

from __future__ import annotations

import functools
import random

# The value is size-limited, and expat refuses entity-expansion attacks (billion laughs).
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from doikit.handle._values import HandleFormatError

#: The order of selection methods when a value names none.
DEFAULT_CHOOSEBY: Final = ("locatt", "country", "weighted")
#: Redirect statuses a ``<locations http_sc=…>`` may choose.
REDIRECT_STATUSES: Final = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True, slots=True)
class Location:
    """One ``<location>``: its target (``href`` or ``href_template``), weight and attributes."""

    href: str
    weight: float
    attributes: tuple[tuple[str, str], ...]
    template: bool = False

    def get(self, name: str) -> str | None:
        """The attribute *name*, or ``None``."""
        for key, value in self.attributes:
            if key == name:
                return value
        return None

    def url(self, handle: str) -> str:
        """The target URL; a template's ``{hdl}`` becomes the handle with ``/`` as ``%2F``."""
        if not self.template:
            return self.href
        return self.href.replace("{hdl}", quote(handle, safe="")).replace(
            "{hdl:path}", quote(handle, safe="/")
        )


@dataclass(frozen=True, slots=True)
class Locations:
    """A parsed ``10320/loc`` value."""

    locations: tuple[Location, ...]
    http_sc: int = 302
    chooseby: tuple[str, ...] = DEFAULT_CHOOSEBY


@functools.lru_cache(maxsize=256)
def parse_locations(text: str) -> Locations:
    """Parse a ``10320/loc`` value (the last 256 texts are remembered: a resolver parses
    the same popular values again and again, and the result is immutable).

    >>> locs = parse_locations('<locations><location href="https://a/" weight="0.5"/></locations>')
    >>> locs.locations[0].href, locs.locations[0].weight, locs.http_sc
    ('https://a/', 0.5, 302)

    :raises HandleFormatError: if it is not well-formed XML of that shape.
    """
    if "<!" in text:
        # A DTD's entities can expand a small value into megabytes (and comments or CDATA
        # have no place in a location list).
        raise HandleFormatError("10320/loc", "must not hold a DOCTYPE, entities or comments")
    try:
        root = ET.fromstring(text)  # noqa: S314 - see the import
    except ET.ParseError as exc:
        raise HandleFormatError("10320/loc", f"is not well-formed XML: {exc}") from None
    if root.tag != "locations":
        raise HandleFormatError("10320/loc", f"the root element is <{root.tag}>, not <locations>")
    http_sc = 302
    if "http_sc" in root.attrib:
        try:
            http_sc = int(root.attrib["http_sc"])
        except ValueError:
            http_sc = 0
        if http_sc not in REDIRECT_STATUSES:
            raise HandleFormatError(
                "10320/loc", f"http_sc={root.attrib['http_sc']!r} is not a redirect status"
            )
    chooseby_text = root.attrib.get("chooseby", root.attrib.get("choose_by", ""))
    chooseby = tuple(s.strip() for s in chooseby_text.split(",") if s.strip()) or DEFAULT_CHOOSEBY
    found = []
    for i, element in enumerate(root.iter("location")):
        where = f"10320/loc location {i + 1}"
        template = "href" not in element.attrib
        href = element.attrib.get("href", element.attrib.get("href_template"))
        if href is None:
            raise HandleFormatError(where, "has neither href nor href_template")
        try:
            weight = float(element.attrib.get("weight", "1"))
        except ValueError:
            raise HandleFormatError(
                where, f"weight={element.attrib['weight']!r} is not a number"
            ) from None
        if not 0 <= weight <= 1:
            raise HandleFormatError(where, f"weight={weight} is not between 0 and 1")
        attributes = tuple((k, v) for k, v in element.attrib.items())
        found.append(Location(href, weight, attributes, template))
    return Locations(tuple(found), http_sc, chooseby)


def _attribute_matches(location: Location, key: str, wanted: str) -> bool:
    have = location.get(key)
    if have is None:
        return False
    # http_role and similar hold lists ("conneg no_conneg"); ctype may carry parameters.
    return wanted in have.replace(",", " ").split() or have == wanted


def choose_location(
    locations: tuple[Location, ...],
    locatt: tuple[tuple[str, str], ...] = (),
    chooseby: tuple[str, ...] = DEFAULT_CHOOSEBY,
    rng: random.Random | None = None,
) -> Location | None:
    """The location the proxy redirects to, or ``None`` when there is none.

    >>> a = Location("https://a/", 1.0, (("id", "a"),))
    >>> b = Location("https://b/", 0.0, (("id", "b"), ("http_role", "conneg")))
    >>> choose_location((a, b)).href
    'https://a/'
    >>> choose_location((a, b), locatt=(("http_role", "conneg"),)).href
    'https://b/'
    """
    candidates = list(locations)
    if not candidates:
        return None
    for method in chooseby:
        if len(candidates) == 1:
            break
        if method == "locatt" and locatt:
            for key, wanted in locatt:
                narrowed = [c for c in candidates if _attribute_matches(c, key, wanted)]
                if narrowed:
                    candidates = narrowed
        elif method == "weighted":
            weighted = [c for c in candidates if c.weight > 0]
            if weighted:
                pick = (rng or random).random() * sum(c.weight for c in weighted)
                for c in weighted:
                    pick -= c.weight
                    if pick < 0:
                        return c
                return weighted[-1]
    # Only weight-0 locations are left (or one is): the first is the last resort.
    return candidates[0]
