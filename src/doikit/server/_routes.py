"""The JSON API's routes, in one table: ``create_app`` makes its Starlette routes of it,
:mod:`._openapi` the paths and methods of /openapi.json, and :class:`~._reads.Reads` the
``Allow`` of a 405 (``tests/test_server_routes.py`` holds the served description equal to
the app's routes).

>>> route = API_ROUTES[0]
>>> route.openapi_path, route.allow
('/api/handles/{handle}', 'GET, HEAD, POST, PUT, DELETE')
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple


class Operation(NamedTuple):
    """What answers one method of a route."""

    #: ``reads.NAME`` or ``writes.NAME``: the method of :class:`~._reads.Reads` or
    #: :class:`~._writes.Writes` that answers.
    endpoint: str
    #: The operation's name in :func:`._openapi.operations`.
    openapi: str


class ApiRoute(NamedTuple):
    """A route of the JSON API; HEAD comes with GET (Starlette adds it)."""

    #: Starlette's syntax: ``{name:anypath}`` for a parameter.
    path: str
    #: Each method, in the order the description lists them.
    methods: dict[str, Operation]

    @property
    def openapi_path(self) -> str:
        """The path as OpenAPI writes it: ``{name}`` for a parameter."""
        return _CONVERTOR.sub("}", self.path)

    @property
    def allow(self) -> str:
        """The methods, as an ``Allow`` header names them."""
        names: list[str] = []
        for method in self.methods:
            names += [method, "HEAD"] if method == "GET" else [method]
        return ", ".join(names)


_CONVERTOR: Final = re.compile(r":\w+\}")

_RESOLVE: Final = Operation("reads.api_handle", "resolve")
_WHICH_RA: Final = Operation("reads.which_ra", "which_ra")

#: The JSON API (every other path is the proxy's, a page, or a 404 of the API).
API_ROUTES: Final = (
    ApiRoute(
        "/api/handles/{handle:anypath}",
        {
            "GET": _RESOLVE,
            "POST": _RESOLVE._replace(openapi="resolve_post"),
            "PUT": Operation("writes.handle", "put"),
            "DELETE": Operation("writes.handle", "delete"),
        },
    ),
    ApiRoute("/api/handles", {"GET": Operation("reads.api_list", "list")}),
    ApiRoute("/api/deposit", {"POST": Operation("writes.deposit", "deposit")}),
    ApiRoute("/hrls/handles", {"GET": Operation("reads.reverse_lookup", "reverse_lookup")}),
    ApiRoute("/ra/{dois:anypath}", {"GET": _WHICH_RA}),
    ApiRoute("/doiRA/{dois:anypath}", {"GET": _WHICH_RA}),
)
