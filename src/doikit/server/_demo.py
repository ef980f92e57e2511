"""The records ``doikit serve --demo`` loads: the seeds' example names, and one of each kind."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from doikit._doi import DOI
from doikit.handle import AdminData, HandleValue, values_to_json
from doikit.server.stores import Row

if TYPE_CHECKING:
    from doikit.server.stores import Store

_STAMP: Final = 1700000000
_ADMIN: Final = HandleValue(100, "HS_ADMIN", AdminData("0.NA/10.1000", 200), timestamp=_STAMP)


def _url(url: str) -> tuple[HandleValue, ...]:
    return (HandleValue(1, "URL", url.encode(), timestamp=_STAMP), _ADMIN)


#: name -> values. Sources: seed 000 (456#789, the URN example), seed 003 (10.1000/1),
#: seed 004 (10.1000/182, the Á example, SMPTE), Z39.84 (the SICI-style suffix).
DEMO: Final[dict[str, tuple[HandleValue, ...]]] = {
    "10.1000/1": _url("https://www.doi.org/index.html"),
    "10.1000/182": _url("https://www.doi.org/the-identifier/resources/handbook"),
    "10.1000/456#789": _url("https://example.org/seed-000/hash"),
    "10.123/456ABC/zyz": _url("https://example.org/seed-000/urn"),
    "10.26321/Á.GUTIÉRREZ.ZARZA.02.2018.03": _url("https://example.org/seed-004/unicode"),
    "10.5594/SMPTE.ST2067-21.2020": _url("https://example.org/seed-004/smpte"),
    "10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-O": _url(
        "https://example.org/z3984/sici"
    ),
    "10.1000/<script>alert(1)</script>": _url("https://example.org/html-in-a-name"),
    "10.1000/alias": (HandleValue(1, "HS_ALIAS", b"10.1000/182", timestamp=_STAMP), _ADMIN),
    "10.1000/multiple": (
        HandleValue(1, "URL", b"https://example.org/multiple/legacy", timestamp=_STAMP),
        HandleValue(
            2,
            "10320/loc",
            b'<locations chooseby="locatt,weighted">\n'
            b'<location id="1" href="https://example.org/multiple/a" weight="1" country="gb" />\n'
            b'<location id="2" href="https://example.org/multiple/b" weight="0" country="us" />\n'
            b'<location id="3" href_template="https://example.org/metadata/{hdl}" weight="0"'
            b' http_role="conneg" ctype="application/vnd.citationstyles.csl+json" />\n'
            b"</locations>",
            timestamp=_STAMP,
        ),
        _ADMIN,
    ),
    "10.1000/email-only": (HandleValue(1, "EMAIL", b"doi@example.org", timestamp=_STAMP), _ADMIN),
}


def demo_rows() -> list[Row]:
    """The demo records as store rows."""
    rows = []
    for name, values in DEMO.items():
        doi = DOI(name)
        rows.append(Row(doi.key, str(doi), doi.prefix, values_to_json(values)))
    return rows


async def load_demo(store: Store) -> int:
    """Create the demo records that *store* does not hold; return how many were created.

    A record already there is left as it is, changed or not: the demo is where a new user
    tries writes, and a restart must not undo them (delete a record to have it back).
    Each is created by compare-and-set, so workers starting together create it once.
    """
    created = 0
    for row in demo_rows():
        created += await store.swap(row.key, None, row)
    return created
