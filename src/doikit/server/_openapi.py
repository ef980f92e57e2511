"""The OpenAPI 3.1 description of the JSON API ``doikit serve`` publishes at /openapi.json."""

from __future__ import annotations

from typing import Any

from doikit import __version__

_ERROR = {"$ref": "#/components/schemas/Error"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _error(description: str) -> dict[str, Any]:
    return _json(_ERROR, description)


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
_BEARER: list[dict[str, list[str]]] = [{"bearer": []}]


def openapi() -> dict[str, Any]:
    """The document, built fresh (it is small)."""
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
    record = {
        "type": "object",
        "required": ["responseCode", "handle", "values"],
        "properties": {
            "responseCode": {"type": "integer", "enum": [1, 200]},
            "handle": {"type": "string"},
            "values": {"type": "array", "items": {"$ref": "#/components/schemas/Value"}},
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
        "get": {
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
    }
    resolve: dict[str, Any] = {
        "summary": "Resolve: the record's values",
        "parameters": [
            _HANDLE_PARAM,
            {
                "name": "type",
                "in": "query",
                "description": "Only values of this type; 'URL.' also matches URL.x",
                "schema": {"type": "array", "items": {"type": "string"}},
                "style": "form",
                "explode": True,
            },
            {
                "name": "index",
                "in": "query",
                "description": "Only the value at this index (OR with type)",
                "schema": {"type": "array", "items": {"type": "integer"}},
                "style": "form",
                "explode": True,
            },
            {"name": "pretty", "in": "query", "schema": {"type": "boolean"}},
        ],
        "responses": {
            "200": _json(record, "The values (responseCode 200 when none match)"),
            "400": _error("Bad index (rc 4) or an unreadable path (rc 102)"),
            "404": _error("No such DOI name (rc 100)"),
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "doikit serve: the Handle REST API and the doi.org services",
            "version": __version__,
            "description": "Reads answer as doi.org and HANDLE.NET 9 do; writes need a bearer"
            " token scoped to the DOI prefix (doikit token create).",
        },
        "paths": {
            "/api/handles/{handle}": {
                "get": resolve,
                "post": {**resolve, "summary": "Resolve (a POST reads like a GET, as HANDLE.NET)"},
                "put": {
                    "summary": "Create or replace a record",
                    "security": _BEARER,
                    "parameters": [
                        _NAME_PARAM,
                        {"name": "overwrite", "in": "query", "schema": {"type": "boolean"}},
                    ],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["values"],
                                    "properties": {
                                        "values": {
                                            "type": "array",
                                            "minItems": 1,
                                            "items": {"$ref": "#/components/schemas/Value"},
                                        }
                                    },
                                }
                            }
                        },
                    },
                    "responses": {
                        "200": _json(written, "Replaced"),
                        "201": _json(written, "Created"),
                        "400": _error("Invalid name (rc 102), JSON (rc 4) or value (rc 202)"),
                        "401": _error("No or unknown token (rc 402)"),
                        "403": _error("The token does not cover this prefix (rc 401)"),
                        "409": _error("Exists and overwrite=false (rc 101)"),
                        "413": _error("The body is too large"),
                    },
                },
                "delete": {
                    "summary": "Delete a record",
                    "security": _BEARER,
                    "parameters": [_NAME_PARAM],
                    "responses": {
                        "200": _json(written, "Deleted"),
                        "400": _error("Invalid name (rc 102)"),
                        "401": _error("No or unknown token (rc 402)"),
                        "403": _error("The token does not cover this prefix (rc 401)"),
                        "404": _error("No such DOI name (rc 100)"),
                    },
                },
            },
            "/api/handles": {
                "get": {
                    "summary": "List the names under a prefix",
                    "security": _BEARER,
                    "parameters": [
                        {
                            "name": "prefix",
                            "in": "query",
                            "required": True,
                            "schema": {"type": "string"},
                        },
                        {
                            "name": "page",
                            "in": "query",
                            "schema": {"type": "integer", "minimum": 0},
                        },
                        {
                            "name": "pageSize",
                            "in": "query",
                            "schema": {"type": "integer", "minimum": 0, "maximum": 10000},
                        },
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
                }
            },
            "/api/deposit": {
                "post": {
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
                }
            },
            "/ra/{dois}": which_ra,
            "/doiRA/{dois}": which_ra,
        },
        "components": {
            "schemas": {"Value": value, "Error": error},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
