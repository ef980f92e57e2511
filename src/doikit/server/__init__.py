"""``doikit serve``: a doi.org-compatible DOI directory and resolver (extra ``server``).

>>> from doikit.server import create_app
>>> app = create_app("sqlite:///doikit.sqlite3", demo=True)  # an ASGI app; opens on start

Run it with any ASGI server, or with ``doikit serve``.
"""

from doikit.server._app import check_values, create_app, hash_token, new_token
from doikit.server.stores import PutResult, Row, Store, StoredRecord, StoreError, open_store

__all__ = [
    "PutResult",
    "Row",
    "Store",
    "StoreError",
    "StoredRecord",
    "check_values",
    "create_app",
    "hash_token",
    "new_token",
    "open_store",
]
