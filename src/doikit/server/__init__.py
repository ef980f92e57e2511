"""``doikit serve``: a doi.org-compatible DOI directory and resolver (extra ``server``).

>>> from doikit.server import create_app
>>> app = create_app("sqlite:///doikit.sqlite3", demo=True)  # an ASGI app; opens on start

Run it with any ASGI server, or with ``doikit serve``.
"""

from doikit.server._app import create_app
from doikit.server._auth import hash_token, new_token
from doikit.server._writes import check_values
from doikit.server.stores import Row, Store, StoredRecord, StoreError, StoreUnavailable, open_store

__all__ = [
    "Row",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "StoredRecord",
    "check_values",
    "create_app",
    "hash_token",
    "new_token",
    "open_store",
]
