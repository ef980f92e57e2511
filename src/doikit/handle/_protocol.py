"""The REST API's envelope: response codes, their HTTP statuses, and reply bodies.

Shared by the server, which writes these replies, and the clients, which read them
(handle-api.md §1.3 and §1.6). No I/O here.
"""

from __future__ import annotations

import json
from typing import Final

from doikit.handle._values import HandleRecord, values_to_json

RC_SUCCESS: Final = 1
RC_ERROR: Final = 2
RC_PROTOCOL_ERROR: Final = 4
RC_HANDLE_NOT_FOUND: Final = 100
RC_HANDLE_ALREADY_EXISTS: Final = 101
RC_INVALID_HANDLE: Final = 102
RC_VALUES_NOT_FOUND: Final = 200
RC_INVALID_VALUE: Final = 202
RC_INSUFFICIENT_PERMISSIONS: Final = 401
RC_AUTHENTICATION_NEEDED: Final = 402

#: The HTTP status HANDLE.NET's REST servlet answers with for each response code.
HTTP_STATUS: Final[dict[int, int]] = {
    RC_SUCCESS: 200,
    RC_ERROR: 500,
    3: 503,
    RC_PROTOCOL_ERROR: 400,
    5: 501,
    6: 500,
    7: 503,
    RC_HANDLE_NOT_FOUND: 404,
    RC_HANDLE_ALREADY_EXISTS: 409,
    RC_INVALID_HANDLE: 400,
    RC_VALUES_NOT_FOUND: 200,
    201: 409,
    RC_INVALID_VALUE: 400,
    400: 403,
    RC_INSUFFICIENT_PERMISSIONS: 403,
    RC_AUTHENTICATION_NEEDED: 401,
    403: 403,
    404: 403,
}


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def success_body(handle: str, values_json: str) -> str:
    """``{"responseCode":1,"handle":…,"values":[…]}`` around already-encoded values.

    >>> success_body("10.1000/1", "[]")
    '{"responseCode":1,"handle":"10.1000/1","values":[]}'
    """
    return f'{{"responseCode":1,"handle":{_dump(handle)},"values":{values_json}}}'


def done_body(handle: str) -> str:
    """The reply to a write that succeeded: ``{"responseCode":1,"handle":…}``.

    >>> done_body("10.1000/1")
    '{"responseCode":1,"handle":"10.1000/1"}'
    """
    return f'{{"responseCode":1,"handle":{_dump(handle)}}}'


def record_body(record: HandleRecord, handle: str | None = None) -> str:
    """The reply for a record: rc 1 with its values, or rc 200 when it has none."""
    echo = record.handle if handle is None else handle
    if not record.values:
        return f'{{"responseCode":200,"values":[],"handle":{_dump(echo)}}}'
    return success_body(echo, values_to_json(record.values))


def error_body(response_code: int, handle: str | None = None, message: str | None = None) -> str:
    """An error reply, keys in HANDLE.NET's order: responseCode, message, handle.

    >>> error_body(100, "10.1000/nope")
    '{"responseCode":100,"handle":"10.1000/nope"}'
    """
    out: dict[str, object] = {"responseCode": response_code}
    if message is not None:
        out["message"] = message
    if handle is not None:
        out["handle"] = handle
    return _dump(out)
