"""Found, the answer of every path: a DOI, its span, and the text as written there."""

from __future__ import annotations

from typing import NamedTuple

# (at run time: typing.get_type_hints, which Sphinx calls, reads Found's fields here)
from doikit._doi import DOI  # noqa: TC001


class Found(NamedTuple):
    """A DOI found in text: the ``doi``, its ``start`` and ``end`` in the text, and the
    ``text`` as written there (``text[start:end]``)."""

    doi: DOI
    start: int
    end: int
    text: str


_new_found = tuple.__new__


def _moved(found: Found, base: int) -> Found:
    """*found* with its span counted from *base* (a stream chunk's offset)."""
    return found._replace(start=base + found.start, end=base + found.end) if base else found
