"""doikit: the DOI® system in Python — names, presentations, equivalence and safety.

>>> import doikit
>>> d = doikit.DOI("doi:10.1000/182")
>>> d.to_url()
'https://doi.org/10.1000/182'

``import doikit`` needs only the standard library. DOI® is a registered trademark of the
DOI Foundation.
"""

from __future__ import annotations

from doikit._doi import DOI, is_valid, normalize, normalize_many, parse_many, validate
from doikit._errors import (
    ERROR_CODES,
    DOIError,
    DOINotFound,
    HandleServerError,
    InvalidDOI,
    MalformedResponse,
    ResolutionError,
    TransportError,
)
from doikit._extract import Found, FoundShort, find, find_all, find_short
from doikit._present import normalize_legacy_uri
from doikit._safety import Finding
from doikit._version import __version__

__all__ = [
    "DOI",
    "DOIError",
    "DOINotFound",
    "ERROR_CODES",
    "Finding",
    "Found",
    "FoundShort",
    "HandleServerError",
    "InvalidDOI",
    "MalformedResponse",
    "ResolutionError",
    "TransportError",
    "__version__",
    "find",
    "find_all",
    "find_short",
    "is_valid",
    "normalize",
    "normalize_legacy_uri",
    "normalize_many",
    "parse_many",
    "validate",
]

# Pickles, reprs and tracebacks name the public path of every class, so internal modules can
# move between releases (a pickle written by one release is read by the next).
for _name in __all__:
    _public = globals()[_name]
    if isinstance(_public, type):
        _public.__module__ = __name__
del _name, _public
