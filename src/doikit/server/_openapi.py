"""The OpenAPI 3.1 description of the JSON API ``doikit serve`` publishes at /openapi.json:
its paths and methods are the routes of :data:`._routes.API_ROUTES`, each method's operation
named there and written here."""

from __future__ import annotations

from typing import Any

from doikit import __version__
from doikit.server._routes import API_ROUTES

_ERROR = {"$ref": "#/components/schemas/Error"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _error(description: str) -> dict[str, Any]:
    return _json(_ERROR, description)


def _query(
    name: str, schema: dict[str, Any], description: str | None = None, **more: object
) -> dict[str, Any]:
    """A query parameter (a list of values is repeated: ``?index=1&index=2``)."""
    parameter: dict[str, Any] = {"name": name, "in": "query", "schema": schema, **more}
    if description is not None:
        parameter["description"] = description
    if schema.get("type") == "array":
        parameter |= {"style": "form", "explode": True}
    return parameter


_HANDLE_PARAM = {
    "name": "handle",
    "in": "path",
    "required": True,
    "description": "The DOI name, percent-encoded as UTF-8 (%2F for a slash is also read).",
    "schema": {"type": "string", "minLength": 1},
}
# Writes take the bare name only: a prefix, a slash, a suffix.
_NAME_PARAM = {
    **_HANDLE_PARAM,
    "schema": {"type": "string", "pattern": r"^10\.[0-9]+(\.[0-9]+)*/."},
}
# Writes take a bearer token (doikit token create) or a Handle identity with HTTP Basic
# (index:handle, percent-encoded, and its secret key; doikit admin create).
_BEARER: list[dict[str, list[str]]] = [{"bearer": []}, {"basic": []}]


def openapi() -> dict[str, Any]:
    """The document, built fresh (it is small)."""
    named = operations()
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "doikit serve: the Handle REST API and the doi.org services",
            "version": __version__,
            "description": "Reads answer as doi.org and HANDLE.NET 9 do. Writes need a"
            " bearer token scoped to DOI prefixes (doikit token create) or a Handle identity"
            " with HTTP Basic, authorized by HS_ADMIN values (doikit admin create).",
        },
        "paths": {
            route.openapi_path: {
                method.lower(): named[operation.openapi]
                for method, operation in route.methods.items()
            }
            for route in API_ROUTES
        },
        "components": {
            "schemas": _schemas(),
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "basic": {"type": "http", "scheme": "basic"},
            },
        },
    }


def _schemas() -> dict[str, Any]:
    """The schemas the operations refer to."""
    value = {
        "type": "object",
        "required": ["index", "type", "data"],
        "properties": {
            "index": {"type": "integer", "minimum": 1, "maximum": 2147483647},
            "type": {"type": "string"},
            "data": {
                "oneOf": [
                    {"type": "string"},
                    {
                        "type": "object",
                        "required": ["format", "value"],
                        "properties": {
                            "format": {
                                "type": "string",
                                "enum": [
                                    "string",
                                    "base64",
                                    "hex",
                                    "admin",
                                    "vlist",
                                    "site",
                                    "key",
                                ],
                            },
                            "value": {},
                        },
                    },
                ]
            },
            "ttl": {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]},
            "timestamp": {"type": "string"},
            "permissions": {"type": "string", "pattern": "^[01]{4}$"},
            "references": {"type": "array"},
        },
    }
    error = {
        "type": "object",
        "required": ["responseCode"],
        "properties": {
            "responseCode": {"type": "integer"},
            "message": {"type": "string"},
            "handle": {"type": "string"},
        },
    }
    return {"Value": value, "Error": error}


def operations() -> dict[str, dict[str, Any]]:
    """Each operation of the API, by the name :data:`._routes.API_ROUTES` gives it."""
    record = {
        "type": "object",
        "required": ["responseCode", "handle", "values"],
        "properties": {
            "responseCode": {"type": "integer", "enum": [1, 200]},
            "handle": {"type": "string"},
            "values": {"type": "array", "items": {"$ref": "#/components/schemas/Value"}},
        },
    }
    written = {
        "type": "object",
        "required": ["responseCode", "handle"],
        "properties": {"responseCode": {"const": 1}, "handle": {"type": "string"}},
    }
    ra_item = {
        "type": "object",
        "required": ["DOI"],
        "properties": {
            "DOI": {"type": "string"},
            "RA": {"type": "string"},
            "status": {"type": "string", "enum": ["Invalid DOI", "DOI does not exist", "Unknown"]},
        },
    }
    which_ra = {
        "summary": "Which RA: the registration agency of each DOI name or prefix",
        "parameters": [
            {
                "name": "dois",
                "in": "path",
                "required": True,
                "description": "Comma-separated names or prefixes; %2C is a comma in a name.",
                "schema": {"type": "string"},
            }
        ],
        "responses": {"200": _json({"type": "array", "items": ra_item}, "In input order")},
    }
    resolve: dict[str, Any] = {
        "summary": "Resolve: the record's values",
        "parameters": [
            _HANDLE_PARAM,
            _query(
                "type",
                {"type": "array", "items": {"type": "string"}},
                "Only values of this type; 'URL.' also matches URL.x",
            ),
            _query(
                "index",
                {"type": "array", "items": {"type": "integer"}},
                "Only the value at this index (OR with type)",
            ),
            _query("pretty", {"type": "boolean"}),
            _query("auth", {"type": "boolean"}, "An authoritative answer (every answer here is)"),
            _query("cert", {"type": "boolean"}, "A certified answer (every answer here is)"),
            _query(
                "publicOnly",
                {"type": "boolean"},
                "false: also values without public read (needs credentials)",
            ),
        ],
        "responses": {
            "200": _json(record, "The values (responseCode 200 when none match)"),
            "400": _error("Bad index, unknown parameter (rc 4) or an unreadable path (rc 102)"),
            "401": _error("publicOnly=false without credentials (rc 402)"),
            "403": _error("publicOnly=false for a name the caller may not read (rc 401)"),
            "404": _error("No such DOI name (rc 100)"),
            "503": _error("The store cannot answer now (rc 3); Retry-After says when to try"),
        },
    }
    values_body = {
        "oneOf": [
            {"type": "array", "minItems": 1, "items": {"$ref": "#/components/schemas/Value"}},
            {
                "type": "object",
                "required": ["values"],
                "properties": {
                    "handle": {"type": "string", "description": "Must be the path's name"},
                    "values": {
                        "type": "array",
                        "minItems": 1,
                        "items": {"$ref": "#/components/schemas/Value"},
                    },
                },
            },
            {"$ref": "#/components/schemas/Value"},
        ]
    }
    indexes = _query(
        "index",
        {"type": "array", "items": {"oneOf": [{"type": "integer"}, {"const": "various"}]}},
        "Only these values (repeatable); a PUT also takes index=various",
    )
    return {
        "resolve": resolve,
        "resolve_post": {**resolve, "summary": "Resolve (a POST reads like a GET, as HANDLE.NET)"},
        "put": {
            "summary": "Create or replace a record; with index, add or replace only"
            " those values and keep every other (HANDLE.NET 9)",
            "security": _BEARER,
            "parameters": [
                _NAME_PARAM,
                indexes,
                _query(
                    "overwrite",
                    {"type": "string"},
                    "Only 'true' (any case) is true; absent is true",
                ),
                _query(
                    "mintNewSuffix",
                    {"type": "string"},
                    "true: the server appends a unique suffix",
                ),
            ],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": values_body}},
            },
            "responses": {
                "200": _json(written, "Replaced (a record, or existing values)"),
                "201": _json(written, "Created (a record, or only new values)"),
                "400": _error(
                    "Invalid name (rc 102), JSON, parameter or indexes (rc 4), or value (rc 202)"
                ),
                "401": _error("No or unknown credentials (rc 402)"),
                "403": _error("The caller may not make this change (rc 401)"),
                "404": _error("Adding values to a name that does not exist (rc 100)"),
                "409": _error("overwrite=false and the name (rc 101) or a value (rc 201) exists"),
                "413": _error("The body is too large"),
                "503": _error("The store cannot answer now (rc 3)"),
            },
        },
        "delete": {
            "summary": "Delete a record; with index, only those values",
            "security": _BEARER,
            "parameters": [_NAME_PARAM, indexes],
            "responses": {
                "200": _json(written, "Deleted"),
                "400": _error(
                    "Invalid name (rc 102), parameter (rc 4), no value at an index"
                    " (rc 200), or no value would be left (rc 202)"
                ),
                "401": _error("No or unknown credentials (rc 402)"),
                "403": _error("The caller may not make this change (rc 401)"),
                "404": _error("No such DOI name (rc 100)"),
                "503": _error("The store cannot answer now (rc 3)"),
            },
        },
        "list": {
            "summary": "List the names under a prefix",
            "security": _BEARER,
            "parameters": [
                _query("prefix", {"type": "string"}, required=True),
                _query("page", {"type": "integer", "minimum": 0}),
                _query("pageSize", {"type": "integer", "minimum": 0, "maximum": 10000}),
            ],
            "responses": {
                "200": _json(
                    {
                        "type": "object",
                        "required": ["responseCode", "prefix", "totalCount", "handles"],
                        "properties": {
                            "responseCode": {"const": 1},
                            "prefix": {"type": "string"},
                            "totalCount": {"type": "integer"},
                            "handles": {"type": "array", "items": {"type": "string"}},
                        },
                    },
                    "A page of names",
                ),
                "400": _error("Missing or bad prefix, page or pageSize (rc 4)"),
                "401": _error("No or unknown token (rc 402)"),
                "403": _error("The token does not cover this prefix (rc 401)"),
            },
        },
        "deposit": {
            "summary": "Batch deposit (doikit): JSON Lines of {doi, url} or {doi, values}",
            "security": _BEARER,
            "requestBody": {
                "required": True,
                "content": {
                    "application/x-ndjson": {
                        "schema": {"description": "JSON Lines; each line is checked alone"}
                    }
                },
            },
            "responses": {
                "200": _json(
                    {
                        "type": "object",
                        "required": ["responseCode", "accepted", "rejected"],
                        "properties": {
                            "responseCode": {"const": 1},
                            "accepted": {"type": "integer"},
                            "rejected": {"type": "array"},
                        },
                    },
                    "Accepted lines are committed; rejected ones listed with line numbers",
                ),
                "400": _error("An empty body (rc 4)"),
                "401": _error("No or unknown token (rc 402)"),
                "413": _error("The body is too large"),
            },
        },
        "reverse_lookup": {
            "summary": "Reverse lookup (EUDAT's servlet): the names with a public"
            " value of each given type matching its pattern ('*': any run)",
            "security": _BEARER,
            "parameters": [
                _query(
                    "filters",
                    # Any value: a query string carries only strings, so a typed
                    # value would describe nothing more (and fuzzers' "wrong-typed"
                    # values arrive as valid strings: 'null' is a pattern too).
                    {"type": "object", "additionalProperties": True},
                    "TYPE=pattern pairs, as URL=https://example.org/*",
                    style="form",
                    explode=True,
                ),
                _query("limit", {"type": "integer", "minimum": 1, "maximum": 10000}),
                _query("page", {"type": "integer", "minimum": 0}),
            ],
            "responses": {
                "200": _json({"type": "array", "items": {"type": "string"}}, "The names, in order"),
                "400": _error("No type given, or a bad limit or page (rc 4)"),
                "401": _error("No or unknown credentials (rc 402)"),
            },
        },
        "which_ra": which_ra,
    }
