"""The server as the ``doikit`` command's ``serve``, ``token`` and ``admin`` use it: one face,
so that the CLI names none of the server's private modules (``tests/test_faces.py``).

Apart from :mod:`doikit.server`, whose face is the ASGI app and the stores: importing that
stays free of uvicorn and of the native protocol's cryptography, which only these commands
need.

>>> handle_name("10.5555/ADMIN")
'10.5555/ADMIN'
"""

from doikit.server._http import Refused
from doikit.server._limits import Limits
from doikit.server._native import NativeConfig, SiteServer
from doikit.server._native_keys import site_value
from doikit.server._run import ListenError, create_admin, create_token, run
from doikit.server._writes import bare_name

__all__ = [
    "Limits",
    "ListenError",
    "NativeConfig",
    "SiteServer",
    "create_admin",
    "create_token",
    "handle_name",
    "run",
    "site_value",
]


def handle_name(text: str) -> str:
    """*text* as the bare name a write takes (an identity's handle, as ``10.5555/ADMIN``).

    :raises ValueError: saying why it is not one.
    """
    try:
        return str(bare_name(text))
    except Refused as exc:
        raise ValueError(str(exc)) from None
